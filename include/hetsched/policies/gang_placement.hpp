// SPDX-License-Identifier: MIT
// Gang placement across nodes: every task of a multi-node job at once, crossing the lowest tier.
//
// A gang is `tasks` identical tasks of `gpus_per_task` GPUs, each task inside one node (a node
// may hold several). gang_placer places all of them or none, on the cluster affinity tree of
// cluster_builder.hpp (node > NVLink domain / rack > tiers > cluster): a locality-sensitive gang
// goes into the lowest group that can hold it (so the highest tier it crosses is as low as
// possible), filled through as few child groups as possible; a locality-insensitive one (Tiresias)
// fills the fullest nodes first, keeping whole nodes and racks free for sensitive gangs. GPUs
// inside each node are chosen by the affinity packer. node_scores() gives the 0-100 score of
// every node for a Kubernetes extender's prioritize call. Tie-break chains are documented on
// place() and node_scores(); docs/packer.md has the objective in full.
//
// @see J. Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19.
// @see H. Zhao et al., "HiveD: Sharing a GPU Cluster for Deep Learning with Guarantees", OSDI'20
//      (affinity groups placed all or nothing).
// @see Volcano network-topology-aware scheduling (HyperNode tiers, highestTierAllowed).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched {

/// A multi-node job: `tasks` identical tasks of `gpus_per_task` GPUs, each inside one node.
struct gang_request {
  std::uint32_t tasks = 1;
  std::uint32_t gpus_per_task = 1;
  locality_sensitivity locality = locality_sensitivity::consolidate;
  /// The highest level the gang may cross (a hard limit, Volcano's highestTierAllowed): node
  /// keeps it on one node, rack in one rack, nvlink_domain in one NVLink domain, network_tier
  /// with max_tier = t inside one tier-t group; cluster (default) sets no limit.
  affinity_level max_level = affinity_level::cluster;
  /// The tier of max_level == network_tier (1 = the first tier above racks); ignored otherwise.
  std::uint32_t max_tier = 0;

  friend bool operator==(const gang_request&, const gang_request&) = default;
};

/// One placed task.
struct gang_task {
  node_id node;
  /// The task's GPUs as node-local indices, ascending.
  std::vector<std::uint32_t> gpus;
  /// The same GPUs as cluster-wide device ids.
  std::vector<device_id> devices;

  friend bool operator==(const gang_task&, const gang_task&) = default;
};

/// The answer of gang_placer::place().
struct gang_placement {
  /// Set when nothing was placed: insufficient_capacity (fewer free GPUs in the cluster than the
  /// gang needs), fragmented (enough GPUs, but too few nodes with gpus_per_task free ones), or
  /// topology_unsatisfiable (it fits, but not within max_level).
  std::optional<defer_reason> deferred;
  /// The tasks, grouped by node in ascending node order; empty when deferred.
  std::vector<gang_task> tasks;
  /// Index into cluster_topology::groups() of the lowest group holding every task (0 when
  /// deferred).
  std::uint32_t group = 0;
  /// That group's level: the highest level the gang crosses (node when one node holds it).
  affinity_level level = affinity_level::cluster;
  /// The number of distinct nodes used.
  std::uint32_t nodes_used = 0;

  [[nodiscard]] bool placed() const noexcept { return !deferred.has_value(); }

  friend bool operator==(const gang_placement&, const gang_placement&) = default;
};

/// Places gangs on one cluster. Built once per cluster (per-template packer scores, group
/// heights); place() and node_scores() are const and take the free GPUs as input.
class gang_placer {
 public:
  /// Returns a placer for `cluster` whose per-node GPU choice uses pair scores from `terms`.
  /// Never fails for a built cluster. O(groups + templates * GPUs^2).
  [[nodiscard]] static gang_placer make(cluster_topology cluster, const pair_terms& terms = {});

  [[nodiscard]] const cluster_topology& cluster() const noexcept { return cluster_; }

