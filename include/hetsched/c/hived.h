/* SPDX-License-Identifier: MIT */
/* hetsched C API: HiveD (buddy cells with virtual-cluster guarantees), decision-compatible with
 * microsoft/hivedscheduler.
 *
 * Build an hs_hived_config_t (cell types, physical cells, virtual clusters), or derive the cells
 * from an hs_cluster_t, then create the scheduler. hs_hived_schedule() answers bind, preempt or
 * wait for one pod; hs_hived_commit() commits a bind (the bind record stays inside the scheduler,
 * keyed by pod name); hs_hived_release() releases a committed pod. Like hivedscheduler's filter
 * phase, schedule may record lazy-preemption and (in the preempting phase) preemption state; it
 * never binds. hs_hived_what_if() answers what schedule would return and do (placement with cells,
 * victims with their groups, lazy preemptions, preemption state, or why the pod waits) with no
 * side effect at all. Determinism and tie-breaks: docs/hived.md. Not internally synchronized. */
#ifndef HETSCHED_C_HIVED_H
#define HETSCHED_C_HIVED_H

#include <hetsched/c/cluster.h>
#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_hived_config hs_hived_config_t;
typedef struct hs_hived hs_hived_t;

/* The index of a physical cell inside a config (returned by hs_hived_config_add_physical_cell).
 * HS_HIVED_TOP_LEVEL as a parent adds a top-level cell. */
#define HS_HIVED_TOP_LEVEL (-1)

/* Makes an empty config. */
HS_API hs_status hs_hived_config_new(hs_hived_config_t** out);
/* Releases a config. NULL is a no-op. */
HS_API void hs_hived_config_free(hs_hived_config_t* config);

/* Adds cell type `name` made of `child_count` cells of `child_type`; `node_level` != 0 marks the
 * Kubernetes node level. A type that is only a child (e.g. "GPU") is a leaf type. Errors:
 * HS_INVALID_ARGUMENT for an empty name or child_count < 1, HS_ALREADY_EXISTS for a repeated name.
 */
HS_API hs_status hs_hived_config_add_cell_type(hs_hived_config_t* config, const char* name,
                                               const char* child_type, int32_t child_count,
                                               int32_t node_level);

/* Adds a physical cell below cell `parent` (an index returned earlier) or at the top level
 * (HS_HIVED_TOP_LEVEL, `cell_type` required; children take their parent's child type and may pass
 * NULL). `address` may be NULL or "" for the inferred default (node-level cells: the node name).
 * A cell given no children gets its type's default children; otherwise add exactly child_count
 * children. Returns the new cell's index in *out_index (may be NULL). Errors: HS_NOT_FOUND for an
 * unknown parent index, HS_INVALID_ARGUMENT for a top-level cell without type. */
HS_API hs_status hs_hived_config_add_physical_cell(hs_hived_config_t* config, int32_t parent,
                                                   const char* cell_type, const char* address,
                                                   int32_t* out_index);

/* Pins physical cell `index` under pinned id `pinned_id`. Errors: HS_NOT_FOUND. */
HS_API hs_status hs_hived_config_pin_physical_cell(hs_hived_config_t* config, int32_t index,
                                                   const char* pinned_id);

/* Adds virtual cluster `vc` if new, then `count` preassigned cells of type path
 * "CHAIN[.TYPE...]" (e.g. "RACK.NODE"); count 0 only declares the VC. Errors:
 * HS_INVALID_ARGUMENT for an empty name or path, or count < 0. */
HS_API hs_status hs_hived_config_add_virtual_cells(hs_hived_config_t* config, const char* vc,
                                                   const char* type_path, int32_t count);

/* Gives virtual cluster `vc` (added if new) the pinned cell `pinned_id`. */
HS_API hs_status hs_hived_config_add_pinned_cells(hs_hived_config_t* config, const char* vc,
                                                  const char* pinned_id);

