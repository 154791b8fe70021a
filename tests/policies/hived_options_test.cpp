// SPDX-License-Identifier: MIT
// HiveD options that are off by default: multi-GPU pods on below-node VC cells (pai#4029), cell
// type requests and hierarchical within-one-cell groups (the v2 API).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_small_fixture.hpp"

namespace hetsched::hived {
namespace {

/// small_fixture's config with options::cell_type_requests on (unless `requests` is false).
config small_config(int a_nodes = 1, bool requests = true) {
  return small_fixture::small_config(a_nodes, requests);
}
using small_fixture::make;
using small_fixture::pod;

/// Chain ROW(2) -> RACK(2) -> NODE(2, node level) -> PCIE(2) -> GPU: two rows of 16 GPUs, nodes
/// r0n0, r0n1 (rack 0), r1n0, r1n1 (rack 1) in row 0 and r2n0 ... r3n1 in row 1. VC "v" owns
/// row 0 as one ROW cell, VC "w" two NODE cells (bound to row 1 by buddy allocation).
config row_config() {
  config cfg;
  cfg.cell_types = {{"PCIE", "GPU", 2, false},
                    {"NODE", "PCIE", 2, true},
                    {"RACK", "NODE", 2, false},
                    {"ROW", "RACK", 2, false}};
  for (int r = 0; r < 2; ++r) {
    physical_cell_spec row;
    row.cell_type = "ROW";
    for (int k = 0; k < 2; ++k) {
      physical_cell_spec rack;
      for (int n = 0; n < 2; ++n) {
        physical_cell_spec node;
        node.address = fmt::format("r{}n{}", r * 2 + k, n);
        rack.children.push_back(std::move(node));
      }
      row.children.push_back(std::move(rack));
    }
    cfg.physical_cells.push_back(std::move(row));
  }
  cfg.virtual_clusters = {{"v", {{"ROW", 1}}, {}}, {"w", {{"ROW.RACK.NODE", 2}}, {}}};
  cfg.opts.cell_type_requests = true;
  return cfg;
}

/// Commits a one-pod group on `leaves` of `node` from a hand-made bind record; `type` is the
/// preassigned cell type of the VC cell it uses (empty = opportunistic).
void hold(scheduler& s, const std::string& name, const std::string& vc, int prio,
          const std::string& chain, const std::string& node, const std::vector<int>& leaves,
          const std::string& type) {
  const int n = static_cast<int>(leaves.size());
  bind_info b;
  b.node = node;
  b.leaf_cells = leaves;
  b.chain = chain;
  b.group_placements[n] = {
      pod_placement{node, leaves, std::vector<std::string>(leaves.size(), type)}};
  auto r = s.add_allocated(pod(name, vc, prio, n), b);
  ASSERT_TRUE(r.has_value()) << r.error().message;
}

/// Bind and commit `p`; returns the bind record.
bind_info bind(scheduler& s, const pod_request& p) {
  auto r = s.schedule(p, node_filter{}, phase::preempting);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_TRUE(s.add_allocated(p, r->bind).has_value());
  return r->bind;
}

/// Two 4-GPU nodes; VC "v" owns four single-GPU cells (quota "NODE.GPU", pai#4029).
config gpu_cell_config(bool multi_cell) {
  config cfg;
  cfg.cell_types = {{"PCIE", "GPU", 2, false}, {"NODE", "PCIE", 2, true}};
  cfg.physical_cells = {physical_cell_spec{"NODE", "n0", "", {}},
                        physical_cell_spec{"NODE", "n1", "", {}}};
  cfg.virtual_clusters = {{"v", {{"NODE.GPU", 4}}, {}}};
  cfg.opts.multi_cell_pods = multi_cell;
  return cfg;
}

TEST(HivedOptions, MultiCellPodsOffByDefault) {
  auto s = make(gpu_cell_config(false));
  auto r = s.schedule(pod("two", "v", 1, 2), node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, outcome::wait);
  EXPECT_EQ(r->wait_reason, "insufficient capacity when scheduling in VC v");
}

TEST(HivedOptions, MultiCellPodsOnOneServer) {
  auto s = make(gpu_cell_config(true));
  auto first = pod("two", "v", 1, 2);
  auto r = s.schedule(first, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "n0");
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->bind.group_placements.at(2)[0].preassigned_types,
            (std::vector<std::string>{"GPU", "GPU"}));
  ASSERT_TRUE(s.add_allocated(first, r->bind).has_value());
  EXPECT_FALSE(s.group("two")->virtual_placement_dropped);
  // the VC's remaining two cells host the next 2-GPU pod on the same server's other switch
  auto second = pod("two-b", "v", 1, 2);
  auto r2 = s.schedule(second, node_filter{}, phase::preempting);
  ASSERT_TRUE(r2.has_value());
  ASSERT_EQ(r2->kind, outcome::bind) << r2->wait_reason;
  EXPECT_EQ(r2->bind.node, "n0");
  EXPECT_EQ(r2->bind.leaf_cells, (std::vector<int>{2, 3}));
  ASSERT_TRUE(s.add_allocated(second, r2->bind).has_value());
  // the quota is used up
  auto third = s.schedule(pod("two-c", "v", 1, 2), node_filter{}, phase::preempting);
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->kind, outcome::wait);
}