  /// Returns a placement of every task of `request` given each node's free GPUs (`free_gpus[n]`
  /// = node n's free node-local GPU indices, strictly ascending), or a deferral; all or nothing.
  /// To keep a gang off some nodes (another GPU type, a node selector, unhealthy nodes), pass
  /// empty lists for them.
  ///
  /// consolidate: a node can hold floor(free / gpus_per_task) tasks. The gang goes into the
  /// feasible group (holds enough tasks, not above max_level) of the lowest height (height =
  /// levels above the nodes, so the highest level crossed is minimal), then fewest free GPUs
  /// (best fit: big free groups stay whole), then lowest group index (lowest nodes). Inside a
  /// group: if one child can hold the remaining tasks, the best-fit child (fewest free GPUs, then
  /// lowest index); else the child holding most tasks (then fewest free GPUs, then lowest index)
  /// is filled and the rest continues: as few child groups as possible at every level.
  /// spread: among the groups at max_level's height that can hold the gang, fewest free GPUs,
  /// then lowest index; inside it nodes by fewest free GPUs, then lowest node id, each taking as
  /// many tasks as it can hold.
  /// GPUs in a node: one allocate_with() per task on the node's remaining free GPUs
  /// (consolidate: lexmax; spread: spread), tasks in node order; a node with more than
  /// max_packer_gpus free GPUs gives each task its lowest free GPUs.
  /// Errors: invalid_argument if free_gpus.size() != node count, a list is not strictly
  /// ascending or names a GPU the node does not have, tasks or gpus_per_task is 0, or max_level
  /// names a level the cluster does not have (gpu also counts as such). O(nodes + groups) plus
  /// the packer on the chosen nodes. Deterministic.
  [[nodiscard]] result<gang_placement> place(std::span<const std::vector<std::uint32_t>> free_gpus,
                                             const gang_request& request) const;

  /// Returns every node's score 0..100 for one task of `request` (a Kubernetes extender's
  /// prioritize call for a gang member): 0 if the node cannot hold a task or no group within
  /// max_level holding it can hold the gang. Else, with gpus the node's GPUs, free its free ones
  /// and f = (gpus - free + gpus_per_task) / gpus (how full one more task leaves it):
  /// consolidate: floor(100 * (T + (q + f) / 2) / (H + 1)), exact in integers, with H the root's
  /// height, T = H - h, h the height of the lowest group containing the node that can hold the
  /// whole gang (0 if the node alone can), and q the quality of the GPUs the packer would give
  /// the task there: floor(1000 * set score of allocate(lexmax) on the node's free GPUs / the
  /// best set score of any gpus_per_task GPUs of that machine) / 1000; q = 1 for one GPU per
  /// task, a best score of 0, more than max_packer_gpus free GPUs or a node without pair scores.
  /// So the tier decides first (a node never scores below one whose gang would cross a higher
  /// tier; equal only at a band edge), then within a tier better-connected GPUs and best fit
  /// (fuller nodes, as place() fills them) score higher, equally weighted. spread:
  /// floor(100 * f), fuller nodes first, as place() fills them. Errors as place().
  /// O(nodes * depth) plus one packer call per distinct (machine, free GPUs) among the scored
  /// nodes and one best-block search per machine.
  [[nodiscard]] result<std::vector<std::int64_t>> node_scores(
      std::span<const std::vector<std::uint32_t>> free_gpus, const gang_request& request) const;

 private:
  struct tally {
    std::vector<std::uint64_t> capacity;  ///< Tasks each group can hold.
    std::vector<std::uint64_t> free;      ///< Free GPUs of each group.
    std::uint32_t limit_height = 0;       ///< The height of max_level.
  };
  [[nodiscard]] result<tally> count(std::span<const std::vector<std::uint32_t>> free_gpus,
                                    const gang_request& request) const;

  cluster_topology cluster_;
  std::vector<pair_score_matrix> scores_;  ///< Per template of the cluster.
  std::vector<std::uint32_t> height_;      ///< Per group: levels above the nodes.
};

}  // namespace hetsched
