// SPDX-License-Identifier: MIT
// Tests for hetsched/policies/gandiva.hpp: Gandiva's reactive placement order (same affinity,
// empty, other affinity, oversubscription, wait), packing, deferrals, determinism and the
// incremental indices against rebuild().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/topology/cluster_builder.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

job_spec make_job(std::uint32_t id, std::uint32_t gpus, bool preemptible = true,
                  std::uint32_t tasks = 1, gpu_request gpu = {}) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "job";
  if (gpu.count == 0) gpu = whole_gpus(gpus);
  spec.roles.push_back(task_role{"worker", tasks, 0, 0, gpu, {}});
  spec.preemptible = preemptible;
  return spec;
}

// 4 workstation-4gpu servers (16 GPUs; NVLink pairs (0,3) and (1,2) on each).
struct fixture {
  cluster_topology topology;
  cluster_state state;
  gandiva_reactive policy;

  explicit fixture(cluster_topology t, gandiva_params params = {})
      : topology(t), state(to_cluster(t).value()), policy(state.cluster(), t, params) {}

  static fixture workstations(gandiva_params params = {}) {
    return fixture(
        cluster_builder("ws").add_nodes(node_template::workstation_4gpu, 4, "ws").build().value(),
        params);
  }

  void queue(const job_spec& spec) {
    ASSERT_THAT(state.submit(spec), IsOk());
    ASSERT_THAT(record(state, spec.id, job_event::enqueue), IsOk());
  }

  // Places job `id`, checks the decision, applies it, commits it and starts bound jobs.
  decision run(std::uint32_t id) {
    auto d = policy.place(state, job_id(id));
    EXPECT_THAT(d, IsOk());
    if (!d) return {};
    EXPECT_THAT(check_decision(state, *d), IsOk());
    EXPECT_THAT(apply(state, *d), IsOk());
    EXPECT_THAT(policy.commit(*d), IsOk());
    for (const binding& b : d->binds) EXPECT_THAT(record(state, b.job, job_event::start), IsOk());
    gandiva_reactive rebuilt = policy;
    EXPECT_THAT(rebuilt.rebuild(state), IsOk());
    EXPECT_TRUE(rebuilt == policy) << "indices diverged from rebuild after job " << id;
    return *d;
  }

  decision queue_and_run(const job_spec& spec) {
    queue(spec);
    return run(spec.id.value());
  }
};

node_id bound_node(const decision& d) {
  if (d.binds.size() != 1 || d.binds[0].tasks.size() != 1) return node_id::invalid();
  return d.binds[0].tasks[0].node;
}

std::vector<std::uint32_t> bound_devices(const decision& d) {
  std::vector<std::uint32_t> out;
  if (d.binds.size() == 1 && d.binds[0].tasks.size() == 1)
    for (const device_share& s : d.binds[0].tasks[0].devices) out.push_back(s.device.value());
  return out;
}

TEST(GandivaReactive, OneGpuJobsPackOntoTheSameServer) {
  auto f = fixture::workstations();
  // Empty cluster: job 1 takes empty server 0 (lowest id); jobs 2-4 follow it (affinity 1).
  for (std::uint32_t j = 1; j <= 4; ++j) {
    const decision d = f.queue_and_run(make_job(j, 1));
    EXPECT_EQ(bound_node(d), node_id(0)) << "job " << j;
  }
  EXPECT_EQ(f.policy.affinity(node_id(0)), 1u);
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 0u);
  // Server 0 is full: job 5 opens empty server 1.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(5, 1))), node_id(1));
}

TEST(GandivaReactive, TwoGpuJobAvoidsOneGpuServerWhileAnEmptyOneExists) {
  auto f = fixture::workstations();
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(1, 1))), node_id(0));
  // Server 0 has 3 free GPUs but affinity 1; the 2-GPU job takes empty server 1 on its NVLink
  // pair: devices 4 and 7 (local 0 and 3).
  const decision d = f.queue_and_run(make_job(2, 2));
  EXPECT_EQ(bound_node(d), node_id(1));
  EXPECT_EQ(bound_devices(d), (std::vector<std::uint32_t>{4, 7}));
  // The next 2-GPU job shares server 1 (same affinity) on the other pair, devices 5 and 6.
  const decision d3 = f.queue_and_run(make_job(3, 2));
  EXPECT_EQ(bound_node(d3), node_id(1));
  EXPECT_EQ(bound_devices(d3), (std::vector<std::uint32_t>{5, 6}));
  // A 4-GPU job takes empty server 2.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(4, 4))), node_id(2));
}

