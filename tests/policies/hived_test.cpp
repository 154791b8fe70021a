// SPDX-License-Identifier: MIT
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_small_fixture.hpp"

namespace hetsched::hived {
namespace {

using small_fixture::make;
using small_fixture::pod;
using small_fixture::small_config;

TEST(HivedConfig, InfersAddressesAndNodes) {
  auto s = make();
  // nodes in first-appearance order; leaves of n1 take their configured indices
  EXPECT_EQ(s.nodes(), (std::vector<std::string>{"n0", "n1", "n2"}));
  // the rack cell is the only free cell of chain RACK after start-up
  EXPECT_EQ(s.free_list("RACK", 4), (std::vector<std::string>{"0"}));
  EXPECT_EQ(s.free_list("NODE", 3), (std::vector<std::string>{"n2"}));
}

TEST(HivedConfig, RejectsInfeasibleAssignment) {
  auto cfg = small_config();
  cfg.virtual_clusters[0].virtual_cells[0].count = 3;
  auto s = scheduler::create(cfg);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message,
            "Illegal initial VC assignment: Insufficient physical cells at chain RACK level 3: 3 "
            "needed, 2 available");
}

TEST(HivedConfig, RejectsUnknownTypesAndPins) {
  auto cfg = small_config();
  cfg.physical_cells[1].cell_type = "NOPE";
  EXPECT_FALSE(scheduler::create(cfg).has_value());
  cfg = small_config();
  cfg.virtual_clusters[1].pinned_cells = {"missing"};
  auto s = scheduler::create(cfg);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message, "pinned cell not found in physicalCells: VC: b, ID: missing");
}

TEST(HivedSchedule, BindsInLeafOrderAndCommits) {
  auto s = make();
  auto r = s.schedule(pod("p1", "a", 1, 2), node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind);
  // buddy allocation splits the rack; the first node n0 gets the pod on one PCIe switch
  EXPECT_EQ(r->bind.node, "n0");
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->bind.chain, "RACK");
  // scheduling alone changes nothing
  EXPECT_FALSE(s.group("p1").has_value());
  ASSERT_TRUE(s.add_allocated(pod("p1", "a", 1, 2), r->bind).has_value());
  auto g = s.group("p1");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->state, group_state::allocated);
  EXPECT_FALSE(g->virtual_placement_dropped);
  // the rack was split: n1 is now a free node cell
  EXPECT_EQ(s.free_list("RACK", 3), (std::vector<std::string>{"0/n1"}));
  ASSERT_TRUE(s.delete_allocated(pod("p1", "a", 1, 2), r->bind).has_value());
  EXPECT_FALSE(s.group("p1").has_value());
  // buddies merge back into the rack
  EXPECT_EQ(s.free_list("RACK", 4), (std::vector<std::string>{"0"}));
  EXPECT_TRUE(s.free_list("RACK", 3).empty());
}

TEST(HivedSchedule, OpportunisticUsesPermutedLeaves) {
  auto s = make();
  pod_request p = pod("o1", "b", -1, 4);
  p.ignore_suggested_nodes = false;
  node_filter only_n1{false, {"n1"}};
  auto r = s.schedule(p, only_n1, phase::preempting);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind);
  EXPECT_EQ(r->bind.node, "n1");
  // tree order of n1's leaves
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{3, 2, 1, 0}));
  ASSERT_EQ(r->bind.group_placements.at(4)[0].preassigned_types,
            (std::vector<std::string>{"", "", "", ""}));
}

