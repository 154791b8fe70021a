// SPDX-License-Identifier: MIT
// openb_gpu_catalogue_model() and openb_cluster_topology().
#include <fmt/format.h>

#include <array>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <hetsched/topology/graph.hpp>
#include <hetsched/workload/openb_cluster.hpp>

namespace hetsched::workload {
namespace {

using shape = std::tuple<std::int64_t, std::int64_t, std::uint32_t, std::string>;

result<node_topology> shape_topology(const shape& s) {
  const auto& [cpu_milli, memory_mib, gpus, model] = s;
  node_topology_builder b(gpus > 0 ? fmt::format("openb-{}x{}-{}c", gpus, model, cpu_milli / 1000)
                                   : fmt::format("openb-cpu-{}c", cpu_milli / 1000));
  const std::string cpuset = fmt::format("0-{}", cpu_milli / 1000 - 1);
  topo_vertex pkg;
  pkg.kind = vertex_kind::package;
  pkg.name = "Package0";
  pkg.parent = b.root();
  pkg.index = 0;
  pkg.cpuset = cpuset;
  const vertex_id p = b.add(std::move(pkg), internal_link());
  topo_vertex numa;
  numa.kind = vertex_kind::numa_node;
  numa.name = "NUMA0";
  numa.parent = p;
  numa.index = 0;
  numa.cpuset = cpuset;
  numa.memory_mib = memory_mib;
  const vertex_id n = b.add(std::move(numa), internal_link());
  if (gpus > 0) {
    const gpu_type type(model);
    std::int64_t memory = 0;
    if (const auto cat = openb_gpu_catalogue_model(model))
      if (const auto spec = find_gpu_spec(*cat)) memory = spec->memory_mib;
    for (std::uint32_t g = 0; g < gpus; ++g) {
      const vertex_id hb =
          b.add(vertex_kind::host_bridge, fmt::format("HostBridge{}", g), n, internal_link());
      topo_vertex v;
      v.kind = vertex_kind::gpu;
      v.name = fmt::format("GPU{}", g);
      v.parent = hb;
      v.index = static_cast<std::int32_t>(g);
      v.model = type;
      v.memory_mib = memory;
      v.numa = 0;
      v.cpuset = cpuset;
      b.add(std::move(v), pcie_link(3, 16));
    }
  }
  return std::move(b).build();
}

}  // namespace

std::optional<gpu_type> openb_gpu_catalogue_model(std::string_view model) noexcept {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> map{{
      {"P100", "P100-PCIE-16GB"},
      {"T4", "T4-16GB"},
      {"V100M16", "V100-SXM2-16GB"},
      {"V100M32", "V100-SXM2-32GB"},
      {"A10", "A10-24GB"},
  }};
  for (const auto& [openb, catalogue] : map)
    if (openb == model) return gpu_type(catalogue);
  return std::nullopt;
}

result<cluster_topology> openb_cluster_topology(std::span<const openb_node> nodes,
                                                std::string name) {
  if (nodes.empty()) return make_error(errc::invalid_argument, "openb cluster: no nodes");
  std::map<shape, node_topology> shapes;
  std::set<std::string_view> names;
  cluster_builder b(std::move(name));
  for (const openb_node& node : nodes) {
    if (!names.insert(node.name).second)
      return make_error(errc::already_exists, "openb node {}: the name is used twice", node.name);
    if (node.cpu_milli < 1000 || node.cpu_milli % 1000 != 0)
      return make_error(errc::invalid_argument,
                        "openb node {}: cpu_milli {} is not a positive multiple of 1000", node.name,
                        node.cpu_milli);
    if (node.memory_mib < 1)
      return make_error(errc::invalid_argument, "openb node {}: memory_mib {} is not positive",
                        node.name, node.memory_mib);
    if (node.gpus > 0 && !gpu_type::is_valid_name(node.model))
      return make_error(errc::invalid_argument,
                        "openb node {}: GPU model '{}' is not a valid GPU type name", node.name,
                        node.model);
    shape s{node.cpu_milli, node.memory_mib, node.gpus, node.gpus > 0 ? node.model : ""};
    auto it = shapes.find(s);
    if (it == shapes.end()) {
      auto topo = shape_topology(s);
      if (!topo)
        return make_error(topo.error().code, "openb node {}: {}", node.name, topo.error().message);
      it = shapes.emplace(std::move(s), std::move(*topo)).first;
    }
    b.add_nodes(it->second, 1, node.name);
  }
  return b.build();
}

}  // namespace hetsched::workload
