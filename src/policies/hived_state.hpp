// SPDX-License-Identifier: MIT
// Private state of hived::scheduler: physical and virtual cell arenas, chains, VCs, groups.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/policies/hived.hpp>

namespace hetsched::hived {

inline constexpr int free_priority = -2;

inline std::size_t uz(int i) { return static_cast<std::size_t>(i); }

/// Leaves used per priority (hivedscheduler usedLeafCellNumAtPriorities); few distinct keys.
class priority_histogram {
 public:
  void add(int p, int delta) {
    for (auto it = v_.begin(); it != v_.end(); ++it) {
      if (it->first == p) {
        it->second += delta;
        if (it->second == 0) v_.erase(it);
        return;
      }
    }
    if (delta != 0) v_.emplace_back(p, delta);
  }
  [[nodiscard]] int get(int p) const {
    for (const auto& [q, n] : v_)
      if (q == p) return n;
    return 0;
  }
  [[nodiscard]] const std::vector<std::pair<int, int>>& items() const { return v_; }

 private:
  std::vector<std::pair<int, int>> v_;
};

enum class leaf_state : unsigned char { free, used, reserving, reserved };

struct group;

struct pcell {
  int chain = 0;
  int level = 1;
  int parent = -1;
  std::vector<int> children;
  std::string address;
  std::vector<int> nodes;  ///< node ids (one at or below node level)
  int leaf_index = -1;     ///< GPU index for leaves
  bool at_or_above_node = false;
  int total_leaves = 1;
  int priority = free_priority;
  leaf_state state = leaf_state::free;
  bool healthy = true;
  bool split = false;
  bool pinned = false;
  int vcell = -1;
  int free_pos = -1;  ///< index in its chain's free list at its level, -1 if absent
  int bad_pos = -1;   ///< index in its chain's bad free list at its level, -1 if absent
  group* using_group = nullptr;
  group* reserving_group = nullptr;
  priority_histogram used;
  int view = -1;  ///< index in scheduler_state::views of the view listing this cell, -1 if none
  int slot = -1;  ///< its slot in that view
  int bad_children = 0;  ///< children that are bad (a parent turns healthy at 0: O(1), not a scan)
};

struct vcell {
  int vc = 0;
  int chain = 0;
  int level = 1;
  int parent = -1;
  std::vector<int> children;
  std::string address;
  int preassigned = -1;
  int pcell = -1;
  bool at_or_above_node = false;
  int total_leaves = 1;
  int priority = free_priority;
  priority_histogram used;
  int view = -1;  ///< index in scheduler_state::views of the view listing this cell, -1 if none
  int slot = -1;  ///< its slot in that view
  /// Position among its parent's children, or in its VC's preassigned list (non-pinned roots);
  /// -1 for a pinned root.
  int list_index = -1;
  int bound_children = 0;  ///< children bound to a physical cell
  /// Children before this index are all bound: where the search for the first unbound child
  /// starts (a hint kept by link/unlink, so binding every child of a cell is linear, not
  /// quadratic). Not part of the observable state.
  int first_unbound = 0;
  bool planned = false;  ///< binding_plan: a placement being allocated binds this cell next
};

/// Cell list per level; index 0 unused (levels start at 1).
using level_lists = std::vector<std::vector<int>>;

struct chain_info {
  std::string name;
  std::string leaf_type;
  int top = 1;
  int node_level = 1;                   ///< level of the node-level type
  std::vector<std::string> level_type;  ///< by level
  std::vector<int> level_leaves;        ///< leaves per cell, by level
  std::vector<int> level_children;      ///< children per cell, by level
  level_lists full;
  level_lists free;
  level_lists bad_free;
  std::vector<int> total_left;
  std::vector<int> all_vc_free;
  std::vector<int> all_vc_doomed;
};

/// A topology-aware scheduler's cluster view entry. The sort key is (healthy, suggested,
/// used_same, used_higher); the other fields are cached with it.
struct view_node {
  int cell = -1;
  int free_at_p = 0;
  int used_same = 0;
  int used_higher = 0;
  bool healthy = true;
  bool suggested = true;
  bool dirty = false;  ///< listed in topo_scheduler::dirty
  bool moved = false;  ///< scratch of refresh_view: the key changed
  int physical = -1;   ///< bound physical cell (for the wait reason), -1 if none
  int pos = -1;        ///< index in topo_scheduler::order
};

/// topologyAwareScheduler: a persistent node order over virtual or physical cells.
///
/// hivedscheduler recomputes every node's fields and stably re-sorts the whole view on each
/// call. Here `order` is kept sorted by the cached keys (ties in the order of the previous sort)
/// and a call recomputes only the nodes whose cell changed since (`dirty`: usage, binding or
/// health) and moves the ones whose key changed: the same order a full stable sort of the
/// previous order gives (hived_view.cpp). A full recomputation happens on the first call and
/// whenever the key function changes (suggested nodes that are not all nodes, or another priority
/// for a view that does not pack across priorities).
struct topo_scheduler {
  bool is_virtual = true;
  bool cross_priority_pack = true;
  int chain = 0;
  std::vector<view_node> view;  ///< nodes by slot (build order; never reordered)
  std::vector<int> order;       ///< slots in the current sorted order
  bool sorted = false;          ///< the cached fields and `order` are valid
  int key_at = 0;               ///< priority the cached keys were computed at
  bool key_all_suggested = false;
  std::vector<int> dirty;                ///< slots whose cell changed since the last refresh
  priority_histogram used;               ///< leaves used by priority over all view cells
  std::vector<view_node> moved_scratch;  ///< refresh_view: new fields of the moved nodes
  std::vector<int> order_scratch;        ///< refresh_view: the rewritten range of `order`
};

struct vc_chain {
  std::vector<int> vc_free;  ///< unbound preassigned count, by level
  level_lists full;          ///< non-pinned virtual cells, by level
  level_lists preassigned;   ///< non-pinned preassigned cells, by level
  level_lists doomed;        ///< physical cells doomed bad, by level
  /// By level: preassigned cells before this index are all bound (vcell::first_unbound's hint
  /// for the preassigned list).
  std::vector<int> first_unbound;
  bool has_non_pinned = false;  ///< VC has non-pinned cells in this chain
  std::optional<topo_scheduler> sched;
};

struct pinned_info {
  int chain = 0;
  int pcell = -1;
  int vroot = -1;
  level_lists full;
  topo_scheduler sched;
};

struct vc_info {
  std::string name;
  std::map<int, vc_chain> chains;  ///< by chain index
  std::map<std::string, pinned_info> pinned;
};

/// An allocated pod slot of a group.
struct pod_slot {
  bool present = false;
  std::string pod;
  std::string node;
};

/// leaf number -> pods -> leaves (cell index, -1 = none)
using placement = std::map<int, std::vector<std::vector<int>>>;

struct group {
  std::string name;
  int vc = -1;
  bool lazy_preemption = false;
  bool ignore_suggested = false;
  int priority = 0;
  std::map<int, int> total_pods;
  std::map<int, std::vector<pod_slot>> allocated;
  std::vector<std::string> preempting_pods;
  placement physical;
  std::optional<placement> virt;
  group_state state = group_state::allocated;
};

/// The affinity groups by name. Copying deep-copies the groups; cells of a copied state still
/// point at the originals until scheduler_state::clone() rewires them.
struct group_map : std::map<std::string, std::unique_ptr<group>> {
  group_map() = default;
  group_map(const group_map& other) : std::map<std::string, std::unique_ptr<group>>() {
    for (const auto& [name, g] : other) emplace(name, std::make_unique<group>(*g));
  }
  group_map(group_map&&) noexcept = default;
  group_map& operator=(const group_map&) = delete;
  group_map& operator=(group_map&&) noexcept = default;
  ~group_map() = default;
};

/// Per-call suggested-node membership: sorted node ids, O(k log k) to build for k suggested
/// nodes (never O(cluster)), O(log k) per lookup.
struct node_set {
  bool all = true;
  std::vector<int> ids;
  [[nodiscard]] bool contains(int node) const {
    return all || std::binary_search(ids.begin(), ids.end(), node);
  }
};

/// A vertex of a cell binding path (hivedscheduler cellBindingPathVertex).
struct binding_vertex {
  int cell = -1;  ///< virtual cell
  std::vector<binding_vertex*> children;
};

class scheduler_state {
 public:
  std::vector<pcell> p;
  std::vector<vcell> v;
  std::vector<chain_info> chains;
  std::unordered_map<std::string, int> chain_index;
  std::vector<vc_info> vcs;  ///< ascending name
  std::unordered_map<std::string, int> vc_index;
  std::vector<std::string> node_names;
  std::unordered_map<std::string, int> node_index;
  std::vector<std::vector<int>> node_leaves;  ///< node -> leaf cells (chain order)
  std::vector<char> bad_node;
  std::map<std::string, std::vector<int>> leaf_type_chains;
  std::vector<topo_scheduler> opp;  ///< by chain
  /// Every topology-aware scheduler (opp, VC chains, pinned cells); cells point here by index.
  std::vector<topo_scheduler*> views;
  options opts;
  group_map groups;
  /// group -> the first committed bind record (retrieveMissingPodPlacement)
  std::map<std::string, bind_info> records;
  /// committed pod -> its group (a pod is committed once; derived from the groups' slots).
  std::unordered_map<std::string, std::string> committed_pods;
  /// Returns the leaf of `chain` on `node` with GPU index `index`, -1 if none. O(leaves of node).
  [[nodiscard]] int find_leaf_in_chain(int chain, int node, int index) const {
    for (int c : node_leaves[uz(node)])
      if (p[uz(c)].chain == chain && p[uz(c)].leaf_index == index) return c;
    return -1;
  }
  /// Returns the leaf of GPU `index` on `node`, in `chain` first (-1: none), then in the other
  /// chains (hivedscheduler's findPhysicalLeafCell falls back to them); -1 if none.
  [[nodiscard]] int find_leaf(int chain, int node, int index) const {
    if (chain >= 0) {
      if (int c = find_leaf_in_chain(chain, node, index); c >= 0) return c;
    }
    for (int c : node_leaves[uz(node)])
      if (p[uz(c)].leaf_index == index) return c;
    return -1;
  }