TEST(HivedSchedule, UserErrors) {
  auto s = make();
  auto bad_vc = s.schedule(pod("x", "zzz", 1, 1), node_filter{}, phase::preempting);
  ASSERT_FALSE(bad_vc.has_value());
  EXPECT_EQ(bad_vc.error().code, errc::not_found);
  EXPECT_EQ(bad_vc.error().message, "[x]: VC zzz does not exists!");
  auto prio = s.schedule(pod("x", "a", 1001, 1), node_filter{}, phase::preempting);
  ASSERT_FALSE(prio.has_value());
  EXPECT_EQ(prio.error().code, errc::out_of_range);
  EXPECT_EQ(prio.error().message, "[x]: Priority is greater than 1000");
  auto low = s.schedule(pod("x", "a", -2, 1), node_filter{}, phase::preempting);
  ASSERT_FALSE(low.has_value());
  EXPECT_EQ(low.error().code, errc::out_of_range);
  EXPECT_EQ(low.error().message, "[x]: Priority is less than -1");
  // a 2-GPU pod whose group declares only 4-GPU members
  auto members = s.schedule(pod("x", "a", 1, 2, "g", {{1, 4}}), node_filter{}, phase::preempting);
  ASSERT_FALSE(members.has_value());
  EXPECT_EQ(members.error().code, errc::invalid_argument);
  EXPECT_EQ(members.error().message, "[x]: AffinityGroup.Members does not contains current Pod");
  auto no_pods = s.schedule(pod("x", "a", 1, 2, "g", {{0, 2}}), node_filter{}, phase::preempting);
  ASSERT_FALSE(no_pods.has_value());
  EXPECT_EQ(no_pods.error().message, "[x]: AffinityGroup.Members has non-positive PodNumber");
  auto no_leaves = pod("x", "a", 1, 0);
  auto nl = s.schedule(no_leaves, node_filter{}, phase::preempting);
  ASSERT_FALSE(nl.has_value());
  EXPECT_EQ(nl.error().message, "[x]: LeafCellNumber is non-positive");
  auto type = pod("x", "a", 1, 1);
  type.leaf_type = "TPU";
  auto t = s.schedule(type, node_filter{}, phase::preempting);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, errc::not_found);
  EXPECT_EQ(t.error().message,
            "[x]: Pod requesting leaf cell type TPU which the whole cluster does not have");
  auto pinned = pod("x", "a", 1, 1);
  pinned.pinned_cell = "nope";
  auto pr = s.schedule(pinned, node_filter{}, phase::preempting);
  ASSERT_FALSE(pr.has_value());
  EXPECT_EQ(pr.error().code, errc::not_found);
  EXPECT_EQ(pr.error().message, "[x]: VC a does not have pinned cell nope");
  // no error changed anything
  EXPECT_FALSE(s.group("g").has_value());
  EXPECT_FALSE(s.group("x").has_value());
  EXPECT_EQ(s.free_list("RACK", 4), (std::vector<std::string>{"0"}));
}

TEST(HivedSchedule, LeafTypeNotInTheVc) {
  // Chain NODE gets a second leaf type: a top-level TPU node that only VC c owns.
  auto cfg = small_config();
  cfg.cell_types.push_back({"TNODE", "TPU", 2, true});
  cfg.physical_cells.push_back(physical_cell_spec{"TNODE", "t0", "", {}});
  cfg.virtual_clusters.push_back({"c", {{"TNODE", 1}}, {}});
  auto s = scheduler::create(cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  auto tpu = pod("x", "a", 1, 1);
  tpu.leaf_type = "TPU";
  auto r = s->schedule(tpu, node_filter{}, phase::preempting);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::invalid_argument);
  EXPECT_EQ(r.error().message, "[x]: Pod requesting leaf cell type TPU which VC a does not have");
  // an opportunistic pod needs no VC cells of the type: it runs on the free TPU node
  tpu.priority = -1;
  auto o = s->schedule(tpu, node_filter{}, phase::preempting);
  ASSERT_TRUE(o.has_value()) << o.error().message;
  ASSERT_EQ(o->kind, outcome::bind);
  EXPECT_EQ(o->bind.node, "t0");
}

