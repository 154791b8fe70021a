// SPDX-License-Identifier: MIT
// Tests for hetsched/policies/drf.hpp: exact shares, weights, exclusion, GPU grouping,
// progressive filling (tasks and divisible) and H-DRF.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <hetsched/policies/drf.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::testing::ElementsAre;

drf_user user(std::string name, drf_vector demand, double weight = 1.0,
              std::optional<std::int64_t> max_tasks = std::nullopt) {
  return drf_user{std::move(name), std::move(demand), weight, {}, max_tasks};
}

TEST(Drf, PaperExampleEqualizesDominantShares) {
  const drf_vector capacity{{"cpu", 9}, {"mem", 18}};
  const std::vector<drf_user> users{user("A", {{"cpu", 1}, {"mem", 4}}),
                                    user("B", {{"cpu", 3}, {"mem", 1}})};
  const auto got = drf_fill_tasks(capacity, users);
  ASSERT_THAT(got, IsOk());
  // A 3 tasks <3 CPU, 12 GB>, B 2 tasks <6 CPU, 2 GB>; dominant shares 2/3 (mem) and 2/3 (cpu).
  EXPECT_THAT(got->tasks, ElementsAre(3, 2));
  EXPECT_EQ(got->allocation[0], (drf_vector{{"cpu", 3}, {"mem", 12}}));
  EXPECT_EQ(got->allocation[1], (drf_vector{{"cpu", 6}, {"mem", 2}}));
  EXPECT_EQ(got->dominant[0].share, (drf_share{2, 3}));
  EXPECT_EQ(got->dominant[1].share, (drf_share{2, 3}));
  EXPECT_EQ(got->dominant[0].resource, "mem");
  EXPECT_EQ(got->dominant[1].resource, "cpu");
}

TEST(Drf, TaskOrderBreaksTiesByTasksThenIndex) {
  const drf_vector capacity{{"cpu", 9}, {"mem", 18}};
  const std::vector<drf_user> users{user("A", {{"cpu", 1}, {"mem", 4}}),
                                    user("B", {{"cpu", 3}, {"mem", 1}})};
  const auto got = drf_fill_tasks(capacity, users);
  ASSERT_THAT(got, IsOk());
  // 0/0 tie -> A (lower index); then B 0 < A 2/9; A 2/9 < B 1/3; B 1/3 < A 4/9; A 4/9 < B 2/3.
  EXPECT_THAT(got->order, ElementsAre(0, 1, 0, 1, 0));
}

TEST(Drf, DivisiblePaperExampleIsExact) {
  const drf_vector capacity{{"cpu", 9}, {"mem", 18}};
  const std::vector<drf_user> users{user("A", {{"cpu", 1}, {"mem", 4}}),
                                    user("B", {{"cpu", 3}, {"mem", 1}})};
  const auto got = drf_fill_divisible(capacity, users);
  ASSERT_THAT(got, IsOk());
  // The LP max(x,y) s.t. x+3y<=9, 4x+y<=18, 2x/9 = y/3: x = 3, y = 2, shares 2/3.
  EXPECT_EQ(got->tasks[0], (drf_rational{3, 1}));
  EXPECT_EQ(got->tasks[1], (drf_rational{2, 1}));
  EXPECT_EQ(got->dominant_share[0], (drf_rational{2, 3}));
  EXPECT_EQ(got->dominant_share[1], (drf_rational{2, 3}));
}

TEST(Drf, DivisibleFillingCapsDemandAndSharesTheRest) {
  const drf_vector capacity{{"cpu", 10}};
  const std::vector<drf_user> users{user("A", {{"cpu", 1}}, 1.0, 1), user("B", {{"cpu", 1}}),
                                    user("C", {{"cpu", 2}})};
  const auto got = drf_fill_divisible(capacity, users);
  ASSERT_THAT(got, IsOk());
  // A frozen at its cap 1 (share 1/10); B and C share 9 CPU equally: B 9/2 tasks, C 9/4 tasks.
  EXPECT_EQ(got->tasks[0], (drf_rational{1, 1}));
  EXPECT_EQ(got->tasks[1], (drf_rational{9, 2}));
  EXPECT_EQ(got->tasks[2], (drf_rational{9, 4}));
  EXPECT_EQ(got->dominant_share[1], (drf_rational{9, 20}));
  EXPECT_EQ(got->dominant_share[2], (drf_rational{9, 20}));
}

