// SPDX-License-Identifier: MIT
// queue_placement: the library's hierarchical capacity queues (capacity_queue.hpp) as a placement
// policy (policy.hpp): registry name "capacity" with the parameter `tree=` (a queue-tree document,
// capacity_tree_json.hpp). Every scheduling pass runs the real admission cycle, plan_admission():
// cohorts and queues with borrowing and lending limits, flavors, YARN user limits, the queues'
// FIFO/priority/DRF orders, fair-sharing admission and Kueue's classic or fair-sharing preemption;
// the indexed packer (indexed_packer.hpp) binds what the cycle admits, on GPUs of the admitted
// flavor when the flavor is a GPU type of the cluster.
//
// Model. Each queued job of the cluster_state is a pending workload of the queue its tenant maps
// to (the document's "tenants" lists; else the queue named like the tenant; else default_queue),
// with the request of workload_of() restricted to the resources its queue declares in some flavor
// (a job that asks for none of them needs no quota and goes straight to the packer; a queue that
// declares "gpu" only manages GPUs). Its queue-order time is the
// simulated time (ms, set_time()) of the first pass that saw it queued: its arrival, or its
// requeue after a preemption (Kueue's eviction time). Its allowed flavors are its GPU type when
// the tree has a flavor of that name, else any flavor of its queue. Priorities are the jobs'
// priorities. Admitted workloads are the running jobs, admitted at their bind time; a
// non-preemptible job is marked in flight for itself, so it is never a victim.
//
// A pass: the first place() at a new simulated time, or after a release, a rebuild or the arrival
// of a job the cycle has not seen, plans one cycle (capacity_cycle_options: now, the document's
// fair_sharing, preemption and min_runtime_s·1000) over every queued job; the plan answers the
// pass's place() calls:
//   - admitted in flavor F: the packer's place(state, job, type F) (F not a GPU type: any type):
//     its bind, or its deferral (the job then holds no quota; the next pass asks again);
//   - a preemption head: "preempt now, start later" (policy.hpp): the deferral plus the victims
//     ("<Kueue reason> by job <id>"); commit() marks them in flight (apply_admission), so the
//     cycle serves the job first once they are released;
//   - otherwise the cycle's deferral (quota_exceeded, its message: "waiting for quota in queue
//     'Q'...", "behind head job N of strict queue 'Q'", "user limit of tenant T...").
// commit() admits a bound job in the planned flavor (apply_admission; a bind that no longer fits,
// e.g. replayed, is recorded with add_admitted in the first flavor of its queue that declares its
// resources, matching its GPUs' type when it can). Decisions depend only on the state, the
// document and the times given: same calls, same decisions. The engine's ordering decides in which
// order admitted jobs meet the packer; admission order is the cycle's (queue orders, then the
// cohort tournament of plan_admission()).
//
// Cost per pass: one plan_admission() over the pending and admitted workloads, plus a walk of the
// state's jobs to find new ones; per place(): a hash lookup plus the packer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_queue.hpp>
#include <hetsched/policies/capacity_tree_json.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Parameters of queue_placement.
struct queue_placement_params {
  queue_tree_document document;
  /// Tenant index -> tenant name (the engine's tenant order; sim::tenant_order()). A tenant
  /// beyond the list is only reachable through document.default_queue.
  std::vector<std::string> tenants;
  node_fit fit = node_fit::best;  ///< The packer's node choice.
};

class queue_placement {
 public:
  /// Returns the placement for `description` (node topologies from `topology` when not null).
  /// Errors (invalid_argument): a listed tenant that maps to no queue (named); those of
  /// capacity_tree::build.
  [[nodiscard]] static result<queue_placement> create(const cluster& description,
                                                      const cluster_topology* topology,
                                                      queue_placement_params params);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  /// What place(state, job) answers now, with no side effect: the pass's plan when it is current,
  /// else a cycle planned on a copy of the queues.
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  /// Rebuilds the packer and brings the queues to the state's jobs: jobs the state forgot are
  /// released; jobs holding resources that were never committed here (replay_bindings) are
  /// admitted as add_admitted records (ascending job id).
  void rebuild(const cluster_state& state);
  /// Sets the simulated time (ms) of the following calls (non-decreasing).
  void set_time(std::int64_t now_ms) noexcept { now_ms_ = now_ms; }