TEST(HivedSchedule, MorePodsThanDeclared) {
  auto s = make();
  // a gang of two 1-GPU pods: both placements are decided by the first pod
  auto first = pod("m1", "a", 1, 1, "gm", {{2, 1}});
  auto r1 = s.schedule(first, node_filter{}, phase::preempting);
  ASSERT_TRUE(r1.has_value() && r1->kind == outcome::bind);
  ASSERT_TRUE(s.add_allocated(first, r1->bind).has_value());
  auto second = pod("m2", "a", 1, 1, "gm", {{2, 1}});
  auto r2 = s.schedule(second, node_filter{}, phase::preempting);
  ASSERT_TRUE(r2.has_value() && r2->kind == outcome::bind);
  EXPECT_EQ(r2->bind.leaf_cells, r1->bind.group_placements.at(1)[1].leaf_cells);
  ASSERT_TRUE(s.add_allocated(second, r2->bind).has_value());
  // a third pod of the same group has no slot left
  auto third = pod("m3", "a", 1, 1, "gm", {{2, 1}});
  auto r3 = s.schedule(third, node_filter{}, phase::preempting);
  ASSERT_FALSE(r3.has_value());
  EXPECT_EQ(r3.error().code, errc::invalid_argument);
  EXPECT_EQ(r3.error().message,
            "Requesting more pods than the configured number for 1 leaf cells (2 pods) in "
            "affinity group gm");
  EXPECT_EQ(s.group("gm")->physical_placement.at("n0"), (std::vector<int>{0, 1}));
}

TEST(HivedHealth, FreshSchedulerWaitsUntilNodesAreHealthy) {
  auto created = scheduler::create(small_config());
  ASSERT_TRUE(created.has_value());
  scheduler& s = *created;
  // every node starts bad (hivedscheduler initBadNodes): the VC cell is doomed to the bad rack
  // and the VC's view has nothing healthy to offer
  auto r = s.schedule(pod("p", "a", 1, 1), node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, outcome::wait);
  EXPECT_EQ(r->wait_reason, "have to use at least one bad node 0/n0 when scheduling in VC a");
  auto o = s.schedule(pod("o", "b", -1, 1), node_filter{}, phase::preempting);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->kind, outcome::wait);
  // one healthy node is enough for a 1-GPU pod of VC a
  s.set_node_healthy("n0");
  auto ok = s.schedule(pod("p", "a", 1, 1), node_filter{}, phase::preempting);
  ASSERT_TRUE(ok.has_value());
  ASSERT_EQ(ok->kind, outcome::bind) << ok->wait_reason;
  EXPECT_EQ(ok->bind.node, "n0");
  EXPECT_EQ(ok->bind.leaf_cells, (std::vector<int>{0}));
}