TEST(HivedOptions, RequestsOffAreUserErrors) {
  auto s = make(small_config(1, false));
  auto cell_pod = pod("c1", "a", 1, 1);
  cell_pod.cell_type = "PCIE";
  auto refused = s.schedule(cell_pod, node_filter{}, phase::preempting);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message,
            "[c1]: cell type requests are disabled (options::cell_type_requests)");
  auto within = pod("w1", "a", 1, 1);
  within.within_one_cell = "NODE";
  auto w = s.schedule(within, node_filter{}, phase::preempting);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message,
            "[w1]: within-one-cell groups are disabled (options::cell_type_requests)");
  auto child = pod("k1", "a", 1, 1, "kg");
  child.child_groups = {group_spec{{{1, 1}}, "", {}}};
  ASSERT_FALSE(s.schedule(child, node_filter{}, phase::preempting).has_value());
}

TEST(HivedOptions, CellTypeRequests) {
  auto s = make(small_config());
  // one PCIE cell = two GPUs behind one switch
  auto cell_pod = pod("c1", "a", 1, 1);
  cell_pod.cell_type = "PCIE";
  auto r = s.schedule(cell_pod, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "n0");
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->bind.group_placements.at(2)[0].preassigned_types,
            (std::vector<std::string>{"NODE", "NODE"}));
  ASSERT_TRUE(s.add_allocated(cell_pod, r->bind).has_value());
  ASSERT_TRUE(s.delete_allocated(cell_pod, r->bind).has_value());
  EXPECT_FALSE(s.group("c1").has_value());

  // VC b: GPUs 0 and 2 of n2 busy leaves 1 and 3 free, on different switches
  hold(s, "b0", "b", 1, "NODE", "n2", {0}, "NODE");
  hold(s, "b2", "b", 1, "NODE", "n2", {2}, "NODE");
  auto two = pod("two", "b", 1, 2);
  auto leaves = s.schedule(two, node_filter{}, phase::filtering);
  ASSERT_TRUE(leaves.has_value());
  ASSERT_EQ(leaves->kind, outcome::bind);
  EXPECT_EQ(leaves->bind.leaf_cells, (std::vector<int>{1, 3}));
  auto whole = pod("whole", "b", 1, 1);
  whole.cell_type = "PCIE";
  auto w = s.schedule(whole, node_filter{}, phase::filtering);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, outcome::wait);
  EXPECT_EQ(w->wait_reason, "insufficient whole cells of type PCIE when scheduling in VC b");
  // a higher priority gets a whole switch by preempting the lower-priority pod on it
  whole.priority = 2;
  auto p = s.schedule(whole, node_filter{}, phase::filtering);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->kind, outcome::preempt);
  EXPECT_EQ(p->victims_by_node.at("n2"), (std::vector<std::string>{"b0"}));
  // the preempting phase reserves the switch; forgetting the pod cancels the preemption
  auto reserving = s.schedule(whole, node_filter{}, phase::preempting);
  ASSERT_TRUE(reserving.has_value());
  ASSERT_EQ(reserving->kind, outcome::preempt);
  ASSERT_TRUE(s.group("whole").has_value());
  EXPECT_EQ(s.group("whole")->state, group_state::preempting);
  EXPECT_EQ(s.group("whole")->physical_placement.at("n2"), (std::vector<int>{0, 1}));
  EXPECT_EQ(s.group("b0")->state, group_state::being_preempted);
  s.delete_unallocated(whole);
  EXPECT_FALSE(s.group("whole").has_value());
}

