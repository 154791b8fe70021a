// SPDX-License-Identifier: MIT
// JSON export and import of a node_topology (the inspector's --json format).
//
// The document is self-describing and versioned:
//   {"format": "hetsched-node-topology", "version": 1, "name": "dgx-a100",
//    "vertices": [{"id": 0, "kind": "machine", "name": "dgx-a100", "parent": null, "index": -1},
//                 {"id": 1, "kind": "package", "name": "Package0", "parent": 0, "index": 0,
//                  "uplink": {"kind": "internal", "count": 1, "generation": 0, "width": 0,
//                             "bandwidth_mb_s": 0}}, ...],
//    "links": [{"a": 9, "b": 20, "kind": "nvlink", "count": 2, "generation": 3, "width": 0,
//               "bandwidth_mb_s": 50000}, ...],
//    "views": {...}}
// Vertices appear in vertex-id order and "id" equals the position; "parent" is null for the root
// (vertex 0) and an earlier id otherwise; "uplink" (absent on the root) is the tree link to the
// parent. Optional vertex members, omitted when they hold their default: "pci_bus_id", "model",
// "cpuset" (empty), "memory_mib", "speed_mb_s", "fabric" (0), "numa" (-1). Kinds are the
// to_string() names of vertex_kind and link_kind. "links" holds only the non-tree links (NVLink,
// SMP, extra PCIe paths) in insertion order. "views" is derived data for readers, recomputed on
// import: "gpus" and "nics" (names by index), "relation" (nvidia-smi tokens over the endpoints,
// GPUs then NICs), "bandwidth_mb_s", "nccl_path" (NCCL path names) and "nccl_bandwidth_mb_s" (GPU
// by GPU matrices), "gpu_numa", "gpu_socket" (per GPU) and "affinity_groups" ([{"level":
// "pcie_switch", "parent": 0, "vertex": 12, "gpus": [0, 1]}, ...], parent being a group index).
#pragma once

#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>
#include <hetsched/topology/graph.hpp>

namespace hetsched {

/// The "format" tag of a topology document.
inline constexpr std::string_view topology_json_format = "hetsched-node-topology";
/// The "version" this build writes and reads.
inline constexpr int topology_json_version = 1;

/// Options of to_json(const node_topology&).
struct topology_json_options {
  /// Indent with two spaces (matrix rows and short objects stay on one line); else compact.
  bool pretty = true;
  /// Write the derived "views" object.
  bool include_views = true;
};

/// Returns `topology` as a JSON document in the format above. Deterministic: the same topology
/// and options always give the same bytes; import_topology_json() reads it back to an equal
/// topology.
[[nodiscard]] std::string to_json(const node_topology& topology,
                                  const topology_json_options& options = {});

/// Returns the topology described by the JSON document `text`, rebuilt through
/// node_topology_builder (so the views are recomputed and "views" is only checked to be an
/// object). Errors name the JSON path, e.g. "vertices[12].uplink.kind: unknown link kind 'pcix'":
/// invalid_argument for malformed JSON, a wrong format tag or version, a mistyped, missing or
/// unknown member, an unknown kind or a parent that does not precede its vertex; out_of_range for
/// numbers outside their field's range or too many vertices; not_found for a link to a vertex
/// that does not exist; plus any error of node_topology_builder::build().
[[nodiscard]] result<node_topology> import_topology_json(std::string_view text);

}  // namespace hetsched
