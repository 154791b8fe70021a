// SPDX-License-Identifier: MIT
// gandiva_devices: helpers shared by Gandiva's introspective planners: per-node pair
// score matrices (one per distinct node topology) and the choice of k GPUs among free ones.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Pair score matrices of the nodes of one cluster, shared between nodes of the same topology.
class node_score_table {
 public:
  node_score_table() = default;
  /// Makes the table of `description` with no topology (every node answers nullptr).
  explicit node_score_table(const cluster& description);
  /// Makes the table with the node topologies of `topology`; a node gets a matrix only if its
  /// topology has as many GPUs as the description's node.
  node_score_table(const cluster& description, const cluster_topology& topology);

  /// Returns the scores of node `n`'s GPUs, or nullptr.
  [[nodiscard]] const pair_score_matrix* scores(node_id n) const noexcept;
  /// Returns the number of nodes.
  [[nodiscard]] std::size_t size() const noexcept { return matrix_of_.size(); }

  friend bool operator==(const node_score_table&, const node_score_table&) = default;

 private:
  std::vector<pair_score_matrix> matrices_;
  std::vector<std::uint32_t> matrix_of_;
};

/// Returns `count` local GPU indices out of `available` (ascending): allocate(*scores,
/// available, {}, count, lexmax) when scores is not null and available.size() <=
/// max_packer_gpus, else the `count` lowest. Precondition: available.size() >= count.
[[nodiscard]] std::vector<std::uint32_t> pick_gpus(const pair_score_matrix* scores,
                                                   std::span<const std::uint32_t> available,
                                                   std::uint32_t count);

}  // namespace hetsched
