// SPDX-License-Identifier: MIT
// Readers for the Tiresias (NSDI'19) simulator's job CSV and cluster spec CSV
// (SymbioticLab/Tiresias `simulator/60_job.csv`, `cluster_spec.csv`, `n32g4.csv`, ...).
//
// Job CSV header: `job_id,num_gpu,submit_time,iterations,model_name,duration,interval`: times in
// seconds, `duration` the job's run time on its GPUs, `interval` the gap to the previous arrival
// the generator used (redundant with submit_time). Cluster spec header:
// `num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node`, one data row.
// Columns may come in any order; extra columns are ignored. CRLF line ends are accepted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload {

/// How a Tiresias job CSV becomes trace_jobs.
struct tiresias_options {
  std::string tenant;  ///< Tenant of every job (the CSV has none); may be empty.
};

/// Returns the jobs of Tiresias job CSV `text` read from `source`, stably sorted by submit time.
/// Each job: name = job_id, submit_ms = submit_time s * 1000, duration_ms = duration s * 1000
/// (rounded, >= 1), tasks = num_gpu with one GPU each, model = model_name, work_units =
/// iterations; interval is validated (a number >= 0) but not kept.
/// Errors (invalid_argument) "<source>:<line>: field '<name>': <problem>": a missing column, a
/// wrong field count, an empty or repeated job_id, num_gpu outside [1, 100000], a negative or
/// malformed time, a duration that rounds to 0 ms, negative iterations.
[[nodiscard]] result<trace> parse_tiresias_jobs(std::string_view text, std::string_view source,
                                                const tiresias_options& options = {});

/// A Tiresias cluster: `switches` switches of `nodes_per_switch` identical nodes.
struct tiresias_cluster_spec {
  std::uint32_t switches = 0;
  std::uint32_t nodes_per_switch = 0;
  std::uint32_t gpus_per_node = 0;
  std::uint32_t cpus_per_node = 0;
  std::int64_t memory_gb_per_node = 0;

  friend bool operator==(const tiresias_cluster_spec&, const tiresias_cluster_spec&) = default;
};

/// Returns the cluster of a Tiresias cluster spec CSV (exactly one data row).
/// Errors (invalid_argument) "<source>:<line>: field '<name>': <problem>": a missing column, no
/// or several data rows, a count outside [1, 1000000] (memory: [0, 10^9]).
[[nodiscard]] result<tiresias_cluster_spec> parse_tiresias_cluster_spec(std::string_view text,
                                                                        std::string_view source);

}  // namespace hetsched::workload
