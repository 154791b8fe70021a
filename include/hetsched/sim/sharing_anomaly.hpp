// SPDX-License-Identifier: MIT
// HiveD's sharing anomaly: each VC's mean queueing delay in the shared cluster against the one it
// gets alone on a private cluster of its quota.
//
// plan_private_clusters() sizes each VC's private cluster: the VC's quota from a quota table when
// one is given (the definition: a private cluster "of the VC's quota"), otherwise, as a fallback
// for traces without a table, the VC's share of the trace's GPU-time demand. The private cluster
// is the smallest prefix of the shared cluster's nodes (node order) holding at least that many
// GPUs. run_private_vcs() replays each VC's jobs alone on its private cluster with the same policy
// and returns metrics::sharing_anomaly() of the shared run against those runs. Pure: both are
// functions of their inputs (the simulator is deterministic).
// @see Zhao et al., "HiveD: Sharing a GPU Cluster for Deep Learning with Guarantees", OSDI'20.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <hetsched/metrics/metrics.hpp>
#include <hetsched/model/cluster.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/workload/trace.hpp>
#include <hetsched/workload/vc_quota.hpp>

namespace hetsched::sim {

/// Where a VC's private quota came from.
enum class private_quota_source : std::uint8_t {
  quota_table,   ///< The VC's GPUs in the quota table (0 when the table lacks the VC).
  demand_share,  ///< No table: the VC's share of the trace's GPU-time demand.
};

/// Returns "quota_table" or "demand_share".
[[nodiscard]] std::string_view to_string(private_quota_source s) noexcept;

/// One VC's private cluster.
struct private_cluster_plan {
  std::string vc;
  private_quota_source source = private_quota_source::quota_table;
  std::uint64_t quota_gpus = 0;  ///< The quota the cluster is sized for.
  std::size_t nodes = 0;         ///< The first `nodes` nodes of the shared cluster (0: none).
  std::uint64_t gpus = 0;        ///< GPUs of those nodes (>= quota_gpus unless capped).

  friend bool operator==(const private_cluster_plan&, const private_cluster_plan&) = default;
};

/// Returns one plan per tenant of `trace`, ordered by tenant name.
/// - With `quotas`: quota_gpus is the VC's `gpus` in the table, 0 if the table lacks it.
/// - Without: quota_gpus = round-half-up(G x d / D) with G the cluster's GPUs, d the VC's and D
///   all tenants' GPU-time demand (duration x tasks x milli-GPU per task, exact integers); when D
///   is 0 (CPU-only trace) every VC gets an equal share, floor(G / tenants).
/// nodes is the smallest k such that the first k nodes hold >= quota_gpus GPUs, capped at the
/// whole cluster; a quota of 0 gets no node in table mode (the VC has no private baseline: its
/// jobs could never run) and at least one node in demand mode (a VC with work has a share).
/// O(jobs + tenants x nodes).
[[nodiscard]] std::vector<private_cluster_plan> plan_private_clusters(
    const cluster& shared, const workload::trace& trace, const workload::vc_quota_table* quotas);

/// A cluster made of a prefix of another cluster's nodes.
struct sub_cluster {
  std::shared_ptr<const cluster> description;
  std::optional<cluster_topology> topology;  ///< Set when the source topology was given.
};

/// Returns the first `nodes` nodes of `c` (capped at its size) as a cluster of their own. With
/// `topology` (the topology `c` was made from) the sub cluster is rebuilt with cluster_builder
/// from the nodes' own node topologies, in racks of the size of the first node's rack (no racks
/// when the source has none; network tiers and multi-node NVLink domains are dropped), and the
/// description is to_cluster() of it; node names then follow the builder's "<template>-<k>".
/// Without it the description copies the nodes (names, labels, capacities, devices). Errors:
/// nodes 0, or the builder's.
[[nodiscard]] result<sub_cluster> make_sub_cluster(const cluster& c,
                                                   const cluster_topology* topology,
                                                   std::size_t nodes);

/// Returns the sharing anomaly of `shared` (the summary of `spec` run on the whole cluster)
/// against private runs: for each plan with nodes > 0, the VC's jobs alone on make_sub_cluster()
/// under `spec`, its capacity or hived quota set to the private cluster's GPUs (the VC owns it
/// all). Rows come in `shared`'s tenant order (sharing_anomaly()). A job too big for its private
/// cluster is rejected there and does not count in its private queueing delay. Errors: those of
/// make_sub_cluster(), make_policy() and simulate(), prefixed "private run of <vc>: ".
[[nodiscard]] result<std::vector<metrics::vc_anomaly>> run_private_vcs(
    const policy_spec& spec, const cluster& shared_cluster, const cluster_topology* topology,
    const workload::trace& trace, const sim_params& params, const metrics::run_summary& shared,
    std::span<const private_cluster_plan> plans);

}  // namespace hetsched::sim
