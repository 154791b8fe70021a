// SPDX-License-Identifier: MIT
// Tests for cluster_state: construction, health events, submit, record and accessors.
// check_decision and apply are tested in cluster_state_apply_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hetsched/model/cluster_state.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

const gpu_type a100("A100-SXM4-80GB");

// Node 0: 2 x A100 (devices 0-1), 16 cores, 64 GiB. Node 1: CPU only, 8 cores, 16 GiB.
cluster two_nodes() {
  cluster c;
  node_spec gpu;
  gpu.name = "gpu-0";
  gpu.milli_cpu = 16000;
  gpu.memory_mib = 65536;
  gpu.extended = {{"rdma/hca", 1}};
  gpu.devices = {device_spec{a100, 81920, health::healthy},
                 device_spec{a100, 81920, health::healthy}};
  static_cast<void>(c.add_node(gpu).value());
  node_spec cpu;
  cpu.name = "cpu-0";
  cpu.milli_cpu = 8000;
  cpu.memory_mib = 16384;
  static_cast<void>(c.add_node(cpu).value());
  return c;
}

// One task asking for `gpus` whole A100s, 4 cores and 8 GiB.
job_spec one_task_job(std::uint32_t id, std::uint32_t gpus, std::uint32_t retry_limit = 0) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "job";
  spec.roles = {task_role{"main", 1, 4000, 8192, whole_gpus(gpus), {{"rdma/hca", 1}}}};
  spec.retry_limit = retry_limit;
  spec.preemptible = true;
  return spec;
}

// Submits, enqueues and binds job `id` onto devices 0..gpus-1 of node 0.
void place(cluster_state& state, std::uint32_t id, std::uint32_t gpus,
           std::uint32_t retry_limit = 0) {
  ASSERT_THAT(state.submit(one_task_job(id, gpus, retry_limit)), IsOk());
  ASSERT_THAT(record(state, job_id(id), job_event::enqueue), IsOk());
  task_placement p{task_id(0), node_id(0), {}};
  for (std::uint32_t g = 0; g < gpus; ++g) p.devices.push_back(device_share{device_id(g), 1000, 0});
  decision d;
  d.binds.push_back(binding{job_id(id), {p}});
  ASSERT_THAT(apply(state, d), IsOk());
}

TEST(ClusterState, StartsEmptyWithTheDescribedHealth) {
  cluster c = two_nodes();
  const cluster_state state(c);
  // nothing used: device 0 has a whole GPU and 81920 MiB free
  EXPECT_EQ(state.device_free(device_id(0)), (device_capacity{1000, 81920}));
  EXPECT_TRUE(state.device_used(device_id(1)).holders.empty());
  EXPECT_EQ(state.node_free(node_id(0)), c.node(node_id(0)).allocatable);
  EXPECT_TRUE(state.node_used(node_id(1)).is_zero());
  EXPECT_TRUE(state.total_used().is_zero());
  EXPECT_EQ(state.node_health(node_id(1)), health::healthy);
  EXPECT_TRUE(state.jobs().empty());
  EXPECT_EQ(state.cluster(), c);
}

TEST(ClusterState, HealthEventsOverrideTheDescription) {
  cluster_state state(two_nodes());
  ASSERT_THAT(state.set_node_health(node_id(1), health::cordoned), IsOk());
  ASSERT_THAT(state.set_device_health(device_id(1), health::unhealthy), IsOk());
  // the state changes, the shared description does not
  EXPECT_EQ(state.node_health(node_id(1)), health::cordoned);
  EXPECT_EQ(state.device_health(device_id(1)), health::unhealthy);
  EXPECT_EQ(state.cluster().device(device_id(1)).health, health::healthy);

  const cluster_state before = state;
  EXPECT_THAT(state.set_node_health(node_id(2), health::healthy), HasErrc(errc::not_found));
  EXPECT_THAT(state.set_device_health(device_id(2), health::healthy), HasErrc(errc::not_found));
  EXPECT_THAT(state.set_device_health(device_id(2), health::healthy), ErrorContains("device 2"));
  EXPECT_EQ(state, before);
}

