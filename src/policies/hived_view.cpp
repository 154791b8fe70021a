// SPDX-License-Identifier: MIT
// The topology-aware schedulers' node views, kept sorted incrementally (topo_scheduler in
// hived_state.hpp) with the order hivedscheduler's updateClusterView + sort.Stable gives.
//
// Stable sorting the previous order by the new keys is sorting by (new key, previous position).
// A node whose key did not change keeps its place relative to the other such nodes. A node whose
// key changed from `old` to `key` lands at the front of the nodes of key `key` if `old` sorts
// before `key` (it was ahead of all of them) and at their end otherwise: it cannot have been
// among them, since the previous order was sorted by the previous keys. So each moved node's
// final index is (unmoved nodes before it) + (moved nodes before it), found by binary search.
#include <algorithm>
#include <cstddef>
#include <vector>

#include <hetsched/model/assert.hpp>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

/// Beyond this many moved nodes one stable sort of the whole view is cheaper.
constexpr std::size_t max_moved_incremental = 32;

/// The view order: healthy first, then suggested, more used leaves, fewer higher-priority leaves.
bool before(const view_node& a, const view_node& b) {
  if (a.healthy != b.healthy) return a.healthy;
  if (a.suggested != b.suggested) return a.suggested;
  if (a.used_same != b.used_same) return a.used_same > b.used_same;
  return a.used_higher < b.used_higher;
}

bool same_key(const view_node& a, const view_node& b) {
  return a.healthy == b.healthy && a.suggested == b.suggested && a.used_same == b.used_same &&
         a.used_higher == b.used_higher;
}

/// Number of entries of `t.order` (sorted by the cached keys) whose key sorts before `key`, or,
/// with `upper`, does not sort after it.
std::size_t bound(const topo_scheduler& t, const view_node& key, bool upper) {
  auto it = std::partition_point(t.order.begin(), t.order.end(), [&](int slot) {
    const view_node& n = t.view[uz(slot)];
    return upper ? !before(key, n) : before(n, key);
  });
  return static_cast<std::size_t>(it - t.order.begin());
}

void sort_all(topo_scheduler& t) {
  std::stable_sort(t.order.begin(), t.order.end(),
                   [&](int a, int b) { return before(t.view[uz(a)], t.view[uz(b)]); });
  for (std::size_t i = 0; i < t.order.size(); ++i) t.view[uz(t.order[i])].pos = static_cast<int>(i);
}

/// Moves the nodes of `moved` (their new fields, `pos` still the previous index; t.view still
/// holds their previous fields) to their places in t.order and stores their new fields.
void move_nodes(topo_scheduler& t, std::vector<view_node>& moved, std::vector<int>& scratch) {
  struct entry {
    int slot;
    std::size_t rest_before;
  };
  std::vector<entry> entries;
  entries.reserve(moved.size());
  for (const view_node& key : moved) {
    const int slot = t.order[uz(key.pos)];
    const bool front = before(t.view[uz(slot)], key);
    // Unmoved nodes before it: every node of the previous order whose previous key sorts before
    // `key` (front) or not after it (end), less the moved nodes among those.
    std::size_t count = bound(t, key, !front);
    for (const view_node& other : moved) {
      const view_node& old = t.view[uz(t.order[uz(other.pos)])];
      if (front ? before(old, key) : !before(key, old)) --count;
    }
    entries.push_back({slot, count});
  }
  // Moved nodes in (new key, previous position) order; the i-th lands at rest_before + i.
  std::vector<std::size_t> rank(moved.size());
  for (std::size_t i = 0; i < rank.size(); ++i) rank[i] = i;
  std::sort(rank.begin(), rank.end(), [&](std::size_t a, std::size_t b) {
    if (before(moved[a], moved[b])) return true;
    if (before(moved[b], moved[a])) return false;
    return moved[a].pos < moved[b].pos;
  });
  std::size_t lo = t.order.size();
  std::size_t hi = 0;
  for (std::size_t i = 0; i < rank.size(); ++i) {
    entry& e = entries[rank[i]];
    e.rest_before += i;  // now the final index
    const auto old_pos = static_cast<std::size_t>(moved[rank[i]].pos);
    lo = std::min({lo, old_pos, e.rest_before});
    hi = std::max({hi, old_pos, e.rest_before});
  }
  // Rewrite order[lo..hi]: moved nodes at their final indices, the others in previous order.
  scratch.assign(hi - lo + 1, -1);
  for (const entry& e : entries) {
    scratch[e.rest_before - lo] = e.slot;
    t.view[uz(e.slot)].moved = true;
  }
  std::size_t j = 0;
  for (std::size_t i = lo; i <= hi; ++i) {
    const int slot = t.order[i];
    if (t.view[uz(slot)].moved) continue;
    while (scratch[j] >= 0) ++j;
    scratch[j++] = slot;
  }
  for (std::size_t i = 0; i < moved.size(); ++i) {
    moved[i].pos = static_cast<int>(entries[i].rest_before);
    t.view[uz(entries[i].slot)] = moved[i];
  }
  for (std::size_t i = lo; i <= hi; ++i) {
    t.order[i] = scratch[i - lo];
    t.view[uz(scratch[i - lo])].pos = static_cast<int>(i);
  }
}

}  // namespace

