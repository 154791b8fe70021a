// SPDX-License-Identifier: MIT
// The record of one run that the metrics are computed from: each job's outcome, the cluster's
// time series, totals and per-tenant integrals. The simulator produces it (hetsched::sim::simulate,
// where sim::sim_result names it); an embedder can fill one from a real cluster's log. Plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hetsched/model/lifecycle.hpp>

namespace hetsched::metrics {

/// What happened to one job of the trace (indexed like the trace).
struct job_outcome {
  std::uint32_t tenant = 0;  ///< Index into run_record::tenants.
  std::int64_t submit_ms = 0;
  std::int64_t first_start_ms = -1;   ///< -1 if it never ran.
  std::int64_t finish_ms = -1;        ///< Time it reached a terminal state; -1 if it never did.
  std::int64_t duration_ms = 0;       ///< Run time asked for by the trace.
  std::int64_t milli_gpu = 0;         ///< Whole request.
  std::int64_t pending_ms = 0;        ///< Time spent queued, preempted waits included.
  std::int64_t active_at_submit = 0;  ///< Jobs queued or running when it arrived, itself included.
  job_state state = job_state::submitted;  ///< Final state (cancelled: rejected or unplaceable).
  std::uint32_t preemptions = 0;
  std::uint32_t migrations = 0;
  std::uint32_t failures = 0;  ///< Failed attempts (retries plus a final failure).
  std::uint32_t suspensions = 0;
  std::int64_t run_ms = 0;  ///< Wall time spent running, all attempts.
  /// The time the same running would have taken without locality and co-location losses (the
  /// speed model's placement factors; equals run_ms with the model off).
  double ideal_run_ms = 0;
  bool rejected = false;  ///< Could never fit the cluster (bigger than any node or the cluster).

  friend bool operator==(const job_outcome&, const job_outcome&) = default;
};

/// The cluster at one sampling instant (values hold from that instant on).
struct time_sample {
  std::int64_t time_ms = 0;
  std::int64_t allocated_milli_gpu = 0;  ///< Held by scheduled or running jobs.
  std::int64_t busy_milli_gpu = 0;       ///< Held by running jobs making progress.
  std::int64_t healthy_milli_gpu = 0;    ///< Capacity of healthy devices on healthy nodes.
  std::int64_t demand_milli_gpu = 0;     ///< Requests of arrived, unfinished jobs.
  std::uint32_t running = 0;
  std::uint32_t waiting = 0;  ///< Queued, preempted or suspended.

  friend bool operator==(const time_sample&, const time_sample&) = default;
};

/// Totals of a run.
struct run_counters {
  std::uint64_t passes = 0;  ///< Scheduling passes.
  std::uint64_t binds = 0;
  std::uint64_t preemptions = 0;  ///< Counted when decided (a placement's victims included).
  std::uint64_t migrations = 0;
  std::uint64_t failures = 0;  ///< Failed attempts (retried or final).
  std::uint64_t retries = 0;   ///< Failed attempts that were requeued.
  std::uint64_t suspensions = 0;
  std::uint64_t resumes = 0;
  std::uint64_t node_failures = 0;
  std::uint64_t rejected = 0;
  std::uint64_t unplaceable = 0;  ///< Still waiting when nothing else could happen.
  std::uint64_t placement_calls = 0;
  /// Victims of a preemptive ordering's round that restarted in the same pass (their preemptor
  /// could not be placed): the eviction is undone, not counted in preemptions, and costs nothing.
  std::uint64_t preemption_rollbacks = 0;
  /// Grows: binds of more tasks of a running elastic job (Gandiva's grow-shrink).
  std::uint64_t grows = 0;
  /// Shrinks: partial releases of a running elastic job's tasks (Gandiva's grow-shrink).
  std::uint64_t shrinks = 0;

  friend bool operator==(const run_counters&, const run_counters&) = default;
};

/// Integrals of one tenant's allocation over time.
struct tenant_integral {
  double gpu_ms = 0;         ///< GPU-ms held.
  double milli_cpu_ms = 0;   ///< milli-CPU x ms held.
  double memory_mib_ms = 0;  ///< MiB x ms held.

  friend bool operator==(const tenant_integral&, const tenant_integral&) = default;
};

/// Everything a run produces; metrics are computed from it (metrics/metrics.hpp).
struct run_record {
  std::vector<job_outcome> jobs;
  std::vector<std::string> tenants;  ///< Tenant names by index, in order of first appearance.
  std::vector<time_sample> series;
  run_counters counters;
  std::vector<tenant_integral> tenant_usage;  ///< Indexed like tenants.
  std::int64_t total_milli_gpu = 0;           ///< Cluster capacity (health ignored).
  std::int64_t total_milli_cpu = 0;
  std::int64_t total_memory_mib = 0;
  std::int64_t first_submit_ms = 0;  ///< Earliest submission; integrals start here.
  std::int64_t end_ms = 0;           ///< Time of the last event.
  double allocated_gpu_ms = 0;       ///< Integral of allocated GPUs over time (GPU-ms).
  double healthy_gpu_ms = 0;         ///< Integral of healthy GPUs over time (GPU-ms).
  double busy_gpu_ms = 0;            ///< Integral of GPUs held by running jobs making progress.
};

}  // namespace hetsched::metrics
