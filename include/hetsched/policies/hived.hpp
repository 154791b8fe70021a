// SPDX-License-Identifier: MIT
// HiveD's buddy-cell allocator, decision-compatible with microsoft/hivedscheduler (master).
//
// hived::scheduler keeps the physical cell chains (free lists per chain and level, buddy split
// and merge), every VC's virtual cells with lazy binding, affinity groups (gangs), priorities,
// preemption state and node health. The API is the Kubernetes-extender split: schedule()
// decides (Filtering never creates preemption state; Preempting may, and both may lazy-preempt
// as hivedscheduler does), add_allocated() commits a bind record, delete_allocated() and
// delete_unallocated() release; replaying bind records rebuilds the state (recovery).
// what_if() answers what schedule() would return and do (placement, victims, lazy preemptions,
// preemption state) without changing anything.
//
// Determinism (where hivedscheduler follows Go map order, this class fixes an order):
// - VCs are visited in ascending name order (doomed-bad binding and unbinding).
// - Chains of a leaf type: options::chain_order, else descending chain name.
// - An empty leaf type tries leaf types in ascending name order.
// - Group members are handled in ascending leaf-cell-number order.
// - Health updates visit chains in order of first appearance in physical_cells.
// - Free lists keep hivedscheduler's discipline: removal swaps with the last element, splitting
//   and merging append, safe relaxed splitting prepends; candidate lists are stable-sorted by
//   opportunistic use in place (hivedscheduler sorts the candidate slice, not the returned
//   usable list, so the sort reorders lists without changing the current answer).
// - Cluster views keep the order of their previous stable sort (healthy, suggested, more used
//   leaves, fewer higher-priority leaves), starting from config order.
// - Victims are reported for every node (hivedscheduler returns one random node's victims).
// - Cell-type and within-one-cell groups (options::cell_type_requests) are placed by a
//   backtracking search: groups in preorder; a group's cell among those of its within type with
//   room, fewest remaining units first, then level-list order; a pod's node fewest remaining
//   units first, then view build order; units inside a node by lowest common ancestor, free
//   before preemptible, then tree order. The first layout that binds wins (docs/hived.md).
// - Lazy preemptions that a failed mapping reverts are undone in the order they were made
//   (hivedscheduler iterates a Go map).
//
// @see HiveD: Zhao et al., OSDI'20; microsoft/hivedscheduler pkg/algorithm; docs/hived.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/hived_config.hpp>