TEST(HivedOptions, WithinOneCellInAPinnedCell) {
  // n2 is VC b's pinned cell: the group searches its switches
  auto cfg = small_config();
  cfg.physical_cells[1].pinned_id = "p2";
  cfg.virtual_clusters[1] = {"b", {}, {"p2"}};
  auto s = make(cfg);
  auto p = pod("w", "b", 1, 1, "wg", {{2, 1}});
  p.pinned_cell = "p2";
  p.within_one_cell = "PCIE";
  auto r = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "n2");
  EXPECT_EQ(r->bind.group_placements.at(1)[0].leaf_cells, (std::vector<int>{0}));
  EXPECT_EQ(r->bind.group_placements.at(1)[1].leaf_cells, (std::vector<int>{1}));
  ASSERT_TRUE(s.add_allocated(p, r->bind).has_value());
  // the other switch holds the next such group; a third finds no switch with room
  auto q = p;
  q.name = "x";
  q.group = "xg";
  auto r2 = s.schedule(q, node_filter{}, phase::filtering);
  ASSERT_TRUE(r2.has_value());
  ASSERT_EQ(r2->kind, outcome::bind);
  EXPECT_EQ(r2->bind.group_placements.at(1)[0].leaf_cells, (std::vector<int>{2}));
  ASSERT_TRUE(s.add_allocated(q, r2->bind).has_value());
  q.group = "yg";
  auto r3 = s.schedule(q, node_filter{}, phase::filtering);
  ASSERT_TRUE(r3.has_value());
  EXPECT_EQ(r3->kind, outcome::wait);
  EXPECT_EQ(r3->wait_reason, "no cell of type PCIE has room for the group when scheduling in VC b");
}

TEST(HivedOptions, CellTypeSearchFindsWholeCellsThePackingMisses) {
  // VC a owns both nodes of the rack; GPUs 0 and 2 of n0 busy. The topology-aware packing puts
  // a 2-GPU pod on the busier n0 (leaves 1 and 3, two switches), so checking its answer would
  // wait; the search takes a whole switch of n1.
  auto s = make(small_config(2));
  bind(s, pod("a0", "a", 1, 1));
  auto a1 = pod("a1", "a", 1, 1);
  auto a1_bind = bind(s, a1);
  bind(s, pod("a2", "a", 1, 1));
  ASSERT_EQ(a1_bind.leaf_cells, (std::vector<int>{1}));
  ASSERT_TRUE(s.delete_allocated(a1, a1_bind).has_value());
  auto leaves = s.schedule(pod("two", "a", 1, 2), node_filter{}, phase::filtering);
  ASSERT_TRUE(leaves.has_value());
  ASSERT_EQ(leaves->kind, outcome::bind);
  EXPECT_EQ(leaves->bind.node, "n0");
  EXPECT_EQ(leaves->bind.leaf_cells, (std::vector<int>{1, 3}));
  auto whole = pod("whole", "a", 1, 1);
  whole.cell_type = "PCIE";
  auto r = s.schedule(whole, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "n1");
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{3, 2}));
  // two whole switches in one pod: all of n1
  whole.leaf_cells = 2;
  auto two = s.schedule(whole, node_filter{}, phase::filtering);
  ASSERT_TRUE(two.has_value());
  ASSERT_EQ(two->kind, outcome::bind) << two->wait_reason;
  EXPECT_EQ(two->bind.node, "n1");
  EXPECT_EQ(two->bind.leaf_cells, (std::vector<int>{3, 2, 1, 0}));
  // three do not fit on a node
  whole.leaf_cells = 3;
  auto three = s.schedule(whole, node_filter{}, phase::filtering);
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(three->kind, outcome::wait);
}