TEST(GandivaReactive, FollowsSameThenEmptyThenOtherThenOversubscribeThenQueue) {
  auto f = fixture::workstations();
  // Setup: server 0 affinity 1 (3 free), server 1 affinity 4 (0 free), server 2 affinity 2
  // (2 free), server 3 empty.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(1, 1))), node_id(0));
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(2, 4))), node_id(1));
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(3, 2))), node_id(2));
  // (1) same affinity: job 4 (2 GPUs) joins server 2, which is then full.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(4, 2))), node_id(2));
  // (2) empty: job 5 opens server 3.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(5, 2))), node_id(3));
  // (1) again: job 6 fills server 3.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(6, 2))), node_id(3));
  // (3) other affinity: no affinity-2 server and no empty server has room; server 0 (affinity 1,
  // 3 free) takes job 7.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(7, 2))), node_id(0));
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 1u);
  // (4) oversubscription: affinity-2 servers 2 and 3 both have 0 time-sliced jobs; server 2
  // (lower id) suspends its lowest-id 2-GPU job, job 3, and job 8 takes job 3's devices.
  f.queue(make_job(8, 2));
  const auto placed8 = f.policy.place(f.state, job_id(8));
  ASSERT_THAT(placed8, IsOk());
  const auto job3 = f.state.placement(job_id(3));
  ASSERT_THAT(job3, IsOk());
  ASSERT_EQ(placed8->suspensions, (std::vector<suspension>{suspension{job_id(3)}}));
  ASSERT_EQ(placed8->binds.size(), 1u);
  EXPECT_EQ(placed8->binds[0].tasks[0].node, node_id(2));
  ASSERT_EQ(placed8->binds[0].tasks[0].devices.size(), 2u);
  EXPECT_EQ(placed8->binds[0].tasks[0].devices[0].device, (*job3)[0].devices[0].device);
  EXPECT_EQ(placed8->binds[0].tasks[0].devices[1].device, (*job3)[0].devices[1].device);
  const decision d8 = f.run(8);
  EXPECT_EQ(d8, *placed8);
  EXPECT_EQ(f.state.status(job_id(3))->state, job_state::suspended);
  EXPECT_EQ(f.policy.time_sliced(node_id(2)), 1u);
  EXPECT_EQ(f.policy.time_sliced_gpus(node_id(2)), 2u);
  // (4) balance: server 2 has 2 time-sliced GPUs of 4, server 3 none; job 9 time-slices job 5 on
  // server 3 although server 2 (lower id) still has an untouched GPU set (job 4's).
  const decision d9 = f.queue_and_run(make_job(9, 2));
  EXPECT_EQ(d9.suspensions, (std::vector<suspension>{suspension{job_id(5)}}));
  EXPECT_EQ(bound_node(d9), node_id(3));
  // (4) both at 2/4: server 2 (lower id); job 8 runs on job 3's GPU set, which is at the limit,
  // so job 4's set is time-sliced.
  const decision d10 = f.queue_and_run(make_job(10, 2));
  EXPECT_EQ(d10.suspensions, (std::vector<suspension>{suspension{job_id(4)}}));
  EXPECT_EQ(bound_node(d10), node_id(2));
  const decision d11 = f.queue_and_run(make_job(11, 2));
  EXPECT_EQ(d11.suspensions, (std::vector<suspension>{suspension{job_id(6)}}));
  EXPECT_EQ(bound_node(d11), node_id(3));
  EXPECT_EQ(f.policy.time_sliced(node_id(2)), 2u);
  EXPECT_EQ(f.policy.time_sliced_gpus(node_id(3)), 4u);
  // (5) every GPU of both affinity-2 servers carries one suspended job (the limit): job 12 waits.
  const decision d12 = f.queue_and_run(make_job(12, 2));
  ASSERT_EQ(d12.deferrals.size(), 1u);
  EXPECT_TRUE(d12.binds.empty());
  EXPECT_TRUE(d12.suspensions.empty());
  EXPECT_EQ(d12.deferrals[0].reason, defer_reason::insufficient_capacity);
}