/* Replaces the config's cell types and physical cells by those derived from `cluster`'s topology
 * (hetsched::hived::derive_cells: GPU -> PCIe switch -> ... -> node, types named
 * "<template>/<level>"); with `rack_cells` != 0 racks of one template and size become top-level
 * rack cells, with 0 every node is a top-level cell. Virtual clusters are kept. Node names are
 * the cluster's node names, leaf indices its GPU indices. Errors: HS_INVALID_ARGUMENT for a
 * template without GPUs; on error the config is unchanged. */
HS_API hs_status hs_hived_config_derive_cells(hs_hived_config_t* config,
                                              const hs_cluster_t* cluster, int32_t rack_cells);

/* Makes a config from JSON text (`length` bytes, need not be NUL-terminated) in
 * microsoft/hivedscheduler's config shape: {"physicalCluster": {"cellTypes": {...},
 * "physicalCells": [...]}, "virtualClusters": {...}} plus hetsched's options under "hetsched"
 * (docs/hived.md). Physical cells get indices in depth-first document order, so the builder
 * functions can extend the result. Errors: HS_PARSE_ERROR naming the JSON path or line and column,
 * HS_OUT_OF_RANGE for counts or sizes beyond the limits. */
HS_API hs_status hs_hived_config_from_json(const char* text, size_t length,
                                           hs_hived_config_t** out);

/* Returns the config as JSON text in the same shape (two-space indented, deterministic) in *out,
 * owned by the config and valid until its next mutating call or hs_hived_config_free. */
HS_API hs_status hs_hived_config_to_json(hs_hived_config_t* config, const char** out);

/* Turns option `name` on (enabled != 0) or off: "multiCellPods" (pai#4029) or
 * "cellTypeRequests" (cell-type, within-one-cell and child-group requests), the names of the
 * JSON config's "hetsched" section (API version 2). Errors: HS_NOT_FOUND for another name. */
HS_API hs_status hs_hived_config_set_option(hs_hived_config_t* config, const char* name,
                                            int32_t enabled);

/* Returns the number of cell types and the name of cell type `index` (leaf types included only
 * when declared). Useful after hs_hived_config_derive_cells. */
HS_API size_t hs_hived_config_cell_type_count(const hs_hived_config_t* config);
HS_API hs_status hs_hived_config_cell_type_name(const hs_hived_config_t* config, size_t index,
                                                const char** out);

/* Builds a scheduler from `config` (which stays owned by the caller and may be freed) and marks
 * every node healthy. Errors: HS_INVALID_ARGUMENT naming the offending type, cell, VC or pinned id;
 * HS_FAILED_PRECONDITION "Illegal initial VC assignment: ..." when the VCs do not fit. */
HS_API hs_status hs_hived_new(const hs_hived_config_t* config, hs_hived_t** out);
/* Releases a scheduler. NULL is a no-op. */
HS_API void hs_hived_free(hs_hived_t* hived);

/* One affinity-group member: `pods` pods of `leaf_cells` leaves each. */
typedef struct hs_hived_member {
  int32_t pods;
  int32_t leaf_cells;
} hs_hived_member_t;

typedef enum hs_hived_phase {
  HS_HIVED_FILTERING = 0, /* never creates preemption state */
  HS_HIVED_PREEMPTING = 1 /* may start a preemption (victims in the decision) */
} hs_hived_phase;

/* A child group of a hierarchical affinity group (API version 2; the unmerged v2 API's
 * childGroups, hetsched::hived::group_spec): its own members, the cell type all its pods (its
 * descendants' included) must sit inside one cell of (NULL or "": no constraint beyond its
 * parent's) and its own child groups. A fixed layout used in arrays, like hs_hived_member_t. */
typedef struct hs_hived_group {
  const hs_hived_member_t* members; /* NULL with member_count 0: no own pods */
  uint32_t member_count;
  const char* within_one_cell;
  const struct hs_hived_group* child_groups; /* NULL with child_group_count 0: none */
  uint32_t child_group_count;
} hs_hived_group_t;

/* The deepest nesting of child groups a pod may pass (deeper is HS_INVALID_ARGUMENT). */
#define HS_HIVED_MAX_GROUP_DEPTH 64

