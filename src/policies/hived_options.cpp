// SPDX-License-Identifier: MIT
// HiveD options that are off by default: cell-type requests and within-one-cell groups (the
// unmerged v2 API) and multi-GPU pods on several below-node VC cells of one server (pai#4029).
#include <fmt/format.h>

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

}  // namespace

result<cell_request> translate_cell_type(const scheduler_state& s, const pod_request& pod) {
  cell_request out;
  out.pod = pod;
  if (pod.cell_type.empty() && pod.within_one_cell.empty()) return out;
  if (!s.opts.cell_type_requests)
    return make_error(errc::invalid_argument,
                      "[{}]: cell type requests are disabled (options::cell_type_requests)",
                      pod.name);
  for (const auto& ch : s.chains) {
    for (int l = 1; l <= ch.top; ++l) {
      if (ch.level_type[uz(l)] != pod.cell_type) continue;
      if (!out.cell_type.empty() && ch.leaf_type != out.pod.leaf_type)
        return make_error(errc::invalid_argument,
                          "[{}]: cell type {} belongs to chains of different leaf types", pod.name,
                          pod.cell_type);
      out.cell_type = pod.cell_type;
      out.level = l;
      out.leaves = ch.level_leaves[uz(l)];
      out.pod.leaf_type = ch.leaf_type;
    }
  }
  if (!pod.within_one_cell.empty()) {
    for (const auto& ch : s.chains)
      for (int l = 1; l <= ch.top; ++l)
        if (ch.level_type[uz(l)] == pod.within_one_cell) out.within_level = l;
    if (out.within_level == 0)
      return make_error(errc::not_found, "[{}]: within-one-cell type {} is not a cell type",
                        pod.name, pod.within_one_cell);
    out.within = pod.within_one_cell;
    out.pod.within_one_cell.clear();
    if (pod.cell_type.empty()) return out;
  }
  if (out.cell_type.empty())
    return make_error(errc::not_found,
                      "[{}]: Pod requesting cell type {} which the whole cluster does not have",
                      pod.name, pod.cell_type);
  if (!pod.leaf_type.empty() && pod.leaf_type != out.pod.leaf_type)
    return make_error(errc::invalid_argument, "[{}]: cell type {} has leaf type {}, not {}",
                      pod.name, pod.cell_type, out.pod.leaf_type, pod.leaf_type);
  out.pod.cell_type.clear();
  out.pod.leaf_cells = pod.leaf_cells * out.leaves;
  for (auto& m : out.pod.members) m.leaf_cells *= out.leaves;
  return out;
}

/// True unless a cell-type request got a pod whose leaves are not whole cells of the type.
bool whole_cells(const scheduler_state& s, const cell_request& cell, const placement& pl) {
  if (!cell.within.empty()) {
    int common = -2;
    for (const auto& [num, pods] : pl)
      for (const auto& leaves : pods)
        for (int c : leaves) {
          while (c >= 0 && s.p[uz(c)].level < cell.within_level) c = s.p[uz(c)].parent;
          if (c < 0 ||
              s.chains[uz(s.p[uz(c)].chain)].level_type[uz(s.p[uz(c)].level)] != cell.within)
            return false;
          if (common == -2) common = c;
          if (c != common) return false;
        }
  }
  if (cell.cell_type.empty()) return true;
  for (const auto& [num, pods] : pl)
    for (const auto& leaves : pods)
      for (std::size_t i = 0; i < leaves.size(); i += uz(cell.leaves)) {
        int top = leaves[i];
        while (top >= 0 && s.p[uz(top)].level < cell.level) top = s.p[uz(top)].parent;
        if (top < 0) return false;
        for (std::size_t j = i; j < i + uz(cell.leaves) && j < leaves.size(); ++j) {
          int c = leaves[j];
          while (c >= 0 && s.p[uz(c)].level < cell.level) c = s.p[uz(c)].parent;
          if (c != top) return false;
        }
      }
  return true;
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
