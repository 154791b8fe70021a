// SPDX-License-Identifier: MIT
// HiveD configuration: cell types, the physical cluster spec and the virtual cluster spec.
//
// The shapes mirror microsoft/hivedscheduler's `physicalCluster` and `virtualClusters` config
// (pkg/api/types.go) as C++ values. A cell type names its single child type and how many
// children it has; a type that is only ever a child is the leaf (GPU) type. Each top-level
// physical cell starts a cell chain named after its type. Addresses are inferred as
// hivedscheduler's inferPhysicalCellSpec does (see infer_address rules in docs/hived.md): a
// missing address is the default index, top-level = position, child = parentIndex * childCount
// + i, reset to 0 below the node level; the node name is the last segment of the node-level
// cell's address and a leaf's GPU index is the last segment of its address.
//
// @see HiveD: Zhao et al., "HiveD: Sharing a GPU Cluster for Deep Learning with Guarantees",
//      OSDI'20; microsoft/hivedscheduler pkg/api/config.go, pkg/algorithm/config.go.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hetsched::hived {

/// One cell type: `child_count` children of type `child_type`; node_level marks the K8s node.
struct cell_type_spec {
  std::string name;
  std::string child_type;
  int child_count = 0;
  bool node_level = false;
  friend bool operator==(const cell_type_spec&, const cell_type_spec&) = default;
};

/// One physical cell. `cell_type` is required only for top-level cells (children take the child
/// type of their parent). Empty address = inferred default index; empty children = child_count
/// default children; otherwise exactly child_count children.
struct physical_cell_spec {
  std::string cell_type;
  std::string address;
  std::string pinned_id;
  std::vector<physical_cell_spec> children;
  /// true: `address` is the cell's full address as is (not appended to the parent's), as in a
  /// hivedscheduler config edited after address inference (its reconfiguration test renames a
  /// node this way). A top-level cell's address is always its full address.
  bool absolute_address = false;
  friend bool operator==(const physical_cell_spec&, const physical_cell_spec&) = default;
};

/// `count` preassigned cells of the type path "CHAIN[.T2...].TYPE" (first = chain, last = type).
struct virtual_cell_spec {
  std::string type_path;
  int count = 0;
  friend bool operator==(const virtual_cell_spec&, const virtual_cell_spec&) = default;
};

/// One virtual cluster: its preassigned cells (in spec order) and its pinned cell ids.
struct virtual_cluster_spec {
  std::string name;
  std::vector<virtual_cell_spec> virtual_cells;
  std::vector<std::string> pinned_cells;
  friend bool operator==(const virtual_cluster_spec&, const virtual_cluster_spec&) = default;
};

/// Options that are off by default (hivedscheduler behaviour) unless stated otherwise.
struct options {
  /// Search order of the chains of each leaf type. A leaf type not listed uses the default:
  /// descending chain name (the order hivedscheduler's own tests force on its Go map).
  std::map<std::string, std::vector<std::string>> chain_order;
  /// Off by default. When the VC's topology-aware packing finds no room for a guaranteed
  /// request, let a pod of n leaves use n / leaves(L) free unbound VC cells of one level L below
  /// the node level, bound by buddy allocation to one server (hivedscheduler issue pai#4029:
  /// a VC whose quota is "NODE.GPU" cells cannot run a 2-GPU pod). Uses free cells only (no
  /// preemption); nodes are tried in config order, pods in ascending leaf count.
  bool multi_cell_pods = false;
  /// Off by default. Accept hivedscheduler's unmerged v2 requests: pod_request::cell_type (whole
  /// cells of a non-leaf type), within_one_cell and child_groups (hierarchical groups, each
  /// inside one cell of a type). Such a group is placed by a search among the cells of the
  /// requested types in the VC's virtual cells (guaranteed) or the chain's physical cells
  /// (opportunistic), not by the topology-aware packing; multi_cell_pods does not apply to it.
  /// Off: a pod using any of these fields is a user error.
  bool cell_type_requests = false;
  friend bool operator==(const options&, const options&) = default;
};

/// Bounds that scheduler::create enforces before it allocates anything, so that a hostile or
/// mistyped config gets a named error instead of exhausting the stack, overflowing a count or
/// allocating gigabytes. The defaults are far above any real cluster (the performance target is
/// 131,072 GPUs; hivedscheduler's own configs have 3-6 levels). An embedder may lower them (the
/// fuzz target does).
struct config_limits {
  /// Levels of one cell-type chain, the leaf level included (GPU -> PCIe switch -> socket ->
  /// node -> rack -> row is 6).
  int max_levels = 64;
  /// Leaf cells (GPUs) of one cell type and of the whole physical cluster: 1,048,576.
  std::int64_t max_leaf_cells = std::int64_t{1} << 20;
  /// Physical cells of all levels of the whole physical cluster: 4,194,304. Virtual cells need
  /// no bound of their own: the initial VC assignment check runs before they are built, and
  /// VC cells that pass it fit into the physical cells.
  std::int64_t max_cells = std::int64_t{1} << 22;
  friend bool operator==(const config_limits&, const config_limits&) = default;
};

/// The whole configuration.
struct config {
  std::vector<cell_type_spec> cell_types;
  std::vector<physical_cell_spec> physical_cells;
  std::vector<virtual_cluster_spec> virtual_clusters;
  options opts;
  friend bool operator==(const config&, const config&) = default;
};

}  // namespace hetsched::hived