TEST(GandivaReactive, SameAffinityServersGoLeastLoadedFirstThenLowerId) {
  auto f = fixture::workstations();
  // Jobs 1-4 fill server 0, job 5 opens server 1 (affinity 1 both).
  for (std::uint32_t j = 1; j <= 5; ++j) f.queue_and_run(make_job(j, 1));
  ASSERT_EQ(f.policy.affinity(node_id(1)), 1u);
  // Job 1 finishes: server 0 has 1 free GPU, server 1 has 3.
  const auto job1 = f.state.placement(job_id(1));
  ASSERT_THAT(job1, IsOk());
  const std::uint32_t job1_device = (*job1)[0].devices[0].device.value();
  ASSERT_THAT(record(f.state, job_id(1), job_event::succeed), IsOk());
  f.policy.release(job_id(1));
  // Least loaded first: jobs 6 and 7 go to server 1 (3, then 2 free) although server 0 has a
  // lower id and room.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(6, 1))), node_id(1));
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(7, 1))), node_id(1));
  // Both have 1 free now: the lower id wins, on job 1's old GPU.
  const decision d8 = f.queue_and_run(make_job(8, 1));
  EXPECT_EQ(bound_node(d8), node_id(0));
  EXPECT_EQ(bound_devices(d8), (std::vector<std::uint32_t>{job1_device}));
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(9, 1))), node_id(1));
  // The two affinity-1 servers are full; job 10 opens server 2.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(10, 1))), node_id(2));
}

TEST(GandivaReactive, OtherAffinityServersGoMostFreeFirstThenLowerId) {
  auto f = fixture::workstations();
  // Server 0: 1-GPU jobs 1-4; server 1: 1-GPU jobs 5 and 6; servers 2 and 3: 4-GPU jobs 7, 8.
  for (std::uint32_t j = 1; j <= 6; ++j) f.queue_and_run(make_job(j, 1));
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(7, 4))), node_id(2));
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(8, 4))), node_id(3));
  // Jobs 1, 2 (server 0) and 6 (server 1) finish: server 0 has 2 free, server 1 has 3.
  for (const std::uint32_t j : {1u, 2u, 6u}) {
    ASSERT_THAT(record(f.state, job_id(j), job_event::succeed), IsOk());
    f.policy.release(job_id(j));
  }
  // No affinity-2 and no empty server: stage 3 takes the most free server, 1, for 2-GPU job 9.
  const decision d9 = f.queue_and_run(make_job(9, 2));
  EXPECT_EQ(bound_node(d9), node_id(1));
  EXPECT_TRUE(d9.suspensions.empty());
  // Server 1 keeps affinity 1 (its lowest-id job is job 5); now server 0 (2 free) beats server 1
  // (1 free).
  EXPECT_EQ(f.policy.affinity(node_id(1)), 1u);
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(10, 2))), node_id(0));
  // Nothing has 2 free GPUs any more and no 2-GPU job runs on an affinity-2 server: job 11 waits.
  const decision d11 = f.queue_and_run(make_job(11, 2));
  ASSERT_EQ(d11.deferrals.size(), 1u);
  EXPECT_TRUE(d11.suspensions.empty());
}