void scheduler_state::register_views() {
  views.clear();
  auto add = [&](topo_scheduler& t) {
    const int id = static_cast<int>(views.size());
    views.push_back(&t);
    t.used = priority_histogram{};
    for (std::size_t slot = 0; slot < t.view.size(); ++slot) {
      const int c = t.view[slot].cell;
      const priority_histogram& hist = t.is_virtual ? v[uz(c)].used : p[uz(c)].used;
      for (const auto& [q, num] : hist.items()) t.used.add(q, num);
      if (t.is_virtual) {
        v.raw()[uz(c)].view = id;
        v.raw()[uz(c)].slot = static_cast<int>(slot);
      } else {
        p.raw()[uz(c)].view = id;
        p.raw()[uz(c)].slot = static_cast<int>(slot);
      }
    }
  };
  for_each_view(add);
}

void scheduler_state::refresh_view(topo_scheduler& t, int at, const node_set& suggested,
                                   bool ignore_suggested) {
  view_mut(t);
  auto compute = [&](view_node& n) {
    const priority_histogram& hist = t.is_virtual ? v[uz(n.cell)].used : p[uz(n.cell)].used;
    int total = t.is_virtual ? v[uz(n.cell)].total_leaves : p[uz(n.cell)].total_leaves;
    n.used_same = hist.get(at);
    n.used_higher = 0;
    n.free_at_p = total;
    for (const auto& [q, num] : hist.items()) {
      if (t.cross_priority_pack) {
        if (q != at) n.used_same += num;
      } else if (q > at) {
        n.used_higher += num;
      }
      if (q >= at) n.free_at_p -= num;
    }
    int pc = t.is_virtual ? v[uz(n.cell)].pcell : n.cell;
    if (pc < 0) {
      n.healthy = true;
      n.suggested = true;
      n.physical = -1;
    } else {
      n.healthy = p[uz(pc)].healthy;
      n.suggested = ignore_suggested || suggested.contains(p[uz(pc)].nodes[0]);
      n.physical = pc;
    }
    n.dirty = false;
  };
  const bool all_suggested = ignore_suggested || suggested.all;
  const bool same_keys =
      t.sorted && all_suggested && t.key_all_suggested && (t.cross_priority_pack || t.key_at == at);
  const bool same_free = t.key_at == at;
  t.key_at = at;
  t.key_all_suggested = all_suggested;
  if (!same_keys) {
    for (auto& n : t.view) compute(n);
    t.dirty.clear();
    sort_all(t);
    t.sorted = true;
    return;
  }
#ifndef NDEBUG
  const std::vector<int> previous = t.order;
#endif
  // Only recomputed nodes can change key; all are recomputed when the free counts were for
  // another priority.
  auto& moved = t.moved_scratch;
  moved.clear();
  auto recompute = [&](int slot) {
    view_node n = t.view[uz(slot)];
    compute(n);
    if (same_key(t.view[uz(slot)], n)) {
      t.view[uz(slot)] = n;
    } else {
      moved.push_back(n);
    }
  };
  if (same_free) {
    for (int slot : t.dirty) recompute(slot);
  } else {
    for (std::size_t slot = 0; slot < t.view.size(); ++slot) recompute(static_cast<int>(slot));
  }
  t.dirty.clear();
  if (moved.size() > max_moved_incremental) {
    for (const view_node& n : moved) t.view[uz(t.order[uz(n.pos)])] = n;
    sort_all(t);
  } else if (!moved.empty()) {
    move_nodes(t, moved, t.order_scratch);
  }
#ifndef NDEBUG
  // The incremental result equals hivedscheduler's full recomputation and stable sort.
  std::vector<int> expected = previous;
  std::vector<view_node> full = t.view;
  for (auto& n : full) {
    const view_node cached = n;
    compute(n);
    HETSCHED_ASSERT(
        same_key(cached, n) && cached.free_at_p == n.free_at_p && cached.physical == n.physical,
        "hived view: a cell changed without being queued");
    HETSCHED_ASSERT(!cached.moved && !cached.dirty, "hived view: stale flags");
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [&](int a, int b) { return before(full[uz(a)], full[uz(b)]); });
  HETSCHED_ASSERT(expected == t.order, "hived view: incremental order differs");
  for (std::size_t i = 0; i < t.order.size(); ++i)
    HETSCHED_ASSERT(t.view[uz(t.order[i])].pos == static_cast<int>(i), "hived view: stale pos");
  priority_histogram total;
  for (const auto& n : t.view)
    for (const auto& [q, num] : (t.is_virtual ? v[uz(n.cell)].used : p[uz(n.cell)].used).items())
      total.add(q, num);
  for (const auto& [q, num] : total.items())
    HETSCHED_ASSERT(t.used.get(q) == num, "hived view: usage total differs");
  HETSCHED_ASSERT(total.items().size() == t.used.items().size(), "hived view: usage total differs");
#endif
}

}  // namespace hetsched::hived
