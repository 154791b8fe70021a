// SPDX-License-Identifier: MIT
// grow_shrink: Gandiva's grow-shrink as a pure planner: offer idle GPUs to elastic jobs while no
// job waits, and take the extra GPUs back when jobs queue.
//
// Gandiva (Xiao et al., OSDI'18, §3.3) lets jobs that can change their degree of parallelism use
// idle GPUs opportunistically and shrinks them when other jobs need the GPUs. In hetsched an
// elastic job is a non-gang, preemptible job whose tasks from `base_tasks` on are optional:
// growing binds its lowest unbound optional tasks onto free GPUs (a bind of more tasks of a
// non-gang job, which check_decision accepts); shrinking gives back its highest bound optional
// tasks as a partial_release (decision.hpp): the job keeps running on its base tasks (the
// executor restarts it from a checkpoint at the smaller size, as Gandiva does) and the freed GPUs
// are free for the waiting jobs in the same scheduling round.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/gandiva_devices.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// A job that may grow beyond its first `base_tasks` tasks.
struct elastic_job {
  job_id job;
  std::uint32_t base_tasks = 1;  ///< Tasks [0, base_tasks) are needed; the rest are optional.

  friend bool operator==(const elastic_job&, const elastic_job&) = default;
};

/// Tunables of grow_shrink_planner::plan().
struct grow_shrink_params {
  /// Free usable GPUs never offered (headroom for arrivals).
  std::uint32_t reserve_gpus = 0;
  /// The most optional tasks bound in one plan (0 = no limit).
  std::uint32_t max_grow_tasks = 0;

  friend bool operator==(const grow_shrink_params&, const grow_shrink_params&) = default;
};

/// Optional tasks of one elastic job to give back.
struct task_release {
  job_id job;
  std::vector<task_id> tasks;  ///< Descending task id.
  std::uint32_t gpus = 0;      ///< GPUs they hold.

  friend bool operator==(const task_release&, const task_release&) = default;
};

/// What to grow and what to shrink.
struct grow_shrink_plan {
  std::vector<binding> grow;         ///< Optional tasks bound onto free GPUs, in plan order.
  std::vector<task_release> shrink;  ///< In plan order.
  std::uint32_t free_gpus = 0;       ///< Free usable GPUs before the plan.
  std::uint32_t waiting_gpus = 0;    ///< GPUs asked by queued and suspended jobs.
  std::uint32_t offered_gpus = 0;    ///< GPUs the grow bindings take.
  std::uint32_t reclaimed_gpus = 0;  ///< GPUs the shrink entries give back.

  friend bool operator==(const grow_shrink_plan&, const grow_shrink_plan&) = default;
};

/// Returns the decision for `plan`: its grow bindings and one partial_release per shrink entry
/// (same job and tasks). Passes check_decision on the state the plan was made from: a shrink
/// entry never releases a base task, so the job keeps at least one placed task.
[[nodiscard]] decision to_decision(const grow_shrink_plan& plan);

/// Gandiva's grow-shrink planner. @see Gandiva: Introspective Cluster Scheduling for Deep
/// Learning (Xiao et al., OSDI'18).
///
/// Waiting GPUs: over queued and suspended jobs, every task's GPU count (a fractional GPU counts
/// as 1). Free GPUs: usable (device and node healthy) devices no task holds.
///
/// Shrink, when waiting GPUs > 0: elastic jobs that are scheduled or running with bound optional
/// tasks give them back, the job with the most GPUs in bound optional tasks first (then the
/// higher job id), its highest task id first, one job at a time, until free plus reclaimed GPUs
/// reach the waiting GPUs or no optional task is left; a job always keeps one placed task (its
/// lowest; only relevant when its base tasks are not bound). Nothing grows then.
///
/// Grow, when no GPU is waiting: while more than reserve_gpus GPUs stay free, the elastic job
/// with the fewest GPUs in bound optional tasks (then lower job id) binds its lowest unbound
/// optional task; a job whose next optional task fits nowhere stops growing. A task of k GPUs
/// goes to a healthy server with k free devices of the role's type and GPU memory and room for
/// its CPU, memory and extended resources: first the servers where the job already runs (most of
/// its GPUs first, then lower node id), then the others by fewest free GPUs, then lower node id;
/// its devices by pick_gpus (the packer's lexmax with a topology, else the lowest indices).
/// Shares are {device, 1000 or the fractional milli, role.gpu.memory_mib}.
///
/// Errors (nothing planned): invalid_argument if the state has another cluster size, an elastic
/// entry repeats a job, names a gang or non-preemptible job, or has base_tasks of 0 or above the
/// job's task count; not_found for an unknown job. Pure and deterministic.
class grow_shrink_planner {
 public:
  /// Makes a planner for `description` without topologies (lowest free indices win).
  explicit grow_shrink_planner(const cluster& description);
  /// Makes a planner with the node topologies of `topology`.
  grow_shrink_planner(const cluster& description, const cluster_topology& topology);

  /// Returns the plan for `state` and the elastic jobs `elastic`.
  [[nodiscard]] result<grow_shrink_plan> plan(const cluster_state& state,
                                              std::span<const elastic_job> elastic,
                                              const grow_shrink_params& params = {}) const;

 private:
  node_score_table scores_;
  std::size_t devices_ = 0;
};

}  // namespace hetsched
