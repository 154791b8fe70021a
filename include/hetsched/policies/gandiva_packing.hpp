// SPDX-License-Identifier: MIT
// gandiva_packing: Gandiva's profile-driven packing as two pure steps: propose trials (the
// lowest-utilization job onto the lowest-utilization GPU where memory fits), then judge a trial
// from measured rates (keep it if packed throughput beats time-sliced throughput, else undo).
//
// Gandiva (Xiao et al., OSDI'18, §3.2 and §5.2) packs jobs onto one GPU only under overload,
// using profiles (GPU utilization, GPU memory, progress rate) gathered while jobs ran alone; it
// tries a packing, measures, and undoes it when it does not pay. In hetsched the GPU share a job
// may take is its milli-GPU request, so only jobs with a fractional request (one device, 1..999
// milli, their share when packed) are packed; whole-GPU jobs are time-sliced instead
// (gandiva_time_slicing.hpp). The caller runs a trial, measures the jobs' rates on the shared
// GPU, and calls judge_packing(); rejected trials are passed back so the next GPU is tried.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// What profiling measured of a job running alone on its GPU.
struct job_profile {
  job_id job;
  std::uint32_t gpu_util_milli = 0;  ///< GPU utilization, 0..1000.
  std::int64_t memory_mib = 0;       ///< Peak GPU memory used, MiB, >= 0.
  std::int64_t rate = 1;             ///< Progress rate alone (any unit), 1..max_packing_rate.

  friend bool operator==(const job_profile&, const job_profile&) = default;
};

/// The largest rate judge_packing() accepts (keeps its exact sums within 128 bits).
inline constexpr std::int64_t max_packing_rate = std::int64_t{1} << 24;
/// The most jobs one judged GPU may hold.
inline constexpr std::size_t max_packed_jobs = 4;

/// A (job, device) pair that was tried and undone; propose_packing() skips it.
struct rejected_pack {
  job_id job;
  device_id device;

  friend bool operator==(const rejected_pack&, const rejected_pack&) = default;
};

/// Tunables of propose_packing().
struct packing_params {
  /// Proposes nothing unless some job waits for a GPU (queued or suspended).
  bool only_under_overload = true;
  /// The most trials proposed at once (each on its own device, >= 1).
  std::uint32_t max_trials = 1;

  friend bool operator==(const packing_params&, const packing_params&) = default;
};

/// One proposed packing: `job` shares `device` with `partners`.
struct packing_trial {
  job_id job;
  device_id device;
  /// The job's placement before the trial (empty if it was queued); undo returns it there.
  std::vector<task_placement> previous;
  std::vector<job_id> partners;          ///< Jobs holding the device, ascending id.
  std::int64_t util_milli = 0;           ///< Profiled utilization of the device with the job.
  std::int64_t profiled_memory_mib = 0;  ///< Profiled memory of the device with the job.

  friend bool operator==(const packing_trial&, const packing_trial&) = default;
};

/// The trials to run and the decision that starts them.
struct packing_proposal {
  std::vector<packing_trial> trials;
  /// Binds (queued jobs) and migrations (running jobs) onto the trial devices; passes
  /// check_decision on the state the proposal was made from.
  decision start;

  friend bool operator==(const packing_proposal&, const packing_proposal&) = default;
};

/// Returns the packing trials for `state`. Pure and deterministic.
/// @see Gandiva: Introspective Cluster Scheduling for Deep Learning (Xiao et al., OSDI'18).
///
/// Overload: some job asking for GPUs is queued or suspended. Candidate jobs: a profile, one
/// task with a fractional request (one device), and either queued or scheduled/running as the
/// only holder of its device. Candidate devices: usable (device and node healthy) with at least
/// one holder, every holder profiled. A device's *utilization* is the sum of its holders'
/// gpu_util_milli. Jobs are taken by lowest gpu_util_milli, then lower job id; for each, the
/// devices by lowest utilization, then lower device id, skipping its own device, rejected pairs
/// and devices already in a trial; the first device where the request fits (free milli-GPU and
/// GPU memory, the role's type, node resources) and the profiled memory of holders plus the job
/// is at most the device memory becomes the trial. A job that is a partner of a trial is not
/// moved. Stops after params.max_trials trials. Errors: invalid_argument for max_trials 0, two
/// profiles of one job, gpu_util_milli > 1000, negative memory or a rate outside
/// 1..max_packing_rate; not_found for a profile of an unknown job.
[[nodiscard]] result<packing_proposal> propose_packing(const cluster_state& state,
                                                       std::span<const job_profile> profiles,
                                                       std::span<const rejected_pack> rejected,
                                                       const packing_params& params = {});

/// A progress rate measured while packed.
struct packed_rate {
  job_id job;
  std::int64_t rate = 0;  ///< Same unit as job_profile::rate, 0..max_packing_rate.

  friend bool operator==(const packed_rate&, const packed_rate&) = default;
};

/// The outcome of a trial.
struct packing_verdict {
  /// True if sum(packed rate / profiled rate) over the device's jobs exceeds 1, the normalized
  /// throughput of time-slicing them (each would get 1/n of the GPU).
  bool keep = false;
  /// floor(1000 * sum(packed rate / profiled rate)).
  std::int64_t packed_throughput_milli = 0;
  /// Empty when kept; else moves the trial job back to `previous` if that still fits (its
  /// devices and node healthy with room), otherwise preempts it if preemptible (the platform
  /// requeues it), otherwise suspends it (it then time-slices on the trial device).
  decision undo;

  friend bool operator==(const packing_verdict&, const packing_verdict&) = default;
};

/// Returns the verdict on `trial` from the rates measured while packed. The device's jobs are
/// the trial job and the partners still holding the device. Errors: not_found if the trial job
/// is unknown or not running on trial.device, or a device job lacks a profile or a
/// measured rate; invalid_argument for a measured rate outside 0..max_packing_rate, an invalid
/// profile, or more than max_packed_jobs jobs. Pure and deterministic; exact (128-bit rationals).
[[nodiscard]] result<packing_verdict> judge_packing(const cluster_state& state,
                                                    const packing_trial& trial,
                                                    std::span<const job_profile> profiles,
                                                    std::span<const packed_rate> measured);

}  // namespace hetsched
