// SPDX-License-Identifier: MIT
// Reader for per-cluster trace summary tables: HeliosArtifact `helios_cluster_summary.csv` (Venus,
// Earth, Saturn, Uranus, total) and AcmeTrace `cluster_summary.csv` (Seren, Kalos, Philly, Helios,
// PAI).
//
// The tables give job counts, mean and median GPU-job run and queue times, mean and median GPUs
// per GPU job and outcome rates per cluster; they do not contain full distributions. The synthetic
// generator may fit its GPU-count and duration distributions to these values (e.g. a lognormal
// duration through the median and mean). Columns are found by name; a column a table lacks, or
// an empty cell, leaves the value unset.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>

namespace hetsched::workload {

/// One cluster's summary; times in seconds, as the tables give them.
struct cluster_summary {
  std::string cluster;                        ///< `id`, e.g. "Venus", "Philly".
  std::optional<double> gpus;                 ///< `gpu_num`: GPUs in the cluster.
  std::optional<double> jobs;                 ///< `job_num`.
  std::optional<double> gpu_jobs;             ///< `gpu_job_num`.
  std::optional<double> avg_gpu_run_s;        ///< `avg_run_time_gpu`.
  std::optional<double> avg_gpu_queue_s;      ///< `avg_que_time_gpu`.
  std::optional<double> avg_gpus_per_job;     ///< `avg_gpu_num` (over GPU jobs).
  std::optional<double> median_gpu_run_s;     ///< `med_run_time_gpu`.
  std::optional<double> median_gpu_queue_s;   ///< `med_que_time_gpu`.
  std::optional<double> median_gpus_per_job;  ///< `med_gpu_num`.
  std::optional<double> max_gpu_run_s;        ///< `max_run_time_gpu` (Acme only).
  std::optional<double> max_gpus_per_job;     ///< `max_gpu` (Acme only).
  std::optional<double> gpu_complete_rate;    ///< `complete_rate_gpu`, a fraction.
  std::optional<double> gpu_cancel_rate;      ///< `cancel_rate_gpu`.
  std::optional<double> gpu_fail_rate;        ///< `fail_rate_gpu`.

  friend bool operator==(const cluster_summary&, const cluster_summary&) = default;
};

/// Returns the rows of a summary CSV in file order. Only the `id` column is required.
/// Errors (invalid_argument) "<source>:<line>: field '<name>': <problem>": no `id` column, a wrong
/// field count, an empty or repeated id, a value that is not a finite number or is negative.
[[nodiscard]] result<std::vector<cluster_summary>> parse_cluster_summaries(std::string_view text,
                                                                           std::string_view source);

/// Returns the row of `cluster`, or nullptr.
[[nodiscard]] const cluster_summary* find_cluster(const std::vector<cluster_summary>& rows,
                                                  std::string_view cluster) noexcept;

}  // namespace hetsched::workload
