// SPDX-License-Identifier: MIT
// Tests for hetsched::drf_sorter (Mesos DRFSorter semantics, exact shares, O(log n) updates).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/drf.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::testing::ElementsAre;

std::vector<std::string> order(const drf_sorter& s) {
  std::vector<std::string> out;
  for (const auto id : s.sort()) out.push_back(s.path(id));
  return out;
}

drf_vector res(std::int64_t cpus, std::int64_t mem) { return {{"cpus", cpus}, {"mem", mem}}; }

class DrfSorterFixture : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(sorter.set_total(res(100, 100)), IsOk()); }
  drf_client_id add(const std::string& path) { return sorter.add(path).value(); }
  drf_sorter sorter;
};

using DrfSorter = DrfSorterFixture;

TEST_F(DrfSorter, PicksTheLowestDominantShare) {
  const auto a = add("a");
  const auto b = add("b");
  ASSERT_THAT(sorter.allocated(a, res(5, 5)), IsOk());
  ASSERT_THAT(sorter.allocated(b, res(1, 6)), IsOk());
  // shares: a = .05, b = .06 (mem)
  EXPECT_EQ(sorter.pick_next(), a);
  EXPECT_EQ(*sorter.share(b), (drf_share{6, 100}));
  EXPECT_THAT(order(sorter), ElementsAre("a", "b"));
}

TEST_F(DrfSorter, EqualSharesGoToFewerAllocationsThenSmallerPath) {
  const auto c = add("c");
  const auto b = add("b");
  const auto a = add("a");
  ASSERT_THAT(sorter.allocated(c, res(3, 3)), IsOk());
  ASSERT_THAT(sorter.allocated(b, res(1, 1)), IsOk());
  ASSERT_THAT(sorter.allocated(b, res(2, 2)), IsOk());
  ASSERT_THAT(sorter.allocated(a, res(3, 3)), IsOk());
  // shares all .03; counts a = 1, c = 1, b = 2 -> a, c (path), then b (count).
  EXPECT_THAT(order(sorter), ElementsAre("a", "c", "b"));
  EXPECT_EQ(*sorter.allocation_count(b), 2);
}

TEST_F(DrfSorter, CountSurvivesUnallocateAndDeactivation) {
  const auto a = add("a");
  const auto b = add("b");
  ASSERT_THAT(sorter.allocated(a, res(1, 1)), IsOk());
  ASSERT_THAT(sorter.allocated(a, res(1, 1)), IsOk());
  ASSERT_THAT(sorter.allocated(b, res(2, 2)), IsOk());
  ASSERT_THAT(sorter.unallocated(a, res(2, 2)), IsOk());
  ASSERT_THAT(sorter.deactivate(a), IsOk());
  ASSERT_THAT(sorter.activate(a), IsOk());
  ASSERT_THAT(sorter.allocated(a, res(2, 2)), IsOk());
  // shares a = b = .02; counts a = 3 (never reset), b = 1 -> b first.
  EXPECT_EQ(*sorter.allocation_count(a), 3);
  EXPECT_THAT(order(sorter), ElementsAre("b", "a"));
  ASSERT_THAT(sorter.update(b, res(2, 2), res(2, 2)), IsOk());
  // update() does not count.
  EXPECT_EQ(*sorter.allocation_count(b), 1);
}

TEST_F(DrfSorter, InactiveClientsAreSkippedButTheirAllocationCounts) {
  const auto a = add("x/a");
  const auto b = add("x/b");
  const auto c = add("y");
  ASSERT_THAT(sorter.allocated(a, res(5, 5)), IsOk());
  ASSERT_THAT(sorter.allocated(c, res(3, 3)), IsOk());
  ASSERT_THAT(sorter.deactivate(b), IsOk());
  ASSERT_THAT(sorter.deactivate(a), IsOk());
  // x = .05 (from inactive a) > y = .03; x has no active leaf, so only y is listed.
  EXPECT_THAT(order(sorter), ElementsAre("y"));
  ASSERT_THAT(sorter.activate(b), IsOk());
  EXPECT_THAT(order(sorter), ElementsAre("y", "x/b"));
  ASSERT_THAT(sorter.deactivate(c), IsOk());
  EXPECT_EQ(sorter.pick_next(), b);
  ASSERT_THAT(sorter.deactivate(b), IsOk());
  EXPECT_EQ(sorter.pick_next(), std::nullopt);
}

TEST_F(DrfSorter, WeightsDivideSharesAndMayPrecedeTheClient) {
  ASSERT_THAT(sorter.set_weight("b", 2.0), IsOk());
  const auto a = add("a");
  const auto b = add("b");
  ASSERT_THAT(sorter.allocated(a, res(5, 5)), IsOk());
  ASSERT_THAT(sorter.allocated(b, res(6, 6)), IsOk());
  // a = .05, b = .06 / 2 = .03.
  EXPECT_THAT(order(sorter), ElementsAre("b", "a"));
  ASSERT_THAT(sorter.set_weight("a", 0.1), IsOk());
  // a = .05 / .1 = .5 exactly.
  EXPECT_EQ(*sorter.share(a), (drf_share{1, 2}));
  EXPECT_THAT(order(sorter), ElementsAre("b", "a"));
}

