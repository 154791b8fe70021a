/* SPDX-License-Identifier: MIT */
/* hetsched C API: any policy of the registry by name (hetsched::make_policy), driven through the
 * policy contract (policies/policy.hpp) over an hs_state_t (state.h).
 *
 * A spec is "ORDER[:k=v,...][+PLACEMENT[:k=v,...]]", e.g. "fifo+packer", "drf+packer",
 * "fifo+gandiva:slices=1", "drf+hived", "fifo+fgd"; hs_policy_ordering_at/_placement_at list
 * the names. The loop of an embedder: hs_state_submit a job; hs_policy_place (decides, changes
 * no state); if it binds, hs_state_apply then hs_policy_commit; when the job ends, hs_state_record
 * (succeed, fail, cancel) then hs_policy_release; after health changes hs_policy_rebuild.
 * hs_policy_what_if answers what the next hs_policy_place would, with no side effect at all.
 * Ownership: the caller owns the policy and frees it with hs_policy_free(); it keeps its own
 * reference to the cluster, so the hs_cluster_t may be freed while it lives. Decisions are the
 * caller's (hs_decision_free); a decision of hs_policy_place may be committed only to the policy
 * that made it. Threads: not internally synchronized, and no call is const: hs_policy_place and
 * hs_policy_what_if may fill the policy's caches, so every call on one policy must be exclusive.
 * Different policies may decide concurrently over one state as long as nothing mutates it. */
#ifndef HETSCHED_C_POLICY_H
#define HETSCHED_C_POLICY_H

#include <hetsched/c/cluster.h>
#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>
#include <hetsched/c/state.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_policy hs_policy_t;

/* A placement parameter given outside the spec text (values a spec cannot hold, e.g.
 * tree=<JSON queue tree> for capacity). Overrides the same key in the spec's placement part. */
typedef struct hs_policy_param {
  const char* key;
  const char* value;
} hs_policy_param_t;

/* What a policy is, read with hs_policy_describe. Strings live as long as the policy. */
typedef struct hs_policy_info {
  uint32_t struct_size;
  const char* spec;       /* the spec as written */
  const char* ordering;   /* e.g. "fifo" */
  const char* placement;  /* e.g. "packer" */
  int32_t oversubscribes; /* place may succeed with no free GPU (time-slicing) */
  int32_t per_tenant;     /* place depends on the job's tenant (quotas) */
  int32_t preempts;       /* place may answer with preemptions ("preempt now, start later") */
  int32_t migrates;       /* hs_policy_plan_migrations may move running jobs */
} hs_policy_info_t;

/* One registry entry, read with hs_policy_ordering_at / hs_policy_placement_at. Static strings. */
typedef struct hs_policy_entry {
  uint32_t struct_size;
  const char* name;
  const char* summary; /* one line: what it is and its parameters */
} hs_policy_entry_t;

/* Makes the policy `spec` for `cluster` through the registry; `params` (count entries; NULL with
 * 0) add placement parameters. Errors: HS_NOT_FOUND for an unknown ordering or placement (the
 * message names it and lists the valid names), HS_INVALID_ARGUMENT for a malformed spec, an
 * unknown or bad parameter, or a NULL key or value (the message quotes the spec and names the
 * parameter). */
HS_API hs_status hs_policy_new(const char* spec, const hs_cluster_t* cluster,
                               const hs_policy_param_t* params, size_t count, hs_policy_t** out);
/* Releases the policy. NULL is a no-op. */
HS_API void hs_policy_free(hs_policy_t* policy);

/* Copies the spec, names and traits into *out (out->struct_size set). */
HS_API hs_status hs_policy_describe(const hs_policy_t* policy, hs_policy_info_t* out);

/* Decides for queued job `job_id` of `state`: binds (one per task), or a deferral with a reason,
 * possibly with preemptions or suspensions of other jobs. Changes nothing the policy committed
 * and never the state. Errors: HS_NOT_FOUND for a job the state does not know,
 * HS_INVALID_ARGUMENT for a state of another cluster, HS_FAILED_PRECONDITION for a job that is
 * not waiting (the policy's message). */