// Found by hived_property_test: two racks, each VC owns one; a bad node in each dooms both VC
// cells to the bad racks. A pod of v0 runs on a healthy node of its doomed rack. When the other
// rack heals, hivedscheduler's tryUnbindDoomedBadCell unbinds v0's first doomed cell even though
// the pod uses it (v0's cell showed unbound, the pod's GPUs outside its VC). Now a doomed cell in
// use stays bound, becomes an ordinary allocation when it heals, and goes with its last pod.
TEST(HivedHealth, DoomedCellInUseIsNotUnboundFromUnderItsPod) {
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
  const auto left = s.total_left_cells("RACK");
  s.set_node_bad("n0");
  s.set_node_bad("m0");
  // no healthy rack left: v0 is doomed to rack 0, v1 to rack 1
  EXPECT_EQ(s.vc_cells_all("v0")[0].bound_to, "0");
  EXPECT_EQ(s.vc_cells_all("v1")[0].bound_to, "1");
  auto p = pod("p", "v0", 1, 2);
  p.leaf_type = "";
  auto r = s.schedule(p, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value() && r->kind == outcome::bind) << (r ? r->wait_reason : "");
  EXPECT_EQ(r->bind.node, "n1");
  ASSERT_TRUE(s.add_allocated(p, r->bind).has_value());
  // rack 1 heals: v1's doomed cell goes; v0's stays bound under its pod
  s.set_node_healthy("m0");
  EXPECT_EQ(s.vc_cells_all("v1")[0].bound_to, "");
  EXPECT_EQ(s.vc_cells_all("v0")[0].bound_to, "0");
  EXPECT_EQ(s.vc_cells_all("v0")[0].priority, 1);
  EXPECT_EQ(s.free_list("RACK", 3), (std::vector<std::string>{"1"}));
  EXPECT_EQ(s.all_vc_free_cells("RACK"), (std::vector<int>{0, 0, 0, 1}));
  // rack 0 heals: an ordinary allocation; the pod's release frees it
  s.set_node_healthy("n0");
  EXPECT_EQ(s.vc_cells_all("v0")[0].bound_to, "0");
  ASSERT_TRUE(s.delete_allocated(p, r->bind).has_value());
  EXPECT_EQ(s.vc_cells_all("v0")[0].bound_to, "");
  auto free = s.free_list("RACK", 3);
  std::sort(free.begin(), free.end());
  EXPECT_EQ(free, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(s.total_left_cells("RACK"), left);
  EXPECT_EQ(s.all_vc_free_cells("RACK"), (std::vector<int>{0, 0, 0, 2}));
}

// An opportunistic pod of VC a runs on n2, VC b's only NODE cell. n2 goes bad: b's cell is
// doomed to it and n2's GPUs are bound to b's virtual cells so that b sees the failure. Releasing
// the opportunistic pod released b's cell under VC a (hivedscheduler does the same; here a has
// no NODE cells, so its counter list was empty: undefined behaviour, caught by UBSan).
TEST(HivedHealth, OpportunisticPodOnADoomedCellLeavesTheDoomedVcAlone) {
  auto s = make();
  auto o = pod("o", "a", opportunistic_priority, 4);
  auto r = s.schedule(o, node_filter{false, {"n2"}}, phase::preempting);
  ASSERT_TRUE(r.has_value() && r->kind == outcome::bind) << (r ? r->wait_reason : "");
  EXPECT_EQ(r->bind.node, "n2");
  ASSERT_TRUE(s.add_allocated(o, r->bind).has_value());
  s.set_node_bad("n2");
  EXPECT_EQ(s.vc_cells("b", "NODE", 3)[0].bound_to, "n2");
  EXPECT_EQ(s.all_vc_free_cells("NODE"), (std::vector<int>{0, 0, 0, 0}));
  ASSERT_TRUE(s.delete_allocated(o, r->bind).has_value());
  // b's cell stays doomed to the bad n2; the counters did not move
  EXPECT_EQ(s.vc_cells("b", "NODE", 3)[0].bound_to, "n2");
  EXPECT_EQ(s.all_vc_free_cells("NODE"), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(s.total_left_cells("NODE"), (std::vector<int>{0, 0, 0, 0}));
  s.set_node_healthy("n2");
  EXPECT_EQ(s.vc_cells("b", "NODE", 3)[0].bound_to, "");
  EXPECT_EQ(s.free_list("NODE", 3), (std::vector<std::string>{"n2"}));
  EXPECT_EQ(s.all_vc_free_cells("NODE"), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(s.total_left_cells("NODE"), (std::vector<int>{0, 4, 2, 1}));
}

TEST(HivedSchedule, GangIsAllOrNothingAndWaits) {
  auto s = make();
  // VC a has one 4-GPU node: a gang of two 4-GPU pods cannot fit
  auto r = s.schedule(pod("g1", "a", 1, 4, "gang", {{2, 4}}), node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, outcome::wait);
  EXPECT_EQ(r->wait_reason, "insufficient capacity when scheduling in VC a");
  EXPECT_FALSE(s.group("gang").has_value());
}

TEST(HivedPreemption, StatefulOnlyInPreemptingPhase) {
  auto s = make();
  auto low = pod("low", "a", 0, 4);
  auto r = s.schedule(low, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value() && r->kind == outcome::bind);
  ASSERT_TRUE(s.add_allocated(low, r->bind).has_value());
  auto high = pod("high", "a", 5, 4);
  auto f = s.schedule(high, node_filter{}, phase::filtering);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->kind, outcome::preempt);
  EXPECT_EQ(f->victims_by_node.at("n0"), (std::vector<std::string>{"low"}));
  EXPECT_FALSE(s.group("high").has_value());
  auto p = s.schedule(high, node_filter{}, phase::preempting);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->kind, outcome::preempt);
  EXPECT_EQ(s.group("high")->state, group_state::preempting);
  EXPECT_EQ(s.group("low")->state, group_state::being_preempted);
  // a lower-priority pod cannot take the reserved cells
  auto mid = pod("mid", "a", 3, 4);
  auto m = s.schedule(mid, node_filter{}, phase::preempting);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->kind, outcome::wait);
  // once the victim is gone, the preemptor binds
  ASSERT_TRUE(s.delete_allocated(low, r->bind).has_value());
  auto b = s.schedule(high, node_filter{}, phase::preempting);
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(b->kind, outcome::bind);
  EXPECT_EQ(b->bind.node, "n0");
  ASSERT_TRUE(s.add_allocated(high, b->bind).has_value());
  EXPECT_EQ(s.group("high")->state, group_state::allocated);
}

