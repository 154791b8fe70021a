// SPDX-License-Identifier: MIT
// Readers for Gavel's job traces (stanford-futuredata/gavel `scheduler/traces/`), including the
// Philly-derived per-VC traces `traces/msr/seed=N/<vc>.trace`, and for Gavel's throughput tables.
//
// A Gavel trace is one job per line, tab-separated, in one of three layouts told apart by the
// field count:
//   7 fields (traces/msr):  job_type, command, num_steps_arg, needs_data_dir, total_steps,
//                           arrival_time, scale_factor
//   9 fields:               job_type, command, num_steps_arg, needs_data_dir, total_steps,
//                           scale_factor, priority_weight, SLO, arrival_time
//   10 fields (current):    job_type, command, working_directory, num_steps_arg, needs_data_dir,
//                           total_steps, scale_factor, priority_weight, SLO, arrival_time
// A trace has no duration: Gavel's simulator runs a job for total_steps / throughput, where the
// throughput (steps/s) of (job_type, scale_factor) on a worker type comes from a throughput table
// (`simulation_throughputs.json`). See docs/workloads.md for the full mapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload {

/// Steps per second of one Gavel job type at one scale factor (GPU count) on one worker type.
struct gavel_throughput {
  std::string job_type;            ///< e.g. "ResNet-18 (batch size 32)".
  std::uint32_t scale_factor = 1;  ///< GPUs of the job.
  double steps_per_second = 0;     ///< > 0.

  friend bool operator==(const gavel_throughput&, const gavel_throughput&) = default;
};

/// The steps per second used for a job whose (job_type, scale_factor) has no throughput entry.
/// Calibrated on the seed-0 Philly-derived traces: their median total_steps (192,092) over the
/// median Philly GPU-job run time (874 s, Acme `cluster_summary.csv`) is 219.8 steps/s.
inline constexpr double gavel_default_steps_per_second = 219.8;

/// How a Gavel trace becomes trace_jobs.
struct gavel_options {
  /// Tenant of every job; when empty, the file stem of `source` ("seed0/6214e9.trace" ->
  /// "6214e9"), which for the msr traces is the Philly virtual cluster.
  std::string tenant;
  /// Throughputs looked up by (job_type, scale_factor); typically parse_gavel_throughputs() of
  /// Gavel's table for worker type "v100" (the msr cluster is 500 V100s).
  std::vector<gavel_throughput> throughputs;
  /// Rate for jobs missing from `throughputs`; 0 makes a missing entry an error.
  double fallback_steps_per_second = gavel_default_steps_per_second;
};

/// Returns the jobs of a Gavel trace `text` read from `source` (used in messages), stably sorted
/// by submit time. Each job: name "<tenant>-<i>" (i = 0-based job index in the file, or just "<i>"
/// when the tenant is empty), submit_ms = arrival_time s * 1000 rounded, tasks = scale_factor with
/// one GPU each (gpu_milli 1000), model = job_type, work_units = total_steps, duration_ms =
/// ceil(total_steps * 1000 / steps_per_second) (at least 1), priority 0, preemptible. The command,
/// num_steps_arg, working_directory, priority_weight and SLO fields are validated but not kept.
/// Errors (invalid_argument): "<source>:<line>: field '<name>': <problem>", e.g. a non-integer
/// total_steps, a negative arrival_time, a scale_factor outside [1, 100000], needs_data_dir not 0
/// or 1, a field count other than 7, 9 or 10, a missing throughput with no fallback; a bad option
/// (negative rate) is reported at line 0 with the option's name as the field.
[[nodiscard]] result<trace> parse_gavel_trace(std::string_view text, std::string_view source,
                                              const gavel_options& options = {});

/// Returns the throughputs of `worker_type` (e.g. "v100") in a Gavel throughput table (JSON:
/// worker type -> "('<job_type>', <scale_factor>)" -> {"null": steps/s, <co-located pairs>...}),
/// sorted by (job_type, scale_factor). Only the "null" (run alone) entry is read; entries whose
/// rate is 0 (the job type cannot run on that worker) are left out.
/// Errors: invalid_argument "<source>: <path>: <problem>" for malformed JSON or keys, a missing
/// or negative "null" rate; not_found if the table has no `worker_type`.
[[nodiscard]] result<std::vector<gavel_throughput>> parse_gavel_throughputs(
    std::string_view json_text, std::string_view source, std::string_view worker_type);

}  // namespace hetsched::workload
