// SPDX-License-Identifier: MIT
// cluster_builder: racks, tiers, NVLink domains and the cluster affinity tree.
#include <gtest/gtest.h>

#include <hetsched/topology/cluster_builder.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;

TEST(ClusterBuilder, GroupsNodesIntoRacksAndTiers) {
  auto c = cluster_builder("c")
               .add_nodes(node_template::dgx_a100, 10)
               .racks(4, oversubscription{2, 1})
               .tier("pod", 2)
               .build();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->node_count(), 10u);
  EXPECT_EQ(c->gpu_count(), 80u);
  EXPECT_EQ(c->templates().size(), 1u);
  EXPECT_EQ(c->node(node_id(3)).name, "dgx-a100-3");
  EXPECT_EQ(c->node(node_id(3)).first_gpu, device_id(24));
  EXPECT_EQ(c->node_of_gpu(device_id(31)), node_id(3));
  EXPECT_EQ(c->node_of_gpu(device_id(32)), node_id(4));
  // Racks of 4, 4, 2 nodes; pods of 2 racks and 1 rack.
  EXPECT_EQ(c->common_group(node_id(0), node_id(3)).level, affinity_level::rack);
  EXPECT_EQ(c->common_group(node_id(3), node_id(4)).level, affinity_level::network_tier);
  EXPECT_EQ(c->common_group(node_id(3), node_id(9)).level, affinity_level::cluster);
  EXPECT_EQ(c->level_between(device_id(0), device_id(7)), affinity_level::node);
  EXPECT_EQ(c->level_between(device_id(0), device_id(8)), affinity_level::rack);
  // A DGX A100 node uplink is its 10 HDR NICs (10 x 25 GB/s); a rack of 4 at 2:1 gets half.
  EXPECT_EQ(c->node(node_id(0)).uplink_mb_s, 250000);
  const auto& rack0 = c->groups()[c->groups()[c->node(node_id(0)).group].parent];
  EXPECT_EQ(rack0.node_count, 4u);
  EXPECT_EQ(rack0.uplink_mb_s, 500000);
  EXPECT_EQ(c->find_node("dgx-a100-9").value(), node_id(9));
  EXPECT_THAT(c->find_node("dgx-a100-10"), HasErrc(errc::not_found));
}

TEST(ClusterBuilder, NvlinkDomainsNestInsideRacks) {
  auto c = cluster_builder("nvl")
               .add_nodes(node_template::hgx_h100, 8)
               .nvlink_domains(2, 450000)
               .racks(4)
               .build();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->common_group(node_id(0), node_id(1)).level, affinity_level::nvlink_domain);
  EXPECT_EQ(c->common_group(node_id(1), node_id(2)).level, affinity_level::rack);
  EXPECT_EQ(c->common_group(node_id(3), node_id(4)).level, affinity_level::cluster);
}

TEST(ClusterBuilder, MixesTemplatesWithSharedTopologies) {
  auto c = cluster_builder("mixed")
               .add_nodes(node_template::dgx2, 2, "v100")
               .add_nodes(node_template::hgx_h100, 3, "h100")
               .add_nodes(node_template::dgx2, 1, "v100")
               .build();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->templates().size(), 2u);
  EXPECT_EQ(c->gpu_count(), 16u * 3 + 8u * 3);
  EXPECT_EQ(c->node(node_id(5)).name, "v100-2");
  EXPECT_EQ(c->topology_of(node_id(5)).name(), "dgx2");
  EXPECT_EQ(c->node_of_gpu(device_id(32)), node_id(2));
}

TEST(ClusterBuilder, RejectsBadShapes) {
  EXPECT_THAT(cluster_builder("e").build(), ErrorContains("has no nodes"));
  EXPECT_THAT(cluster_builder("e").add_nodes(node_template::dgx2, 4).racks(0).build(),
              ErrorContains("racks of 0 nodes"));
  EXPECT_THAT(cluster_builder("e").add_nodes(node_template::dgx2, 4).tier("pod", 2).build(),
              ErrorContains("call racks() first"));
  EXPECT_THAT(
      cluster_builder("e").add_nodes(node_template::dgx2, 6).racks(3).nvlink_domains(2, 1).build(),
      ErrorContains("straddle racks"));
  EXPECT_THAT(cluster_builder("e").add_nodes(node_template::dgx2, 4).racks(2, {0, 1}).build(),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(
      cluster_builder("e").add_nodes(node_template::dgx2, cluster_builder::max_nodes + 1).build(),
      HasErrc(errc::out_of_range));
}

TEST(ClusterBuilder, BuildsTheGraphOfClusterVertices) {
  auto c = cluster_builder("g").add_nodes(node_template::dgx1_v100, 4).racks(2).build();
  ASSERT_THAT(c, IsOk());
  // 1 cluster + 4 nodes + 2 racks, one edge per non-root vertex.
  EXPECT_EQ(boost::num_vertices(c->graph()), 7u);
  EXPECT_EQ(boost::num_edges(c->graph()), 6u);
  EXPECT_EQ(c->graph()[c->node(node_id(0)).group].kind, vertex_kind::node);
}

TEST(ClusterModel, ConvertsTopologyToTheSchedulingModel) {
  auto topo = make_builtin_cluster("demo");
  ASSERT_THAT(topo, IsOk());
  auto c = to_cluster(*topo);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->node_count(), 8u);
  EXPECT_EQ(c->device_count(), 80u);
  const auto& n0 = c->node(node_id(0));
  EXPECT_EQ(n0.name, "dgx-a100-0");
  // DGX A100: 2 x 128 logical CPUs, 8 NUMA nodes x 256 GiB, 10 NICs, 8 GPUs of 80 GiB.
  EXPECT_EQ(n0.allocatable.milli_cpu, 256000);
  EXPECT_EQ(n0.allocatable.memory_mib, 8 * 256 * 1024);
  EXPECT_EQ(n0.allocatable.milli_gpu, 8000);
  EXPECT_EQ(n0.allocatable.gpu_memory_mib, 8 * 81920);
  EXPECT_EQ(n0.allocatable.extended.at("rdma/hca"), 10);
  EXPECT_EQ(n0.labels.at("hetsched.io/rack"), "rack-0");
  EXPECT_EQ(n0.labels.at("hetsched.io/tier-1"), "pod-0");
  EXPECT_EQ(n0.labels.at("hetsched.io/topology"), "dgx-a100");
  // Device ids agree between the topology and the model.
  EXPECT_EQ(c->device(device_id(45)).node, topo->node_of_gpu(device_id(45)));
  EXPECT_EQ(c->device(device_id(45)).type, gpu_type("H100-SXM5-80GB"));
  EXPECT_EQ(c->node(node_id(7)).labels.at("hetsched.io/rack"), "rack-1");
}

TEST(ClusterModel, CountsHwlocStyleCpusets) {
  node_topology_builder b("box");
  topo_vertex pkg;
  pkg.kind = vertex_kind::package;
  pkg.name = "P0";
  pkg.parent = b.root();
  pkg.cpuset = "0x000000ff,0x0000000f";
  b.add(pkg, internal_link());
  auto t = std::move(b).build();
  ASSERT_THAT(t, IsOk());
  // 8 + 4 bits set.
  EXPECT_EQ(to_node_spec(*t, "n").milli_cpu, 12000);
}

}  // namespace
}  // namespace hetsched