TEST_F(DrfSorter, HierarchyComparesSubtreeSharesLevelByLevel) {
  const auto a = add("a");
  const auto c = add("b/c");
  const auto d = add("b/d");
  ASSERT_THAT(sorter.allocated(a, res(6, 6)), IsOk());
  ASSERT_THAT(sorter.allocated(c, res(4, 4)), IsOk());
  ASSERT_THAT(sorter.allocated(d, res(3, 3)), IsOk());
  // subtree b = .07 > a = .06; inside b, d .03 < c .04.
  EXPECT_THAT(order(sorter), ElementsAre("a", "b/d", "b/c"));
  ASSERT_THAT(sorter.remove(c), IsOk());
  // b = .03 < a.
  EXPECT_THAT(order(sorter), ElementsAre("b/d", "a"));
  EXPECT_EQ(sorter.pick_next(), d);
  ASSERT_THAT(sorter.remove(d), IsOk());
  EXPECT_THAT(order(sorter), ElementsAre("a"));
  EXPECT_EQ(sorter.size(), 1U);
}

TEST_F(DrfSorter, WeightOnAnInternalPathScalesTheSubtree) {
  const auto a = add("a");
  const auto c = add("b/c");
  const auto d = add("b/d");
  ASSERT_THAT(sorter.allocated(a, res(6, 6)), IsOk());
  ASSERT_THAT(sorter.allocated(c, res(4, 4)), IsOk());
  ASSERT_THAT(sorter.allocated(d, res(4, 4)), IsOk());
  // b = .08 > a = .06.
  EXPECT_EQ(sorter.pick_next(), a);
  ASSERT_THAT(sorter.set_weight("b", 2.0), IsOk());
  // b = .08 / 2 = .04 < a; inside b, c and d tie on share and count -> path: c.
  EXPECT_THAT(order(sorter), ElementsAre("b/c", "b/d", "a"));
  EXPECT_EQ(*sorter.share(c), (drf_share{4, 100}));
}

TEST(DrfSorterExclusion, ExcludedResourcesDoNotCount) {
  drf_sorter sorter(drf_exclusions{"gpu"});
  ASSERT_THAT(sorter.set_total({{"cpus", 100}, {"gpu/A100", 8}}), IsOk());
  const auto a = sorter.add("a").value();
  const auto b = sorter.add("b").value();
  ASSERT_THAT(sorter.allocated(a, {{"cpus", 1}, {"gpu/A100", 8}}), IsOk());
  ASSERT_THAT(sorter.allocated(b, {{"cpus", 2}}), IsOk());
  // a = .01 (GPU ignored), b = .02.
  EXPECT_EQ(sorter.pick_next(), a);
}

