// SPDX-License-Identifier: MIT
// The capacity-queue and HiveD placements in the simulator, with hand-computed outcomes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;
using hetsched::testing::simulate_spec;

workload::trace_job job(std::string name, std::string tenant, std::int64_t submit_s,
                        std::int64_t duration_s, std::uint32_t gpus, std::int32_t priority = 0) {
  return hetsched::testing::gpu_job(std::move(name), std::move(tenant), submit_s, duration_s, gpus,
                                    priority);
}

using fixture = hetsched::testing::sim_fixture;
using hetsched::testing::two_dgx;

// Tenant A (index 0) sends two 8-GPU jobs at 0, tenant B (index 1) one at 5.
const workload::trace two_tenants{job("a0", "A", 0, 100, 8), job("a1", "A", 0, 100, 8),
                                  job("b0", "B", 5, 50, 8)};

TEST(CapacityPlacement, WithoutBorrowingATenantStaysWithinItsQuota) {
  const fixture f = two_dgx();
  const sim_result r = simulate_spec(f, two_tenants, "fifo+capacity:quota=8/8,borrow=0");
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  // a1 would exceed A's 8 GPUs: it waits although n1 is idle, and b0 (same shape, other
  // tenant) is not held back by a1's deferral.
  EXPECT_EQ(r.jobs[2].first_start_ms, 5'000);
  EXPECT_EQ(r.jobs[1].first_start_ms, 100'000);
  EXPECT_EQ(r.end_ms, 200'000);
}

TEST(CapacityPlacement, BorrowingUsesIdleQuotaOfOtherTenants) {
  const fixture f = two_dgx();
  const sim_result r = simulate_spec(f, two_tenants, "fifo+capacity:quota=8/8");
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  EXPECT_EQ(r.jobs[1].first_start_ms, 0);  // borrows B's idle quota
  EXPECT_EQ(r.jobs[2].first_start_ms, 100'000);
  EXPECT_EQ(r.end_ms, 150'000);
}

TEST(CapacityPlacement, BorrowLimitCapsBorrowing) {
  const fixture f = two_dgx();
  const sim_result r = simulate_spec(f, two_tenants, "fifo+capacity:quota=8/8,borrow_limit=4");
  EXPECT_EQ(r.jobs[1].first_start_ms, 100'000);
  EXPECT_EQ(r.jobs[2].first_start_ms, 5'000);
}

TEST(HivedPlacement, GuaranteedJobsStayInTheirVirtualCluster) {
  const fixture f = two_dgx();
  const sim_result r = simulate_spec(f, two_tenants, "fifo+hived:quota=8/8");
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  EXPECT_EQ(r.jobs[2].first_start_ms, 5'000);
  EXPECT_EQ(r.jobs[1].first_start_ms, 100'000);
  EXPECT_EQ(r.end_ms, 200'000);
}

TEST(HivedPlacement, OpportunisticJobsUseIdleCellsAndGuaranteedOnesWaitForThem) {
  const fixture f = two_dgx();
  // a1 has priority -1: opportunistic, it takes B's idle node at 0; without preemption b0
  // (guaranteed) waits for it (preemption: tests/sim/preemption_test.cpp).
  const workload::trace t{job("a0", "A", 0, 100, 8), job("a1", "A", 0, 100, 8, -1),
                          job("b0", "B", 5, 50, 8)};
  const sim_result r = simulate_spec(f, t, "fifo+hived:quota=8/8,preemption=0");
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  EXPECT_EQ(r.jobs[1].first_start_ms, 0);
  EXPECT_EQ(r.jobs[2].first_start_ms, 100'000);
  // With guaranteed_min_priority=-1 a1 is guaranteed and waits for A's own cell instead.
  const sim_result g = simulate_spec(f, t, "fifo+hived:quota=8/8,guaranteed_min_priority=-1");
  EXPECT_EQ(g.jobs[1].first_start_ms, 100'000);
  EXPECT_EQ(g.jobs[2].first_start_ms, 5'000);
}

TEST(HivedPlacement, BuddyAllocationKeepsSmallJobsInsideOneServer) {
  const fixture f = two_dgx();
  auto h = hived_placement::create(*f.description, &f.topo, {});
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->vc_nodes(0), 2u);  // no quota: one VC owns both servers
  cluster_state st(*f.description);
  job_spec s;
  s.id = job_id(0);
  s.name = "j0";
  task_role role;
  role.name = "t";
  role.task_count = 1;
  role.gpu = whole_gpus(2);
  s.roles.push_back(role);
  ASSERT_THAT(st.submit(s), IsOk());
  ASSERT_THAT(record(st, job_id(0), job_event::enqueue), IsOk());
  h->rebuild(st);
  auto d = h->place(st, job_id(0));
  ASSERT_THAT(d, IsOk());
  ASSERT_EQ(d->binds.size(), 1u);
  const task_placement& tp = d->binds[0].tasks[0];
  ASSERT_EQ(tp.devices.size(), 2u);
  // Two GPUs under one PCIe switch of the DGX-1: local GPUs 0 and 1 of a server.
  const device_id first = f.description->node(tp.node).first_device;
  EXPECT_EQ(tp.devices[0].device, first);
  EXPECT_EQ(tp.devices[1].device, device_id(first.value() + 1));
  EXPECT_THAT(check_decision(st, *d), IsOk());
}

TEST(HivedPlacement, QuotaSplitsNodesByLargestRemainder) {
  const fixture f = two_dgx();
  // 3:1 of two servers: floors 1 and 0, remainders 1/2 and 1/2, the tie goes to the lower index.
  auto h =
      hived_placement::create(*f.description, &f.topo, {{3, 1}, 0, hived::top_cell_level::rack});
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->vc_nodes(0), 2u);
  EXPECT_EQ(h->vc_nodes(1), 0u);
}

TEST(HivedPlacement, AVirtualClusterStaysInsideOneChain) {
  // Three servers in racks of two: a rack of two and a rack of one are two chains. Quota 2:1
  // gives VC 0 both servers of the first chain, so its two-server gang can run.
  fixture f{
      cluster_builder("c").add_nodes(node_template::dgx1_v100, 3, "n").racks(2).build().value(),
      nullptr};
  f.description = std::make_shared<const cluster>(to_cluster(f.topo).value());
  auto h =
      hived_placement::create(*f.description, &f.topo, {{16, 8}, 0, hived::top_cell_level::rack});
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->vc_nodes(0), 2u);
  EXPECT_EQ(h->vc_nodes(1), 1u);
  workload::trace_job gang = job("a0", "A", 0, 100, 8);
  gang.tasks = 2;
  gang.gpu_milli_per_task = 8000;
  const sim_result r = simulate_spec(f, {gang, job("b0", "B", 0, 50, 8)}, "fifo+hived:quota=16/8");
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  EXPECT_EQ(r.jobs[0].state, job_state::succeeded);
  EXPECT_EQ(r.jobs[1].first_start_ms, 0);
}

TEST(QuotaPlacement, ParametersAreChecked) {
  const fixture f = two_dgx();
  EXPECT_THAT(make_placement("capacity", {{"quota", "8/x"}}, *f.description, &f.topo),
              ErrorContains("'x' is not a number of GPUs"));
  EXPECT_THAT(make_placement("capacity", {{"borrow", "2"}}, *f.description, &f.topo),
              ErrorContains("borrow: '2' is not 0 or 1"));
  EXPECT_THAT(make_placement("capacity", {{"fit", "sideways"}}, *f.description, &f.topo),
              ErrorContains("unknown parameter 'fit' or bad value"));
  EXPECT_THAT(make_placement("capacity", {{"fit", "worst"}}, *f.description, &f.topo), IsOk());
  EXPECT_THAT(make_placement("hived", {{"nosuch", "1"}}, *f.description, &f.topo),
              ErrorContains("unknown parameter 'nosuch'"));
  EXPECT_THAT(make_placement("hived", {}, *f.description, nullptr),
              ErrorContains("needs the cluster topology"));
  auto q = parse_quota_list("8/0/16");
  ASSERT_THAT(q, IsOk());
  EXPECT_EQ(*q, (std::vector<std::uint32_t>{8, 0, 16}));
}

}  // namespace
}  // namespace hetsched::sim
