// SPDX-License-Identifier: MIT
// HiveD cell bookkeeping: priorities, bindings, free lists with buddy split/merge, safety
// counters, bad cells and doomed bad cells (hivedscheduler hived_algorithm.go, cell_allocation.go).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

template <typename Cells>
void set_priority(Cells& cells, int c, int prio) {
  int original = cells[uz(c)].priority;
  cells.mut(c).priority = prio;
  int parent = cells[uz(c)].parent;
  if (parent < 0) return;
  if (prio > cells[uz(parent)].priority) {
    set_priority(cells, parent, prio);
  } else if (original == cells[uz(parent)].priority && prio < original) {
    int max_buddy = free_priority;
    for (int b : cells[uz(parent)].children) max_buddy = std::max(max_buddy, cells[uz(b)].priority);
    set_priority(cells, parent, max_buddy);
  }
}

/// Updates the usage of `c` and its ancestors; the view cell among them is queued for its view's
/// next refresh and the view's total follows.
template <typename Cells>
void update_used(scheduler_state& s, Cells& cells, int c, int prio, int delta) {
  for (; c >= 0; c = cells[uz(c)].parent) {
    auto& cell = cells.mut(c);
    cell.used.add(prio, delta);
    if (cell.view >= 0) {
      s.view_mut(*s.views[uz(cell.view)]).used.add(prio, delta);
      s.touch(cell.view, cell.slot);
    }
  }
}

/// Appends `c` unless it is already listed (upstream never lists a cell twice).
void indexed_push(physical_cells& cells, std::vector<int>& list, int c, int pcell_live::*pos) {
  if (cells[uz(c)].*pos >= 0) return;
  cells.mut(c).*pos = static_cast<int>(list.size());
  list.push_back(c);
}

void indexed_remove(physical_cells& cells, std::vector<int>& list, int c, int pcell_live::*pos) {
  int i = cells[uz(c)].*pos;
  if (i < 0) return;
  int last = list.back();
  list[uz(i)] = last;
  cells.mut(last).*pos = i;
  list.pop_back();
  cells.mut(c).*pos = -1;
}

}  // namespace

void scheduler_state::free_push(int c) {
  indexed_push(p, chains.mut(p[uz(c)].chain).free[uz(p[uz(c)].level)], c, &pcell_live::free_pos);
}
void scheduler_state::free_remove(int c) {
  indexed_remove(p, chains.mut(p[uz(c)].chain).free[uz(p[uz(c)].level)], c, &pcell_live::free_pos);
}
void scheduler_state::bad_push(int c) {
  indexed_push(p, chains.mut(p[uz(c)].chain).bad_free[uz(p[uz(c)].level)], c, &pcell_live::bad_pos);
}
void scheduler_state::bad_remove(int c) {
  indexed_remove(p, chains.mut(p[uz(c)].chain).bad_free[uz(p[uz(c)].level)], c,
                 &pcell_live::bad_pos);
}

void scheduler_state::set_priority_p(int c, int prio) { set_priority(p, c, prio); }
void scheduler_state::set_priority_v(int c, int prio) { set_priority(v, c, prio); }
void scheduler_state::update_used_p(int c, int prio, int delta) {
  update_used(*this, p, c, prio, delta);
}
void scheduler_state::update_used_v(int c, int prio, int delta) {
  update_used(*this, v, c, prio, delta);
}

void scheduler_state::bind_cell(int pc, int vc) {
  while (v[uz(vc)].pcell < 0) {
    link(pc, vc);
    if (v[uz(vc)].parent < 0) break;
    vc = v[uz(vc)].parent;
    pc = p[uz(pc)].parent;
  }
}

void scheduler_state::unbind_cell(int pc) {
  int bv = p[uz(pc)].vcell;
  while (bv >= 0 && !p[uz(v[uz(bv)].pcell)].pinned) {
    unlink(v[uz(bv)].pcell, bv);
    int parent = v[uz(bv)].parent;
    if (parent < 0) return;
    if (v[uz(parent)].bound_children > 0) return;
    bv = parent;
  }
}

