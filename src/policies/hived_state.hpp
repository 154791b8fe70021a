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

/// The fields of a physical cell that scheduling changes (what an undo journal saves and
/// restores; state_journal). A field that schedule(), add_allocated() or a health change writes
/// belongs here, not in pcell: the journal restores exactly this part.
struct pcell_live {
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
  int bad_children = 0;  ///< children that are bad (a parent turns healthy at 0: O(1), not a scan)
};

/// The children of a physical cell: their order is live (the buddy mapping stable-sorts
/// candidate children in place, as hivedscheduler does), journaled apart from pcell_live since
/// few cells have theirs reordered.
struct pcell_children {
  std::vector<int> children;
};

struct pcell : pcell_live, pcell_children {
  int chain = 0;
  int level = 1;
  int parent = -1;
  std::string address;
  std::vector<int> nodes;  ///< node ids (one at or below node level)
  int leaf_index = -1;     ///< GPU index for leaves
  bool at_or_above_node = false;
  int total_leaves = 1;
  int view = -1;  ///< index in scheduler_state::views of the view listing this cell, -1 if none
  int slot = -1;  ///< its slot in that view
};

/// The fields of a virtual cell that scheduling changes (see pcell_live).
struct vcell_live {
  int pcell = -1;
  int priority = free_priority;
  priority_histogram used;
  int bound_children = 0;  ///< children bound to a physical cell
  /// Children before this index are all bound: where the search for the first unbound child
  /// starts (a hint kept by link/unlink, so binding every child of a cell is linear, not
  /// quadratic). Not part of the observable state.
  int first_unbound = 0;
  bool planned = false;  ///< binding_plan: a placement being allocated binds this cell next
};

struct vcell : vcell_live {
  int vc = 0;
  int chain = 0;
  int level = 1;
  int parent = -1;
  std::vector<int> children;
  std::string address;
  int preassigned = -1;
  bool at_or_above_node = false;
  int total_leaves = 1;
  int view = -1;  ///< index in scheduler_state::views of the view listing this cell, -1 if none
  int slot = -1;  ///< its slot in that view
  /// Position among its parent's children, or in its VC's preassigned list (non-pinned roots);
  /// -1 for a pinned root.
  int list_index = -1;
};

/// Saves the live part of cells on their first write while a journal is attached
/// (state_journal): each cell once per journal, O(1) per write.
template <typename Cell, typename Live>
class arena_log {
 public:
  /// Starts a journal over `cells` cells (O(cells) the first time only).
  void open(std::size_t cells) {
    if (stamp_.size() != cells) stamp_.assign(cells, 0);
    if (++epoch_ == 0) {  // wrapped: no stamp may match the new epoch
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
    saved_.clear();
  }
  void save(int c, const Cell& cell) {
    if (stamp_[uz(c)] == epoch_) return;
    stamp_[uz(c)] = epoch_;
    saved_.emplace_back(c, static_cast<const Live&>(cell));
  }
  /// Puts every saved cell back as it was when the journal opened.
  void restore(std::vector<Cell>& cells) {
    for (auto& [c, live] : saved_) static_cast<Live&>(cells[uz(c)]) = std::move(live);
    saved_.clear();
  }
  [[nodiscard]] std::size_t saved() const noexcept { return saved_.size(); }

 private:
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 0;
  std::vector<std::pair<int, Live>> saved_;
};

/// A cell arena: read access is const (operator[]), writes go through mut(c), which saves the
/// cell's live part first while a journal is attached. Copies never carry the journal.
template <typename Cell, typename Live>
class cell_arena {
 public:
  cell_arena() = default;
  cell_arena(const cell_arena& other) : cells_(other.cells_) {}
  cell_arena(cell_arena&&) noexcept = default;
  cell_arena& operator=(const cell_arena& other) {
    cells_ = other.cells_;
    log_ = nullptr;
    return *this;
  }
  cell_arena& operator=(cell_arena&&) noexcept = default;
  ~cell_arena() = default;

