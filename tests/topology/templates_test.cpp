// SPDX-License-Identifier: MIT
// Built-in node templates reproduce the published machines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::IsOk;

node_topology make(node_template t) {
  auto topo = make_node_template(t);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

std::string rel(const node_topology& t, std::size_t i, std::size_t j) {
  return t.views().relation(i, j).token();
}

TEST(NodeTemplates, NamesRoundTrip) {
  for (node_template t : all_node_templates()) {
    EXPECT_EQ(parse_node_template(to_string(t)), t);
  }
  EXPECT_EQ(parse_node_template("dgx-h100"), node_template::hgx_h100);
  EXPECT_EQ(parse_node_template("dgx-z9000"), std::nullopt);
}

TEST(NodeTemplates, Dgx1V100IsTheHybridCubeMesh) {
  const auto t = make(node_template::dgx1_v100);
  ASSERT_EQ(t.gpus().size(), 8u);
  // Rows of the DLPerf matrix (dgx1v-like_v100-sxm2x8_dlperf.txt).
  const std::vector<std::vector<std::string>> expected{
      {"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"},
      {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
      {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"},
      {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
      {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"},
      {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
      {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"},
      {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"}};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) EXPECT_EQ(rel(t, i, j), expected[i][j]) << i << "," << j;
  }
  // mlx5_0 (endpoint 8): NODE to GPU0/1, PIX to GPU2/3, SYS to 4-7.
  const auto nic0 = *t.find("mlx5_0");
  EXPECT_EQ(t.vertex(nic0).index, 0);
  EXPECT_EQ(rel(t, 8, 0), "NODE");
  EXPECT_EQ(rel(t, 8, 2), "PIX");
  EXPECT_EQ(rel(t, 8, 3), "PIX");
  EXPECT_EQ(rel(t, 8, 4), "SYS");
  // Two NVLink2 links = 50 GB/s; GPU0-GPU5 has no NVLink: NCCL goes through a peer GPU (NVB).
  EXPECT_EQ(t.views().bandwidth_mb_s(0, 3), 50000);
  EXPECT_EQ(t.views().path_type(0, 5), nccl_path::nvb);
  EXPECT_EQ(t.views().nccl_bandwidth_mb_s(0, 5), 20000);
  EXPECT_EQ(t.views().gpu_socket(3), 0);
  EXPECT_EQ(t.views().gpu_socket(4), 1);
}

TEST(NodeTemplates, Dgx2HasNv6EverywhereAndThePlxTree) {
  const auto t = make(node_template::dgx2);
  const auto& v = t.views();
  ASSERT_EQ(t.gpus().size(), 16u);
  EXPECT_EQ(t.nvswitches().size(), 12u);
  for (std::size_t i = 0; i < 16; ++i) {
    for (std::size_t j = 0; j < 16; ++j) {
      if (i == j) continue;
      EXPECT_EQ(v.relation(i, j).nvlinks, 6) << i << "," << j;
      // 6 x 25 GB/s through the NVSwitch fabric.
      EXPECT_EQ(v.bandwidth_mb_s(i, j), 150000);
    }
  }
  // The PCIe relation hidden under NV6 (nvidia-smi topo -mp).
  EXPECT_EQ(v.relation(0, 1).pcie, pcie_relation::pix);
  EXPECT_EQ(v.relation(0, 2).pcie, pcie_relation::pxb);
  EXPECT_EQ(v.relation(0, 4).pcie, pcie_relation::node);
  EXPECT_EQ(v.relation(0, 8).pcie, pcie_relation::sys);
  // GPU0 row of nccl-tests#78: mlx5_0 PIX, mlx5_1 PXB, mlx5_2/3 NODE, mlx5_4.. SYS.
  EXPECT_EQ(rel(t, 0, 16), "PIX");
  EXPECT_EQ(rel(t, 0, 17), "PXB");
  EXPECT_EQ(rel(t, 0, 18), "NODE");
  EXPECT_EQ(rel(t, 0, 19), "NODE");
  EXPECT_EQ(rel(t, 0, 20), "SYS");
  EXPECT_EQ(rel(t, 2, 17), "PIX");
}

TEST(NodeTemplates, DgxA100NumaLayoutAndNics) {
  const auto t = make(node_template::dgx_a100);
  const auto& v = t.views();
  ASSERT_EQ(t.gpus().size(), 8u);
  EXPECT_EQ(t.nvswitches().size(), 6u);
  EXPECT_EQ(v.nic_count(), 10u);
  EXPECT_EQ(rel(t, 0, 7), "NV12");
  // GPU0 row of DCGM#149: NIC0/NIC1 PXB, the rest SYS; NUMA 3 with cores 48-63,176-191.
  EXPECT_EQ(rel(t, 0, 8), "PXB");
  EXPECT_EQ(rel(t, 0, 9), "PXB");
  EXPECT_EQ(rel(t, 0, 10), "SYS");
  EXPECT_EQ(rel(t, 4, 12), "PXB");
  const std::vector<int> numa{3, 3, 1, 1, 7, 7, 5, 5};
  for (std::size_t g = 0; g < 8; ++g) EXPECT_EQ(v.gpu_numa(g), numa[g]);
  EXPECT_EQ(t.vertex(t.gpus()[0]).cpuset, "48-63,176-191");
  EXPECT_EQ(t.vertex(t.gpus()[2]).cpuset, "16-31,144-159");
  // 12 NVLink3 x 25 GB/s.
  EXPECT_EQ(v.bandwidth_mb_s(0, 5), 300000);
}

TEST(NodeTemplates, HgxH100Nv18AndOneNicPerGpu) {
  const auto t = make(node_template::hgx_h100);
  const auto& v = t.views();
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      if (i != j) {
        EXPECT_EQ(rel(t, i, j), "NV18");
      }
    }
  }
  // GPU -> its PIX NIC, per nccl#1264.
  const std::vector<std::size_t> nic_of_gpu{0, 1, 2, 5, 6, 7, 8, 9};
  for (std::size_t g = 0; g < 8; ++g) {
    for (std::size_t n = 0; n < 10; ++n) {
      EXPECT_EQ(rel(t, g, 8 + n), n == nic_of_gpu[g] ? "PIX" : "SYS") << g << "," << n;
    }
    EXPECT_EQ(v.gpu_numa(g), g < 4 ? 0 : 1);
  }
  EXPECT_EQ(v.bandwidth_mb_s(1, 6), 450000);
}

TEST(NodeTemplates, PcieOnlyBoxIsAllSysButKeepsTheSocketSplit) {
  const auto t = make(node_template::pcie_8gpu);
  const auto& v = t.views();
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      if (i != j) {
        EXPECT_EQ(rel(t, i, j), "SYS");
      }
    }
  }
  EXPECT_EQ(rel(t, 6, 8), "PHB");
  EXPECT_EQ(rel(t, 8, 9), "PIX");
  // The affinity tree still splits the node into two sockets of 4 GPUs.
  const auto groups = v.affinity_groups();
  ASSERT_GE(groups.size(), 3u);
  EXPECT_EQ(groups[1].level, affinity_level::socket);
  EXPECT_EQ(groups[1].gpus, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(groups[2].gpus, (std::vector<std::uint32_t>{4, 5, 6, 7}));
  // Cross-socket pairs are limited by the inter-CPU link (22 GB/s), same-socket by PCIe gen4 x16.
  EXPECT_EQ(v.bandwidth_mb_s(0, 4), 22000);
  EXPECT_EQ(v.bandwidth_mb_s(0, 1), 31504);
}

TEST(NodeTemplates, WorkstationBridgesPairsAcrossSockets) {
  const auto t = make(node_template::workstation_4gpu);
  EXPECT_EQ(rel(t, 0, 3), "NV2");
  EXPECT_EQ(rel(t, 1, 2), "NV2");
  EXPECT_EQ(rel(t, 0, 1), "NODE");
  EXPECT_EQ(rel(t, 0, 2), "SYS");
}

TEST(NodeTemplates, AffinityTreeOfDgx2HasFourLevels) {
  const auto t = make(node_template::dgx2);
  const auto groups = t.views().affinity_groups();
  // node(16) -> socket(8) -> PCIe top switch(4) -> PCIe leaf switch(2) -> GPU.
  std::uint32_t g = t.views().gpu_group(5);
  std::vector<std::pair<affinity_level, std::size_t>> chain;
  while (true) {
    chain.emplace_back(groups[g].level, groups[g].gpus.size());
    if (groups[g].parent == g) break;
    g = groups[g].parent;
  }
  const std::vector<std::pair<affinity_level, std::size_t>> expected{
      {affinity_level::gpu, 1},
      {affinity_level::pcie_switch, 2},
      {affinity_level::pcie_switch, 4},
      {affinity_level::socket, 8},
      {affinity_level::node, 16}};
  EXPECT_EQ(chain, expected);
  EXPECT_EQ(groups[t.views().gpu_group(5)].gpus, std::vector<std::uint32_t>{5});
}

TEST(NodeTemplates, AreDeterministic) {
  for (node_template t : all_node_templates()) {
    const auto a = make(t);
    const auto b = make(t);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.views(), b.views());
  }
}

}  // namespace
}  // namespace hetsched
