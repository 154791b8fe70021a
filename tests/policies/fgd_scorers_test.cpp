// SPDX-License-Identifier: MIT
// fgd_scheduler: the FGD score and device choice, the five baselines' integer scores, the
// smallest-name tie-break and the seeded Random policy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/policies/fgd.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

constexpr std::int64_t big_mem = 1 << 20;

fgd_workload half_gpu_workload() {
  return fgd_workload_from_classes({{1000, 500, 1, "", 1}}, 0).value();
}

fgd_cluster one_node(std::vector<std::int64_t> used_milli, std::int64_t cpu = 64000) {
  auto c =
      fgd_cluster::make({{"n", cpu, big_mem, static_cast<std::uint32_t>(used_milli.size()), "T4"}})
          .value();
  for (std::uint32_t i = 0; i < used_milli.size(); ++i) {
    if (used_milli[i] == 0) continue;
    const std::vector<std::uint32_t> dev = {i};
    EXPECT_THAT(c.place(0, {0, 0, 1, used_milli[i], ""}, dev), testing::IsOk());
  }
  return c;
}

TEST(FgdScore, SharingTaskTakesTheDeviceThatFragmentsLeast) {
  // Free {1000, 600}; a 500 task on device 1 leaves 100 that no 500 class fits (F: 0 -> 100,
  // score floor(100*sigmoid(-0.1)) = 47); on device 0 it leaves {500, 600} (F stays 0, score 50).
  auto c = one_node({0, 400});
  fgd_scheduler s(fgd_policy::fgd, half_gpu_workload());
  const auto choice = s.choose(c, {1000, 0, 1, 500, ""});
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->gpus, std::vector<std::uint32_t>{0});
  EXPECT_EQ(choice->score, 50);
  auto tight = one_node({500, 400});
  const auto forced = s.choose(tight, {1000, 0, 1, 550, ""});
  ASSERT_TRUE(forced);
  // Only device 1 (600 free) fits 550; {500, 50}: the 50 is fragment, F 0 -> 50: 48
  EXPECT_EQ(forced->gpus, std::vector<std::uint32_t>{1});
  EXPECT_EQ(forced->score, 48);
}

TEST(FgdScore, ExclusiveTaskTakesLowestIndexFreeDevices) {
  auto c = one_node({0, 500, 0, 0});
  fgd_scheduler s(fgd_policy::fgd, half_gpu_workload());
  const auto choice = s.choose(c, {1000, 0, 2, 1000, ""});
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->gpus, (std::vector<std::uint32_t>{0, 2}));
}

TEST(FgdScore, NoFeasibleNodeIsNotAnError) {
  auto c = one_node({0, 0}, 1000);
  fgd_scheduler s(fgd_policy::fgd, half_gpu_workload());
  EXPECT_FALSE(s.choose(c, {2000, 0, 1, 500, ""}));
  EXPECT_FALSE(s.choose(c, {100, 0, 3, 1000, ""}));
}

TEST(FgdScore, TiesGoToTheSmallestName) {
  auto c =
      fgd_cluster::make({{"b", 64000, big_mem, 2, "T4"}, {"a", 64000, big_mem, 2, "T4"}}).value();
  for (const auto p : {fgd_policy::fgd, fgd_policy::best_fit, fgd_policy::dot_product,
                       fgd_policy::gpu_packing, fgd_policy::gpu_clustering}) {
    fgd_scheduler s(p, half_gpu_workload());
    const auto choice = s.choose(c, {1000, 0, 1, 500, ""});
    ASSERT_TRUE(choice);
    EXPECT_EQ(choice->node, 1U) << to_string(p);
  }
}

TEST(FgdBaselines, BestFitScore) {
  auto c = one_node({0, 0});
  fgd_scheduler s(fgd_policy::best_fit, {});
  // 0.5*(64000-32000)/128000 + 0.5*(2000-1000)/8000 = 0.1875 -> floor(81.25)
  EXPECT_EQ(s.score(c, 0, {32000, 0, 1, 1000, ""}).score, 81);
  // sharing task: best-fit device (least room that fits), lowest index on ties
  auto shared = one_node({0, 600, 700});
  EXPECT_EQ(s.score(shared, 0, {1000, 0, 1, 300, ""}).gpus, std::vector<std::uint32_t>{2});
}