HS_API hs_status hs_policy_place(hs_policy_t* policy, const hs_state_t* state, uint64_t job_id,
                                 hs_decision_t** out);
/* Returns what hs_policy_place would answer now, with no side effect at all. The decision is for
 * reading: hs_state_apply and hs_policy_commit refuse it (HS_INVALID_ARGUMENT). Errors: those of
 * hs_policy_place. */
HS_API hs_status hs_policy_what_if(hs_policy_t* policy, const hs_state_t* state, uint64_t job_id,
                                   hs_decision_t** out);
/* Returns the migrations to carry out now (policies with the migrates trait; otherwise an empty
 * decision). Apply and commit it like a placement. */
HS_API hs_status hs_policy_plan_migrations(hs_policy_t* policy, const hs_state_t* state,
                                           hs_decision_t** out);

/* Tells the policy that `decision` (made by hs_policy_place or hs_policy_plan_migrations on this
 * policy) was applied to `state` with hs_state_apply. Errors: HS_INVALID_ARGUMENT for a decision
 * of another policy or kind, or a state of another cluster. */
HS_API hs_status hs_policy_commit(hs_policy_t* policy, const hs_state_t* state,
                                  const hs_decision_t* decision);
/* Tells the policy that job `job_id` freed its resources in `state` (hs_state_record succeed,
 * fail or cancel, or a preempted victim requeued). Errors: HS_NOT_FOUND for a job the state does
 * not know, HS_INVALID_ARGUMENT for a state of another cluster. */
HS_API hs_status hs_policy_release(hs_policy_t* policy, const hs_state_t* state, uint64_t job_id);
/* Recomputes every index of the policy from `state` (after health changes, or after a restart
 * once the bind records are applied). Errors: HS_INVALID_ARGUMENT for a state of another
 * cluster. */
HS_API hs_status hs_policy_rebuild(hs_policy_t* policy, const hs_state_t* state);
/* Restores bindings kept across a restart: `binds` are bind records as hs_decision_bind_at
 * returned them for committed decisions (one entry per placed task; job_id, task, node, gpus,
 * gpu_count, milli_per_gpu and gpu_memory_mib are read, the names ignored; milli_per_gpu 0 or a
 * struct of the first hs_bind_t version means whole GPUs). Entries of a job need not be
 * adjacent. The jobs must be submitted to `state` and waiting; the binds are applied to `state`
 * and the policy is rebuilt from it (HiveD, capacity and FGD restore what they committed), all
 * or nothing. Errors, changing nothing: HS_INVALID_ARGUMENT naming the record (binds[i]) for an
 * unknown node, a GPU index past the node's GPUs, gpus NULL with a count, a struct too small, a
 * state of another cluster; the errors of hs_state_apply (HS_NOT_FOUND for an unknown job,
 * HS_FAILED_PRECONDITION for a GPU already taken or a job not waiting, HS_INVALID_ARGUMENT for a
 * share that does not match the task's request). Added in API version 4. */
HS_API hs_status hs_policy_replay(hs_policy_t* policy, hs_state_t* state, const hs_bind_t* binds,
                                  size_t count);
/* Tells the policy the time (ms) of the calls that follow (quota placements use it). */
HS_API hs_status hs_policy_set_time(hs_policy_t* policy, int64_t now_ms);

/* The registry: orderings (fifo, sjf, tiresias, drf) and placements (packer, gandiva, capacity,
 * hived, fgd, first-fit, random), in a fixed order. The _at functions fail with HS_OUT_OF_RANGE
 * past the end. */
HS_API size_t hs_policy_ordering_count(void);
HS_API hs_status hs_policy_ordering_at(size_t index, hs_policy_entry_t* out);
HS_API size_t hs_policy_placement_count(void);
HS_API hs_status hs_policy_placement_at(size_t index, hs_policy_entry_t* out);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_POLICY_H */
