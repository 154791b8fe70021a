// SPDX-License-Identifier: MIT
// A seeded synthetic workload whose GPU counts, durations and arrivals follow the Philly or Helios
// summaries, so the simulator needs no trace file.
//
// GPU counts are drawn from a discrete distribution over powers of two (1..128) fitted to the
// published mean and median (Philly: mean 1.93, median 1; Helios: mean 3.7, median 1); durations
// from a log-normal with the published median and mean (Philly 874 s / 18,006 s, Helios 206 s /
// 6,652 s), clamped; arrivals are a Poisson process whose rate gives the requested offered load
// (sum of GPU x duration over the span, divided by the cluster's GPUs). Jobs larger than
// `gpus_per_node` are split into tasks of gpus_per_node GPUs. Tenants are "vc0".."vcN-1" with
// weights 1/(i+1). Job types (trace_job::model, read by the simulator's speed model) are drawn
// uniformly from `job_types`, by default Gavel's 26 job templates (its generator's uniform
// choice over job_table.py: ResNet-18 and Transformer at 5 batch sizes, ResNet-50 at 4, LM and
// Recommendation at 5, A3C and CycleGAN), from a random stream of their own: the mix never
// changes arrivals, sizes, durations or tenants. Same parameters, same trace, bit for bit (own
// splitmix64 generator; no std::*_distribution, whose output differs between standard
// libraries).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload {

/// Which published summary the synthetic distributions follow.
enum class synthetic_profile : std::uint8_t {
  philly,  ///< Microsoft Philly (ATC'19) as summarized by Acme: mean 1.93 GPUs, run 18,006 s.
  helios,  ///< SenseTime Helios (SC'21): mean 3.7 GPUs, run 6,652 s.
};

/// Returns "philly" or "helios".
[[nodiscard]] std::string_view to_string(synthetic_profile p) noexcept;

/// Most jobs synthesize() makes: 10 million (a trace_job takes about 200 bytes, so about 2 GB;
/// the simulator's design point is 1 million jobs).
inline constexpr std::uint64_t max_synthetic_jobs = 10'000'000;
/// Most tenants: tenant i is drawn with weight 10^6/(i+1), which is 0 beyond 10^6.
inline constexpr std::uint32_t max_synthetic_tenants = 1'000'000;

/// Returns Gavel's 26 job templates at one GPU, in the names of its throughput table (e.g.
/// "ResNet-50 (batch size 64)"), sorted by name.
[[nodiscard]] std::vector<std::string> gavel_job_types();

/// Parameters of synthesize().
struct synthetic_params {
  std::uint64_t seed = 1;
  std::uint64_t jobs = 1000;
  synthetic_profile profile = synthetic_profile::philly;
  /// Offered load: expected GPU-time demand per unit time over the cluster's GPUs (0.9 = 90%).
  double load = 0.9;
  std::uint64_t cluster_gpus = 1024;  ///< GPUs of the target cluster (sets the arrival rate).
  std::uint32_t gpus_per_node = 8;    ///< Largest task; larger jobs get several tasks.
  std::uint32_t max_gpus = 128;       ///< GPU counts above this are capped to it.
  std::int64_t min_duration_ms = 60'000;
  std::int64_t max_duration_ms = 7LL * 24 * 3600 * 1000;
  std::uint32_t tenants = 8;
  std::int64_t cpu_milli_per_gpu = 4000;
  std::int64_t memory_mib_per_gpu = 16384;
  /// Fraction of jobs that are preemptible (the rest are not).
  double preemptible_fraction = 1.0;
  /// Job types drawn uniformly for trace_job::model (see above); empty: jobs name no type.
  std::vector<std::string> job_types = gavel_job_types();

  friend bool operator==(const synthetic_params&, const synthetic_params&) = default;
};

/// Returns `params.jobs` jobs named "j<index>" in submit order (first at 0 ms). Errors:
/// invalid_argument naming the field for zero jobs, tenants, cluster_gpus, gpus_per_node or
/// max_gpus, a load outside (0, 100], min_duration_ms < 1 or above max_duration_ms, a negative
/// CPU/memory amount, a preemptible fraction outside [0, 1] or an empty job type; out_of_range
/// naming the field for more than max_synthetic_jobs jobs or max_synthetic_tenants tenants,
/// gpus_per_node above max_gpus_per_task, max_duration_ms above max_trace_time_ms, a per-task CPU
/// or memory amount (per GPU x gpus_per_node) above max_resource_amount, or arrivals that would
/// reach past max_trace_time_ms (a load too low for the job count). Nothing is allocated before the
/// parameters are checked. O(jobs).
[[nodiscard]] result<trace> synthesize(const synthetic_params& params);

/// A small deterministic generator (splitmix64) with the few draws the simulator needs.
class split_rng {
 public:
  explicit split_rng(std::uint64_t seed) noexcept : state_(seed) {}
  /// Returns the next 64 random bits.
  std::uint64_t next() noexcept;
  /// Returns a double uniform in [0, 1).
  double uniform() noexcept;
  /// Returns an integer uniform in [0, n). Precondition: n > 0.
  std::uint64_t below(std::uint64_t n) noexcept;
  /// Returns an exponential draw with mean `mean`.
  double exponential(double mean) noexcept;
  /// Returns a standard normal draw (Box-Muller, one value per call).
  double normal() noexcept;

 private:
  std::uint64_t state_;
};

}  // namespace hetsched::workload
