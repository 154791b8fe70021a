// SPDX-License-Identifier: MIT
// fgd_cluster: construction errors, the filter, and place() (validated, all or nothing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <hetsched/policies/fgd.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::HasErrc;

std::vector<fgd_node_spec> small_nodes() {
  return {{"n1", 32000, 65536, 2, "T4"}, {"n0", 64000, 131072, 4, "V100M16"}};
}

TEST(FgdCluster, RejectsBadNodes) {
  EXPECT_THAT(fgd_cluster::make({{"a", 1, 1, 0, ""}, {"a", 1, 1, 0, ""}}),
              HasErrc(errc::already_exists));
  EXPECT_THAT(fgd_cluster::make({{"", 1, 1, 0, ""}}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(fgd_cluster::make({{"a", 1, 1, 2, ""}}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(fgd_cluster::make({{"a", 1, 1, 65, "X"}}), HasErrc(errc::out_of_range));
}

TEST(FgdCluster, StartsIdleWithNameRanks) {
  auto c = fgd_cluster::make(small_nodes()).value();
  EXPECT_EQ(c.total_gpus(), 6);
  EXPECT_EQ(c.used_nodes(), 0U);
  EXPECT_EQ(c.name_rank(0), 1U);  // "n1" after "n0"
  EXPECT_EQ(c.name_rank(1), 0U);
  EXPECT_THAT(std::vector<std::int64_t>(c.gpu_left(1).begin(), c.gpu_left(1).end()),
              ::testing::ElementsAre(1000, 1000, 1000, 1000));
}

TEST(FgdCluster, FilterChecksCpuMemoryModelAndDevices) {
  auto c = fgd_cluster::make(small_nodes()).value();
  EXPECT_TRUE(c.fits(0, {32000, 65536, 2, 1000, ""}));
  EXPECT_FALSE(c.fits(0, {32001, 1, 0, 0, ""}));
  EXPECT_FALSE(c.fits(0, {1, 65537, 0, 0, ""}));
  EXPECT_FALSE(c.fits(0, {1, 1, 3, 1000, ""}));
  EXPECT_FALSE(c.fits(0, {1, 1, 1, 500, "V100M16|V100M32"}));
  EXPECT_TRUE(c.fits(1, {1, 1, 1, 500, "V100M16|V100M32"}));
}

TEST(FgdCluster, PlaceTakesResourcesAndCountsAffinity) {
  auto c = fgd_cluster::make(small_nodes()).value();
  const std::vector<std::uint32_t> gpu1 = {1};
  ASSERT_THAT(c.place(1, {8000, 1024, 1, 300, ""}, gpu1), testing::IsOk());
  ASSERT_THAT(c.place(1, {8000, 1024, 1, 300, ""}, gpu1), testing::IsOk());
  EXPECT_EQ(c.cpu_left(1), 48000);
  EXPECT_EQ(c.memory_left(1), 131072 - 2048);
  EXPECT_EQ(c.gpu_left(1)[1], 400);
  EXPECT_EQ(c.used_gpu_milli(), 600);
  EXPECT_EQ(c.used_nodes(), 1U);
  EXPECT_EQ(c.affinity(1)[0], 2U);  // two sharing tasks
  EXPECT_EQ(c.affinity_kinds(1), 1U);
  const std::vector<std::uint32_t> two = {0, 2};
  ASSERT_THAT(c.place(1, {1000, 0, 2, 1000, ""}, two), testing::IsOk());
  EXPECT_EQ(c.affinity(1)[2], 1U);
  EXPECT_EQ(c.affinity_kinds(1), 2U);
  ASSERT_THAT(c.place(0, {1000, 0, 0, 0, ""}, {}), testing::IsOk());
  EXPECT_EQ(c.used_nodes(), 2U);
  EXPECT_EQ(c.affinity_kinds(0), 0U);  // CPU-only tasks carry no affinity
}

TEST(FgdCluster, BadPlacementChangesNothing) {
  auto c = fgd_cluster::make(small_nodes()).value();
  const std::vector<std::uint32_t> twice = {0, 0};
  const std::vector<std::uint32_t> far = {7};
  const std::vector<std::uint32_t> one = {0};
  EXPECT_THAT(c.place(1, {1, 1, 2, 1000, ""}, twice), HasErrc(errc::invalid_argument));
  EXPECT_THAT(c.place(1, {1, 1, 1, 1000, ""}, far), HasErrc(errc::not_found));
  EXPECT_THAT(c.place(1, {1, 1, 2, 1000, ""}, one), HasErrc(errc::invalid_argument));
  EXPECT_THAT(c.place(0, {99999, 1, 1, 1000, ""}, one), HasErrc(errc::failed_precondition));
  EXPECT_THAT(c.place(0, {1, 1, 1, 500, "P100"}, one), HasErrc(errc::failed_precondition));
  EXPECT_THAT(c.place(0, {1, 1, 1, 1001, ""}, one), HasErrc(errc::out_of_range));
  EXPECT_THAT(c.place(5, {1, 1, 0, 0, ""}, {}), HasErrc(errc::not_found));
  EXPECT_EQ(c.cpu_left(1), 64000);
  EXPECT_EQ(c.gpu_left(1)[0], 1000);
  EXPECT_EQ(c.used_gpu_milli(), 0);
  EXPECT_EQ(c.used_nodes(), 0U);
}

TEST(FgdTask, ValidateNamesTheField) {
  EXPECT_THAT(validate(fgd_task{-1, 0, 0, 0, ""}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(fgd_task{1, 0, 0, 5, ""}), testing::ErrorContains("gpu_milli 5"));
  EXPECT_THAT(validate(fgd_task{1, 0, 2, 500, ""}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(fgd_task{1, 0, 1, 0, ""}), HasErrc(errc::out_of_range));
  EXPECT_THAT(validate(fgd_task{1, 0, 8, 1000, ""}), testing::IsOk());
}

}  // namespace
}  // namespace hetsched