TEST(HivedHealth, BadNodeMakesVcCellDoomed) {
  auto s = make();
  s.set_node_bad("n2");
  // chain NODE has one cell and VC b needs it: the VC cell is bound to the bad node
  auto cells = s.vc_cells("b", "NODE", 3);
  ASSERT_EQ(cells.size(), 1U);
  EXPECT_FALSE(cells[0].healthy);
  EXPECT_EQ(cells[0].bound_to, "n2");
  auto r = s.schedule(pod("p", "b", 1, 1), node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, outcome::wait);
  EXPECT_EQ(r->wait_reason, "have to use at least one bad node n2 when scheduling in VC b");
  s.set_node_healthy("n2");
  cells = s.vc_cells("b", "NODE", 3);
  EXPECT_TRUE(cells[0].healthy);
  EXPECT_EQ(cells[0].bound_to, "");
}

TEST(HivedSchedule, Deterministic) {
  auto run = [] {
    auto s = make();
    std::vector<std::string> out;
    for (int i = 0; i < 4; ++i) {
      auto p = pod(fmt::format("p{}", i), "a", 1, 1);
      auto r = s.schedule(p, node_filter{}, phase::preempting);
      if (r.has_value() && r->kind == outcome::bind) {
        out.push_back(fmt::format("{}:{}", r->bind.node, r->bind.leaf_cells[0]));
        (void)s.add_allocated(p, r->bind);
      }
    }
    return out;
  };
  auto first = run();
  EXPECT_EQ(first, run());
  // packing: all four 1-GPU pods land on n0
  EXPECT_EQ(first, (std::vector<std::string>{"n0:0", "n0:1", "n0:2", "n0:3"}));
}

}  // namespace
}  // namespace hetsched::hived

