// SPDX-License-Identifier: MIT
// Private helpers shared by the capacity_*.cpp files: flavor assignment, fit checks and the
// victim search used by admission cycles, preemption plans and what-if.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched::capacity_detail {

using use_list = std::vector<std::pair<std::uint32_t, std::int64_t>>;

enum class fit_mode : std::uint8_t { fit, preempt, never };

/// A flavor choice for a pending workload.
struct assignment {
  fit_mode mode = fit_mode::never;
  std::uint32_t flavor = 0;
  use_list use;
  bool borrowing = false;  ///< Admitting it puts its queue above nominal in some fr.
};

/// Returns the (fr, amount) list of `request` in `flavor` for queue q, or nullopt when the queue
/// does not declare some requested resource in that flavor.
[[nodiscard]] std::optional<use_list> resolve_use(const capacity_tree& tree, queue_id q,
                                                  std::uint32_t flavor, const drf_vector& request);

/// Returns true if `use` fits queue q under `usage`; without borrowing, also within nominal.
[[nodiscard]] bool fits(const capacity_tree& tree, const capacity_usage& usage, queue_id q,
                        const use_list& use, bool allow_borrowing);

/// Returns true if usage(q) + use exceeds q's nominal quota in some fr.
[[nodiscard]] bool borrows_with(const capacity_tree& tree, const capacity_usage& usage, queue_id q,
                                const use_list& use);

/// Chooses a flavor: the first allowed flavor (queue preference order) where `w` fits; else the
/// first where every amount is within potential_available (mode preempt); else never (flavor
/// = the first flavor declaring every resource).
[[nodiscard]] assignment assign_flavor(const capacity_tree& tree, const capacity_usage& usage,
                                       const pending_workload& w);

/// Returns a message saying why `w` does not fit with `a` (no fit now, or never).
[[nodiscard]] std::string explain_no_fit(const capacity_tree& tree, const capacity_usage& usage,
                                         const pending_workload& w, const assignment& a);

/// True for the orders whose head blocks the queue when it waits (strict_fifo, strict_priority).
[[nodiscard]] inline bool strict_order(queue_order o) noexcept {
  return o == queue_order::strict_fifo || o == queue_order::strict_priority;
}

/// The deferral message of a workload behind `head`, the waiting head of strict queue q.
[[nodiscard]] std::string behind_head_message(const capacity_tree& tree, queue_id q, job_id head);

/// The deferral message of a workload whose victims (n > 0) have not terminated yet.
[[nodiscard]] std::string victims_in_flight_message(std::size_t n);

/// The weight of user `u` in a YARN user-limit spec (1 when not listed).
[[nodiscard]] double user_weight(const yarn_user_limit_spec& ul, tenant_id u);

/// The YARN user-limit check of the admission cycle: returns an empty string if w's tenant,
/// whose usage in w.queue is `tenant_use` (per fr, empty for none), stays within its user limit
/// with `use` added (used + amount <= limit * weight, exact) under the queue usage `usage`,
/// else the deferral message "user limit of tenant T in queue 'Q' reached for R@F (used +
/// amount > limit)". Always empty for a queue without a user limit.
[[nodiscard]] std::string user_limit_violation(const capacity_tree& tree,
                                               const capacity_usage& usage,
                                               const pending_workload& w, const use_list& use,
                                               const std::vector<std::int64_t>& tenant_use,
                                               double active_weight);

/// A preemption candidate: an admitted workload slot.
struct candidate {  // 40 bytes: the 32-bit fields first, no padding
  std::uint32_t slot = 0;
  queue_id queue;
  std::int32_t priority = 0;
  job_id job;
  std::int64_t admitted_at = 0;
  std::uint64_t fr_mask = 0;    ///< The slot's admitted_rec::fr_mask.
  std::int64_t order_time = 0;  ///< The slot's admitted_rec::order_time.
};

