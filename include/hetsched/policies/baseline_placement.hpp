// SPDX-License-Identifier: MIT
// Placement baselines with no topology awareness (policy.hpp; registry names "first-fit" and
// "random"), so that the value of the topology-aware placements can be measured against them.
//
// Both place each task of a job on one node and read only the cluster_state: they keep no index,
// so commit(), release() and rebuild() only count events (the random stream's counter) and
// place() is pure given the committed state (what_if() is place()). first-fit takes the lowest
// node and device indices that fit; random draws uniformly among the feasible nodes, then among
// that node's feasible devices, so locality is whatever chance gives. Neither oversubscribes,
// looks at tenants or preempts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Which baseline baseline_placement is.
enum class baseline_mode : std::uint8_t {
  first_fit,  ///< Lowest node id, then lowest device indices ("first-fit").
  random,     ///< Uniform among feasible nodes, then among their feasible devices ("random").
};

/// Parameters of baseline_placement.
struct baseline_placement_params {
  baseline_mode mode = baseline_mode::first_fit;
  std::uint64_t seed = 1;  ///< The random stream's seed (random only).

  friend bool operator==(const baseline_placement_params&,
                         const baseline_placement_params&) = default;
};

/// The first-fit and random placement baselines.
///
/// Tasks are placed in task-id order (role by role), each on one node; resources taken by earlier
/// tasks of the same job count as used for the later ones (per node: CPU, memory, extended
/// resources, milli-GPU and GPU memory; per device: milli-GPU and GPU memory). A node is feasible
/// for a task if it is healthy, its free CPU, memory, GPU and extended resources cover the task
/// (fits(task_request(role), room)) and it has enough feasible devices: a device is feasible if
/// it is healthy, of the role's GPU type when the role names one, and, for a whole-GPU task,
/// entirely free with at least the requested GPU memory; for a fractional task (1..999 milli, one
/// device), with at least the requested milli-GPU and GPU memory free. A CPU-only task needs no
/// device.
///
/// first-fit: the first feasible node in node-id order; on it the lowest feasible local device
/// indices (whole GPUs: the k lowest; fractional: the lowest device with room). The next task of
/// the job restarts the scan at node 0 with the earlier tasks' resources taken, so a gang fills
/// node 0 before node 1. Fully deterministic, no parameter.
///
/// random: the feasible nodes (in node-id order) and one drawn uniformly; on it the task's
/// devices drawn uniformly without replacement among its feasible devices (a partial
/// Fisher-Yates shuffle of the feasible local indices in ascending order; the chosen devices are
/// reported in ascending order); a fractional task one device drawn uniformly. Draws are
/// unbiased (rejection sampling). The stream of a place() call is splitmix64 seeded with
/// mix(seed, job id, events), where events counts the commit() and release() calls seen so far
/// (each adds one; rebuild() adds none) and mix is splitmix64's finalizer folded over the three
/// values; place() never advances a stored generator, so the same committed history and job give
/// the same answer, twice in a row or through what_if(). A fresh instance (e.g. after a restart)
/// starts at events = 0, so its stream differs from the one it replaces.
///
/// A gang is all or nothing (every job is: a task that finds no node defers the whole job): the
/// deferral is insufficient_capacity when the cluster has fewer free whole healthy GPUs (x 1000)
/// than the job's unplaced tasks ask milli-GPU, fragmented otherwise (the packer's rule,
/// indexed_packer.hpp). The answer passes check_decision(state, d).
///
/// Cost per task: O(nodes x GPUs per node) for random (every node is examined), the same bound in
/// the worst case for first-fit (it stops at the first feasible node), plus O(tasks of the job)
/// per node for the resources taken by earlier tasks; a deferral adds O(devices).
class baseline_placement {
 public:
  /// Makes the baseline for `description`. O(1).
  explicit baseline_placement(const cluster& description, baseline_placement_params params = {});

  /// Returns a bind of every unplaced task of queued job `job`, or its deferral (see the class
  /// comment). Errors: not_found for an unknown job, failed_precondition when it is not queued,
  /// invalid_argument when the state's cluster has another node count. No side effect.
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) const;
  /// Counts one event (the random stream's counter). O(1).
  void commit(const cluster_state& after, const decision& d);
  /// Counts one event (the random stream's counter). O(1).
  void release(const cluster_state& after, job_id job);
  /// No-op: there is no index to recompute (the counter is kept).
  void rebuild(const cluster_state& state);

  /// Returns the parameters.
  [[nodiscard]] const baseline_placement_params& params() const noexcept { return params_; }
  /// Returns the number of commit() and release() calls seen.
  [[nodiscard]] std::uint64_t events() const noexcept { return events_; }

 private:
  baseline_placement_params params_;
  std::size_t node_count_ = 0;
  std::uint64_t events_ = 0;
};

/// The registry factory (registry.hpp) of "first-fit": no parameters. Errors: invalid_argument
/// naming an unknown parameter.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_first_fit_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

/// The registry factory (registry.hpp) of "random": `seed=<u64>` (default 1). Errors:
/// invalid_argument naming an unknown parameter or a seed that is not a 64-bit unsigned integer.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_random_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