bool scheduler_state::in_free_cell_list(int c) const {
  for (;;) {
    if (p[uz(c)].vcell >= 0 || p[uz(c)].split) return false;
    int parent = p[uz(c)].parent;
    if (parent < 0 || p[uz(parent)].split) return true;
    c = parent;
  }
}

int scheduler_state::unbound_virtual(const std::vector<int>& cells) const {
  for (int c : cells)
    if (v[uz(c)].pcell < 0) return c;
  return -1;
}

namespace {

/// The first unbound cell of `cells` that no binding_plan reserves, searched from `hint`
/// (every cell before it is bound), which is moved past the bound prefix; -1 if none. Amortized
/// O(1) per binding (planned cells are bound right after).
int first_unbound_from(const virtual_cells& v, const std::vector<int>& cells, int& hint) {
  while (uz(hint) < cells.size() && v[uz(cells[uz(hint)])].pcell >= 0) ++hint;
  for (std::size_t i = uz(hint); i < cells.size(); ++i) {
    const vcell& c = v[uz(cells[i])];
    if (c.pcell < 0 && !c.planned) return cells[i];
  }
  return -1;
}

}  // namespace

void scheduler_state::note_unbound(int vc) {
  const vcell& c = v[uz(vc)];
  if (c.list_index < 0) return;
  if (c.parent >= 0) {
    vcell& parent = v.mut(c.parent);
    --parent.bound_children;
    parent.first_unbound = std::min(parent.first_unbound, c.list_index);
    return;
  }
  auto& hints = vc_chain_mut(c.vc, c.chain).first_unbound;
  hints[uz(c.level)] = std::min(hints[uz(c.level)], c.list_index);
}

int scheduler_state::unbound_child(int parent) {
  vcell& cell = v.mut(parent);
  return first_unbound_from(v, cell.children, cell.first_unbound);
}

int scheduler_state::unbound_preassigned(const scheduler_state& s, vc_chain& vch, int level) {
  return first_unbound_from(s.v, vch.preassigned[uz(level)], vch.first_unbound[uz(level)]);
}

bool scheduler_state::allocate_leaf(int pleaf, int vleaf, int prio, int vc, std::string* reason) {
  bool safety = true;
  if (vleaf >= 0) {
    set_priority_v(vleaf, prio);
    update_used_v(vleaf, prio, 1);
    set_priority_p(pleaf, prio);
    update_used_p(pleaf, prio, 1);
    int pac = v[uz(vleaf)].preassigned;
    bool newly_bound = v[uz(pac)].pcell < 0;
    if (p[uz(pleaf)].vcell < 0) bind_cell(pleaf, vleaf);
    if (newly_bound && v[uz(pac)].pcell >= 0)
      safety = allocate_preassigned(v[uz(pac)].pcell, vc, reason, false);
  } else {
    set_priority_p(pleaf, opportunistic_priority);
    update_used_p(pleaf, opportunistic_priority, 1);
  }
  return safety;
}

void scheduler_state::release_leaf(int pleaf, int vc) {
  int vleaf = p[uz(pleaf)].vcell;
  // Only a guaranteed use (priority >= 0) bound the leaf's virtual cell. An opportunistic pod's
  // leaf can be bound to another VC's virtual cell because the leaf is bad (its cell doomed to
  // that VC); hivedscheduler released that VC's cell under the opportunistic pod's VC (found by
  // the sanitizer build: a VC without cells in the chain indexed an empty counter list).
  if (vleaf >= 0 && p[uz(pleaf)].priority >= 0) {
    update_used_v(vleaf, v[uz(vleaf)].priority, -1);
    set_priority_v(vleaf, free_priority);
    int pac = v[uz(vleaf)].preassigned;
    int pre_physical = v[uz(pac)].pcell;
    if (p[uz(pleaf)].healthy) unbind_cell(pleaf);
    if (pre_physical >= 0 && !p[uz(pre_physical)].pinned && v[uz(pac)].priority < 0) {
      const auto& pc = p[uz(pre_physical)];
      bool doomed = false;
      auto& vchains = vcs[uz(vc)].chains;
      auto it = vchains.find(pc.chain);
      if (it != vchains.end() && uz(pc.level) < it->second.doomed.size())
        doomed = list_contains(it->second.doomed[uz(pc.level)], pre_physical);
      if (!doomed) release_preassigned(pre_physical, vc, false);
    }
  }
  update_used_p(pleaf, p[uz(pleaf)].priority, -1);
  set_priority_p(pleaf, free_priority);
}