/* A pod's scheduling spec (hivedscheduler PodSchedulingSpec). Set struct_size. The fields from
 * cell_type on (API version 2) need the config option cellTypeRequests
 * (hs_hived_config_set_option, or "hetsched": {"cellTypeRequests": true} in JSON); without it a
 * pod using one is HS_INVALID_ARGUMENT. A caller built against version 1 (a smaller struct_size)
 * reads them as unset. Semantics, errors and the placement search: docs/hived.md, "Options". */
typedef struct hs_hived_pod {
  uint32_t struct_size;
  const char* name; /* unique pod name */
  const char* vc;
  int32_t priority;      /* 0..1000 guaranteed, -1 opportunistic */
  const char* leaf_type; /* NULL or "": any leaf type */
  int32_t leaf_cells;    /* leaves (GPUs) of this pod */
  const char* group;     /* affinity group; NULL or "": a one-pod group named after the pod */
  const hs_hived_member_t* members; /* the group's members; NULL with member_count 0: one pod */
  uint32_t member_count;
  const char* pinned_cell; /* NULL or "": none */
  int32_t lazy_preemption; /* != 0: may be lazily preempted */
  /* API version 2: */
  const char* cell_type;       /* NULL or "": leaves; else leaf_cells and member sizes count
                                  whole cells of this non-leaf type (at or below the node level) */
  const char* within_one_cell; /* NULL or "": none; else the whole group sits in one such cell */
  const hs_hived_group_t* child_groups; /* NULL with child_group_count 0: a flat group */
  uint32_t child_group_count;
} hs_hived_pod_t;

/* Decides for `pod`. The decision holds one bind (task 0, node name, GPU indices in placement
 * order; node is UINT32_MAX), or preemptions (victim pod name and node), or one HS_DEFER_WAIT
 * deferral with hivedscheduler's wait reason. Errors (no state changed): HS_NOT_FOUND for an
 * unknown VC (naming it) or pinned cell, HS_INVALID_ARGUMENT for a bad leaf type, priority or
 * group, HS_ALREADY_EXISTS for a pod already committed. */
HS_API hs_status hs_hived_schedule(hs_hived_t* hived, const hs_hived_pod_t* pod,
                                   hs_hived_phase phase, hs_decision_t** out);

/* Commits the bind of `decision` (from hs_hived_schedule on this scheduler). Errors:
 * HS_INVALID_ARGUMENT if the decision holds no HiveD bind, HS_ALREADY_EXISTS if the pod is
 * committed, plus the scheduler's own errors. */
HS_API hs_status hs_hived_commit(hs_hived_t* hived, const hs_decision_t* decision);

/* Releases committed pod `pod_name`; its group goes when all its pods are gone. Errors:
 * HS_NOT_FOUND. */
HS_API hs_status hs_hived_release(hs_hived_t* hived, const char* pod_name);

/* Marks node `node` healthy (healthy != 0) or bad. Errors: HS_NOT_FOUND for an unknown node. */
HS_API hs_status hs_hived_set_node_health(hs_hived_t* hived, const char* node, int32_t healthy);

/* What hs_hived_schedule(hived, pod, phase) would answer and do now, with no side effect (not
 * even on cached orders; hs_hived_state_digest is unchanged). The decision holds exactly the
 * binds, preemptions or deferral hs_hived_schedule would return; it cannot be committed
 * (hs_hived_commit: HS_INVALID_ARGUMENT). Read the details with hs_decision_hived_what_if and the
 * hs_decision_hived_*_at accessors. Cost: a copy of the allocator state. Errors: those of
 * hs_hived_schedule, nothing changed. */
HS_API hs_status hs_hived_what_if(const hs_hived_t* hived, const hs_hived_pod_t* pod,
                                  hs_hived_phase phase, hs_decision_t** out);

typedef enum hs_hived_outcome {
  HS_HIVED_BIND = 0,
  HS_HIVED_PREEMPT = 1,
  HS_HIVED_WAIT = 2
} hs_hived_outcome;

/* The state of the pod's affinity group before the call. */
typedef enum hs_hived_group_state {
  HS_HIVED_GROUP_NEW = 0, /* no such group: schedule would create it */
  HS_HIVED_GROUP_ALLOCATED = 1,
  HS_HIVED_GROUP_PREEMPTING = 2,
  HS_HIVED_GROUP_BEING_PREEMPTED = 3
} hs_hived_group_state;

