// SPDX-License-Identifier: MIT
// node_topology_builder validation and relation rules on small hand-made machines.
#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;

topo_vertex gpu(std::int32_t index, vertex_id parent) {
  topo_vertex v;
  v.kind = vertex_kind::gpu;
  v.name = "GPU" + std::to_string(index);
  v.index = index;
  v.parent = parent;
  return v;
}

TEST(NodeTopologyBuilder, DerivesEveryPcieLevel) {
  node_topology_builder b("box");
  const auto p0 = b.add(vertex_kind::package, "P0", b.root(), internal_link());
  const auto p1 = b.add(vertex_kind::package, "P1", b.root(), internal_link());
  const auto n0 = b.add(vertex_kind::numa_node, "N0", p0, internal_link());
  const auto n1 = b.add(vertex_kind::numa_node, "N1", p1, internal_link());
  const auto hb0 = b.add(vertex_kind::host_bridge, "HB0", n0, internal_link());
  const auto hb1 = b.add(vertex_kind::host_bridge, "HB1", n0, internal_link());
  const auto hb2 = b.add(vertex_kind::host_bridge, "HB2", n1, internal_link());
  const auto top = b.add(vertex_kind::pcie_switch, "S0", hb0, pcie_link(3, 16));
  const auto leaf = b.add(vertex_kind::pcie_switch, "S1", top, pcie_link(3, 16));
  b.add(gpu(0, leaf), pcie_link(3, 16));
  b.add(gpu(1, leaf), pcie_link(3, 16));
  b.add(gpu(2, top), pcie_link(3, 16));
  b.add(gpu(3, hb0), pcie_link(3, 16));
  b.add(gpu(4, hb1), pcie_link(3, 16));
  b.add(gpu(5, hb2), pcie_link(3, 16));
  auto t = std::move(b).build();
  ASSERT_THAT(t, IsOk());
  const auto& v = t->views();
  EXPECT_EQ(v.relation(0, 0).pcie, pcie_relation::self);
  EXPECT_EQ(v.relation(0, 1).pcie, pcie_relation::pix);   // same leaf switch
  EXPECT_EQ(v.relation(0, 2).pcie, pcie_relation::pxb);   // nested switches
  EXPECT_EQ(v.relation(0, 3).pcie, pcie_relation::phb);   // one host bridge
  EXPECT_EQ(v.relation(0, 4).pcie, pcie_relation::node);  // two host bridges, one NUMA node
  EXPECT_EQ(v.relation(0, 5).pcie, pcie_relation::sys);   // across NUMA nodes
  EXPECT_EQ(v.relation(5, 0).token(), "SYS");
  EXPECT_EQ(v.path_type(0, 3), nccl_path::phb);
  EXPECT_EQ(v.path_type(0, 4), nccl_path::phb);  // NCCL folds NODE into PHB
  // Gen3 x16 = 985 MB/s per lane x 16; NCCL: 16 * 60 / 80 = 12 GB/s.
  EXPECT_EQ(v.bandwidth_mb_s(0, 1), 15760);
  EXPECT_EQ(v.nccl_bandwidth_mb_s(0, 1), 12000);
}

TEST(NodeTopologyBuilder, RejectsDuplicateNames) {
  node_topology_builder b("box");
  b.add(vertex_kind::package, "P", b.root(), internal_link());
  b.add(vertex_kind::package, "P", b.root(), internal_link());
  EXPECT_THAT(std::move(b).build(), HasErrc(errc::already_exists));
}

TEST(NodeTopologyBuilder, RejectsGpuIndexGaps) {
  node_topology_builder b("box");
  const auto hb = b.add(vertex_kind::host_bridge, "HB", b.root(), internal_link());
  b.add(gpu(0, hb), pcie_link(4, 16));
  b.add(gpu(2, hb), pcie_link(4, 16));
  EXPECT_THAT(std::move(b).build(), ErrorContains("GPU 'GPU2' has index 2"));
}

TEST(NodeTopologyBuilder, RejectsNvlinkToAHostBridge) {
  node_topology_builder b("box");
  const auto hb = b.add(vertex_kind::host_bridge, "HB", b.root(), internal_link());
  const auto g0 = b.add(gpu(0, hb), pcie_link(4, 16));
  b.connect(g0, hb, nvlink_link(2, 3));
  EXPECT_THAT(std::move(b).build(), ErrorContains("must join GPUs and NVSwitches"));
}

TEST(NodeTopologyBuilder, RejectsAGpuBelowAGpu) {
  node_topology_builder b("box");
  const auto g0 = b.add(gpu(0, b.root()), pcie_link(4, 16));
  b.add(gpu(1, g0), pcie_link(4, 16));
  EXPECT_THAT(std::move(b).build(), ErrorContains("cannot sit below gpu 'GPU0'"));
}