TEST(Drf, DemandCappedTaskFillingGivesTheRestToOthers) {
  const drf_vector capacity{{"cpu", 10}, {"mem", 10}};
  const std::vector<drf_user> users{user("A", {{"cpu", 1}, {"mem", 1}}, 1.0, 2),
                                    user("B", {{"cpu", 1}, {"mem", 1}}),
                                    user("C", {{"cpu", 1}, {"mem", 1}})};
  const auto got = drf_fill_tasks(capacity, users);
  ASSERT_THAT(got, IsOk());
  // A stops at 2; B and C split the remaining 8: 4 each.
  EXPECT_THAT(got->tasks, ElementsAre(2, 4, 4));
}

TEST(Drf, ScalarWeightsGiveProportionalShares) {
  const drf_vector capacity{{"cpu", 12}, {"mem", 12}};
  const std::vector<drf_user> users{user("u1", {{"cpu", 1}, {"mem", 1}}, 1.0),
                                    user("u2", {{"cpu", 1}, {"mem", 1}}, 2.0),
                                    user("u3", {{"cpu", 1}, {"mem", 1}}, 3.0)};
  const auto got = drf_fill_tasks(capacity, users);
  ASSERT_THAT(got, IsOk());
  // Tasks 2:4:6; weighted dominant shares all (2/12)/1 = (4/12)/2 = (6/12)/3 = 1/6.
  EXPECT_THAT(got->tasks, ElementsAre(2, 4, 6));
  for (const auto& d : got->dominant) EXPECT_EQ(d.share, (drf_share{1, 6}));
}

// Reference §1 (vector drf.weighted.tie_break_sensitivity): A <1,4> weight 2, B <3,1> weight 1
// on <9,18> ends at (4,1) or (3,2) depending on the tie-break. Weighted shares grow by 1/9 per A
// task (4/18 / 2) and 1/3 per B task. After A, B, A, A both are at 1/3; the chain's second link
// (fewer tasks: B has 1, A has 3) serves B, which uses the last CPU, so hetsched gives (3,2).
TEST(Drf, WeightedIndivisibleTieBreakGivesThreeTwo) {
  const drf_vector capacity{{"cpu", 9}, {"mem", 18}};
  const std::vector<drf_user> users{user("A", {{"cpu", 1}, {"mem", 4}}, 2.0),
                                    user("B", {{"cpu", 3}, {"mem", 1}}, 1.0)};
  const auto got = drf_fill_tasks(capacity, users);
  ASSERT_THAT(got, IsOk());
  EXPECT_THAT(got->tasks, ElementsAre(3, 2));
  EXPECT_THAT(got->order, ElementsAre(0, 1, 0, 0, 1));
  EXPECT_EQ(got->allocation[0], (drf_vector{{"cpu", 3}, {"mem", 12}}));
  EXPECT_EQ(got->allocation[1], (drf_vector{{"cpu", 6}, {"mem", 2}}));
  EXPECT_EQ(got->dominant[0].share, (drf_share{1, 3}));  // (12/18) / 2
  EXPECT_EQ(got->dominant[0].resource, "mem");
  EXPECT_EQ(got->dominant[1].share, (drf_share{2, 3}));  // 6/9
  EXPECT_EQ(got->dominant[1].resource, "cpu");
}

// The same example with the users listed the other way round: the 1/3 tie is decided by the task
// count, not the input index, so the split stays (3,2); only the first pick (0/0, both 0 tasks)
// follows the index.
TEST(Drf, WeightedIndivisibleSplitDoesNotDependOnInputOrder) {
  const drf_vector capacity{{"cpu", 9}, {"mem", 18}};
  const std::vector<drf_user> users{user("B", {{"cpu", 3}, {"mem", 1}}, 1.0),
                                    user("A", {{"cpu", 1}, {"mem", 4}}, 2.0)};
  const auto got = drf_fill_tasks(capacity, users);
  ASSERT_THAT(got, IsOk());
  EXPECT_THAT(got->tasks, ElementsAre(2, 3));
  EXPECT_THAT(got->order, ElementsAre(0, 1, 1, 1, 0));
}

