// SPDX-License-Identifier: MIT
// Derived views of a node topology: pair relations, bandwidths, NCCL paths and affinity groups.
//
// Computed once when a node_topology is built and shared by every copy (a 12,500-node cluster of
// one template computes them once). Endpoints are the GPUs (by GPU index) followed by the NICs (by
// NIC index), the row order of `nvidia-smi topo -m`. Relations follow the rules of
// reference/topology_and_packing.md §2 on the locality tree: PIX when both devices sit directly
// below the same PCIe switch, PXB when their lowest common ancestor is a PCIe switch otherwise, PHB
// for a host bridge, NODE within one NUMA node, SYS across NUMA nodes. NVLinks are counted directly
// and through an NVSwitch fabric (min of both sides' links to the fabric), which gives every DGX-2
// GPU pair NV6 and 150 GB/s.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

class node_topology;

/// The PCIe-level relation of two endpoints, closest first (NVML's topology levels).
enum class pcie_relation : std::uint8_t {
  self,     ///< X: the same device.
  pix,      ///< At most a single PCIe switch between them.
  pxb,      ///< Several PCIe switches, no host bridge.
  phb,      ///< Through one PCIe host bridge.
  node,     ///< Between host bridges within one NUMA node.
  sys,      ///< Across the SMP interconnect between NUMA nodes.
  unknown,  ///< Not known (nvidia-smi topo -m hides the PCIe relation of NVLinked pairs).
};

/// Returns the nvidia-smi token of `r`: "X", "PIX", "PXB", "PHB", "NODE", "SYS" or "?".
[[nodiscard]] std::string_view to_string(pcie_relation r) noexcept;

/// The relation of an endpoint pair: PCIe level plus bonded NVLink count.
struct pair_relation {
  pcie_relation pcie = pcie_relation::unknown;
  /// NVLinks between the pair, directly or through an NVSwitch fabric; 0 if none.
  std::uint16_t nvlinks = 0;

  /// Returns the `nvidia-smi topo -m` token: "NV<n>" if nvlinks > 0, else to_string(pcie).
  [[nodiscard]] std::string token() const;

  friend bool operator==(const pair_relation&, const pair_relation&) = default;
};

/// Parses one `nvidia-smi topo -m` cell: X, NV<n> (1..255), PIX, PXB, PHB, NODE, SYS.
/// Errors: invalid_argument naming the token.
[[nodiscard]] result<pair_relation> parse_relation_token(std::string_view token);

/// NCCL path types (src/graph/topo.h), closest first.
enum class nccl_path : std::uint8_t {
  loc = 0,
  nvl = 1,
  nvb = 2,
  c2c = 3,
  pix = 4,
  pxb = 5,
  p2c = 6,
  pxn = 7,
  phb = 8,
  sys = 9,
  net = 10,
  dis = 11,
};

/// Returns NCCL's name of `p`: "LOC", "NVL", "NVB", ..., "DIS".
[[nodiscard]] std::string_view to_string(nccl_path p) noexcept;

/// A level of the affinity tree, from the GPU up to the whole cluster.
enum class affinity_level : std::uint8_t {
  gpu,
  pcie_switch,
  host_bridge,
  numa_node,
  socket,
  node,
  nvlink_domain,
  rack,
  network_tier,
  cluster,
};

/// Returns the lower-case name of `level`, e.g. "pcie_switch".
[[nodiscard]] std::string_view to_string(affinity_level level) noexcept;

/// One group of the per-node affinity tree: the GPUs that share a level.
struct affinity_group {
  affinity_level level = affinity_level::gpu;
  /// Index of the parent group; the root (the node) has parent == its own index.
  std::uint32_t parent = 0;
  /// Child groups, in ascending order of their smallest GPU index.
  std::vector<std::uint32_t> children;
  /// GPU indices in the group, ascending.
  std::vector<std::uint32_t> gpus;
  /// The topology vertex that defines the group (the lowest one of a collapsed chain).
  vertex_id vertex = vertex_id::invalid();

  friend bool operator==(const affinity_group&, const affinity_group&) = default;
};

