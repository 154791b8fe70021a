// SPDX-License-Identifier: MIT
// The seeded synthetic workload.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <hetsched/workload/synthetic.hpp>

#include "support/matchers.hpp"

namespace hetsched::workload {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;

TEST(Synthetic, SameSeedSameTraceOtherSeedOtherTrace) {
  synthetic_params p;
  p.jobs = 200;
  const auto a = synthesize(p);
  const auto b = synthesize(p);
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(*a, *b);
  p.seed = 2;
  EXPECT_NE(*a, *synthesize(p));
}

TEST(Synthetic, PhillyShapeMatchesTheSummary) {
  synthetic_params p;
  p.jobs = 40'000;
  p.cluster_gpus = 1000;
  const auto t = synthesize(p);
  ASSERT_THAT(t, IsOk());
  double gpus = 0;
  std::vector<std::int64_t> durations;
  std::int64_t last = -1;
  for (const trace_job& j : *t) {
    gpus += static_cast<double>(j.tasks * j.gpus_per_task);
    durations.push_back(j.duration_ms);
    EXPECT_GE(j.submit_ms, last);
    last = j.submit_ms;
    EXPECT_LE(j.gpus_per_task, 8u);
    EXPECT_EQ(j.gpu_milli_per_task, 1000 * std::int64_t{j.gpus_per_task});
  }
  // Mean GPUs per job: 2.03 by construction (Philly: 1.93).
  EXPECT_NEAR(gpus / static_cast<double>(t->size()), 2.03, 0.1);
  const auto mid = static_cast<std::ptrdiff_t>(durations.size() / 2);
  std::nth_element(durations.begin(), durations.begin() + mid, durations.end());
  // Median run time 874 s.
  EXPECT_NEAR(static_cast<double>(durations[durations.size() / 2]), 874'000.0, 60'000.0);
  EXPECT_EQ((*t)[0].submit_ms, 0);
  EXPECT_EQ((*t)[0].name, "j0");
}

TEST(Synthetic, LargeJobsSplitIntoNodeSizedTasks) {
  synthetic_params p;
  p.jobs = 5000;
  p.gpus_per_node = 4;
  p.max_gpus = 16;
  const auto t = synthesize(p);
  ASSERT_THAT(t, IsOk());
  bool saw_split = false;
  for (const trace_job& j : *t) {
    EXPECT_LE(j.tasks * j.gpus_per_task, 16u);
    if (j.tasks > 1) {
      saw_split = true;
      EXPECT_EQ(j.gpus_per_task, 4u);
    }
  }
  EXPECT_TRUE(saw_split);
}

TEST(Synthetic, RejectsBadParameters) {
  synthetic_params p;
  p.jobs = 0;
  EXPECT_THAT(synthesize(p), ErrorContains("jobs must be > 0"));
  p.jobs = 10;
  p.load = 0;
  EXPECT_THAT(synthesize(p), ErrorContains("load 0 is not in (0, 100]"));
  p.load = 1;
  p.min_duration_ms = 0;
  EXPECT_THAT(synthesize(p), ErrorContains("min_duration_ms 0"));
}

TEST(Synthetic, JobTypesComeFromGavelsTemplatesWithoutChangingAnythingElse) {
  const std::vector<std::string> gavel = gavel_job_types();
  ASSERT_EQ(gavel.size(), 26u);
  EXPECT_EQ(gavel.front(), "A3C");
  EXPECT_EQ(gavel[1], "CycleGAN");
  EXPECT_EQ(gavel.back(), "Transformer (batch size 64)");
  EXPECT_TRUE(std::is_sorted(gavel.begin(), gavel.end()));
  EXPECT_NE(std::find(gavel.begin(), gavel.end(), "ResNet-50 (batch size 64)"), gavel.end());

  synthetic_params p;
  p.jobs = 5200;
  const auto typed = synthesize(p);
  ASSERT_THAT(typed, IsOk());
  p.job_types.clear();
  const auto untyped = synthesize(p);
  ASSERT_THAT(untyped, IsOk());
  std::map<std::string, int> counts;
  for (std::size_t i = 0; i < typed->size(); ++i) {
    const trace_job& t = (*typed)[i];
    const trace_job& u = (*untyped)[i];
    EXPECT_TRUE(u.model.empty());
    ++counts[t.model];
    trace_job same = t;
    same.model.clear();
    ASSERT_EQ(same, u) << i;  // the mix draws from a stream of its own
  }
  // Uniform over 26 types: 200 each expected, within 4 standard deviations (about 56).
  EXPECT_EQ(counts.size(), 26u);
  for (const auto& [name, n] : counts) {
    EXPECT_NE(std::find(gavel.begin(), gavel.end(), name), gavel.end()) << name;
    EXPECT_NEAR(n, 200, 56) << name;
  }
  // The first jobs' types are fixed for seed 1.
  EXPECT_EQ((*typed)[0].model, "ResNet-18 (batch size 32)");
  EXPECT_EQ((*typed)[1].model, "ResNet-50 (batch size 32)");
  p.job_types = {"A", ""};
  EXPECT_THAT(synthesize(p), ErrorContains("job_types[1] is empty"));
}

TEST(SplitRng, KnownFirstValues) {
  split_rng r(0);
  // splitmix64 reference values for seed 0.
  EXPECT_EQ(r.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(r.next(), 0x6e789e6aa1b965f4ULL);
  split_rng u(5);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.uniform();
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    EXPECT_LT(u.below(7), 7u);
  }
}

}  // namespace
}  // namespace hetsched::workload