TEST(GandivaReactive, OversubscriptionIsBalancedAcrossServersAndGpuSets) {
  auto f = fixture::workstations();
  // 16 1-GPU jobs fill the cluster: jobs 4s+1 .. 4s+4 on server s.
  for (std::uint32_t j = 1; j <= 16; ++j)
    EXPECT_EQ(bound_node(f.queue_and_run(make_job(j, 1))), node_id((j - 1) / 4));
  // Every GPU set (one GPU) can take one time-sliced job: 16 more jobs time-slice, spread over
  // the servers in turn (lowest load, then lower id), and inside a server onto the untouched
  // GPU set of the lowest-id job. Lowest-id-first would suspend jobs 1, 2, 3, 4 on server 0.
  const std::uint32_t expected_victim[16] = {1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 4, 8, 12, 16};
  for (std::uint32_t i = 0; i < 16; ++i) {
    const std::uint32_t j = 17 + i;
    const auto victim = f.state.placement(job_id(expected_victim[i]));
    ASSERT_THAT(victim, IsOk());
    const decision d = f.queue_and_run(make_job(j, 1));
    ASSERT_EQ(d.suspensions.size(), 1u) << "job " << j;
    EXPECT_EQ(d.suspensions[0].job, job_id(expected_victim[i])) << "job " << j;
    EXPECT_EQ(bound_node(d), node_id(i % 4)) << "job " << j;
    // The new job takes the victim's GPU.
    EXPECT_EQ(bound_devices(d),
              (std::vector<std::uint32_t>{(*victim)[0].devices[0].device.value()}))
        << "job " << j;
  }
  for (std::uint32_t n = 0; n < 4; ++n) {
    EXPECT_EQ(f.policy.time_sliced(node_id(n)), 4u);
    EXPECT_EQ(f.policy.time_sliced_on(f.state.cluster().device_at(node_id(n), 3).value()), 1u);
  }
  // Every GPU carries one suspended job: job 33 waits.
  const decision d33 = f.queue_and_run(make_job(33, 1));
  ASSERT_EQ(d33.deferrals.size(), 1u);
  EXPECT_EQ(d33.deferrals[0].reason, defer_reason::insufficient_capacity);
}

TEST(GandivaReactive, OversubscriptionLoadIsPerGpuOnMixedServers) {
  // Node 0: a DGX A100 (8 GPUs); node 1: a 4-GPU workstation. 1-GPU jobs 1-8 fill node 0, 9-12
  // node 1.
  fixture f(cluster_builder("mix")
                .add_nodes(node_template::dgx_a100, 1, "a")
                .add_nodes(node_template::workstation_4gpu, 1, "w")
                .build()
                .value());
  for (std::uint32_t j = 1; j <= 12; ++j)
    EXPECT_EQ(bound_node(f.queue_and_run(make_job(j, 1))), node_id(j <= 8 ? 0 : 1));
  // Loads (time-sliced GPUs per GPU) before each job: 13: 0/8 vs 0/4 -> node 0; 14: 1/8 vs 0/4
  // -> node 1; 15: 1/8 vs 1/4 -> node 0; 16: 2/8 vs 1/4, a tie -> node 0; 17: 3/8 vs 1/4 -> node
  // 1. Counting suspended jobs per server instead would send job 16 to node 1.
  const std::uint32_t expected_node[] = {0, 1, 0, 0, 1};
  const std::uint32_t expected_victim[] = {1, 9, 2, 3, 10};
  for (std::uint32_t i = 0; i < 5; ++i) {
    const decision d = f.queue_and_run(make_job(13 + i, 1));
    ASSERT_EQ(d.suspensions.size(), 1u) << "job " << 13 + i;
    EXPECT_EQ(d.suspensions[0].job, job_id(expected_victim[i])) << "job " << 13 + i;
    EXPECT_EQ(bound_node(d), node_id(expected_node[i])) << "job " << 13 + i;
  }
  EXPECT_EQ(f.policy.time_sliced_gpus(node_id(0)), 3u);
  EXPECT_EQ(f.policy.time_sliced_gpus(node_id(1)), 2u);
  // The 8-GPU server keeps time-slicing up to one suspended job per GPU: 12 - 5 = 7 more jobs fit.
  std::uint32_t placed = 0;
  for (std::uint32_t j = 18; j <= 25; ++j) {
    const decision d = f.queue_and_run(make_job(j, 1));
    if (!d.suspensions.empty()) ++placed;
  }
  EXPECT_EQ(placed, 7u);
  EXPECT_EQ(f.policy.time_sliced(node_id(0)), 8u);
  EXPECT_EQ(f.policy.time_sliced(node_id(1)), 4u);
}

