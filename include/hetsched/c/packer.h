/* SPDX-License-Identifier: MIT */
/* hetsched C API: the topology-aware gang packer (hetsched::gang_placer + affinity packer).
 *
 * An hs_packer_t tracks the free GPUs of one cluster. hs_packer_place() only decides: it returns
 * a decision with one bind per task (or one deferral) and changes nothing. hs_packer_commit()
 * takes the decision's GPUs; hs_packer_release() frees a committed job's GPUs. Placement rules
 * and tie-breaks are those of gang_placer::place() (docs/packer.md): a locality-sensitive gang
 * goes into the lowest group (node, rack, tier) that can hold it, best fit first; GPUs inside a
 * node are picked by the affinity packer. Deterministic. Not internally synchronized. */
#ifndef HETSCHED_C_PACKER_H
#define HETSCHED_C_PACKER_H

#include <hetsched/c/cluster.h>
#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_packer hs_packer_t;

typedef enum hs_locality {
  HS_LOCALITY_CONSOLIDATE = 0, /* topology sensitive: pack tightly */
  HS_LOCALITY_SPREAD = 1       /* insensitive: fullest nodes first, weakest-linked GPUs */
} hs_locality;

/* The highest level a gang may cross (values match hetsched::affinity_level). */
typedef enum hs_level {
  HS_LEVEL_NODE = 5,
  HS_LEVEL_NVLINK_DOMAIN = 6,
  HS_LEVEL_RACK = 7,
  HS_LEVEL_NETWORK_TIER = 8,
  HS_LEVEL_CLUSTER = 9
} hs_level;

/* A gang: `tasks` tasks of `gpus_per_task` GPUs, each task inside one node. */
typedef struct hs_gang {
  uint32_t struct_size;
  uint64_t job_id;        /* 1..UINT32_MAX-1, unique among committed jobs */
  uint32_t tasks;         /* >= 1 */
  uint32_t gpus_per_task; /* >= 1 */
  hs_locality locality;
  hs_level max_level; /* 0 means HS_LEVEL_CLUSTER (no limit) */
  uint32_t max_tier;  /* with HS_LEVEL_NETWORK_TIER: the tier (1 = first above racks) */
} hs_gang_t;

/* Makes a packer over `cluster` with every GPU free. */
HS_API hs_status hs_packer_new(const hs_cluster_t* cluster, hs_packer_t** out);
/* Releases the packer. NULL is a no-op. */
HS_API void hs_packer_free(hs_packer_t* packer);

/* Decides where `gang` goes given the free GPUs; changes nothing. The decision holds one bind per
 * task (task 0.. in node order, GPUs ascending) or, when it cannot be placed now, one deferral
 * (insufficient_capacity, fragmented or topology_unsatisfiable). Errors: HS_INVALID_ARGUMENT for
 * zero sizes or a level the cluster does not have, HS_ALREADY_EXISTS for a committed job id. */
HS_API hs_status hs_packer_place(const hs_packer_t* packer, const hs_gang_t* gang,
                                 hs_decision_t** out);

/* Takes the GPUs of every bind of `decision` (made by hs_packer_place on this packer). A decision
 * with no binds is a no-op. Errors: HS_CONFLICT if a GPU is no longer free, HS_ALREADY_EXISTS if
 * the job is already committed, HS_INVALID_ARGUMENT for a decision of another policy. A decision
 * of hs_packer_grow_shrink frees the GPUs of its releases and takes those of its binds, all or
 * nothing: HS_NOT_FOUND if a job is no longer committed, HS_CONFLICT if a released task is no
 * longer held where the decision says, a grown task is already placed or a GPU is not free,
 * HS_FAILED_PRECONDITION if a release would leave a job no task. */
HS_API hs_status hs_packer_commit(hs_packer_t* packer, const hs_decision_t* decision);

/* Frees the GPUs of committed job `job_id`. Errors: HS_NOT_FOUND. */
HS_API hs_status hs_packer_release(hs_packer_t* packer, uint64_t job_id);

/* An elastic job for hs_packer_grow_shrink (API version 2): a committed job whose tasks
 * base_tasks..max_tasks-1 are optional, each of the job's GPUs per task. */
typedef struct hs_elastic_job {
  uint32_t struct_size;
  uint64_t job_id;     /* a committed job (placed by hs_packer_place or grown before) */
  uint32_t base_tasks; /* >= 1: tasks 0..base_tasks-1 are needed */
  uint32_t max_tasks;  /* >= base_tasks and above every placed task index; <= 2^20 */
} hs_elastic_job_t;

/* Tunables of hs_packer_grow_shrink (API version 2). */
typedef struct hs_grow_shrink_params {
  uint32_t struct_size;
  uint32_t waiting_gpus;   /* GPUs the caller's queued jobs ask for: > 0 shrinks, 0 grows */
  uint32_t reserve_gpus;   /* free GPUs never offered to growing jobs */
  uint32_t max_grow_tasks; /* the most optional tasks bound in one plan; 0: no limit */
} hs_grow_shrink_params_t;

/* Gandiva's grow-shrink (hetsched::grow_shrink_planner, docs/gandiva.md) over the packer's
 * committed jobs, changing nothing. With waiting_gpus > 0 the decision holds releases (one entry
 * per task; hs_decision_release_at): elastic jobs give back their highest placed optional tasks,
 * the job with the most GPUs in placed optional tasks first (then the higher job id), until the
 * free plus released GPUs reach waiting_gpus or no optional task is left. With waiting_gpus 0 it
 * holds binds: while more than reserve_gpus GPUs are free, the elastic job with the fewest GPUs in
 * placed optional tasks (then the lower job id) places its lowest unplaced optional task, first
 * on the nodes it runs on (most of its GPUs first, then lower node index), then on the node with
 * the fewest free GPUs (then lower index); GPUs inside a node by the affinity packer. Commit it
 * with hs_packer_commit (releases free GPUs, binds take them; the job stays committed). `jobs`
 * may be NULL with count 0; params may be NULL (all zero). Cost: a model of the cluster and the
 * committed jobs is built per call, O(nodes + GPUs + placed tasks). Errors (nothing changed):
 * HS_NOT_FOUND for a job that is not committed, HS_INVALID_ARGUMENT for a repeated job,
 * base_tasks 0, max_tasks below base_tasks or not above a placed task index, or a struct_size too
 * small; HS_OUT_OF_RANGE for max_tasks above 2^20. */
HS_API hs_status hs_packer_grow_shrink(const hs_packer_t* packer, const hs_elastic_job_t* jobs,
                                       size_t count, const hs_grow_shrink_params_t* params,
                                       hs_decision_t** out);

/* Returns the number of free GPUs of node `node` in *out. Errors: HS_OUT_OF_RANGE. */
HS_API hs_status hs_packer_free_gpu_count(const hs_packer_t* packer, uint32_t node, uint32_t* out);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_PACKER_H */