bool scheduler_state::allocate_preassigned(int c, int vc, std::string* reason, bool doomed_bad) {
  bool safety = true;
  int chain = p[uz(c)].chain;
  int level = p[uz(c)].level;
  auto& ch = chains.mut(chain);
  auto& vch = vc_chain_mut(vc, chain);
  if (vch.vc_free.empty()) {
    vch.vc_free.assign(uz(ch.top + 1), 0);
    vch.full.resize(uz(ch.top + 1));
    vch.preassigned.resize(uz(ch.top + 1));
    vch.doomed.resize(uz(ch.top + 1));
    vch.first_unbound.assign(uz(ch.top + 1), 0);
  }
  vch.vc_free[uz(level)]--;
  ch.all_vc_free[uz(level)]--;
  ch.total_left[uz(level)]--;
  int split_up_to = remove_from_free_list(c);
  auto broken = [&](int l) {
    if (ch.total_left[uz(l)] < ch.all_vc_free[uz(l)]) {
      safety = false;
      if (reason != nullptr)
        *reason = fmt::format(
            "Adding pod would lead to broken safety: cell type {}, {} left, {} free cells in all "
            "VCs",
            ch.level_type[uz(l)], ch.total_left[uz(l)], ch.all_vc_free[uz(l)]);
    }
  };
  int parent = p[uz(c)].parent;
  for (int l = level + 1; l <= split_up_to; ++l) {
    ch.total_left[uz(l)]--;
    broken(l);
    if (!p[uz(parent)].healthy) {
      bad_remove(parent);
    } else {
      try_bind_doomed(chain, l);
    }
    parent = p[uz(parent)].parent;
  }
  if (!p[uz(c)].healthy) {
    allocate_bad_cell(c);
    if (!doomed_bad) try_unbind_doomed(chain, level);
  } else {
    try_bind_doomed(chain, level);
  }
  int reduce = static_cast<int>(p[uz(c)].children.size());
  for (int l = level - 1; l >= 1; --l) {
    ch.total_left[uz(l)] -= reduce;
    broken(l);
    if (!doomed_bad) try_bind_doomed(chain, l);
    reduce *= ch.level_children[uz(l)];
  }
  return safety;
}

void scheduler_state::release_preassigned(int c, int vc, bool doomed_bad) {
  int chain = p[uz(c)].chain;
  int level = p[uz(c)].level;
  auto& ch = chains.mut(chain);
  vc_chain_mut(vc, chain).vc_free[uz(level)]++;
  ch.all_vc_free[uz(level)]++;
  ch.total_left[uz(level)]++;
  int merge_up_to = add_to_free_list(c);
  int parent = p[uz(c)].parent;
  for (int l = level + 1; l <= merge_up_to; ++l) {
    ch.total_left[uz(l)]++;
    if (!p[uz(parent)].healthy) {
      bad_push(parent);
    } else {
      try_unbind_doomed(chain, l);
    }
    parent = p[uz(parent)].parent;
  }
  if (!p[uz(c)].healthy) {
    release_bad_cell(c);
    if (!doomed_bad) try_bind_doomed(chain, level);
  } else {
    try_unbind_doomed(chain, level);
  }
  int add = static_cast<int>(p[uz(c)].children.size());
  for (int l = level - 1; l >= 1; --l) {
    ch.total_left[uz(l)] += add;
    if (!doomed_bad) try_unbind_doomed(chain, l);
    add *= ch.level_children[uz(l)];
  }
}

void scheduler_state::allocate_bad_cell(int c) {
  bad_remove(c);
  if (p[uz(c)].vcell < 0) {
    int parent = p[uz(c)].parent;
    if (parent >= 0 && p[uz(parent)].vcell >= 0) {
      int vc = unbound_child(p[uz(parent)].vcell);
      if (vc >= 0) link(c, vc);
    }
  }
  for (int child : p[uz(c)].children)
    if (!p[uz(child)].healthy) allocate_bad_cell(child);
}