TEST(GandivaReactive, LimitTwoStacksTwoJobsPerGpuSet) {
  auto f = fixture::workstations(gandiva_params{true, 2});
  for (std::uint32_t j = 1; j <= 4; ++j)
    EXPECT_EQ(bound_node(f.queue_and_run(make_job(j, 4))), node_id(j - 1));
  // Jobs 5-8 time-slice jobs 1-4 (one per server), jobs 9-12 then time-slice jobs 5-8 (the only
  // running job on each server, its GPU set at count 1 < 2).
  for (std::uint32_t j = 5; j <= 12; ++j) {
    const decision d = f.queue_and_run(make_job(j, 4));
    ASSERT_EQ(d.suspensions.size(), 1u) << "job " << j;
    EXPECT_EQ(d.suspensions[0].job, job_id(j - 4)) << "job " << j;
    EXPECT_EQ(bound_node(d), node_id((j - 5) % 4)) << "job " << j;
  }
  EXPECT_EQ(f.policy.time_sliced_on(device_id(0)), 2u);
  const decision d13 = f.queue_and_run(make_job(13, 4));
  ASSERT_EQ(d13.deferrals.size(), 1u);
  // Limit 0 disables stage 4.
  auto g = fixture::workstations(gandiva_params{true, 0});
  for (std::uint32_t j = 1; j <= 4; ++j) g.queue_and_run(make_job(j, 4));
  EXPECT_EQ(g.queue_and_run(make_job(5, 4)).deferrals.size(), 1u);
}

TEST(GandivaReactive, OversubscriptionNeedsPermissionAndAPreemptibleRunningJob) {
  auto f = fixture::workstations(gandiva_params{false, 1});
  for (std::uint32_t j = 1; j <= 4; ++j)
    EXPECT_EQ(bound_node(f.queue_and_run(make_job(j, 4))), node_id(j - 1));
  // All 16 GPUs busy with 4-GPU jobs and oversubscription off: job 5 waits.
  const decision off = f.queue_and_run(make_job(5, 4));
  ASSERT_EQ(off.deferrals.size(), 1u);
  EXPECT_EQ(off.deferrals[0].reason, defer_reason::insufficient_capacity);

  auto g = fixture::workstations();
  for (std::uint32_t j = 1; j <= 4; ++j) g.queue_and_run(make_job(j, 4, /*preemptible=*/false));
  // Oversubscription on but no job may be suspended: job 5 waits.
  const decision pinned = g.queue_and_run(make_job(5, 4));
  ASSERT_EQ(pinned.deferrals.size(), 1u);
  EXPECT_TRUE(pinned.suspensions.empty());
  // A 1-GPU job cannot time-slice a 4-GPU job (different size): it waits too.
  const decision small = g.queue_and_run(make_job(6, 1));
  ASSERT_EQ(small.deferrals.size(), 1u);
}

TEST(GandivaReactive, UnsupportedShapesAreTopologyUnsatisfiable) {
  auto f = fixture::workstations();
  // 8 GPUs on one task, but servers have 4.
  const decision big = f.queue_and_run(make_job(1, 8));
  ASSERT_EQ(big.deferrals.size(), 1u);
  EXPECT_EQ(big.deferrals[0].reason, defer_reason::topology_unsatisfiable);
  // Two tasks.
  const decision two = f.queue_and_run(make_job(2, 1, true, 2));
  ASSERT_EQ(two.deferrals.size(), 1u);
  EXPECT_EQ(two.deferrals[0].reason, defer_reason::topology_unsatisfiable);
  // A fractional GPU.
  const decision frac = f.queue_and_run(make_job(3, 1, true, 1, fractional_gpu(500)));
  ASSERT_EQ(frac.deferrals.size(), 1u);
  EXPECT_EQ(frac.deferrals[0].reason, defer_reason::topology_unsatisfiable);
}

TEST(GandivaReactive, UnknownOrNonQueuedJobIsAnError) {
  auto f = fixture::workstations();
  EXPECT_THAT(f.policy.place(f.state, job_id(42)), HasErrc(errc::not_found));
  f.queue_and_run(make_job(1, 1));
  // Job 1 is running now.
  EXPECT_THAT(f.policy.place(f.state, job_id(1)), HasErrc(errc::failed_precondition));
}