  /// Calls f(topo_scheduler&) for every view in `views` order: opportunistic views by chain, then
  /// per VC (ascending) its chains' views and its pinned cells' views.
  template <typename F>
  void for_each_view(F&& f) {
    for (auto& t : opp) f(t);
    for (auto& vc : vcs) {
      for (auto& [chain, vch] : vc.chains)
        if (vch.sched) f(*vch.sched);
      for (auto& [pid, info] : vc.pinned) f(info.sched);
    }
  }
  /// Returns an independent copy: every cell, list, view (with its cached order and dirty set),
  /// group and bind record, the group pointers of cells and `views` pointing into the copy.
  /// O(cells + groups). Used by what-if queries (hived_what_if.cpp), which must never reach the
  /// original: a pointer field added to this state must be rewired there too (and a mutable
  /// field hashed in hived_digest.cpp).
  [[nodiscard]] std::unique_ptr<scheduler_state> clone() const;

  // hived_cells.cpp: cell bookkeeping
  /// Free and bad-free lists with O(1) membership; removal swaps with the last element.
  void free_push(int c);
  void free_remove(int c);
  void bad_push(int c);
  void bad_remove(int c);
  /// Queues a view cell (no-op for other cells) for recomputation at its view's next refresh.
  void touch_p(int c) { touch(p[uz(c)].view, p[uz(c)].slot); }
  void touch_v(int c) { touch(v[uz(c)].view, v[uz(c)].slot); }
  void touch(int view, int slot) {
    if (view < 0) return;
    topo_scheduler& t = *views[uz(view)];
    view_node& n = t.view[uz(slot)];
    if (n.dirty) return;
    n.dirty = true;
    t.dirty.push_back(slot);
  }
  /// Sets both sides of a binding (vc = -1 or pc = -1 clears the side given).
  void link(int pc, int vc) {
    if (v[uz(vc)].pcell < 0 && v[uz(vc)].parent >= 0) ++v[uz(v[uz(vc)].parent)].bound_children;
    p[uz(pc)].vcell = vc;
    v[uz(vc)].pcell = pc;
    touch_v(vc);
  }
  void unlink(int pc, int vc) {
    if (pc >= 0) p[uz(pc)].vcell = -1;
    if (vc >= 0) {
      if (v[uz(vc)].pcell >= 0) note_unbound(vc);
      v[uz(vc)].pcell = -1;
      touch_v(vc);
    }
  }
  /// Keeps the parent's bound count and the first-unbound hints of `vc`'s list.
  void note_unbound(int vc);
  /// Returns the first unbound child of virtual cell `parent` (children order), -1 if none.
  int unbound_child(int parent);
  /// Returns the first unbound cell of `vch.preassigned[level]` (list order), -1 if none.
  static int unbound_preassigned(const scheduler_state& s, vc_chain& vch, int level);
  void set_priority_p(int c, int prio);
  void set_priority_v(int c, int prio);
  void update_used_p(int c, int prio, int delta);
  void update_used_v(int c, int prio, int delta);
  void bind_cell(int pc, int vc);
  void unbind_cell(int pc);
  [[nodiscard]] bool in_free_cell_list(int c) const;
  [[nodiscard]] int unbound_virtual(const std::vector<int>& cells) const;
  bool allocate_leaf(int pleaf, int vleaf, int prio, int vc, std::string* reason);
  void release_leaf(int pleaf, int vc);
  bool allocate_preassigned(int c, int vc, std::string* reason, bool doomed_bad);
  void release_preassigned(int c, int vc, bool doomed_bad);
  int remove_from_free_list(int c);
  int add_to_free_list(int c);
  void allocate_bad_cell(int c);
  void release_bad_cell(int c);
  void try_bind_doomed(int chain, int level);
  void try_unbind_doomed(int chain, int level);
  void set_bad_cell(int c);
  void set_healthy_cell(int c);
  void add_bad_free_cell(int c);
  void remove_bad_free_cell(int c);
  void set_node_health(int node, bool healthy);

