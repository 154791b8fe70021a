// SPDX-License-Identifier: MIT
// decision: what a policy wants done (binds, preemptions, migrations, suspensions, resumes,
// partial releases, deferrals), as plain values.
//
// A policy returns a decision; apply(cluster_state&, const decision&) (cluster_state.hpp) checks
// it and commits it all or nothing. A task placement names the node and, per GPU, the device and
// the share taken from it (milli-GPU and GPU memory), so fractional GPUs and whole GPUs look the
// same. "Cannot place now" is a deferral with a reason, never an error. A job appears in at most
// one entry of a decision. Migrations, like binds, carry one placement per moved task, so a gang
// moves in one entry.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/ids.hpp>

namespace hetsched {

/// The part of one device a task takes.
struct device_share {
  device_id device;
  std::int64_t milli_gpu = 0;       ///< Equals the task's gpu_request::milli_per_gpu.
  std::int64_t gpu_memory_mib = 0;  ///< Equals the task's gpu_request::memory_mib.

  friend bool operator==(const device_share&, const device_share&) = default;
};

/// Where one task runs: a node and its GPU shares (empty for a CPU-only task). In cluster_state
/// an unplaced task has node == node_id::invalid() and no devices.
struct task_placement {
  task_id task;
  node_id node;
  std::vector<device_share> devices;

  friend bool operator==(const task_placement&, const task_placement&) = default;
};

/// Places tasks of a queued job (all of them for a gang job), or more tasks of a non-gang job.
struct binding {
  job_id job;
  std::vector<task_placement> tasks;

  friend bool operator==(const binding&, const binding&) = default;
};

/// Evicts a job: frees its resources and leaves it preempted until the platform requeues it.
struct preemption {
  job_id job;
  std::string reason;

  friend bool operator==(const preemption&, const preemption&) = default;
};

/// Moves placed tasks of a scheduled or running job to new placements.
struct migration {
  job_id job;
  std::vector<task_placement> tasks;  ///< New placements; tasks not listed stay where they are.

  friend bool operator==(const migration&, const migration&) = default;
};

/// Time-slices a running job out: frees its resources, remembers its placement.
struct suspension {
  job_id job;

  friend bool operator==(const suspension&, const suspension&) = default;
};

/// Gives back some placed tasks of a scheduled or running non-gang, preemptible job; the job keeps
/// running on its other placed tasks (at least one must stay). The released tasks become unplaced
/// and may be bound again later. This is how an elastic job shrinks (Gandiva's grow-shrink: the
/// executor restarts it from a checkpoint at the smaller size) without losing its base tasks.
struct partial_release {
  job_id job;
  std::vector<task_id> tasks;

  friend bool operator==(const partial_release&, const partial_release&) = default;
};

/// Brings a suspended job back onto its remembered placement.
struct resumption {
  job_id job;

  friend bool operator==(const resumption&, const resumption&) = default;
};

/// Why a job was not placed.
enum class defer_reason : std::uint8_t {
  insufficient_capacity,   ///< Not enough free resources anywhere.
  quota_exceeded,          ///< The tenant or queue is at its limit.
  topology_unsatisfiable,  ///< Enough resources, but not with the required locality.
  fragmented,              ///< Enough resources in total, but too scattered.
};

/// Returns the lower-case name of `r`, e.g. "quota_exceeded".
[[nodiscard]] constexpr std::string_view to_string(defer_reason r) noexcept {
  switch (r) {
    case defer_reason::insufficient_capacity: return "insufficient_capacity";
    case defer_reason::quota_exceeded: return "quota_exceeded";
    case defer_reason::topology_unsatisfiable: return "topology_unsatisfiable";
    case defer_reason::fragmented: return "fragmented";
  }
  return "unknown";
}

/// A job left waiting, with the reason. Informational: apply() checks the job exists and
/// changes nothing.
struct deferral {
  job_id job;
  defer_reason reason = defer_reason::insufficient_capacity;
  std::string message;

  friend bool operator==(const deferral&, const deferral&) = default;
};

/// Everything one policy invocation wants done.
struct decision {
  std::vector<binding> binds;
  std::vector<preemption> preemptions;
  std::vector<migration> migrations;
  std::vector<suspension> suspensions;
  std::vector<resumption> resumes;
  std::vector<deferral> deferrals;
  /// Added after the other kinds (so positional initializers stay valid).
  std::vector<partial_release> releases;

  /// Returns true if the decision holds no entry of any kind.
  [[nodiscard]] bool empty() const noexcept {
    return binds.empty() && preemptions.empty() && migrations.empty() && suspensions.empty() &&
           resumes.empty() && deferrals.empty() && releases.empty();
  }

  friend bool operator==(const decision&, const decision&) = default;
};

}  // namespace hetsched

template <>
struct fmt::formatter<hetsched::defer_reason> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(hetsched::defer_reason r, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(hetsched::to_string(r), ctx);
  }
};