TEST(GandivaReactive, RespectsGpuMemoryAndTypeRequests) {
  auto f = fixture::workstations();
  const std::int64_t memory = f.state.cluster().device(device_id(0)).memory_mib;
  const gpu_type type = f.state.cluster().device(device_id(0)).type;
  ASSERT_GT(memory, 0);
  // Exactly the device memory fits; the share carries the request.
  const decision fits = f.queue_and_run(make_job(1, 1, true, 1, whole_gpus(1, type, memory)));
  ASSERT_EQ(bound_devices(fits).size(), 1u);
  EXPECT_EQ(fits.binds[0].tasks[0].devices[0].gpu_memory_mib, memory);
  // One MiB more fits nowhere.
  const decision too_much = f.queue_and_run(make_job(2, 1, true, 1, whole_gpus(1, {}, memory + 1)));
  ASSERT_EQ(too_much.deferrals.size(), 1u);
  // A type no server has fits nowhere.
  const decision other = f.queue_and_run(
      make_job(3, 1, true, 1, whole_gpus(1, gpu_type::parse("H100-SXM5-80GB").value())));
  ASSERT_EQ(other.deferrals.size(), 1u);
}

TEST(GandivaReactive, SkipsUnhealthyDevicesAfterRebuild) {
  auto f = fixture::workstations();
  ASSERT_THAT(f.state.set_device_health(device_id(0), health::unhealthy), IsOk());
  ASSERT_THAT(f.policy.rebuild(f.state), IsOk());
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 3u);
  // A 4-GPU job skips server 0 (3 healthy GPUs) and takes server 1.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(1, 4))), node_id(1));
  // A 1-GPU job still uses server 0, on a healthy device.
  const decision d = f.queue_and_run(make_job(2, 1));
  EXPECT_EQ(bound_node(d), node_id(0));
  EXPECT_NE(bound_devices(d), (std::vector<std::uint32_t>{0}));
}

TEST(GandivaReactive, CommitAndReleaseKeepIndicesEqualToRebuild) {
  auto f = fixture::workstations();
  f.queue_and_run(make_job(1, 2));
  f.queue_and_run(make_job(2, 2));
  f.queue_and_run(make_job(3, 1));
  f.queue_and_run(make_job(4, 2));
  ASSERT_THAT(record(f.state, job_id(1), job_event::succeed), IsOk());
  f.policy.release(job_id(1));
  gandiva_reactive rebuilt = f.policy;
  ASSERT_THAT(rebuilt.rebuild(f.state), IsOk());
  EXPECT_TRUE(rebuilt == f.policy);
  // Job 1's server 0 still hosts job 2 (2 GPUs): affinity 2, 2 free.
  EXPECT_EQ(f.policy.affinity(node_id(0)), 2u);
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 2u);
  ASSERT_THAT(record(f.state, job_id(2), job_event::succeed), IsOk());
  f.policy.release(job_id(2));
  ASSERT_THAT(rebuilt.rebuild(f.state), IsOk());
  EXPECT_TRUE(rebuilt == f.policy);
  EXPECT_EQ(f.policy.affinity(node_id(0)), 0u);
  // A fresh policy rebuilt from the state equals the incremental one too.
  gandiva_reactive fresh(f.state.cluster(), f.topology);
  ASSERT_THAT(fresh.rebuild(f.state), IsOk());
  EXPECT_TRUE(fresh == f.policy);
}