TEST(ClusterState, SubmitRegistersASubmittedJobWithUnplacedTasks) {
  cluster_state state(two_nodes());
  job_spec spec = one_task_job(7, 1);
  spec.roles[0].task_count = 3;
  ASSERT_THAT(state.submit(spec), IsOk());
  // submitted, no attempts, three unplaced tasks 0..2
  EXPECT_EQ(state.status(job_id(7)).value(), (job_status{job_state::submitted, 0}));
  const auto placement = state.placement(job_id(7)).value();
  ASSERT_EQ(placement.size(), 3U);
  EXPECT_EQ(placement[2].task, task_id(2));
  EXPECT_FALSE(placement[2].node.valid());
  EXPECT_TRUE(placement[2].devices.empty());
  EXPECT_EQ(state.find_job(job_id(7))->spec, spec);
  EXPECT_EQ(state.find_job(job_id(8)), nullptr);
  EXPECT_THAT(state.status(job_id(8)), HasErrc(errc::not_found));
  EXPECT_THAT(state.placement(job_id(8)), HasErrc(errc::not_found));
}

TEST(ClusterState, SubmitRejectsInvalidAndDuplicateJobs) {
  cluster_state state(two_nodes());
  ASSERT_THAT(state.submit(one_task_job(7, 1)), IsOk());
  const cluster_state before = state;
  EXPECT_THAT(state.submit(one_task_job(7, 2)), HasErrc(errc::already_exists));
  EXPECT_THAT(state.submit(one_task_job(7, 2)), ErrorContains("job 7 already exists"));
  job_spec bad = one_task_job(8, 1);
  bad.roles[0].task_count = 0;
  EXPECT_THAT(state.submit(bad), HasErrc(errc::invalid_argument));
  // unchanged: still one job
  EXPECT_EQ(state, before);
  EXPECT_EQ(state.jobs().size(), 1U);
}

TEST(ClusterState, RecordWalksThePlatformEvents) {
  cluster_state state(two_nodes());
  place(state, 7, 2);
  // bound: scheduled, both GPUs held by job 7 task 0
  EXPECT_EQ(state.status(job_id(7))->state, job_state::scheduled);
  EXPECT_EQ(state.device_used(device_id(0)).holders,
            (std::vector<device_holder>{device_holder{job_id(7), task_id(0), 1000, 0}}));
  EXPECT_EQ(state.device_free(device_id(1)), (device_capacity{0, 81920}));
  // node 0 used: 2000 milli-GPU, 4000 milli-CPU, 8192 MiB, one HCA
  EXPECT_EQ(state.node_used(node_id(0)).milli_gpu, 2000);
  EXPECT_EQ(state.node_used(node_id(0)).milli_cpu, 4000);
  EXPECT_EQ(state.node_used(node_id(0)).memory_mib, 8192);
  EXPECT_EQ(state.node_free(node_id(0)).extended_amount("rdma/hca"), 0);
  EXPECT_EQ(state.total_used(), state.node_used(node_id(0)));

  ASSERT_THAT(record(state, job_id(7), job_event::start), IsOk());
  EXPECT_EQ(state.status(job_id(7))->state, job_state::running);
  ASSERT_THAT(record(state, job_id(7), job_event::succeed), IsOk());
  // succeeded: everything released, placement cleared
  EXPECT_EQ(state.status(job_id(7))->state, job_state::succeeded);
  EXPECT_TRUE(state.total_used().is_zero());
  EXPECT_TRUE(state.node_used(node_id(0)).is_zero());
  EXPECT_EQ(state.device_free(device_id(0)), (device_capacity{1000, 81920}));
  EXPECT_TRUE(state.device_used(device_id(0)).holders.empty());
  EXPECT_FALSE(state.placement(job_id(7)).value()[0].node.valid());
}