  [[nodiscard]] const Cell& operator[](std::size_t i) const { return cells_[i]; }
  /// The cell `c` for writing (journaled).
  Cell& mut(int c) {
    Cell& cell = cells_[uz(c)];
    if (log_ != nullptr) log_->save(c, cell);
    return cell;
  }
  [[nodiscard]] std::size_t size() const noexcept { return cells_.size(); }
  [[nodiscard]] bool empty() const noexcept { return cells_.empty(); }
  [[nodiscard]] auto begin() const noexcept { return cells_.begin(); }
  [[nodiscard]] auto end() const noexcept { return cells_.end(); }
  /// Appends a cell (building the state; never while a journal is attached).
  Cell& emplace_back(Cell c) { return cells_.emplace_back(std::move(c)); }
  void reserve(std::size_t n) { cells_.reserve(n); }
  /// Every cell for writing, unjournaled (building the state, rewiring a clone).
  std::vector<Cell>& raw() noexcept { return cells_; }

  void attach(arena_log<Cell, Live>* log) noexcept { log_ = log; }
  [[nodiscard]] bool journaled() const noexcept { return log_ != nullptr; }

 private:
  std::vector<Cell> cells_;
  arena_log<Cell, Live>* log_ = nullptr;
};

/// Cell list per level; index 0 unused (levels start at 1).
using level_lists = std::vector<std::vector<int>>;

/// The lists and counters of a chain that scheduling changes (see pcell_live).
struct chain_live {
  level_lists free;
  level_lists bad_free;
  std::vector<int> total_left;
  std::vector<int> all_vc_free;
  std::vector<int> all_vc_doomed;
};

struct chain_info : chain_live {
  std::string name;
  std::string leaf_type;
  int top = 1;
  int node_level = 1;                   ///< level of the node-level type
  std::vector<std::string> level_type;  ///< by level
  std::vector<int> level_leaves;        ///< leaves per cell, by level
  std::vector<int> level_children;      ///< children per cell, by level
  level_lists full;
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

/// The fields of a view that scheduling changes (see pcell_live).
struct view_live {
  std::vector<view_node> view;  ///< nodes by slot (build order; never reordered)
  std::vector<int> order;       ///< slots in the current sorted order
  bool sorted = false;          ///< the cached fields and `order` are valid
  int key_at = 0;               ///< priority the cached keys were computed at
  bool key_all_suggested = false;
  std::vector<int> dirty;   ///< slots whose cell changed since the last refresh
  priority_histogram used;  ///< leaves used by priority over all view cells
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
struct topo_scheduler : view_live {
  bool is_virtual = true;
  bool cross_priority_pack = true;
  int chain = 0;
  std::vector<view_node> moved_scratch;  ///< refresh_view: new fields of the moved nodes
  std::vector<int> order_scratch;        ///< refresh_view: the rewritten range of `order`
};

/// The counters and lists of a VC's chain that scheduling changes (see pcell_live).
struct vc_chain_live {
  std::vector<int> vc_free;  ///< unbound preassigned count, by level
  level_lists doomed;        ///< physical cells doomed bad, by level
  /// By level: preassigned cells before this index are all bound (vcell::first_unbound's hint
  /// for the preassigned list).
  std::vector<int> first_unbound;
};

struct vc_chain : vc_chain_live {
  level_lists full;             ///< non-pinned virtual cells, by level
  level_lists preassigned;      ///< non-pinned preassigned cells, by level
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

using physical_cells = cell_arena<pcell, pcell_live>;
using virtual_cells = cell_arena<vcell, vcell_live>;

/// Undo journal of a scheduler_state (hived_journal.cpp). While it is open, every write of the
/// scheduler's mutators (schedule, add/delete_allocated, delete_unallocated, health changes) is
/// recorded before it happens: the live part of each cell and chain written (once), reordered
/// child lists, each VC chain's counters and lists, each view's fields and cached order, the
/// groups created, changed or deleted (deleted groups are kept, so the cells that point at them
/// stay valid), bind records, committed pods and node health. rollback() puts the state back
/// exactly as it was (state_digest() included): O(what was written), never O(state).
/// Writers must go through the hooks: cells through cell_arena::mut (enforced: operator[] is
/// const), the rest through vc_chain_mut, view_mut, children_mut, group_changing, insert_group,
/// erase_group, record_changing, committed_changing and set_node_health.
struct state_journal {
  arena_log<pcell, pcell_live> p;
  arena_log<pcell, pcell_children> p_children;
  arena_log<vcell, vcell_live> v;
  arena_log<chain_info, chain_live> chains;
  struct vc_chain_save {
    int vc = 0;
    int chain = 0;
    bool existed = false;  ///< false: the entry was created while the journal was open
    vc_chain_live live;
    std::size_t full = 0;  ///< sizes of the lists that only ever grow from empty
    std::size_t preassigned = 0;
  };
  std::vector<vc_chain_save> vc_chains;
  std::vector<std::pair<topo_scheduler*, view_live>> views;
  /// Group changes in the order made; rollback replays them backwards.
  struct group_op {
    enum class kind : unsigned char { inserted, erased, changed };
    kind what = kind::changed;
    std::string name;
    std::unique_ptr<group> removed;  ///< erased: the group, kept alive
    group* object = nullptr;         ///< changed: the group
    std::optional<group> before;     ///< changed: its contents before the first change
  };
  std::vector<group_op> groups;
  /// Bind records, committed pods and node health before each write (rollback: backwards).
  std::vector<std::pair<std::string, std::optional<bind_info>>> records;
  std::vector<std::pair<std::string, std::optional<std::string>>> committed;
  std::vector<std::pair<int, char>> bad_node;
  bool open = false;
};

/// Holds a scheduler_state's journal; a copy of the state starts without one.
class journal_slot {
 public:
  journal_slot() = default;
  journal_slot(const journal_slot&) {}
  journal_slot(journal_slot&&) noexcept = default;
  journal_slot& operator=(const journal_slot&) = delete;
  journal_slot& operator=(journal_slot&&) noexcept = default;
  ~journal_slot() = default;
  [[nodiscard]] state_journal* get() const noexcept { return j_.get(); }
  state_journal& make() {
    if (!j_) j_ = std::make_unique<state_journal>();
    return *j_;
  }

