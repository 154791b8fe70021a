// SPDX-License-Identifier: MIT
// HiveD cells derived from the topology model (hived_topology.hpp).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <hetsched/policies/hived_topology.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched::hived {
namespace {

std::string clean(std::string s) {
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

/// The node-level part of one template: its type chain (top = node type) and a cell template.
struct node_shape {
  std::string node_type;
  std::string leaf_type;
  physical_cell_spec cell;  ///< children filled, address empty
};

result<node_shape> shape_of(const node_topology& topo, std::vector<cell_type_spec>& types,
                            std::map<std::string, bool>& defined) {
  const auto& views = topo.views();
  const auto groups = views.affinity_groups();
  if (views.gpu_count() == 0 || groups.empty())
    return make_error(errc::invalid_argument, "node template {} has no GPUs", topo.name());
  const std::string prefix = clean(topo.name());
  // Leaf type: the common GPU model, else "<template>/gpu".
  std::string leaf;
  bool same = true;
  for (std::size_t g = 0; g < views.gpu_count(); ++g) {
    const auto& vx = topo.vertex(views.endpoints()[g]);
    std::string model(vx.model.name());
    if (g == 0) leaf = model;
    same = same && !model.empty() && model == leaf;
  }
  if (!same || leaf.empty()) leaf = prefix + "/gpu";
  leaf = clean(leaf);
  // Depths of the affinity tree and its regularity.
  std::vector<int> depth(groups.size(), 0);
  std::vector<std::vector<std::uint32_t>> by_depth(1, {0});
  for (std::size_t d = 0; d < by_depth.size(); ++d) {
    std::vector<std::uint32_t> next;
    for (auto g : by_depth[d])
      for (auto c : groups[g].children) next.push_back(c);
    if (!next.empty()) by_depth.push_back(std::move(next));
  }
  bool regular = true;
  for (std::size_t d = 0; d < by_depth.size() && regular; ++d) {
    const auto& first = groups[by_depth[d][0]];
    for (auto g : by_depth[d]) {
      const auto& grp = groups[g];
      regular = regular && grp.level == first.level &&
                grp.children.size() == first.children.size() &&
                (d + 1 < by_depth.size() || grp.children.empty());
    }
  }
  node_shape out;
  out.leaf_type = leaf;
  auto define = [&](const std::string& name, const std::string& child, std::size_t n, bool node) {
    if (defined.emplace(name, true).second)
      types.push_back(cell_type_spec{name, child, static_cast<int>(n), node});
  };
  if (!regular || by_depth.size() < 2) {
    out.node_type = prefix + "/node";
    define(out.node_type, leaf, views.gpu_count(), true);
    for (std::size_t g = 0; g < views.gpu_count(); ++g)
      out.cell.children.push_back(physical_cell_spec{"", std::to_string(g), "", {}});
    return out;
  }
  // Types from the bottom up; the deepest level holds the GPUs.
  const std::size_t leaf_depth = by_depth.size() - 1;
  std::vector<std::string> names(by_depth.size());
  names[leaf_depth] = leaf;
  // A level that repeats (nested PCIe switches, as in DGX-2) gets a tier number from the second
  // tier up: "<template>/pcie_switch", then "<template>/pcie_switch2".
  std::map<std::string, int> tiers;
  for (std::size_t d = leaf_depth; d-- > 0;) {
    const auto& grp = groups[by_depth[d][0]];
    std::string level(to_string(grp.level));
    const int tier = ++tiers[level];
    names[d] = prefix + "/" + level + (tier > 1 ? std::to_string(tier) : std::string());
    if (d == 0) names[d] = prefix + "/node";
    define(names[d], names[d + 1], grp.children.size(), d == 0);
  }
  out.node_type = names[0];
  // Cell tree with explicit GPU indices at the leaves.
  auto build = [&](auto&& self, std::uint32_t g, std::size_t d) -> physical_cell_spec {
    physical_cell_spec c;
    if (d == leaf_depth) {
      c.address = std::to_string(groups[g].gpus.front());
      return c;
    }
    for (auto child : groups[g].children) c.children.push_back(self(self, child, d + 1));
    return c;
  };
  out.cell = build(build, 0, 0);
  return out;
}

}  // namespace

result<config> derive_cells(const cluster_topology& topology, const derive_options& opts) {
  config cfg;
  std::map<std::string, bool> defined;
  std::vector<node_shape> shapes;
  for (const auto& t : topology.templates()) {
    auto s = shape_of(t, cfg.cell_types, defined);
    if (!s) return std::move(s).error();
    shapes.push_back(std::move(*s));
  }
  const auto nodes = topology.nodes();
  auto node_cell = [&](std::size_t n) {
    physical_cell_spec c = shapes[nodes[n].template_index].cell;
    c.address = nodes[n].name;
    return c;
  };
  std::vector<char> placed(nodes.size(), 0);
  if (opts.top == top_cell_level::rack) {
    for (const auto& g : topology.groups()) {
      if (g.level != affinity_level::rack || g.node_count == 0) continue;
      const std::size_t first = g.first_node.value();
      const auto tmpl = nodes[first].template_index;
      bool uniform = true;
      for (std::size_t n = first; n < first + g.node_count; ++n)
        uniform = uniform && nodes[n].template_index == tmpl;
      if (!uniform) continue;
      const auto& shape = shapes[tmpl];
      std::string rack_type = shape.node_type;
      rack_type.replace(rack_type.rfind('/') + 1, std::string::npos,
                        "rack" + std::to_string(g.node_count));
      if (defined.emplace(rack_type, true).second)
        cfg.cell_types.push_back(
            cell_type_spec{rack_type, shape.node_type, static_cast<int>(g.node_count), false});
      physical_cell_spec rack;
      rack.cell_type = rack_type;
      rack.address = clean(g.name);
      for (std::size_t n = first; n < first + g.node_count; ++n) {
        rack.children.push_back(node_cell(n));
        placed[n] = 1;
      }
      cfg.physical_cells.push_back(std::move(rack));
    }
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (placed[n] != 0) continue;
    physical_cell_spec c = node_cell(n);
    c.cell_type = shapes[nodes[n].template_index].node_type;
    cfg.physical_cells.push_back(std::move(c));
  }
  return cfg;
}

}  // namespace hetsched::hived