TEST(ClusterState, RecordFailRetriesThenFailsForGood) {
  cluster_state state(two_nodes());
  place(state, 7, 1, /*retry_limit=*/1);
  ASSERT_THAT(record(state, job_id(7), job_event::fail), IsOk());
  // attempt 1 <= 1: queued again, resources released
  EXPECT_EQ(state.status(job_id(7)).value(), (job_status{job_state::queued, 1}));
  EXPECT_TRUE(state.total_used().is_zero());

  decision again;
  again.binds.push_back(binding{
      job_id(7), {task_placement{task_id(0), node_id(0), {device_share{device_id(1), 1000, 0}}}}});
  ASSERT_THAT(apply(state, again), IsOk());
  ASSERT_THAT(record(state, job_id(7), job_event::start), IsOk());
  ASSERT_THAT(record(state, job_id(7), job_event::fail), IsOk());
  // attempt 2 > 1: failed
  EXPECT_EQ(state.status(job_id(7)).value(), (job_status{job_state::failed, 2}));
  EXPECT_TRUE(state.total_used().is_zero());
  EXPECT_EQ(state.device_free(device_id(1)).milli_gpu, 1000);
}

TEST(ClusterState, RecordCancelReleasesFromAnyLiveState) {
  cluster_state state(two_nodes());
  place(state, 7, 1);
  ASSERT_THAT(state.submit(one_task_job(8, 1)), IsOk());
  ASSERT_THAT(record(state, job_id(8), job_event::cancel), IsOk());
  ASSERT_THAT(record(state, job_id(7), job_event::cancel), IsOk());
  // both cancelled; job 7's GPU is free again
  EXPECT_EQ(state.status(job_id(8))->state, job_state::cancelled);
  EXPECT_EQ(state.status(job_id(7))->state, job_state::cancelled);
  EXPECT_TRUE(state.total_used().is_zero());
  EXPECT_THAT(record(state, job_id(7), job_event::cancel), HasErrc(errc::failed_precondition));
}

TEST(ClusterState, RecordRejectsUnknownJobsApplyEventsAndIllegalTransitions) {
  cluster_state state(two_nodes());
  ASSERT_THAT(state.submit(one_task_job(7, 1)), IsOk());
  const cluster_state before = state;

  EXPECT_THAT(record(state, job_id(9), job_event::enqueue), HasErrc(errc::not_found));
  EXPECT_THAT(record(state, job_id(9), job_event::enqueue), ErrorContains("job 9: unknown job"));
  for (job_event e :
       {job_event::schedule, job_event::preempt, job_event::suspend, job_event::resume}) {
    EXPECT_THAT(record(state, job_id(7), e), HasErrc(errc::invalid_argument));
  }
  EXPECT_THAT(record(state, job_id(7), job_event::schedule),
              ErrorContains("job 7: event 'schedule' comes from apply(), not record()"));
  EXPECT_THAT(record(state, job_id(7), job_event::start), HasErrc(errc::failed_precondition));
  EXPECT_THAT(record(state, job_id(7), job_event::start),
              ErrorContains("job 7: event 'start' is not allowed in state 'submitted'"));
  // nothing changed
  EXPECT_EQ(state, before);
}

TEST(ClusterState, ForgetDropsOnlyTerminalJobs) {
  cluster_state state(two_nodes());
  place(state, 7, 1);
  EXPECT_THAT(state.forget(job_id(7)), HasErrc(errc::failed_precondition));
  EXPECT_THAT(state.forget(job_id(8)), HasErrc(errc::not_found));
  ASSERT_THAT(record(state, job_id(7), job_event::cancel), IsOk());
  ASSERT_THAT(state.forget(job_id(7)), IsOk());
  // gone
  EXPECT_EQ(state.find_job(job_id(7)), nullptr);
}

TEST(ClusterState, EqualityComparesContentNotSharing) {
  const cluster_state a(two_nodes());
  const cluster_state b(two_nodes());
  // separate but equal descriptions
  EXPECT_NE(a.shared_cluster(), b.shared_cluster());
  EXPECT_EQ(a, b);
  cluster_state c = a;
  EXPECT_EQ(c.shared_cluster(), a.shared_cluster());
  ASSERT_THAT(c.set_node_health(node_id(0), health::unhealthy), IsOk());
  EXPECT_NE(c, a);
}

}  // namespace
}  // namespace hetsched
