// SPDX-License-Identifier: MIT
// cluster_state: the live state of a cluster (health, allocations, jobs) and its one mutation
// point, apply(state, decision).
//
// A cluster_state shares an immutable cluster (std::shared_ptr<const cluster>, so copies of the
// state, e.g. for what-if evaluation, do not copy the description) and owns everything that
// changes: node and device health overrides, per-device allocations (milli-GPU, GPU memory and
// which job/task holds them), per-node usage, and the registered jobs with their lifecycle status
// and per-task placement. Policies read it; only apply() (policy decisions) and record() /
// submit() / set_*_health() (platform events) change it. Every mutator validates first and
// leaves the state unchanged on error. Jobs are kept in job_id order and device holders in
// (job, task) order, so equal histories give equal states.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/model/resources.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// One task's share of a device.
struct device_holder {
  job_id job;
  task_id task;
  std::int64_t milli_gpu = 0;
  std::int64_t gpu_memory_mib = 0;

  friend bool operator==(const device_holder&, const device_holder&) = default;
};

/// What is allocated on one device.
struct device_usage {
  std::int64_t milli_gpu = 0;          ///< Sum over holders; at most 1000.
  std::int64_t gpu_memory_mib = 0;     ///< Sum over holders; at most the device memory.
  std::vector<device_holder> holders;  ///< Sorted by (job, task).

  friend bool operator==(const device_usage&, const device_usage&) = default;
};

/// Free capacity of one device.
struct device_capacity {
  std::int64_t milli_gpu = 0;
  std::int64_t gpu_memory_mib = 0;

  friend bool operator==(const device_capacity&, const device_capacity&) = default;
};

/// A registered job: its spec, lifecycle status and per-task placement.
struct job_record {
  job_spec spec;
  job_status status;
  /// One entry per task, indexed by task id. A task is placed when node is valid. Resources are
  /// held only in scheduled and running; a suspended job keeps its placement here without holding
  /// resources, so resume can re-acquire it.
  std::vector<task_placement> placement;

  friend bool operator==(const job_record&, const job_record&) = default;
};

class cluster_state;

/// Returns ok if `d` can be applied to `state`, else the first problem found. Checks, in this
/// order: every entry names a known job (not_found) and each job appears in at most one entry
/// (invalid_argument); per entry, in the order preemptions, suspensions, migrations, binds,
/// resumes, partial releases (deferrals need no check): the job's state allows it
/// (failed_precondition; bind needs queued, or a scheduled/running non-gang job with the tasks
/// unbound; preempt needs scheduled, running or suspended and a preemptible job; suspend running;
/// resume suspended; migrate scheduled or running; partial release a scheduled or running non-gang
/// preemptible job, placed tasks only, at least one placed task kept), tasks exist (not_found),
/// appear once and a gang bind covers every task (invalid_argument), and each placement is
/// consistent with its role (known node and devices, devices on that node, distinct, count, type,
/// milli-GPU and GPU memory per device equal to the request: invalid_argument or not_found) on
/// healthy hardware (failed_precondition). Finally capacity (failed_precondition) with the net
/// effect of the whole decision: preemptions, suspensions, partial releases and migration sources
/// release first; then binds, resumes and migration targets acquire in that order, each device and
/// node checked as it is acquired. Pure; deterministic.
[[nodiscard]] result<void> check_decision(const cluster_state& state, const decision& d);

/// Returns ok after committing `d` to `state`: check_decision first, then all of it or nothing
/// (on error `state` is unchanged). Preempted jobs release resources and placement and become
/// preempted (the platform sends record(requeue) once the kill is confirmed); suspended jobs
/// release resources but keep their placement; resumed jobs re-acquire it; bound queued jobs
/// become scheduled; migrated tasks move; partially released tasks free their resources and
/// become unplaced (the job keeps its state and other tasks). Deferrals change nothing.
[[nodiscard]] result<void> apply(cluster_state& state, const decision& d);

/// Returns ok after recording platform event `event` for job `job`: enqueue, start, succeed, fail,
/// requeue or cancel (schedule, preempt, suspend and resume come only from apply(); they give
/// invalid_argument). succeed, fail and cancel release the job's resources and clear its
/// placement; fail follows the retry rule of next_status. Errors: not_found for an unknown job,
/// failed_precondition (naming job, state and event) for an illegal transition; state unchanged.
[[nodiscard]] result<void> record(cluster_state& state, job_id job, job_event event);

