/* SPDX-License-Identifier: MIT */
/* hetsched C API: hierarchical capacity queues (Kueue quota algebra, fair sharing, preemption).
 *
 * Describe the tree with an hs_capacity_spec_t (cohorts, queues, per-(flavor, resource) quotas),
 * then create the queue state. Submit jobs, plan an admission cycle (pure: a decision with
 * admissions, preemptions and deferrals), apply the plan, and release finished jobs or victims
 * once they are gone. hs_capacity_what_if() answers "would this job be admitted now, in which
 * flavor, whom would it preempt and why" without side effects. Tie-breaks: plan_admission() in
 * include/hetsched/policies/capacity_queue.hpp. Not internally synchronized. */
#ifndef HETSCHED_C_CAPACITY_H
#define HETSCHED_C_CAPACITY_H

#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_capacity_spec hs_capacity_spec_t;
typedef struct hs_capacity hs_capacity_t;

/* "No limit" for borrowing and lending limits. */
#define HS_NO_LIMIT (-1)

typedef enum hs_queue_order {
  HS_ORDER_STRICT_FIFO = 0,
  HS_ORDER_BEST_EFFORT_FIFO = 1,
  HS_ORDER_STRICT_PRIORITY = 2,
  HS_ORDER_PRIORITY = 3, /* default */
  HS_ORDER_DRF = 4
} hs_queue_order;

typedef enum hs_within_queue {
  HS_WITHIN_QUEUE_NEVER = 0,
  HS_WITHIN_QUEUE_LOWER_PRIORITY = 1,
  HS_WITHIN_QUEUE_LOWER_OR_NEWER_EQUAL_PRIORITY = 2
} hs_within_queue;

typedef enum hs_reclaim {
  HS_RECLAIM_NEVER = 0,
  HS_RECLAIM_LOWER_PRIORITY = 1,
  HS_RECLAIM_ANY = 2
} hs_reclaim;

HS_API hs_status hs_capacity_spec_new(hs_capacity_spec_t** out);
HS_API void hs_capacity_spec_free(hs_capacity_spec_t* spec);

/* Adds cohort `name` below cohort `parent` (NULL or "" for a root). Errors: HS_ALREADY_EXISTS. */
HS_API hs_status hs_capacity_spec_add_cohort(hs_capacity_spec_t* spec, const char* name,
                                             const char* parent);
/* Adds queue `name` below cohort `parent` (NULL or "": a queue of its own). */
HS_API hs_status hs_capacity_spec_add_queue(hs_capacity_spec_t* spec, const char* name,
                                            const char* parent, hs_queue_order order);
/* Gives node `node` (cohort or queue) a quota of `nominal` for (flavor, resource). A queue's
 * flavor preference order is the order of first appearance. Errors: HS_NOT_FOUND for an unknown
 * node; range checks happen at hs_capacity_new. */
HS_API hs_status hs_capacity_spec_add_quota(hs_capacity_spec_t* spec, const char* node,
                                            const char* flavor, const char* resource,
                                            int64_t nominal, int64_t borrowing_limit,
                                            int64_t lending_limit);
/* Sets queue `queue`'s preemption policy. Errors: HS_NOT_FOUND, HS_INVALID_ARGUMENT (a cohort). */
HS_API hs_status hs_capacity_spec_set_preemption(hs_capacity_spec_t* spec, const char* queue,
                                                 hs_within_queue within_queue, hs_reclaim reclaim);
/* Sets node `node`'s fair-sharing weight as num/den (default 1/1). */
HS_API hs_status hs_capacity_spec_set_weight(hs_capacity_spec_t* spec, const char* node,
                                             uint32_t num, uint32_t den);

/* Builds the queue state from `spec` (which stays owned by the caller). Errors name the node:
 * HS_INVALID_ARGUMENT, HS_ALREADY_EXISTS, HS_NOT_FOUND (parent), HS_OUT_OF_RANGE. */
HS_API hs_status hs_capacity_new(const hs_capacity_spec_t* spec, hs_capacity_t** out);
HS_API void hs_capacity_free(hs_capacity_t* capacity);

/* A job (workload) as submitted: its whole gang's request per resource. Set struct_size. */
typedef struct hs_capacity_job {
  uint32_t struct_size;
  uint64_t job_id; /* 0..UINT32_MAX-1 */
  const char* queue;
  uint32_t tenant; /* the user (DRF order, user limits) */
  int32_t priority;
  int64_t submit_time;
  const char* const* resources; /* resource names, e.g. "gpu" */
  const int64_t* amounts;       /* amount per resource */
  uint32_t resource_count;
  const char* const* flavors; /* allowed flavors; NULL/0: any flavor of the queue */
  uint32_t flavor_count;
} hs_capacity_job_t;

