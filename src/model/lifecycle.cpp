// SPDX-License-Identifier: MIT
// The job lifecycle transition table.
#include <limits>

#include <hetsched/model/lifecycle.hpp>

namespace hetsched {

std::string_view to_string(job_state s) noexcept {
  switch (s) {
    case job_state::submitted: return "submitted";
    case job_state::queued: return "queued";
    case job_state::scheduled: return "scheduled";
    case job_state::running: return "running";
    case job_state::succeeded: return "succeeded";
    case job_state::failed: return "failed";
    case job_state::preempted: return "preempted";
    case job_state::suspended: return "suspended";
    case job_state::cancelled: return "cancelled";
  }
  return "unknown";
}

std::string_view to_string(job_event e) noexcept {
  switch (e) {
    case job_event::enqueue: return "enqueue";
    case job_event::schedule: return "schedule";
    case job_event::start: return "start";
    case job_event::succeed: return "succeed";
    case job_event::fail: return "fail";
    case job_event::preempt: return "preempt";
    case job_event::requeue: return "requeue";
    case job_event::suspend: return "suspend";
    case job_event::resume: return "resume";
    case job_event::cancel: return "cancel";
  }
  return "unknown";
}

namespace {

bool is_placed(job_state s) noexcept {
  return s == job_state::scheduled || s == job_state::running || s == job_state::suspended;
}

}  // namespace

result<job_status> next_status(const job_status& status, job_event event,
                               std::uint32_t retry_limit) {
  const job_state s = status.state;
  job_status next = status;
  bool allowed = false;
  switch (event) {
    case job_event::enqueue:
      allowed = s == job_state::submitted;
      next.state = job_state::queued;
      break;
    case job_event::schedule:
      allowed = s == job_state::queued;
      next.state = job_state::scheduled;
      break;
    case job_event::start:
      allowed = s == job_state::scheduled;
      next.state = job_state::running;
      break;
    case job_event::succeed:
      allowed = s == job_state::running;
      next.state = job_state::succeeded;
      break;
    case job_event::fail:
      allowed = is_placed(s);
      if (next.attempts < std::numeric_limits<std::uint32_t>::max()) ++next.attempts;
      next.state = next.attempts <= retry_limit ? job_state::queued : job_state::failed;
      break;
    case job_event::preempt:
      allowed = is_placed(s);
      next.state = job_state::preempted;
      break;
    case job_event::requeue:
      allowed = s == job_state::preempted;
      next.state = job_state::queued;
      break;
    case job_event::suspend:
      allowed = s == job_state::running;
      next.state = job_state::suspended;
      break;
    case job_event::resume:
      allowed = s == job_state::suspended;
      next.state = job_state::running;
      break;
    case job_event::cancel:
      allowed = !is_terminal(s);
      next.state = job_state::cancelled;
      break;
  }
  if (!allowed) {
    return make_error(errc::failed_precondition, "event '{}' is not allowed in state '{}'", event,
                      s);
  }
  return next;
}

result<void> transition(job_status& status, job_event event, std::uint32_t retry_limit) {
  auto next = next_status(status, event, retry_limit);
  if (!next) return std::move(next).error();
  status = *next;
  return ok();
}

}  // namespace hetsched