  // hived_buddy.cpp: mapping a virtual placement onto physical cells
  bool map_placement(const std::vector<binding_vertex*>& preassigned,
                     const std::vector<std::vector<binding_vertex*>>& non_preassigned,
                     level_lists& free, std::vector<int>& free_num, const node_set& suggested,
                     bool ignore_suggested, std::unordered_map<int, int>& bindings);

  // hived_topology_aware.cpp
  std::optional<placement> topo_schedule(topo_scheduler& t, const std::map<int, int>& pod_nums,
                                         int prio, const node_set& suggested, bool ignore_suggested,
                                         std::string& reason);
  void build_view(topo_scheduler& t, const level_lists& full);
  /// Returns the `num` cells of `available` (cells of one level of the virtual or physical arena,
  /// in preference order) with the lowest common ancestor, the first best in list order
  /// (findLeafCellsInNode), and removes them from `available`. Stops early at level `optimal`.
  std::vector<int> lowest_lca_cells(bool is_virtual, std::vector<int>& available, int num,
                                    int optimal) const;
  /// Points every view cell at its view (call once all schedulers are in place).
  void register_views();
  /// Brings t's cached fields and order up to date for priority `at` (hivedscheduler's
  /// updateClusterView + stable sort).
  void refresh_view(topo_scheduler& t, int at, const node_set& suggested, bool ignore_suggested);

