/* SPDX-License-Identifier: MIT */
/* hetsched C API: decisions returned by the policies, read through index accessors.
 *
 * A decision lists binds (job, task, node, GPUs), admissions (capacity queues: job, queue,
 * flavor), preemptions (victim, reason), deferrals (job, reason, message), releases (tasks a
 * running elastic job gives back: job, task, node, GPUs; hs_packer_grow_shrink and registry
 * policies), and, from registry policies (policy.h), migrations (moved tasks: job, task, new node
 * and GPUs), suspensions and resumes (job ids). Each policy documents which lists it fills. Entries
 * are read by copying them into caller structs whose struct_size the caller sets (sizeof); string
 * and array pointers in them are owned by the decision and stay valid until hs_decision_free(). A
 * decision never changes after it is returned, so const accessors are safe to call concurrently.
 * Commit a decision with the policy that made it (hs_packer_commit, hs_hived_commit,
 * hs_capacity_apply; registry policies: hs_state_apply, then hs_policy_commit). */
#ifndef HETSCHED_C_DECISION_H
#define HETSCHED_C_DECISION_H

#include <hetsched/c/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_decision hs_decision_t;

/* Why a job waits. Values match hetsched::defer_reason; HS_DEFER_WAIT is HiveD's "wait". */
typedef enum hs_defer_reason {
  HS_DEFER_INSUFFICIENT_CAPACITY = 0,
  HS_DEFER_QUOTA_EXCEEDED = 1,
  HS_DEFER_TOPOLOGY_UNSATISFIABLE = 2,
  HS_DEFER_FRAGMENTED = 3,
  HS_DEFER_WAIT = 4
} hs_defer_reason;

/* One placed task. Jobs are named by id (packer, capacity) or by name (HiveD pods; id 0). */
typedef struct hs_bind {
  uint32_t struct_size;
  uint64_t job_id;
  const char* job_name; /* "" when the policy names jobs by id */
  uint32_t task;        /* task index within the job */
  uint32_t node;        /* node index in the cluster; UINT32_MAX when the policy has no cluster */
  const char* node_name;
  const uint32_t* gpus; /* node-local GPU indices, in the policy's placement order */
  uint32_t gpu_count;
  /* API version 4 (first version: offsetof(hs_bind_t, milli_per_gpu)): */
  uint32_t milli_per_gpu; /* share of each GPU: 1000 whole GPUs, 1..999 a fraction of one GPU */
  int64_t gpu_memory_mib; /* GPU memory claimed on each GPU; 0: none */
} hs_bind_t;

/* One workload admitted by a capacity-queue cycle. */
typedef struct hs_admission {
  uint32_t struct_size;
  uint64_t job_id;
  const char* queue;
  const char* flavor;
  int32_t borrowing; /* 1 if above the queue's nominal quota in some resource */
} hs_admission_t;

/* One job to evict. */
typedef struct hs_preemption {
  uint32_t struct_size;
  uint64_t job_id;
  const char* job_name;  /* HiveD victim pod name; "" otherwise */
  const char* node_name; /* HiveD: the victim's node; "" otherwise */
  const char* queue;     /* capacity queues: the victim's queue; "" otherwise */
  const char* reason;    /* e.g. "InCohortReclamation by job 7" */
  uint64_t preemptor_id; /* capacity queues: the job the victim makes room for */
} hs_preemption_t;

/* One job left waiting. */
typedef struct hs_deferral {
  uint32_t struct_size;
  uint64_t job_id;
  const char* job_name;
  hs_defer_reason reason;
  const char* message;
} hs_deferral_t;

/* One task a running job gives back while it keeps running on its other tasks (a partial
 * release: hetsched::partial_release, e.g. a grow-shrink shrink). One entry per released task;
 * entries of one job are adjacent, highest task first for grow-shrink. Added in API version 2. */
typedef struct hs_release {
  uint32_t struct_size;
  uint64_t job_id;
  const char* job_name; /* "" when the policy names jobs by id */
  uint32_t task;        /* task index within the job */
  uint32_t node;        /* node index the task leaves */
  const char* node_name;
  const uint32_t* gpus; /* node-local GPU indices the task frees, ascending */
  uint32_t gpu_count;
} hs_release_t;

/* One task of a running job moved to a new placement (registry policies that migrate, e.g.
 * Gandiva; hs_policy_plan_migrations). One entry per moved task; entries of one job are adjacent.
 * Added in API version 4. */
typedef struct hs_migration {
  uint32_t struct_size;
  uint64_t job_id;
  uint32_t task; /* task index within the job */
  uint32_t node; /* the node index the task moves to */
  const char* node_name;
  const uint32_t* gpus; /* node-local GPU indices it moves to, in placement order */
  uint32_t gpu_count;
  uint32_t milli_per_gpu;
  int64_t gpu_memory_mib;
} hs_migration_t;

/* Releases a decision. NULL is a no-op. */
HS_API void hs_decision_free(hs_decision_t* decision);

/* Entry counts (0 for NULL). */
HS_API size_t hs_decision_bind_count(const hs_decision_t* decision);
HS_API size_t hs_decision_admission_count(const hs_decision_t* decision);
HS_API size_t hs_decision_preemption_count(const hs_decision_t* decision);
HS_API size_t hs_decision_deferral_count(const hs_decision_t* decision);
/* API version 2. */
HS_API size_t hs_decision_release_count(const hs_decision_t* decision);
/* API version 4. */
HS_API size_t hs_decision_migration_count(const hs_decision_t* decision);
HS_API size_t hs_decision_suspension_count(const hs_decision_t* decision);
HS_API size_t hs_decision_resume_count(const hs_decision_t* decision);

/* Copy entry `index` into *out (out->struct_size must be set; at least the struct's first
 * version). Errors: HS_OUT_OF_RANGE for an index past the end, HS_INVALID_ARGUMENT for NULL or a
 * struct_size too small. */
HS_API hs_status hs_decision_bind_at(const hs_decision_t* decision, size_t index, hs_bind_t* out);
HS_API hs_status hs_decision_admission_at(const hs_decision_t* decision, size_t index,
                                          hs_admission_t* out);
HS_API hs_status hs_decision_preemption_at(const hs_decision_t* decision, size_t index,
                                           hs_preemption_t* out);
HS_API hs_status hs_decision_deferral_at(const hs_decision_t* decision, size_t index,
                                         hs_deferral_t* out);
/* API version 2. */
HS_API hs_status hs_decision_release_at(const hs_decision_t* decision, size_t index,
                                        hs_release_t* out);
/* API version 4. Suspensions and resumes are job ids (*out). */
HS_API hs_status hs_decision_migration_at(const hs_decision_t* decision, size_t index,
                                          hs_migration_t* out);
HS_API hs_status hs_decision_suspension_at(const hs_decision_t* decision, size_t index,
                                           uint64_t* out);
HS_API hs_status hs_decision_resume_at(const hs_decision_t* decision, size_t index, uint64_t* out);

/* Returns the lower-case name of `reason`, e.g. "fragmented"; never NULL. */
HS_API const char* hs_defer_reason_name(hs_defer_reason reason);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_DECISION_H */
