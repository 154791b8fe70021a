// SPDX-License-Identifier: MIT
// Conversion of topologies into the model's cluster description.
#include <bit>
#include <charconv>
#include <string>

#include <hetsched/topology/cluster_builder.hpp>

#include "detail/text.hpp"

namespace hetsched {
namespace {

// Counts the CPUs of a cpuset in list syntax ("0-55,112-167") or hwloc bitmask syntax
// ("0x00000003,0xffffffff"); an unreadable set counts 0.
std::int64_t cpuset_size(std::string_view set) {
  std::int64_t count = 0;
  if (set.size() > 2 && set[0] == '0' && (set[1] == 'x' || set[1] == 'X')) {
    for (char c : set) {
      const int nibble = detail::hex_digit_value(c);
      if (nibble < 0) continue;  // 'x' and ',' separators
      count += std::popcount(static_cast<unsigned>(nibble));
    }
    // Each "0x" prefix contributed its '0' as a zero nibble, which adds nothing.
    return count;
  }
  while (!set.empty()) {
    const auto comma = set.find(',');
    std::string_view item = set.substr(0, comma);
    set = comma == std::string_view::npos ? std::string_view{} : set.substr(comma + 1);
    const auto dash = item.find('-');
    std::int64_t lo = 0;
    std::int64_t hi = 0;
    const auto first = item.substr(0, dash);
    if (std::from_chars(first.data(), first.data() + first.size(), lo).ec != std::errc()) return 0;
    hi = lo;
    if (dash != std::string_view::npos) {
      const auto second = item.substr(dash + 1);
      if (std::from_chars(second.data(), second.data() + second.size(), hi).ec != std::errc()) {
        return 0;
      }
    }
    if (hi < lo) return 0;
    count += hi - lo + 1;
  }
  return count;
}

}  // namespace

node_spec to_node_spec(const node_topology& t, std::string name) {
  node_spec spec;
  spec.name = std::move(name);
  spec.labels.emplace("hetsched.io/topology", t.name());
  std::int64_t cpus = 0;
  for (vertex_id p : t.vertices_of(vertex_kind::package)) cpus += cpuset_size(t.vertex(p).cpuset);
  const auto numa = t.vertices_of(vertex_kind::numa_node);
  if (cpus == 0) {
    for (vertex_id n : numa) cpus += cpuset_size(t.vertex(n).cpuset);
  }
  spec.milli_cpu = cpus * 1000;
  for (vertex_id n : numa) spec.memory_mib += t.vertex(n).memory_mib;
  if (!t.nics().empty())
    spec.extended.emplace("rdma/hca", static_cast<std::int64_t>(t.nics().size()));
  spec.devices.reserve(t.gpus().size());
  for (vertex_id g : t.gpus()) {
    const auto& v = t.vertex(g);
    spec.devices.push_back(device_spec{v.model, v.memory_mib, health::healthy});
  }
  return spec;
}

result<cluster> to_cluster(const cluster_topology& topology) {
  cluster out;
  out.reserve(topology.node_count(), topology.gpu_count());
  // One spec per distinct template, copied per node with its own name and group labels.
  std::vector<node_spec> base;
  base.reserve(topology.templates().size());
  for (const auto& t : topology.templates()) base.push_back(to_node_spec(t, t.name()));
  const auto groups = topology.groups();
  for (const auto& n : topology.nodes()) {
    node_spec spec = base[n.template_index];
    spec.name = n.name;
    for (std::uint32_t g = groups[n.group].parent; g != 0; g = groups[g].parent) {
      const auto& grp = groups[g];
      switch (grp.level) {
        case affinity_level::rack: spec.labels.emplace("hetsched.io/rack", grp.name); break;
        case affinity_level::nvlink_domain:
          spec.labels.emplace("hetsched.io/nvlink-domain", grp.name);
          break;
        case affinity_level::network_tier:
          spec.labels.emplace(fmt::format("hetsched.io/tier-{}", grp.tier), grp.name);
          break;
        default: break;
      }
    }
    auto id = out.add_node(std::move(spec));
    if (!id) return std::move(id).error();
  }
  return out;
}

}  // namespace hetsched
