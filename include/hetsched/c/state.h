/* SPDX-License-Identifier: MIT */
/* hetsched C API: the live state of a cluster (hetsched::cluster_state) that registry policies
 * (policy.h) decide over.
 *
 * An hs_state_t holds node and GPU health, what each GPU and node has allocated, and the
 * registered jobs with their lifecycle state and per-task placement. It changes only through
 * hs_state_submit / hs_state_record (platform events), hs_state_set_*_health and hs_state_apply
 * (a policy's decision, checked first and committed all or nothing); every mutator validates
 * first and a failed call changes nothing. Ownership: the caller owns the state and frees it with
 * hs_state_free(); it keeps its own reference to the cluster's model, so the hs_cluster_t may be
 * freed while it lives. Strings and arrays it returns are copied into caller structs; none
 * points into the state. Threads: not internally synchronized; the const functions
 * (hs_state_job_status, hs_state_node_usage) are safe to call concurrently with each other and
 * with policies deciding over the same state, but not with a mutator. */
#ifndef HETSCHED_C_STATE_H
#define HETSCHED_C_STATE_H

#include <hetsched/c/cluster.h>
#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_state hs_state_t;

/* "No tenant" / "no queue" in hs_job_spec_t (a zeroed spec means tenant 0 and queue 0). */
#define HS_ID_NONE UINT32_MAX

/* A group of identical tasks of a job (hetsched::task_role). Set struct_size to
 * sizeof(hs_task_role_t); zero every field you do not use. */
typedef struct hs_task_role {
  uint32_t struct_size;
  const char* name;       /* unique within the job, non-empty */
  uint32_t task_count;    /* >= 1 */
  uint32_t gpus;          /* GPUs per task, all on the task's node; 0: CPU only */
  uint32_t milli_per_gpu; /* 0 or 1000: whole GPUs; 1..999: a share of one GPU (gpus == 1) */
  const char* gpu_type;   /* required GPU model, e.g. "A100-SXM4-80GB"; NULL or "": any */
  int64_t gpu_memory_mib; /* GPU memory per GPU; 0: no claim */
  int64_t milli_cpu;      /* per task */
  int64_t memory_mib;     /* host memory per task */
} hs_task_role_t;

/* A job as the platform submits it (hetsched::job_spec). Task ids are dense in role order: role
 * 0's tasks first. Set struct_size to sizeof(hs_job_spec_t); zero every field you do not use. */
typedef struct hs_job_spec {
  uint32_t struct_size;
  uint64_t job_id; /* 0..UINT32_MAX-1, unique in the state */
  const char* name;
  uint32_t tenant;             /* tenant index (quotas, DRF shares); HS_ID_NONE: none */
  uint32_t queue;              /* queue index; HS_ID_NONE: none */
  int32_t priority;            /* larger is more important */
  int32_t independent_tasks;   /* 0: a gang (all tasks placed at once); != 0: placed one by one */
  int32_t preemptible;         /* != 0: policies may preempt or suspend it */
  uint32_t retry_limit;        /* the first N failures requeue it */
  int64_t duration_estimate_s; /* expected run time in seconds; 0: unknown (SJF, Tiresias) */
  const hs_task_role_t* roles; /* role_count >= 1 roles */
  size_t role_count;
  const char* image;   /* opaque label; NULL: "" */
  const char* command; /* opaque label; NULL: "" */
} hs_job_spec_t;

/* Platform events (hetsched::job_event); schedule, preempt, suspend and resume come only from
 * hs_state_apply. */
typedef enum hs_job_event {
  HS_JOB_ENQUEUE = 0, /* submitted -> queued (hs_state_submit does it) */
  HS_JOB_START = 1,   /* scheduled -> running */
  HS_JOB_SUCCEED = 2, /* running -> succeeded: frees its resources */
  HS_JOB_FAIL = 3,    /* scheduled | running | suspended -> queued (retry) or failed; frees */
  HS_JOB_REQUEUE = 4, /* preempted -> queued */
  HS_JOB_CANCEL = 5   /* any non-terminal state -> cancelled; frees */
} hs_job_event;

/* Lifecycle states (values match hetsched::job_state). */
typedef enum hs_job_state {
  HS_JOB_SUBMITTED = 0,
  HS_JOB_QUEUED = 1,
  HS_JOB_SCHEDULED = 2,
  HS_JOB_RUNNING = 3,
  HS_JOB_SUCCEEDED = 4,
  HS_JOB_FAILED = 5,
  HS_JOB_PREEMPTED = 6,
  HS_JOB_SUSPENDED = 7,
  HS_JOB_CANCELLED = 8
} hs_job_state;

