// SPDX-License-Identifier: MIT
// placement_locality(): the highest locality tier a job's GPUs cross, from the node views' pair
// relations within a node and the cluster affinity tree across nodes.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <hetsched/sim/speed_model.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched {
namespace {

locality_tier pcie_tier(pcie_relation r) noexcept {
  switch (r) {
    case pcie_relation::self:
    case pcie_relation::pix: return locality_tier::same_switch;
    case pcie_relation::pxb:
    case pcie_relation::phb:
    case pcie_relation::node: return locality_tier::same_socket;
    case pcie_relation::sys:
    case pcie_relation::unknown: return locality_tier::same_node;
  }
  return locality_tier::same_node;
}

/// Returns true if the GPUs `local` of `views` form one connected graph over their NVLinks.
bool one_nvlink_island(const node_views& views, const std::vector<std::uint32_t>& local) {
  std::vector<bool> reached(local.size(), false);
  std::vector<std::size_t> stack{0};
  reached[0] = true;
  std::size_t count = 1;
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    for (std::size_t j = 0; j < local.size(); ++j) {
      if (!reached[j] && views.relation(local[i], local[j]).nvlinks > 0) {
        reached[j] = true;
        ++count;
        stack.push_back(j);
      }
    }
  }
  return count == local.size();
}

/// Returns the tier of the GPUs `local` (node-local indices) on one node.
locality_tier node_tier(const node_views& views, const std::vector<std::uint32_t>& local,
                        const locality_options& options) {
  if (local.size() <= 1) return locality_tier::same_switch;
  if (options.use_nvlink && one_nvlink_island(views, local)) return locality_tier::same_switch;
  auto tier = locality_tier::same_switch;
  for (std::size_t i = 0; i < local.size(); ++i) {
    for (std::size_t j = i + 1; j < local.size(); ++j) {
      const auto rel = views.relation(local[i], local[j]);
      const auto pair =
          options.use_nvlink && rel.nvlinks > 0 ? locality_tier::same_switch : pcie_tier(rel.pcie);
      tier = std::max(tier, pair);
    }
  }
  return tier;
}

/// Returns the group of `level` above node `n`, or nullptr if there is none.
const cluster_group* ancestor(const cluster_topology& topology, node_id n, affinity_level level) {
  const auto groups = topology.groups();
  std::uint32_t g = topology.node(n).group;
  while (true) {
    if (groups[g].level == level) return &groups[g];
    if (groups[g].parent == g) return nullptr;
    g = groups[g].parent;
  }
}

bool holds(const cluster_group& group, node_id n) {
  const auto first = group.first_node.value();
  return n.value() >= first && n.value() - first < group.node_count;
}

/// Returns the tier between two different nodes.
locality_tier nodes_tier(const cluster_topology& topology, node_id a, node_id b,
                         const locality_options& options) {
  if (options.use_nvlink) {
    const cluster_group* domain = ancestor(topology, a, affinity_level::nvlink_domain);
    if (domain != nullptr && holds(*domain, b)) return locality_tier::same_switch;
  }
  const cluster_group* rack = ancestor(topology, a, affinity_level::rack);
  if (rack == nullptr || holds(*rack, b)) return locality_tier::same_rack;
  return locality_tier::across_racks;
}

}  // namespace

result<locality_tier> placement_locality(const cluster_topology& topology,
                                         std::span<const device_id> gpus,
                                         const locality_options& options) {
  if (gpus.empty()) return make_error(errc::invalid_argument, "placement has no GPU");
  std::vector<device_id> sorted(gpus.begin(), gpus.end());
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].value() >= topology.gpu_count()) {
      return make_error(errc::out_of_range, "GPU {} is not in the cluster ({} GPUs)",
                        sorted[i].value(), topology.gpu_count());
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      return make_error(errc::invalid_argument, "GPU {} listed twice", sorted[i].value());
    }
  }
  // GPUs are numbered in node order, so the sorted list visits each node's GPUs together.
  const node_id first_node = topology.node_of_gpu(sorted.front());
  auto tier = locality_tier::same_switch;
  std::size_t begin = 0;
  while (begin < sorted.size()) {
    const node_id n = topology.node_of_gpu(sorted[begin]);
    const auto& node = topology.node(n);
    std::vector<std::uint32_t> local;
    std::size_t end = begin;
    while (end < sorted.size() && topology.node_of_gpu(sorted[end]) == n) {
      local.push_back(sorted[end].value() - node.first_gpu.value());
      ++end;
    }
    tier = std::max(tier, node_tier(topology.topology_of(n).views(), local, options));
    // "Same NVLink domain" and "same rack" are nested partitions of the nodes, so comparing
    // every node with the first one gives the highest tier over all node pairs.
    if (n != first_node) tier = std::max(tier, nodes_tier(topology, first_node, n, options));
    begin = end;
  }
  return tier;
}

}  // namespace hetsched
