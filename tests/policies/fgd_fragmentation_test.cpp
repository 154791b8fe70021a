// SPDX-License-Identifier: MIT
// The FGD target workload (popularity cut, weights) and the fragmentation measure's buckets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <hetsched/policies/fgd.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::HasErrc;

/// A: 4 cores + half a GPU (weight 0.75); B: 8 cores, no GPU (0.25); C: V100 only (weight 0 is
/// impossible, so tests that need C build their own workload).
fgd_workload two_classes() {
  return fgd_workload_from_classes({{4000, 500, 1, "", 3}, {8000, 0, 0, "", 1}}, 0).value();
}

TEST(FgdWorkload, WeightsAreCountOverTotalRenormalised) {
  auto w = fgd_workload_from_classes({{4000, 500, 1, "", 3}, {8000, 0, 0, "", 1}}, 8);
  ASSERT_TRUE(w);
  // (3/8)/(4/8) = 0.75 and (1/8)/(4/8) = 0.25
  EXPECT_DOUBLE_EQ(w->weights[0], 0.75);
  EXPECT_DOUBLE_EQ(w->weights[1], 0.25);
}

TEST(FgdWorkload, RejectsBadClasses) {
  EXPECT_THAT(fgd_workload_from_classes({}, 0), HasErrc(errc::invalid_argument));
  EXPECT_THAT(fgd_workload_from_classes({{1000, 0, 0, "", 0}}, 0), HasErrc(errc::invalid_argument));
  EXPECT_THAT(fgd_workload_from_classes({{1000, 0, 0, "", 5}}, 4), HasErrc(errc::invalid_argument));
}

TEST(FgdWorkload, PopularityCutKeepsTheShortestPrefixReachingThePercent) {
  std::vector<fgd_task> tasks;
  // 6 x (3152 -> class 3150, 810), 3 x (8000, 1000), 1 x (0 CPU -> 100, CPU-only)
  for (int i = 0; i < 6; ++i) tasks.push_back({3152, 0, 1, 810, ""});
  for (int i = 0; i < 3; ++i) tasks.push_back({8000, 0, 1, 1000, ""});
  tasks.push_back({0, 0, 0, 0, ""});
  auto w90 = make_fgd_workload(tasks, 90);
  ASSERT_TRUE(w90);
  // 6 + 3 = 9 of 10 tasks reach 90%: two classes, weights 6/9 and 3/9
  ASSERT_EQ(w90->classes.size(), 2U);
  EXPECT_EQ(w90->classes[0], (fgd_task_class{3150, 810, 1, "", 6}));
  EXPECT_EQ(w90->classes[1], (fgd_task_class{8000, 1000, 1, "", 3}));
  EXPECT_DOUBLE_EQ(w90->weights[0], (6.0 / 10) / (9.0 / 10));
  auto w95 = make_fgd_workload(tasks, 95);
  ASSERT_TRUE(w95);
  ASSERT_EQ(w95->classes.size(), 3U);
  EXPECT_EQ(w95->classes[2], (fgd_task_class{100, 0, 0, "", 1}));
  EXPECT_THAT(make_fgd_workload(tasks, 0), HasErrc(errc::out_of_range));
  EXPECT_THAT(make_fgd_workload({}, 95), HasErrc(errc::invalid_argument));
}

TEST(FgdWorkload, EqualCountsPutTheLargerClassFirst) {
  std::vector<fgd_task> tasks = {{1000, 0, 1, 500, ""}, {2000, 0, 1, 300, ""}};
  auto w = make_fgd_workload(tasks, 100);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->classes[0].cpu_milli, 2000);
  EXPECT_EQ(w->classes[1].cpu_milli, 1000);
}

TEST(FgdClassCpu, RoundsToTenMilliAndCountsZeroAsOneHundred) {
  EXPECT_EQ(fgd_class_cpu(3152), 3150);
  EXPECT_EQ(fgd_class_cpu(11908), 11910);
  EXPECT_EQ(fgd_class_cpu(4155), 4160);
  EXPECT_EQ(fgd_class_cpu(0), 100);
}

