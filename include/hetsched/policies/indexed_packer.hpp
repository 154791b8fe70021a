// SPDX-License-Identifier: MIT
// indexed_packer: the default placement policy (policy.hpp; registry name "packer"). Nodes by best
// or worst fit over an index of free whole GPUs, GPUs inside a node by the topology-aware packer
// (affinity_packer.hpp). It keeps its indices incremental: commit() after apply(), release() after
// a job freed its resources, rebuild() after health changes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// How indexed_packer picks a node.
enum class node_fit : std::uint8_t {
  best,   ///< Fewest free GPUs that suffice (packing; keeps whole servers for big jobs).
  worst,  ///< Most free GPUs (spreading).
};

/// Parameters of indexed_packer.
struct packer_placement_params {
  node_fit fit = node_fit::best;
  /// Gang consolidation (registry: packer:gang=together): the tasks of a role that asks for
  /// whole GPUs go, when they can, all to one node, chosen by `fit` over the free counts that
  /// hold them all; only when no node does are they placed one by one. Off by default (the
  /// figures pinned before it existed are with it off).
  bool gang_together = false;

  friend bool operator==(const packer_placement_params&, const packer_placement_params&) = default;
};

/// Places each task of a job on one node: the node by `fit` over an index of free whole GPUs, the
/// GPUs inside it by the topology-aware packer (allocate(..., lexmax)) when the node's topology is
/// known and has at most max_packer_gpus GPUs, else the lowest free local indices.
///
/// Index: per node group (nodes whose first device has the same GPU type, groups in order of first
/// appearance) and free count, the healthy nodes with that many free healthy GPUs; plus the
/// healthy devices that are partly used (for fractional requests), by free milli-GPU.
/// Whole-GPU task of k GPUs, best fit: free counts k, k+1, ... ; inside a count, groups in order,
/// then lower node id; a node is taken if its type matches the request, k of its free devices have
/// the requested GPU memory and its free CPU, memory and extended resources cover the task (minus
/// what earlier tasks of the same job took). Worst fit walks counts downwards. Fractional task:
/// the partly used device with the least free milli-GPU that suffices (then lower device id), else
/// a whole free GPU chosen as for k = 1 (the packer's least-damage GPU). CPU-only task: the first
/// healthy node in id order with room (O(nodes)). A gang is all or nothing: if a task finds no
/// node the job is deferred, insufficient_capacity when the cluster has fewer free healthy GPUs
/// than the job asks for, fragmented otherwise. Cost per whole-GPU task: O(max GPUs per node +
/// log nodes) plus the packer when the first candidate fits.
///
/// With gang_together, a role of T > 1 unplaced whole-GPU tasks of k GPUs each (T x k at most
/// the largest node) first tries one node for all of them: free counts T x k, T x k + 1, ... (best
/// fit; worst fit downwards), groups in order, then lower node id, each task's GPUs chosen as
/// above among what the earlier tasks left; the first node that holds every task wins. Otherwise
/// the tasks are placed one by one as above.
class indexed_packer {
 public:
  /// Makes the packer for `description` (no topologies) with every device free.
  explicit indexed_packer(const cluster& description, packer_placement_params params = {});
  /// Makes the packer with node topologies from `topology` (node ids must agree).
  indexed_packer(const cluster& description, const cluster_topology& topology,
                 packer_placement_params params = {});

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  /// Returns place(state, job) with every GPU role that names no type taken as asking for type
  /// `only` (empty: any type): how capacity queues bind a job admitted in a flavor that is a GPU
  /// type (queue_placement.hpp). Roles that name a type keep it.
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job,
                                       const gpu_type& only);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  void rebuild(const cluster_state& state);

  /// Returns the free healthy GPUs of node `n` as the index sees them.
  [[nodiscard]] std::uint32_t free_gpus(node_id n) const noexcept { return free_[n.index()]; }

 private:
  struct pending_use {
    node_id node;
    resource_vector used;
  };
  void init(const cluster& description);
  void set_free(std::uint32_t node, std::uint32_t value);
  void refresh(const cluster_state& state, node_id n);
  void refresh_job_nodes(const cluster_state& state, job_id job);
  // Places every task in [first, first + count) of `role` on node n (gang_together); empty if
  // one of them does not fit.
  [[nodiscard]] std::vector<task_placement> try_node_whole(
      const cluster_state& state, node_id n, const task_role& role, const gpu_type& type,
      std::span<const task_id> tasks, std::span<const pending_use> taken,
      std::span<const device_id> taken_devices);
  [[nodiscard]] std::optional<task_placement> try_node(const cluster_state& state, node_id n,
                                                       const task_role& role, const gpu_type& type,
                                                       task_id task,
                                                       std::span<const pending_use> taken,
                                                       std::span<const device_id> taken_devices);

  packer_placement_params params_;
  std::vector<pair_score_matrix> matrices_;
  std::vector<std::uint32_t> matrix_of_;  ///< Per node; UINT32_MAX when none.
  std::vector<std::uint32_t> group_of_;   ///< Per node: its GPU-type group.
  std::vector<gpu_type> group_type_;
  std::uint32_t max_gpus_ = 0;
  std::vector<std::uint32_t> free_;  ///< Per node: free healthy GPUs (UINT32_MAX: unindexed).
  std::uint64_t total_free_ = 0;     ///< Sum of free_ over indexed nodes.
  /// buckets_[group * (max_gpus_ + 1) + free] = nodes.
  std::vector<std::set<std::uint32_t>> buckets_;
  std::vector<std::int64_t> partial_free_;  ///< Per device: free milli in partial_, or -1.
  std::set<std::pair<std::int64_t, std::uint32_t>> partial_;
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> job_nodes_;
  /// Packer answers by (matrix, free-GPU mask, size); at most 2^16 x 16 entries per topology.
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> memo_;
};

/// The registry factory (registry.hpp) of "packer": `fit=best|worst` (default best) and Gandiva's
/// introspective migration (migrate=..., off by default; migrating_placement.hpp). Errors:
/// invalid_argument naming an unknown parameter or a bad value.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_packer_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