TEST(FgdBaselines, DotProductScore) {
  auto c = one_node({0, 0});
  fgd_scheduler s(fgd_policy::dot_product, {});
  // node (0.5, 0.25) . pod (0.25, 0.125) = 0.15625, /2, 1 - 0.078125 -> floor(92.1875)
  EXPECT_EQ(s.score(c, 0, {32000, 0, 1, 1000, ""}).score, 92);
}

TEST(FgdBaselines, GpuPackingScore) {
  fgd_scheduler s(fgd_policy::gpu_packing, {});
  auto idle = one_node({0, 0});
  EXPECT_EQ(s.score(idle, 0, {1000, 0, 1, 300, ""}).score, 31);  // max(33 - 2, 2)
  auto used = one_node({500, 0});
  EXPECT_EQ(s.score(used, 0, {1000, 0, 1, 300, ""}).score, 95);   // 100 - 50/10
  EXPECT_EQ(s.score(used, 0, {1000, 0, 1, 1000, ""}).score, 49);  // 50 - 1
  EXPECT_EQ(s.score(used, 0, {1000, 0, 0, 0, ""}).score, 0);      // CPU-only
}

TEST(FgdBaselines, GpuClusteringScore) {
  fgd_scheduler s(fgd_policy::gpu_clustering, {});
  auto idle = one_node({0, 0});
  // 25*(8000-2000)/8000 = 18, + 25 for an idle node
  EXPECT_EQ(s.score(idle, 0, {1000, 0, 1, 300, ""}).score, 43);
  auto shared = one_node({500, 0});
  // 25*(8000-1500)/8000 = 20; hosts only sharing tasks: +75 for a sharing task, +0 otherwise
  EXPECT_EQ(s.score(shared, 0, {1000, 0, 1, 300, ""}).score, 95);
  EXPECT_EQ(s.score(shared, 0, {1000, 0, 1, 1000, ""}).score, 20);
}

TEST(FgdBaselines, RandomIsSeededAndFeasible) {
  std::vector<fgd_node_spec> nodes;
  for (int i = 0; i < 20; ++i) nodes.push_back({std::to_string(100 + i), 8000, big_mem, 4, "T4"});
  auto c = fgd_cluster::make(nodes).value();
  fgd_scheduler a(fgd_policy::random, {}, 7);
  fgd_scheduler b(fgd_policy::random, {}, 7);
  fgd_scheduler other(fgd_policy::random, {}, 8);
  std::vector<std::uint32_t> seq_a;
  std::vector<std::uint32_t> seq_other;
  for (int k = 0; k < 10; ++k) {
    const fgd_task t{1000, 0, 1, 250, ""};
    const auto x = a.choose(c, t);
    const auto y = b.choose(c, t);
    ASSERT_TRUE(x && y);
    EXPECT_EQ(*x, *y);
    seq_a.push_back(x->node);
    seq_other.push_back(other.choose(c, t)->node);
    ASSERT_THAT(c.place(x->node, t, x->gpus), testing::IsOk());
  }
  EXPECT_NE(seq_a, seq_other);
}

TEST(FgdPolicy, NamesRoundTrip) {
  for (const auto p : {fgd_policy::fgd, fgd_policy::best_fit, fgd_policy::dot_product,
                       fgd_policy::gpu_packing, fgd_policy::gpu_clustering, fgd_policy::random}) {
    EXPECT_EQ(parse_fgd_policy(to_string(p)), p);
  }
  EXPECT_EQ(parse_fgd_policy("DotProd"), fgd_policy::dot_product);
  EXPECT_EQ(parse_fgd_policy("fgd"), std::nullopt);
}

}  // namespace
}  // namespace hetsched