namespace hetsched::hived {
namespace {

TEST(HivedRecovery, ReplayingBindRecordsRebuildsState) {
  auto a = make();
  struct committed {
    pod_request pod;
    bind_info bind;
  };
  std::vector<committed> log;
  const std::vector<pod_request> pods = {pod("r1", "a", 1, 2), pod("r2", "a", 2, 1),
                                         pod("r3", "b", 0, 4), pod("r4", "a", -1, 2)};
  for (const auto& p : pods) {
    auto r = a.schedule(p, node_filter{}, phase::preempting);
    ASSERT_TRUE(r.has_value() && r->kind == outcome::bind) << p.name;
    ASSERT_TRUE(a.add_allocated(p, r->bind).has_value());
    log.push_back({p, r->bind});
  }
  // a restarted scheduler sees the same bound pods through add_allocated
  auto b = make();
  for (const auto& c : log) ASSERT_TRUE(b.add_allocated(c.pod, c.bind).has_value());
  for (const auto& chain : {"RACK", "NODE"})
    for (int level = 1; level <= 4; ++level)
      EXPECT_EQ(a.free_list(chain, level), b.free_list(chain, level)) << chain << level;
  for (const auto& c : log) {
    auto ga = a.group(c.pod.name);
    auto gb = b.group(c.pod.name);
    ASSERT_TRUE(ga.has_value() && gb.has_value());
    EXPECT_EQ(ga->physical_placement, gb->physical_placement);
    EXPECT_EQ(ga->virtual_placement_dropped, gb->virtual_placement_dropped);
  }
  // the opportunistic pod r4 runs without a virtual placement
  EXPECT_TRUE(b.group("r4")->virtual_placement_dropped);
  // the next decision is the same on both
  auto next = pod("r5", "a", 1, 1);
  auto ra = a.schedule(next, node_filter{}, phase::filtering);
  auto rb = b.schedule(next, node_filter{}, phase::filtering);
  ASSERT_TRUE(ra.has_value() && rb.has_value());
  EXPECT_EQ(ra->bind, rb->bind);
}

TEST(HivedRecovery, UnknownLeavesAreIgnored) {
  auto s = make();
  auto p = pod("gone", "a", 1, 1);
  bind_info info;
  info.node = "n9";
  info.leaf_cells = {0};
  info.chain = "RACK";
  info.group_placements[1] = {pod_placement{"n9", {0}, {"NODE"}}};
  // the pod keeps running on a node that left the config; nothing is allocated for it
  ASSERT_TRUE(s.add_allocated(p, info).has_value());
  auto g = s.group("gone");
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->physical_placement.empty());
  EXPECT_EQ(s.free_list("RACK", 4), (std::vector<std::string>{"0"}));
}

}  // namespace
}  // namespace hetsched::hived

namespace hetsched::hived {
namespace {

TEST(HivedReconfiguration, ShrunkVcLazyPreemptsOnReplay) {
  auto a = make();
  auto p = pod("job", "a", 1, 4);
  auto r = a.schedule(p, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value() && r->kind == outcome::bind);
  ASSERT_TRUE(a.add_allocated(p, r->bind).has_value());
  EXPECT_FALSE(a.group("job")->virtual_placement_dropped);
  // the new config takes VC a's only cell away: the replayed pod keeps running, opportunistic
  auto cfg = small_config();
  cfg.virtual_clusters[0].virtual_cells[0].count = 0;
  auto b = scheduler::create(cfg);
  ASSERT_TRUE(b.has_value());
  b->mark_all_nodes_healthy();
  ASSERT_TRUE(b->add_allocated(p, r->bind).has_value());
  auto g = b->group("job");
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->virtual_placement_dropped);
  EXPECT_EQ(g->physical_placement.at("n0"), (std::vector<int>{0, 1, 2, 3}));
  // opportunistic use never leaves the free list: the rack is still free
  EXPECT_EQ(b->free_list("RACK", 4), (std::vector<std::string>{"0"}));
}

}  // namespace
}  // namespace hetsched::hived

