// SPDX-License-Identifier: MIT
// HiveD cells derived from the topology model, so "HiveD on this cluster" needs no hand-written
// cell hierarchy.
//
// derive_cells() turns a cluster_topology into cell types and physical cells: below the node, the
// node template's affinity tree (GPU -> PCIe switch -> host bridge / NUMA -> socket -> node) when
// it is regular (every group at one depth has the same level and number of children), else a
// flat node -> GPU type; above the node, racks of one template and one size become rack cells.
// Mapping to the model: a HiveD node name is the cluster_node name (cluster_topology::find_node),
// a leaf index is the GPU index within the node (device id = first_gpu + index). Type names are
// "<template>/<level>" (dots replaced by '_'; a level that repeats, such as DGX-2's nested PCIe
// switches, is "<template>/<level>2" from its second tier up), the node type "<template>/node",
// racks "<template>/rack<k>" for k nodes, and the leaf type is the GPU model when every GPU of
// the template has the same one, else "<template>/gpu".
#pragma once

#include <hetsched/model/result.hpp>
#include <hetsched/policies/hived_config.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched::hived {

/// How high a top-level cell may reach.
enum class top_cell_level : unsigned char { node, rack };

/// Options of derive_cells().
struct derive_options {
  top_cell_level top = top_cell_level::rack;
};

/// Returns cell types and physical cells for `topology` (no virtual clusters: add them, then
/// call scheduler::create). Deterministic: types in order of first use, cells in node order.
/// Errors: invalid_argument for a template without GPUs.
[[nodiscard]] result<config> derive_cells(const cluster_topology& topology,
                                          const derive_options& opts = {});

}  // namespace hetsched::hived