/* Summary of a what-if. Strings live as long as the decision. Set struct_size. */
typedef struct hs_hived_what_if {
  uint32_t struct_size;
  int32_t outcome;                     /* hs_hived_outcome */
  const char* group;                   /* the pod's affinity group */
  int32_t existing_group;              /* hs_hived_group_state */
  const char* chain;                   /* chain of the placement; "" on wait */
  const char* wait_reason;             /* hivedscheduler's wait reason; "" unless waiting */
  uint32_t pod_count;                  /* placed pods of the group (hs_decision_hived_pod_at) */
  uint32_t victim_count;               /* hs_decision_hived_victim_at */
  uint32_t lazy_preempted_count;       /* hs_decision_hived_lazy_preempted_at */
  uint32_t cancelled_preemption_count; /* hs_decision_hived_cancelled_preemption_at */
  int32_t starts_preemption;           /* 1: schedule would record the group as preempting */
} hs_hived_what_if_t;

/* Copies the summary of a what-if decision. Errors: HS_INVALID_ARGUMENT if `decision` was not made
 * by hs_hived_what_if or out->struct_size is too small. */
HS_API hs_status hs_decision_hived_what_if(const hs_decision_t* decision, hs_hived_what_if_t* out);

/* One pod of the group where the what-if places it (bind, or preempt: where it goes once the
 * victims are gone). Pods come by member (ascending leaf count), then index. Arrays have
 * gpu_count entries in placement order and live as long as the decision. Set struct_size. */
typedef struct hs_hived_placed_pod {
  uint32_t struct_size;
  int32_t leaf_cells; /* leaves per pod of its member */
  int32_t index;      /* pod index within that member */
  const char* node;
  const uint32_t* gpus; /* GPU (leaf) indices */
  uint32_t gpu_count;
  const char* const* physical_cells;    /* physical leaf cell addresses */
  const char* const* virtual_cells;     /* VC leaf cell addresses; "" for opportunistic */
  const char* const* preassigned_types; /* VC preassigned cell types; "" for opportunistic */
} hs_hived_placed_pod_t;

/* A pod the what-if would preempt, with its group as it stands now. Set struct_size. */
typedef struct hs_hived_victim {
  uint32_t struct_size;
  const char* pod;
  const char* node;
  const char* group;
  const char* vc;
  int32_t priority;             /* the victim group's priority; -1 opportunistic */
  int32_t guaranteed_placement; /* 0: opportunistic or already lazily preempted */
} hs_hived_victim_t;

/* Copy entry `index` of a what-if decision. Errors: HS_INVALID_ARGUMENT (not a HiveD what-if,
 * struct_size too small), HS_OUT_OF_RANGE (index past the end). Victims are sorted by node, then
 * pod; group names ascending. */
HS_API hs_status hs_decision_hived_pod_at(const hs_decision_t* decision, size_t index,
                                          hs_hived_placed_pod_t* out);
HS_API hs_status hs_decision_hived_victim_at(const hs_decision_t* decision, size_t index,
                                             hs_hived_victim_t* out);
/* Groups whose guaranteed placement schedule would drop by lazy preemption (they keep running
 * as opportunistic). */
HS_API hs_status hs_decision_hived_lazy_preempted_at(const hs_decision_t* decision, size_t index,
                                                     const char** group);
/* Preempting groups whose reservation schedule would delete. */
HS_API hs_status hs_decision_hived_cancelled_preemption_at(const hs_decision_t* decision,
                                                           size_t index, const char** group);

/* Returns a digest of the scheduler's whole allocator state (cells, free lists, views and their
 * orders, groups, bind records); equal states give equal digests. 0 for NULL. For checking that
 * a call changed nothing. */
HS_API uint64_t hs_hived_state_digest(const hs_hived_t* hived);

/* Returns the number of nodes and node `index`'s name (first-appearance order). */
HS_API size_t hs_hived_node_count(const hs_hived_t* hived);
HS_API hs_status hs_hived_node_name(const hs_hived_t* hived, size_t index, const char** out);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_HIVED_H */
