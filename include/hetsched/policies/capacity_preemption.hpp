// SPDX-License-Identifier: MIT
// Preemption in hierarchical capacity queues: Kueue's classic and fair-sharing preemption with
// a minimum runtime, whole-gang victims and victims-in-flight tracking.
//
// Classic (options.fair_sharing == false), as Kueue's getTargets: candidates are the
// preemptor's own queue (withinClusterQueue: lower priority, or also equal priority and newer)
// and, with reclaimWithinCohort, every queue of the preemptor's root tree that borrows in a
// contested (flavor, resource) (lower priority only, or any). If all candidates are in the own
// queue: minimal set with borrowing allowed. Else with borrowWithinCohort: threshold =
// min(priority, max_priority_threshold + 1); when the queue is not under nominal only own or
// below-threshold candidates stay; a victim at or above the threshold forbids borrowing. Else,
// when the queue is under nominal: minimal set without borrowing; finally own candidates with
// borrowing. The minimal set: remove candidates in order (skipping queues no longer borrowing)
// until the workload fits, then fill back in reverse order every victim not needed.
//
// Fair sharing (Kueue fairPreemptions, strategies S2-a then S2-b): the incoming workload is
// simulated in its queue; target queues are chosen from the root down by highest DRS (queues
// not borrowing are pruned except the preemptor's own, cohorts not borrowing are pruned unless
// on the preemptor's path; equal DRS between queues goes to the better first candidate, between
// cohorts to the later child, between a cohort and a queue to the cohort). The preemptor's own
// queue yields its candidates unconditionally (InClusterQueue); if the preemptor stays within
// nominal for the contested resources, other queues' candidates are taken unconditionally
// (InCohortReclamation, Kueue's FairSharingPreemptWithinNominal); otherwise a victim is taken if
// the strategy holds for the DRS of the two almost-lowest-common-ancestors (InCohortFairSharing);
// S2-b then takes at most one victim per queue from the remaining candidates. Fill-back as above.
// borrowWithinCohort is ignored under fair sharing.
//
// Candidate order (tie-break chain): other queues before the own queue, lower priority, most
// recently admitted, lower job id. In-flight victims and, for other queues, workloads admitted
// less than options.min_runtime ago are never candidates. A workload is a gang: it is preempted
// whole. Anti-cycle guard (beyond Kueue): a fair plan is dropped when one of its victims from
// another queue could preempt the incoming workload right back once the plan is applied
// (tests/policies/capacity_preemption_test.cpp checks on random flat and two-level scenarios
// that no victim ever preempts its preemptor back).
//
// @see kubernetes-sigs/kueue pkg/scheduler/preemption (preemption.go, fairsharing/*.go).
#pragma once

#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched {

/// Returns the victims `w` needs to fit in its queue now (in the first flavor where preemption
/// can help), with reasons; an empty victim list when it already fits or preemption cannot help.
/// Pure. Victims in flight are excluded. Errors: those of capacity_state::submit for `w`, and a
/// bad strategy list (invalid_argument). O(C log C + C * depth * F) for C candidates.
[[nodiscard]] result<preemption_plan> plan_preemption(const capacity_state& state,
                                                      const pending_workload& w,
                                                      const capacity_cycle_options& options);

}  // namespace hetsched
