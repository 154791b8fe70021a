// SPDX-License-Identifier: MIT
// HiveD's topology-aware packing (hivedscheduler topology_aware_scheduler.go): a persistent,
// stably re-sorted node view, greedy node selection and the lowest-LCA leaf search in a node.
#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

/// Cell accessors shared by the physical and the virtual arena.
template <typename Cells>
struct tree {
  const Cells& cells;
  [[nodiscard]] int level(int c) const { return cells[uz(c)].level; }
  [[nodiscard]] int parent(int c) const { return cells[uz(c)].parent; }

  /// findLCA: the lowest common ancestor of two cells, -1 if none.
  [[nodiscard]] int lca(int lower, int higher) const {
    while (level(lower) < level(higher)) {
      if (parent(lower) < 0) return -1;
      lower = parent(lower);
    }
    if (lower == higher) return lower;
    while (parent(lower) != parent(higher)) {
      if (parent(lower) < 0 || parent(higher) < 0) return -1;
      lower = parent(lower);
      higher = parent(higher);
    }
    return parent(lower);
  }

  void collect(int c, int prio, std::vector<int>& free, std::vector<int>& preemptible) const {
    const auto& cell = cells[uz(c)];
    if (cell.level > 1) {
      for (int child : cell.children) collect(child, prio, free, preemptible);
    } else if (cell.priority == free_priority) {
      free.push_back(c);
    } else if (cell.priority < prio) {
      preemptible.push_back(c);
    }
  }

  /// findLeafCellsInNode: the leaves with the lowest LCA, first best in index order.
  std::vector<int> find_leaves(int node, int num, int prio, std::vector<int>& available,
                               bool cached, int optimal) const {
    if (!cached) {
      std::vector<int> preemptible;
      collect(node, prio, available, preemptible);
      available.insert(available.end(), preemptible.begin(), preemptible.end());
    }
    auto n = uz(num);
    std::vector<std::size_t> current(n, 0);
    std::vector<int> affinity(n, -1);
    std::vector<std::size_t> best_indices(n, 0);
    int best = INT_MAX;
    std::size_t avail_index = 0;
    long long search = 0;
    auto finish = [&]() {
      std::vector<int> out;
      for (auto i : best_indices) out.push_back(available[i]);
      std::vector<int> rest;
      std::size_t j = 0;
      for (std::size_t i = 0; i < available.size(); ++i) {
        if (j < best_indices.size() && best_indices[j] == i) {
          ++j;
          continue;
        }
        rest.push_back(available[i]);
      }
      available = std::move(rest);
      return out;
    };
    for (;;) {
      while (avail_index < available.size()) {
        auto si = static_cast<std::size_t>(search);
        int leaf = available[avail_index];
        current[si] = avail_index;
        if (si == 0) {
          affinity[0] = leaf;
        } else {
          affinity[si] = affinity[si - 1] < 0 ? -1 : lca(leaf, affinity[si - 1]);
          if ((affinity[si] < 0 && best < INT_MAX) ||
              (affinity[si] >= 0 && level(affinity[si]) > best)) {
            ++avail_index;
            continue;
          }
        }
        if (si == n - 1) {
          int a = affinity[si] < 0 ? INT_MAX - 1 : level(affinity[si]);
          if (a < best) {
            best = a;
            best_indices = current;
            if (a == optimal) return finish();
          }
        } else {
          ++search;
        }
        ++avail_index;
      }
      --search;
      if (search < 0) return finish();
      avail_index = current[static_cast<std::size_t>(search)] + 1;
    }
  }
};

template <typename Cells>
int ancestor_no_higher_than_node(const Cells& cells, int c) {
  while (!cells[uz(c)].at_or_above_node && cells[uz(c)].parent >= 0) c = cells[uz(c)].parent;
  return c;
}

template <typename Cells>
void build_view_of(const Cells& cells, topo_scheduler& t, const level_lists& full) {
  int top = 0;
  for (int l = 1; l < static_cast<int>(full.size()); ++l)
    if (!full[uz(l)].empty()) top = l;
  int l = 1;
  for (; l <= top; ++l)
    if (cells[uz(full[uz(l)][0])].at_or_above_node) break;
  std::vector<char> in_view(cells.size(), 0);
  for (; l >= 1; --l) {
    if (l > top) continue;
    for (int c : full[uz(l)]) {
      int anc = ancestor_no_higher_than_node(cells, c);
      if (in_view[uz(anc)] != 0) continue;
      in_view[uz(c)] = 1;
      view_node n;
      n.cell = c;
      n.pos = static_cast<int>(t.view.size());
      t.order.push_back(n.pos);
      t.view.push_back(n);
    }
  }
}