namespace hetsched::hived {

/// Guaranteed priorities are 0..max_guaranteed_priority; -1 is opportunistic.
inline constexpr int max_guaranteed_priority = 1000;
inline constexpr int opportunistic_priority = -1;

/// The extender phase of a schedule() call.
enum class phase : unsigned char { filtering, preempting };

/// One gang member: `pods` pods of `leaf_cells` leaves each.
struct member_spec {
  int pods = 1;
  int leaf_cells = 1;
};

/// A child group of a hierarchical group (options::cell_type_requests; the v2 API's
/// childGroups): its own members, the cell type every pod of the child group (its own and its
/// descendants') must sit inside one cell of (empty = no constraint beyond its parent's), and its
/// own child groups. Member sizes count cells of pod_request::cell_type when it is set.
struct group_spec {
  std::vector<member_spec> members;
  std::string within_one_cell;
  std::vector<group_spec> child_groups;
};

/// A pod's scheduling spec (hivedscheduler PodSchedulingSpec) plus its name.
///
/// With options::cell_type_requests (the unmerged v2 API) a request may constrain its group:
/// - cell_type: every pod gets whole cells of that non-leaf type (at or below the node level),
///   found by the search among cells of that type (never a leaf request checked afterwards).
/// - within_one_cell: the whole group sits inside one cell of that type.
/// - child_groups: the group is a tree; the group's own pods are `members` (empty members with
///   child groups = no own pods), each child group's pods sit inside one cell of its
///   within_one_cell type, inside the cell of the nearest enclosing group that has one.
/// The group is placed all at once by an exhaustive, deterministic search (docs/hived.md,
/// "Options"); the bind record lists pods by leaf count in group-tree preorder (a group's own
/// members in order, then its child groups), and a pod takes the next free slot of its size.
/// Spec errors (invalid_argument/not_found, nothing changed): unknown type, cell type above the
/// node level, a within type below the cell type or smaller than a pod or than its group, a child
/// group's within type above its enclosing group's, a child group without pods, a group larger
/// than the cluster.
struct pod_request {
  std::string name;
  std::string vc;
  int priority = 0;
  std::string pinned_cell;  ///< empty = none
  std::string leaf_type;    ///< empty = any leaf type
  int leaf_cells = 1;
  std::string group;                 ///< empty = a one-pod group named after the pod
  std::vector<member_spec> members;  ///< empty = one member {1, leaf_cells}
  bool lazy_preemption = false;
  /// A non-leaf cell type to request instead of leaves (options::cell_type_requests, the v2
  /// "cell as SKU" API): leaf_cells and every member's leaf_cells (child groups' too) then count
  /// cells of this type, and each pod gets whole cells of it.
  std::string cell_type;
  /// With options::cell_type_requests: the whole group must sit inside one cell of this type
  /// (the v2 API's withinOneCell); empty = no constraint.
  std::string within_one_cell;
  /// With options::cell_type_requests: the group's child groups (v2 childGroups); empty = flat.
  std::vector<group_spec> child_groups;
  /// hivedscheduler's ignoreK8sSuggestedNodes, which defaults to true there as here.
  bool ignore_suggested_nodes = true;
};

/// Placement of one pod: node, physical leaf indices, and the preassigned cell type of each leaf
/// (empty string = opportunistic).
struct pod_placement {
  std::string node;
  std::vector<int> leaf_cells;
  std::vector<std::string> preassigned_types;
  friend bool operator==(const pod_placement&, const pod_placement&) = default;
};

/// The bind record (hivedscheduler PodBindInfo): the pod's node and leaves, the chain, and the
/// placement of every pod of the group by leaf-cell number.
struct bind_info {
  std::string node;
  std::vector<int> leaf_cells;
  std::string chain;
  std::map<int, std::vector<pod_placement>> group_placements;
  friend bool operator==(const bind_info&, const bind_info&) = default;
};

/// The nodes Kubernetes suggests (its filter result); all = every node.
struct node_filter {
  bool all = true;
  std::vector<std::string> nodes;
};

enum class outcome : unsigned char { bind, preempt, wait };

/// A schedule() answer: bind (with the bind record), preempt (victim pods by node) or wait.
struct schedule_result {
  outcome kind = outcome::wait;
  bind_info bind;
  std::map<std::string, std::vector<std::string>> victims_by_node;
  std::string wait_reason;
  friend bool operator==(const schedule_result&, const schedule_result&) = default;
};

enum class group_state : unsigned char { allocated, preempting, being_preempted };

/// An affinity group's state; physical_placement maps node -> leaf indices (placement order).
struct group_status {
  group_state state = group_state::allocated;
  bool virtual_placement_dropped = false;
  std::map<std::string, std::vector<int>> physical_placement;
};

/// A virtual cell's priority (-2 free) and health (bad when bound to a bad physical cell).
struct vc_cell_status {
  std::string address;
  int priority = -2;
  bool healthy = true;
  std::string bound_to;  ///< physical address, empty if unbound
};

/// A cell as configured (for inspection): full address, type, chain, level; physical cells list
/// their node names (cell order), node-level cells their leaf GPU indices in tree order, virtual
/// cells their VC and, for a pinned cell's root, its pinned id.
struct cell_info {
  std::string address;
  std::string type;
  std::string chain;
  int level = 0;
  std::vector<std::string> nodes;
  std::vector<int> leaf_indices;
  std::string vc;
  std::string pinned_id;
};

/// One pod of a group as a what-if places it (schedule()'s placement, bind or preempt).
struct what_if_pod {
  int leaf_cells = 0;  ///< leaves per pod of its member (the group_placements key)
  int index = 0;       ///< pod index within that member
  std::string node;
  std::vector<int> leaf_indices;               ///< GPU indices, in placement order
  std::vector<std::string> physical_cells;     ///< physical leaf cell addresses, same order
  std::vector<std::string> virtual_cells;      ///< VC leaf cell addresses ("" if opportunistic)
  std::vector<std::string> preassigned_types;  ///< as pod_placement ("" if opportunistic)
  friend bool operator==(const what_if_pod&, const what_if_pod&) = default;
};

/// A pod that schedule() would name as a victim, with its group as it stands now.
struct what_if_victim {
  std::string pod;
  std::string node;
  std::string group;
  std::string vc;
  int priority = 0;  ///< the victim group's priority; opportunistic_priority for opportunistic
  bool guaranteed_placement = true;  ///< false: opportunistic or lazily preempted already
  friend bool operator==(const what_if_victim&, const what_if_victim&) = default;
};

/// The answer of scheduler::what_if(): what schedule() would return and do, with details.
struct what_if_answer {
  schedule_result decision;  ///< exactly what schedule() with the same arguments returns now
  std::string group;         ///< the pod's affinity group
  /// The group's state now; nullopt if schedule() would create the group.
  std::optional<group_state> existing_group;
  std::string chain;  ///< chain of the placement; empty on wait
  /// Every pod of the group, members by ascending leaf count then pod index; empty on wait. On
  /// preempt: where the group goes once the victims are gone.
  std::vector<what_if_pod> pods;
  /// decision.victims_by_node with each victim's group: nodes ascending, pods ascending.
  std::vector<what_if_victim> victims;
  /// Groups whose guaranteed (virtual) placement schedule() drops by lazy preemption: their pods
  /// keep running as opportunistic. Ascending.
  std::vector<std::string> lazy_preempted_groups;
  /// Preempting groups whose reservation schedule() deletes (preempting phase: reservations
  /// overlapping the new placement, or this group's own on a bad or non-suggested node).
  /// Ascending.
  std::vector<std::string> cancelled_preemptions;
  /// schedule() records the group as preempting (preempting phase, victims, new group).
  bool starts_preemption = false;
  friend bool operator==(const what_if_answer&, const what_if_answer&) = default;
};

class scheduler_state;

/// The HiveD allocator. Not internally synchronized.
class scheduler {
 public:
  /// Builds the cells from `cfg`; every node starts bad (call set_node_healthy or
  /// mark_all_nodes_healthy). Errors: invalid_argument naming the offending type, cell, VC or
  /// pinned id; failed_precondition "Illegal initial VC assignment: ..." (hivedscheduler's text);
  /// out_of_range naming the type or cell that exceeds a bound of `limits` (chain levels, leaf
  /// cells, cells). Time and memory are linear in the cells of the config; no recursion deeper
  /// than limits.max_levels.
  [[nodiscard]] static result<scheduler> create(const config& cfg,
                                                const config_limits& limits = {});

