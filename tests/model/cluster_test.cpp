// SPDX-License-Identifier: MIT
// Tests for the cluster description: building, lookups, device ranges and errors.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hetsched/model/cluster.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

node_spec gpu_node(std::string name, std::uint32_t gpus, std::string_view type = "A100-SXM4-80GB",
                   std::int64_t gpu_memory = 81920) {
  node_spec spec;
  spec.name = std::move(name);
  spec.labels = {{"rack", "r1"}, {"zone", "a"}};
  spec.milli_cpu = 64000;
  spec.memory_mib = 512 * 1024;
  spec.extended = {{"rdma/hca", 4}};
  for (std::uint32_t i = 0; i < gpus; ++i) {
    spec.devices.push_back(device_spec{gpu_type(type), gpu_memory, health::healthy});
  }
  return spec;
}

TEST(Cluster, AddNodeAssignsDenseNodeAndDeviceIds) {
  cluster c;
  const auto a = c.add_node(gpu_node("a", 8));
  const auto b = c.add_node(gpu_node("b", 4, "V100-SXM2-32GB", 32768));
  const auto d = c.add_node(gpu_node("cpu-only", 0));
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(d, IsOk());
  // nodes 0, 1, 2 in insertion order
  EXPECT_EQ(*a, node_id(0));
  EXPECT_EQ(*b, node_id(1));
  EXPECT_EQ(*d, node_id(2));
  EXPECT_EQ(c.node_count(), 3U);
  EXPECT_EQ(c.device_count(), 12U);

  // node b owns devices [8, 12)
  const node_info& nb = c.node(*b);
  EXPECT_EQ(nb.first_device, device_id(8));
  EXPECT_EQ(nb.device_count, 4U);
  const auto devs = c.devices(*b);
  ASSERT_EQ(devs.size(), 4U);
  EXPECT_EQ(devs[0].node, *b);
  EXPECT_EQ(devs[3].local_index, 3U);
  EXPECT_EQ(devs[2].type, gpu_type("V100-SXM2-32GB"));
  EXPECT_EQ(&devs[0], &c.device(device_id(8)));
  EXPECT_EQ(c.device(device_id(11)).memory_mib, 32768);
  // the CPU-only node has an empty range starting after b's devices
  EXPECT_TRUE(c.devices(*d).empty());
  EXPECT_EQ(c.node(*d).first_device, device_id(12));

  EXPECT_EQ(c.device_at(*b, 2), device_id(10));
  EXPECT_EQ(c.device_at(*b, 4), std::nullopt);
  EXPECT_EQ(c.device_at(node_id(9), 0), std::nullopt);
}

TEST(Cluster, NodeInfoCarriesAllocatableIncludingGpus) {
  cluster c;
  const node_id id = c.add_node(gpu_node("a", 8)).value();
  const node_info& n = c.node(id);
  // 8 GPUs: 8000 milli-GPU and 8 x 81920 MiB
  EXPECT_EQ(n.allocatable.milli_gpu, 8000);
  EXPECT_EQ(n.allocatable.gpu_memory_mib, 655360);
  EXPECT_EQ(n.allocatable.milli_cpu, 64000);
  EXPECT_EQ(n.allocatable.memory_mib, 524288);
  EXPECT_EQ(n.allocatable.extended_amount("rdma/hca"), 4);
  EXPECT_EQ(n.name, "a");
  EXPECT_EQ(n.labels.at("rack"), "r1");
  EXPECT_EQ(n.health, health::healthy);
}

TEST(Cluster, TotalCapacitySumsNodes) {
  cluster c;
  ASSERT_THAT(c.add_node(gpu_node("a", 8)), IsOk());
  ASSERT_THAT(c.add_node(gpu_node("b", 4, "V100-SXM2-32GB", 32768)), IsOk());
  const resource_vector& total = c.total_capacity();
  // 12 GPUs; 8 x 81920 + 4 x 32768 = 786432 MiB GPU memory; 2 x 64000 milli-CPU
  EXPECT_EQ(total.milli_gpu, 12000);
  EXPECT_EQ(total.gpu_memory_mib, 786432);
  EXPECT_EQ(total.milli_cpu, 128000);
  EXPECT_EQ(total.memory_mib, 1048576);
  EXPECT_EQ(total.extended_amount("rdma/hca"), 8);
}

TEST(Cluster, FindNodeByName) {
  cluster c;
  ASSERT_THAT(c.add_node(gpu_node("alpha", 1)), IsOk());
  ASSERT_THAT(c.add_node(gpu_node("beta", 1)), IsOk());
  // beta was added second
  EXPECT_EQ(c.find_node("beta"), node_id(1));
  EXPECT_EQ(c.find_node(std::string_view("alpha")), node_id(0));
  EXPECT_EQ(c.find_node("gamma"), std::nullopt);
  EXPECT_TRUE(c.contains(node_id(1)));
  EXPECT_FALSE(c.contains(node_id(2)));
  EXPECT_FALSE(c.contains(node_id::invalid()));
  EXPECT_TRUE(c.contains(device_id(1)));
  EXPECT_FALSE(c.contains(device_id(2)));
}

