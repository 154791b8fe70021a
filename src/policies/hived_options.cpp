// SPDX-License-Identifier: MIT
// HiveD options that are off by default: validating and translating cell-type requests and
// hierarchical within-one-cell groups (the unmerged v2 API; the search is hived_groups.cpp) and
// multi-GPU pods on several below-node VC cells of one server (pai#4029).
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

binding_vertex* subtree(const scheduler_state& s, int c, std::deque<binding_vertex>& arena) {
  binding_vertex* n = &arena.emplace_back(binding_vertex{c, {}});
  for (int child : s.v[uz(c)].children) n->children.push_back(subtree(s, child, arena));
  return n;
}

void leaves_of(const scheduler_state& s, int c, std::vector<int>& out) {
  if (s.v[uz(c)].children.empty()) {
    out.push_back(c);
    return;
  }
  for (int child : s.v[uz(c)].children) leaves_of(s, child, out);
}

/// A cell type's level and leaf type (the same in every chain that has it); level 0 if none.
struct type_info {
  int level = 0;
  int leaves = 0;
  std::string leaf_type;
};

type_info find_type(const scheduler_state& s, const std::string& type) {
  for (const auto& ch : s.chains)
    for (int l = 1; l <= ch.top; ++l)
      if (ch.level_type[uz(l)] == type) return {l, ch.level_leaves[uz(l)], ch.leaf_type};
  return {};
}

/// Checks one group of the tree and converts it; `enclosing` is the nearest enclosing group's
/// within type (level 0 = none). Fills in `leaf_type` from the first within type if empty.
result<group_node> convert_group(const scheduler_state& s, const pod_request& pod,
                                 const cell_request& unit, const std::string& path,
                                 const std::vector<member_spec>& members, const std::string& within,
                                 const std::vector<group_spec>& children,
                                 const type_info& enclosing, const std::string& enclosing_type,
                                 std::string& leaf_type) {
  group_node g;
  g.members = members;
  type_info own = enclosing;
  std::string own_type = enclosing_type;
  if (!within.empty()) {
    type_info t = find_type(s, within);
    if (t.level == 0)
      return make_error(errc::not_found, "[{}]: within-one-cell type {} is not a cell type",
                        pod.name, within);
    if (!leaf_type.empty() && t.leaf_type != leaf_type)
      return make_error(errc::invalid_argument,
                        "[{}]: {}: within-one-cell type {} has leaf type {}, not {}", pod.name,
                        path, within, t.leaf_type, leaf_type);
    leaf_type = t.leaf_type;
    if (t.level < unit.level)
      return make_error(errc::invalid_argument,
                        "[{}]: {}: within-one-cell type {} is below the requested cell type {}",
                        pod.name, path, within, unit.cell_type);
    if (enclosing.level > 0 && t.level > enclosing.level)
      return make_error(errc::invalid_argument,
                        "[{}]: {}: within-one-cell type {} is above the enclosing group's {}",
                        pod.name, path, within, enclosing_type);
    g.within = within;
    g.within_level = t.level;
    own = t;
    own_type = within;
  }
  long long largest = 0;
  for (const auto& m : members) {
    if (m.pods <= 0 || m.leaf_cells <= 0)
      return make_error(errc::invalid_argument, "[{}]: {} has a member with non-positive numbers",
                        pod.name, path);
    g.units += static_cast<long long>(m.pods) * m.leaf_cells;
    largest = std::max<long long>(largest, m.leaf_cells);
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto& c = children[i];
    auto child = convert_group(s, pod, unit, fmt::format("{}.childGroups[{}]", path, i), c.members,
                               c.within_one_cell, c.child_groups, own, own_type, leaf_type);
    if (!child) return std::move(child).error();
    g.units += child->units;
    for (const auto& m : child->members) largest = std::max<long long>(largest, m.leaf_cells);
    g.children.push_back(std::move(*child));
  }
  if (g.units == 0)
    return make_error(errc::invalid_argument, "[{}]: {} has no pods", pod.name, path);
  if (g.within_level > 0) {
    const long long pod_leaves = largest * unit.leaves;
    const long long group_leaves = g.units * unit.leaves;
    if (pod_leaves > own.leaves)
      return make_error(errc::invalid_argument,
                        "[{}]: {}: a pod of {} leaves does not fit inside one cell of type {} "
                        "({} leaves)",
                        pod.name, path, pod_leaves, within, own.leaves);
    if (group_leaves > own.leaves)
      return make_error(errc::invalid_argument,
                        "[{}]: {} needs {} leaves, more than one cell of type {} holds ({})",
                        pod.name, path, group_leaves, within, own.leaves);
  }
  return g;
}

