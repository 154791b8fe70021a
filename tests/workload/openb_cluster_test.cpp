// SPDX-License-Identifier: MIT
// The cluster of an openb node list: shapes, GPU types and memory, names, errors, and the full
// FGD node list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <hetsched/workload/openb_cluster.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::workload {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;

constexpr std::string_view small_list =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "openb-node-0000,64000,262144,2,P100\n"
    "openb-node-0001,96000,393216,8,G2\n"
    "openb-node-0002,32000,131072,0,\n"
    "openb-node-0003,64000,262144,2,P100\n";

TEST(OpenbCluster, NodesKeepTheirShapeAndModels) {
  auto nodes = parse_openb_nodes(small_list);
  ASSERT_THAT(nodes, IsOk());
  auto topo = openb_cluster_topology(*nodes);
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ(topo->node_count(), 4u);
  EXPECT_EQ(topo->gpu_count(), 12u);
  // Three distinct shapes: the two P100 nodes share one node topology.
  EXPECT_EQ(topo->templates().size(), 3u);
  auto c = to_cluster(*topo);
  ASSERT_THAT(c, IsOk());
  const node_info& p100 = c->node(node_id(0));
  EXPECT_EQ(p100.name, "openb-node-0000-0");
  EXPECT_EQ(p100.allocatable.milli_cpu, 64000);
  EXPECT_EQ(p100.allocatable.memory_mib, 262144);
  ASSERT_EQ(p100.device_count, 2u);
  EXPECT_EQ(c->devices(node_id(0))[0].type, gpu_type("P100"));
  EXPECT_EQ(c->devices(node_id(0))[0].memory_mib, 16384);
  const node_info& g2 = c->node(node_id(1));
  EXPECT_EQ(g2.device_count, 8u);
  EXPECT_EQ(g2.allocatable.milli_cpu, 96000);
  EXPECT_EQ(c->devices(node_id(1))[7].type, gpu_type("G2"));
  EXPECT_EQ(c->devices(node_id(1))[7].memory_mib, 0);  // anonymised model: unknown
  const node_info& cpu_only = c->node(node_id(2));
  EXPECT_EQ(cpu_only.device_count, 0u);
  EXPECT_EQ(cpu_only.allocatable.memory_mib, 131072);
  EXPECT_EQ(c->node(node_id(3)).name, "openb-node-0003-0");
}

TEST(OpenbCluster, CatalogueModels) {
  EXPECT_EQ(openb_gpu_catalogue_model("V100M32"), gpu_type("V100-SXM2-32GB"));
  EXPECT_EQ(openb_gpu_catalogue_model("V100M16"), gpu_type("V100-SXM2-16GB"));
  EXPECT_EQ(openb_gpu_catalogue_model("T4"), gpu_type("T4-16GB"));
  EXPECT_EQ(openb_gpu_catalogue_model("A10"), gpu_type("A10-24GB"));
  EXPECT_EQ(openb_gpu_catalogue_model("G3"), std::nullopt);
}

TEST(OpenbCluster, BadNodesAreNamed) {
  EXPECT_THAT(openb_cluster_topology({}), HasErrc(errc::invalid_argument));
  std::vector<openb_node> nodes{{"a", 1500, 1024, 1, "T4"}};
  EXPECT_THAT(openb_cluster_topology(nodes),
              ErrorContains("openb node a: cpu_milli 1500 is not a positive multiple of 1000"));
  nodes = {{"b", 2000, 0, 1, "T4"}};
  EXPECT_THAT(openb_cluster_topology(nodes), ErrorContains("openb node b: memory_mib 0"));
  nodes = {{"c", 2000, 1024, 1, "V100 32G"}};
  EXPECT_THAT(openb_cluster_topology(nodes),
              ErrorContains("openb node c: GPU model 'V100 32G' is not a valid GPU type name"));
  nodes = {{"d", 2000, 1024, 1, "T4"}, {"d", 2000, 1024, 1, "T4"}};
  EXPECT_THAT(openb_cluster_topology(nodes), HasErrc(errc::already_exists));
  EXPECT_THAT(openb_cluster_topology(nodes), ErrorContains("openb node d: the name is used twice"));
}

TEST(OpenbCluster, TheFgdNodeList) {
  auto nodes = parse_openb_nodes(
      testing::read_shared("data/traces/alibaba_openb_v2023/openb_node_list_gpu_node.csv"));
  ASSERT_THAT(nodes, IsOk());
  auto topo = openb_cluster_topology(*nodes);
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ(topo->node_count(), 1213u);
  EXPECT_EQ(topo->gpu_count(), 6212u);
  auto c = to_cluster(*topo);
  ASSERT_THAT(c, IsOk());
  std::map<std::string, std::size_t> gpus_by_model;
  for (const device_info& d : c->all_devices()) ++gpus_by_model[std::string(d.type.name())];
  EXPECT_EQ(gpus_by_model, (std::map<std::string, std::size_t>{{"A10", 2},
                                                               {"G2", 4392},
                                                               {"G3", 312},
                                                               {"P100", 265},
                                                               {"T4", 842},
                                                               {"V100M16", 195},
                                                               {"V100M32", 204}}));
}

}  // namespace
}  // namespace hetsched::workload