 private:
  std::unique_ptr<state_journal> j_;
};

class scheduler_state {
 public:
  physical_cells p;
  virtual_cells v;
  cell_arena<chain_info, chain_live> chains;
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
  /// O(cells + groups). Used by const what-if queries (hived_what_if.cpp), which must never
  /// reach the original: a pointer field added to this state must be rewired there too (and a
  /// mutable field hashed in hived_digest.cpp and kept in a *_live part for the journal).
  [[nodiscard]] std::unique_ptr<scheduler_state> clone() const;

  // hived_journal.cpp: the undo journal (state_journal)
  journal_slot journal;
  /// Opens the journal: from now on writes are recorded. Errors (assert): already open.
  void open_journal();
  /// Undoes every write since open_journal() and closes the journal.
  void rollback();
  [[nodiscard]] bool journaling() const noexcept {
    return journal.get() != nullptr && journal.get()->open;
  }
  /// The children of physical cell `c` for reordering (journaled).
  std::vector<int>& children_mut(int c);
  /// A VC's chain for writing (journaled; created if missing, as map::operator[] does).
  vc_chain& vc_chain_mut(int vc, int chain);
  /// A view for writing (journaled).
  topo_scheduler& view_mut(topo_scheduler& t);
  /// Records that `g` is about to change (journaled; no-op without a journal).
  void group_changing(group& g);
  /// Adds a group (journaled).
  group& insert_group(std::unique_ptr<group> g);
  /// Removes the group `name` (journaled: kept alive for the rollback).
  void erase_group(const std::string& name);
  /// Records the bind record of group `name` / the committed entry of pod `name` before a write.
  void record_changing(const std::string& name);
  void committed_changing(const std::string& name);

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
    if (views[uz(view)]->view[uz(slot)].dirty) return;
    topo_scheduler& t = view_mut(*views[uz(view)]);
    t.view[uz(slot)].dirty = true;
    t.dirty.push_back(slot);
  }
  /// Sets both sides of a binding (vc = -1 or pc = -1 clears the side given).
  void link(int pc, int vc) {
    if (v[uz(vc)].pcell < 0 && v[uz(vc)].parent >= 0) ++v.mut(v[uz(vc)].parent).bound_children;
    p.mut(pc).vcell = vc;
    v.mut(vc).pcell = pc;
    touch_v(vc);
  }
  void unlink(int pc, int vc) {
    if (pc >= 0) p.mut(pc).vcell = -1;
    if (vc >= 0) {
      if (v[uz(vc)].pcell >= 0) note_unbound(vc);
      v.mut(vc).pcell = -1;
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
    for (int c : marked_) s_.v.mut(c).planned = false;
  }
  /// Marks every virtual leaf of `virt` (-1 entries skipped) and its ancestors.
  void add(const placement& virt) {
    for (const auto& [num, pods] : virt)
      for (const auto& leaves : pods)
        for (int c : leaves)
          for (; c >= 0 && !s_.v[uz(c)].planned; c = s_.v[uz(c)].parent) {
            s_.v.mut(c).planned = true;
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