/// Derived, read-only views of one node topology.
class node_views {
 public:
  using bandwidth_matrix_type = Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic>;

  node_views() = default;
  /// Computes every view of `topology` (called by node_topology_builder::build()).
  /// Complexity: O(E^2 * depth) for E endpoints plus one BFS per GPU.
  explicit node_views(const node_topology& topology);

  [[nodiscard]] std::size_t gpu_count() const noexcept { return gpu_count_; }
  [[nodiscard]] std::size_t nic_count() const noexcept { return endpoints_.size() - gpu_count_; }
  /// Returns the endpoints: GPUs by index, then NICs by index.
  [[nodiscard]] std::span<const vertex_id> endpoints() const noexcept { return endpoints_; }

  /// Returns the relation of endpoints i and j. Precondition: both < endpoints().size().
  [[nodiscard]] const pair_relation& relation(std::size_t i, std::size_t j) const noexcept {
    return relations_[i * endpoints_.size() + j];
  }
  /// Returns the unidirectional bandwidth in MB/s of the best path between GPUs i and j (highest
  /// bottleneck bandwidth over the links' own bandwidths; NVSwitch fabrics count as one switch);
  /// 0 on the diagonal.
  [[nodiscard]] std::int64_t bandwidth_mb_s(std::size_t i, std::size_t j) const noexcept {
    return bandwidth_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
  }
  /// Returns the GPU pair bandwidth matrix (MB/s), gpu_count() square.
  [[nodiscard]] const bandwidth_matrix_type& bandwidth_matrix() const noexcept {
    return bandwidth_;
  }
  /// Returns NCCL's path type between GPUs i and j.
  [[nodiscard]] nccl_path path_type(std::size_t i, std::size_t j) const noexcept {
    return paths_[i * gpu_count_ + j];
  }
  /// Returns NCCL's path bandwidth in MB/s between GPUs i and j: the bottleneck of the path NCCL
  /// would choose (lowest path type, then highest bandwidth, then fewest hops) using NCCL's
  /// app-level link bandwidths (NVLink per link by compute capability, PCIe width*speed/80,
  /// inter-CPU by CPU family).
  [[nodiscard]] std::int64_t nccl_bandwidth_mb_s(std::size_t i, std::size_t j) const noexcept {
    return nccl_bandwidth_[i * gpu_count_ + j];
  }
  /// Returns the NUMA node (OS index) a GPU is local to, from its affinity or its tree position;
  /// -1 if unknown.
  [[nodiscard]] std::int32_t gpu_numa(std::size_t gpu) const noexcept { return gpu_numa_[gpu]; }
  /// Returns the socket (package OS index) a GPU is local to; -1 if unknown.
  [[nodiscard]] std::int32_t gpu_socket(std::size_t gpu) const noexcept { return gpu_socket_[gpu]; }

  /// Returns the affinity tree of the node: group 0 is the node (all GPUs); leaves are single GPUs
  /// (level gpu); between them the PCIe switch, host bridge, NUMA and socket groups that actually
  /// split the GPUs (a chain of groups with the same GPU set is collapsed into its lowest member).
  [[nodiscard]] std::span<const affinity_group> affinity_groups() const noexcept { return groups_; }
  /// Returns the index of the leaf group of GPU `gpu`.
  [[nodiscard]] std::uint32_t gpu_group(std::size_t gpu) const noexcept { return gpu_leaf_[gpu]; }

  /// Equality of every view (used by round-trip tests).
  friend bool operator==(const node_views& a, const node_views& b);

 private:
  std::size_t gpu_count_ = 0;
  std::vector<vertex_id> endpoints_;
  std::vector<pair_relation> relations_;
  bandwidth_matrix_type bandwidth_;
  std::vector<nccl_path> paths_;
  std::vector<std::int64_t> nccl_bandwidth_;
  std::vector<std::int32_t> gpu_numa_;
  std::vector<std::int32_t> gpu_socket_;
  std::vector<affinity_group> groups_;
  std::vector<std::uint32_t> gpu_leaf_;
};

}  // namespace hetsched
