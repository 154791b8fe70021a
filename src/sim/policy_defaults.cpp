// SPDX-License-Identifier: MIT
// fill_quota_params() and tenant_order().
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include <hetsched/metrics/fragmentation.hpp>
#include <hetsched/policies/fgd.hpp>
#include <hetsched/policies/fgd_placement.hpp>
#include <hetsched/policies/orderings.hpp>
#include <hetsched/sim/fragmentation_recorder.hpp>
#include <hetsched/sim/policy_defaults.hpp>

namespace hetsched::sim {
namespace {
__extension__ typedef __int128 i128;
// Replaces drf's `weights=quota` by the table's GPUs per tenant ("vc=G/..."); tenants with no
// GPUs in the table are left out (weight 1). Without a table the value stays and make_ordering()
// reports it.
result<void> fill_drf_quota_weights(policy_spec& s, const std::vector<std::string>& tenants,
                                    const workload::vc_quota_table* table) {
  if (s.order != "drf" || table == nullptr) return {};
  const auto it = s.order_params.find("weights");
  if (it == s.order_params.end() || it->second != "quota") return {};
  std::vector<std::string> entries;
  for (const std::string& t : tenants) {
    const workload::vc_quota* q = table->find(t);
    if (q == nullptr || q->gpus == 0) continue;
    if (t.find_first_of("/=,+") != std::string::npos || t == "*")
      return make_error(errc::invalid_argument,
                        "policy '{}': weights=quota: tenant '{}' cannot be named in weights= "
                        "(its name holds '/', '=', ',' or '+', or is '*')",
                        s.text, t);
    entries.push_back(fmt::format("{}={}", t, std::min<std::uint32_t>(q->gpus, max_tenant_weight)));
  }
  it->second = entries.empty() ? std::string("*=1") : fmt::format("{}", fmt::join(entries, "/"));
  return {};
}

}  // namespace

std::vector<std::string> tenant_order(const workload::trace& trace) {
  std::vector<std::size_t> idx(trace.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return trace[a].submit_ms < trace[b].submit_ms;
  });
  std::vector<std::string> out;
  std::map<std::string, bool, std::less<>> seen;
  for (const std::size_t i : idx)
    if (seen.emplace(trace[i].tenant, true).second) out.push_back(trace[i].tenant);
  return out;
}

result<void> fill_quota_params(std::vector<policy_spec>& specs, const workload::trace& trace,
                               std::uint64_t cluster_gpus, const workload::vc_quota_table* table) {
  const std::vector<std::string> tenants = tenant_order(trace);
  const std::size_t n = std::max<std::size_t>(1, tenants.size());
  const auto join = [](const std::vector<std::uint64_t>& q) {
    return fmt::format("{}", fmt::join(q, "/"));
  };
  std::vector<std::uint64_t> from_table;
  if (table) {
    for (const std::string& t : tenants) {
      const workload::vc_quota* q = table->find(t);
      from_table.push_back(q != nullptr ? q->gpus : 0);
    }
  }
  std::vector<std::uint64_t> equal(n, cluster_gpus / n);
  for (std::size_t i = 0; i < cluster_gpus % n; ++i) ++equal[i];
  // Demand-proportional: floor(cluster_gpus * demand / total demand), demand in GPU-ms.
  std::map<std::string, std::int64_t, std::less<>> demand;
  i128 total = 0;
  for (const workload::trace_job& j : trace) {
    const std::int64_t d = j.duration_ms * std::int64_t{j.tasks} * j.gpu_milli_per_task / 1000;
    demand[j.tenant] += d;
    total += d;
  }
  std::vector<std::uint64_t> proportional;
  for (const std::string& t : tenants)
    proportional.push_back(
        total > 0 ? static_cast<std::uint64_t>(static_cast<i128>(cluster_gpus) * demand[t] / total)
                  : cluster_gpus / n);
  if (proportional.empty()) proportional.push_back(cluster_gpus);
  for (policy_spec& s : specs) {
    HETSCHED_TRY(fill_drf_quota_weights(s, tenants, table));
    if (s.placement == "fgd" && !s.placement_params.contains("classes")) {
      // The target workload: the trace's task classes, 95 % popularity (docs/fgd.md).
      const std::vector<fgd_task> tasks = trace_fgd_tasks(trace);
      auto w = make_fgd_workload(tasks);
      if (!w) return make_error(w.error().code, "fgd: target workload: {}", w.error().message);
      s.placement_params["classes"] =
          format_fgd_classes(*w, static_cast<std::int64_t>(tasks.size()));
    }
    if (s.placement != "capacity" && s.placement != "hived") continue;
    if (s.placement == "capacity" && s.placement_params.contains("tree")) {
      // Hierarchical queues: the tree maps tenants by name; tell it the engine's tenant order.
      if (s.placement_params.contains("tenants")) continue;
      for (const std::string& t : tenants)
        if (t.find('/') != std::string::npos)
          return make_error(errc::invalid_argument,
                            "policy '{}': tenant '{}' cannot be named in tenants= ('/')", s.text,
                            t);
      s.placement_params["tenants"] = fmt::format("{}", fmt::join(tenants, "/"));
      continue;
    }
    if (s.placement_params.contains("quota")) continue;
    s.placement_params["quota"] =
        join(table ? from_table : (s.placement == "capacity" ? equal : proportional));
  }
  return {};
}

}  // namespace hetsched::sim