/// Kueue's CandidatesOrdering: true if x goes before y for preemptor queue q.
[[nodiscard]] inline bool candidate_before(const candidate& x, const candidate& y, queue_id q) {
  const bool x_own = x.queue == q;
  const bool y_own = y.queue == q;
  if (x_own != y_own) return !x_own;
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.admitted_at != y.admitted_at) return x.admitted_at > y.admitted_at;
  return x.job < y.job;
}

/// Which admitted slots are candidates of one victim search (Kueue's candidate rules). Own
/// queue: lower priority, or equal priority with a queue-order time (candidate::order_time)
/// after the preemptor's submit time when own_same_prio. Other queues: lower priority when
/// only_lower, admitted at least min_runtime ago, below other_below when set (classic
/// borrowWithinCohort). All: not in flight, not excluded, using a contested fr.
struct eligibility {
  queue_id own;
  std::int32_t priority = 0;
  std::int64_t submit = 0;
  bool own_same_prio = false;
  bool only_lower = false;
  std::optional<std::int32_t> other_below;
  std::int64_t min_runtime = 0;
  std::int64_t now = 0;
  std::uint64_t need_mask = 0;
  const std::vector<std::uint32_t>* frs_need = nullptr;  ///< Checked when fr_count() > 64.
  const std::vector<char>* excluded = nullptr;
};

/// Per search state (shared by the heads of one cycle) of the candidate index: each queue's
/// admitted slots not in flight, sorted by (priority asc, admitted_at desc, job id asc), which is
/// candidate_before restricted to one queue and so the same for every preemptor. Built lazily per
/// queue on first use, with the options and exclusions of that moment; valid while the state's
/// slots do not change (one plan_admission, plan_preemption or what_if call).
struct candidate_index {
  std::vector<char> ready;                ///< Per node: its range is built.
  std::vector<std::uint32_t> begin, end;  ///< Per node: its range in items.
  std::vector<candidate> items;
  /// Per node: its priority levels [level_begin, level_end) in level_prio / level_cum. Level
  /// l's level_cum (fr_count() values) sums the use of every slot of that queue at levels <= l
  /// that may be a victim of another queue (not excluded, admitted at least min_runtime ago):
  /// the bound of what a search may free in that queue (necessary-condition check).
  std::vector<std::uint32_t> level_begin, level_end;
  std::vector<std::int32_t> level_prio;
  std::vector<std::int64_t> level_cum;
  std::vector<char> counted;           ///< Per slot: its use is in level_cum.
  std::vector<std::uint32_t> version;  ///< Per node: bumped when exclude_slot changes its range.
};

struct ordering_scratch;
struct borrowers_entry;

/// The candidates of one victim search grouped by queue, each group in candidate_before order,
/// with cursors: either a lazily filtered view of the scratch's candidate_index (no per-search
/// copy or sort) or an explicit list (bucketed and sorted). Creating one bumps the scratch stamp:
/// only the latest candidate_lists of a scratch may be used.
class candidate_lists {
 public:
  /// The candidates of `e` in `queues` (each given once), from the index (built as needed),
  /// then in the queues of `others` other than e.own (not in `queues`), whose first candidates
  /// ignoring the priority rules are cached in the entry.
  candidate_lists(ordering_scratch& s, const capacity_state& state, const eligibility& e,
                  const std::vector<queue_id>& queues, borrowers_entry* others = nullptr);
  /// The candidates of `list`.
  candidate_lists(ordering_scratch& s, const std::vector<candidate>& list);

  [[nodiscard]] std::uint32_t stamp() const noexcept { return st_; }
  /// The queues that had a candidate when created.
  [[nodiscard]] const std::vector<std::uint32_t>& queues() const noexcept;
  [[nodiscard]] bool has(queue_id x) const;
  /// The next candidate of queue x (has(x) must hold).
  [[nodiscard]] const candidate& front(queue_id x) const;
  candidate pop(queue_id x);
  /// Calls fn(c) for each candidate of queue x not popped yet, in order.
  template <typename Fn>
  void for_each_remaining(queue_id x, Fn fn) const;
  /// True if c (of the index) is a candidate under this view's rules.
  [[nodiscard]] bool eligible(const candidate& c) const;

