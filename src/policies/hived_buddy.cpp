// SPDX-License-Identifier: MIT
// HiveD buddy allocation: mapping a virtual placement onto physical cells with backtracking,
// safe relaxed splitting and topology-preserving binding (hivedscheduler cell_allocation.go).
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

class mapper {
 public:
  mapper(scheduler_state& s, const node_set& suggested, bool ignore,
         std::unordered_map<int, int>& bindings)
      : s_(s), suggested_(suggested), ignore_(ignore), bindings_(bindings) {}

  /// getUsablePhysicalCells: the usable candidates in list order; nullopt if fewer than
  /// `needed`. Then stable-sorts `candidates` itself by opportunistic use (as upstream does).
  std::optional<std::vector<int>> usable(std::vector<int>& candidates, std::size_t needed) {
    std::vector<int> out;
    for (int c : candidates) {
      const auto& pc = s_.p[uz(c)];
      if (pc.vcell >= 0) continue;
      if (pc.nodes.size() == 1 && !pc.healthy) continue;
      if (!ignore_) {
        bool any = false;
        for (int n : pc.nodes) {
          if (suggested_.contains(n)) {
            any = true;
            break;
          }
        }
        if (!any) continue;
      }
      out.push_back(c);
    }
    if (out.size() < needed || out.empty()) return std::nullopt;
    bool any_opp = false;
    for (int c : candidates) any_opp = any_opp || s_.p[uz(c)].used.get(opportunistic_priority) > 0;
    if (any_opp) {
      std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
        return s_.p[uz(a)].used.get(opportunistic_priority) <
               s_.p[uz(b)].used.get(opportunistic_priority);
      });
    }
    return out;
  }

  /// mapVirtualCellsToPhysical.
  bool map_cells(const std::vector<binding_vertex*>& cells, std::vector<int>& candidates,
                 std::vector<int>* picked) {
    auto usable_list = usable(candidates, cells.size());
    if (!usable_list) return false;
    const auto cand = std::move(*usable_list);
    std::vector<std::size_t> picked_index(cells.size(), 0);
    std::vector<char> picked_set(cand.size(), 0);
    long long cell_index = 0;
    while (cell_index >= 0) {
      auto ci = static_cast<std::size_t>(cell_index);
      std::size_t k = picked_index[ci];
      for (; k < cand.size(); ++k) {
        if (picked_set[k] != 0) continue;
        int candidate = cand[k];
        bool ok = false;
        if (s_.p[uz(candidate)].level == 1) {
          ok = true;
          bindings_[cells[ci]->cell] = candidate;
        } else {
          ok = map_cells(cells[ci]->children, s_.children_mut(candidate), nullptr);
        }
        if (ok) {
          picked_index[ci] = k;
          picked_set[k] = 1;
          if (ci == cells.size() - 1) {
            if (picked != nullptr)
              for (auto idx : picked_index) picked->push_back(cand[idx]);
            return true;
          }
          break;
        }
      }
      if (k == cand.size()) {
        --cell_index;
        if (cell_index >= 0) {
          auto back = static_cast<std::size_t>(cell_index);
          picked_set[picked_index[back]] = 0;
          picked_index[back]++;
        }
      } else {
        ++cell_index;
      }
    }
    return false;
  }

  bool buddy_alloc(binding_vertex* cell, level_lists& free, int level) {
    int target = s_.v[uz(cell->cell)].level;
    if (level == target) {
      std::vector<int> picked;
      if (map_cells({cell}, free[uz(level)], &picked)) {
        for (int c : picked) swap_remove(free[uz(level)], c);
        return true;
      }
      return false;
    }
    auto cells = usable(free[uz(level)], 1);
    if (!cells) return false;
    for (int c : *cells) {
      for (int child : s_.p[uz(c)].children) free[uz(level - 1)].push_back(child);
      if (buddy_alloc(cell, free, level - 1)) {
        swap_remove(free[uz(level)], c);
        return true;
      }
      free[uz(level - 1)].clear();
    }
    return false;
  }

  bool safe_relaxed(binding_vertex* cell, level_lists& free, const std::vector<int>& free_num,
                    int level) {
    int top = static_cast<int>(free.size()) - 1;
    std::vector<long long> splittable(uz(top + 2), 0);
    int splittable_cell = -1;
    for (int i = top; i >= 1; --i) {
      splittable[uz(i)] = static_cast<long long>(free[uz(i)].size()) - free_num[uz(i)];
      if (i < top && splittable_cell >= 0)
        splittable[uz(i)] += splittable[uz(i + 1)] *
                             static_cast<long long>(s_.p[uz(splittable_cell)].children.size());
      if (splittable_cell < 0 && !free[uz(i)].empty()) {
        splittable_cell = free[uz(i)][0];
      } else if (splittable_cell >= 0 && !s_.p[uz(splittable_cell)].children.empty()) {
        splittable_cell = s_.p[uz(splittable_cell)].children[0];
      }
      if (splittable[uz(i)] < 0) return false;
    }
    for (int l = level + 1; l <= top; ++l) {
      long long num = std::min(static_cast<long long>(free[uz(l)].size()), splittable[uz(l)]);
      if (num <= 0) continue;
      std::vector<int> split_list;
      for (long long i = 0; i < num; ++i) {
        int head = free[uz(l)][0];
        split_list.push_back(head);
        swap_remove(free[uz(l)], head);
      }
      splittable[uz(l)] -= num;
      for (int sl = l; sl > level; --sl) {
        std::vector<int> next;
        for (int c : split_list)
          for (int child : s_.p[uz(c)].children) next.push_back(child);
        split_list = std::move(next);
      }
      split_list.insert(split_list.end(), free[uz(level)].begin(), free[uz(level)].end());
      free[uz(level)] = std::move(split_list);
      std::vector<int> picked;
      if (map_cells({cell}, free[uz(level)], &picked)) {
        for (int c : picked) swap_remove(free[uz(level)], c);
        return true;
      }
    }
    return false;
  }

 private:
  scheduler_state& s_;
  const node_set& suggested_;
  bool ignore_;
  std::unordered_map<int, int>& bindings_;
};

int lowest_free_level(const level_lists& free, int level) {
  for (int l = level; l < static_cast<int>(free.size()); ++l)
    if (!free[uz(l)].empty()) return l;
  return -1;
}

}  // namespace

bool scheduler_state::map_placement(
    const std::vector<binding_vertex*>& preassigned,
    const std::vector<std::vector<binding_vertex*>>& non_preassigned, level_lists& free,
    std::vector<int>& free_num, const node_set& suggested, bool ignore_suggested,
    std::unordered_map<int, int>& bindings) {
  mapper m(*this, suggested, ignore_suggested, bindings);
  for (auto* c : preassigned) {
    int level = v[uz(c->cell)].level;
    int start = lowest_free_level(free, level);
    if (start < 0 || !m.buddy_alloc(c, free, start)) {
      if (!m.safe_relaxed(c, free, free_num, level)) return false;
    } else {
      free_num[uz(level)]--;
    }
  }
  for (const auto& cells : non_preassigned) {
    int vparent = v[uz(cells[0]->cell)].parent;
    int pparent = v[uz(vparent)].pcell;
    if (!m.map_cells(cells, children_mut(pparent), nullptr)) return false;
  }
  return true;
}

}  // namespace hetsched::hived