  scheduler(scheduler&&) noexcept;
  scheduler& operator=(scheduler&&) noexcept;
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  ~scheduler();

  /// Returns bind, preempt or wait for `pod`. Errors (invalid_argument/not_found, no state
  /// changed): unknown VC, unknown pinned cell, leaf type absent, priority out of range, member
  /// mismatch, more pods than declared.
  [[nodiscard]] result<schedule_result> schedule(const pod_request& pod, const node_filter& nodes,
                                                 phase ph);
  /// Commits a bound pod from its bind record (AddAllocatedPod): a schedule() bind answer, or a
  /// record replayed after a restart (recovery, reconfiguration). A record commits only cells
  /// that are free for it; every check runs before anything changes, so a refused record leaves
  /// the state (state_digest()) as it was. hivedscheduler checks none of this (its
  /// AddAllocatedPod trusts Kubernetes and overwrites a cell's using group, so two groups
  /// ended up Allocated on the same GPUs). The rules:
  /// - A pod is committed once: already_exists "[p]: pod is already committed (group g)".
  /// - The record must list the pod's own placement (node and leaf_cells) among its group's
  ///   placements (not_found "Pod placement not found ..."), match the pod's members (pods per
  ///   leaf count, each placement of that many leaves) and name no GPU twice (invalid_argument).
  /// - A new group: every GPU of the record that the config knows must be free. A GPU used by
  ///   another group, guaranteed or opportunistic, or reserved by a preemption of equal or higher
  ///   priority, is refused: failed_precondition "[p]: GPU 0 of node n0 is held by group g1 (pods
  ///   p1; priority 1); ..." naming the holder and its pods. HiveD takes cells from a running
  ///   group only through schedule(): its pods become victims (preempt answer) and the preemptor
  ///   binds once they are deleted; a commit never evicts a running pod, so a replayed record
  ///   over an opportunistic group's cells is refused too (the opportunistic pod is still
  ///   running there). A GPU that is only Reserved (victims gone) by a preemption of lower
  ///   priority is taken: that preemption is cancelled first, as a Preempting-phase schedule()
  ///   would have done (a Filtering-phase bind may land on such cells).
  /// - A pod of an existing group: the record's placement of the pod must be the group's
  ///   (invalid_argument "bind info does not match group g ..."), its slot not yet committed by
  ///   another pod (already_exists "... is already committed by pod q"), and a preempting
  ///   group's victims must be gone (failed_precondition "group g is still preempting: GPU ... is
  ///   held by group v ...").
  /// - hivedscheduler's replay rules stay (docs/hived.md "Reconfiguration"): GPUs the config no
  ///   longer has are ignored; a VC cell the record needs that another group of the VC uses (the
  ///   VC shrank) lazy-preempts that group (it keeps running on its own GPUs as opportunistic);
  ///   a record that no longer fits the VC runs as opportunistic. Neither books a GPU twice.
  [[nodiscard]] result<void> add_allocated(const pod_request& pod, const bind_info& info);
  /// Releases a bound pod (DeleteAllocatedPod); the group goes when all its pods are gone.
  /// Errors (nothing changed): not_found for an unknown group or a record whose placement is not
  /// a committed slot of this pod ("[p]: pod is not committed at node n leaf cells ... of group
  /// g (pod q is)").
  [[nodiscard]] result<void> delete_allocated(const pod_request& pod, const bind_info& info);
  /// Forgets an unbound pod (DeleteUnallocatedPod); cancels a preemption with no pod left.
  void delete_unallocated(const pod_request& pod);