/// Appends the group's members (sizes in leaves) in preorder: own members, then child groups.
void flatten(const group_node& g, int leaves_per_unit, std::vector<member_spec>& out) {
  for (const auto& m : g.members)
    out.push_back(member_spec{m.pods, m.leaf_cells * leaves_per_unit});
  for (const auto& c : g.children) flatten(c, leaves_per_unit, out);
}

}  // namespace

result<cell_request> translate_cell_type(const scheduler_state& s, const pod_request& pod) {
  cell_request out;
  out.pod = pod;
  const bool grouped = !pod.within_one_cell.empty() || !pod.child_groups.empty();
  if (pod.cell_type.empty() && !grouped) return out;
  if (pod.leaf_cells <= 0)
    return make_error(errc::invalid_argument, "[{}]: LeafCellNumber is non-positive: {}", pod.name,
                      pod.leaf_cells);
  if (!s.opts.cell_type_requests) {
    if (!pod.cell_type.empty())
      return make_error(errc::invalid_argument,
                        "[{}]: cell type requests are disabled (options::cell_type_requests)",
                        pod.name);
    return make_error(errc::invalid_argument,
                      "[{}]: within-one-cell groups are disabled (options::cell_type_requests)",
                      pod.name);
  }
  std::string leaf_type = pod.leaf_type;
  if (!pod.cell_type.empty()) {
    type_info t = find_type(s, pod.cell_type);
    if (t.level == 0)
      return make_error(errc::not_found,
                        "[{}]: Pod requesting cell type {} which the whole cluster does not have",
                        pod.name, pod.cell_type);
    if (!leaf_type.empty() && leaf_type != t.leaf_type)
      return make_error(errc::invalid_argument, "[{}]: cell type {} has leaf type {}, not {}",
                        pod.name, pod.cell_type, t.leaf_type, leaf_type);
    for (const auto& ch : s.chains)
      if (uz(t.level) < ch.level_type.size() && ch.level_type[uz(t.level)] == pod.cell_type &&
          t.level > ch.node_level)
        return make_error(errc::invalid_argument,
                          "[{}]: cell type {} is above the node level of chain {}: a pod sits on "
                          "one node",
                          pod.name, pod.cell_type, ch.name);
    leaf_type = t.leaf_type;
    out.cell_type = pod.cell_type;
    out.level = t.level;
    out.leaves = t.leaves;
  }
  const std::string group_name = pod.group.empty() ? pod.name : pod.group;
  std::vector<member_spec> own = pod.members;
  if (own.empty() && pod.child_groups.empty()) own.push_back(member_spec{1, pod.leaf_cells});
  auto root = convert_group(s, pod, out, "group " + group_name, own, pod.within_one_cell,
                            pod.child_groups, type_info{}, std::string(), leaf_type);
  if (!root) return std::move(root).error();
  long long cluster_leaves = 0;
  for (const auto& ch : s.chains)
    if (leaf_type.empty() || ch.leaf_type == leaf_type)
      cluster_leaves += static_cast<long long>(ch.full[1].size());
  // (no chain of the leaf type: the engine reports the unknown leaf type)
  if (cluster_leaves > 0 && root->units * out.leaves > cluster_leaves)
    return make_error(errc::invalid_argument,
                      "[{}]: group {} needs {} leaves, more than the cluster has ({})", pod.name,
                      group_name, root->units * out.leaves, cluster_leaves);
  if (cluster_leaves > 0 && static_cast<long long>(pod.leaf_cells) * out.leaves > cluster_leaves)
    return make_error(errc::invalid_argument,
                      "[{}]: AffinityGroup.Members does not contains current Pod", pod.name);
  out.root = std::move(*root);
  out.constrained = true;
  out.pod.members.clear();
  flatten(out.root, out.leaves, out.pod.members);
  out.pod.leaf_cells = pod.leaf_cells * out.leaves;
  if (!pod.cell_type.empty()) out.pod.leaf_type = leaf_type;
  out.pod.cell_type.clear();
  out.pod.within_one_cell.clear();
  out.pod.child_groups.clear();
  return out;
}

