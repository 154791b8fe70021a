// SPDX-License-Identifier: MIT
// C API: the gang packer (gang_placer) with its free-GPU bookkeeping, commit and release
// (grow-shrink planning and its commit: packer_grow_shrink.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/c/packer.h>
#include <hetsched/policies/gang_placement.hpp>

#include "c_internal.hpp"
#include "handles.hpp"
#include "packer_internal.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;

void hs_packer::give_back(std::uint32_t node, const std::vector<std::uint32_t>& gpus) {
  auto& list = free[node];
  list.insert(list.end(), gpus.begin(), gpus.end());
  std::sort(list.begin(), list.end());
}

void hs_packer::take(std::uint32_t node, const std::vector<std::uint32_t>& gpus) {
  std::erase_if(free[node], [&gpus](std::uint32_t g) {
    return std::find(gpus.begin(), gpus.end(), g) != gpus.end();
  });
}

namespace {

hs_defer_reason to_c(hetsched::defer_reason r) {
  return static_cast<hs_defer_reason>(static_cast<int>(r));
}

hs_status read_gang(const hs_packer_t& packer, const hs_gang_t* gang,
                    hetsched::gang_request& request) {
  hs_gang_t g;
  if (!hetsched::capi::read_struct(*gang, g)) {
    return fail(HS_INVALID_ARGUMENT, "gang->struct_size is smaller than sizeof(hs_gang_t)");
  }
  if (!hetsched::capi::to_job_id(g.job_id)) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("gang job id {} is out of range", g.job_id));
  }
  if (packer.jobs.contains(g.job_id)) {
    return fail(HS_ALREADY_EXISTS, fmt::format("job {} is already committed", g.job_id));
  }
  const auto locality = hetsched::capi::enum_value(g.locality);
  if (locality != HS_LOCALITY_CONSOLIDATE && locality != HS_LOCALITY_SPREAD) {
    return fail(HS_INVALID_ARGUMENT,
                fmt::format("job {}: unknown locality {}", g.job_id, locality));
  }
  const auto max_level = hetsched::capi::enum_value(g.max_level);
  const int level = max_level == 0 ? HS_LEVEL_CLUSTER : static_cast<int>(max_level);
  if (level < HS_LEVEL_NODE || level > HS_LEVEL_CLUSTER) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("job {}: unknown max_level {}", g.job_id, level));
  }
  request.tasks = g.tasks;
  request.gpus_per_task = g.gpus_per_task;
  request.locality = locality == HS_LOCALITY_SPREAD ? hetsched::locality_sensitivity::spread
                                                    : hetsched::locality_sensitivity::consolidate;
  request.max_level = static_cast<hetsched::affinity_level>(level);
  request.max_tier = g.max_tier;
  return HS_OK;
}

}  // namespace

extern "C" {

HS_API hs_status hs_packer_new(const hs_cluster_t* cluster, hs_packer_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(out);
    auto placer = hetsched::gang_placer::make(cluster->topology);
    std::vector<std::vector<std::uint32_t>> free;
    free.reserve(cluster->topology.node_count());
    for (const auto& n : cluster->topology.nodes()) {
      std::vector<std::uint32_t> gpus(n.gpu_count);
      for (std::uint32_t i = 0; i < n.gpu_count; ++i) gpus[i] = i;
      free.push_back(std::move(gpus));
    }
    *out = hetsched::capi::adopt(
        std::make_unique<hs_packer>(hs_packer{std::move(placer), std::move(free), {}}));
    return HS_OK;
  });
}

HS_API void hs_packer_free(hs_packer_t* packer) {
  hetsched::capi::destroy_handle(packer, __func__, "packer");
}

HS_API hs_status hs_packer_place(const hs_packer_t* packer, const hs_gang_t* gang,
                                 hs_decision_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(packer);
    HS_CAPI_REQUIRE(gang);
    HS_CAPI_REQUIRE(out);
    hetsched::gang_request request;
    if (auto s = read_gang(*packer, gang, request); s != HS_OK) return s;
    auto placed = packer->placer.place(packer->free, request);
    if (!placed) return fail(placed.error());
    auto d = std::make_unique<hs_decision>();
    d->kind = hs_decision_kind::packer;
    d->owner = packer;
    if (placed->deferred) {
      hs_decision::deferral_entry e;
      e.job = gang->job_id;
      e.reason = to_c(*placed->deferred);
      e.message = fmt::format("job {}: {} tasks of {} GPUs: {}", gang->job_id, request.tasks,
                              request.gpus_per_task, hetsched::to_string(*placed->deferred));
      d->deferrals.push_back(std::move(e));
    } else {
      const auto& cluster = packer->placer.cluster();
      std::uint32_t task = 0;
      for (const auto& t : placed->tasks) {
        hs_decision::bind_entry b;
        b.job = gang->job_id;
        b.task = task++;
        b.node = t.node.value();
        b.node_name = cluster.node(t.node).name;
        b.gpus = t.gpus;
        d->binds.push_back(std::move(b));
      }
    }
    *out = hetsched::capi::adopt(std::move(d));
    return HS_OK;
  });
}

HS_API hs_status hs_packer_commit(hs_packer_t* packer, const hs_decision_t* decision) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(packer);
    HS_CAPI_REQUIRE_HANDLE(decision);
    if (decision->owner != packer || (decision->kind != hs_decision_kind::packer &&
                                      decision->kind != hs_decision_kind::packer_grow_shrink)) {
      return fail(HS_INVALID_ARGUMENT,
                  "decision was not made by hs_packer_place or hs_packer_grow_shrink on this "
                  "packer");
    }
    if (decision->kind == hs_decision_kind::packer_grow_shrink) {
      return hetsched::capi::commit_grow_shrink(*packer, *decision);
    }
    if (decision->binds.empty()) return HS_OK;
    const std::uint64_t job = decision->binds.front().job;
    if (packer->jobs.contains(job)) {
      return fail(HS_ALREADY_EXISTS, fmt::format("job {} is already committed", job));
    }
    // Check every GPU first (a decision never names one twice), then take them all.
    for (const auto& b : decision->binds) {
      const auto& free = packer->free.at(b.node);
      for (auto g : b.gpus) {
        if (!std::binary_search(free.begin(), free.end(), g)) {
          return fail(HS_CONFLICT, fmt::format("job {}: GPU {} of node '{}' is no longer free", job,
                                               g, b.node_name));
        }
      }
    }
    std::vector<hs_packer::held_task> held;
    for (const auto& b : decision->binds) held.push_back({b.task, b.node, b.gpus});
    for (const auto& t : held) packer->take(t.node, t.gpus);
    packer->jobs.emplace(job, std::move(held));
    return HS_OK;
  });
}

HS_API hs_status hs_packer_release(hs_packer_t* packer, uint64_t job_id) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(packer);
    auto it = packer->jobs.find(job_id);
    if (it == packer->jobs.end()) {
      return fail(HS_NOT_FOUND, fmt::format("job {} is not committed", job_id));
    }
    for (const auto& t : it->second) packer->give_back(t.node, t.gpus);
    packer->jobs.erase(it);
    return HS_OK;
  });
}

HS_API hs_status hs_packer_free_gpu_count(const hs_packer_t* packer, uint32_t node, uint32_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(packer);
    HS_CAPI_REQUIRE(out);
    if (node >= packer->free.size()) {
      return fail(HS_OUT_OF_RANGE, fmt::format("node index {} is out of range (cluster has {} "
                                               "nodes)",
                                               node, packer->free.size()));
    }
    *out = static_cast<std::uint32_t>(packer->free[node].size());
    return HS_OK;
  });
}

}  // extern "C"
