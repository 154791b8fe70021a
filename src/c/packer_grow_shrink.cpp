// SPDX-License-Identifier: MIT
// C API: Gandiva's grow-shrink over the packer's committed jobs (hs_packer_grow_shrink) and the
// commit of its decisions.
//
// The planner (policies/grow_shrink.hpp) works on a cluster_state, so each call builds a model of
// the packer: the cluster from the packer's topology (to_cluster keeps node and device ids), every
// committed job as a non-gang job of one role (elastic jobs: preemptible, max_tasks tasks; others:
// not preemptible, up to their highest placed task) queued and then bound on its placed tasks,
// and the caller's waiting GPUs as queued one-GPU tasks of jobs with ids no committed job uses.
// The plan's grow bindings and shrink entries become a model decision, which append_decision
// (decision.cpp) turns into one bind per grown task and one release per released task.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/c/packer.h>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/policies/grow_shrink.hpp>
#include <hetsched/topology/cluster_builder.hpp>

#include "c_internal.hpp"
#include "handles.hpp"
#include "packer_internal.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;

namespace {

using hetsched::job_id;

/// Reads the elastic entries, checking them against the committed jobs.
hs_status read_elastic(const hs_packer& packer, const hs_elastic_job_t* jobs, std::size_t count,
                       std::vector<hetsched::elastic_job>& out,
                       std::map<std::uint64_t, std::uint32_t>& max_tasks) {
  for (std::size_t i = 0; i < count; ++i) {
    hs_elastic_job_t e;
    if (!hetsched::capi::read_struct(jobs[i], e)) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("jobs[{}].struct_size is smaller than sizeof(hs_elastic_job_t)", i));
    }
    const auto held = packer.jobs.find(e.job_id);
    if (held == packer.jobs.end()) {
      return fail(HS_NOT_FOUND, fmt::format("jobs[{}]: job {} is not committed", i, e.job_id));
    }
    if (max_tasks.contains(e.job_id)) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("jobs[{}]: job {} is listed twice", i, e.job_id));
    }
    if (e.base_tasks == 0) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("jobs[{}]: job {}: base_tasks is 0", i, e.job_id));
    }
    if (e.max_tasks > hetsched::max_tasks_per_job) {
      return fail(HS_OUT_OF_RANGE, fmt::format("jobs[{}]: job {}: max_tasks {} is above {}", i,
                                               e.job_id, e.max_tasks, hetsched::max_tasks_per_job));
    }
    if (e.max_tasks < e.base_tasks) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("jobs[{}]: job {}: max_tasks {} is below base_tasks {}", i, e.job_id,
                              e.max_tasks, e.base_tasks));
    }
    const std::uint32_t highest = held->second.back().task;
    if (e.max_tasks <= highest) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("jobs[{}]: job {}: max_tasks {} does not cover its placed task {}", i,
                              e.job_id, e.max_tasks, highest));
    }
    max_tasks.emplace(e.job_id, e.max_tasks);
    out.push_back(
        hetsched::elastic_job{job_id(static_cast<std::uint32_t>(e.job_id)), e.base_tasks});
  }
  return HS_OK;
}

/// A job of one role of `tasks` tasks with `gpus` whole GPUs each.
hetsched::job_spec model_job(job_id id, std::uint32_t tasks, std::uint32_t gpus, bool preemptible) {
  hetsched::job_spec spec;
  spec.id = id;
  spec.name = fmt::format("job-{}", id.value());
  hetsched::task_role role;
  role.name = "task";
  role.task_count = tasks;
  role.gpu.count = gpus;
  spec.roles.push_back(std::move(role));
  spec.gang = false;
  spec.preemptible = preemptible;
  return spec;
}

/// Checks a hetsched result inside a model build: returns its error's status after storing it.
#define HS_CAPI_TRY_MODEL(expr) \
  if (auto r_ = (expr); !r_) return ::hetsched::capi::fail(r_.error())

