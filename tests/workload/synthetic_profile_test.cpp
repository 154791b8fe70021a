// SPDX-License-Identifier: MIT
// The synthetic workload's Helios profile and its offered-load arrival rate (the generator's
// determinism and Philly shape are in tests/sim/synthetic_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <hetsched/workload/synthetic.hpp>

#include "support/matchers.hpp"

namespace hetsched::workload {
namespace {

using testing::IsOk;

struct shape_stats {
  double mean_gpus = 0;
  double one_gpu_fraction = 0;
  double median_duration_s = 0;
  double gpu_ms = 0;
  std::int64_t span_ms = 0;
};

shape_stats stats_of(const trace& t) {
  shape_stats s;
  std::vector<std::int64_t> durations;
  std::size_t one = 0;
  for (const trace_job& j : t) {
    const auto g = static_cast<double>(j.tasks * j.gpus_per_task);
    s.mean_gpus += g;
    if (j.tasks * j.gpus_per_task == 1) ++one;
    durations.push_back(j.duration_ms);
    s.gpu_ms += g * static_cast<double>(j.duration_ms);
  }
  s.mean_gpus /= static_cast<double>(t.size());
  s.one_gpu_fraction = static_cast<double>(one) / static_cast<double>(t.size());
  const auto mid = static_cast<std::ptrdiff_t>(durations.size() / 2);
  std::nth_element(durations.begin(), durations.begin() + mid, durations.end());
  s.median_duration_s = static_cast<double>(durations[durations.size() / 2]) / 1000.0;
  s.span_ms = t.back().submit_ms - t.front().submit_ms;
  return s;
}

TEST(SyntheticProfiles, HeliosShapeMatchesItsSummary) {
  synthetic_params p;
  p.jobs = 40'000;
  p.profile = synthetic_profile::helios;
  const auto t = synthesize(p);
  ASSERT_THAT(t, IsOk());
  const shape_stats s = stats_of(*t);
  // GPU weights 60/10/10/15/3/1.5/0.4/0.1 % over 1..128 GPUs: mean 3.744 (Helios: 3.7).
  EXPECT_NEAR(s.mean_gpus, 3.744, 0.1);
  EXPECT_NEAR(s.one_gpu_fraction, 0.60, 0.01);
  // Median run time 206 s (Philly's is 874 s).
  EXPECT_NEAR(s.median_duration_s, 206.0, 15.0);
  // 128-GPU jobs exist and are split into 16 tasks of 8.
  const auto big =
      std::count_if(t->begin(), t->end(), [](const trace_job& j) { return j.tasks == 16; });
  EXPECT_GT(big, 0);
  for (const trace_job& j : *t) EXPECT_LE(j.gpus_per_task, 8u);

  p.profile = synthetic_profile::philly;
  const auto philly = synthesize(p);
  ASSERT_THAT(philly, IsOk());
  EXPECT_NEAR(stats_of(*philly).mean_gpus, 2.03, 0.1);
  EXPECT_NEAR(stats_of(*philly).median_duration_s, 874.0, 60.0);
  EXPECT_EQ(to_string(synthetic_profile::helios), "helios");
}

TEST(SyntheticProfiles, ArrivalRateGivesTheOfferedLoad) {
  synthetic_params p;
  p.jobs = 40'000;
  p.cluster_gpus = 512;
  for (const double load : {0.5, 0.9}) {
    p.load = load;
    const auto t = synthesize(p);
    ASSERT_THAT(t, IsOk());
    const shape_stats s = stats_of(*t);
    // GPU-time demand over the arrival span and the cluster: the load asked for (the span is a
    // sum of 39,999 exponential gaps, relative std 0.5%).
    const double offered = s.gpu_ms / (static_cast<double>(s.span_ms) * 512.0);
    EXPECT_NEAR(offered, load, 0.03 * load) << "load " << load;
  }
  // Same seed, half the load: the same jobs arriving at twice the gaps (up to ms rounding).
  p.load = 0.9;
  const auto full = synthesize(p);
  p.load = 0.45;
  const auto half = synthesize(p);
  ASSERT_THAT(full, IsOk());
  ASSERT_THAT(half, IsOk());
  for (std::size_t i = 0; i < full->size(); i += 997) {
    EXPECT_EQ((*half)[i].duration_ms, (*full)[i].duration_ms);
    EXPECT_LE(std::llabs((*half)[i].submit_ms - 2 * (*full)[i].submit_ms), 1) << i;
  }
  // More GPUs at the same load: proportionally faster arrivals.
  p.load = 0.9;
  p.cluster_gpus = 1024;
  const auto bigger = synthesize(p);
  ASSERT_THAT(bigger, IsOk());
  EXPECT_LE(std::llabs(2 * stats_of(*bigger).span_ms - stats_of(*full).span_ms), 1);
}

}  // namespace
}  // namespace hetsched::workload