void scheduler_state::release_bad_cell(int c) {
  bad_push(c);
  if (int vc = p[uz(c)].vcell; vc >= 0) unlink(c, vc);
  for (int child : p[uz(c)].children)
    if (!p[uz(child)].healthy) release_bad_cell(child);
}

int scheduler_state::remove_from_free_list(int c) {
  for (;;) {
    int l = p[uz(c)].level;
    int parent = p[uz(c)].parent;
    bool terminate = true;
    if (parent >= 0 && !p[uz(parent)].split) {
      terminate = false;
      for (int child : p[uz(parent)].children) free_push(child);
      p.mut(parent).split = true;
    }
    free_remove(c);
    if (terminate) return l;
    c = parent;
  }
}

int scheduler_state::add_to_free_list(int c) {
  for (;;) {
    int l = p[uz(c)].level;
    int parent = p[uz(c)].parent;
    bool terminate = true;
    if (parent >= 0) {
      bool all_free = true;
      for (int b : p[uz(parent)].children) {
        if (b != c && p[uz(b)].free_pos < 0) {
          all_free = false;
          break;
        }
      }
      if (all_free) {
        terminate = false;
        for (int b : p[uz(parent)].children)
          if (b != c) free_remove(b);
        p.mut(parent).split = false;
      }
    }
    if (terminate) {
      free_push(c);
      return l;
    }
    c = parent;
  }
}

void scheduler_state::try_bind_doomed(int chain, int l) {
  const auto& ch = chains[uz(chain)];
  for (std::size_t vc = 0; vc < vcs.size(); ++vc) {
    auto it = vcs[vc].chains.find(chain);
    if (it == vcs[vc].chains.end()) continue;
    if (it->second.vc_free[uz(l)] <=
            ch.total_left[uz(l)] - static_cast<int>(ch.bad_free[uz(l)].size()) ||
        ch.bad_free[uz(l)].empty())
      continue;
    auto& vch = vc_chain_mut(static_cast<int>(vc), chain);
    while (vch.vc_free[uz(l)] >
           ch.total_left[uz(l)] - static_cast<int>(ch.bad_free[uz(l)].size())) {
      if (ch.bad_free[uz(l)].empty()) break;
      int pc = ch.bad_free[uz(l)][0];
      int vcell = unbound_preassigned(*this, vch, l);
      if (vcell < 0) break;
      link(pc, vcell);
      vch.doomed[uz(l)].push_back(pc);
      chains.mut(chain).all_vc_doomed[uz(l)]++;
      allocate_preassigned(pc, static_cast<int>(vc), nullptr, true);
    }
  }
}

void scheduler_state::try_unbind_doomed(int chain, int l) {
  const auto& ch = chains[uz(chain)];
  for (std::size_t vc = 0; vc < vcs.size(); ++vc) {
    auto it = vcs[vc].chains.find(chain);
    if (it == vcs[vc].chains.end()) continue;
    if (it->second.doomed[uz(l)].empty()) continue;
    auto& vch = vc_chain_mut(static_cast<int>(vc), chain);
    while (!vch.doomed[uz(l)].empty() &&
           vch.vc_free[uz(l)] <
               ch.total_left[uz(l)] - static_cast<int>(ch.bad_free[uz(l)].size())) {
      // The first doomed cell no group uses (hivedscheduler takes the first one even when a
      // group runs on its healthy part, and unbinds the cell from under that group).
      int pc = -1;
      for (int d : vch.doomed[uz(l)])
        if (p[uz(d)].priority < 0) {
          pc = d;
          break;
        }
      if (pc < 0) break;
      unlink(pc, p[uz(pc)].vcell);
      swap_remove(vch.doomed[uz(l)], pc);
      chains.mut(chain).all_vc_doomed[uz(l)]--;
      release_preassigned(pc, static_cast<int>(vc), true);
    }
  }
}