TEST(GandivaReactive, CommitFollowsMigrationsPreemptionsAndResumes) {
  auto f = fixture::workstations();
  f.queue_and_run(make_job(1, 2));
  f.queue_and_run(make_job(2, 2));
  // Job 1 moves from server 0 to server 3, devices 12 and 15.
  decision move;
  move.migrations.push_back(migration{job_id(1),
                                      {task_placement{task_id(0),
                                                      node_id(3),
                                                      {device_share{device_id(12), 1000, 0},
                                                       device_share{device_id(15), 1000, 0}}}}});
  ASSERT_THAT(apply(f.state, move), IsOk());
  ASSERT_THAT(f.policy.commit(move), IsOk());
  gandiva_reactive rebuilt = f.policy;
  ASSERT_THAT(rebuilt.rebuild(f.state), IsOk());
  EXPECT_TRUE(rebuilt == f.policy);
  EXPECT_EQ(f.policy.affinity(node_id(3)), 2u);
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 2u);
  // Job 2 is suspended and resumed; job 1 is preempted.
  decision pause;
  pause.suspensions.push_back(suspension{job_id(2)});
  pause.preemptions.push_back(preemption{job_id(1), "test"});
  ASSERT_THAT(apply(f.state, pause), IsOk());
  ASSERT_THAT(f.policy.commit(pause), IsOk());
  ASSERT_THAT(rebuilt.rebuild(f.state), IsOk());
  EXPECT_TRUE(rebuilt == f.policy);
  EXPECT_EQ(f.policy.time_sliced(node_id(0)), 1u);
  EXPECT_EQ(f.policy.affinity(node_id(0)), 0u);
  decision resume;
  resume.resumes.push_back(resumption{job_id(2)});
  ASSERT_THAT(apply(f.state, resume), IsOk());
  ASSERT_THAT(f.policy.commit(resume), IsOk());
  ASSERT_THAT(rebuilt.rebuild(f.state), IsOk());
  EXPECT_TRUE(rebuilt == f.policy);
  EXPECT_EQ(f.policy.affinity(node_id(0)), 2u);
}

TEST(GandivaReactive, CommitFollowsPartialReleases) {
  auto f = fixture::workstations();
  // Job 1: two non-gang 1-GPU tasks bound on server 0 (local 0 and 1), committed by hand.
  job_spec spec = make_job(1, 1, true, 2);
  spec.gang = false;
  f.queue(spec);
  decision bind;
  bind.binds.push_back(
      binding{job_id(1),
              {task_placement{task_id(0), node_id(0), {device_share{device_id(0), 1000, 0}}},
               task_placement{task_id(1), node_id(0), {device_share{device_id(1), 1000, 0}}}}});
  ASSERT_THAT(apply(f.state, bind), IsOk());
  ASSERT_THAT(f.policy.commit(bind), IsOk());
  EXPECT_EQ(f.policy.affinity(node_id(0)), 2u);
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 2u);
  decision shrink;
  shrink.releases.push_back(partial_release{job_id(1), {task_id(1)}});
  ASSERT_THAT(apply(f.state, shrink), IsOk());
  ASSERT_THAT(f.policy.commit(shrink), IsOk());
  // Job 1 now holds one GPU on server 0: affinity 1, 3 free, as a rebuild sees it.
  EXPECT_EQ(f.policy.affinity(node_id(0)), 1u);
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 3u);
  gandiva_reactive rebuilt = f.policy;
  ASSERT_THAT(rebuilt.rebuild(f.state), IsOk());
  EXPECT_TRUE(rebuilt == f.policy);
}

TEST(GandivaReactive, CommitRefusesPlacementsOutsideTheClusterAndChangesNothing) {
  auto f = fixture::workstations();
  f.queue_and_run(make_job(1, 2));
  const gandiva_reactive before = f.policy;
  const auto bind_to = [](std::uint32_t node, std::vector<std::uint32_t> devices) {
    decision d;
    task_placement p{task_id(0), node_id(node), {}};
    for (std::uint32_t dev : devices) p.devices.push_back(device_share{device_id(dev), 1000, 0});
    d.binds.push_back(binding{job_id(2), {p}});
    return d;
  };
  // A device far outside the 16-GPU cluster (Python passes dicts straight through).
  const auto far = f.policy.commit(bind_to(0, {100000, 100001}));
  EXPECT_THAT(far, HasErrc(errc::invalid_argument));
  EXPECT_THAT(far.error().message, ::testing::HasSubstr("device 100000"));
  // A node that does not exist; a device of server 1 claimed on server 0; a device twice.
  EXPECT_THAT(f.policy.commit(bind_to(9, {0})), HasErrc(errc::invalid_argument));
  const auto other = f.policy.commit(bind_to(0, {4}));
  EXPECT_THAT(other, HasErrc(errc::invalid_argument));
  EXPECT_THAT(other.error().message, ::testing::HasSubstr("not a device of node 0"));
  const auto twice = f.policy.commit(bind_to(0, {2, 2}));
  EXPECT_THAT(twice.error().message, ::testing::HasSubstr("twice"));
  // A migration with one bad task among good ones, after a good preemption entry: nothing
  // of the decision is committed.
  decision mixed;
  mixed.preemptions.push_back(preemption{job_id(1), "test"});
  mixed.migrations.push_back(migration{
      job_id(1), {task_placement{task_id(0), node_id(3), {device_share{device_id(3), 1000, 0}}}}});
  EXPECT_THAT(f.policy.commit(mixed), HasErrc(errc::invalid_argument));
  EXPECT_TRUE(f.policy == before);
  EXPECT_EQ(f.policy.affinity(node_id(0)), 2u);
  EXPECT_EQ(f.policy.free_gpus(node_id(0)), 2u);
}

