// SPDX-License-Identifier: MIT
// Stateful preemption (Reserving/Reserved cells, cancellation) and ignore_suggested_nodes on
// hivedscheduler's own test config (reference/hived.md §4, §7): its stateful preemption
// sequence (pods 28-35) and the paths around it.
//
// Every pod here uses the pinned cell VC1-YQW-DGX2 = 7/14, the two 16-GPU nodes 0.0.3.0 and
// 0.0.3.1 (virtual nodes VC1/8/0 and VC1/8/1, bound to them from the start). Pods are 16-GPU
// pods, so each takes one whole node. The pinned cell's cluster view sorts healthy, suggested,
// then more used leaves first; ties keep the previous order, which starts as 0.0.3.0, 0.0.3.1.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_vector_fixture.hpp"

namespace hetsched::hived {
namespace {

using namespace vector_fixture;

/// schedule() that must succeed (a result, not a user error).
schedule_result run(scheduler& s, const pod_request& pod, const node_filter& nodes, phase ph) {
  auto r = s.schedule(pod, nodes, ph);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r ? *r : schedule_result{};
}

/// A one-pod 16-GPU pinned request of VC1 at `priority` (a fresh group named after the pod).
pod_request pinned_probe(const std::string& name, int priority, int pods = 1) {
  pod_request p = spec("pod29");
  p.name = name;
  p.group = name;
  p.priority = priority;
  p.members = {{pods, 16}};
  return p;
}

/// pod28 (priority 1, no lazy preemption) bound and committed: its group19 holds both nodes of
/// the pinned cell (a gang of two 16-GPU pods, placed all or nothing), and pod28 runs on
/// 0.0.3.0 (the group's second pod never arrives).
bind_info start_with_pod28(scheduler& s) {
  auto b = bind_and_commit(s, spec("pod28"));
  EXPECT_EQ(b.node, "0.0.3.0");
  EXPECT_EQ(b.leaf_cells, leaves(0, 16));
  EXPECT_EQ(b.group_placements.at(16)[1].node, "0.0.3.1");
  return b;
}

TEST(HivedStatefulPreemption, HigherPriorityPreemptorCancelsOverlappingOnes) {
  auto s = recorded_scheduler("base");
  start_with_pod28(s);
  // pod29 (priority 2, one node): pass 2 at priority 2 sees both nodes preemptible, tie ->
  // 0.0.3.0. Its leaves become Reserving; group19 is BeingPreempted; the victims are every
  // allocated pod of group19.
  auto r29 = run(s, spec("pod29"), {}, phase::preempting);
  ASSERT_EQ(r29.kind, outcome::preempt);
  EXPECT_EQ(r29.victims_by_node,
            (std::map<std::string, std::vector<std::string>>{{"0.0.3.0", {"pod28"}}}));
  EXPECT_EQ(s.group("group20")->state, group_state::preempting);
  EXPECT_EQ(s.group("group19")->state, group_state::being_preempted);
  // pod30 (priority 1): 0.0.3.0's leaves now have priority 2 and 0.0.3.1's priority 1, neither
  // below 1: nothing is preemptible.
  auto r30 = run(s, spec("pod30"), {}, phase::preempting);
  EXPECT_EQ(r30.kind, outcome::wait);
  EXPECT_EQ(r30.wait_reason, "insufficient capacity when scheduling in VC VC1");
  EXPECT_FALSE(s.group("group21").has_value());
  // pod31 (priority 2): only 0.0.3.1 (priority 1) is preemptible; the victim is still pod28
  // (the whole gang goes), reported on the node it runs on.
  auto r31 = run(s, spec("pod31"), {}, phase::preempting);
  ASSERT_EQ(r31.kind, outcome::preempt);
  EXPECT_EQ(r31.victims_by_node,
            (std::map<std::string, std::vector<std::string>>{{"0.0.3.0", {"pod28"}}}));
  EXPECT_EQ(s.group("group22")->physical_placement.count("0.0.3.1"), 1U);
  // pod32 (priority 2): both nodes are reserved at priority 2: equal priority waits.
  EXPECT_EQ(run(s, spec("pod32"), {}, phase::preempting).kind, outcome::wait);
  // pod33 (priority 3, two nodes) overlaps both preemptors: in the Preempting phase they are
  // cancelled (their Reserving leaves go back to group19 at priority 1) and group24 reserves
  // both nodes.
  auto r33 = run(s, spec("pod33"), {}, phase::preempting);
  ASSERT_EQ(r33.kind, outcome::preempt);
  EXPECT_EQ(victims(r33), (std::vector<std::string>{"pod28"}));
  EXPECT_FALSE(s.group("group20").has_value());
  EXPECT_FALSE(s.group("group22").has_value());
  EXPECT_EQ(s.group("group24")->state, group_state::preempting);
  EXPECT_EQ(s.group("group24")->physical_placement.size(), 2U);
}

TEST(HivedStatefulPreemption, FilteringPhaseCancelsNothing) {
  auto s = recorded_scheduler("base");
  start_with_pod28(s);
  ASSERT_EQ(run(s, spec("pod29"), {}, phase::preempting).kind, outcome::preempt);
  // In the Filtering phase pod33 reports its victim but neither cancels group20 nor creates
  // its own group.
  auto f = run(s, spec("pod33"), {}, phase::filtering);
  ASSERT_EQ(f.kind, outcome::preempt);
  EXPECT_EQ(victims(f), (std::vector<std::string>{"pod28"}));
  EXPECT_EQ(s.group("group20")->state, group_state::preempting);
  EXPECT_FALSE(s.group("group24").has_value());
}

TEST(HivedStatefulPreemption, VictimDeletedTurnsReservingIntoReserved) {
  auto s = recorded_scheduler("base");
  auto b28 = start_with_pod28(s);
  ASSERT_EQ(run(s, spec("pod33"), {}, phase::preempting).kind, outcome::preempt);
  // The victim's last pod is deleted: group19 goes and its Reserving leaves turn Reserved (still
  // held by group24 at priority 3).
  ASSERT_TRUE(s.delete_allocated(spec("pod28"), b28).has_value());
  EXPECT_FALSE(s.group("group19").has_value());
  EXPECT_EQ(s.group("group24")->state, group_state::preempting);
  // Reserved cells stop lower priorities: a priority-2 pod waits although nothing runs there.
  auto low = run(s, pinned_probe("low", 2), {}, phase::filtering);
  EXPECT_EQ(low.kind, outcome::wait);
  // The preemptor's next schedule finds no victims left: bind, pod index 0 on 0.0.3.0.
  auto r = run(s, spec("pod33"), {}, phase::preempting);
  ASSERT_EQ(r.kind, outcome::bind) << r.wait_reason;
  EXPECT_EQ(r.bind.node, "0.0.3.0");
  EXPECT_EQ(r.bind.leaf_cells, leaves(0, 16));
  EXPECT_EQ(r.bind.group_placements.at(16)[1].node, "0.0.3.1");
  // Committing turns the group Allocated (Reserved -> Used).
  ASSERT_TRUE(s.add_allocated(spec("pod33"), r.bind).has_value());
  EXPECT_EQ(s.group("group24")->state, group_state::allocated);
  // A priority-3 pod can no longer take the cells (used at priority 3, not below).
  EXPECT_EQ(run(s, pinned_probe("same", 3), {}, phase::filtering).kind, outcome::wait);
}

TEST(HivedStatefulPreemption, ReservedCellsGoToAHigherPreemptorWithoutVictims) {
  auto s = recorded_scheduler("base");
  auto b28 = start_with_pod28(s);
  ASSERT_EQ(run(s, spec("pod33"), {}, phase::preempting).kind, outcome::preempt);
  ASSERT_TRUE(s.delete_allocated(spec("pod28"), b28).has_value());
  // pod34 (priority 4) overlaps group24's Reserved cells: it cancels group24 and, with no
  // victims (Reserved cells have no user), binds at once to the first node.
  auto r34 = run(s, spec("pod34"), {}, phase::preempting);
  ASSERT_EQ(r34.kind, outcome::bind) << r34.wait_reason;
  EXPECT_EQ(r34.bind.node, "0.0.3.0");
  EXPECT_EQ(r34.bind.leaf_cells, leaves(0, 16));
  EXPECT_FALSE(s.group("group24").has_value());
}

TEST(HivedStatefulPreemption, CancelGivesReservingLeavesBackToTheVictim) {
  auto s = recorded_scheduler("base");
  auto b34 = bind_and_commit(s, spec("pod34"));  // priority 4 on 0.0.3.0
  ASSERT_EQ(b34.node, "0.0.3.0");
  // pod35 (priority 5, two nodes): 0.0.3.0 becomes Reserving (pod34's group25 BeingPreempted),
  // 0.0.3.1 Reserved.
  auto r35 = run(s, spec("pod35"), {}, phase::preempting);
  ASSERT_EQ(r35.kind, outcome::preempt);
  EXPECT_EQ(victims(r35), (std::vector<std::string>{"pod34"}));
  EXPECT_EQ(s.group("group25")->state, group_state::being_preempted);
  // Its only pod is deleted before binding: the preemption is cancelled. 0.0.3.0 goes back to
  // pod34 at priority 4, 0.0.3.1 becomes free.
  s.delete_unallocated(spec("pod35"));
  EXPECT_FALSE(s.group("group26").has_value());
  // hivedscheduler leaves the victim's group state as it was (deletePreemptingAffinityGroup
  // returns the cells but does not reset the state).
  EXPECT_EQ(s.group("group25")->state, group_state::being_preempted);
  EXPECT_EQ(s.group("group25")->physical_placement.at("0.0.3.0"), leaves(0, 16));
  // 0.0.3.1 is free: a priority-4 pod fits there without preemption (pass 1).
  auto free_node = run(s, pinned_probe("probe", 4), {}, phase::filtering);
  ASSERT_EQ(free_node.kind, outcome::bind) << free_node.wait_reason;
  EXPECT_EQ(free_node.bind.node, "0.0.3.1");
  // 0.0.3.0 is used at priority 4 again: a priority-4 two-node gang cannot preempt it, a
  // priority-5 one can, and its victim is pod34.
  EXPECT_EQ(run(s, pinned_probe("gang4", 4, 2), {}, phase::filtering).kind, outcome::wait);
  auto again = run(s, spec("pod35"), {}, phase::filtering);
  ASSERT_EQ(again.kind, outcome::preempt);
  EXPECT_EQ(again.victims_by_node,
            (std::map<std::string, std::vector<std::string>>{{"0.0.3.0", {"pod34"}}}));
}

TEST(HivedStatefulPreemption, BadPlacementNodeCancelsInThePreemptingPhase) {
  auto s = recorded_scheduler("base");
  start_with_pod28(s);
  ASSERT_EQ(run(s, spec("pod33"), {}, phase::preempting).kind, outcome::preempt);
  s.set_node_bad("0.0.3.1");
  // Filtering never cancels: the preempting group still answers with its victims.
  auto f = run(s, spec("pod33"), {}, phase::filtering);
  ASSERT_EQ(f.kind, outcome::preempt);
  EXPECT_EQ(s.group("group24")->state, group_state::preempting);
  // Preempting: one placement node is bad, so the preemption is cancelled and the pod is
  // scheduled afresh. Now the bad node sorts last; the gang needs both nodes and reaching
  // 0.0.3.1 fails at once.
  auto p = run(s, spec("pod33"), {}, phase::preempting);
  ASSERT_EQ(p.kind, outcome::wait);
  EXPECT_EQ(p.wait_reason,
            "have to use at least one bad node 7/14/0.0.3.1 when scheduling in VC VC1");
  EXPECT_FALSE(s.group("group24").has_value());
  // The cells went back to group19: a priority-1 pod cannot take 0.0.3.0.
  EXPECT_EQ(run(s, pinned_probe("p1", 1), {}, phase::filtering).kind, outcome::wait);
  // Healthy again: the gang preempts pod28 as before.
  s.set_node_healthy("0.0.3.1");
  auto again = run(s, spec("pod33"), {}, phase::filtering);
  ASSERT_EQ(again.kind, outcome::preempt);
  EXPECT_EQ(victims(again), (std::vector<std::string>{"pod28"}));
}

// ignore_suggested_nodes = true (hivedscheduler's default, and pod_request's).
TEST(HivedIgnoreSuggestedNodes, BindsOnANonSuggestedNode) {
  auto s = recorded_scheduler("base");
  // pod37: 1 GPU in the pinned cell. Its virtual nodes are not bound yet, so they count as
  // suggested in the VC's view; honouring suggestions with only 0.0.1.0 suggested, mapping the
  // first virtual leaf onto the pinned cell's physical nodes fails.
  auto strict = run(s, spec("pod37"), only({"0.0.1.0"}), phase::preempting);
  ASSERT_EQ(strict.kind, outcome::wait);
  EXPECT_EQ(strict.wait_reason,
            "Mapping the virtual placement would need to use at least one bad or non-suggested "
            "node (virtual placement : {\"VC1/8\":[\"VC1/8/0/0/0/0/0\"]})");
  // Ignoring them: the first leaf of the first node.
  auto pod = spec("pod37");
  pod.ignore_suggested_nodes = true;
  auto r = run(s, pod, only({"0.0.1.0"}), phase::preempting);
  ASSERT_EQ(r.kind, outcome::bind) << r.wait_reason;
  EXPECT_EQ(r.bind.node, "0.0.3.0");
  EXPECT_EQ(r.bind.leaf_cells, (std::vector<int>{0}));
  // Buddy allocation ignores them too: on the backtrack variant pod40 (16 GPUs) is mapped in
  // the first chain, DGX2-V100-NODE, to its first free node 0.0.1.0 although only 0.0.4.3 is
  // suggested (honouring them it goes to 0.0.4.3 in chain 4-DGX2-V100-NODE).
  auto b = recorded_scheduler("backtrack");
  auto pod40 = spec("pod40");
  pod40.ignore_suggested_nodes = true;
  auto r40 = run(b, pod40, only({"0.0.4.3"}), phase::preempting);
  ASSERT_EQ(r40.kind, outcome::bind) << r40.wait_reason;
  EXPECT_EQ(r40.bind.node, "0.0.1.0");
  EXPECT_EQ(r40.bind.chain, "DGX2-V100-NODE");
  auto honour = run(b, spec("pod40"), only({"0.0.4.3"}), phase::preempting);
  ASSERT_EQ(honour.kind, outcome::bind);
  EXPECT_EQ(honour.bind.node, "0.0.4.3");
}

TEST(HivedIgnoreSuggestedNodes, NoCancellationForNonSuggestedNodes) {
  auto s = recorded_scheduler("base");
  start_with_pod28(s);
  auto pod33 = spec("pod33");
  pod33.ignore_suggested_nodes = true;
  ASSERT_EQ(run(s, pod33, {}, phase::preempting).kind, outcome::preempt);
  // Suggestions without 0.0.3.1 (one of its placement nodes) in the Preempting phase, for the
  // group's second pod: with suggestions honoured this cancels the preemption (the recorded
  // suggested_nodes scenario, step 12); ignored, the preemption stands, the answer is still the
  // victims and the second pod joins the group's preempting pods.
  auto second = pod33;
  second.name = "pod33b";
  auto r = run(s, second, node_filter{false, {"0.0.3.0"}}, phase::preempting);
  ASSERT_EQ(r.kind, outcome::preempt);
  EXPECT_EQ(victims(r), (std::vector<std::string>{"pod28"}));
  EXPECT_EQ(s.group("group24")->state, group_state::preempting);
  // Not recreated: deleting the second pod leaves the first one's preemption in place.
  s.delete_unallocated(second);
  EXPECT_EQ(s.group("group24")->state, group_state::preempting);
  // A bad placement node still cancels it.
  s.set_node_bad("0.0.3.1");
  EXPECT_EQ(run(s, pod33, {}, phase::preempting).kind, outcome::wait);
  EXPECT_FALSE(s.group("group24").has_value());
}

}  // namespace
}  // namespace hetsched::hived