TEST(HivedOptions, WithinOneCellSearchesTheCells) {
  // VC a owns both nodes of the rack; one GPU of n0 busy (3 free), n1 empty (4 free). The
  // packing puts the first 2-GPU pod on the busier n0 and the second on n1, so checking its
  // answer would wait; the search places both pods inside n1.
  auto s = make(small_config(2));
  bind(s, pod("a0", "a", 1, 1));
  auto free_form = s.schedule(pod("x", "a", 1, 2, "xg", {{2, 2}}), node_filter{}, phase::filtering);
  ASSERT_TRUE(free_form.has_value());
  ASSERT_EQ(free_form->kind, outcome::bind);
  EXPECT_EQ(free_form->bind.group_placements.at(2)[0].node, "n0");
  EXPECT_EQ(free_form->bind.group_placements.at(2)[1].node, "n1");
  auto p = pod("w", "a", 1, 2, "wg", {{2, 2}});
  p.within_one_cell = "NODE";
  auto r = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  const auto& pods = r->bind.group_placements.at(2);
  ASSERT_EQ(pods.size(), 2U);
  EXPECT_EQ(pods[0].node, "n1");
  EXPECT_EQ(pods[0].leaf_cells, (std::vector<int>{3, 2}));
  EXPECT_EQ(pods[1].node, "n1");
  EXPECT_EQ(pods[1].leaf_cells, (std::vector<int>{1, 0}));
  EXPECT_EQ(r->bind.node, "n1");
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{3, 2}));
  // committing the first pod fixes the group; the second pod gets the other half of n1
  ASSERT_TRUE(s.add_allocated(p, r->bind).has_value());
  auto second = pod("w2", "a", 1, 2, "wg", {{2, 2}});
  second.within_one_cell = "NODE";
  auto r2 = s.schedule(second, node_filter{}, phase::filtering);
  ASSERT_TRUE(r2.has_value());
  ASSERT_EQ(r2->kind, outcome::bind);
  EXPECT_EQ(r2->bind.node, "n1");
  EXPECT_EQ(r2->bind.leaf_cells, (std::vector<int>{1, 0}));
  ASSERT_TRUE(s.add_allocated(second, r2->bind).has_value());
  EXPECT_EQ(s.group("wg")->physical_placement.at("n1"), (std::vector<int>{0, 1, 2, 3}));
  // n0 has 3 free GPUs: a second such group must wait (6 free GPUs over two nodes are enough for
  // the unconstrained packing, not for one node)
  auto q = pod("q", "a", 1, 2, "qg", {{2, 2}});
  q.within_one_cell = "NODE";
  auto w = s.schedule(q, node_filter{}, phase::filtering);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, outcome::wait);
  EXPECT_EQ(w->wait_reason, "no cell of type NODE has room for the group when scheduling in VC a");
  // VC a owns NODE cells only: no rack is the VC's to guarantee
  q.within_one_cell = "RACK";
  auto rack = s.schedule(q, node_filter{}, phase::filtering);
  ASSERT_TRUE(rack.has_value());
  EXPECT_EQ(rack->kind, outcome::wait);
}

TEST(HivedOptions, WithinOneCellNeedsTheVcToOwnSuchACell) {
  // VC a's cells are NODE cells: it owns no RACK cell, so no group is guaranteed a rack
  auto s = make(small_config(2));
  auto p = pod("w", "a", 1, 1, "wg", {{2, 1}});
  p.within_one_cell = "RACK";
  auto r = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, outcome::wait);
  EXPECT_EQ(r->wait_reason, "no cell of type RACK has room for the group when scheduling in VC a");
  // an opportunistic group searches the physical racks
  p.priority = opportunistic_priority;
  auto o = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(o.has_value());
  ASSERT_EQ(o->kind, outcome::bind) << o->wait_reason;
  EXPECT_EQ(o->bind.group_placements.at(1)[0].node, "n0");
  EXPECT_EQ(o->bind.group_placements.at(1)[1].node, "n0");
  EXPECT_EQ(o->bind.group_placements.at(1)[1].leaf_cells, (std::vector<int>{1}));
}

TEST(HivedOptions, WithinOneCellBelowTheNode) {
  // two 1-GPU pods behind one PCIe switch: n2 has GPU 0 busy, so switch 1 (GPUs 2 and 3)
  auto s = make(small_config());
  hold(s, "b0", "b", 1, "NODE", "n2", {0}, "NODE");
  auto p = pod("w", "b", 1, 1, "wg", {{2, 1}});
  p.within_one_cell = "PCIE";
  auto r = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.group_placements.at(1)[0].leaf_cells, (std::vector<int>{2}));
  EXPECT_EQ(r->bind.group_placements.at(1)[1].leaf_cells, (std::vector<int>{3}));
  // a third pod cannot join them
  p.members = {{3, 1}};
  auto w = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message,
            "[w]: group wg needs 3 leaves, more than one cell of type PCIE holds (2)");
}