 private:
  void skip(std::uint32_t x);
  [[nodiscard]] bool uses_contested(const candidate& c) const;  ///< fr_count() > 64 only.
  /// eligible(c) for a candidate of another queue than e.own, without the priority rules.
  [[nodiscard]] bool eligible_ignoring_priority(const candidate& c) const;

  ordering_scratch& s_;
  const capacity_state* state_ = nullptr;
  const eligibility* e_ = nullptr;  ///< Null for an explicit list.
  const std::vector<candidate>* arr_ = nullptr;
  std::uint32_t st_ = 0;
  bool wide_ = false;  ///< fr_count() > 64: fr_mask is not exact.
};

/// The borrowers of a root in the contested frs of a need mask (at the starting usage), with
/// each one's first candidate in the index for that mask when the priority rules are ignored
/// (the same for every preemptor of another queue: only exclusions change it).
struct borrowers_entry {
  queue_id root;
  std::uint64_t need_mask = 0;
  std::vector<queue_id> queues;  ///< borrowers of `root` with borrow_mask & need_mask != 0.
  /// Per queues[i]: that first candidate's position in index.items (index.end when none),
  /// valid while first_version[i] == index.version[queue] + 1 (0: not computed).
  std::vector<std::uint32_t> first, first_version;
};

/// Reusable buffers of victim searches (sized to the tree on use). One scratch may be reused
/// only by searches that start from the same usage and options (the heads of one admission
/// cycle): the per-node DRS at that usage, the borrowing masks and the candidate index are
/// computed once and shared. Exclusions made between searches must be reported with
/// exclude_slot().
struct ordering_scratch {
  std::uint32_t stamp = 0;  ///< Bumped per candidate_lists; entries of older stamps are stale.
  std::vector<std::uint32_t> pruned, on_path, live_stamp, bucket_stamp, cache_stamp;
  std::vector<std::uint32_t> begin, cur, end, live, cache_version, queues;
  std::vector<drs_value> cache;
  std::vector<candidate> explicit_items;  ///< Explicit candidate_lists, bucketed by queue.
  std::vector<queue_id> search_queues;    ///< The candidate queues of the current search.
  std::vector<char> base_ready;  ///< Per node: base[n] holds its DRS at the starting usage.
  std::vector<drs_value> base;   ///< DRS at the starting usage (node version 0).
  /// Per cohort: the last scan of its children (valid while scan_stamp is the ordering's stamp
  /// and scan_version its node version): best queue, best cohort, and whether to descend.
  std::vector<std::uint32_t> scan_stamp, scan_version;
  std::vector<queue_id> scan_q, scan_c;
  std::vector<char> scan_c_first;
  bool masks_ready = false;                ///< borrow_mask is computed (fr_count() <= 64 only).
  std::vector<std::uint64_t> borrow_mask;  ///< Per queue: bit f when it borrows fr f.
  std::vector<queue_id> borrowers;         ///< Queues with a non-zero borrow_mask, in id order.
  std::vector<borrowers_entry> borrowers_by_need;
  /// All-zero between searches: lent to a fair search as its node_version; `versioned` lists
  /// the entries that search bumped (reset on return).
  std::vector<std::uint32_t> node_version, versioned;
  /// Per node * fr_count(): usage deltas staged by stage_slot() and not applied yet (all-zero
  /// between flushes); staged_queues lists the queues with a staged delta once each (marked in
  /// staged_listed).
  std::vector<std::int64_t> staged;
  std::vector<std::uint32_t> staged_queues;
  std::vector<char> staged_listed;
  candidate_index index;

  /// Sizes the per-node buffers to `tree` (clears them when the size changes).
  void prepare(const capacity_tree& tree, std::size_t slot_count);
};

