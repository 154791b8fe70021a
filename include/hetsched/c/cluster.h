/* SPDX-License-Identifier: MIT */
/* hetsched C API: clusters built from a built-in template or cluster, or from topology text.
 *
 * An hs_cluster_t is immutable once built: nodes (dense indices 0..n-1, in build order) with
 * their GPUs (node-local indices 0..k-1) and the affinity tree (racks, tiers) the packer uses.
 * Strings it returns (node names, GPU types) live as long as the cluster. A cluster may be shared
 * by several policy objects; each keeps its own reference, so hs_cluster_free() may be called
 * while they are alive. Const accessors are safe to call concurrently. */
#ifndef HETSCHED_C_CLUSTER_H
#define HETSCHED_C_CLUSTER_H

#include <hetsched/c/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_cluster hs_cluster_t;

/* Options of hs_cluster_from_template() and hs_cluster_from_topology_text(). Set struct_size to
 * sizeof(hs_cluster_options_t); zero every field you do not use. */
typedef struct hs_cluster_options {
  uint32_t struct_size;
  uint32_t node_count;     /* nodes of the template (0 means 1) */
  uint32_t nodes_per_rack; /* 0: no racks; else racks of this many consecutive nodes */
  const char* name_prefix; /* nodes are "<prefix>-<k>"; NULL or "": the topology's name */
  const char* gpu_model;   /* topology text only: model of every GPU, e.g. "A100-SXM4-80GB" */
  int32_t allow_partial;   /* nvidia-smi text only: != 0 accepts matrices with rows missing */
} hs_cluster_options_t;

/* Builds `node_count` nodes of built-in node template `template_name` ("dgx1-v100", "dgx2",
 * "dgx-a100", "hgx-h100", "pcie-8gpu", "workstation-4gpu"). `options` may be NULL (one node).
 * Errors: HS_NOT_FOUND for an unknown template (the message lists the valid names). */
HS_API hs_status hs_cluster_from_template(const char* template_name,
                                          const hs_cluster_options_t* options, hs_cluster_t** out);

/* Builds a built-in cluster: "demo", "superpod-a100", "h100-nvlink-pod", "a100-100k".
 * Errors: HS_NOT_FOUND for an unknown name. */
HS_API hs_status hs_cluster_builtin(const char* name, hs_cluster_t** out);

/* Builds `node_count` nodes of the node topology in `text` (`length` bytes, need not be
 * NUL-terminated): `nvidia-smi topo -m` output, NCCL topology XML or hetsched topology JSON, told
 * apart by content. Errors: HS_PARSE_ERROR for malformed or unrecognised text (the message names
 * the line or JSON path), HS_UNSUPPORTED for hwloc XML (use the C++ hetsched::hwloc target),
 * HS_OUT_OF_RANGE for absurd sizes. */
HS_API hs_status hs_cluster_from_topology_text(const char* text, size_t length,
                                               const hs_cluster_options_t* options,
                                               hs_cluster_t** out);

/* Releases the caller's reference. NULL is a no-op. */
HS_API void hs_cluster_free(hs_cluster_t* cluster);

/* Returns the number of nodes (0 for NULL). */
HS_API size_t hs_cluster_node_count(const hs_cluster_t* cluster);
/* Returns the number of GPUs over all nodes (0 for NULL). */
HS_API size_t hs_cluster_gpu_count(const hs_cluster_t* cluster);
/* Returns the cluster's name in *out. */
HS_API hs_status hs_cluster_name(const hs_cluster_t* cluster, const char** out);
/* Returns node `node`'s name in *out. Errors: HS_OUT_OF_RANGE for node >= node count. */
HS_API hs_status hs_cluster_node_name(const hs_cluster_t* cluster, uint32_t node, const char** out);
/* Returns node `node`'s GPU count in *out. Errors: HS_OUT_OF_RANGE. */
HS_API hs_status hs_cluster_node_gpu_count(const hs_cluster_t* cluster, uint32_t node,
                                           uint32_t* out);
/* Returns the model of GPU `gpu` of node `node` ("" if unknown). Errors: HS_OUT_OF_RANGE. */
HS_API hs_status hs_cluster_gpu_type(const hs_cluster_t* cluster, uint32_t node, uint32_t gpu,
                                     const char** out);
/* Returns the index of the node named `name`. Errors: HS_NOT_FOUND naming it. */
HS_API hs_status hs_cluster_find_node(const hs_cluster_t* cluster, const char* name, uint32_t* out);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_CLUSTER_H */
