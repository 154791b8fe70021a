// SPDX-License-Identifier: MIT
// openb_cluster: the cluster of an Alibaba openb node list (the FGD trace's 1,213 GPU nodes, or
// all 1,523 nodes), built with the topology builder so that every placement (hived included) can
// run on it.
//
// Each distinct node shape (CPU, memory, GPU count, model) becomes one node topology: a machine
// with one socket of cpu_milli / 1000 cores, one NUMA node holding the memory, and one GPU per
// PCIe host bridge (the list gives no topology). GPU models keep their openb names (G2, G3, T4,
// P100, V100M16, V100M32, A10) as gpu types, so that the pods' gpu_spec constraints name them;
// device memory comes from the catalogue model each stands for (openb_gpu_catalogue_model()).
// The list has no racks: the nodes are one flat group under the cluster.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/workload/openb.hpp>

namespace hetsched::workload {

/// Returns the catalogue GPU model an openb model stands for, for its memory: P100 ->
/// P100-PCIE-16GB, T4 -> T4-16GB, V100M16 -> V100-SXM2-16GB, V100M32 -> V100-SXM2-32GB, A10 ->
/// A10-24GB; nullopt for the anonymised G2 and G3 and any other name (memory unknown, 0).
[[nodiscard]] std::optional<gpu_type> openb_gpu_catalogue_model(std::string_view model) noexcept;

/// Returns the cluster topology of `nodes` (file order), named `name`. Node k is named
/// "<sn>-0" (the builder's "<prefix>-<index>" with the node's sn as prefix), so the names sort
/// like the sns. Errors (invalid_argument, naming the node): no nodes, cpu_milli not a positive
/// multiple of 1000, memory_mib < 1, a GPU model that is not a valid gpu type name; a repeated
/// sn (already_exists); the builder's. O(nodes log nodes).
[[nodiscard]] result<cluster_topology> openb_cluster_topology(std::span<const openb_node> nodes,
                                                              std::string name = "openb");

}  // namespace hetsched::workload
