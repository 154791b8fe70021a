// SPDX-License-Identifier: MIT
// Private clusters of the sharing anomaly: sized by the quota table, by demand share without one,
// and the anomaly of a small run with hand-computed queueing delays.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/sim/sharing_anomaly.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using metrics::vc_anomaly;
using testing::gpu_job;
using testing::IsOk;

// Four DGX-1 V100 servers: 32 GPUs.
testing::sim_fixture four_dgx() {
  testing::sim_fixture f{
      cluster_builder("c").add_nodes(node_template::dgx1_v100, 4, "n").racks(2).build().value(),
      nullptr};
  f.description = std::make_shared<const cluster>(to_cluster(f.topo).value());
  return f;
}

workload::vc_quota_table quota_table(std::vector<workload::vc_quota> vcs) {
  workload::vc_quota_table t;
  t.vcs = std::move(vcs);
  return t;
}

TEST(PrivateClusters, SizedByTheQuotaTable) {
  const auto f = four_dgx();
  // Demand shares would be a 1/4, b 3/4: the table must win.
  const workload::trace trace{gpu_job("a1", "a", 0, 100, 8), gpu_job("b1", "b", 0, 300, 8),
                              gpu_job("c1", "c", 0, 100, 1)};
  const auto table = quota_table({{"a", 16, 2}, {"b", 10, std::nullopt}, {"z", 8, 1}});
  const auto plans = plan_private_clusters(*f.description, trace, &table);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0], (private_cluster_plan{"a", private_quota_source::quota_table, 16, 2, 16}));
  // 10 GPUs need two 8-GPU nodes.
  EXPECT_EQ(plans[1], (private_cluster_plan{"b", private_quota_source::quota_table, 10, 2, 16}));
  // Not in the table: no quota, no private cluster.
  EXPECT_EQ(plans[2], (private_cluster_plan{"c", private_quota_source::quota_table, 0, 0, 0}));
}

TEST(PrivateClusters, QuotaAboveTheClusterIsCapped) {
  const auto f = four_dgx();
  const workload::trace trace{gpu_job("a1", "a", 0, 100, 8)};
  const auto table = quota_table({{"a", 1000, std::nullopt}});
  const auto plans = plan_private_clusters(*f.description, trace, &table);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0], (private_cluster_plan{"a", private_quota_source::quota_table, 1000, 4, 32}));
}

TEST(PrivateClusters, DemandShareWithoutATable) {
  const auto f = four_dgx();
  // GPU-time demand: a 8 x 100 + 2 x 50 = 900, b 8 x 300 = 2400, c 1 x 300 = 300 (total 3600).
  const workload::trace trace{gpu_job("a1", "a", 0, 100, 8), gpu_job("a2", "a", 5, 50, 2),
                              gpu_job("b1", "b", 0, 300, 8), gpu_job("c1", "c", 0, 300, 1)};
  const auto plans = plan_private_clusters(*f.description, trace, nullptr);
  ASSERT_EQ(plans.size(), 3u);
  // a: 32 x 900 / 3600 = 8; b: 32 x 2400 / 3600 = 21.33 -> 21 (3 nodes); c: 2.67 -> 3 (1 node).
  EXPECT_EQ(plans[0], (private_cluster_plan{"a", private_quota_source::demand_share, 8, 1, 8}));
  EXPECT_EQ(plans[1], (private_cluster_plan{"b", private_quota_source::demand_share, 21, 3, 24}));
  EXPECT_EQ(plans[2], (private_cluster_plan{"c", private_quota_source::demand_share, 3, 1, 8}));
}

TEST(PrivateClusters, ZeroDemandGetsEqualShares) {
  const auto f = four_dgx();
  workload::trace trace{gpu_job("a1", "a", 0, 100, 0), gpu_job("b1", "b", 0, 100, 0),
                        gpu_job("c1", "c", 0, 100, 0)};
  for (auto& j : trace) j.cpu_milli_per_task = 1000;
  const auto plans = plan_private_clusters(*f.description, trace, nullptr);
  ASSERT_EQ(plans.size(), 3u);
  // floor(32 / 3) = 10 GPUs each: two nodes.
  for (const auto& p : plans) {
    EXPECT_EQ(p.quota_gpus, 10u);
    EXPECT_EQ(p.nodes, 2u);
    EXPECT_EQ(p.source, private_quota_source::demand_share);
  }
}