namespace hetsched::hived {
namespace {

// Found by hived_property_test: j (VC v0, priority 1) preempts an opportunistic pod on a rack
// whose node n2 is bad. Allocating j's first GPU binds v0's rack cell, and the bad n2 was bound
// to the first unbound virtual node, the one j's second pod was to use: that pod's GPUs then
// met a virtual node already bound to n2, and cancelling the preemption left v0's rack cell
// bound at priority 1 with no group. Now n2 takes a virtual node j does not use.
TEST(HivedStatefulPreemption, CancelOnARackWithABadNodeReleasesTheVcCell) {
  config cfg;
  cfg.cell_types = {{"NODE", "GPU", 2, true}, {"RACK", "NODE", 4, false}};
  for (const char* prefix : {"n", "m"}) {
    physical_cell_spec rack;
    rack.cell_type = "RACK";
    for (int n = 0; n < 4; ++n) rack.children.push_back({"", prefix + std::to_string(n), "", {}});
    cfg.physical_cells.push_back(rack);
  }
  cfg.virtual_clusters = {{"v0", {{"RACK", 1}}, {}}, {"v1", {{"RACK", 1}}, {}}};
  auto created = scheduler::create(cfg);
  ASSERT_TRUE(created.has_value()) << created.error().message;
  scheduler& s = *created;
  s.mark_all_nodes_healthy();
  pod_request o;
  o.name = "o";
  o.vc = "v1";
  o.priority = opportunistic_priority;
  o.leaf_cells = 2;
  o.ignore_suggested_nodes = false;
  auto ro = s.schedule(o, node_filter{false, {"n0"}}, phase::preempting);
  ASSERT_TRUE(ro.has_value() && ro->kind == outcome::bind);
  ASSERT_TRUE(s.add_allocated(o, ro->bind).has_value());
  s.set_node_bad("n2");
  const auto initial_left = s.total_left_cells("RACK");
  pod_request j;
  j.name = "j";
  j.vc = "v0";
  j.priority = 1;
  j.leaf_cells = 2;
  j.members = {{3, 2}};
  j.ignore_suggested_nodes = false;
  auto rj = s.schedule(j, node_filter{false, {"n0", "n1", "n3"}}, phase::preempting);
  ASSERT_TRUE(rj.has_value());
  ASSERT_EQ(rj->kind, outcome::preempt);
  EXPECT_EQ(s.group("j")->physical_placement, (std::map<std::string, std::vector<int>>{
                                                  {"n0", {0, 1}}, {"n1", {0, 1}}, {"n3", {0, 1}}}));
  // the rack is bad (n2), so it stays bound to v0 while j reserves it: at j's priority
  ASSERT_EQ(s.vc_cells_all("v0").size(), 1U);
  EXPECT_EQ(s.vc_cells_all("v0")[0].priority, 1);
  EXPECT_EQ(s.vc_cells_all("v0")[0].bound_to, "0");
  s.delete_unallocated(j);
  EXPECT_FALSE(s.group("j").has_value());
  // nothing of j is left: v0's cell is free again (bound only because the rack is bad)
  const auto cells = s.vc_cells_all("v0");
  EXPECT_EQ(cells[0].priority, -2);
  EXPECT_EQ(s.group("o")->state, group_state::being_preempted);
  // once n2 is healthy, the state is the one before j came (o keeps its GPUs)
  s.set_node_healthy("n2");
  EXPECT_EQ(s.vc_cells_all("v0")[0].bound_to, "");
  EXPECT_EQ(s.total_left_cells("RACK"), initial_left);
  EXPECT_EQ(s.all_vc_free_cells("RACK"), (std::vector<int>{0, 0, 0, 2}));
}

}  // namespace
}  // namespace hetsched::hived
