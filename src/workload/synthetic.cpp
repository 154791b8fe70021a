// SPDX-License-Identifier: MIT
// The seeded synthetic workload generator.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/resources.hpp>
#include <hetsched/workload/synthetic.hpp>

namespace hetsched::workload {
namespace {

// GPU counts 1, 2, 4, ..., 128 with weights per million.
struct profile_shape {
  std::array<std::uint32_t, 8> gpu_weights;
  double median_s;
  double mean_s;
};

constexpr profile_shape philly_shape{
    {740'000, 100'000, 90'000, 60'000, 7'000, 2'000, 800, 200}, 874.0, 18'006.0};
constexpr profile_shape helios_shape{
    {600'000, 100'000, 100'000, 150'000, 30'000, 15'000, 4'000, 1'000}, 206.0, 6'652.0};

std::uint32_t draw_gpus(split_rng& rng, const profile_shape& profile) {
  std::uint64_t u = rng.below(1'000'000);
  for (std::size_t i = 0; i < profile.gpu_weights.size(); ++i) {
    if (u < profile.gpu_weights[i]) return std::uint32_t{1} << i;
    u -= profile.gpu_weights[i];
  }
  return 1;
}

}  // namespace

std::string_view to_string(synthetic_profile p) noexcept {
  return p == synthetic_profile::philly ? "philly" : "helios";
}

std::uint64_t split_rng::next() noexcept {
  state_ += 0x9e3779b97f4a7c15ULL;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double split_rng::uniform() noexcept {
  return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
}

std::uint64_t split_rng::below(std::uint64_t n) noexcept {
  __extension__ typedef unsigned __int128 u128;
  const auto wide = static_cast<u128>(next()) * n;
  return static_cast<std::uint64_t>(wide >> 64);
}

double split_rng::exponential(double mean) noexcept { return -mean * std::log1p(-uniform()); }

double split_rng::normal() noexcept {
  const double u1 = 1.0 - uniform();  // (0, 1]
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::vector<std::string> gavel_job_types() {
  std::vector<std::string> out{"A3C", "CycleGAN"};
  const auto family = [&](std::string_view name, std::initializer_list<int> batch_sizes) {
    for (const int b : batch_sizes) out.push_back(fmt::format("{} (batch size {})", name, b));
  };
  family("LM", {10, 20, 40, 5, 80});
  family("Recommendation", {1024, 2048, 4096, 512, 8192});
  family("ResNet-18", {128, 16, 256, 32, 64});
  family("ResNet-50", {128, 16, 32, 64});
  family("Transformer", {128, 16, 256, 32, 64});
  std::sort(out.begin(), out.end());
  return out;
}

result<trace> synthesize(const synthetic_params& p) {
  if (p.jobs == 0)
    return make_error(errc::invalid_argument, "synthetic workload: jobs must be > 0");
  if (p.jobs > max_synthetic_jobs)
    return make_error(errc::out_of_range, "synthetic workload: jobs {} is above the limit {}",
                      p.jobs, max_synthetic_jobs);
  if (p.tenants == 0)
    return make_error(errc::invalid_argument, "synthetic workload: tenants must be > 0");
  if (p.tenants > max_synthetic_tenants)
    return make_error(errc::out_of_range, "synthetic workload: tenants {} is above the limit {}",
                      p.tenants, max_synthetic_tenants);
  if (p.cluster_gpus == 0)
    return make_error(errc::invalid_argument, "synthetic workload: cluster_gpus must be > 0");
  if (p.gpus_per_node == 0)
    return make_error(errc::invalid_argument, "synthetic workload: gpus_per_node must be > 0");
  if (p.gpus_per_node > max_gpus_per_task)
    return make_error(errc::out_of_range,
                      "synthetic workload: gpus_per_node {} is above the limit {}", p.gpus_per_node,
                      max_gpus_per_task);
  if (p.max_gpus == 0)
    return make_error(errc::invalid_argument, "synthetic workload: max_gpus must be > 0");
  if (!(p.load > 0.0 && p.load <= 100.0))
    return make_error(errc::invalid_argument, "synthetic workload: load {} is not in (0, 100]",
                      p.load);
  if (p.min_duration_ms < 1 || p.min_duration_ms > p.max_duration_ms)
    return make_error(errc::invalid_argument,
                      "synthetic workload: min_duration_ms {} must be in 1..max_duration_ms {}",
                      p.min_duration_ms, p.max_duration_ms);
  if (p.max_duration_ms > max_trace_time_ms)
    return make_error(errc::out_of_range,
                      "synthetic workload: max_duration_ms {} is above the limit {}",
                      p.max_duration_ms, max_trace_time_ms);
  if (p.cpu_milli_per_gpu < 0 || p.memory_mib_per_gpu < 0)
    return make_error(errc::invalid_argument,
                      "synthetic workload: negative cpu_milli_per_gpu or memory_mib_per_gpu");
  const std::int64_t per_gpu_limit = max_resource_amount / p.gpus_per_node;
  if (p.cpu_milli_per_gpu > per_gpu_limit || p.memory_mib_per_gpu > per_gpu_limit)
    return make_error(errc::out_of_range,
                      "synthetic workload: cpu_milli_per_gpu {} or memory_mib_per_gpu {} is above "
                      "{} (a task of gpus_per_node {} GPUs would exceed {})",
                      p.cpu_milli_per_gpu, p.memory_mib_per_gpu, per_gpu_limit, p.gpus_per_node,
                      max_resource_amount);
  if (!(p.preemptible_fraction >= 0.0 && p.preemptible_fraction <= 1.0))
    return make_error(errc::invalid_argument,
                      "synthetic workload: preemptible_fraction {} is not in [0, 1]",
                      p.preemptible_fraction);

  for (std::size_t k = 0; k < p.job_types.size(); ++k)
    if (p.job_types[k].empty())
      return make_error(errc::invalid_argument, "synthetic workload: job_types[{}] is empty", k);

  const profile_shape& shape = p.profile == synthetic_profile::philly ? philly_shape : helios_shape;
  // Log-normal with median m and mean M: mu = ln m, sigma^2 = 2 ln(M / m).
  const double mu = std::log(shape.median_s * 1000.0);
  const double sigma = std::sqrt(2.0 * std::log(shape.mean_s / shape.median_s));

  // Cumulative tenant weights 1/(i+1), scaled to integers.
  std::vector<std::uint64_t> tenant_cum(p.tenants);
  std::uint64_t tenant_total = 0;
  for (std::uint32_t i = 0; i < p.tenants; ++i) {
    tenant_total += 1'000'000 / (std::uint64_t{i} + 1);
    tenant_cum[i] = tenant_total;
  }

  split_rng rng(p.seed);
  split_rng type_rng(p.seed ^ 0x6a6f627479706573ULL);  // "jobtypes": a stream of its own
  trace jobs;
  jobs.reserve(p.jobs);
  double gpu_ms_total = 0.0;
  for (std::uint64_t i = 0; i < p.jobs; ++i) {
    trace_job j;
    j.name = fmt::format("j{}", i);
    const std::uint32_t gpus = std::min(draw_gpus(rng, shape), p.max_gpus);
    const double d = std::exp(mu + sigma * rng.normal());
    j.duration_ms = std::clamp(static_cast<std::int64_t>(std::llround(std::min(d, 1e15))),
                               p.min_duration_ms, p.max_duration_ms);
    if (gpus > p.gpus_per_node) {
      j.tasks = (gpus + p.gpus_per_node - 1) / p.gpus_per_node;
      j.gpus_per_task = p.gpus_per_node;
    } else {
      j.tasks = 1;
      j.gpus_per_task = gpus;
    }
    j.gpu_milli_per_task = std::int64_t{1000} * j.gpus_per_task;
    j.cpu_milli_per_task = p.cpu_milli_per_gpu * j.gpus_per_task;
    j.memory_mib_per_task = p.memory_mib_per_gpu * j.gpus_per_task;
    const std::uint64_t t = rng.below(tenant_total);
    const auto it = std::upper_bound(tenant_cum.begin(), tenant_cum.end(), t);
    j.tenant = fmt::format("vc{}", it - tenant_cum.begin());
    j.preemptible = rng.uniform() < p.preemptible_fraction;
    if (!p.job_types.empty()) j.model = p.job_types[type_rng.below(p.job_types.size())];
    gpu_ms_total += static_cast<double>(j.duration_ms) * j.tasks * j.gpus_per_task;
    jobs.push_back(std::move(j));
  }
  // Arrival rate so that demand per ms equals load x GPUs.
  const double mean_gap_ms =
      gpu_ms_total / static_cast<double>(p.jobs) / (p.load * static_cast<double>(p.cluster_gpus));
  double now = 0.0;
  for (std::uint64_t i = 0; i < p.jobs; ++i) {
    if (i > 0) now += rng.exponential(mean_gap_ms);
    if (!(now <= static_cast<double>(max_trace_time_ms)))
      return make_error(errc::out_of_range,
                        "synthetic workload: load {} spreads {} jobs beyond {} ms (job {} would "
                        "arrive at {} ms); raise load or lower jobs",
                        p.load, p.jobs, max_trace_time_ms, i, now);
    jobs[i].submit_ms = static_cast<std::int64_t>(std::llround(now));
  }
  return jobs;
}

}  // namespace hetsched::workload
