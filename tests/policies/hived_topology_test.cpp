// SPDX-License-Identifier: MIT
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_topology.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/graph.hpp>
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

namespace hetsched::hived {
namespace {

const cell_type_spec* find_type(const config& cfg, const std::string& name) {
  for (const auto& t : cfg.cell_types)
    if (t.name == name) return &t;
  return nullptr;
}

/// The cell types of `cfg` as "name -> child xN" (with " node" for the node level), in order.
std::vector<std::string> type_lines(const config& cfg) {
  std::vector<std::string> out;
  for (const auto& t : cfg.cell_types)
    out.push_back(fmt::format("{} -> {} x{}{}", t.name, t.child_type, t.child_count,
                              t.node_level ? " node" : ""));
  return out;
}

/// The GPU indices of a cell's leaves in tree order.
void leaf_indices(const physical_cell_spec& c, std::vector<std::string>& out) {
  if (c.children.empty()) {
    out.push_back(c.address);
    return;
  }
  for (const auto& child : c.children) leaf_indices(child, out);
}

config derive_one(node_template t, const std::string& prefix) {
  auto cfg = derive_cells(cluster_builder("c").add_nodes(t, 1, prefix).build().value());
  EXPECT_TRUE(cfg.has_value()) << cfg.error().message;
  return cfg ? *cfg : config{};
}

TEST(HivedTopology, Dgx1PcieSwitchAndSocketCells) {
  // DGX-1: 2 sockets x 2 PCIe switches x 2 V100s; the leaf type is the GPU model
  auto cfg = derive_one(node_template::dgx1_v100, "d");
  EXPECT_EQ(type_lines(cfg), (std::vector<std::string>{
                                 "dgx1-v100/pcie_switch -> V100-SXM2-16GB x2",
                                 "dgx1-v100/socket -> dgx1-v100/pcie_switch x2",
                                 "dgx1-v100/node -> dgx1-v100/socket x2 node",
                             }));
  ASSERT_EQ(cfg.physical_cells.size(), 1U);
  const auto& node = cfg.physical_cells[0];
  EXPECT_EQ(node.cell_type, "dgx1-v100/node");
  EXPECT_EQ(node.address, "d-0");
  std::vector<std::string> gpus;
  leaf_indices(node, gpus);
  EXPECT_EQ(gpus, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"}));
}

TEST(HivedTopology, DgxA100AndPcieBox) {
  // DGX A100: GPU pairs behind 4 PCIe switch trees, two per socket
  auto a100 = derive_one(node_template::dgx_a100, "a");
  EXPECT_EQ(type_lines(a100), (std::vector<std::string>{
                                  "dgx-a100/pcie_switch -> A100-SXM4-80GB x2",
                                  "dgx-a100/socket -> dgx-a100/pcie_switch x2",
                                  "dgx-a100/node -> dgx-a100/socket x2 node",
                              }));
  // PCIe 8-GPU box: every GPU pair is SYS, so no switch level: 4 GPUs per socket
  auto pcie = derive_one(node_template::pcie_8gpu, "p");
  EXPECT_EQ(type_lines(pcie), (std::vector<std::string>{
                                  "pcie-8gpu/socket -> RTX-4090 x4",
                                  "pcie-8gpu/node -> pcie-8gpu/socket x2 node",
                              }));
  ASSERT_EQ(pcie.physical_cells.size(), 1U);
  ASSERT_EQ(pcie.physical_cells[0].children.size(), 2U);
  std::vector<std::string> second_socket;
  leaf_indices(pcie.physical_cells[0].children[1], second_socket);
  EXPECT_EQ(second_socket, (std::vector<std::string>{"4", "5", "6", "7"}));
}

TEST(HivedTopology, NestedSwitchLevelsGetTierNames) {
  // DGX-2: socket -> PXB switch -> PIX switch -> 2 GPUs; both switch levels are pcie_switch, so
  // the upper one is named pcie_switch2 (one name for both made the config unbuildable)
  auto cfg = derive_one(node_template::dgx2, "x");
  EXPECT_EQ(type_lines(cfg), (std::vector<std::string>{
                                 "dgx2/pcie_switch -> V100-SXM3-32GB x2",
                                 "dgx2/pcie_switch2 -> dgx2/pcie_switch x2",
                                 "dgx2/socket -> dgx2/pcie_switch2 x2",
                                 "dgx2/node -> dgx2/socket x2 node",
                             }));
  cfg.virtual_clusters = {{"vc", {{"dgx2/node.dgx2/pcie_switch2", 1}}, {}}};
  auto s = scheduler::create(cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  pod_request p;
  p.name = "p";
  p.vc = "vc";
  p.leaf_type = "V100-SXM3-32GB";
  p.leaf_cells = 4;
  auto r = s->schedule(p, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.node, "x-0");
  EXPECT_EQ(r->bind.leaf_cells, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r->bind.group_placements.at(4)[0].preassigned_types,
            std::vector<std::string>(4, "dgx2/pcie_switch2"));
}

/// A server whose GPUs sit at different depths: GPUs 0 and 1 behind a PCIe switch, GPU 2 on a
/// host bridge of the other socket. `models` gives each GPU's model.
node_topology irregular_box(const std::string& name, const std::vector<std::string>& models) {
  node_topology_builder b(name);
  const auto p0 = b.add(vertex_kind::package, "P0", b.root(), internal_link());
  const auto p1 = b.add(vertex_kind::package, "P1", b.root(), internal_link());
  const auto hb0 = b.add(vertex_kind::host_bridge, "HB0", p0, internal_link());
  const auto hb1 = b.add(vertex_kind::host_bridge, "HB1", p1, internal_link());
  const auto sw = b.add(vertex_kind::pcie_switch, "S0", hb0, pcie_link(3, 16));
  const vertex_id parents[] = {sw, sw, hb1};
  for (int i = 0; i < 3; ++i) {
    topo_vertex v;
    v.kind = vertex_kind::gpu;
    v.name = "GPU" + std::to_string(i);
    v.index = i;
    v.parent = parents[i];
    v.model = gpu_type(models[static_cast<std::size_t>(i)]);
    b.add(v, pcie_link(3, 16));
  }
  return std::move(b).build().value();
}

TEST(HivedTopology, IrregularTreeFallsBackToFlatNodes) {
  auto topo = irregular_box("box.v2", {"L4", "L4", "T4"});
  auto cfg = derive_cells(cluster_builder("c").add_nodes(topo, 2, "b").build().value(),
                          derive_options{top_cell_level::node});
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  // dots in the template name become '_'; mixed GPU models give the leaf type "<template>/gpu"
  EXPECT_EQ(type_lines(*cfg), (std::vector<std::string>{"box_v2/node -> box_v2/gpu x3 node"}));
  ASSERT_EQ(cfg->physical_cells.size(), 2U);
  EXPECT_EQ(cfg->physical_cells[1].address, "b-1");
  std::vector<std::string> gpus;
  leaf_indices(cfg->physical_cells[1], gpus);
  EXPECT_EQ(gpus, (std::vector<std::string>{"0", "1", "2"}));
  // one model: the leaf type is that model
  auto same = derive_cells(cluster_builder("c")
                               .add_nodes(irregular_box("box", {"L4", "L4", "L4"}), 1, "s")
                               .build()
                               .value());
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(type_lines(*same), (std::vector<std::string>{"box/node -> L4 x3 node"}));
}

TEST(HivedTopology, MixedTemplatesGiveSeveralChains) {
  // racks of 2: two DGX A100, two DGX-1, then one rack mixing both (left as node cells)
  auto topo = cluster_builder("c")
                  .add_nodes(node_template::dgx_a100, 2, "a")
                  .add_nodes(node_template::dgx1_v100, 2, "d")
                  .add_nodes(node_template::dgx_a100, 1, "m")
                  .add_nodes(node_template::dgx1_v100, 1, "n")
                  .racks(2)
                  .build()
                  .value();
  auto cfg = derive_cells(topo);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  std::vector<std::string> tops;
  for (const auto& c : cfg->physical_cells)
    tops.push_back(fmt::format("{} {} ({} children)", c.cell_type, c.address, c.children.size()));
  EXPECT_EQ(tops, (std::vector<std::string>{
                      "dgx-a100/rack2 rack-0 (2 children)",
                      "dgx1-v100/rack2 rack-1 (2 children)",
                      "dgx-a100/node m-0 (2 children)",
                      "dgx1-v100/node n-0 (2 children)",
                  }));
  auto s = scheduler::create(*cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  // one chain per top-level type: the rack chains and the node chains of both templates
  std::vector<std::string> chains;
  for (const auto& c : s->top_level_cells()) chains.push_back(c.chain);
  EXPECT_EQ(chains, (std::vector<std::string>{"dgx-a100/rack2", "dgx1-v100/rack2", "dgx-a100/node",
                                              "dgx1-v100/node"}));
}

TEST(HivedTopology, ShortLastRackIsItsOwnChain) {
  auto topo =
      cluster_builder("c").add_nodes(node_template::dgx_a100, 5, "a").racks(2).build().value();
  auto cfg = derive_cells(topo);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  ASSERT_EQ(cfg->physical_cells.size(), 3U);
  EXPECT_EQ(cfg->physical_cells[2].cell_type, "dgx-a100/rack1");
  ASSERT_EQ(cfg->physical_cells[2].children.size(), 1U);
  EXPECT_EQ(cfg->physical_cells[2].children[0].address, "a-4");
  const auto* rack1 = find_type(*cfg, "dgx-a100/rack1");
  ASSERT_NE(rack1, nullptr);
  EXPECT_EQ(rack1->child_type, "dgx-a100/node");
  EXPECT_EQ(rack1->child_count, 1);
  // a VC that owns only the short rack's node cell: chain dgx-a100/rack2 (tried first, chain
  // names descending) has no cell of it, so its pods go to the short rack's chain
  cfg->virtual_clusters = {{"vc", {{"dgx-a100/rack1.dgx-a100/node", 1}}, {}}};
  auto s = scheduler::create(*cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  EXPECT_EQ(s->free_list("dgx-a100/rack1", 5), (std::vector<std::string>{"rack-2"}));
  // an 8-GPU pod lands on the short rack's only node
  pod_request p;
  p.name = "p";
  p.vc = "vc";
  p.leaf_type = "A100-SXM4-80GB";
  p.leaf_cells = 8;
  auto r = s->schedule(p, node_filter{}, phase::preempting);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->kind, outcome::bind) << r->wait_reason;
  EXPECT_EQ(r->bind.chain, "dgx-a100/rack1");
  EXPECT_EQ(r->bind.node, "a-4");
}

TEST(HivedTopology, TemplateWithoutGpusIsAnError) {
  node_topology_builder b("cpu-box");
  b.add(vertex_kind::package, "P0", b.root(), internal_link());
  auto topo = cluster_builder("c").add_nodes(std::move(b).build().value(), 1, "c").build();
  ASSERT_TRUE(topo.has_value()) << topo.error().message;
  auto cfg = derive_cells(*topo);
  ASSERT_FALSE(cfg.has_value());
  EXPECT_EQ(cfg.error().code, errc::invalid_argument);
  EXPECT_EQ(cfg.error().message, "node template cpu-box has no GPUs");
}

}  // namespace
}  // namespace hetsched::hived