/// Builds the model state of `packer` plus `waiting` GPUs of queued one-GPU tasks.
hs_status build_model(const hs_packer& packer,
                      const std::map<std::uint64_t, std::uint32_t>& elastic, std::uint32_t waiting,
                      std::unique_ptr<hetsched::cluster_state>& out) {
  const auto& topology = packer.placer.cluster();
  auto model = hetsched::to_cluster(topology);
  if (!model) return fail(model.error());
  auto state = std::make_unique<hetsched::cluster_state>(std::move(*model));
  hetsched::decision placed;
  for (const auto& [id, tasks] : packer.jobs) {
    const job_id job(static_cast<std::uint32_t>(id));
    const auto gpus = static_cast<std::uint32_t>(tasks.front().gpus.size());
    const auto e = elastic.find(id);
    const std::uint32_t count = e != elastic.end() ? e->second : tasks.back().task + 1;
    HS_CAPI_TRY_MODEL(state->submit(model_job(job, count, gpus, e != elastic.end())));
    HS_CAPI_TRY_MODEL(hetsched::record(*state, job, hetsched::job_event::enqueue));
    hetsched::binding b{job, {}};
    for (const auto& t : tasks) {
      hetsched::task_placement p{hetsched::task_id(t.task), hetsched::node_id(t.node), {}};
      const auto first = topology.node(p.node).first_gpu.value();
      for (const auto g : t.gpus) p.devices.push_back({hetsched::device_id(first + g), 1000, 0});
      b.tasks.push_back(std::move(p));
    }
    placed.binds.push_back(std::move(b));
  }
  HS_CAPI_TRY_MODEL(hetsched::apply(*state, placed));
  // More waiting GPUs than the cluster has shrink exactly as much as the cluster's count.
  std::uint64_t left = std::min<std::uint64_t>(waiting, topology.gpu_count());
  std::uint32_t next_id = 0;
  while (left > 0) {
    while (packer.jobs.contains(next_id)) ++next_id;
    const auto tasks =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(left, hetsched::max_tasks_per_job));
    HS_CAPI_TRY_MODEL(state->submit(model_job(job_id(next_id), tasks, 1, false)));
    HS_CAPI_TRY_MODEL(hetsched::record(*state, job_id(next_id), hetsched::job_event::enqueue));
    left -= tasks;
    ++next_id;
  }
  out = std::move(state);
  return HS_OK;
}

#undef HS_CAPI_TRY_MODEL

/// Returns the held task `task` of `tasks`, or nullptr.
const hs_packer::held_task* find_task(const std::vector<hs_packer::held_task>& tasks,
                                      std::uint32_t task) {
  const auto it = std::lower_bound(
      tasks.begin(), tasks.end(), task,
      [](const hs_packer::held_task& t, std::uint32_t value) { return t.task < value; });
  return it != tasks.end() && it->task == task ? &*it : nullptr;
}

}  // namespace

