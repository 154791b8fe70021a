// SPDX-License-Identifier: MIT
// Reconfiguration (hivedscheduler restarts with a new config, PR #29, and K8s replays every bound
// pod's bind record through AddAllocatedPod): the hivedscheduler test's three config changes
// (a node renamed, a VC's quota lowered, a multi-node cell split into node cells of another
// chain) on a small cluster.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

namespace hetsched::hived {
namespace {

/// Chains RACK(2 x NODE) and NODE; NODE(2 x PCIE, node level), PCIE(2 x GPU). Racks r0 = {n0, n1}
/// and r1 = {n2, n3}, node n4 alone. VC a: two RACK.NODE cells, b: one RACK, c: one NODE.
config base_config() {
  config cfg;
  cfg.cell_types = {
      {"PCIE", "GPU", 2, false}, {"NODE", "PCIE", 2, true}, {"RACK", "NODE", 2, false}};
  auto node = [](const std::string& name) {
    physical_cell_spec n;
    n.address = name;
    return n;
  };
  physical_cell_spec r0;
  r0.cell_type = "RACK";
  r0.children = {node("n0"), node("n1")};
  physical_cell_spec r1;
  r1.cell_type = "RACK";
  r1.children = {node("n2"), node("n3")};
  physical_cell_spec n4 = node("n4");
  n4.cell_type = "NODE";
  cfg.physical_cells = {r0, r1, n4};
  cfg.virtual_clusters = {
      {"a", {{"RACK.NODE", 2}}, {}}, {"b", {{"RACK", 1}}, {}}, {"c", {{"NODE", 1}}, {}}};
  return cfg;
}

/// The new config: node n4 renamed n4-new (its old leaves no longer exist), VC a lowered to one
/// RACK.NODE cell, rack r1 split into top-level NODE cells n2 and n3 (chain NODE, placed around
/// n4-new), and VC b's quota moved to two NODE cells.
config reconfig() {
  auto cfg = base_config();
  cfg.physical_cells[2].address = "n4-new";
  physical_cell_spec n2 = cfg.physical_cells[1].children[0];
  physical_cell_spec n3 = cfg.physical_cells[1].children[1];
  n2.cell_type = "NODE";
  n3.cell_type = "NODE";
  cfg.physical_cells = {cfg.physical_cells[0], n2, cfg.physical_cells[2], n3};
  cfg.virtual_clusters[0].virtual_cells[0].count = 1;
  cfg.virtual_clusters[1].virtual_cells = {{"NODE", 2}};
  return cfg;
}

pod_request pod(const std::string& name, const std::string& vc, int prio, int leaves,
                const std::string& group = "", std::vector<member_spec> members = {}) {
  pod_request p;
  p.name = name;
  p.vc = vc;
  p.priority = prio;
  p.leaf_type = "GPU";
  p.leaf_cells = leaves;
  p.group = group;
  p.members = std::move(members);
  p.ignore_suggested_nodes = false;
  return p;
}

struct record {
  pod_request pod;
  bind_info bind;
};

TEST(HivedReconfiguration, ReplayUnderNewConfig) {
  auto old_created = scheduler::create(base_config());
  ASSERT_TRUE(old_created.has_value()) << old_created.error().message;
  auto& old_s = *old_created;
  old_s.mark_all_nodes_healthy();
  std::vector<record> log;
  const std::vector<pod_request> pods = {pod("a1", "a", 1, 4),
                                         pod("a2", "a", 1, 2),
                                         pod("b1", "b", 1, 4, "gb", {{2, 4}}),
                                         pod("b2", "b", 1, 4, "gb", {{2, 4}}),
                                         pod("c1", "c", 1, 2),
                                         pod("o1", "c", -1, 1)};
  for (const auto& p : pods) {
    auto r = old_s.schedule(p, node_filter{}, phase::preempting);
    ASSERT_TRUE(r.has_value() && r->kind == outcome::bind) << p.name;
    ASSERT_TRUE(old_s.add_allocated(p, r->bind).has_value()) << p.name;
    log.push_back({p, r->bind});
  }
  // Phase 1 placements (base config): VC a packs a1 and a2 into rack r0, the gang fills r1, c1
  // takes n4 and the opportunistic o1 lands next to a2.
  const std::map<std::string, std::pair<std::string, std::vector<int>>> phase1 = {
      {"a1", {"n0", {0, 1, 2, 3}}}, {"a2", {"n1", {0, 1}}}, {"b1", {"n2", {0, 1, 2, 3}}},
      {"b2", {"n3", {0, 1, 2, 3}}}, {"c1", {"n4", {0, 1}}}, {"o1", {"n1", {2}}}};
  for (const auto& [p, b] : log) {
    EXPECT_EQ(b.node, phase1.at(p.name).first) << p.name;
    EXPECT_EQ(b.leaf_cells, phase1.at(p.name).second) << p.name;
  }
  EXPECT_EQ(log[4].bind.chain, "NODE");

  // Phase 2: a new instance on the new config replays every bind record in the same order.
  auto new_created = scheduler::create(reconfig());
  ASSERT_TRUE(new_created.has_value()) << new_created.error().message;
  auto& s = *new_created;
  s.mark_all_nodes_healthy();
  for (const auto& [p, b] : log) ASSERT_TRUE(s.add_allocated(p, b).has_value()) << p.name;

  using placement_map = std::map<std::string, std::vector<int>>;
  // a1 keeps its guaranteed placement: VC a's remaining cell binds to n0.
  auto a1 = s.group("a1");
  ASSERT_TRUE(a1.has_value());
  EXPECT_FALSE(a1->virtual_placement_dropped);
  EXPECT_EQ(a1->physical_placement, (placement_map{{"n0", {0, 1, 2, 3}}}));
  // a2: VC a has no free cell left at the NODE level (quota 2 -> 1): lazy-preempted, it keeps
  // running opportunistically on the same leaves.
  auto a2 = s.group("a2");
  ASSERT_TRUE(a2.has_value());
  EXPECT_TRUE(a2->virtual_placement_dropped);
  EXPECT_EQ(a2->physical_placement, (placement_map{{"n1", {0, 1}}}));
  // the gang: its leaves are now in chain NODE (found by the fallback to other chains), where its
  // preassigned type RACK does not exist: lazy-preempted, both pods keep their leaves.
  auto gb = s.group("gb");
  ASSERT_TRUE(gb.has_value());
  EXPECT_TRUE(gb->virtual_placement_dropped);
  EXPECT_EQ(gb->physical_placement, (placement_map{{"n2", {0, 1, 2, 3}}, {"n3", {0, 1, 2, 3}}}));
  // c1 ran on n4, which no longer exists: its leaves are ignored (the pod keeps running), the
  // group exists with no placement and keeps no VC cell.
  auto c1 = s.group("c1");
  ASSERT_TRUE(c1.has_value());
  EXPECT_FALSE(c1->virtual_placement_dropped);
  EXPECT_TRUE(c1->physical_placement.empty());
  // the opportunistic pod stays opportunistic
  auto o1 = s.group("o1");
  ASSERT_TRUE(o1.has_value());
  EXPECT_TRUE(o1->virtual_placement_dropped);
  EXPECT_EQ(o1->physical_placement, (placement_map{{"n1", {2}}}));

  // Free lists: only a1's guaranteed n0 is taken (rack r0 split, n1 free at the node level);
  // opportunistic use never leaves the free list, so n2, n3 and the renamed n4-new are free.
  EXPECT_TRUE(s.free_list("RACK", 4).empty());
  EXPECT_EQ(s.free_list("RACK", 3), (std::vector<std::string>{"0/n1"}));
  EXPECT_EQ(s.free_list("NODE", 3), (std::vector<std::string>{"n2", "n3", "n4-new"}));
  for (int level = 1; level <= 2; ++level) {
    EXPECT_TRUE(s.free_list("RACK", level).empty()) << level;
    EXPECT_TRUE(s.free_list("NODE", level).empty()) << level;
  }
  // VC cells: a/0 is bound to n0 at a1's priority; b's and c's cells are free and unbound.
  auto va = s.vc_cells_all("a");
  ASSERT_EQ(va.size(), 1U);
  EXPECT_EQ(va[0].address, "a/0");
  EXPECT_EQ(va[0].priority, 1);
  EXPECT_EQ(va[0].bound_to, "0/n0");
  for (const char* vc : {"b", "c"})
    for (const auto& c : s.vc_cells_all(vc)) {
      EXPECT_EQ(c.priority, -2) << c.address;
      EXPECT_TRUE(c.bound_to.empty()) << c.address;
    }
  EXPECT_EQ(s.vc_cells_all("b").size(), 2U);
  EXPECT_EQ(s.vc_cells_all("c").size(), 1U);

  // The downgraded pods are now preemptable by their own VCs' guaranteed pods: a 4-GPU pod of VC
  // b preempts the whole opportunistic gang, and a higher-priority pod of VC a preempts a1.
  auto b3 = s.schedule(pod("b3", "b", 2, 4), node_filter{}, phase::filtering);
  ASSERT_TRUE(b3.has_value());
  ASSERT_EQ(b3->kind, outcome::preempt);
  EXPECT_EQ(b3->victims_by_node,
            (std::map<std::string, std::vector<std::string>>{{"n2", {"b1"}}, {"n3", {"b2"}}}));
  auto a3 = s.schedule(pod("a3", "a", 2, 1), node_filter{}, phase::filtering);
  ASSERT_TRUE(a3.has_value());
  ASSERT_EQ(a3->kind, outcome::preempt);
  EXPECT_EQ(a3->victims_by_node, (std::map<std::string, std::vector<std::string>>{{"n0", {"a1"}}}));
  // Filtering created no state
  EXPECT_EQ(s.vc_cells_all("a")[0].priority, 1);
  EXPECT_TRUE(s.vc_cells_all("b")[0].bound_to.empty());

  // Releasing every replayed pod merges the buddies back: both free lists are whole again.
  for (const auto& [p, b] : log) ASSERT_TRUE(s.delete_allocated(p, b).has_value()) << p.name;
  for (const char* g : {"a1", "a2", "gb", "c1", "o1"}) EXPECT_FALSE(s.group(g).has_value()) << g;
  EXPECT_EQ(s.free_list("RACK", 4), (std::vector<std::string>{"0"}));
  EXPECT_TRUE(s.free_list("RACK", 3).empty());
  EXPECT_EQ(s.free_list("NODE", 3).size(), 3U);
  EXPECT_EQ(s.vc_cells_all("a")[0].priority, -2);
  EXPECT_TRUE(s.vc_cells_all("a")[0].bound_to.empty());
}

TEST(HivedReconfiguration, AbsoluteAddressRenamesANestedNode) {
  auto cfg = base_config();
  cfg.physical_cells[0].children[0].address = "n0-new";
  cfg.physical_cells[0].children[0].absolute_address = true;
  auto created = scheduler::create(cfg);
  ASSERT_TRUE(created.has_value()) << created.error().message;
  const auto& s = *created;
  EXPECT_EQ(s.nodes(), (std::vector<std::string>{"n0-new", "n1", "n2", "n3", "n4"}));
  auto tops = s.top_level_cells();
  ASSERT_EQ(tops.size(), 3U);
  EXPECT_EQ(tops[0].address, "0");
  EXPECT_EQ(tops[0].nodes, (std::vector<std::string>{"n0-new", "n1"}));
  auto nodes = s.node_level_cells();
  ASSERT_EQ(nodes.size(), 5U);
  // the renamed node's full address is exactly its own; its sibling's is inferred under "0"
  EXPECT_EQ(nodes[0].address, "n0-new");
  EXPECT_EQ(nodes[0].leaf_indices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(nodes[1].address, "0/n1");
  EXPECT_EQ(nodes[1].chain, "RACK");
  EXPECT_EQ(nodes[4].address, "n4");
  EXPECT_EQ(nodes[4].type, "NODE");
  auto cells = s.vc_preassigned_cells();
  ASSERT_EQ(cells.size(), 4U);
  EXPECT_EQ(cells[0].vc, "a");
  EXPECT_EQ(cells[0].type, "NODE");
  EXPECT_EQ(cells[2].address, "b/0");
  EXPECT_EQ(cells[2].level, 4);
  created->mark_all_nodes_healthy();
  EXPECT_EQ(s.total_left_cells("RACK"), (std::vector<int>{0, 16, 8, 4, 2}));
  EXPECT_EQ(s.all_vc_free_cells("RACK"), (std::vector<int>{0, 0, 0, 2, 1}));
}

}  // namespace
}  // namespace hetsched::hived
