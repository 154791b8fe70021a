// SPDX-License-Identifier: MIT
// Buddy allocation with backtracking and safe relaxed splitting (src/policies/hived_buddy.cpp,
// reference/hived.md §6.4-6.5): concrete placements on small configs built here and on
// hivedscheduler's own test config (its backtracking and safe relaxed sequences, pods 39-46).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_vector_fixture.hpp"

namespace hetsched::hived {
namespace {

using namespace vector_fixture;

/// Chain QUAD(2 PAIR) -> PAIR(2 NODE) -> NODE(2 GPU, node level); `quads` top-level QUAD cells
/// on nodes n0, n1, ... (QUAD k = nodes 4k..4k+3; its PAIR cells "k/2k" and "k/2k+1"). VC v owns
/// two PAIR cells; with `quad_vc`, VC w owns one QUAD cell.
config quad_config(int quads, bool quad_vc = false) {
  config cfg;
  cfg.cell_types = {
      {"NODE", "GPU", 2, true}, {"PAIR", "NODE", 2, false}, {"QUAD", "PAIR", 2, false}};
  int n = 0;
  for (int q = 0; q < quads; ++q) {
    physical_cell_spec quad;
    quad.cell_type = "QUAD";
    for (int p = 0; p < 2; ++p) {
      physical_cell_spec pair;
      for (int k = 0; k < 2; ++k) {
        physical_cell_spec node;
        node.address = "n" + std::to_string(n++);
        pair.children.push_back(node);
      }
      quad.children.push_back(pair);
    }
    cfg.physical_cells.push_back(quad);
  }
  cfg.virtual_clusters = {{"v", {{"QUAD.PAIR", 2}}, {}}};
  if (quad_vc) cfg.virtual_clusters.push_back({"w", {{"QUAD", 1}}, {}});
  return cfg;
}

scheduler make(const config& cfg) {
  auto s = scheduler::create(cfg);
  EXPECT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  return std::move(*s);
}

/// A gang of two whole-node pods (2 GPUs each) of VC v at priority 1.
pod_request pair_gang(const std::string& name) {
  pod_request p;
  p.name = name;
  p.vc = "v";
  p.priority = 1;
  p.leaf_type = "GPU";
  p.leaf_cells = 2;
  p.group = name;
  p.members = {{2, 2}};
  p.ignore_suggested_nodes = false;
  return p;
}

TEST(HivedBuddyBacktracking, NextSiblingCandidateAfterChildrenFail) {
  auto s = make(quad_config(1));
  EXPECT_EQ(s.free_list("QUAD", 4), (std::vector<std::string>{"0"}));
  // Both pods land in the VC's first PAIR cell X (the view is in config order), so X must be
  // bound to one physical PAIR with both nodes usable. Buddy allocation splits QUAD 0 into
  // [0/0 (n0, n1), 0/1 (n2, n3)]. With n1 not suggested, 0/0 still passes the candidate filter
  // (one suggested node is enough there) but mapping X's two nodes onto its children finds only
  // n0: mapVirtualCellsToPhysical backtracks to the next candidate 0/1, whose nodes n2, n3 are
  // both suggested. Pod 0 gets the first node of that PAIR.
  auto r = s.schedule(pair_gang("g"), only({"n0", "n2", "n3"}), phase::preempting);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "n2");
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->bind.chain, "QUAD");
  ASSERT_EQ(r->bind.group_placements.at(2).size(), 2U);
  EXPECT_EQ(r->bind.group_placements.at(2)[1], (pod_placement{"n3", {0, 1}, {"PAIR", "PAIR"}}));
  // With every node suggested the first candidate 0/0 is taken: n0 and n1.
  auto all = s.schedule(pair_gang("h"), node_filter{}, phase::filtering);
  ASSERT_TRUE(all.has_value() && all->kind == outcome::bind);
  EXPECT_EQ(all->bind.group_placements.at(2)[0].node, "n0");
  EXPECT_EQ(all->bind.group_placements.at(2)[1].node, "n1");
  // No PAIR with two suggested nodes: every candidate fails and the gang waits.
  auto none = s.schedule(pair_gang("i"), only({"n0", "n2"}), phase::preempting);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->kind, outcome::wait);
  EXPECT_FALSE(s.group("i").has_value());
}

