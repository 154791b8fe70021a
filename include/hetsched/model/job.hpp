// SPDX-License-Identifier: MIT
// Job specs as a platform submits them: task roles, gang flag, priority, tenant, queue, retries.
//
// A job is a set of task roles (e.g. "ps" x 2 and "worker" x 8); every task of a role asks for
// the same CPU, memory, GPUs and extended resources, and all GPUs of one task sit on one node.
// Task ids are dense within the job in role-major order: role 0's tasks come first, so task t
// belongs to the first role whose cumulative task count exceeds t. A gang job is placed all at
// once or not at all. Image and command are opaque strings that hetsched never interprets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/model/ids.hpp>
#include <hetsched/model/resources.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// The most tasks one job may have, over all roles.
inline constexpr std::uint32_t max_tasks_per_job = std::uint32_t{1} << 20;

/// A group of identical tasks within a job.
struct task_role {
  std::string name;              ///< Unique within the job, non-empty.
  std::uint32_t task_count = 1;  ///< At least 1.
  std::int64_t milli_cpu = 0;    ///< Per task.
  std::int64_t memory_mib = 0;   ///< Per task.
  gpu_request gpu;               ///< Per task; all its devices on the task's node.
  extended_resources extended;   ///< Per task.

  friend bool operator==(const task_role&, const task_role&) = default;
};

/// A job as the platform receives it.
struct job_spec {
  job_id id;  ///< Assigned by the platform; must be valid().
  std::string name;
  tenant_id tenant;
  queue_id queue;
  std::int32_t priority = 0;      ///< Larger is more important.
  std::string image;              ///< Opaque label.
  std::string command;            ///< Opaque label.
  std::vector<task_role> roles;   ///< At least one.
  bool gang = true;               ///< All tasks are placed together or none is.
  bool preemptible = false;       ///< Policies may preempt it.
  std::uint32_t retry_limit = 0;  ///< N: the first N failures requeue; failure N+1 is final.
  std::optional<std::int64_t> duration_estimate_s;  ///< Expected run time, seconds, if known.

  friend bool operator==(const job_spec&, const job_spec&) = default;
};

/// Returns ok if `spec` is well formed. Errors, each naming the job and role: invalid_argument for
/// an invalid job id, no roles, an empty or duplicate role name (already_exists for a duplicate),
/// a zero task count, negative CPU/memory/GPU memory/extended amounts, a fractional GPU with count
/// > 1 or a negative duration; out_of_range for milli-GPU outside 1..1000, more than
/// max_gpus_per_task GPUs, more than max_tasks_per_job tasks, or a per-task amount above
/// max_resource_amount. Deterministic: reports the first problem in role order.
[[nodiscard]] result<void> validate(const job_spec& spec);

/// Returns the number of tasks of `spec` over all roles. O(roles).
[[nodiscard]] std::uint32_t task_count(const job_spec& spec) noexcept;

/// Returns the milli-GPUs all tasks of `spec` ask for (per role: task count x gpu count x milli
/// per GPU). O(roles).
[[nodiscard]] std::int64_t total_milli_gpu(const job_spec& spec) noexcept;

/// Returns the first task id of role `role_index`. Precondition: role_index <= roles.size()
/// (roles.size() gives one past the last task). O(roles).
[[nodiscard]] task_id first_task(const job_spec& spec, std::size_t role_index) noexcept;

/// Returns the index of the role that task `task` belongs to, or nullopt if the job has no such
/// task. O(roles).
[[nodiscard]] std::optional<std::size_t> role_index_of(const job_spec& spec, task_id task) noexcept;

/// Returns the resources one task of `role` asks for: milli_gpu = gpu.count * milli_per_gpu,
/// gpu_memory_mib = gpu.count * gpu.memory_mib, plus CPU, memory and extended resources.
[[nodiscard]] resource_vector task_request(const task_role& role);

/// Returns the resources task `task` of `spec` asks for, or not_found naming the job and task.
[[nodiscard]] result<resource_vector> task_request(const job_spec& spec, task_id task);

/// Returns the resources all tasks of `spec` ask for together. Precondition: validate(spec).
[[nodiscard]] resource_vector total_request(const job_spec& spec);

}  // namespace hetsched