inline const std::vector<std::uint32_t>& candidate_lists::queues() const noexcept {
  return s_.queues;
}
inline bool candidate_lists::has(queue_id x) const {
  return s_.bucket_stamp[x.value()] == st_ && s_.cur[x.value()] < s_.end[x.value()];
}
inline const candidate& candidate_lists::front(queue_id x) const {
  return (*arr_)[s_.cur[x.value()]];
}
inline bool candidate_lists::eligible_ignoring_priority(const candidate& c) const {
  const eligibility& e = *e_;
  if (e.excluded != nullptr && c.slot < e.excluded->size() && (*e.excluded)[c.slot] != 0)
    return false;
  if ((c.fr_mask & e.need_mask) == 0) return false;
  if (wide_ && !uses_contested(c)) return false;
  return !(e.min_runtime > 0 && e.now - c.admitted_at < e.min_runtime);
}
inline bool candidate_lists::eligible(const candidate& c) const {
  const eligibility& e = *e_;
  if (e.excluded != nullptr && c.slot < e.excluded->size() && (*e.excluded)[c.slot] != 0)
    return false;
  if ((c.fr_mask & e.need_mask) == 0) return false;
  if (wide_ && !uses_contested(c)) return false;
  if (c.queue == e.own) {
    if (c.priority > e.priority) return false;
    return c.priority < e.priority || (e.own_same_prio && e.submit < c.order_time);
  }
  if (e.only_lower && c.priority >= e.priority) return false;
  if (e.other_below && c.priority >= *e.other_below) return false;
  return !(e.min_runtime > 0 && e.now - c.admitted_at < e.min_runtime);
}

// Advances queue x's cursor to its next candidate. A queue's list is in priority order, so
// once the priority rule fails it fails for the rest of the list (equal-priority candidates of
// the own queue are checked one by one: their queue-order times are in no particular order).
inline void candidate_lists::skip(std::uint32_t x) {
  const eligibility& e = *e_;
  std::uint32_t& cur = s_.cur[x];
  const std::uint32_t end = s_.end[x];
  for (; cur < end; ++cur) {
    const candidate& c = (*arr_)[cur];
    const bool past = c.queue == e.own ? (c.priority > e.priority ||
                                          (c.priority == e.priority && !e.own_same_prio))
                                       : ((e.only_lower && c.priority >= e.priority) ||
                                          (e.other_below && c.priority >= *e.other_below));
    if (past) {
      cur = end;
      return;
    }
    if (eligible(c)) return;
  }
}

template <typename Fn>
void candidate_lists::for_each_remaining(queue_id x, Fn fn) const {
  if (!has(x)) return;
  for (std::uint32_t i = s_.cur[x.value()]; i < s_.end[x.value()]; ++i) {
    const candidate& c = (*arr_)[i];
    if (e_ == nullptr || eligible(c)) fn(c);
  }
}
inline candidate candidate_lists::pop(queue_id x) {
  const candidate c = (*arr_)[s_.cur[x.value()]++];
  if (e_ != nullptr) skip(x.value());
  return c;
}

/// Records that `slot` may no longer be a victim (it was planned as one) in the scratch's index.
void exclude_slot(ordering_scratch& s, const capacity_state& state, std::uint32_t slot);

/// Finds the victims that let `w` (assigned `a`, mode preempt) fit in its queue, all or nothing:
/// classic or fair-sharing preemption per options. `usage` is a scratch copy (restored on
/// return); slots with excluded[slot] != 0 or in flight are never victims. Returns the victims
/// (empty when preemption cannot help).
[[nodiscard]] std::vector<preemption_target> find_victims(
    const capacity_state& state, capacity_usage& usage, const pending_workload& w,
    const assignment& a, const capacity_cycle_options& options, const std::vector<char>& excluded,
    ordering_scratch* scratch = nullptr);

/// The shared context of one victim search.
struct preemption_ctx {
  const capacity_state& state;
  const capacity_tree& tree;
  capacity_usage& usage;
  const pending_workload& w;
  const assignment& a;
  std::vector<std::uint32_t> frs_need;  ///< Contested frs (request above available).
  /// Per node, bumped whenever the node's usage changes (DRS caches compare against it); sized
  /// to the tree for fair sharing only (classic preemption keeps no DRS caches).
  std::vector<std::uint32_t> node_version;
  bool track_versions = true;  ///< False for classic preemption (no DRS caches to keep valid).
  ordering_scratch* scratch = nullptr;  ///< Buffers reused across plans.
};

