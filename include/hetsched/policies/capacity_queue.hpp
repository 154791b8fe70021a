// SPDX-License-Identifier: MIT
// Hierarchical capacity queues (virtual clusters): Kueue's quota algebra, fair sharing and
// admission, with YARN CapacityScheduler queue parameters and user limits.
//
// A capacity_tree is an immutable forest of cohorts (inner nodes) and queues (leaves, Kueue's
// ClusterQueues). Quotas are per (flavor, resource): a flavor models a GPU type or node group, so
// a queue's quota is a virtual view not bound to machines; a placement policy binds what is
// admitted. A capacity_state holds the usage of admitted workloads and the pending workloads.
// plan_admission() is pure: it returns what to admit (in which flavor), whom to preempt and why
// the rest waits; apply_admission() commits a plan. Victims are only marked (in flight) until the
// platform reports them gone with release(); their quota is freed then, and a preemptor with
// victims in flight never plans new ones. what_if() answers "would the next cycle admit this
// job" exactly, without side effects. Preemption lives in capacity_preemption.hpp.
//
// Files: capacity_tree.hpp (the tree and its quota algebra), capacity_state.hpp (usage and
// workloads; its records in capacity_state_records.hpp), this header (the admission cycle:
// plan_admission, apply_admission, queue_status, what_if). Including this header includes all.
//
// @see Kueue: kubernetes-sigs/kueue pkg/cache/scheduler (resource_node.go, fair_sharing.go),
//      pkg/scheduler (fair_sharing_iterator.go), site/.../concepts/{cluster_queue,fair_sharing}.md.
// @see YARN CapacityScheduler: UsersManager.computeUserLimit, CapacityScheduler.md.
// @see DRF: Ghodsi et al., "Dominant Resource Fairness", NSDI'11.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_state.hpp>
#include <hetsched/policies/capacity_tree.hpp>
#include <hetsched/policies/drf.hpp>