void scheduler_state::add_bad_free_cell(int c) {
  int chain = p[uz(c)].chain;
  int l = p[uz(c)].level;
  const auto& ch = chains[uz(chain)];
  bad_push(c);
  if (ch.all_vc_free[uz(l)] > ch.total_left[uz(l)] - static_cast<int>(ch.bad_free[uz(l)].size()))
    try_bind_doomed(chain, l);
}

void scheduler_state::remove_bad_free_cell(int c) {
  int chain = p[uz(c)].chain;
  bad_remove(c);
  try_unbind_doomed(chain, p[uz(c)].level);
}

void scheduler_state::set_bad_cell(int c) {
  if (!p[uz(c)].healthy) return;
  p.mut(c).healthy = false;
  touch_p(c);
  if (p[uz(c)].vcell >= 0) touch_v(p[uz(c)].vcell);
  int parent = p[uz(c)].parent;
  if (parent >= 0) {
    ++p.mut(parent).bad_children;
    set_bad_cell(parent);
  }
  if (in_free_cell_list(c)) {
    add_bad_free_cell(c);
  } else if (p[uz(c)].vcell < 0 && !p[uz(c)].split && parent >= 0 && p[uz(parent)].vcell >= 0) {
    int vc = unbound_child(p[uz(parent)].vcell);
    if (vc >= 0) link(c, vc);
  }
}

void scheduler_state::set_healthy_cell(int c) {
  if (p[uz(c)].healthy) return;
  p.mut(c).healthy = true;
  touch_p(c);
  if (p[uz(c)].vcell >= 0) touch_v(p[uz(c)].vcell);
  if (in_free_cell_list(c)) {
    remove_bad_free_cell(c);
  } else if (int vc = p[uz(c)].vcell; vc >= 0 && !p[uz(c)].pinned) {
    // A preassigned cell bound while bad: doomed (released here), or released already by its
    // last group and kept bound only because it was bad (hivedscheduler assumes doomed and
    // releases it a second time).
    const int owner = v[uz(vc)].vc;
    std::vector<int>* doomed = nullptr;
    if (v[uz(vc)].parent < 0) {
      auto it = vcs[uz(owner)].chains.find(p[uz(c)].chain);
      if (it != vcs[uz(owner)].chains.end() && uz(p[uz(c)].level) < it->second.doomed.size())
        doomed = &vc_chain_mut(owner, p[uz(c)].chain).doomed[uz(p[uz(c)].level)];
    }
    const bool was_doomed = doomed != nullptr && list_contains(*doomed, c);
    if (p[uz(c)].priority < 0) {
      unlink(c, vc);
      if (was_doomed) {
        swap_remove(*doomed, c);
        chains.mut(p[uz(c)].chain).all_vc_doomed[uz(p[uz(c)].level)]--;
        release_preassigned(c, owner, true);
      }
    } else if (was_doomed) {
      // A group uses the doomed cell (its healthy part): an ordinary allocation from now on,
      // released with its last group. Left doomed, try_unbind_doomed would take it from under
      // the group (found by hived_property_test).
      swap_remove(*doomed, c);
      chains.mut(p[uz(c)].chain).all_vc_doomed[uz(p[uz(c)].level)]--;
    }
  }
  int parent = p[uz(c)].parent;
  if (parent < 0) return;
  if (--p.mut(parent).bad_children > 0) return;  // a buddy is still bad
  set_healthy_cell(parent);
}

void scheduler_state::set_node_health(int node, bool healthy) {
  bool bad = bad_node[uz(node)] != 0;
  if (bad == !healthy) return;
  if (state_journal* j = journal.get(); j != nullptr && j->open)
    j->bad_node.emplace_back(node, bad_node[uz(node)]);
  bad_node[uz(node)] = healthy ? 0 : 1;
  for (int leaf : node_leaves[uz(node)]) {
    if (healthy) {
      set_healthy_cell(leaf);
    } else {
      set_bad_cell(leaf);
    }
  }
}

bool scheduler_state::cell_healthy_v(int vc) const {
  int pc = v[uz(vc)].pcell;
  return pc < 0 || p[uz(pc)].healthy;
}

}  // namespace hetsched::hived
