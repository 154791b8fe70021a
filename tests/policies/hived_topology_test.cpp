// SPDX-License-Identifier: MIT
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_topology.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

namespace hetsched::hived {
namespace {

cluster_topology dgx_racks() {
  return cluster_builder("c").add_nodes(node_template::dgx1_v100, 8, "n").racks(4).build().value();
}

TEST(HivedTopology, DerivesRackAndNodeCells) {
  auto cfg = derive_cells(dgx_racks());
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  // two racks of four nodes each become two top-level rack cells
  ASSERT_EQ(cfg->physical_cells.size(), 2U);
  EXPECT_EQ(cfg->physical_cells[0].children.size(), 4U);
  EXPECT_EQ(cfg->physical_cells[0].children[0].address, "n-0");
  // the node type is node-level and the rack type has four node children
  bool has_node_level = false;
  for (const auto& t : cfg->cell_types) {
    if (t.node_level) has_node_level = true;
    if (t.name.find("rack4") != std::string::npos) {
      EXPECT_EQ(t.child_count, 4);
    }
  }
  EXPECT_TRUE(has_node_level);
}

TEST(HivedTopology, SchedulesOnDerivedCells) {
  auto cfg = derive_cells(dgx_racks());
  ASSERT_TRUE(cfg.has_value());
  const std::string chain = cfg->physical_cells[0].cell_type;
  std::string node_type;
  std::string leaf_type;
  for (const auto& t : cfg->cell_types) {
    if (t.node_level) node_type = t.name;
  }
  // the leaf type is the one type that is only ever a child
  for (const auto& t : cfg->cell_types) {
    bool defined = false;
    for (const auto& u : cfg->cell_types) defined = defined || u.name == t.child_type;
    if (!defined) leaf_type = t.child_type;
  }
  cfg->virtual_clusters = {{"vc", {{fmt::format("{}.{}", chain, node_type), 2}}, {}}};
  auto s = scheduler::create(*cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  pod_request p;
  p.name = "p";
  p.vc = "vc";
  p.priority = 1;
  p.leaf_type = leaf_type;
  p.leaf_cells = 2;
  auto r = s->schedule(p, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->kind, outcome::bind);
  EXPECT_EQ(r->bind.node, "n-0");
  // two GPUs under one PCIe switch of the DGX-1 (GPUs 0 and 1)
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{0, 1}));
}

TEST(HivedTopology, NodeLevelTopCells) {
  auto cfg = derive_cells(dgx_racks(), derive_options{top_cell_level::node});
  ASSERT_TRUE(cfg.has_value());
  EXPECT_EQ(cfg->physical_cells.size(), 8U);
  EXPECT_EQ(cfg->physical_cells[7].address, "n-7");
}

}  // namespace
}  // namespace hetsched::hived
