// SPDX-License-Identifier: MIT
// gandiva_time_slicing: Gandiva's time-slicing as a pure planner: at a quantum boundary, which
// time-sliced jobs of each server are suspended and which are resumed.
//
// Gandiva (Xiao et al., OSDI'18, §3.1 and §4) oversubscribes a server by suspending one job and
// running another on the same GPUs, switching at mini-batch boundaries where GPU memory use is
// lowest, and rotates the jobs of a server in quanta for fairness between them. In hetsched a
// time-sliced job is a suspended job whose remembered placement lies on the server. The caller
// keeps, per job, its attained run time and when it last started or stopped running; the planner
// rotates each server's jobs by least attained time, never cuts a quantum short, and never puts
// more on a device than its milli-GPU and GPU memory allow.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// What the caller remembers of one job under time-slicing.
struct slice_account {
  job_id job;
  /// Seconds the job ran under time-slicing up to since_s (>= 0).
  std::int64_t attained_s = 0;
  /// When the job last started running (bind or resume) if it runs now, or when it was last
  /// suspended if it is suspended. At most `now_s`.
  std::int64_t since_s = 0;

  friend bool operator==(const slice_account&, const slice_account&) = default;
};

/// Tunables of plan_time_slices().
struct time_slice_params {
  /// Length of one quantum, seconds (> 0). Gandiva's secondary summaries cite 60 s.
  std::int64_t quantum_s = 60;

  friend bool operator==(const time_slice_params&, const time_slice_params&) = default;
};

/// The rotation for one quantum boundary.
struct time_slice_plan {
  std::vector<job_id> suspend;  ///< Running jobs to time-slice out, ascending id.
  std::vector<job_id> resume;   ///< Suspended jobs to bring back, ascending id.
  /// The earliest end of a quantum on a server where a time-sliced job still waits after the
  /// plan (the time to call again), or nullopt if no job waits.
  std::optional<std::int64_t> next_review_s;

  friend bool operator==(const time_slice_plan&, const time_slice_plan&) = default;
};

/// Returns the decision that performs `plan` (suspensions and resumptions, ascending id). It
/// passes check_decision on the state the plan was made from.
[[nodiscard]] decision to_decision(const time_slice_plan& plan);

/// Returns the time-slicing rotation of `state` at time `now_s`. Pure and deterministic.
/// @see Gandiva: Introspective Cluster Scheduling for Deep Learning (Xiao et al., OSDI'18).
///
/// Contenders of a server: jobs whose every placed task lies on that server and that are either
/// running and preemptible, or suspended (with a remembered placement there). Every other job
/// (scheduled, non-preemptible, spread over servers, fractional or not, CPU-only) keeps what it
/// holds. A job without an account has attained 0 and its quantum over. A running contender's
/// *attained* time is attained_s + (now_s - since_s); a suspended one's is attained_s. A running
/// contender is *protected* while now_s - since_s < quantum_s (its quantum is not over).
///
/// Per server, in node id order, only if it has a suspended contender: release what the
/// unprotected running contenders hold; then take the unprotected running and the suspended
/// contenders by least attained time, then running before suspended (no needless switch), then
/// lower job id; each is kept (running) or resumed (suspended) if its whole placement fits what
/// is free on the devices (milli-GPU and GPU memory of every share) and the node (CPU, memory,
/// extended resources), and a resumed job's node and devices are healthy; else it is not. Running
/// contenders not kept are suspended; suspended ones not taken keep waiting.
///
/// next_review_s: over servers where a contender still waits after the plan, the earliest of
/// since_s + quantum_s of protected contenders and now_s + quantum_s of the kept or resumed ones.
///
/// Errors (nothing planned): invalid_argument for quantum_s <= 0, a negative attained_s, since_s
/// > now_s or two accounts of one job; not_found for an account of an unknown job. Cost:
/// O(jobs log jobs + devices of the servers with a suspended contender).
[[nodiscard]] result<time_slice_plan> plan_time_slices(const cluster_state& state,
                                                       std::span<const slice_account> accounts,
                                                       const time_slice_params& params,
                                                       std::int64_t now_s);

}  // namespace hetsched