  [[nodiscard]] bool cell_healthy_v(int vc) const;
};

/// Marks the virtual cells of placements about to be bound leaf by leaf (their leaves and the
/// ancestors up to the preassigned cells) until it goes out of scope. Allocating the first leaf
/// of a preassigned cell may bind bad physical cells to "an unbound virtual sibling" so that the
/// VC sees the failure (set_bad_cell, allocate_bad_cell, try_bind_doomed); without the marks
/// that sibling could be one the placement binds a later leaf to, which then met a virtual cell
/// already bound to the bad cell: the leaf and the bad cell shared one virtual cell, and after a
/// release the VC cell stayed bound at the placement's priority with no group (found by
/// hived_property_test; a preemption cancelled on a rack with a bad node).
class binding_plan {
 public:
  explicit binding_plan(scheduler_state& s) : s_(s) {}
  binding_plan(const binding_plan&) = delete;
  binding_plan& operator=(const binding_plan&) = delete;
  ~binding_plan() {
    for (int c : marked_) s_.v[uz(c)].planned = false;
  }
  /// Marks every virtual leaf of `virt` (-1 entries skipped) and its ancestors.
  void add(const placement& virt) {
    for (const auto& [num, pods] : virt)
      for (const auto& leaves : pods)
        for (int c : leaves)
          for (; c >= 0 && !s_.v[uz(c)].planned; c = s_.v[uz(c)].parent) {
            s_.v[uz(c)].planned = true;
            marked_.push_back(c);
          }
  }