TEST(FgdFragmentation, FittingClassCountsOnlyTooSmallGpus) {
  const auto w = two_classes();
  const std::vector<std::int64_t> gpus = {1000, 300};
  const auto f = node_fragmentation(10000, gpus, "T4", w);
  // A fits (Q3): the 300 GPU is fragment: Q2 = 0.75*300, Q3 = 0.75*1000.
  // B is CPU-only with CPU enough: XL = 0.25*1300.
  EXPECT_DOUBLE_EQ(f.milli[static_cast<int>(frag_bucket::q2_lack_gpu)], 225);
  EXPECT_DOUBLE_EQ(f.milli[static_cast<int>(frag_bucket::q3_satisfied)], 750);
  EXPECT_DOUBLE_EQ(f.milli[static_cast<int>(frag_bucket::xl_satisfied)], 325);
  EXPECT_DOUBLE_EQ(f.fragment(), 550);
  EXPECT_DOUBLE_EQ(f.idle(), 1300);
  EXPECT_DOUBLE_EQ(f.q124(), 225);
}

TEST(FgdFragmentation, ShortCpuOrGpuMakesAllIdleFragment) {
  const auto w = two_classes();
  const std::vector<std::int64_t> free_gpus = {1000, 300};
  const auto q4 = node_fragmentation(3000, free_gpus, "T4", w);
  // A: GPUs fit, CPU short -> Q4 = 0.75*1300; B: XR = 0.25*1300
  EXPECT_DOUBLE_EQ(q4.milli[static_cast<int>(frag_bucket::q4_lack_cpu)], 975);
  EXPECT_DOUBLE_EQ(q4.milli[static_cast<int>(frag_bucket::xr_lack_cpu)], 325);
  EXPECT_DOUBLE_EQ(q4.fragment(), 1300);
  const std::vector<std::int64_t> small = {300, 300};
  const auto q1 = node_fragmentation(3000, small, "T4", w);
  EXPECT_DOUBLE_EQ(q1.milli[static_cast<int>(frag_bucket::q1_lack_both)], 450);
  const auto q2 = node_fragmentation(9000, small, "T4", w);
  EXPECT_DOUBLE_EQ(q2.milli[static_cast<int>(frag_bucket::q2_lack_gpu)], 450);
  EXPECT_DOUBLE_EQ(q2.q124(), 450);
}

TEST(FgdFragmentation, DisallowedModelIsNoAccess) {
  auto w = fgd_workload_from_classes({{1000, 1000, 1, "V100M16|V100M32", 1}}, 0).value();
  const std::vector<std::int64_t> gpus = {1000, 1000};
  const auto t4 = node_fragmentation(96000, gpus, "T4", w);
  EXPECT_DOUBLE_EQ(t4.milli[static_cast<int>(frag_bucket::no_access)], 2000);
  const auto v100 = node_fragmentation(96000, gpus, "V100M32", w);
  EXPECT_DOUBLE_EQ(v100.milli[static_cast<int>(frag_bucket::q3_satisfied)], 2000);
  EXPECT_DOUBLE_EQ(v100.fragment(), 0);
}

TEST(FgdFragmentation, BucketNames) {
  EXPECT_EQ(to_string(frag_bucket::q1_lack_both), "Q1");
  EXPECT_EQ(to_string(frag_bucket::no_access), "NoAccess");
  EXPECT_EQ(to_string(frag_bucket::xr_lack_cpu), "XR");
}

TEST(FgdModelAllowed, EmptySpecAllowsAllButPipesListModels) {
  EXPECT_TRUE(fgd_model_allowed("T4", ""));
  EXPECT_TRUE(fgd_model_allowed("", ""));
  EXPECT_TRUE(fgd_model_allowed("P100", "P100|V100M16"));
  EXPECT_FALSE(fgd_model_allowed("T4", "P100|V100M16"));
  EXPECT_FALSE(fgd_model_allowed("", "T4"));
  EXPECT_TRUE(fgd_model_allowed("T4", "|"));
}

}  // namespace
}  // namespace hetsched