std::optional<placement> multi_cell_placement(scheduler_state& s, int vc, int chain,
                                              const std::map<int, int>& pod_nums,
                                              const node_set& suggested, bool ignore,
                                              placement& virt_out) {
  auto vit = s.vcs[uz(vc)].chains.find(chain);
  if (vit == s.vcs[uz(vc)].chains.end()) return std::nullopt;
  const auto& vch = vit->second;
  const auto& ch = s.chains[uz(chain)];
  std::vector<int> nums;
  for (const auto& [leaves, pods] : pod_nums)
    for (int i = 0; i < pods; ++i) nums.push_back(leaves);
  for (int level = ch.node_level - 1; level >= 1; --level) {
    const int per_cell = ch.level_leaves[uz(level)];
    std::vector<int> cells;
    if (uz(level) < vch.preassigned.size())
      for (int c : vch.preassigned[uz(level)])
        if (s.v[uz(c)].pcell < 0 && s.v[uz(c)].priority == free_priority) cells.push_back(c);
    int needed = 0;
    bool divisible = true;
    for (int n : nums) {
      divisible = divisible && n % per_cell == 0;
      needed += n / per_cell;
    }
    if (!divisible || needed > static_cast<int>(cells.size()) || needed == 0) continue;
    level_lists free = ch.free;
    std::vector<int> free_num = ch.all_vc_free;
    placement phys;
    placement virt;
    std::size_t next = 0;
    bool all = true;
    for (int n : nums) {
      std::vector<int> chosen(cells.begin() + static_cast<long>(next),
                              cells.begin() + static_cast<long>(next) + n / per_cell);
      next += uz(n / per_cell);
      std::deque<binding_vertex> arena;
      std::vector<binding_vertex*> roots;
      for (int c : chosen) roots.push_back(subtree(s, c, arena));
      std::vector<int> vleaves;
      for (int c : chosen) leaves_of(s, c, vleaves);
      bool placed = false;
      for (int node_cell : ch.full[uz(ch.node_level)]) {
        const auto& pc = s.p[uz(node_cell)];
        if (!pc.healthy || (!ignore && !suggested.contains(pc.nodes[0]))) continue;
        node_set one;
        one.all = false;
        one.ids = {pc.nodes[0]};
        level_lists trial = free;
        std::vector<int> trial_num = free_num;
        std::unordered_map<int, int> bindings;
        if (!s.map_placement(roots, {}, trial, trial_num, one, false, bindings)) continue;
        free = std::move(trial);
        free_num = std::move(trial_num);
        std::vector<int> pl;
        for (int vleaf : vleaves) pl.push_back(bindings.at(vleaf));
        phys[n].push_back(std::move(pl));
        virt[n].push_back(vleaves);
        placed = true;
        break;
      }
      if (!placed) {
        all = false;
        break;
      }
    }
    if (all) {
      virt_out = std::move(virt);
      return phys;
    }
  }
  return std::nullopt;
}

}  // namespace hetsched::hived
