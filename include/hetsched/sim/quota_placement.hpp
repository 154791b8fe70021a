// SPDX-License-Identifier: MIT
// Quota-aware placements for the simulator: capacity queues (admission by per-tenant quota, the
// indexed packer places) and HiveD (buddy cells derived from the topology, one virtual cluster
// per tenant).
//
// Tenants are the engine's tenant indices (order of first arrival, ties by trace order). Quotas
// come as the plug-in parameter `quota=G0/G1/...`: whole GPUs per tenant index; hetsched-sim fills
// it from --vc-quota or from the trace (equal shares for capacity, demand-proportional for HiveD)
// when the user does not give it. A tenant beyond the list has quota 0.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_topology.hpp>
#include <hetsched/sim/placement.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched::sim {

/// Returns the GPUs of "G0/G1/..." (each a non-negative integer). Errors: invalid_argument
/// quoting the bad item.
[[nodiscard]] result<std::vector<std::uint32_t>> parse_quota_list(std::string_view text);

/// Parameters of capacity_placement.
struct capacity_params {
  std::vector<std::uint32_t> quota;  ///< Nominal GPUs per tenant index.
  bool borrow = true;                ///< May use other tenants' unused nominal quota.
  /// With borrow: at most this many GPUs above the tenant's nominal quota (-1: no limit).
  std::int64_t borrow_limit = -1;
  node_fit fit = node_fit::best;  ///< How the packer picks nodes for admitted jobs.
};

/// Capacity queues (one queue per tenant, Kueue ClusterQueues in one cohort): a job of tenant t
/// needing g milli-GPUs is admitted when usage(t) + g <= nominal(t), or, with borrowing, when
/// usage(t) + g <= nominal(t) + borrow_limit and the cohort's total usage + g <= the sum of
/// nominal quotas; otherwise it is deferred as quota_exceeded. An admitted job is placed by
/// indexed_packer (best fit); packer deferrals are returned as they are. No preemption: a queue
/// whose borrowed GPUs are needed back waits for the borrowers to finish. Cost: O(1) on top of
/// the packer.
class capacity_placement {
 public:
  capacity_placement(const cluster& description, const cluster_topology* topology,
                     capacity_params params);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  void rebuild(const cluster_state& state);

  /// Returns the milli-GPUs tenant `t` uses now.
  [[nodiscard]] std::int64_t usage(std::uint32_t t) const noexcept {
    return t < usage_.size() ? usage_[t] : 0;
  }

 private:
  [[nodiscard]] std::int64_t nominal(std::uint32_t t) const noexcept;

  capacity_params params_;
  indexed_packer packer_;
  std::int64_t total_nominal_ = 0;
  std::int64_t total_usage_ = 0;
  std::vector<std::int64_t> usage_;
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::int64_t>> running_;
};

/// Parameters of hived_placement.
struct hived_placement_params {
  std::vector<std::uint32_t> quota;  ///< GPUs per tenant index; empty: one VC owns everything.
  /// Jobs with trace priority >= this are guaranteed (HiveD priority min(priority, 1000)); the
  /// others are opportunistic (priority -1).
  std::int32_t guaranteed_min_priority = 0;
  hived::top_cell_level top = hived::top_cell_level::rack;
};

/// HiveD: cells derived from the cluster topology (hived::derive_cells), one VC per tenant index
/// ("vc<index>") owning node-level cells in proportion to its quota (floor of quota * nodes /
/// total quota, leftover nodes by largest remainder, ties to the lower index). A gang cannot span
/// chains (racks of different sizes or templates are different chains), so VCs are packed into
/// chains by descending size, each whole into the chain with the most nodes left (ties to the
/// earlier chain) and split over chains only when no chain has room for all of it. A
/// job is one affinity group of `tasks` pods of `gpus_per_task` leaf cells (a fractional task
/// takes one whole leaf; its share is milli_per_gpu), any leaf type. A guaranteed job of a VC
/// without cells runs opportunistically. place() asks scheduler::schedule() in the filtering
/// phase (no preemption state is created); bind becomes the decision, wait a deferral
/// (quota_exceeded for guaranteed jobs, insufficient_capacity for opportunistic ones); a preempt
/// answer is treated as wait, so guaranteed jobs wait for opportunistic ones to finish. CPU-only
/// jobs are deferred as topology_unsatisfiable. Needs the topology.
class hived_placement {
 public:
  /// Errors: those of derive_cells and scheduler::create; invalid_argument without topology.
  [[nodiscard]] static result<hived_placement> create(const cluster& description,
                                                      const cluster_topology* topology,
                                                      const hived_placement_params& params);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  void rebuild(const cluster_state& state);

  /// Returns the node-level cells of VC `vc` (index) summed over chains.
  [[nodiscard]] std::uint32_t vc_nodes(std::uint32_t vc) const noexcept {
    return vc < vc_nodes_.size() ? vc_nodes_[vc] : 0;
  }

 private:
  struct pod_record {
    hived::pod_request pod;
    hived::bind_info bind;
  };
  hived_placement(hived::scheduler s, const cluster& description);
  [[nodiscard]] hived::pod_request request(const job_record& rec, std::uint32_t pod) const;

  std::unique_ptr<hived::scheduler> sched_;
  std::map<std::string, node_id, std::less<>> node_of_;
  std::vector<std::string> node_name_;
  std::vector<std::uint32_t> vc_nodes_;
  std::int32_t guaranteed_min_priority_ = 0;
  std::unordered_map<std::uint32_t, std::vector<pod_record>> pending_;  ///< place() answers.
  std::unordered_map<std::uint32_t, std::vector<pod_record>> running_;
};

/// Returns the placement `name` if it is one of capacity, hived; nullptr for any other name.
/// Parameters: capacity takes quota=G0/G1/..., borrow=0|1, borrow_limit=<GPUs>, fit=best|worst;
/// hived takes quota=G0/G1/..., guaranteed_min_priority=<int>, top=rack|node. Errors:
/// invalid_argument naming an unknown parameter or a bad value; those of hived_placement::create.
[[nodiscard]] result<std::unique_ptr<placement>> make_quota_placement(
    std::string_view name, const plugin_params& params, const cluster& description,
    const cluster_topology* topology);

}  // namespace hetsched::sim
