// SPDX-License-Identifier: MIT
// hived_placement: HiveD's buddy-cell allocator as a placement policy (policy.hpp; registry name
// "hived"): cells derived from the topology, one virtual cluster per tenant. Quotas come as the
// parameter `quota=G0/G1/...` (parse_quota_list(), policy.hpp); hetsched-sim fills it from
// --vc-quota or from the trace (demand-proportional) when the user does not give it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_topology.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Parameters of hived_placement.
struct hived_placement_params {
  std::vector<std::uint32_t> quota;  ///< GPUs per tenant index; empty: one VC owns everything.
  /// Jobs with trace priority >= this are guaranteed (HiveD priority min(priority, 1000)); the
  /// others are opportunistic (priority -1).
  std::int32_t guaranteed_min_priority = 0;
  hived::top_cell_level top = hived::top_cell_level::rack;
  /// Guaranteed jobs preempt opportunistic and lower-priority jobs (hivedscheduler's behaviour).
  bool preemption = true;
  /// Placer mode (capacity_placer_kind::hived, `capacity:placer=hived`): one VC "vc0" owns every
  /// node-level cell and every GPU job, whatever its tenant and trace priority, is a guaranteed
  /// group of it at priority 0, so HiveD never names victims (no lower priority exists) and
  /// binds only on free cells; quota, guaranteed_min_priority and preemption are ignored. Waits
  /// are deferred as insufficient_capacity when HiveD has fewer free leaf cells than the job's
  /// tasks x GPUs, else fragmented (never quota_exceeded: quota is the admission's).
  bool placer = false;
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
/// phase; bind becomes the decision, wait a deferral (quota_exceeded for guaranteed jobs,
/// insufficient_capacity for opportunistic ones). A preempt answer, with preemption on (the
/// default), is asked again in the preempting phase, which creates HiveD's preemption state (the
/// cells stay reserved for the job); its victim pods' jobs (ascending id) are returned as
/// "preempt now, start later" (policy.hpp) with the job's deferral, and once they are released
/// the filtering phase binds the job to the reserved cells. While victims are in flight the same
/// victims come back (the engine skips them). If a victim is not a running preemptible job, the
/// preemption is cancelled (delete_unallocated) and the job waits. With preemption=0 a preempt
/// answer is a wait: guaranteed jobs wait for opportunistic ones to finish. CPU-only jobs are
/// deferred as topology_unsatisfiable. Needs the topology. With params.placer it is the placer
/// behind capacity admission (hived_placement_params::placer; capacity_placement.hpp): one VC, one
/// priority, no preemption, physical deferral reasons.
class hived_placement {
 public:
  /// Errors: those of derive_cells and scheduler::create; invalid_argument without topology.
  [[nodiscard]] static result<hived_placement> create(const cluster& description,
                                                      const cluster_topology* topology,
                                                      const hived_placement_params& params);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  /// What place(state, job) answers now, with no side effect: the same calls inside a
  /// hived::scheduler::trial, which undoes them (an undo journal: the cost of what they wrote,
  /// not of the allocator state), so the answer is exact even where the filtering phase changes
  /// what the preempting phase sees (lazy preemption, reordered free lists).
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  /// Marks nodes healthy or bad as in `state`, and brings the allocator to the state's jobs: a job
  /// the state no longer has is released; a job that holds resources in the state but was never
  /// committed here (bindings replayed after a restart, replay_bindings) is committed to HiveD as
  /// its bind records would have been (same pods, node and GPUs; a guaranteed pod's leaves
  /// preassigned to its VC's node-level cells), ascending job id. A job HiveD refuses (its cells
  /// held by another) stays unknown to HiveD; place() still checks its answers against the state.
  void rebuild(const cluster_state& state);

  /// Returns the node-level cells of VC `vc` (index) summed over chains.
  [[nodiscard]] std::uint32_t vc_nodes(std::uint32_t vc) const noexcept {
    return vc < vc_nodes_.size() ? vc_nodes_[vc] : 0;
  }
  /// Returns the leaf cells (GPUs) not held by a job committed to HiveD: all leaves minus those
  /// of the running jobs' bind records (bad ones included). O(1).
  [[nodiscard]] std::int64_t free_leaf_cells() const noexcept {
    return total_leaves_ - held_leaves_;
  }
  /// Returns the HiveD allocator (for inspection: groups, cells).
  [[nodiscard]] const hived::scheduler& allocator() const noexcept { return *sched_; }

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
  std::vector<std::uint32_t> first_device_;  ///< Per node: its first device id.
  /// Per node: the chain and node-level cell type of its cell.
  struct node_cell {
    std::string chain;
    std::string type;
  };
  std::vector<node_cell> node_cell_;
  /// rebuild(): commits a job the state runs that was never committed here.
  void adopt(const job_record& rec);
  std::vector<std::uint32_t> vc_nodes_;
  /// place() and what_if() on the allocator `sched` (this one's, or a copy); `pods` receives the
  /// bind records of a bind answer.
  [[nodiscard]] result<decision> decide(hived::scheduler& sched, const cluster_state& state,
                                        job_id job, std::vector<pod_record>& pods) const;
  [[nodiscard]] decision preempt_for(hived::scheduler& sched, const cluster_state& state,
                                     const job_record& rec, const hived::pod_request& first,
                                     const hived::schedule_result& r) const;

  std::int32_t guaranteed_min_priority_ = 0;
  bool preemption_ = true;
  bool placer_ = false;
  std::int64_t total_leaves_ = 0;  ///< Leaf cells of every node-level cell.
  std::int64_t held_leaves_ = 0;   ///< Leaf cells of running_'s bind records.
  std::unordered_map<std::uint32_t, std::vector<pod_record>> pending_;  ///< place() answers.
  std::unordered_map<std::uint32_t, std::vector<pod_record>> running_;
  /// The job of every pod committed to HiveD (running_'s pods): HiveD names victims by pod, and
  /// this maps them back to job ids without reading the names.
  std::unordered_map<std::string, std::uint32_t> pod_job_;
  /// Adds or removes a running job's pods in pod_job_.
  void index_pods(std::uint32_t job, const std::vector<pod_record>& pods, bool add);
};

/// The registry factory (registry.hpp) of "hived": quota=G0/G1/..., guaranteed_min_priority=<int>,
/// top=rack|node, preemption=0|1 (default 1). Errors: invalid_argument naming an unknown
/// parameter or a bad value; those of hived_placement::create.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_hived_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
