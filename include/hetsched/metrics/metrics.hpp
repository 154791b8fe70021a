// SPDX-License-Identifier: MIT
// Metrics of a run (a run_record, run_record.hpp: a simulation's, or one filled from a real
// cluster's log): queueing delay and JCT distributions, makespan, throughput, time-weighted
// utilisation, tenant fairness (Jain, dominant-share spread), finish-time fairness, the per-VC
// sharing anomaly, and counts of preemptions, migrations and retries.
//
// Definitions follow the reference (traces_and_metrics.md §6.3): JCT = finish - submit over
// succeeded jobs; queueing delay = first start - submit over jobs that ran; makespan = last finish
// - first submit; throughput = succeeded jobs per hour of makespan; utilisation = integral of
// GPUs held by running jobs / (cluster GPUs x makespan); allocation ratio the same with every
// allocated GPU. Percentiles are nearest-rank (the value at rank ceil(q/100 * n), computed in
// integers). Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <hetsched/metrics/run_record.hpp>

namespace hetsched::metrics {

/// Mean, nearest-rank percentiles and maximum of a sample (all 0 for an empty sample).
struct distribution {
  std::size_t count = 0;
  double mean = 0;
  double median = 0;
  double p95 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;

  friend bool operator==(const distribution&, const distribution&) = default;
};

/// Returns the distribution of `values` (in any order). O(n log n).
[[nodiscard]] distribution describe(std::vector<double> values);

/// Returns the nearest-rank q-th percentile (0 < q <= 100) of sorted `values`, the value at rank
/// ceil(q/100 x n) computed exactly with q rounded to 1/1000 of a percent; 0 if empty.
[[nodiscard]] double percentile_sorted(std::span<const double> values, double q) noexcept;

/// Returns Jain's index (sum x)^2 / (n sum x^2) of `x`; 1 for an empty or all-zero input.
[[nodiscard]] double jain_index(std::span<const double> x) noexcept;

/// One tenant's view of a run.
struct tenant_summary {
  std::string name;
  std::size_t jobs = 0;
  std::size_t succeeded = 0;
  double mean_queue_s = 0;  ///< Mean first start - submit over its jobs that ran.
  double mean_jct_s = 0;    ///< Mean JCT over its succeeded jobs.
  /// GPU-weighted fraction of its succeeded jobs' lifetime spent running: sum(duration x GPUs) /
  /// sum(JCT x GPUs); 1 means no waiting. The x of Jain's index.
  double service_ratio = 0;
  /// Time-averaged dominant share: max over GPU, CPU, memory of the tenant's allocation integral
  /// / (capacity x makespan).
  double dominant_share = 0;

  friend bool operator==(const tenant_summary&, const tenant_summary&) = default;
};

/// The headline figures of one run.
struct run_summary {
  std::size_t jobs = 0;
  std::size_t succeeded = 0;
  std::size_t failed = 0;
  std::size_t rejected = 0;
  std::size_t unplaceable = 0;
  distribution jct_s;
  distribution queue_s;
  double mean_pending_s = 0;  ///< Mean total waiting (preempted waits included), Tiresias' pending.
  double makespan_s = 0;
  double throughput_per_h = 0;
  double utilisation = 0;
  double allocation_ratio = 0;
  double jain = 1;                   ///< Jain's index over tenants' service_ratio.
  double dominant_share_spread = 0;  ///< max - min of tenants' dominant_share.
  /// Finish-time fairness rho = JCT / isolated time, isolated time = duration x max(1, GPUs x
  /// active_at_submit / cluster GPUs) (a 1/N share of the cluster, Themis/Gavel).
  double ftf_mean = 0;
  double ftf_max = 0;
  double ftf_unfair_fraction = 0;  ///< Share of succeeded jobs with rho > 1.
  /// Mean slowdown from placement: the jobs' total run time over the time the same running would
  /// have taken without locality and co-location losses (job_outcome::ideal_run_ms; speed
  /// model). 1 with the speed model off or with perfect placement.
  double placement_slowdown = 1;
  std::uint64_t preemptions = 0;
  std::uint64_t migrations = 0;
  std::uint64_t retries = 0;
  std::uint64_t suspensions = 0;
  std::uint64_t node_failures = 0;
  std::vector<tenant_summary> tenants;

  friend bool operator==(const run_summary&, const run_summary&) = default;
};

/// Returns the summary of `r`. O(jobs log jobs).
[[nodiscard]] run_summary summarize(const run_record& r);

/// Returns, for each sample of `r.series`, the GPU demand arrived by its time: the sum of
/// milli_gpu over the jobs submitted at or before it (cumulative, departures not subtracted; the
/// x axis of FGD's allocation and fragmentation figures, where nothing departs). O(jobs log jobs +
/// samples).
[[nodiscard]] std::vector<std::int64_t> arrived_demand_milli(const run_record& r);

/// One VC's sharing anomaly (HiveD): its mean queueing delay in the shared cluster minus the one in
/// a private cluster of its quota; positive is the anomaly.
struct vc_anomaly {
  std::string name;
  double shared_queue_s = 0;
  double private_queue_s = 0;
  double anomaly_s = 0;

  friend bool operator==(const vc_anomaly&, const vc_anomaly&) = default;
};

/// Returns, for each tenant of `shared` found in `private_runs` (matched by name; each private run
/// holds one VC's jobs on a cluster of its quota), its vc_anomaly, in `shared`'s tenant order.
[[nodiscard]] std::vector<vc_anomaly> sharing_anomaly(const run_summary& shared,
                                                      std::span<const run_summary> private_runs);

}  // namespace hetsched::metrics