TEST(HivedBuddyBacktracking, NextHigherCellAfterItsSplitFails) {
  // VC w owns a whole QUAD, so safe relaxed splitting may split only one of the two free QUADs
  // (splittable at level 4: 2 free - 1 owed = 1) and cannot stand in for backtracking.
  auto s = make(quad_config(2, true));
  ASSERT_EQ(s.free_list("QUAD", 4), (std::vector<std::string>{"0", "1"}));
  // buddyAlloc tries QUAD 0 first. Suggest n0 only of its nodes (QUAD 0 passes the filter, but
  // neither of its PAIRs has two suggested nodes) and n4, n5, the first PAIR of QUAD 1:
  // buddyAlloc splits QUAD 0, fails below it, resets the split and backtracks to QUAD 1, whose
  // first PAIR 1/2 takes the gang. (Without that backtracking, safe relaxed splitting would
  // split QUAD 0 only, and the gang would wait.)
  auto r = s.schedule(pair_gang("g"), only({"n0", "n4", "n5"}), phase::preempting);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "n4");
  EXPECT_EQ(r->bind.group_placements.at(2)[1].node, "n5");
  ASSERT_TRUE(s.add_allocated(pair_gang("g"), r->bind).has_value());
  // Committing splits only the QUAD that was used: QUAD 0 stays whole at level 4 (VC w's
  // guarantee), and QUAD 1's second PAIR is free at level 3.
  EXPECT_EQ(s.free_list("QUAD", 4), (std::vector<std::string>{"0"}));
  EXPECT_EQ(s.free_list("QUAD", 3), (std::vector<std::string>{"1/3"}));
}

// hivedscheduler's backtracking test (testSuggestedNodes, second half) on the "backtrack"
// variant: VC1 has no 4-node cells and three 2-node cells (level 6) in chain 4-DGX2-V100-NODE,
// plus two node cells in chain DGX2-V100-NODE. Free lists: level 6 [7/15], level 7 [8].
TEST(HivedBuddyBacktracking, RecordedConfigPods39To41) {
  auto s = recorded_scheduler("backtrack");
  ASSERT_EQ(s.free_list("4-DGX2-V100-NODE", 6), (std::vector<std::string>{"7/15"}));
  ASSERT_EQ(s.free_list("4-DGX2-V100-NODE", 7), (std::vector<std::string>{"8"}));
  // pod39: 2 x 16 GPUs, suggested 0.0.3.2 and 0.0.3.3. Chain DGX2-V100-NODE is tried first: the
  // VC placement fits its two node cells, but their only physical candidates 0.0.1.0 and
  // 0.0.5.0 are not suggested, so mapping fails and the next chain is tried. In
  // 4-DGX2-V100-NODE both pods go to the first 2-node VC cell, whose buddy allocation starts at
  // level 6 with 7/15 = {0.0.3.2, 0.0.3.3}: both suggested.
  auto b39 = bind_and_commit(s, spec("pod39"), only({"0.0.3.2", "0.0.3.3"}));
  EXPECT_EQ(b39.node, "0.0.3.2");
  EXPECT_EQ(b39.leaf_cells, leaves(0, 16));
  EXPECT_EQ(b39.chain, "4-DGX2-V100-NODE");
  EXPECT_EQ(b39.group_placements.at(16)[1].node, "0.0.3.3");
  EXPECT_EQ(b39.group_placements.at(16)[1].preassigned_types,
            std::vector<std::string>(16, "2-DGX2-V100-NODE"));
  // pod40: 1 x 16, suggested 0.0.4.3. The lowest free level is now 7: cell 8 is split into
  // 8/16 {0.0.4.0, 0.0.4.1} (no suggested node: skipped) and 8/17 {0.0.4.2, 0.0.4.3}; inside
  // 8/17 the pod's node is mapped to the one suggested node.
  auto b40 = bind_and_commit(s, spec("pod40"), only({"0.0.4.3"}));
  EXPECT_EQ(b40.node, "0.0.4.3");
  EXPECT_EQ(b40.leaf_cells, leaves(0, 16));
  EXPECT_EQ(s.free_list("4-DGX2-V100-NODE", 6), (std::vector<std::string>{"8/16"}));
  EXPECT_TRUE(s.free_list("4-DGX2-V100-NODE", 7).empty());
  // pod41: 4 x 16 at priority 2, suggested 0.0.3.2, 0.0.3.3, 0.0.4.3. Its VC placement needs
  // pod39's and pod40's cells (both lazy-preemptable at priority 1) plus pod40's sibling node,
  // so both groups are lazy-preempted and their 2-node cells go back to the free lists (8/16
  // and 8/17 merge into 8). Buddy allocation binds the first VC cell to 7/15, but the second
  // needs a 2-node cell with two suggested nodes: 8's halves have one (8/17) or none (8/16),
  // and safe relaxed splitting offers the same halves. Mapping fails, the lazy preemptions are
  // reverted and the pod waits; chain 3-DGX2-V100-NODE has only two VC1 nodes.
  auto r41 = s.schedule(spec("pod41"), only({"0.0.3.2", "0.0.3.3", "0.0.4.3"}), phase::preempting);
  ASSERT_TRUE(r41.has_value()) << r41.error().message;
  EXPECT_EQ(r41->kind, outcome::wait);
  for (const char* g : {"group27", "group28"}) {
    auto group = s.group(g);
    ASSERT_TRUE(group.has_value()) << g;
    EXPECT_EQ(group->state, group_state::allocated) << g;
    EXPECT_FALSE(group->virtual_placement_dropped) << g;
  }
  EXPECT_FALSE(s.group("group29").has_value());
  // The reverted groups hold their cells again: the free lists are the ones before pod41.
  EXPECT_EQ(s.free_list("4-DGX2-V100-NODE", 6), (std::vector<std::string>{"8/16"}));
  EXPECT_TRUE(s.free_list("4-DGX2-V100-NODE", 7).empty());
}