/// The live state of a cluster.
class cluster_state {
 public:
  /// Makes the state of `description` with no jobs and the description's health. Precondition:
  /// description is not null.
  explicit cluster_state(std::shared_ptr<const hetsched::cluster> description);
  /// Makes the state of a cluster it takes over.
  explicit cluster_state(hetsched::cluster description);

  /// Returns the cluster description.
  [[nodiscard]] const hetsched::cluster& cluster() const noexcept { return *cluster_; }
  /// Returns the shared cluster description.
  [[nodiscard]] const std::shared_ptr<const hetsched::cluster>& shared_cluster() const noexcept {
    return cluster_;
  }

  /// Returns ok after setting node `id`'s health; not_found for an unknown node. Existing
  /// placements stay; only new placements need healthy hardware.
  result<void> set_node_health(node_id id, health h);
  /// Returns ok after setting device `id`'s health; not_found for an unknown device.
  result<void> set_device_health(device_id id, health h);
  /// Returns node `id`'s current health. Precondition: cluster().contains(id).
  [[nodiscard]] health node_health(node_id id) const noexcept { return node_health_[id]; }
  /// Returns device `id`'s current health. Precondition: cluster().contains(id).
  [[nodiscard]] health device_health(device_id id) const noexcept { return device_health_[id]; }

  /// Returns ok after registering `spec` as a submitted job. Errors: those of validate(job_spec),
  /// already_exists for a known job id. O(log jobs + tasks).
  result<void> submit(job_spec spec);
  /// Returns ok after dropping job `id`, which must be terminal (failed_precondition otherwise;
  /// not_found if unknown). Keeps long simulations small.
  result<void> forget(job_id id);

  /// Returns what is allocated on device `id`. Precondition: cluster().contains(id).
  [[nodiscard]] const device_usage& device_used(device_id id) const noexcept {
    return device_used_[id];
  }
  /// Returns the free milli-GPU and GPU memory of device `id`, whatever its health.
  /// Precondition: cluster().contains(id).
  [[nodiscard]] device_capacity device_free(device_id id) const noexcept;
  /// Returns what is allocated on node `id` (GPU fields sum its devices). Precondition: contains.
  [[nodiscard]] const resource_vector& node_used(node_id id) const noexcept {
    return node_used_[id];
  }
  /// Returns node `id`'s allocatable minus used, whatever its health. Precondition: contains.
  [[nodiscard]] resource_vector node_free(node_id id) const;
  /// Returns the sum of node_used over all nodes. O(1).
  [[nodiscard]] const resource_vector& total_used() const noexcept { return total_used_; }

  /// Returns the record of job `id`, or nullptr if unknown.
  [[nodiscard]] const job_record* find_job(job_id id) const noexcept;
  /// Returns job `id`'s status, or not_found.
  [[nodiscard]] result<job_status> status(job_id id) const;
  /// Returns job `id`'s per-task placement (see job_record::placement), or not_found.
  [[nodiscard]] result<std::span<const task_placement>> placement(job_id id) const;
  /// Returns every registered job, in job_id order.
  [[nodiscard]] const std::map<job_id, job_record>& jobs() const noexcept { return jobs_; }

  /// Equal if the cluster descriptions are equal (or shared) and everything else is equal.
  friend bool operator==(const cluster_state& a, const cluster_state& b);

  friend result<void> apply(cluster_state& state, const decision& d);
  friend result<void> record(cluster_state& state, job_id job, job_event event);

 private:
  void acquire(job_id job, const job_spec& spec, const task_placement& placement);
  void release(job_id job, const job_spec& spec, const task_placement& placement);
  void release_held(job_id job, job_record& record);
  static void clear_placement(job_record& record) noexcept;

  std::shared_ptr<const hetsched::cluster> cluster_;
  id_vector<node_id, health> node_health_;
  id_vector<device_id, health> device_health_;
  id_vector<node_id, resource_vector> node_used_;
  id_vector<device_id, device_usage> device_used_;
  resource_vector total_used_;
  std::map<job_id, job_record> jobs_;
};

}  // namespace hetsched