 private:
  scheduler_state& s_;
  std::vector<int> marked_;
};

/// A validated pod request: its group's name and pods per leaf-cell number (hived_requests.cpp).
struct group_request {
  std::string group;
  std::map<int, int> pod_nums;
};
/// hivedscheduler's pod spec checks (ExtractPodSchedulingSpec) with its texts after "[pod]: ".
result<group_request> validate_pod(const pod_request& pod);
/// hivedscheduler's groupVirtualPlacement.String() of `vp` (virtual leaves): Go JSON of
/// preassigned cell address -> leaf addresses, keys sorted, leaf-cell numbers ascending.
std::string virtual_placement_json(const scheduler_state& s, const placement& vp);

/// One group of a constrained request: pod sizes in units (cells of the requested type, or
/// leaves), the within-one-cell level (0 = none) and the child groups (hived_options.cpp).
struct group_node {
  std::string within;  ///< cell type, empty = none
  int within_level = 0;
  std::vector<member_spec> members;  ///< leaf_cells counts units
  std::vector<group_node> children;
  long long units = 0;  ///< units of the whole subtree
};

/// A request after translating the options' fields: `pod` is the equivalent leaf request (child
/// groups flattened into members, sizes in leaves) that validation, bind records and commits use;
/// `root` keeps the constraints for the search (hived_groups.cpp).
struct cell_request {
  pod_request pod;
  std::string cell_type;  ///< empty for a leaf request
  int level = 1;          ///< level of the unit (cell_type, or the leaf level)
  int leaves = 1;         ///< leaves per unit
  group_node root;
  bool constrained = false;  ///< a cell type, a within-one-cell type or child groups
};
/// Validates and translates the options' fields (cell_type, within_one_cell, child_groups); a
/// request without them comes back unchanged with constrained = false.
result<cell_request> translate_cell_type(const scheduler_state& s, const pod_request& pod);

/// The wait reason when a virtual placement cannot be bound onto physical cells.
inline constexpr const char* mapping_failed_reason =
    "Mapping the virtual placement would need to use at least one bad or non-suggested node";
/// Maps a virtual placement of a chain onto physical cells; nullopt if impossible.
using bind_function = std::function<std::optional<placement>(const placement&, int chain)>;
/// Places a constrained request (hived_groups.cpp) of `req.pod` in `chain` (or its pinned cell):
/// searches the VC's virtual cells (guaranteed) or the chain's physical cells (opportunistic)
/// and returns the physical placement of the first layout that binds, `virt` its virtual
/// placement (reset if opportunistic); nullopt with the wait reason in `reason`.
std::optional<placement> place_constrained(scheduler_state& s, const cell_request& req, int vc,
                                           int chain, const node_set& suggested,
                                           const bind_function& bind,
                                           std::optional<placement>& virt, std::string& reason);

/// What add_allocated does with a bind record check_commit accepted: the pod's slot among the
/// group's pods of its leaf count, and the preemptions of lower priority whose Reserved cells
/// the record takes (cancelled first, as a Preempting-phase schedule() would have).
struct commit_plan {
  std::size_t index = 0;
  std::vector<group*> cancel;
};
/// Checks a bind record against the state before add_allocated changes anything
/// (hived_commit.cpp; the rules are documented at scheduler::add_allocated).
result<commit_plan> check_commit(const scheduler_state& s, const pod_request& pod,
                                 const group_request& req, const bind_info& info);

/// options::multi_cell_pods: pods on several below-node VC cells bound to one server; nullopt
/// if impossible. `virt_out` receives the virtual placement.
std::optional<placement> multi_cell_placement(scheduler_state& s, int vc, int chain,
                                              const std::map<int, int>& pod_nums,
                                              const node_set& suggested, bool ignore,
                                              placement& virt_out);

/// What a schedule() run chose, for what-if queries: the group, the pod's slot and the placement
/// (nullopt physical: the pod waits; nullopt virt: opportunistic or lazily preempted).
struct schedule_trace {
  std::string group;
  std::optional<group_state> existing;
  std::optional<placement> physical;
  std::optional<placement> virt;
};

/// scheduler::schedule on `s` (hived_scheduler.cpp); fills `trace` when not null.
result<schedule_result> schedule_in(scheduler_state& s, const pod_request& pod,
                                    const node_filter& nodes, phase ph, schedule_trace* trace);

/// Builds the state from a config (hived_config.cpp).
result<std::unique_ptr<scheduler_state>> build_state(const config& cfg,
                                                     const config_limits& limits);

/// Removes `c` from `list` by swapping with the last element (hivedscheduler CellList.remove).
inline void swap_remove(std::vector<int>& list, int c) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] == c) {
      list[i] = list.back();
      list.pop_back();
      return;
    }
  }
}

inline bool list_contains(const std::vector<int>& list, int c) {
  for (int x : list)
    if (x == c) return true;
  return false;
}

}  // namespace hetsched::hived