  /// Returns what schedule(pod, nodes, ph) would answer and do now, leaving the state as it was
  /// (not even cached orders change; state_digest() is the same): the decision, the placement
  /// of every pod of the group (nodes, GPU indices, physical and virtual cells, chain), the
  /// victims with their groups, the lazy preemptions (ascending group name) and the preemption
  /// state it would create or cancel (ascending), or the wait reason. Errors: those of
  /// schedule(). It runs schedule() on this state under an undo journal and rolls it back, so it
  /// costs what schedule() writes, not O(state); being a write and a restore, it is not const
  /// and not for concurrent use (what_if_on_copy is). Inside a trial it answers on a copy.
  [[nodiscard]] result<what_if_answer> what_if(const pod_request& pod, const node_filter& nodes,
                                               phase ph);
  /// what_if() on a copy of the allocator: the same answer, O(state), safe for concurrent const
  /// readers.
  [[nodiscard]] result<what_if_answer> what_if_on_copy(const pod_request& pod,
                                                       const node_filter& nodes, phase ph) const;

  /// Undoes, when it goes out of scope, every change made to the allocator since it was made:
  /// schedule(), add_allocated(), delete_allocated(), delete_unallocated() and health changes
  /// (an undo journal: it costs what the calls wrote, not O(state); state_digest() afterwards
  /// is the one before). For asking what a sequence of calls would do, as hived_placement's
  /// what-if does with its filtering and preempting calls. One trial at a time per scheduler
  /// (nesting asserts); the scheduler must outlive it and stay in place (not moved from).
  class trial {
   public:
    explicit trial(scheduler& s);
    ~trial();
    trial(const trial&) = delete;
    trial& operator=(const trial&) = delete;
    trial(trial&&) = delete;
    trial& operator=(trial&&) = delete;