TEST(DrfSorterExactness, SharesDifferingByOnePartInTenToTheTwelveOrderCorrectly) {
  drf_sorter sorter;
  ASSERT_THAT(sorter.set_total({{"cpu", 1'000'000'000'000}, {"mem", 1'000'000'000'001}}), IsOk());
  const auto b = sorter.add("b").value();
  const auto a = sorter.add("a").value();
  ASSERT_THAT(sorter.allocated(b, {{"cpu", 999'999'999'999}}), IsOk());
  ASSERT_THAT(sorter.allocated(a, {{"mem", 1'000'000'000'000}}), IsOk());
  // b = 1 - 1e-12 < a = 1 - 1/(1e12 + 1); equal as doubles, so only exactness puts b first.
  EXPECT_EQ(sorter.share(a)->to_double(), sorter.share(b)->to_double());
  EXPECT_EQ(sorter.pick_next(), b);
}

TEST_F(DrfSorter, ErrorsLeaveTheSorterUnchanged) {
  const auto a = add("a");
  ASSERT_THAT(sorter.allocated(a, res(5, 5)), IsOk());
  EXPECT_THAT(sorter.add("a"), HasErrc(errc::already_exists));
  EXPECT_THAT(sorter.add("a/."), HasErrc(errc::invalid_argument));
  EXPECT_THAT(sorter.add("./x"), ErrorContains("reserved"));
  EXPECT_THAT(sorter.set_weight("a", drf_client_weight{{0, 1}, {}}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(sorter.set_weight("a", drf_client_weight{{1, 1}, {{"mem", {1, 0}}}}),
              ErrorContains("'mem'"));
  EXPECT_THAT(sorter.add("x//y"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(sorter.add(""), HasErrc(errc::invalid_argument));
  EXPECT_THAT(sorter.allocated(drf_client_id(999), res(1, 1)), HasErrc(errc::not_found));
  EXPECT_THAT(sorter.allocated(a, res(-1, 1)), HasErrc(errc::invalid_argument));
  EXPECT_THAT(sorter.allocated(a, res(max_resource_amount, 1)), HasErrc(errc::out_of_range));
  EXPECT_THAT(sorter.unallocated(a, res(6, 1)), HasErrc(errc::failed_precondition));
  EXPECT_THAT(sorter.update(a, res(6, 6), res(1, 1)), HasErrc(errc::failed_precondition));
  EXPECT_THAT(sorter.set_weight("a", 0.0), ErrorContains("'a'"));
  EXPECT_THAT(sorter.set_weight("a", -1.0), HasErrc(errc::invalid_argument));
  EXPECT_THAT(sorter.set_total({{"cpus", -1}}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(sorter.find("nobody"), HasErrc(errc::not_found));
  // Still: one client a, <5, 5>, one allocation, share .05.
  EXPECT_EQ(sorter.size(), 1U);
  EXPECT_EQ(*sorter.allocation(a), res(5, 5));
  EXPECT_EQ(*sorter.allocation_count(a), 1);
  EXPECT_EQ(*sorter.share(a), (drf_share{5, 100}));
  EXPECT_THAT(order(sorter), ElementsAre("a"));
  ASSERT_THAT(sorter.remove(a), IsOk());
  EXPECT_THAT(sorter.remove(a), HasErrc(errc::not_found));
}

TEST_F(DrfSorter, PerResourceWeightsDivideEachShare) {
  const auto a = add("a");
  const auto b = add("b");
  ASSERT_THAT(sorter.allocated(a, res(10, 4)), IsOk());
  ASSERT_THAT(sorter.allocated(b, res(6, 6)), IsOk());
  // unweighted: a = .10 (cpus), b = .06 -> b first
  EXPECT_EQ(sorter.pick_next(), b);
  drf_client_weight w;
  w.per_resource.emplace("cpus", drf_weight{4, 1});
  ASSERT_THAT(sorter.set_weight("a", w), IsOk());
  // a: cpus 10 / (4 * 100) = .025, mem 4 / 100 = .04 -> .04 < b = .06
  EXPECT_EQ(*sorter.share(a), (drf_share{4, 100}));
  EXPECT_EQ(sorter.pick_next(), a);
  // The sorter agrees with dominant_share() for the same weights.
  EXPECT_EQ(dominant_share(res(10, 4), res(100, 100), w)->share, *sorter.share(a));
  // Scalar 1/2 with mem weighted 2: cpus 10 * 2 / 100 = .2, mem 4 / (2 * 100) = .02 -> .2
  w.scalar = {1, 2};
  w.per_resource.clear();
  w.per_resource.emplace("mem", drf_weight{2, 1});
  ASSERT_THAT(sorter.set_weight("a", w), IsOk());
  EXPECT_EQ(*sorter.share(a), (drf_share{20, 100}));
  EXPECT_THAT(order(sorter), ElementsAre("b", "a"));
  // A scalar weight drops the per-resource ones: a = .10 / 2 = .05 < .06.
  ASSERT_THAT(sorter.set_weight("a", 2.0), IsOk());
  EXPECT_EQ(*sorter.share(a), (drf_share{5, 100}));
  EXPECT_THAT(order(sorter), ElementsAre("a", "b"));
}

TEST_F(DrfSorter, PerResourceWeightsOfAnInternalRoleWeighItsSubtree) {
  ASSERT_THAT(sorter.set_weight("g", drf_client_weight{{1, 1}, {{"mem", {5, 1}}}}), IsOk());
  const auto x = add("g/x");
  const auto h = add("h");
  ASSERT_THAT(sorter.allocated(x, res(2, 20)), IsOk());
  ASSERT_THAT(sorter.allocated(h, res(3, 3)), IsOk());
  // g: max(.02, 20 / (5 * 100) = .04) = .04 > h = .03
  EXPECT_THAT(order(sorter), ElementsAre("h", "g/x"));
  // x itself is unweighted: .2
  EXPECT_EQ(*sorter.share(x), (drf_share{20, 100}));
}

TEST_F(DrfSorter, AClientMayAlsoBeAParentPath) {
  const auto a = add("a");
  const auto c = add("c");
  ASSERT_THAT(sorter.allocated(a, res(10, 10)), IsOk());
  ASSERT_THAT(sorter.allocated(c, res(15, 15)), IsOk());
  // "a" gains a child: the client moves to the virtual leaf "a/." and keeps its id.
  const auto ab = add("a/b");
  EXPECT_EQ(*sorter.find("a"), a);
  EXPECT_EQ(sorter.path(a), "a");
  EXPECT_EQ(*sorter.allocation(a), res(10, 10));
  EXPECT_EQ(*sorter.allocation_count(a), 1);
  ASSERT_THAT(sorter.allocated(ab, res(10, 10)), IsOk());
  // subtree a = .20 > c = .15; inside a: a/. = .10 = a/b, one allocation each, "a/." < "a/b"
  EXPECT_THAT(order(sorter), ElementsAre("c", "a", "a/b"));
  EXPECT_EQ(sorter.pick_next(), c);
  EXPECT_EQ(sorter.size(), 3U);
  // a's weight applies to the subtree (.20 / 4 = .05), not to the virtual leaf (still .10).
  ASSERT_THAT(sorter.set_weight("a", 4.0), IsOk());
  EXPECT_EQ(*sorter.share(a), (drf_share{10, 100}));
  EXPECT_THAT(order(sorter), ElementsAre("a", "a/b", "c"));
  // An allocation to a/b puts a first inside a.
  ASSERT_THAT(sorter.allocated(ab, res(1, 1)), IsOk());
  EXPECT_EQ(sorter.pick_next(), a);
  // Removing a/b leaves a alone; removing a as well removes the internal node.
  ASSERT_THAT(sorter.remove(ab), IsOk());
  EXPECT_THAT(order(sorter), ElementsAre("a", "c"));
  EXPECT_EQ(*sorter.allocation(a), res(10, 10));
  ASSERT_THAT(sorter.remove(a), IsOk());
  EXPECT_THAT(sorter.find("a"), HasErrc(errc::not_found));
  EXPECT_THAT(order(sorter), ElementsAre("c"));
  EXPECT_EQ(sorter.size(), 1U);
  EXPECT_THAT(sorter.add("a"), IsOk());
}

TEST_F(DrfSorter, AParentPathMayBecomeAClient) {
  const auto xy = add("x/y");
  const auto z = add("z");
  ASSERT_THAT(sorter.allocated(xy, res(20, 20)), IsOk());
  ASSERT_THAT(sorter.allocated(z, res(25, 25)), IsOk());
  EXPECT_THAT(sorter.find("x"), HasErrc(errc::not_found));
  const auto x = add("x");
  EXPECT_THAT(sorter.add("x"), HasErrc(errc::already_exists));
  EXPECT_EQ(*sorter.find("x"), x);
  EXPECT_EQ(sorter.path(x), "x");
  // x = .20 < z = .25; inside x: x/. (0) before x/y (.20)
  EXPECT_THAT(order(sorter), ElementsAre("x", "x/y", "z"));
  ASSERT_THAT(sorter.allocated(x, res(10, 10)), IsOk());
  // subtree x = .30 > z
  EXPECT_THAT(order(sorter), ElementsAre("z", "x", "x/y"));
  // Deactivating x keeps its allocation in the subtree.
  ASSERT_THAT(sorter.deactivate(x), IsOk());
  EXPECT_THAT(order(sorter), ElementsAre("z", "x/y"));
  ASSERT_THAT(sorter.remove(x), IsOk());
  EXPECT_THAT(order(sorter), ElementsAre("x/y", "z"));
  EXPECT_EQ(sorter.size(), 2U);
}

TEST_F(DrfSorter, ADeepClientSplitsAndItsWeightStaysWithThePath) {
  ASSERT_THAT(sorter.set_weight("x/a", 2.0), IsOk());
  const auto xa = add("x/a");
  ASSERT_THAT(sorter.allocated(xa, res(20, 10)), IsOk());
  // leaf x/a weighted: .20 / 2 = .10
  EXPECT_EQ(*sorter.share(xa), (drf_share{20, 200}));
  const auto xab = add("x/a/b");
  // x/a is now internal (weight 2) and the client lives in "x/a/." with weight 1: .20
  EXPECT_EQ(*sorter.share(xa), (drf_share{20, 100}));
  EXPECT_EQ(*sorter.find("x/a"), xa);
  EXPECT_EQ(*sorter.find("x/a/b"), xab);
  ASSERT_THAT(sorter.allocated(xab, res(5, 5)), IsOk());
  // inside x/a: x/a/b (.05) before x/a/. (.20)
  EXPECT_THAT(order(sorter), ElementsAre("x/a/b", "x/a"));
  ASSERT_THAT(sorter.set_weight("x/a", drf_client_weight{{1, 1}, {{"cpus", {5, 1}}}}), IsOk());
  EXPECT_EQ(*sorter.share(xa), (drf_share{20, 100}));  // still the virtual leaf's own share
  ASSERT_THAT(sorter.remove(xab), IsOk());
  ASSERT_THAT(sorter.remove(xa), IsOk());
  EXPECT_EQ(sorter.size(), 0U);
  EXPECT_FALSE(sorter.pick_next().has_value());
}

}  // namespace
}  // namespace hetsched