/* Options of a cycle or a what-if. NULL means the defaults below. Set struct_size. */
typedef struct hs_capacity_options {
  uint32_t struct_size;
  int64_t now;           /* admission time (default 0) */
  int32_t fair_sharing;  /* != 0: Kueue fair sharing (default off) */
  int32_t no_preemption; /* != 0: never plan preemptions (default: plan them) */
  int64_t min_runtime;   /* other queues' jobs admitted less than this long ago are no victims */
} hs_capacity_options_t;

/* Queues `job`. Errors (nothing changed): HS_NOT_FOUND for an unknown queue (naming it) or flavor,
 * HS_ALREADY_EXISTS for a known job id, HS_INVALID_ARGUMENT when no allowed flavor of the queue
 * declares every resource, a cohort, or a negative amount. */
HS_API hs_status hs_capacity_submit(hs_capacity_t* capacity, const hs_capacity_job_t* job);

/* Plans one admission cycle; pure. The decision holds admissions in admission order,
 * preemptions (victim, queue, reason, preemptor) and a quota_exceeded deferral for every other
 * pending job. */
HS_API hs_status hs_capacity_plan(const hs_capacity_t* capacity,
                                  const hs_capacity_options_t* options, hs_decision_t** out);

/* Commits a plan made by hs_capacity_plan on this state: admits its jobs and marks its victims in
 * flight (release them once they are gone). Errors (nothing changed): HS_CONFLICT if a job is no
 * longer pending, a victim no longer admitted or an admission no longer fits;
 * HS_INVALID_ARGUMENT for a decision that is not a capacity plan. */
HS_API hs_status hs_capacity_apply(hs_capacity_t* capacity, const hs_decision_t* decision);

/* Removes pending or admitted job `job_id` and frees its quota. Errors: HS_NOT_FOUND. */
HS_API hs_status hs_capacity_release(hs_capacity_t* capacity, uint64_t job_id);

/* Answers whether `job` (not submitted; its id may be unknown) would be admitted now. The
 * decision holds one admission if it fits now, else preemptions (the victims it would need,
 * with reasons) and/or one quota_exceeded deferral whose message says why. hs_decision_what_if
 * gives the summary. Errors as hs_capacity_submit. */
HS_API hs_status hs_capacity_what_if(const hs_capacity_t* capacity, const hs_capacity_job_t* job,
                                     const hs_capacity_options_t* options, hs_decision_t** out);

/* Summary of a what-if decision. */
typedef struct hs_what_if {
  uint32_t struct_size;
  int32_t admissible_now;   /* fits now without preemption */
  int32_t needs_preemption; /* fits by preempting the decision's preemptions */
  int32_t borrowing;
  uint64_t ahead_in_queue; /* pending jobs ordered before it */
  const char* flavor;      /* flavor it would get or need preemption in ("" if none) */
  const char* reason;      /* why it cannot be admitted, else "" */
} hs_what_if_t;

/* Copies the what-if summary of `decision`. Errors: HS_INVALID_ARGUMENT if it is no what-if. */
HS_API hs_status hs_decision_what_if(const hs_decision_t* decision, hs_what_if_t* out);

/* Quota view of one node for one (flavor, resource). */
typedef struct hs_quota_line {
  uint32_t struct_size;
  int64_t nominal;
  int64_t subtree_quota;
  int64_t usage;
  int64_t available; /* headroom now */
  int64_t potential_available;
  int64_t borrowed;
} hs_quota_line_t;

/* Returns node `node`'s quota line for (flavor, resource). Errors: HS_NOT_FOUND for an unknown
 * node or (flavor, resource). */
HS_API hs_status hs_capacity_quota(const hs_capacity_t* capacity, const char* node,
                                   const char* flavor, const char* resource, hs_quota_line_t* out);

/* Returns node `node`'s dominant resource share (Kueue's rounded DRS: ceil of borrowed * 1000 /
 * lendable / weight; 0 when not borrowing; INT64_MAX for a zero-weight borrower). */
HS_API hs_status hs_capacity_share(const hs_capacity_t* capacity, const char* node, int64_t* out);

/* Counts of pending and admitted jobs (0 for NULL). */
HS_API size_t hs_capacity_pending_count(const hs_capacity_t* capacity);
HS_API size_t hs_capacity_admitted_count(const hs_capacity_t* capacity);

/* Returns in *out 1 if `job_id` is admitted, 0 otherwise; *flavor (may be NULL) gets its flavor,
 * valid until the next mutating call on `capacity`. */
HS_API hs_status hs_capacity_job_admitted(const hs_capacity_t* capacity, uint64_t job_id,
                                          int32_t* out, const char** flavor);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_CAPACITY_H */
