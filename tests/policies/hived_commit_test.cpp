// SPDX-License-Identifier: MIT
// add_allocated (commit) refuses any bind record whose cells are not free for it, changing
// nothing (issue 17 §2): two decisions for the same GPUs, another group's record, a pod
// committed twice, a slot of a gang committed twice, a forged placement, an opportunistic pod's
// GPUs, a preemptor whose victims still run; and takes Reserved cells of a lower preemption (a
// Filtering-phase bind may land there) by cancelling it. delete_allocated releases only the
// pod's own slot.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_small_fixture.hpp"

namespace hetsched::hived {
namespace {

using small_fixture::make;
using small_fixture::pod;

/// A Filtering-phase schedule that must bind.
bind_info bind_of(scheduler& s, const pod_request& p, phase ph = phase::filtering,
                  const node_filter& nodes = {}) {
  auto r = s.schedule(p, nodes, ph);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  if (!r) return {};
  EXPECT_EQ(r->kind, outcome::bind) << p.name << ": " << r->wait_reason;
  return r->bind;
}

/// Expects `commit` to fail with `code` and `message` and to change nothing.
void expect_refused(scheduler& s, const pod_request& p, const bind_info& info, errc code,
                    const std::string& message) {
  const std::uint64_t before = s.state_digest();
  auto r = s.add_allocated(p, info);
  ASSERT_FALSE(r.has_value()) << p.name;
  EXPECT_EQ(r.error().code, code) << r.error().message;
  EXPECT_EQ(r.error().message, message);
  EXPECT_EQ(s.state_digest(), before) << p.name;
}

TEST(HivedCommit, TwoDecisionsForTheSameGpusCommitOnce) {
  auto s = make();
  auto p1 = pod("p1", "a", 1, 2);
  auto p2 = pod("p2", "a", 1, 2);
  // Filtering changes nothing, so both pods are given n0's GPUs 0 and 1.
  const bind_info b1 = bind_of(s, p1);
  const bind_info b2 = bind_of(s, p2);
  EXPECT_EQ(b1.node, "n0");
  EXPECT_EQ(b1.leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(b2.leaf_cells, b1.leaf_cells);
  ASSERT_TRUE(s.add_allocated(p1, b1).has_value());
  expect_refused(s, p2, b2, errc::failed_precondition,
                 "[p2]: GPU 0 of node n0 is held by group p1 (pods p1; priority 1); a bind "
                 "record may only name free cells (schedule the pod again)");
  // p1's record under p2's name: the same
  expect_refused(s, p2, b1, errc::failed_precondition,
                 "[p2]: GPU 0 of node n0 is held by group p1 (pods p1; priority 1); a bind "
                 "record may only name free cells (schedule the pod again)");
  EXPECT_FALSE(s.group("p2").has_value());
  EXPECT_EQ(s.group("p1")->physical_placement.at("n0"), (std::vector<int>{0, 1}));
  // scheduled again, p2 gets the other PCIe switch
  const bind_info again = bind_of(s, p2);
  EXPECT_EQ(again.leaf_cells, (std::vector<int>{2, 3}));
  ASSERT_TRUE(s.add_allocated(p2, again).has_value());
}

TEST(HivedCommit, PodCommittedTwiceIsRefused) {
  auto s = make();
  auto p1 = pod("p1", "a", 1, 2);
  const bind_info b1 = bind_of(s, p1);
  ASSERT_TRUE(s.add_allocated(p1, b1).has_value());
  expect_refused(s, p1, b1, errc::already_exists, "[p1]: pod is already committed (group p1)");
  // the same pod under another group, with a record of free GPUs
  auto renamed = pod("p1", "a", 1, 2, "other");
  const bind_info free_gpus = bind_of(s, renamed);
  EXPECT_EQ(free_gpus.leaf_cells, (std::vector<int>{2, 3}));
  expect_refused(s, renamed, free_gpus, errc::already_exists,
                 "[p1]: pod is already committed (group p1)");
  // released, it may be committed again
  ASSERT_TRUE(s.delete_allocated(p1, b1).has_value());
  ASSERT_TRUE(s.add_allocated(p1, b1).has_value());
}

TEST(HivedCommit, GangSlotsCommitOnceEach) {
  auto s = make();
  auto m1 = pod("m1", "a", 1, 1, "gm", {{2, 1}});
  auto m2 = pod("m2", "a", 1, 1, "gm", {{2, 1}});
  const bind_info r1 = bind_of(s, m1);
  ASSERT_TRUE(s.add_allocated(m1, r1).has_value());
  // m2 with m1's record: slot 0 is m1's
  expect_refused(s, m2, r1, errc::already_exists,
                 "[m2]: placement n0 [0] of group gm is already committed by pod m1");
  // a record naming a GPU that is not a placement of the group's record
  bind_info forged = r1;
  forged.leaf_cells = {3};
  expect_refused(s, m2, forged, errc::not_found,
                 "[m2]: Pod placement not found in group gm: node n0, leaf cells 3");
  // a record whose second pod is moved elsewhere: not the group's placement
  forged = r1;
  forged.group_placements.at(1)[1].leaf_cells = {3};
  forged.leaf_cells = {3};
  expect_refused(s, m2, forged, errc::invalid_argument,
                 "[m2]: bind info does not match group gm: its pod 1 of 1 leaf cells is on n0 "
                 "[1], the bind info names n0 [3]");
  // the genuine record of the second slot commits
  const bind_info r2 = bind_of(s, m2);
  EXPECT_EQ(r2.leaf_cells, (std::vector<int>{1}));
  ASSERT_TRUE(s.add_allocated(m2, r2).has_value());
  // releasing m2 with m1's record does not free m1's slot
  const std::uint64_t before = s.state_digest();
  auto wrong = s.delete_allocated(m2, r1);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code, errc::not_found);
  EXPECT_EQ(wrong.error().message,
            "[m2]: pod is not committed at node n0 leaf cells 0 of group gm (pod m1 is)");
  EXPECT_EQ(s.state_digest(), before);
  ASSERT_TRUE(s.delete_allocated(m2, r2).has_value());
  ASSERT_TRUE(s.delete_allocated(m1, r1).has_value());
  EXPECT_FALSE(s.group("gm").has_value());
}

TEST(HivedCommit, MalformedRecordsAreRefused) {
  auto s = make();
  auto p = pod("p", "a", 1, 2);
  const bind_info b = bind_of(s, p);
  bind_info twice = b;
  twice.group_placements.at(2)[0].leaf_cells = {0, 0};
  twice.leaf_cells = {0, 0};
  expect_refused(s, p, twice, errc::invalid_argument,
                 "[p]: bind info of group p names GPU 0 of node n0 twice");
  bind_info short_pod = b;
  short_pod.group_placements.at(2)[0].leaf_cells = {0};
  short_pod.leaf_cells = {0};
  expect_refused(s, p, short_pod, errc::invalid_argument,
                 "[p]: bind info of group p lists 1 leaf cells for pod 0 of 2 leaf cells");
  bind_info members = b;
  members.group_placements[1] = {pod_placement{"n0", {2}, {"NODE"}}};
  expect_refused(s, p, members, errc::invalid_argument,
                 "[p]: bind info of group p does not match its members");
}

TEST(HivedCommit, OpportunisticPodsGpusAreNotTakenByACommit) {
  auto s = make();
  // VC b's guaranteed pod decided while n2 is free ...
  auto g = pod("g", "b", 0, 4);
  const bind_info bg = bind_of(s, g);
  EXPECT_EQ(bg.node, "n2");
  // ... then an opportunistic pod is bound on n2
  auto o = pod("o", "a", -1, 4);
  const bind_info bo = bind_of(s, o, phase::filtering, node_filter{false, {"n2"}});
  EXPECT_EQ(bo.node, "n2");
  ASSERT_TRUE(s.add_allocated(o, bo).has_value());
  // the guaranteed record is refused: the opportunistic pod still runs there
  expect_refused(s, g, bg, errc::failed_precondition,
                 "[g]: GPU 0 of node n2 is held by group o (pods o; opportunistic); a bind "
                 "record may only name free cells (schedule the pod again)");
  // HiveD's way: the guaranteed pod preempts it, then binds
  auto r = s.schedule(g, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::preempt);
  EXPECT_EQ(r->victims_by_node.at("n2"), (std::vector<std::string>{"o"}));
  // a commit of the preemptor before its victim is gone is refused
  expect_refused(s, g, bg, errc::failed_precondition,
                 "[g]: group g is still preempting: GPU 0 of node n2 is held by group o (pods o; "
                 "opportunistic)");
  ASSERT_TRUE(s.delete_allocated(o, bo).has_value());
  const bind_info now = bind_of(s, g, phase::preempting);
  EXPECT_EQ(now, bg);
  ASSERT_TRUE(s.add_allocated(g, now).has_value());
  EXPECT_EQ(s.group("g")->state, group_state::allocated);
}

TEST(HivedCommit, FilteringBindOverALowerReservationCancelsIt) {
  auto s = make();
  auto low = pod("low", "a", 0, 4);
  const bind_info bl = bind_of(s, low);
  ASSERT_TRUE(s.add_allocated(low, bl).has_value());
  // mid preempts low (Preempting phase: n0's GPUs become Reserving), low then goes
  auto mid = pod("mid", "a", 3, 4);
  auto rm = s.schedule(mid, node_filter{}, phase::preempting);
  ASSERT_TRUE(rm.has_value());
  ASSERT_EQ(rm->kind, outcome::preempt);
  ASSERT_TRUE(s.delete_allocated(low, bl).has_value());
  // high's Filtering-phase answer binds on mid's Reserved GPUs (no victims: nothing runs)
  auto high = pod("high", "a", 5, 4);
  const bind_info bh = bind_of(s, high);
  EXPECT_EQ(bh.node, "n0");
  // an equal-priority record is refused, naming the preemption
  auto peer = pod("peer", "a", 3, 4);
  expect_refused(s, peer, bh, errc::failed_precondition,
                 "[peer]: GPU 0 of node n0 is held by preempting group mid (priority 3); a bind "
                 "record may only name free cells (schedule the pod again)");
  // the higher one takes the GPUs; mid's preemption is cancelled (it was double-booked before)
  ASSERT_TRUE(s.add_allocated(high, bh).has_value());
  EXPECT_FALSE(s.group("mid").has_value());
  EXPECT_EQ(s.group("high")->state, group_state::allocated);
  EXPECT_EQ(s.group("high")->physical_placement.at("n0"), (std::vector<int>{0, 1, 2, 3}));
  // the same end state as a Preempting-phase schedule that cancels mid itself
  auto t = make();
  ASSERT_TRUE(t.add_allocated(low, bl).has_value());
  ASSERT_EQ(t.schedule(mid, node_filter{}, phase::preempting)->kind, outcome::preempt);
  ASSERT_TRUE(t.delete_allocated(low, bl).has_value());
  const bind_info th = bind_of(t, high, phase::preempting);
  EXPECT_FALSE(t.group("mid").has_value());
  EXPECT_EQ(th, bh);
  ASSERT_TRUE(t.add_allocated(high, th).has_value());
  for (int level = 1; level <= 4; ++level)
    EXPECT_EQ(s.free_list("RACK", level), t.free_list("RACK", level)) << level;
  EXPECT_EQ(s.vc_cells_all("a")[0].priority, t.vc_cells_all("a")[0].priority);
  EXPECT_EQ(s.vc_cells_all("a")[0].bound_to, t.vc_cells_all("a")[0].bound_to);
}

TEST(HivedCommit, ReplayIntoAFreshSchedulerRefusesConflictingRecords) {
  // A restart replays every bound pod; two records for one GPU (a corrupted store) are refused
  // on the second, naming the first.
  auto a = make();
  auto p1 = pod("p1", "a", 1, 2);
  auto p2 = pod("p2", "a", 1, 2);
  const bind_info b1 = bind_of(a, p1);
  const bind_info b2 = bind_of(a, p2);
  auto b = make();
  ASSERT_TRUE(b.add_allocated(p2, b2).has_value());
  expect_refused(b, p1, b1, errc::failed_precondition,
                 "[p1]: GPU 0 of node n0 is held by group p2 (pods p2; priority 1); a bind "
                 "record may only name free cells (schedule the pod again)");
}

}  // namespace
}  // namespace hetsched::hived