// Safe relaxed splitting (safeRelaxedBuddyAlloc): buddy allocation starts at the lowest level
// that has a free cell and never looks higher; when every candidate there is bad or not
// suggested, higher cells are split as far as no VC's guarantee breaks.
TEST(HivedSafeRelaxed, SplitsAHigherCellWhenTheLowestLevelIsUnusable) {
  auto s = recorded_scheduler("backtrack");
  // pod39's gang needs one 2-node cell with two suggested nodes. Level 6 holds only 7/15,
  // which has one suggested node (0.0.3.2): plain buddy allocation fails at level 6. Splittable
  // cells: level 7: |free| 1 - VC demand 0 = 1; level 6: 1 - 3 unbound VC1 cells + 1 * 2 = 0,
  // so splitting one level-7 cell keeps every VC's guarantee. Cell 8's halves are prepended to
  // level 6 ([8/16, 8/17, 7/15]) and 8/16 = {0.0.4.0, 0.0.4.1} takes the gang.
  auto r = s.schedule(spec("pod39"), only({"0.0.3.2", "0.0.4.0", "0.0.4.1"}), phase::preempting);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "0.0.4.0");
  EXPECT_EQ(r->bind.group_placements.at(16)[1].node, "0.0.4.1");
  // Scheduling alone changed nothing.
  EXPECT_EQ(s.free_list("4-DGX2-V100-NODE", 6), (std::vector<std::string>{"7/15"}));
  EXPECT_EQ(s.free_list("4-DGX2-V100-NODE", 7), (std::vector<std::string>{"8"}));
}