namespace hetsched {

/// Why a workload is preempted (Kueue's reasons).
enum class preemption_reason : std::uint8_t {
  in_cluster_queue,                   ///< Lower priority in the preemptor's own queue.
  in_cohort_reclamation,              ///< The preemptor reclaims quota within its nominal.
  in_cohort_fair_sharing,             ///< Fair sharing: the victim's side has a higher DRS.
  in_cohort_reclaim_while_borrowing,  ///< borrowWithinCohort below the priority threshold.
};
/// Returns Kueue's name of `r`, e.g. "InCohortFairSharing".
[[nodiscard]] std::string_view to_string(preemption_reason r) noexcept;

/// Kueue's fair-sharing preemption strategies: S2-a (preemptor share with the workload <= the
/// target's share after removing the victim) and S2-b (preemptor share < target's share before).
enum class fair_strategy : std::uint8_t {
  less_than_or_equal_to_final_share,
  less_than_initial_share
};

/// Options of an admission cycle, a preemption plan or a what-if.
struct capacity_cycle_options {
  std::int64_t now = 0;       ///< Admission time of what is admitted; minimum-runtime clock.
  bool fair_sharing = false;  ///< Kueue fair sharing (DRS tournament, fair preemption).
  /// Valid lists: {S2-a}, {S2-b}, {S2-a, S2-b} (the default).
  std::vector<fair_strategy> strategies = {fair_strategy::less_than_or_equal_to_final_share,
                                           fair_strategy::less_than_initial_share};
  bool preemption = true;  ///< Plan preemptions for heads that do not fit.
  /// A workload of another queue admitted less than this long ago is never a victim.
  std::int64_t min_runtime = 0;
  /// Order of queue_order::custom queues: true if a goes before b.
  std::function<bool(const pending_workload&, const pending_workload&)> custom_order;
  bool explain = true;  ///< Fill deferral messages (false: reasons only, faster).
};

/// A workload admitted in a flavor.
struct flavor_admission {
  job_id job;
  queue_id queue;
  std::string flavor;
  bool borrowing = false;  ///< Above the queue's nominal quota in some resource.
  friend bool operator==(const flavor_admission&, const flavor_admission&) = default;
};

struct preemption_target {
  job_id victim;
  queue_id queue;
  preemption_reason reason = preemption_reason::in_cluster_queue;
  friend bool operator==(const preemption_target&, const preemption_target&) = default;
};

/// The victims one preemptor needs, all or nothing.
struct preemption_plan {
  job_id preemptor;
  queue_id queue;
  std::string flavor;
  std::vector<preemption_target> victims;
};

/// The outcome of one admission cycle.
struct admission_plan {
  std::vector<flavor_admission> admitted;  ///< In admission order.
  std::vector<preemption_plan> preemptions;
  /// preemptions: one entry per victim (reason "<Reason> by job <id>"); deferrals: every pending
  /// workload not admitted, quota_exceeded with a message saying why it waits.
  hetsched::decision decision;
  std::int64_t now = 0;
};

/// Plans one admission cycle; pure (the state is not changed). Each queue nominates its head
/// (queue_order); per root, a tournament admits the best nominee and the winner's queue
/// nominates again, until no nominee fits. Gangs are admitted whole, in the first flavor of the
/// queue's preference order where every resource fits (Kueue whenCanBorrow=Borrow). Then each
/// queue whose first non-fitting workload is not waiting for victims plans a preemption
/// (capacity_preemption.hpp); victims of this cycle are not reused.
/// Tie-break chain at every cohort, between the best nominees of two children:
///   1. a preemptor whose victims were planned earlier first;
///   2. a workload that keeps its queue within nominal quota first;
///   3. (fair sharing) lower DRS of the child node with the workload admitted;
///   4. higher priority; 5. earlier submit time; 6. lower job id.
/// Heads needing preemption are served by (priority desc, submit time, job id).
/// Errors: invalid_argument for a bad strategy list or a custom queue without custom_order.
/// O(P log + A * depth * (siblings + F)) for P pending and A admitted workloads.
[[nodiscard]] result<admission_plan> plan_admission(const capacity_state& state,
                                                    const capacity_cycle_options& options);

/// Commits `plan`: admits its workloads (admitted_at = plan.now) and marks its victims in flight.
/// Errors (nothing changed): failed_precondition if a workload is no longer pending, a victim is
/// no longer admitted or already in flight, or an admission no longer fits.
[[nodiscard]] result<void> apply_admission(capacity_state& state, const admission_plan& plan);

/// Quota view of one node for one (flavor, resource).
struct quota_line {
  std::string flavor;
  std::string resource;
  std::int64_t nominal = 0;
  std::int64_t subtree_quota = 0;
  std::int64_t usage = 0;
  std::int64_t available = 0;  ///< Headroom now (may be negative at a root after a quota cut).
  std::int64_t potential_available = 0;
  std::int64_t borrowed = 0;  ///< max(0, usage - subtree quota).
};

/// A node's shares and headroom.
struct queue_report {
  queue_id node;
  drs_value drs;
  std::vector<quota_line> lines;  ///< Declared or used (flavor, resource) pairs, sorted.
};

/// Returns node `n`'s quota lines and DRS. Errors: not_found.
[[nodiscard]] result<queue_report> queue_status(const capacity_state& state, queue_id n);

/// The answer of what_if().
struct what_if_answer {
  bool admissible_now = false;  ///< The next cycle admits it without preemption (what_if()).
  std::string flavor;           ///< The flavor it would get (or need preemption in).
  bool borrowing = false;
  drs_value drs_after;                     ///< Its queue's DRS with it admitted (in `flavor`).
  std::vector<preemption_target> victims;  ///< When it fits only by preempting these.
  bool needs_preemption = false;           ///< victims is non-empty.
  std::size_t ahead_in_queue = 0;          ///< Pending workloads ordered before it.
  std::string reason;                      ///< Why it cannot be admitted, else empty.
};

/// Answers "would `w` be admitted by the next admission cycle, in which flavor, whom would it
/// preempt, and if not, why" with no side effects: exactly the decision plan_admission() with the
/// same options would make for `w` were it submitted now (replacing the pending workload with
/// its job id, if any). Everything the cycle does counts: other queues' pending workloads
/// winning the tournament first, workloads ahead in strict and best-effort queues, YARN user
/// limits, victims in flight, and the victims the preemption heads ordered before `w` claim.
///  - admissible_now: the cycle admits `w`; flavor, borrowing and drs_after as admitted;
///  - needs_preemption: the cycle defers `w` and plans these victims for it (flavor: the plan's);
///  - otherwise `reason` is the cycle's deferral message for `w` ("behind head job N of strict
///    queue 'Q'", "waiting for quota in queue 'Q'; available now: ...", "user limit of tenant
///    T ...", "waiting for N preempted workload(s) to terminate", "asks ... more than queue 'Q'
///    can ever get") and flavor the one it would take at that point of the cycle.
/// ahead_in_queue counts the pending workloads before `w` in its queue's key order (priority or
/// FIFO; the workload it replaces excluded). Cost: the cycle of w's root only (other roots share
/// no quota), with the usage copied once and the pending workloads walked in place (no copy of
/// the state), no message built but w's; it stops once w's decision is known: at once when w's
/// queue defers it at the start (except when a preemption plan follows), when it is admitted, at
/// worst after the root's admission phase and the victim searches of the heads before it
/// (docs/capacity_queues.md, "What-if", gives figures). Errors: those of capacity_state::submit
/// for `w` except that its job may be pending; failed_precondition if its job is admitted;
/// invalid_argument as plan_admission().
[[nodiscard]] result<what_if_answer> what_if(const capacity_state& state, const pending_workload& w,
                                             const capacity_cycle_options& options);

}  // namespace hetsched
