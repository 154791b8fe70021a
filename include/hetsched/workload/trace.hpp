// SPDX-License-Identifier: MIT
// One job of a workload trace, in the neutral form every trace reader produces and the simulator
// consumes.
//
// Readers (hetsched/workload/*.hpp) parse text the caller read (Gavel's Philly-derived traces,
// Pollux workloads, Tiresias CSV, Alibaba openb) into `trace_job`s; the synthetic generator makes
// them from seeded distributions. The simulator turns each into a `job_spec` at its submit time.
// Times are integer milliseconds from the start of the trace; resources are per task in the
// model's integer units. A trace keeps the order of its source (stable by submit time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetsched::workload {

/// Largest submit time or duration a trace may hold, in milliseconds (10^13 ms, about 317 years).
/// Every reader and the simulator refuse larger values, so that sums of times cannot overflow.
inline constexpr std::int64_t max_trace_time_ms = 10'000'000'000'000;

/// One job of a trace. `tasks` identical tasks, each with `gpus_per_task` whole GPUs, or, when
/// `gpu_milli_per_task` is in 1..999, a fraction of one GPU (then gpus_per_task == 1).
struct trace_job {
  std::string name;                 ///< The job's id in the trace (unique within a trace).
  std::string tenant;               ///< Virtual cluster, user or queue; empty when unknown.
  std::int64_t submit_ms = 0;       ///< Arrival time, 0..max_trace_time_ms.
  std::int64_t duration_ms = 0;     ///< Run time when placed as requested, 1..max_trace_time_ms.
  std::uint32_t tasks = 1;          ///< >= 1.
  std::uint32_t gpus_per_task = 0;  ///< Whole GPUs per task (0 for a CPU-only task).
  std::int64_t gpu_milli_per_task = 0;  ///< 1000 * gpus_per_task, or 1..999 for a fraction.
  std::int64_t cpu_milli_per_task = 0;
  std::int64_t memory_mib_per_task = 0;
  std::string gpu_type;       ///< Required GPU model (normalized name), empty for any.
  std::int32_t priority = 0;  ///< Larger is more important.
  bool preemptible = true;
  std::string model;  ///< Workload label when the trace has one (e.g. "resnet50").
  std::optional<std::int64_t> work_units;  ///< Trace-specific work (Pollux epochs, Gavel steps).

  friend bool operator==(const trace_job&, const trace_job&) = default;
};

/// A parsed trace: jobs in source order.
using trace = std::vector<trace_job>;

}  // namespace hetsched::workload