// hivedscheduler's testSafeRelaxedBuddyAlloc on the "safe_relaxed" variant: in chain
// 4-DGX2-V100-NODE VC1 owns four node cells (level 5) and VC2 one 2-node cell (level 6); the
// pinned cell 7/14 is VC1's. Free lists: level 6 [7/15], level 7 [8].
TEST(HivedSafeRelaxed, RecordedConfigPods44To46) {
  auto s = recorded_scheduler("safe_relaxed");
  const auto suggested = only({"0.0.3.2", "0.0.3.3", "0.0.4.2", "0.0.4.3"});
  // pod44 (1 x 16): the lowest free level >= 5 is 6; 7/15 is split and its first node 0.0.3.2
  // is taken. Committing leaves 0.0.3.3 free at level 5.
  auto b44 = bind_and_commit(s, spec("pod44"), suggested);
  EXPECT_EQ(b44.node, "0.0.3.2");
  EXPECT_EQ(b44.leaf_cells, leaves(0, 16));
  EXPECT_EQ(s.free_list("4-DGX2-V100-NODE", 5), (std::vector<std::string>{"7/15/0.0.3.3"}));
  // 0.0.3.3 goes bad. pod45: the lowest free level 5 holds only the bad 0.0.3.3, so buddy
  // allocation fails. Splittable: level 7: 1 - 0 = 1; level 6: 0 - 1 (VC2's cell) + 1 * 2 = 1;
  // level 5: 1 - 3 (VC1's unbound cells) + 1 * 2 = 0. Level 6 has nothing free; at level 7 one
  // cell may split: 8 is split down to its four nodes, prepended to level 5, and the first
  // usable one, 0.0.4.2 (0.0.4.0 and 0.0.4.1 are not suggested), takes the pod. VC2's 2-node
  // cell still fits in 8/16.
  s.set_node_bad("0.0.3.3");
  auto b45 = bind_and_commit(s, spec("pod45"), suggested);
  EXPECT_EQ(b45.node, "0.0.4.2");
  EXPECT_EQ(b45.leaf_cells, leaves(0, 16));
  EXPECT_EQ(s.free_list("4-DGX2-V100-NODE", 5),
            (std::vector<std::string>{"7/15/0.0.3.3", "8/17/0.0.4.3"}));
  EXPECT_EQ(s.free_list("4-DGX2-V100-NODE", 6), (std::vector<std::string>{"8/16"}));
  // 0.0.4.3 goes bad. pod46 (every node of the chain suggested): level 5 has only bad cells;
  // splittable: level 7: 0; level 6: 1 - 1 (VC2's cell) = 0; level 5: 2 - 2 = 0. Splitting
  // 8/16 would take VC2's guaranteed cell, so chain 4-DGX2-V100-NODE has no placement although
  // 0.0.4.0 and 0.0.4.1 are free and healthy. The last chain, 3-DGX2-V100-NODE, places the pod
  // on VC1's cell VC1/4 there but its nodes 0.0.2.x are not suggested: the wait reason is that
  // chain's.
  s.set_node_bad("0.0.4.3");
  auto r46 = s.schedule(spec("pod46"),
                        only({"0.0.3.2", "0.0.3.3", "0.0.4.0", "0.0.4.1", "0.0.4.2", "0.0.4.3"}),
                        phase::preempting);
  ASSERT_TRUE(r46.has_value()) << r46.error().message;
  ASSERT_EQ(r46->kind, outcome::wait);
  const std::string prefix =
      "Mapping the virtual placement would need to use at least one bad or non-suggested node "
      "(virtual placement : {\"VC1/4\":[\"VC1/4/0/0/0/0\",";
  EXPECT_EQ(r46->wait_reason.rfind(prefix, 0), 0U) << r46->wait_reason;
  // With 0.0.2.0 suggested as well, that chain binds it: 4-DGX2-V100-NODE really had nothing.
  auto r46b = s.schedule(spec("pod46"), only({"0.0.4.0", "0.0.4.1", "0.0.2.0"}), phase::filtering);
  ASSERT_TRUE(r46b.has_value() && r46b->kind == outcome::bind);
  EXPECT_EQ(r46b->bind.node, "0.0.2.0");
  EXPECT_EQ(r46b->bind.chain, "3-DGX2-V100-NODE");
  EXPECT_FALSE(s.group("group34").has_value());
  // VC2's 16-GPU pod gets that cell: 8/16's first node.
  auto b43 = bind_and_commit(s, spec("pod43"));
  EXPECT_EQ(b43.node, "0.0.4.0");
  EXPECT_EQ(b43.chain, "4-DGX2-V100-NODE");
  EXPECT_EQ(b43.group_placements.at(16)[0].preassigned_types,
            std::vector<std::string>(16, "2-DGX2-V100-NODE"));
}

}  // namespace
}  // namespace hetsched::hived