   private:
    scheduler_state* s_;
  };
  /// Returns an independent copy of the allocator: same configuration, cells, groups, bind
  /// records, preemption state and cached orders, so any sequence of calls on it answers as on
  /// this one (what a caller needs to ask "what would these calls do" exactly). O(state).
  [[nodiscard]] scheduler copy() const;
  /// Returns a digest of the whole allocator state: cells (priority, use, binding, health, child
  /// order), free and bad-free lists, VC cells, views with their cached order, groups and bind
  /// records. Equal states give equal digests; for checking that a call changed nothing.
  /// O(state). The configuration (options, names) is not part of it.
  [[nodiscard]] std::uint64_t state_digest() const;

  /// Marks a node bad (NotReady or deleted) or healthy. Unknown names are ignored.
  void set_node_bad(const std::string& node);
  void set_node_healthy(const std::string& node);
  /// Marks every configured node healthy: chains in config order, top cells in order, nodes in
  /// cell order (the order hivedscheduler's tests use).
  void mark_all_nodes_healthy();

  /// Returns the group's state, or nullopt if it does not exist.
  [[nodiscard]] std::optional<group_status> group(const std::string& name) const;
  /// Returns the VC's non-pinned preassigned cells of `chain` at `level`, in address order.
  [[nodiscard]] std::vector<vc_cell_status> vc_cells(const std::string& vc,
                                                     const std::string& chain, int level) const;
  /// Returns every non-pinned preassigned cell of the VC (chains in config order, then level).
  [[nodiscard]] std::vector<vc_cell_status> vc_cells_all(const std::string& vc) const;
  /// Returns the free list of `chain` at `level` as physical addresses, in list order.
  [[nodiscard]] std::vector<std::string> free_list(const std::string& chain, int level) const;
  /// Returns every node name, in first-appearance order.
  [[nodiscard]] std::vector<std::string> nodes() const;
  /// Returns the top-level physical cells: chains in order of first appearance, cells in config
  /// order within a chain.
  [[nodiscard]] std::vector<cell_info> top_level_cells() const;
  /// Returns the pinned physical cells (VCs ascending, pinned ids ascending), with pinned_id/vc.
  [[nodiscard]] std::vector<cell_info> pinned_physical_cells() const;
  /// Returns every node-level physical cell (chains in order of first appearance, then config
  /// order) with its node and its leaves' GPU indices in tree order.
  [[nodiscard]] std::vector<cell_info> node_level_cells() const;
  /// Returns every VC's preassigned virtual cells: VCs ascending; non-pinned cells by chain
  /// (order of first appearance), level and address, then pinned cells' roots by pinned id.
  [[nodiscard]] std::vector<cell_info> vc_preassigned_cells() const;
  /// Returns the chain's count of free (unused) cells by level (index 0 unused; empty if the
  /// chain is unknown): hivedscheduler's totalLeftCellNum.
  [[nodiscard]] std::vector<int> total_left_cells(const std::string& chain) const;
  /// Returns the chain's count of unbound VC preassigned cells over all VCs by level (index 0
  /// unused; empty if the chain is unknown): hivedscheduler's allVCFreeCellNum.
  [[nodiscard]] std::vector<int> all_vc_free_cells(const std::string& chain) const;

 private:
  explicit scheduler(std::unique_ptr<scheduler_state> s);
  std::unique_ptr<scheduler_state> s_;
};

}  // namespace hetsched::hived
