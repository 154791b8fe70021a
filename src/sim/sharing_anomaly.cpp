// SPDX-License-Identifier: MIT
// plan_private_clusters(), make_sub_cluster() and run_private_vcs().
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include <hetsched/sim/sharing_anomaly.hpp>

namespace hetsched::sim {
namespace {
__extension__ typedef __int128 i128;

// The smallest k such that the first k nodes of `c` hold >= gpus GPUs, capped at the cluster.
std::size_t nodes_holding(const cluster& c, std::uint64_t gpus) {
  std::uint64_t held = 0;
  std::size_t k = 0;
  while (k < c.node_count() && held < gpus) {
    held += c.node(node_id(static_cast<std::uint32_t>(k))).device_count;
    ++k;
  }
  return k;
}

std::uint64_t gpus_of_prefix(const cluster& c, std::size_t nodes) {
  std::uint64_t held = 0;
  for (std::size_t k = 0; k < std::min(nodes, c.node_count()); ++k)
    held += c.node(node_id(static_cast<std::uint32_t>(k))).device_count;
  return held;
}

}  // namespace

std::string_view to_string(private_quota_source s) noexcept {
  return s == private_quota_source::quota_table ? "quota_table" : "demand_share";
}

std::vector<private_cluster_plan> plan_private_clusters(const cluster& shared,
                                                        const workload::trace& trace,
                                                        const workload::vc_quota_table* quotas) {
  std::map<std::string, i128, std::less<>> demand;  // GPU-ms x 1000 per tenant
  i128 total = 0;
  for (const workload::trace_job& j : trace) {
    const i128 d = static_cast<i128>(j.duration_ms) * j.tasks * j.gpu_milli_per_task;
    demand[j.tenant] += d;
    total += d;
  }
  const auto cluster_gpus = static_cast<std::uint64_t>(shared.device_count());
  std::vector<private_cluster_plan> out;
  out.reserve(demand.size());
  for (const auto& [vc, d] : demand) {
    private_cluster_plan p;
    p.vc = vc;
    if (quotas != nullptr) {
      p.source = private_quota_source::quota_table;
      const workload::vc_quota* q = quotas->find(vc);
      p.quota_gpus = q != nullptr ? q->gpus : 0;
      p.nodes = p.quota_gpus == 0 ? 0 : nodes_holding(shared, p.quota_gpus);
    } else {
      p.source = private_quota_source::demand_share;
      p.quota_gpus = total > 0
                         ? static_cast<std::uint64_t>(
                               (2 * static_cast<i128>(cluster_gpus) * d + total) / (2 * total))
                         : cluster_gpus / demand.size();
      p.nodes = std::max<std::size_t>(std::min<std::size_t>(1, shared.node_count()),
                                      nodes_holding(shared, p.quota_gpus));
    }
    p.gpus = gpus_of_prefix(shared, p.nodes);
    out.push_back(std::move(p));
  }
  return out;
}

result<sub_cluster> make_sub_cluster(const cluster& c, const cluster_topology* topology,
                                     std::size_t nodes) {
  nodes = std::min(nodes, c.node_count());
  if (nodes == 0) return make_error(errc::invalid_argument, "sub cluster: no node");
  sub_cluster out;
  if (topology != nullptr) {
    nodes = std::min(nodes, topology->node_count());
    cluster_builder b(fmt::format("{}-first-{}", topology->name(), nodes));
    std::size_t k = 0;
    while (k < nodes) {
      const std::uint32_t tpl =
          topology->node(node_id(static_cast<std::uint32_t>(k))).template_index;
      std::size_t run = 1;
      while (k + run < nodes &&
             topology->node(node_id(static_cast<std::uint32_t>(k + run))).template_index == tpl)
        ++run;
      b.add_nodes(topology->templates()[tpl], run);
      k += run;
    }
    const auto groups = topology->groups();
    for (std::uint32_t g = topology->node(node_id(0)).group;; g = groups[g].parent) {
      if (groups[g].level == affinity_level::rack) {
        b.racks(groups[g].node_count);
        break;
      }
      if (groups[g].parent == g) break;
    }
    auto built = b.build();
    if (!built) return std::move(built).error();
    auto model = to_cluster(*built);
    if (!model) return std::move(model).error();
    out.description = std::make_shared<const cluster>(std::move(*model));
    out.topology = std::move(*built);
    return out;
  }
  cluster copy;
  for (std::size_t i = 0; i < nodes; ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    const node_info& info = c.node(n);
    node_spec spec;
    spec.name = info.name;
    spec.labels = info.labels;
    spec.milli_cpu = info.allocatable.milli_cpu;
    spec.memory_mib = info.allocatable.memory_mib;
    spec.extended = info.allocatable.extended;
    for (const device_info& d : c.devices(n))
      spec.devices.push_back({d.type, d.memory_mib, d.health});
    auto id = copy.add_node(std::move(spec));
    if (!id) return std::move(id).error();
  }
  out.description = std::make_shared<const cluster>(std::move(copy));
  return out;
}

result<std::vector<metrics::vc_anomaly>> run_private_vcs(
    const policy_spec& spec, const cluster& shared_cluster, const cluster_topology* topology,
    const workload::trace& trace, const sim_params& params, const metrics::run_summary& shared,
    std::span<const private_cluster_plan> plans) {
  std::vector<metrics::run_summary> privates;
  for (const private_cluster_plan& p : plans) {
    if (p.nodes == 0) continue;
    const auto fail = [&](const error& e) {
      return make_error(e.code, "private run of {}: {}", p.vc, e.message);
    };
    auto sub = make_sub_cluster(shared_cluster, topology, p.nodes);
    if (!sub) return fail(sub.error());
    policy_spec mine_spec = spec;
    if (spec.placement == "capacity" || spec.placement == "hived")
      mine_spec.placement_params["quota"] = fmt::format("{}", sub->description->device_count());
    workload::trace mine;
    for (const workload::trace_job& j : trace)
      if (j.tenant == p.vc) mine.push_back(j);
    auto inst =
        make_policy(mine_spec, *sub->description, sub->topology ? &*sub->topology : nullptr);
    if (!inst) return fail(inst.error());
    sim_params mine_params = params;  // the speed model reads the private cluster's topology
    if (params.speed.enabled()) {
      if (!sub->topology)
        return fail(
            error{errc::invalid_argument, "the speed model needs the shared cluster's topology"});
      mine_params.topology = std::make_shared<const cluster_topology>(*sub->topology);
    }
    auto r = sim::simulate(sub->description, mine, *inst->order, *inst->place, mine_params);
    if (!r) return fail(r.error());
    privates.push_back(metrics::summarize(*r));
  }
  return metrics::sharing_anomaly(shared, privates);
}

}  // namespace hetsched::sim