std::optional<std::vector<std::size_t>> find_nodes(const physical_cells& cells,
                                                   const topo_scheduler& t,
                                                   const std::vector<int>& nums,
                                                   std::string& reason) {
  auto address = [&](const view_node& n) {
    return n.physical < 0 ? std::string() : cells[uz(n.physical)].address;
  };
  std::vector<std::size_t> picked(nums.size(), 0);
  std::size_t pod = 0;
  int picked_num = 0;
  for (std::size_t i = 0; i < t.order.size();) {
    const auto& n = t.view[uz(t.order[i])];
    if (!n.healthy) {
      reason = "have to use at least one bad node " + address(n);
      return std::nullopt;
    }
    if (!n.suggested) {
      reason = "have to use at least one non-suggested node " + address(n);
      return std::nullopt;
    }
    if (n.free_at_p - picked_num >= nums[pod]) {
      picked[pod] = i;
      picked_num += nums[pod];
      if (++pod == nums.size()) return picked;
    } else {
      picked_num = 0;
      ++i;
    }
  }
  reason = "insufficient capacity";
  return std::nullopt;
}

}  // namespace

void scheduler_state::build_view(topo_scheduler& t, const level_lists& full) {
  if (t.is_virtual) {
    build_view_of(v, t, full);
  } else {
    build_view_of(p, t, full);
  }
}

std::vector<int> scheduler_state::lowest_lca_cells(bool is_virtual, std::vector<int>& available,
                                                   int num, int optimal) const {
  return is_virtual ? tree<virtual_cells>{v}.find_leaves(-1, num, 0, available, true, optimal)
                    : tree<physical_cells>{p}.find_leaves(-1, num, 0, available, true, optimal);
}

std::optional<placement> scheduler_state::topo_schedule(topo_scheduler& t,
                                                        const std::map<int, int>& pod_nums,
                                                        int prio, const node_set& suggested,
                                                        bool ignore_suggested,
                                                        std::string& reason) {
  std::vector<int> nums;
  for (const auto& [leaves, pods] : pod_nums)
    for (int i = 0; i < pods; ++i) nums.push_back(leaves);
  if (nums.empty()) {
    reason = "no pod to schedule";
    return std::nullopt;
  }
  int at = opportunistic_priority;
  refresh_view(t, at, suggested, ignore_suggested);
  auto picked = find_nodes(p, t, nums, reason);
  // The second pass at the pod's priority sees the same view whenever no view cell has leaves
  // used below that priority and the key ignores the priority (cross-priority packing): then
  // every node's key and free count are those of the first pass, and so is the answer.
  auto same_as_first = [&] {
    if (!t.cross_priority_pack) return false;
    for (const auto& [q, num] : t.used.items())
      if (q < prio) return false;
    return true;
  };
  if (!picked && prio > opportunistic_priority && !same_as_first()) {
    at = prio;
    refresh_view(t, at, suggested, ignore_suggested);
    picked = find_nodes(p, t, nums, reason);
  }
  if (!picked) return std::nullopt;
  const auto& ch = chains[uz(t.chain)];
  std::map<int, std::vector<int>> node_available;
  std::map<int, bool> node_cached;
  placement out;
  for (std::size_t i = 0; i < nums.size(); ++i) {
    int node = t.view[uz(t.order[(*picked)[i]])].cell;
    int optimal = ch.top;
    for (int l = 1; l <= ch.top; ++l) {
      if (ch.level_leaves[uz(l)] >= nums[i]) {
        optimal = l;
        break;
      }
    }
    auto& avail = node_available[node];
    bool cached = node_cached[node];
    node_cached[node] = true;
    std::vector<int> leaves =
        t.is_virtual
            ? tree<virtual_cells>{v}.find_leaves(node, nums[i], at, avail, cached, optimal)
            : tree<physical_cells>{p}.find_leaves(node, nums[i], at, avail, cached, optimal);
    out[nums[i]].push_back(std::move(leaves));
  }
  return out;
}

}  // namespace hetsched::hived
