// SPDX-License-Identifier: MIT
// FGD (fragmentation gradient descent) and its five baselines as a placement policy (policy.hpp;
// registry name "fgd"), for fractional-GPU traces such as Alibaba openb.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/fgd.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Returns the classes of "CPU/MILLI/NUM/COUNT/SPEC;..." (SPEC may be empty) and the trailing
/// total "...;total=N" (the parameter `classes` of the fgd placement). Errors: invalid_argument
/// quoting the bad item.
[[nodiscard]] result<fgd_workload> parse_fgd_classes(std::string_view text);

/// Returns `w` in the text form parse_fgd_classes() reads, with `total_tasks`.
[[nodiscard]] std::string format_fgd_classes(const fgd_workload& w, std::int64_t total_tasks);

/// fgd_scheduler over a mirror of the cluster (fgd_cluster: node CPU, memory, GPU count and the
/// first device's model). Each task of a job is chosen in turn on a copy of the mirror (a gang
/// is all or nothing); the choice becomes a binding (devices = the chosen local GPU indices,
/// each with the task's milli_per_gpu). The mirror knows only what this placement bound: on
/// release the job's tasks are dropped and the mirror is rebuilt by replaying the remaining
/// tasks in job-id order (fgd_cluster has no release), O(running tasks) per rebuild, done lazily
/// at the next place(). Deferral: insufficient_capacity when no node passes the filter.
/// Health: rebuild(state) reads node and device health; in the mirror a node that is not healthy
/// has no free CPU, memory or GPU, and a device that is not healthy has no free milli-GPU, so the
/// scorers never choose them and they count as used in the fragmentation the policy minimises.
/// The target workload is the `classes` parameter (hetsched-sim computes it from the trace with
/// make_fgd_workload, 95 % popularity).
class fgd_placement {
 public:
  /// Errors: those of fgd_cluster::make for the cluster's nodes.
  [[nodiscard]] static result<fgd_placement> create(const cluster& description, fgd_policy policy,
                                                    fgd_workload workload, std::uint64_t seed);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  /// What place(state, job) answers now, recording nothing (the random baseline draws from a
  /// copy of its stream; the score cache and the mirror refresh do not change answers).
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  /// Takes node and device health from `state` and brings the running tasks to the state's jobs:
  /// a job the state no longer has goes, a job that holds resources in the state but was never
  /// committed here (bindings replayed after a restart, replay_bindings) comes in with its
  /// tasks' nodes and GPUs. The mirror is rebuilt at the next place().
  void rebuild(const cluster_state& state);

 private:
  /// The FGD task of one task of `role`.
  [[nodiscard]] static fgd_task task_of(const task_role& role);
  struct placed_task {
    std::uint32_t node = 0;
    fgd_task task;
    std::vector<std::uint32_t> gpus;
  };
  fgd_placement(std::vector<fgd_node_spec> nodes, fgd_cluster mirror, fgd_scheduler sched)
      : nodes_(std::move(nodes)), mirror_(std::move(mirror)), sched_(std::move(sched)) {}
  /// The mirror of the running tasks on the healthy hardware (see the class comment).
  [[nodiscard]] result<fgd_cluster> make_mirror() const;
  /// place() and what_if() with the chooser `sched`; `placed` receives a bind answer's tasks.
  [[nodiscard]] result<decision> decide(fgd_scheduler& sched, const cluster_state& state,
                                        job_id job, std::vector<placed_task>& placed);

  std::vector<fgd_node_spec> nodes_;
  /// Per node: healthy, or the local indices of its devices that are not healthy (all of them,
  /// and no CPU or memory, when the node is not healthy).
  std::vector<std::vector<std::uint32_t>> broken_gpus_;
  std::vector<bool> node_down_;
  fgd_cluster mirror_;
  fgd_scheduler sched_;
  bool dirty_ = false;
  std::map<std::uint32_t, std::vector<placed_task>> running_;  ///< By job id.
  std::map<std::uint32_t, std::vector<placed_task>> pending_;  ///< place() answers.
};

/// Returns the fgd placement for `params`: policy=fgd|best_fit|dot_product|gpu_packing|
/// gpu_clustering|random (default fgd), seed=N (random), classes=... (required for fgd; the
/// baselines ignore it). Errors: invalid_argument naming an unknown parameter or a bad value.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_fgd_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