TEST(GandivaReactive, RebuildRefusesAStateOfAnotherCluster) {
  auto f = fixture::workstations();
  f.queue_and_run(make_job(1, 2));
  const gandiva_reactive before = f.policy;
  // Two 4-GPU servers instead of four.
  const cluster_state smaller(
      to_cluster(
          cluster_builder("ws").add_nodes(node_template::workstation_4gpu, 2, "ws").build().value())
          .value());
  const auto r = f.policy.rebuild(smaller);
  EXPECT_THAT(r, HasErrc(errc::invalid_argument));
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("2 nodes and 8 devices"));
  EXPECT_TRUE(f.policy == before);
}

TEST(GandivaReactive, IsDeterministic) {
  const auto scenario = [] {
    auto f = fixture::workstations();
    std::vector<decision> out;
    const std::uint32_t sizes[] = {1, 2, 4, 1, 2, 1, 2, 2, 1, 2, 2, 4};
    std::uint32_t id = 1;
    for (const std::uint32_t k : sizes) out.push_back(f.queue_and_run(make_job(id++, k)));
    return out;
  };
  EXPECT_EQ(scenario(), scenario());
}

TEST(GandivaReactive, PlacesOnBuiltinDemoClusterByTypeAndTopology) {
  fixture f(make_builtin_cluster("demo").value());
  // Demo: nodes 0-3 DGX A100, 4-5 HGX H100, 6-7 DGX-2. An H100 job of 8 GPUs goes to node 4.
  const node_info& h100 = f.state.cluster().node(node_id(4));
  const gpu_type type = f.state.cluster().device(h100.first_device).type;
  const decision d = f.queue_and_run(make_job(1, 8, true, 1, whole_gpus(8, type)));
  EXPECT_EQ(bound_node(d), node_id(4));
  EXPECT_EQ(bound_devices(d).size(), 8u);
  // An untyped 2-GPU job takes empty node 0; a 1-GPU job avoids it and takes node 1.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(2, 2))), node_id(0));
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(3, 1))), node_id(1));
  // A 16-GPU job only fits a DGX-2: node 6.
  EXPECT_EQ(bound_node(f.queue_and_run(make_job(4, 16))), node_id(6));
}

TEST(GandivaReactive, WorksWithoutTopologyOnLowestIndices) {
  const cluster c =
      to_cluster(
          cluster_builder("ws").add_nodes(node_template::workstation_4gpu, 2, "ws").build().value())
          .value();
  cluster_state state(c);
  gandiva_reactive policy(c);
  ASSERT_THAT(state.submit(make_job(1, 2)), IsOk());
  ASSERT_THAT(record(state, job_id(1), job_event::enqueue), IsOk());
  const auto d = policy.place(state, job_id(1));
  ASSERT_THAT(d, IsOk());
  ASSERT_THAT(check_decision(state, *d), IsOk());
  // No topology: node 0, devices 0 and 1.
  EXPECT_EQ(bound_devices(*d), (std::vector<std::uint32_t>{0, 1}));
}

}  // namespace
}  // namespace hetsched