TEST(NodeTopologyBuilder, RejectsNegativeBandwidthAndSelfLinks) {
  node_topology_builder b("box");
  const auto g0 = b.add(gpu(0, b.root()), pcie_link(4, 16));
  b.connect(g0, g0, nvlink_link(1, 2));
  EXPECT_THAT(std::move(b).build(), ErrorContains("to itself"));
  node_topology_builder c("box");
  const auto h0 = c.add(gpu(0, c.root()), pcie_link(4, 16));
  const auto h1 = c.add(gpu(1, c.root()), pcie_link(4, 16));
  c.connect(h0, h1, topo_link{link_kind::nvlink, 1, 2, 0, -5});
  EXPECT_THAT(std::move(c).build(), ErrorContains("negative bandwidth"));
}

TEST(NodeTopologyBuilder, NumbersNicsInVertexOrderWhenUnset) {
  node_topology_builder b("box");
  b.add(vertex_kind::nic, "ib1", b.root(), pcie_link(4, 16));
  b.add(vertex_kind::nic, "ib0", b.root(), pcie_link(4, 16));
  auto t = std::move(b).build();
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->vertex(t->nics()[0]).name, "ib1");
  EXPECT_EQ(t->find("ib0"), vertex_id(2));
}

TEST(PairRelation, ParsesNvidiaSmiTokens) {
  EXPECT_EQ(parse_relation_token("NV12")->nvlinks, 12);
  EXPECT_EQ(parse_relation_token("PXB")->pcie, pcie_relation::pxb);
  EXPECT_EQ(parse_relation_token("NODE")->token(), "NODE");
  EXPECT_THAT(parse_relation_token("NV0"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(parse_relation_token("NV"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(parse_relation_token("PCI"), ErrorContains("'PCI'"));
}

}  // namespace
}  // namespace hetsched

namespace hetsched {
namespace {

// graph() is the topology as a Boost graph: one edge per link with its typed properties, so that
// an embedder's BGL algorithms see exactly what the views see (docs/topology.md, "Boost.Graph").
TEST(NodeTopologyGraph, IsTheBoostGraphOfTheLinks) {
  for (const node_template t :
       {node_template::dgx1_v100, node_template::workstation_4gpu, node_template::pcie_8gpu}) {
    SCOPED_TRACE(std::string(to_string(t)));
    const auto topo = make_node_template(t);
    ASSERT_TRUE(topo.has_value());
    const auto& g = topo->graph();
    ASSERT_EQ(boost::num_vertices(g), topo->vertex_count());
    ASSERT_EQ(boost::num_edges(g), topo->link_count());
    const auto links = topo->links();
    std::size_t i = 0;
    for (auto [e, end] = boost::edges(g); e != end; ++e, ++i) {
      ASSERT_LT(i, links.size());
      EXPECT_EQ(boost::source(*e, g), links[i].a.index());
      EXPECT_EQ(boost::target(*e, g), links[i].b.index());
      EXPECT_EQ(g[*e], links[i].link);
    }
    for (std::size_t v = 0; v < topo->vertex_count(); ++v)
      EXPECT_EQ(g[v], topo->vertex(vertex_id(static_cast<std::uint32_t>(v))));
  }
}

// The NVLink islands of a server by BGL's connected_components over the NVLink edges: DGX-1's
// hybrid cube mesh is one island of 8 GPUs, the workstation's NVLink bridges make {0,3} and
// {1,2}, the PCIe-only server has none (8 islands of one GPU).
TEST(NodeTopologyGraph, NvlinkIslandsByConnectedComponents) {
  const auto islands = [](node_template t) {
    const auto topo = make_node_template(t);
    EXPECT_TRUE(topo.has_value());
    const auto& g = topo->graph();
    using graph_type = node_topology::graph_type;
    const auto nvlink_only = [&g](const boost::graph_traits<graph_type>::edge_descriptor& e) {
      return g[e].kind == link_kind::nvlink;
    };
    const boost::filtered_graph<
        graph_type, std::function<bool(boost::graph_traits<graph_type>::edge_descriptor)>>
        nv(g, nvlink_only);
    std::vector<std::size_t> component(boost::num_vertices(g));
    boost::connected_components(nv, component.data());
    std::map<std::size_t, std::vector<std::uint32_t>> by_component;
    const auto gpus = topo->gpus();
    for (std::uint32_t i = 0; i < gpus.size(); ++i)
      by_component[component[gpus[i].index()]].push_back(i);
    std::vector<std::vector<std::uint32_t>> out;
    for (auto& [c, members] : by_component) out.push_back(members);
    std::sort(out.begin(), out.end());
    return out;
  };
  using groups = std::vector<std::vector<std::uint32_t>>;
  EXPECT_EQ(islands(node_template::dgx1_v100), (groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(islands(node_template::workstation_4gpu), (groups{{0, 3}, {1, 2}}));
  EXPECT_EQ(islands(node_template::pcie_8gpu), (groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
}

}  // namespace
}  // namespace hetsched