TEST(Cluster, DuplicateNameIsAlreadyExistsAndLeavesClusterUnchanged) {
  cluster c;
  ASSERT_THAT(c.add_node(gpu_node("a", 8)), IsOk());
  const cluster before = c;
  const auto r = c.add_node(gpu_node("a", 2));
  EXPECT_THAT(r, HasErrc(errc::already_exists));
  EXPECT_THAT(r, ErrorContains("node 'a' already exists as node 0"));
  EXPECT_EQ(c, before);
  EXPECT_EQ(c.device_count(), 8U);
}

TEST(Cluster, RejectsInvalidNodeSpecs) {
  cluster c;
  node_spec unnamed = gpu_node("", 1);
  EXPECT_THAT(c.add_node(unnamed), HasErrc(errc::invalid_argument));

  node_spec negative_cpu = gpu_node("n", 1);
  negative_cpu.milli_cpu = -1;
  EXPECT_THAT(c.add_node(negative_cpu), HasErrc(errc::invalid_argument));
  EXPECT_THAT(c.add_node(negative_cpu), ErrorContains("node 'n': milli-CPU is negative (-1)"));

  node_spec negative_mem = gpu_node("n", 1);
  negative_mem.memory_mib = -5;
  EXPECT_THAT(c.add_node(negative_mem), HasErrc(errc::invalid_argument));

  node_spec huge_mem = gpu_node("n", 1);
  huge_mem.memory_mib = max_resource_amount + 1;
  EXPECT_THAT(c.add_node(huge_mem), HasErrc(errc::out_of_range));

  node_spec bad_ext = gpu_node("n", 1);
  bad_ext.extended = {{"rdma/hca", -2}};
  EXPECT_THAT(c.add_node(bad_ext), HasErrc(errc::invalid_argument));
  EXPECT_THAT(c.add_node(bad_ext), ErrorContains("node 'n': extended resource 'rdma/hca'"));

  node_spec bad_device = gpu_node("n", 2);
  bad_device.devices[1].memory_mib = -1;
  EXPECT_THAT(c.add_node(bad_device), HasErrc(errc::invalid_argument));
  EXPECT_THAT(c.add_node(bad_device), ErrorContains("node 'n' device 1: memory is negative"));

  node_spec huge_device = gpu_node("n", 1);
  huge_device.devices[0].memory_mib = max_resource_amount + 1;
  EXPECT_THAT(c.add_node(huge_device), HasErrc(errc::out_of_range));

  node_spec too_many = gpu_node("n", max_gpus_per_task + 1);
  EXPECT_THAT(c.add_node(too_many), HasErrc(errc::out_of_range));

  // nothing was added by the failed calls
  EXPECT_EQ(c.node_count(), 0U);
  EXPECT_EQ(c.device_count(), 0U);
  EXPECT_EQ(c.total_capacity(), resource_vector{});
}

TEST(Cluster, KeepsHealthAndUnknownDeviceMemory) {
  cluster c;
  node_spec spec = gpu_node("n", 2);
  spec.health = health::cordoned;
  spec.devices[1].health = health::unhealthy;
  spec.devices[1].memory_mib = 0;
  spec.devices[1].type = gpu_type();
  const node_id id = c.add_node(spec).value();
  // health is recorded as described; memory 0 and an empty type mean unknown
  EXPECT_EQ(c.node(id).health, health::cordoned);
  EXPECT_EQ(c.device(device_id(0)).health, health::healthy);
  EXPECT_EQ(c.device(device_id(1)).health, health::unhealthy);
  EXPECT_EQ(c.device(device_id(1)).memory_mib, 0);
  EXPECT_EQ(c.node(id).allocatable.gpu_memory_mib, 81920);
  EXPECT_EQ(fmt::format("{}", c.device(device_id(1)).type), "any");
}

TEST(Health, NamesEveryValue) {
  EXPECT_EQ(to_string(health::healthy), "healthy");
  EXPECT_EQ(to_string(health::cordoned), "cordoned");
  EXPECT_EQ(to_string(health::unhealthy), "unhealthy");
  EXPECT_EQ(fmt::format("{}", health::unhealthy), "unhealthy");
}

TEST(Cluster, BuildsHundredThousandGpus) {
  cluster c;
  c.reserve(12500, 100000);
  for (int i = 0; i < 12500; ++i) {
    ASSERT_THAT(c.add_node(gpu_node(fmt::format("node-{:05}", i), 8)), IsOk());
  }
  // 12,500 nodes x 8 GPUs
  EXPECT_EQ(c.node_count(), 12500U);
  EXPECT_EQ(c.device_count(), 100000U);
  EXPECT_EQ(c.total_capacity().milli_gpu, 100000000);
  // the last node owns devices [99992, 100000)
  EXPECT_EQ(c.node(node_id(12499)).first_device, device_id(99992));
  EXPECT_EQ(c.find_node("node-12499"), node_id(12499));
}

}  // namespace
}  // namespace hetsched