/* Health of a node or GPU (values match hetsched::health). Only healthy hardware takes new
 * placements; what already runs there stays. */
typedef enum hs_health { HS_HEALTHY = 0, HS_CORDONED = 1, HS_UNHEALTHY = 2 } hs_health;

/* A job's status, read with hs_state_job_status. */
typedef struct hs_job_status {
  uint32_t struct_size;
  hs_job_state state;
  uint32_t attempts;     /* failures so far */
  uint32_t task_count;   /* over all roles */
  uint32_t placed_tasks; /* tasks with a placement (scheduled, running or suspended) */
} hs_job_status_t;

/* A node's health and free resources, read with hs_state_node_usage. */
typedef struct hs_node_usage {
  uint32_t struct_size;
  hs_health health;
  uint32_t gpus;          /* GPUs of the node */
  uint32_t idle_gpus;     /* GPUs with nothing allocated that can take one (GPU, node healthy) */
  int64_t free_milli_gpu; /* allocatable minus used, whatever the health */
  int64_t free_milli_cpu;
  int64_t free_memory_mib;
} hs_node_usage_t;

/* Makes the empty state (no jobs, every node and GPU healthy) of `cluster`. The cluster's model
 * description is built on the first hs_state_new or hs_policy_new of the cluster (O(nodes +
 * GPUs)) and shared afterwards. */
HS_API hs_status hs_state_new(const hs_cluster_t* cluster, hs_state_t** out);
/* Releases the state. NULL is a no-op. */
HS_API void hs_state_free(hs_state_t* state);

/* Registers `spec` and queues it (submitted -> queued). Errors (nothing changed):
 * HS_INVALID_ARGUMENT for a malformed spec (no roles, a role without a name, zero tasks, negative
 * amounts, a fractional GPU with gpus != 1, an unknown GPU model; the message names the job and
 * role), HS_OUT_OF_RANGE for sizes above the model's limits, HS_ALREADY_EXISTS for a known job id
 * or a repeated role name. */
HS_API hs_status hs_state_submit(hs_state_t* state, const hs_job_spec_t* spec);

/* Records platform event `event` for job `job_id`. succeed, fail and cancel free the job's
 * resources; tell the policies with hs_policy_release. Errors: HS_NOT_FOUND for an unknown job,
 * HS_FAILED_PRECONDITION (naming job, state and event) for an illegal transition,
 * HS_INVALID_ARGUMENT for an unknown event. */
HS_API hs_status hs_state_record(hs_state_t* state, uint64_t job_id, hs_job_event event);

/* Checks `decision` against the state and commits it all or nothing (hetsched::apply): binds
 * make queued jobs scheduled, preemptions free their victims (preempted until HS_JOB_REQUEUE),
 * suspensions, resumes, migrations and partial releases move resources. Only decisions of
 * hs_policy_place and hs_policy_plan_migrations can be applied. Errors (nothing changed):
 * HS_INVALID_ARGUMENT for another kind of decision (a what-if, a packer's) or a malformed entry,
 * HS_NOT_FOUND for an unknown job, task, node or GPU, HS_FAILED_PRECONDITION when the state no
 * longer allows it (a job not queued, a GPU no longer free or not healthy); the message names the
 * job and the problem. */
HS_API hs_status hs_state_apply(hs_state_t* state, const hs_decision_t* decision);

/* Sets node `node`'s health, or GPU `gpu` (node-local index) of node `node`'s. Errors:
 * HS_OUT_OF_RANGE for a node or GPU index past the end, HS_INVALID_ARGUMENT for an unknown
 * health value. Call hs_policy_rebuild afterwards. */
HS_API hs_status hs_state_set_node_health(hs_state_t* state, uint32_t node, hs_health health);
HS_API hs_status hs_state_set_gpu_health(hs_state_t* state, uint32_t node, uint32_t gpu,
                                         hs_health health);

/* Copies job `job_id`'s status into *out (out->struct_size set). Errors: HS_NOT_FOUND. */
HS_API hs_status hs_state_job_status(const hs_state_t* state, uint64_t job_id,
                                     hs_job_status_t* out);
/* Copies node `node`'s health and free resources into *out. Errors: HS_OUT_OF_RANGE. */
HS_API hs_status hs_state_node_usage(const hs_state_t* state, uint32_t node, hs_node_usage_t* out);

/* Returns the number of jobs the state holds (0 for NULL). */
HS_API size_t hs_state_job_count(const hs_state_t* state);

/* Returns the lower-case name of `state`, e.g. "queued"; never NULL. */
HS_API const char* hs_job_state_name(hs_job_state state);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_STATE_H */
