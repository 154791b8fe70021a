// SPDX-License-Identifier: MIT
// gandiva_placement: Gandiva's reactive placement as a placement policy (policy.hpp), with its
// introspective planners (time-slicing, packing, grow-shrink) behind the planning hook.
//
// place() is Gandiva's reactive mode (gandiva_reactive; the packer for the jobs it defers).
// plan() (placement_policy::plan) runs the planners switched on in gandiva_plan_options, one
// per call: time-slicing (plan_time_slices over the accounts this class keeps from commit()),
// then grow-shrink (grow_shrink_planner), then packing (propose_packing); migration is the
// separate wrapper migrating_placement (make_gandiva_placement adds it).
// @see Gandiva: Introspective Cluster Scheduling for Deep Learning (Xiao et al., OSDI'18).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/grow_shrink.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Which of Gandiva's introspective planners gandiva_placement::plan() runs.
struct gandiva_plan_options {
  /// Time-slicing by plan_time_slices (the placement suspends and resumes; the engine's own
  /// pair rotation is off). False: the engine rotates the pairs the reactive mode creates.
  bool slicing = false;
  std::int64_t quantum_s = 60;  ///< plan_time_slices' quantum, seconds (> 0).
  /// Packing by propose_packing: under overload, fractional jobs are moved (or bound) onto the
  /// least-utilized GPU where they fit. Trials are kept (the simulator has no interference model,
  /// so judge_packing would keep every trial whose profiled utilization fits).
  bool pack = false;
  /// Grow-shrink by grow_shrink_planner over the running elastic jobs (non-gang, preemptible,
  /// several tasks; base_tasks 1).
  bool grow = false;

  friend bool operator==(const gandiva_plan_options&, const gandiva_plan_options&) = default;
};

/// Gandiva's reactive placement (gandiva_reactive) for the jobs it supports (one task of whole
/// GPUs); jobs it defers as topology_unsatisfiable (several tasks, fractional) go to an
/// indexed_packer instead. Both indices see every change. Oversubscribes (time-slicing).
///
/// Planning (plan(), when some planner is on). Each call returns the first non-empty of:
///  1. time-slicing (options.slicing): the rotation plan_time_slices gives at now_s =
///     floor(now_ms / 1000) from the accounts kept by commit() (a job's attained seconds under
///     any run, and when it last started or stopped; floored to seconds); if that rotation is
///     empty, "unslicing": suspended preemptible jobs, in ascending id, are preempted (the engine
///     requeues them) while some healthy server has as many free usable GPUs as the job has
///     GPUs (each counted once, lowest node id first), as the engine's own rotation does;
///  2. grow-shrink (options.grow): to_decision of grow_shrink_planner::plan over every scheduled
///     or running non-gang preemptible job of several tasks (base_tasks 1, default params);
///  3. packing (options.pack): propose_packing's start decision, with profiles made from the
///     requests (utilization = the job's milli-GPU per device, memory = its GPU memory request,
///     rate 1), no rejected pairs and one trial.
/// next_plan_ms(): the last time-slicing plan's next_review_s x 1000, or -1.
class gandiva_placement {
 public:
  gandiva_placement(const cluster& description, const cluster_topology* topology,
                    gandiva_params params, gandiva_plan_options options = {});

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  void rebuild(const cluster_state& state);
  /// Records the simulated time of the next plan() or commit().
  void set_time(std::int64_t now_ms) noexcept { now_ms_ = now_ms; }

  /// True if a planner is on.
  [[nodiscard]] bool plans() const noexcept {
    return options_.slicing || options_.pack || options_.grow;
  }
  /// True if time-slicing is the planner's (options.slicing).
  [[nodiscard]] bool owns_suspensions() const noexcept { return options_.slicing; }
  /// Returns the planners' decision now (see the class comment). Errors: those of the planners
  /// (internal state mismatches only).
  [[nodiscard]] result<decision> plan(const cluster_state& state);
  /// Returns when time-slicing wants to run again (ms), or -1.
  [[nodiscard]] std::int64_t next_plan_ms() const noexcept { return next_plan_ms_; }

 private:
  /// What commit() remembers of a job for time-slicing (ms).
  struct account {
    std::int64_t attained_ms = 0;
    std::int64_t since_ms = 0;
    bool running = false;
  };
  [[nodiscard]] result<decision> plan_slices(const cluster_state& state);
  [[nodiscard]] result<decision> plan_growth(const cluster_state& state) const;
  [[nodiscard]] result<decision> plan_packing(const cluster_state& state) const;
  void stopped(job_id job);

  gandiva_reactive gandiva_;
  indexed_packer packer_;
  grow_shrink_planner grow_;
  gandiva_plan_options options_;
  std::map<job_id, account> accounts_;
  std::int64_t now_ms_ = 0;
  std::int64_t next_plan_ms_ = -1;
};

/// The registry factory (registry.hpp) of "gandiva": `oversubscribe=0|1` and `slices=<n>` (max
/// time-sliced jobs per GPU set); the introspective planners `slicing=engine|planner` (who
/// rotates time-sliced jobs; default engine), `quantum_s=<s>` (the planner's quantum, >= 1,
/// default 60; needs slicing=planner), `pack=0|1` (packing, default 0), `grow=0|1` (grow-shrink,
/// default 0; the simulator's elastic jobs need sim_params::elastic); and Gandiva's
/// introspective migration (migrate=..., on by default; migrating_placement.hpp). Errors:
/// invalid_argument naming an unknown parameter or a bad value.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_gandiva_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