TEST(HivedOptions, HierarchicalGroupsBacktrack) {
  // VC v owns row 0. Busy GPUs: r0n0 one (3 free), r0n1 three (1 free), r1n0 two, r1n1 two.
  auto s = make(row_config());
  hold(s, "h0", "v", 1, "ROW", "r0n0", {0}, "ROW");
  hold(s, "h1", "v", 1, "ROW", "r0n1", {0, 1, 2}, "ROW");
  hold(s, "h2", "v", 1, "ROW", "r1n0", {0, 1}, "ROW");
  hold(s, "h3", "v", 1, "ROW", "r1n1", {0, 1}, "ROW");
  // child A: one 2-GPU pod in a rack; child B: a 3-GPU and a 1-GPU pod in a rack. Both racks have
  // 4 free GPUs; A's first choice (rack 0, on r0n0) leaves B no 3-GPU node, so the search moves
  // A to rack 1 and B takes r0n0 and r0n1.
  auto p = pod("ha", "v", 1, 2, "h");
  p.within_one_cell = "ROW";
  p.child_groups = {group_spec{{{1, 2}}, "RACK", {}}, group_spec{{{1, 3}, {1, 1}}, "RACK", {}}};
  auto r = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  const auto& g = r->bind.group_placements;
  ASSERT_EQ(g.size(), 3U);
  EXPECT_EQ(g.at(2)[0].node, "r1n0");
  EXPECT_EQ(g.at(2)[0].leaf_cells, (std::vector<int>{2, 3}));
  EXPECT_EQ(g.at(3)[0].node, "r0n0");
  EXPECT_EQ(g.at(3)[0].leaf_cells, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(g.at(1)[0].node, "r0n1");
  EXPECT_EQ(g.at(1)[0].leaf_cells, (std::vector<int>{3}));
  EXPECT_EQ(r->bind.node, "r1n0");
  // every pod of the group binds and commits; the group holds 6 GPUs
  ASSERT_TRUE(s.add_allocated(p, r->bind).has_value());
  auto b3 = pod("hb3", "v", 1, 3, "h");
  b3.within_one_cell = "ROW";
  b3.child_groups = p.child_groups;
  auto r3 = s.schedule(b3, node_filter{}, phase::filtering);
  ASSERT_TRUE(r3.has_value());
  ASSERT_EQ(r3->kind, outcome::bind);
  EXPECT_EQ(r3->bind.node, "r0n0");
  ASSERT_TRUE(s.add_allocated(b3, r3->bind).has_value());
  EXPECT_EQ(s.group("h")->physical_placement.at("r0n0"), (std::vector<int>{1, 2, 3}));
  // the same request with B needing a 4-GPU node cannot be placed anywhere
  auto q = pod("qa", "v", 1, 1, "q");
  q.child_groups = {group_spec{{{1, 1}}, "RACK", {}}, group_spec{{{1, 4}}, "NODE", {}}};
  auto w = s.schedule(q, node_filter{}, phase::filtering);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, outcome::wait);
  EXPECT_EQ(w->wait_reason,
            "no placement meets the group's within-one-cell types when scheduling in VC v");
}

