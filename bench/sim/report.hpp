// SPDX-License-Identifier: MIT
// What hetsched-sim shows: the summary table, per-job and time-series CSV, JSON, SVG plots.
#pragma once

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <hetsched/metrics/fragmentation.hpp>
#include <hetsched/metrics/metrics.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/sim/fragmentation_recorder.hpp>
#include <hetsched/sim/sharing_anomaly.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::simcli {

/// One policy's run.
struct policy_run {
  std::string label;
  sim::sim_result result;
  metrics::run_summary summary;
  double wall_s = 0;
  std::vector<metrics::vc_anomaly> anomaly;              ///< Empty unless --private-vcs.
  std::vector<sim::private_cluster_plan> private_plans;  ///< Their private clusters.
  /// One per result.series sample when recorded (--out), else empty.
  std::vector<metrics::fragmentation_sample> fragmentation;
};

/// Prints the side-by-side summary table (and the sharing anomaly table when present).
void print_table(std::FILE* out, std::span<const policy_run> runs);

/// Returns ok after writing into `dir` (created if missing), per policy: jobs_<label>.csv and
/// .json (one row per trace job), series_<label>.csv and .json (one row per time sample:
/// allocated, busy, healthy, demand and arrived GPUs, utilisation and allocation ratio, FGD
/// fragmentation when recorded, then its breakdown by bucket frag_q1_gpus .. frag_no_access_gpus
/// in frag_bucket order), gpus_over_time_<label>.svg and alloc_frag_vs_demand_<label>.svg
/// (allocation and fragmentation, % of cluster GPUs, against arrived GPU demand, % of cluster
/// GPUs); for all policies summary.csv, summary.json, jct_cdf.svg and utilisation.svg (busy GPUs,
/// % of the cluster, over time). Errors name the file that could not be written.
[[nodiscard]] result<void> write_outputs(const std::string& dir, std::span<const policy_run> runs,
                                         const workload::trace& trace);

/// Returns `label` with every character outside [A-Za-z0-9._-] replaced by '_'.
[[nodiscard]] std::string file_label(std::string_view label);

}  // namespace hetsched::simcli