/// Adds `delta` to queue q's usage of fr in ctx.usage and bumps the versions on its path.
void add_ctx_usage(preemption_ctx& ctx, queue_id q, std::uint32_t fr, std::int64_t delta);

/// Removes (sign -1) or restores (+1) the usage of an admitted slot in the scratch usage.
void apply_slot(preemption_ctx& ctx, std::uint32_t slot, std::int64_t sign);

/// Stages apply_slot(ctx, slot, sign) in ctx.scratch: ctx.usage is unchanged until
/// flush_staged(). Only the staged queue's own entry (usage + staged) is meaningful meanwhile.
inline void stage_slot(preemption_ctx& ctx, std::uint32_t slot, std::int64_t sign) {
  auto& s = *ctx.scratch;
  const std::size_t nf = ctx.tree.fr_count();
  if (s.staged_listed.size() != ctx.tree.size()) {
    s.staged.assign(ctx.tree.size() * nf, 0);
    s.staged_listed.assign(ctx.tree.size(), 0);
    s.staged_queues.clear();
  }
  const auto& rec = ctx.state.slots()[slot];
  const std::uint32_t x = rec.w.queue.value();
  if (s.staged_listed[x] == 0) {
    s.staged_listed[x] = 1;
    s.staged_queues.push_back(x);
  }
  for (const auto& [f, a] : rec.use) s.staged[x * nf + f] += sign * a;
}

/// Applies the staged deltas: one add_ctx_usage per (queue, fr) with the sum of its deltas. The
/// result equals applying the slots one by one in any order, because add_usage keeps every
/// node's usage a function of the sums of its descendants' (the propagated deltas telescope).
void flush_staged(preemption_ctx& ctx);

/// Kueue's fairPreemptions over sorted candidates; returns the victims or nothing.
[[nodiscard]] std::vector<preemption_target> fair_preemptions(
    preemption_ctx& ctx, candidate_lists& candidates, const capacity_cycle_options& options);

/// Kueue's fillBackWorkloads: re-adds victims (last one excepted) in reverse order while the
/// workload still fits; `targets` have their usage removed from ctx.usage on entry and exit.
void fill_back(preemption_ctx& ctx, std::vector<std::pair<candidate, preemption_reason>>& targets,
               bool allow_borrowing);

/// Returns ok if the strategy list is one of {S2-a}, {S2-b}, {S2-a, S2-b}.
[[nodiscard]] result<void> check_options(const capacity_cycle_options& options);

/// What the next admission cycle decides for a workload probed by what_if().
struct probe_outcome {
  bool admitted = false;
  std::uint32_t flavor = 0;  ///< Admitted in, preempting in, or considered when deferred.
  bool borrowing = false;    ///< Above its queue's nominal quota with it in `flavor`.
  drs_value drs_after;       ///< Its queue's DRS with it in `flavor`, when decided.
  std::vector<preemption_target> victims;  ///< Its preemption plan (empty: none).
  std::string message;                     ///< Its deferral message when not admitted.
};

/// Runs the admission cycle of plan_admission() for the tree of w's root as if `w` had been
/// submitted (replacing the pending workload with w's job id, if any) and returns the cycle's
/// decision for w. Stops as soon as that decision is known: when w is admitted, or deferred
/// without a preemption plan to come; otherwise after the root's admissions and the preemption
/// heads ordered before w. Other roots share no quota and are skipped. Preconditions: options
/// and w are valid (check_options, validate_pending); w's job is not admitted.
[[nodiscard]] result<probe_outcome> probe_cycle(const capacity_state& state,
                                                const pending_workload& w,
                                                const capacity_cycle_options& options);

}  // namespace hetsched::capacity_detail