TEST(HivedOptions, HierarchicalGroupOfCellsWithOwnPods) {
  // a group of whole PCIe switches: its own pod anywhere in the row, two child groups of one
  // switch per pod, each inside one node
  auto s = make(row_config());
  hold(s, "h0", "v", 1, "ROW", "r0n0", {0}, "ROW");
  auto p = pod("own", "v", 1, 2, "cells", {{1, 2}});
  p.cell_type = "PCIE";
  p.child_groups = {group_spec{{{2, 1}}, "NODE", {}}, group_spec{{{2, 1}}, "NODE", {}}};
  auto r = s.schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  const auto& g = r->bind.group_placements;
  // pods of 2 leaves (one switch) in preorder: child 1's two pods, then child 2's
  ASSERT_EQ(g.at(2).size(), 4U);
  EXPECT_EQ(g.at(2)[0].node, g.at(2)[1].node);
  EXPECT_EQ(g.at(2)[2].node, g.at(2)[3].node);
  EXPECT_NE(g.at(2)[0].node, g.at(2)[2].node);
  // the own pod of two switches needs a whole node; n0 (one busy GPU) has one switch left
  ASSERT_EQ(g.at(4).size(), 1U);
  EXPECT_EQ(g.at(4)[0].leaf_cells, (std::vector<int>{0, 1, 2, 3}));
  for (const auto& pp : g.at(2)) EXPECT_NE(pp.node, "r0n0");
  EXPECT_EQ(g.at(2)[0].node, "r0n1");
  EXPECT_EQ(g.at(2)[0].leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(g.at(2)[1].leaf_cells, (std::vector<int>{2, 3}));
  EXPECT_EQ(g.at(2)[2].node, "r1n0");
  EXPECT_EQ(g.at(4)[0].node, "r1n1");
}

TEST(HivedOptions, OpportunisticGroupsUseThePhysicalCells) {
  // row 1 is VC w's; opportunistic pods busy three GPUs of r2n0 and one of r2n1
  auto s = make(row_config());
  hold(s, "o0", "w", -1, "ROW", "r2n0", {0, 1, 2}, "");
  hold(s, "o1", "w", -1, "ROW", "r2n1", {3}, "");
  auto p = pod("x", "w", opportunistic_priority, 2, "xg", {{2, 2}});
  p.within_one_cell = "NODE";
  auto r = s.schedule(p, node_filter{false, {"r2n0", "r2n1", "r3n0"}}, phase::filtering);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.group_placements.at(2)[0].node, "r3n0");
  EXPECT_EQ(r->bind.group_placements.at(2)[1].node, "r3n0");
  EXPECT_EQ(r->bind.group_placements.at(2)[0].preassigned_types,
            (std::vector<std::string>{"", ""}));
  // a bad node is skipped: r3n1 instead of r3n0
  s.set_node_bad("r3n0");
  auto bad = s.schedule(p, node_filter{false, {"r2n0", "r2n1", "r3n0", "r3n1"}}, phase::filtering);
  ASSERT_TRUE(bad.has_value());
  ASSERT_EQ(bad->kind, outcome::bind) << bad->wait_reason;
  EXPECT_EQ(bad->bind.group_placements.at(2)[0].node, "r3n1");
  s.set_node_healthy("r3n0");
  // only the busy nodes suggested: no node has four free GPUs
  auto w = s.schedule(p, node_filter{false, {"r2n0", "r2n1"}}, phase::filtering);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, outcome::wait);
  EXPECT_EQ(w->wait_reason,
            "no cell of type NODE has room for the group when scheduling in physical cluster");
  // a 2-GPU pod and a 1-GPU pod fit in one node of those: r2n1
  auto q = pod("y", "w", opportunistic_priority, 2, "yg", {{1, 2}, {1, 1}});
  q.within_one_cell = "NODE";
  auto r2 = s.schedule(q, node_filter{false, {"r2n0", "r2n1"}}, phase::filtering);
  ASSERT_TRUE(r2.has_value());
  ASSERT_EQ(r2->kind, outcome::bind) << r2->wait_reason;
  EXPECT_EQ(r2->bind.group_placements.at(2)[0].node, "r2n1");
  EXPECT_EQ(r2->bind.group_placements.at(2)[0].leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(r2->bind.group_placements.at(1)[0].node, "r2n1");
  EXPECT_EQ(r2->bind.group_placements.at(1)[0].leaf_cells, (std::vector<int>{2}));
}