namespace hetsched::capi {

hs_status commit_grow_shrink(hs_packer& packer, const hs_decision& decision) {
  // Check everything first: releases against the held tasks, then binds against the GPUs free
  // once the releases are done.
  std::map<std::uint64_t, std::size_t> released;
  std::map<std::uint32_t, std::set<std::uint32_t>> freed;
  for (const auto& r : decision.releases) {
    const auto it = packer.jobs.find(r.job);
    if (it == packer.jobs.end()) {
      return fail(HS_NOT_FOUND, fmt::format("job {} is no longer committed", r.job));
    }
    const auto* t = find_task(it->second, r.task);
    std::vector<std::uint32_t> gpus;
    if (t != nullptr) {
      gpus = t->gpus;
      std::sort(gpus.begin(), gpus.end());
    }
    if (t == nullptr || t->node != r.node || gpus != r.gpus) {
      return fail(HS_CONFLICT, fmt::format("job {}: task {} is no longer placed on node '{}'",
                                           r.job, r.task, r.node_name));
    }
    if (++released[r.job] >= it->second.size()) {
      return fail(
          HS_FAILED_PRECONDITION,
          fmt::format("job {}: releasing task {} would leave the job no task", r.job, r.task));
    }
    freed[r.node].insert(r.gpus.begin(), r.gpus.end());
  }
  std::map<std::uint32_t, std::set<std::uint32_t>> taken;
  for (const auto& b : decision.binds) {
    const auto it = packer.jobs.find(b.job);
    if (it == packer.jobs.end()) {
      return fail(HS_NOT_FOUND, fmt::format("job {} is no longer committed", b.job));
    }
    if (find_task(it->second, b.task) != nullptr) {
      return fail(HS_CONFLICT, fmt::format("job {}: task {} is already placed", b.job, b.task));
    }
    const auto& free = packer.free.at(b.node);
    for (const auto g : b.gpus) {
      const bool is_free =
          std::binary_search(free.begin(), free.end(), g) || freed[b.node].contains(g);
      if (!is_free || !taken[b.node].insert(g).second) {
        return fail(HS_CONFLICT, fmt::format("job {}: GPU {} of node '{}' is no longer free", b.job,
                                             g, b.node_name));
      }
    }
  }
  for (const auto& r : decision.releases) {
    auto& tasks = packer.jobs.at(r.job);
    std::erase_if(tasks, [&r](const hs_packer::held_task& t) { return t.task == r.task; });
    packer.give_back(r.node, r.gpus);
  }
  for (const auto& b : decision.binds) {
    auto& tasks = packer.jobs.at(b.job);
    const auto at = std::lower_bound(
        tasks.begin(), tasks.end(), b.task,
        [](const hs_packer::held_task& t, std::uint32_t value) { return t.task < value; });
    tasks.insert(at, hs_packer::held_task{b.task, b.node, b.gpus});
    packer.take(b.node, b.gpus);
  }
  return HS_OK;
}

}  // namespace hetsched::capi

extern "C" {

HS_API hs_status hs_packer_grow_shrink(const hs_packer_t* packer, const hs_elastic_job_t* jobs,
                                       size_t count, const hs_grow_shrink_params_t* params,
                                       hs_decision_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(packer);
    HS_CAPI_REQUIRE(out);
    if (count > 0 && jobs == nullptr) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("jobs is NULL with count {}", count));
    }
    hs_grow_shrink_params_t p{};
    if (params != nullptr && !hetsched::capi::read_struct(*params, p)) {
      return fail(HS_INVALID_ARGUMENT,
                  "params->struct_size is smaller than sizeof(hs_grow_shrink_params_t)");
    }
    std::vector<hetsched::elastic_job> elastic;
    std::map<std::uint64_t, std::uint32_t> max_tasks;
    if (auto s = read_elastic(*packer, jobs, count, elastic, max_tasks); s != HS_OK) return s;
    std::unique_ptr<hetsched::cluster_state> state;
    if (auto s = build_model(*packer, max_tasks, p.waiting_gpus, state); s != HS_OK) return s;
    const hetsched::grow_shrink_planner planner(state->cluster(), packer->placer.cluster());
    auto plan = planner.plan(*state, elastic,
                             hetsched::grow_shrink_params{p.reserve_gpus, p.max_grow_tasks});
    if (!plan) return fail(plan.error());
    auto d = std::make_unique<hs_decision>();
    d->kind = hs_decision_kind::packer_grow_shrink;
    d->owner = packer;
    hetsched::decision model;
    model.binds = std::move(plan->grow);
    for (auto& r : plan->shrink) model.releases.push_back({r.job, std::move(r.tasks)});
    hetsched::capi::append_decision(*state, model, *d);
    *out = hetsched::capi::adopt(std::move(d));
    return HS_OK;
  });
}

}  // extern "C"