TEST(Drf, PerResourceWeightsScaleOnlyTheirResource) {
  const drf_vector capacity{{"cpu", 10}, {"mem", 10}};
  drf_client_weight w;
  w.per_resource.insert_or_assign("cpu", drf_weight{2, 1});
  const auto d = dominant_share({{"cpu", 5}, {"mem", 4}}, capacity, w);
  ASSERT_THAT(d, IsOk());
  // cpu 5 / (2 * 10) = 1/4, mem 4 / (1 * 10) = 2/5 -> dominant mem, 2/5.
  EXPECT_EQ(d->share, (drf_share{2, 5}));
  EXPECT_EQ(d->resource, "mem");

  std::vector<drf_user> users{user("A", {{"cpu", 1}}), user("B", {{"cpu", 1}})};
  users[0].resource_weights.insert_or_assign("cpu", 2.0);
  const auto got = drf_fill_divisible(capacity, users);
  ASSERT_THAT(got, IsOk());
  // A: x/20, B: y/10 rise together; x + y = 10 -> A 20/3, B 10/3, weighted shares 1/3.
  EXPECT_EQ(got->tasks[0], (drf_rational{20, 3}));
  EXPECT_EQ(got->tasks[1], (drf_rational{10, 3}));
}

TEST(Drf, SharesDifferingByOnePartInTenToTheTwelveCompareExactly) {
  const drf_vector capacity{{"cpu", 1'000'000'000'000}, {"mem", 1'000'000'000'001}};
  const auto a = dominant_share({{"cpu", 999'999'999'999}}, capacity);
  const auto b = dominant_share({{"mem", 1'000'000'000'000}}, capacity);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  // a = 1 - 1e-12, b = 1 - 1/(1e12 + 1): equal as doubles, a < b exactly.
  EXPECT_EQ(a->share.to_double(), b->share.to_double());
  EXPECT_LT(a->share, b->share);
}

TEST(Drf, SharesDifferingByOnePartInTenToTheFifteenCompareExactly) {
  const drf_share a{1'000'000'000'000'000, 1'000'000'000'000'001};
  const drf_share b{1'000'000'000'000'001, 1'000'000'000'000'002};
  // a = 1 - 1/(1e15 + 1) < b = 1 - 1/(1e15 + 2); doubles cannot tell them apart.
  EXPECT_EQ(a.to_double(), b.to_double());
  EXPECT_LT(a, b);
  EXPECT_EQ((drf_share{2, 4}), (drf_share{1, 2}));
}

TEST(Drf, ExcludedGpuIsIgnoredByShares) {
  const drf_vector capacity{{"gpu", 4}, {"cpu", 12}};
  const std::vector<drf_user> users{user("A", {{"gpu", 1}, {"cpu", 1}}), user("B", {{"cpu", 1}})};
  const auto counted = drf_fill_divisible(capacity, users);
  ASSERT_THAT(counted, IsOk());
  // GPU counted: A's dominant is gpu (1/4 per task): A 3, B 9 (CPU saturates at level 3/4).
  EXPECT_EQ(counted->tasks[0], (drf_rational{3, 1}));
  EXPECT_EQ(counted->tasks[1], (drf_rational{9, 1}));
  drf_fill_options options;
  options.excluded.insert("gpu");
  const auto excluded = drf_fill_divisible(capacity, users, options);
  ASSERT_THAT(excluded, IsOk());
  // GPU excluded: both rise on cpu; GPU runs out at A = 4, then B takes the rest, 8.
  EXPECT_EQ(excluded->tasks[0], (drf_rational{4, 1}));
  EXPECT_EQ(excluded->tasks[1], (drf_rational{8, 1}));
}

TEST(Drf, FungibleGpuTypesPoolWhilePerTypeKeepsThemApart) {
  const gpu_type a100("A100-SXM4-80GB");
  const gpu_type v100("V100-SXM2-32GB");
  resource_vector four;
  four.milli_gpu = 4000;
  resource_vector two;
  two.milli_gpu = 2000;
  two.milli_cpu = 1000;
  EXPECT_EQ(to_drf_vector(two, a100, gpu_grouping::fungible),
            (drf_vector{{"cpu", 1000}, {"gpu", 2000}}));
  EXPECT_EQ(to_drf_vector(two, a100, gpu_grouping::per_type),
            (drf_vector{{"cpu", 1000}, {"gpu/A100-SXM4-80GB", 2000}}));

  drf_vector pooled = to_drf_vector(four, a100, gpu_grouping::fungible);
  pooled["gpu"] += to_drf_vector(four, v100, gpu_grouping::fungible).at("gpu");
  drf_vector apart = to_drf_vector(four, a100, gpu_grouping::per_type);
  for (const auto& [name, amount] : to_drf_vector(four, v100, gpu_grouping::per_type))
    apart.insert_or_assign(name, amount);
  const auto fungible = dominant_share(to_drf_vector(two, a100, gpu_grouping::fungible), pooled);
  const auto per_type = dominant_share(to_drf_vector(two, a100, gpu_grouping::per_type), apart);
  ASSERT_THAT(fungible, IsOk());
  ASSERT_THAT(per_type, IsOk());
  // 2 of 8 pooled GPUs = 1/4; 2 of 4 A100s = 1/2.
  EXPECT_EQ(fungible->share, (drf_share{1, 4}));
  EXPECT_EQ(per_type->share, (drf_share{1, 2}));
  // Excluding "gpu" also excludes every "gpu/<type>".
  const drf_exclusions no_gpu{"gpu"};
  EXPECT_TRUE(drf_is_excluded(no_gpu, "gpu/A100-SXM4-80GB"));
  EXPECT_FALSE(drf_is_excluded(no_gpu, "gpu_memory"));
  const auto ignored =
      dominant_share(to_drf_vector(two, a100, gpu_grouping::per_type), apart, {}, no_gpu);
  ASSERT_THAT(ignored, IsOk());
  // Only the CPU would count, and the capacity has none: share 0.
  EXPECT_EQ(ignored->share, (drf_share{0, 1}));
}

TEST(Drf, WeightsAreExactFractions) {
  // 0.1 -> 1/10, 2.5 -> 5/2.
  EXPECT_EQ(*make_drf_weight(0.1, "e"), (drf_weight{1, 10}));
  EXPECT_EQ(*make_drf_weight(2.5, "e"), (drf_weight{5, 2}));
  EXPECT_EQ(*make_drf_weight(3.0, "e"), (drf_weight{3, 1}));
}

TEST(Drf, BadWeightsAreRejectedNamingTheClient) {
  EXPECT_THAT(make_drf_weight(0.0, "alice"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(make_drf_weight(-1.0, "alice"), ErrorContains("alice"));
  EXPECT_THAT(make_drf_weight(std::nan(""), "alice"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(make_drf_weight(std::numeric_limits<double>::infinity(), "alice"),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(make_drf_weight(1e9, "alice"), HasErrc(errc::out_of_range));
  const std::vector<drf_user> users{user("A", {{"cpu", 1}}), user("bob", {{"cpu", 1}}, -2.0)};
  const auto got = drf_fill_tasks({{"cpu", 4}}, users);
  EXPECT_THAT(got, HasErrc(errc::invalid_argument));
  EXPECT_THAT(got, ErrorContains("bob"));
}

TEST(Drf, BadInputIsAnError) {
  const drf_vector capacity{{"cpu", 4}};
  EXPECT_THAT(drf_fill_tasks({{"cpu", -1}}, std::vector<drf_user>{}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(drf_fill_tasks({{"cpu", max_resource_amount + 1}}, std::vector<drf_user>{}),
              HasErrc(errc::out_of_range));
  EXPECT_THAT(drf_fill_tasks(capacity, std::vector{user("A", {{"cpu", -1}})}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(drf_fill_tasks(capacity, std::vector{user("A", {{"cpu", 1}}), user("A", {})}),
              ErrorContains("twice"));
  EXPECT_THAT(drf_fill_tasks(capacity, std::vector{user("A", {})}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(drf_fill_tasks(capacity, std::vector{user("A", {{"cpu", 1}}, 1.0, -1)}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(
      drf_fill_tasks(capacity, std::vector{user("A", {{"cpu", 1}}, 1.0, max_resource_amount + 1)}),
      HasErrc(errc::out_of_range));
  EXPECT_THAT(drf_fill_divisible(capacity, std::vector{user("A", {{"gpu", 1}})}),
              ErrorContains("no fairness resource"));
  EXPECT_THAT(dominant_share({{"cpu", -3}}, capacity), HasErrc(errc::invalid_argument));
}

TEST(Drf, HdrfRescalesSiblingsSoNaiveDrfDoesNotStarveProd) {
  const drf_vector capacity{{"cpu", 10}, {"mem", 10}};
  const std::vector<hdrf_queue> queues{
      {"root/sci", 50}, {"root/eng", 50}, {"root/eng/dev", 50}, {"root/eng/prod", 50}};
  const std::vector<hdrf_job> jobs{{"pg1", "root/sci", {{"cpu", 1}, {"mem", 1}}, 10},
                                   {"pg21", "root/eng/dev", {{"cpu", 1}}, 10},
                                   {"pg22", "root/eng/prod", {{"mem", 1}}, 10}};
  const auto got = hdrf_fill_tasks(capacity, queues, jobs);
  ASSERT_THAT(got, IsOk());
  // pg1 <5,5>, pg21 <5,0>, pg22 <0,5>.
  EXPECT_THAT(got->tasks, ElementsAre(5, 5, 5));
  EXPECT_EQ(got->allocation[1], (drf_vector{{"cpu", 5}}));
}

TEST(Drf, HdrfWeightsSplitEachLevel) {
  const drf_vector capacity{{"gpu", 300}};
  const std::vector<hdrf_queue> queues{{"org/C1/1A", 1}, {"org/C1/1B", 1}, {"org/C1/1C", 3}};
  const std::vector<hdrf_job> jobs{{"a", "org/C1/1A", {{"gpu", 1}}, std::nullopt},
                                   {"b", "org/C1/1B", {{"gpu", 1}}, std::nullopt},
                                   {"c", "org/C1/1C", {{"gpu", 1}}, std::nullopt},
                                   {"d", "org/C2/2A", {{"gpu", 1}}, std::nullopt}};
  const auto got = hdrf_fill_tasks(capacity, queues, jobs);
  ASSERT_THAT(got, IsOk());
  // C1 150 = 30 + 30 + 90 (weights 1:1:3), C2 150.
  EXPECT_THAT(got->tasks, ElementsAre(30, 30, 90, 150));
}

TEST(Drf, HdrfRejectsBadInput) {
  const drf_vector capacity{{"cpu", 4}};
  const std::vector<hdrf_job> ok_jobs{{"j", "q", {{"cpu", 1}}, 1}};
  EXPECT_THAT(hdrf_fill_tasks(capacity, std::vector<hdrf_queue>{{"q", 0.0}}, ok_jobs),
              ErrorContains("q"));
  EXPECT_THAT(hdrf_fill_tasks(capacity, std::vector<hdrf_queue>{{"q", 1}, {"q", 2}}, ok_jobs),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(hdrf_fill_tasks(capacity, {}, std::vector<hdrf_job>{{"j", "a//b", {{"cpu", 1}}, 1}}),
              ErrorContains("empty segment"));
  EXPECT_THAT(hdrf_fill_tasks(capacity, {}, std::vector<hdrf_job>{{"j", "q", {{"cpu", 1}}, -1}}),
              HasErrc(errc::invalid_argument));
}

}  // namespace
}  // namespace hetsched