TEST(HivedOptions, BadSpecsAreErrorsThatChangeNothing) {
  auto s = make(row_config());
  const auto free_before = s.free_list("ROW", 5);
  auto expect_error = [&](const pod_request& p, errc code, const std::string& message) {
    auto r = s.schedule(p, node_filter{}, phase::preempting);
    ASSERT_FALSE(r.has_value()) << p.name;
    EXPECT_EQ(r.error().code, code) << p.name;
    EXPECT_EQ(r.error().message, message);
    EXPECT_FALSE(s.add_allocated(p, bind_info{}).has_value()) << p.name;
  };
  auto p = pod("p", "v", 1, 1, "g");
  p.cell_type = "SWITCH";
  expect_error(p, errc::not_found,
               "[p]: Pod requesting cell type SWITCH which the whole cluster does not have");
  p.cell_type = "RACK";
  expect_error(p, errc::invalid_argument,
               "[p]: cell type RACK is above the node level of chain ROW: a pod sits on one node");
  p.cell_type = "NODE";
  p.within_one_cell = "PCIE";
  expect_error(p, errc::invalid_argument,
               "[p]: group g: within-one-cell type PCIE is below the requested cell type NODE");
  p.cell_type.clear();
  p.within_one_cell = "CABINET";
  expect_error(p, errc::not_found, "[p]: within-one-cell type CABINET is not a cell type");
  p.within_one_cell = "NODE";
  p.leaf_cells = 8;
  expect_error(p, errc::invalid_argument,
               "[p]: group g: a pod of 8 leaves does not fit inside one cell of type NODE (4 "
               "leaves)");
  p.leaf_cells = 2;
  p.members = {{3, 2}};
  expect_error(p, errc::invalid_argument,
               "[p]: group g needs 6 leaves, more than one cell of type NODE holds (4)");
  p.members.clear();
  p.child_groups = {group_spec{{{1, 2}}, "RACK", {}}};
  expect_error(p, errc::invalid_argument,
               "[p]: group g.childGroups[0]: within-one-cell type RACK is above the enclosing "
               "group's NODE");
  p.within_one_cell = "ROW";
  p.child_groups = {group_spec{{{1, 2}}, "RACK", {group_spec{{}, "NODE", {}}}}};
  expect_error(p, errc::invalid_argument, "[p]: group g.childGroups[0].childGroups[0] has no pods");
  p.child_groups = {group_spec{{{0, 2}}, "", {}}};
  expect_error(p, errc::invalid_argument,
               "[p]: group g.childGroups[0] has a member with non-positive numbers");
  // more leaves than the cluster has (32 GPUs), however many pods are asked for
  p.within_one_cell.clear();
  p.child_groups = {group_spec{{{1000000000, 2}}, "", {}}};
  expect_error(p, errc::invalid_argument,
               "[p]: group g needs 2000000000 leaves, more than the cluster has (32)");
  p.within_one_cell = "ROW";
  p.child_groups = {group_spec{{{1, 2}}, "", {}}};
  p.leaf_cells = 1000000000;
  expect_error(p, errc::invalid_argument,
               "[p]: AffinityGroup.Members does not contains current Pod");
  p.leaf_cells = 2;
  // the pod's own size must be one of the members
  p.child_groups = {group_spec{{{1, 4}}, "NODE", {}}};
  expect_error(p, errc::invalid_argument,
               "[p]: AffinityGroup.Members does not contains current Pod");
  // nothing changed: the free lists are as before and a valid request binds as on a fresh one
  EXPECT_EQ(s.free_list("ROW", 5), free_before);
  EXPECT_FALSE(s.group("g").has_value());
  p.child_groups = {group_spec{{{1, 2}}, "NODE", {}}};
  auto fresh = make(row_config());
  auto a = s.schedule(p, node_filter{}, phase::preempting);
  auto b = fresh.schedule(p, node_filter{}, phase::preempting);
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_EQ(a->kind, outcome::bind);
  EXPECT_EQ(a->bind, b->bind);
  EXPECT_EQ(a->bind.node, "r0n0");
  EXPECT_EQ(a->bind.leaf_cells, (std::vector<int>{0, 1}));
}

TEST(HivedOptions, GroupSearchIsDeterministicAndReleasesEverything) {
  std::vector<std::string> runs[2];
  for (auto& out : runs) {
    auto s = make(row_config());
    std::vector<std::pair<pod_request, bind_info>> held;
    for (int i = 0; i < 5; ++i) {
      auto p = pod(fmt::format("p{}", i), "v", 1, 1 + i % 2, fmt::format("g{}", i));
      p.members = {{2, 1 + i % 2}};
      p.within_one_cell = i % 3 == 0 ? "NODE" : "RACK";
      auto r = s.schedule(p, node_filter{}, phase::preempting);
      ASSERT_TRUE(r.has_value());
      ASSERT_EQ(r->kind, outcome::bind) << i << r->wait_reason;
      for (const auto& [n, pods] : r->bind.group_placements)
        for (const auto& pp : pods) out.push_back(fmt::format("{}:{}", pp.node, pp.leaf_cells[0]));
      ASSERT_TRUE(s.add_allocated(p, r->bind).has_value());
      held.emplace_back(p, r->bind);
    }
    for (const auto& [p, b] : held) ASSERT_TRUE(s.delete_allocated(p, b).has_value());
    // both rows merged back (row 0 removed and re-appended by the buddy merge)
    EXPECT_EQ(s.free_list("ROW", 5), (std::vector<std::string>{"1", "0"}));
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0].size(), 10U);
}

}  // namespace
}  // namespace hetsched::hived