TEST(PrivateClusters, SubClusterIsAPrefixOfTheNodes) {
  const auto f = four_dgx();
  auto sub = make_sub_cluster(*f.description, &f.topo, 3);
  ASSERT_THAT(sub, IsOk());
  EXPECT_EQ(sub->description->node_count(), 3u);
  EXPECT_EQ(sub->description->device_count(), 24u);
  ASSERT_TRUE(sub->topology.has_value());
  EXPECT_EQ(sub->topology->node_count(), 3u);
  auto plain = make_sub_cluster(*f.description, nullptr, 2);
  ASSERT_THAT(plain, IsOk());
  EXPECT_EQ(plain->description->node(node_id(1)).name, "n-1");
  EXPECT_FALSE(plain->topology.has_value());
  EXPECT_THAT(make_sub_cluster(*f.description, nullptr, 0),
              testing::HasErrc(errc::invalid_argument));
}

TEST(PrivateClusters, AnomalyOfASharedRun) {
  const auto f = testing::two_dgx();
  // Shared (16 GPUs, FIFO): a1 and a2 start at 0, b1 waits for a1 until 100 s.
  const workload::trace trace{gpu_job("a1", "a", 0, 100, 8), gpu_job("a2", "a", 0, 100, 8),
                              gpu_job("b1", "b", 0, 100, 8)};
  const auto shared = summarize(testing::simulate_spec(f, trace, "fifo+packer"));
  ASSERT_EQ(shared.tenants.size(), 2u);
  EXPECT_DOUBLE_EQ(shared.tenants[0].mean_queue_s, 0);
  EXPECT_DOUBLE_EQ(shared.tenants[1].mean_queue_s, 100);
  // Quotas of one node each: privately a queues a2 behind a1 (mean 50 s), b never waits.
  const auto table = quota_table({{"a", 8, 1}, {"b", 8, 1}});
  const auto plans = plan_private_clusters(*f.description, trace, &table);
  auto spec = parse_policy_spec("fifo+packer");
  ASSERT_THAT(spec, IsOk());
  auto rows = run_private_vcs(*spec, *f.description, &f.topo, trace, {}, shared, plans);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0], (vc_anomaly{"a", 0, 50, -50}));
  EXPECT_EQ((*rows)[1], (vc_anomaly{"b", 100, 0, 100}));
  // Without the table the demand shares are 2/3 and 1/3 of 16 GPUs: 11 (2 nodes) and 5 (1 node);
  // a then never waits either.
  const auto by_demand = plan_private_clusters(*f.description, trace, nullptr);
  rows = run_private_vcs(*spec, *f.description, &f.topo, trace, {}, shared, by_demand);
  ASSERT_THAT(rows, IsOk());
  EXPECT_EQ((*rows)[0], (vc_anomaly{"a", 0, 0, 0}));
  EXPECT_EQ((*rows)[1], (vc_anomaly{"b", 100, 0, 100}));
}

TEST(PrivateClusters, QuotaPlacementsOwnTheirPrivateCluster) {
  const auto f = testing::two_dgx();
  const workload::trace trace{gpu_job("a1", "a", 0, 100, 8), gpu_job("a2", "a", 0, 100, 8),
                              gpu_job("b1", "b", 0, 100, 8)};
  // The shared spec's quota list (a 8, b 8) must not carry over: alone, a owns its 8 GPUs.
  const auto shared = summarize(testing::simulate_spec(f, trace, "fifo+hived:quota=8/8"));
  const auto table = quota_table({{"a", 8, 1}, {"b", 8, 1}});
  const auto plans = plan_private_clusters(*f.description, trace, &table);
  auto spec = parse_policy_spec("fifo+hived:quota=8/8");
  ASSERT_THAT(spec, IsOk());
  auto rows = run_private_vcs(*spec, *f.description, &f.topo, trace, {}, shared, plans);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_DOUBLE_EQ((*rows)[0].private_queue_s, 50);
  EXPECT_DOUBLE_EQ((*rows)[1].private_queue_s, 0);
}

}  // namespace
}  // namespace hetsched::sim
