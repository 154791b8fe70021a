// SPDX-License-Identifier: MIT
// hived::scheduler::state_digest: a 64-bit FNV-1a digest of every mutable field of the allocator
// state, orders included (free lists, cell children, views' cached order and dirty sets), so that
// a test can tell that a call changed nothing. A field added to scheduler_state, pcell, vcell,
// chain_info, vc_chain, pinned_info, topo_scheduler or group that a call may change belongs here.
// Configuration that never changes after create() (names, indexes, options) is left out; scratch
// buffers (view_node::moved, topo_scheduler's *_scratch) are too.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

class hasher {
 public:
  [[nodiscard]] std::uint64_t value() const { return h_; }

  void add(std::int64_t x) {
    auto u = static_cast<std::uint64_t>(x);
    for (int i = 0; i < 8; ++i) {
      byte(static_cast<unsigned char>(u & 0xffU));
      u >>= 8U;
    }
  }
  void add(int x) { add(static_cast<std::int64_t>(x)); }
  void add(std::size_t x) { add(static_cast<std::int64_t>(x)); }
  void add(bool x) { add(static_cast<std::int64_t>(x ? 1 : 0)); }
  void add(const std::string& x) {
    add(x.size());
    for (char c : x) byte(static_cast<unsigned char>(c));
  }
  template <typename T>
  void add(const std::vector<T>& xs) {
    add(xs.size());
    for (const auto& x : xs) add(x);
  }
  template <typename T>
  void add(const std::optional<T>& x) {
    add(x.has_value());
    if (x) add(*x);
  }
  template <typename K, typename V>
  void add(const std::map<K, V>& m) {
    add(m.size());
    for (const auto& [k, v] : m) {
      add(k);
      add(v);
    }
  }
  /// The histogram's counts by priority; its internal item order carries no meaning.
  void add(const priority_histogram& h) {
    auto items = h.items();
    std::sort(items.begin(), items.end());
    add(items.size());
    for (const auto& [p, n] : items) {
      add(p);
      add(n);
    }
  }
  void add(const group* g) { add(g == nullptr ? std::string("\x01none") : g->name); }
  void add(const pod_placement& pp) {
    add(pp.node);
    add(pp.leaf_cells);
    add(pp.preassigned_types);
  }
  void add(const pod_slot& slot) {
    add(slot.present);
    add(slot.pod);
    add(slot.node);
  }

 private:
  void byte(unsigned char b) {
    h_ ^= b;
    h_ *= 1099511628211ULL;
  }
  std::uint64_t h_ = 14695981039346656037ULL;
};

void add_cell(hasher& h, const pcell& c) {
  h.add(c.parent);
  h.add(c.children);
  h.add(c.nodes);
  h.add(c.priority);
  h.add(static_cast<int>(c.state));
  h.add(c.healthy);
  h.add(c.split);
  h.add(c.pinned);
  h.add(c.vcell);
  h.add(c.free_pos);
  h.add(c.bad_pos);
  h.add(c.using_group);
  h.add(c.reserving_group);
  h.add(c.used);
  h.add(c.view);
  h.add(c.slot);
}

void add_cell(hasher& h, const vcell& c) {
  h.add(c.parent);
  h.add(c.children);
  h.add(c.preassigned);
  h.add(c.pcell);
  h.add(c.priority);
  h.add(c.used);
  h.add(c.view);
  h.add(c.slot);
}

void add_view(hasher& h, const topo_scheduler& t) {
  h.add(t.is_virtual);
  h.add(t.cross_priority_pack);
  h.add(t.chain);
  h.add(t.view.size());
  for (const view_node& n : t.view) {
    h.add(n.cell);
    h.add(n.free_at_p);
    h.add(n.used_same);
    h.add(n.used_higher);
    h.add(n.healthy);
    h.add(n.suggested);
    h.add(n.dirty);
    h.add(n.physical);
    h.add(n.pos);
  }
  h.add(t.order);
  h.add(t.sorted);
  h.add(t.key_at);
  h.add(t.key_all_suggested);
  h.add(t.dirty);
  h.add(t.used);
}

void add_group(hasher& h, const group& g) {
  h.add(g.name);
  h.add(g.vc);
  h.add(g.lazy_preemption);
  h.add(g.ignore_suggested);
  h.add(g.priority);
  h.add(g.total_pods);
  h.add(g.allocated);
  h.add(g.preempting_pods);
  h.add(g.physical);
  h.add(g.virt);
  h.add(static_cast<int>(g.state));
}

}  // namespace

std::uint64_t scheduler::state_digest() const {
  const scheduler_state& s = *s_;
  hasher h;
  h.add(s.p.size());
  for (const pcell& c : s.p) add_cell(h, c);
  h.add(s.v.size());
  for (const vcell& c : s.v) add_cell(h, c);
  for (const chain_info& ch : s.chains) {
    h.add(ch.full);
    h.add(ch.free);
    h.add(ch.bad_free);
    h.add(ch.total_left);
    h.add(ch.all_vc_free);
    h.add(ch.all_vc_doomed);
  }
  for (const vc_info& vc : s.vcs) {
    for (const auto& [chain, vch] : vc.chains) {
      h.add(chain);
      h.add(vch.vc_free);
      h.add(vch.full);
      h.add(vch.preassigned);
      h.add(vch.doomed);
      h.add(vch.has_non_pinned);
      h.add(vch.sched.has_value());
      if (vch.sched) add_view(h, *vch.sched);
    }
    for (const auto& [id, info] : vc.pinned) {
      h.add(id);
      h.add(info.chain);
      h.add(info.pcell);
      h.add(info.vroot);
      h.add(info.full);
      add_view(h, info.sched);
    }
  }
  for (const topo_scheduler& t : s.opp) add_view(h, t);
  h.add(s.bad_node.size());
  for (char bad : s.bad_node) h.add(bad != 0);
  h.add(s.groups.size());
  for (const auto& [name, g] : s.groups) add_group(h, *g);
  h.add(s.records.size());
  for (const auto& [name, info] : s.records) {
    h.add(name);
    h.add(info.node);
    h.add(info.leaf_cells);
    h.add(info.chain);
    h.add(info.group_placements);
  }
  return h.value();
}

}  // namespace hetsched::hived