namespace hetsched::hived {
namespace {

/// Two rows of 8 racks x 4 nodes x 8 GPUs; two VCs of rack and node cells.
config rows_config() {
  config cfg;
  cfg.cell_types = {{"PCIE", "V100", 2, false},
                    {"SOCKET", "PCIE", 2, false},
                    {"NODE", "SOCKET", 2, true},
                    {"RACK", "NODE", 4, false},
                    {"ROW", "RACK", 8, false}};
  for (int r = 0; r < 2; ++r) {
    physical_cell_spec row;
    row.cell_type = "ROW";
    for (int k = 0; k < 8; ++k) {
      physical_cell_spec rack;
      for (int n = 0; n < 4; ++n) {
        physical_cell_spec node;
        node.address = fmt::format("node-{}", (r * 8 + k) * 4 + n);
        rack.children.push_back(std::move(node));
      }
      row.children.push_back(std::move(rack));
    }
    cfg.physical_cells.push_back(std::move(row));
  }
  cfg.virtual_clusters = {{"v0", {{"ROW.RACK", 6}, {"ROW.RACK.NODE", 8}}, {}},
                          {"v1", {{"ROW.RACK", 6}, {"ROW.RACK.NODE", 8}}, {}}};
  return cfg;
}

TEST(HivedStress, RandomWorkloadReleasesEverything) {
  auto created = scheduler::create(rows_config());
  ASSERT_TRUE(created.has_value()) << created.error().message;
  scheduler& s = *created;
  s.mark_all_nodes_healthy();
  std::vector<std::vector<std::string>> initial;
  for (int l = 1; l <= 6; ++l) initial.push_back(s.free_list("ROW", l));
  struct running {
    std::vector<std::pair<pod_request, bind_info>> pods;
  };
  std::map<std::string, running> groups;
  std::map<std::string, std::string> pod_group;
  std::uint64_t seed = 42;
  auto next = [&](std::uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  auto release = [&](std::string g) {  // by value: callers pass map keys
    for (const auto& [p, info] : groups[g].pods)
      ASSERT_TRUE(s.delete_allocated(p, info).has_value());
    groups.erase(g);
    EXPECT_FALSE(s.group(g).has_value());
  };
  const int sizes[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {8, 2}, {8, 4}};
  int binds = 0;
  int preemptions = 0;
  for (int i = 0; i < 400; ++i) {
    if (!groups.empty() && next(3) == 0) {
      auto it = groups.begin();
      std::advance(it, static_cast<long>(next(groups.size())));
      release(it->first);
      continue;
    }
    const auto& sz = sizes[next(6)];
    std::string name = fmt::format("g{}", i);
    auto p = pod(name, next(2) == 0 ? "v0" : "v1", static_cast<int>(next(4)) - 1, sz[0], name,
                 {{sz[1], sz[0]}});
    p.leaf_type = "V100";
    p.lazy_preemption = next(2) == 0;
    auto r = s.schedule(p, node_filter{}, phase::preempting);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    if (r->kind == outcome::preempt) {
      ++preemptions;
      // delete every victim group, then the preemptor binds
      std::set<std::string> victims;
      for (const auto& [node, pods] : r->victims_by_node)
        for (const auto& v : pods) victims.insert(pod_group.at(v));
      for (const auto& g : victims) release(g);
      r = s.schedule(p, node_filter{}, phase::preempting);
      ASSERT_TRUE(r.has_value());
      ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
    }
    if (r->kind != outcome::bind) continue;
    ++binds;
    running run;
    for (const auto& [num, pods] : r->bind.group_placements) {
      for (std::size_t k = 0; k < pods.size(); ++k) {
        pod_request member = p;
        member.name = fmt::format("{}-{}", name, k);
        bind_info info = r->bind;
        info.node = pods[k].node;
        info.leaf_cells = pods[k].leaf_cells;
        ASSERT_TRUE(s.add_allocated(member, info).has_value());
        run.pods.emplace_back(member, info);
        pod_group[member.name] = name;
      }
    }
    groups[name] = std::move(run);
    EXPECT_EQ(s.group(name)->state, group_state::allocated);
  }
  EXPECT_GT(binds, 100);
  while (!groups.empty()) release(groups.begin()->first);
  // every buddy merged back: the free lists are the start-up ones (same order or permuted)
  for (int l = 1; l <= 6; ++l) {
    auto now = s.free_list("ROW", l);
    auto want = initial[static_cast<std::size_t>(l - 1)];
    std::sort(now.begin(), now.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(now, want) << "level " << l;
  }
  for (const auto& vc : {"v0", "v1"})
    for (const auto& cell : s.vc_cells_all(vc)) {
      EXPECT_EQ(cell.priority, -2) << cell.address;
      EXPECT_EQ(cell.bound_to, "") << cell.address;
    }
  EXPECT_GT(preemptions, 0) << binds;
}

}  // namespace
}  // namespace hetsched::hived
