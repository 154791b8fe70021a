// SPDX-License-Identifier: MIT
// The job lifecycle state machine: states, events and the transition function.
//
// submitted -enqueue-> queued -schedule-> scheduled -start-> running -succeed-> succeeded.
// fail (from scheduled, running or suspended) counts an attempt: with attempts <= retry_limit the
// job goes back to queued, otherwise it ends failed. preempt (from scheduled, running or
// suspended) gives preempted, and requeue (sent by the platform once the kill is confirmed) gives
// queued. Two states beyond the classic set: suspended, for time-slicing (Gandiva's suspend and
// resume: running -suspend-> suspended -resume-> running, resources released meanwhile), and
// cancelled, terminal and reachable from every non-terminal state by cancel (user or platform
// abort). succeeded, failed and cancelled are terminal and accept no event.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

#include <hetsched/model/result.hpp>

namespace hetsched {

/// Where a job is in its life.
enum class job_state : std::uint8_t {
  submitted,  ///< Known, not yet admitted to a queue.
  queued,     ///< Waiting for a placement.
  scheduled,  ///< Placed (resources held), not yet confirmed running.
  running,    ///< Running on its placement.
  succeeded,  ///< Terminal: finished successfully.
  failed,     ///< Terminal: failed more than retry_limit times.
  preempted,  ///< Evicted by a policy; resources released; waits for requeue.
  suspended,  ///< Time-sliced out: resources released, placement remembered for resume.
  cancelled,  ///< Terminal: aborted by the user or platform.
};

/// Something that happens to a job.
enum class job_event : std::uint8_t {
  enqueue,   ///< submitted -> queued.
  schedule,  ///< queued -> scheduled.
  start,     ///< scheduled -> running.
  succeed,   ///< running -> succeeded.
  fail,      ///< scheduled | running | suspended -> queued (retry) or failed.
  preempt,   ///< scheduled | running | suspended -> preempted.
  requeue,   ///< preempted -> queued.
  suspend,   ///< running -> suspended.
  resume,    ///< suspended -> running.
  cancel,    ///< any non-terminal state -> cancelled.
};

/// Every job_state, in declaration order (for tables and tests).
inline constexpr job_state all_job_states[] = {
    job_state::submitted, job_state::queued,    job_state::scheduled,
    job_state::running,   job_state::succeeded, job_state::failed,
    job_state::preempted, job_state::suspended, job_state::cancelled,
};

/// Every job_event, in declaration order (for tables and tests).
inline constexpr job_event all_job_events[] = {
    job_event::enqueue, job_event::schedule, job_event::start,   job_event::succeed,
    job_event::fail,    job_event::preempt,  job_event::requeue, job_event::suspend,
    job_event::resume,  job_event::cancel,
};

/// Returns the lower-case name of `s`, e.g. "scheduled".
[[nodiscard]] std::string_view to_string(job_state s) noexcept;
/// Returns the lower-case name of `e`, e.g. "requeue".
[[nodiscard]] std::string_view to_string(job_event e) noexcept;

/// Returns true for succeeded, failed and cancelled.
[[nodiscard]] constexpr bool is_terminal(job_state s) noexcept {
  return s == job_state::succeeded || s == job_state::failed || s == job_state::cancelled;
}

/// Returns true for the states in which a job holds cluster resources (scheduled, running).
[[nodiscard]] constexpr bool holds_resources(job_state s) noexcept {
  return s == job_state::scheduled || s == job_state::running;
}

/// A job's state plus its failure count.
struct job_status {
  job_state state = job_state::submitted;
  std::uint32_t attempts = 0;  ///< Failures so far (fail events); never reset.

  friend bool operator==(const job_status&, const job_status&) = default;
};

/// Returns the status after `event`, or failed_precondition naming the state and event when the
/// event is not allowed in `status.state`. Pure and O(1). fail increments attempts and yields
/// queued while attempts <= retry_limit, failed otherwise (retry_limit 0: the first failure is
/// final; 2: the third is).
[[nodiscard]] result<job_status> next_status(const job_status& status, job_event event,
                                             std::uint32_t retry_limit);

/// Returns ok after replacing `status` by next_status(status, event, retry_limit); on error
/// `status` is unchanged.
[[nodiscard]] result<void> transition(job_status& status, job_event event,
                                      std::uint32_t retry_limit);

}  // namespace hetsched

template <>
struct fmt::formatter<hetsched::job_state> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(hetsched::job_state s, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(hetsched::to_string(s), ctx);
  }
};

template <>
struct fmt::formatter<hetsched::job_event> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(hetsched::job_event e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(hetsched::to_string(e), ctx);
  }
};