  /// Returns the queues: usage, admitted and pending workloads.
  [[nodiscard]] const capacity_state& queues() const noexcept { return *queues_; }
  /// Returns the queue of tenant index `t`, or nullopt.
  [[nodiscard]] std::optional<queue_id> queue_of(std::uint32_t t) const;

 private:
  queue_placement(indexed_packer packer, capacity_state queues, queue_placement_params params);
  /// The answers of one planned cycle, by job.
  struct pass {
    std::int64_t now = 0;
    std::uint64_t version = 0;
    admission_plan plan;
    std::unordered_map<std::uint32_t, std::uint32_t> admitted;    ///< Job -> plan.admitted index.
    std::unordered_map<std::uint32_t, std::uint32_t> preemptors;  ///< Job -> plan.preemptions.
    std::unordered_map<std::uint32_t, std::uint32_t> deferred;    ///< Job -> decision.deferrals.
  };
  /// Jobs the queues do not hold: those needing no quota (queued or running) and those the queues
  /// refuse (no queue, a request no allowed flavor of the queue declares), with the reason.
  struct book {
    std::unordered_set<std::uint32_t> free;
    std::unordered_map<std::uint32_t, std::string> refused;
  };
  /// Returns the pending workload of a queued job (request restricted to the tree's resources).
  [[nodiscard]] result<pending_workload> workload(const job_record& rec) const;
  /// Submits every queued job of `state` that `queues` does not know (queue-order time now) and
  /// releases pending workloads whose jobs are no longer queued; jobs the queues refuse go to
  /// books.refused, jobs needing no quota to books.free.
  void sync(const cluster_state& state, capacity_state& queues, book& books) const;
  /// Returns true if the planned pass answers `job` (same time, no change since, job known).
  /// Errors: not_found for an unknown job, failed_precondition for one not queued.
  [[nodiscard]] result<bool> pass_is_current(const cluster_state& state, job_id job) const;
  /// Plans a cycle over `queues`.
  [[nodiscard]] result<pass> plan(const capacity_state& queues) const;
  /// Returns the decision for `job` from pass `p` (the packer's place() records nothing).
  [[nodiscard]] result<decision> answer(const cluster_state& state, const pass& p,
                                        const book& books, job_id job);
  /// Returns the GPU type of flavor `flavor` when the cluster has GPUs of that type, else empty.
  [[nodiscard]] gpu_type flavor_type(std::string_view flavor) const;
  /// Records a job that holds resources without a planned admission (replay, forced commit).
  void admit_anyway(const job_record& rec, const cluster_state& state);

  indexed_packer packer_;
  std::unique_ptr<capacity_state> queues_;  ///< Never null (stable address for copies).
  queue_placement_params params_;
  std::vector<std::optional<queue_id>> tenant_queue_;  ///< By tenant index.
  std::optional<queue_id> default_queue_;
  /// By node: the resource names the queue declares in some flavor, sorted.
  std::vector<std::vector<std::string>> queue_resources_;
  std::vector<std::string> cluster_types_;  ///< GPU types the cluster has.
  book books_;
  std::optional<pass> pass_;
  std::uint64_t version_ = 0;  ///< Bumped by release, rebuild and outside changes of the queues.
  std::int64_t now_ms_ = 0;
};

/// The registry factory of "capacity" with `tree=<document text>` (make_capacity_placement
/// dispatches here): tree (required), tenants=name0/name1/... (tenant index -> name; hetsched-sim
/// fills it from the trace), fit=best|worst. Errors: invalid_argument naming an unknown parameter,
/// a parameter of the flat capacity form (quota, borrow, preemption, ...) given with tree, or a
/// bad value; those of parse_queue_tree_json() and queue_placement::create().
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_queue_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
