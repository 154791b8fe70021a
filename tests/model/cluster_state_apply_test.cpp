// SPDX-License-Identifier: MIT
// Tests for check_decision and apply (declared in cluster_state.hpp): good decisions commit,
// every kind of bad decision is rejected with the right code and leaves the state unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <hetsched/model/cluster_state.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

const gpu_type a100("A100-SXM4-80GB");
const gpu_type v100("V100-SXM2-32GB");

node_spec node(std::string name, std::uint32_t gpus, gpu_type type, std::int64_t gpu_memory,
               std::int64_t milli_cpu, std::int64_t hcas) {
  node_spec spec;
  spec.name = std::move(name);
  spec.milli_cpu = milli_cpu;
  spec.memory_mib = 512 * 1024;
  if (hcas > 0) spec.extended = {{"rdma/hca", hcas}};
  for (std::uint32_t i = 0; i < gpus; ++i)
    spec.devices.push_back(device_spec{type, gpu_memory, health::healthy});
  return spec;
}

// Node 0: 8 x A100 (devices 0-7), 64 cores, 2 HCAs. Node 1: 8 x A100 (devices 8-15), 64 cores,
// 2 HCAs. Node 2: 4 x V100 (devices 16-19), 32 cores, no HCA.
cluster three_nodes() {
  cluster c;
  static_cast<void>(c.add_node(node("dgx-0", 8, a100, 81920, 64000, 2)).value());
  static_cast<void>(c.add_node(node("dgx-1", 8, a100, 81920, 64000, 2)).value());
  static_cast<void>(c.add_node(node("v100-0", 4, v100, 32768, 32000, 0)).value());
  return c;
}

// `tasks` tasks of role "worker", each 1 core, 1 GiB and `gpu`.
job_spec make_job(std::uint32_t id, std::uint32_t tasks, gpu_request gpu, bool gang = true,
                  bool preemptible = true) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "job";
  spec.roles = {task_role{"worker", tasks, 1000, 1024, gpu, {}}};
  spec.gang = gang;
  spec.preemptible = preemptible;
  return spec;
}

task_placement at(std::uint32_t task, std::uint32_t node_index, std::vector<std::uint32_t> devices,
                  std::int64_t milli = 1000, std::int64_t memory = 0) {
  task_placement p{task_id(task), node_id(node_index), {}};
  for (std::uint32_t d : devices) p.devices.push_back(device_share{device_id(d), milli, memory});
  return p;
}

decision bind(std::uint32_t job, std::vector<task_placement> tasks) {
  decision d;
  d.binds.push_back(binding{job_id(job), std::move(tasks)});
  return d;
}

class ApplyDecision : public ::testing::Test {
 protected:
  // Submits and enqueues `spec`.
  void queue(const job_spec& spec) {
    ASSERT_THAT(state_.submit(spec), IsOk());
    ASSERT_THAT(record(state_, spec.id, job_event::enqueue), IsOk());
  }
  // Applies `d`, which must be accepted.
  void commit(const decision& d) {
    ASSERT_THAT(check_decision(state_, d), IsOk());
    ASSERT_THAT(apply(state_, d), IsOk());
  }
  // Queues `spec`, binds it with `tasks` and starts it.
  void run(const job_spec& spec, std::vector<task_placement> tasks) {
    queue(spec);
    commit(bind(spec.id.value(), std::move(tasks)));
    ASSERT_THAT(record(state_, spec.id, job_event::start), IsOk());
  }
  // Expects check_decision and apply to reject `d` with `code` and `text`, state unchanged.
  void expect_rejected(const decision& d, errc code, const std::string& text) {
    const cluster_state before = state_;
    EXPECT_THAT(check_decision(state_, d), HasErrc(code));
    const auto r = apply(state_, d);
    EXPECT_THAT(r, HasErrc(code));
    EXPECT_THAT(r, ErrorContains(text));
    EXPECT_EQ(state_, before);
  }
  job_state state_of(std::uint32_t job) const { return state_.status(job_id(job)).value().state; }

  cluster_state state_{three_nodes()};
};

TEST_F(ApplyDecision, BindsAGangJobOntoWholeGpus) {
  queue(make_job(1, 2, whole_gpus(4, a100)));
  commit(bind(1, {at(0, 0, {0, 1, 2, 3}), at(1, 0, {4, 5, 6, 7})}));
  // scheduled; node 0 fully used: 8000 milli-GPU, 2 cores, 2 GiB
  EXPECT_EQ(state_of(1), job_state::scheduled);
  EXPECT_EQ(state_.node_used(node_id(0)).milli_gpu, 8000);
  EXPECT_EQ(state_.node_used(node_id(0)).milli_cpu, 2000);
  EXPECT_EQ(state_.node_used(node_id(0)).memory_mib, 2048);
  EXPECT_EQ(state_.device_used(device_id(5)).holders,
            (std::vector<device_holder>{device_holder{job_id(1), task_id(1), 1000, 0}}));
  EXPECT_EQ(state_.placement(job_id(1)).value()[1], at(1, 0, {4, 5, 6, 7}));
  EXPECT_EQ(state_.total_used().milli_gpu, 8000);
}

TEST_F(ApplyDecision, FractionalGpusShareOneDeviceUpTo1000Milli) {
  decision d;
  for (std::uint32_t j = 1; j <= 5; ++j) {
    queue(make_job(j, 1, fractional_gpu(250)));
    d.binds.push_back(binding{job_id(j), {at(0, 0, {0}, 250)}});
  }
  // five quarters do not fit on one device in one decision
  expect_rejected(d, errc::failed_precondition,
                  "bind of job 5 task 0: device 0 has 0 milli-GPU free, needs 250");
  d.binds.pop_back();
  commit(d);
  // four quarters fill device 0; holders in job order
  EXPECT_EQ(state_.device_free(device_id(0)).milli_gpu, 0);
  ASSERT_EQ(state_.device_used(device_id(0)).holders.size(), 4U);
  EXPECT_EQ(state_.device_used(device_id(0)).holders[3].job, job_id(4));
  EXPECT_EQ(state_.node_used(node_id(0)).milli_gpu, 1000);
  // the fifth still does not fit afterwards, but fits on device 1
  expect_rejected(bind(5, {at(0, 0, {0}, 250)}), errc::failed_precondition,
                  "device 0 has 0 milli-GPU free");
  commit(bind(5, {at(0, 0, {1}, 250)}));
  EXPECT_EQ(state_.device_free(device_id(1)).milli_gpu, 750);
}

TEST_F(ApplyDecision, FractionalGpusRespectGpuMemory) {
  for (std::uint32_t j = 1; j <= 3; ++j) queue(make_job(j, 1, fractional_gpu(100, a100, 40960)));
  commit(bind(1, {at(0, 0, {0}, 100, 40960)}));
  commit(bind(2, {at(0, 0, {0}, 100, 40960)}));
  // 2 x 40960 = 81920 MiB: the device memory is exhausted while 800 milli-GPU remain
  EXPECT_EQ(state_.device_free(device_id(0)), (device_capacity{800, 0}));
  expect_rejected(bind(3, {at(0, 0, {0}, 100, 40960)}), errc::failed_precondition,
                  "bind of job 3 task 0: device 0 has 0 MiB GPU memory free, needs 40960");
}

TEST_F(ApplyDecision, ErrorNamesJobTaskDeviceAndAmounts) {
  run(make_job(3, 1, fractional_gpu(750)), {at(0, 1, {13}, 750)});
  queue(make_job(7, 3, whole_gpus(1), /*gang=*/false));
  expect_rejected(bind(7, {at(0, 1, {8}), at(1, 1, {9}), at(2, 1, {13})}),
                  errc::failed_precondition,
                  "bind of job 7 task 2: device 13 has 250 milli-GPU free, needs 1000");
}

TEST_F(ApplyDecision, PreemptsAAndBindsBOntoItsGpusInOneDecision) {
  run(make_job(1, 1, whole_gpus(8)), {at(0, 0, {0, 1, 2, 3, 4, 5, 6, 7})});
  queue(make_job(2, 1, whole_gpus(8)));
  // alone, the bind does not fit
  expect_rejected(bind(2, {at(0, 0, {0, 1, 2, 3, 4, 5, 6, 7})}), errc::failed_precondition,
                  "device 0 has 0 milli-GPU free, needs 1000");

  decision d = bind(2, {at(0, 0, {0, 1, 2, 3, 4, 5, 6, 7})});
  d.preemptions.push_back(preemption{job_id(1), "priority"});
  commit(d);
  // A preempted with no placement, B scheduled on the same GPUs
  EXPECT_EQ(state_of(1), job_state::preempted);
  EXPECT_FALSE(state_.placement(job_id(1)).value()[0].node.valid());
  EXPECT_EQ(state_of(2), job_state::scheduled);
  EXPECT_EQ(state_.device_used(device_id(7)).holders,
            (std::vector<device_holder>{device_holder{job_id(2), task_id(0), 1000, 0}}));
  EXPECT_EQ(state_.node_used(node_id(0)).milli_cpu, 1000);
  // the platform confirms the kill
  ASSERT_THAT(record(state_, job_id(1), job_event::requeue), IsOk());
  EXPECT_EQ(state_of(1), job_state::queued);
}

TEST_F(ApplyDecision, SuspendFreesAndResumeReacquiresTheSamePlacement) {
  run(make_job(1, 2, whole_gpus(2)), {at(0, 0, {0, 1}), at(1, 1, {8, 9})});
  decision suspend;
  suspend.suspensions.push_back(suspension{job_id(1)});
  commit(suspend);
  // suspended: nothing held, placement remembered
  EXPECT_EQ(state_of(1), job_state::suspended);
  EXPECT_TRUE(state_.total_used().is_zero());
  EXPECT_EQ(state_.placement(job_id(1)).value()[1], at(1, 1, {8, 9}));

  // another job takes device 9 meanwhile: resume must wait
  run(make_job(2, 1, whole_gpus(1)), {at(0, 1, {9})});
  decision resume;
  resume.resumes.push_back(resumption{job_id(1)});
  expect_rejected(resume, errc::failed_precondition,
                  "resume of job 1 task 1: device 9 has 0 milli-GPU free, needs 1000");

  ASSERT_THAT(record(state_, job_id(2), job_event::succeed), IsOk());
  commit(resume);
  // running again on devices 0, 1, 8, 9
  EXPECT_EQ(state_of(1), job_state::running);
  EXPECT_EQ(state_.total_used().milli_gpu, 4000);
  EXPECT_EQ(state_.device_used(device_id(9)).holders[0].job, job_id(1));
}

TEST_F(ApplyDecision, MigrationMovesTasksAndReleasesSourcesFirst) {
  run(make_job(1, 2, whole_gpus(1)), {at(0, 0, {0}), at(1, 0, {1})});
  decision move;
  move.migrations.push_back(migration{job_id(1), {at(0, 1, {8})}});
  commit(move);
  // task 0 now on node 1 device 8; task 1 stays on device 1
  EXPECT_EQ(state_of(1), job_state::running);
  EXPECT_EQ(state_.placement(job_id(1)).value()[0], at(0, 1, {8}));
  EXPECT_EQ(state_.device_free(device_id(0)).milli_gpu, 1000);
  EXPECT_EQ(state_.device_free(device_id(8)).milli_gpu, 0);
  EXPECT_EQ(state_.node_used(node_id(0)).milli_cpu, 1000);
  EXPECT_EQ(state_.node_used(node_id(1)).milli_cpu, 1000);

  // swapping two tasks' devices works because sources are released before targets are taken
  run(make_job(2, 2, whole_gpus(1)), {at(0, 2, {16}), at(1, 2, {17})});
  decision swap;
  swap.migrations.push_back(migration{job_id(2), {at(0, 2, {17}), at(1, 2, {16})}});
  commit(swap);
  EXPECT_EQ(state_.device_used(device_id(16)).holders[0].task, task_id(1));
  EXPECT_EQ(state_.device_used(device_id(17)).holders[0].task, task_id(0));
}

TEST_F(ApplyDecision, NonGangJobBindsSubsetsThenMoreTasks) {
  queue(make_job(1, 3, whole_gpus(1), /*gang=*/false));
  commit(bind(1, {at(1, 0, {0})}));
  // one task placed: scheduled
  EXPECT_EQ(state_of(1), job_state::scheduled);
  commit(bind(1, {at(0, 0, {1}), at(2, 1, {8})}));
  EXPECT_EQ(state_of(1), job_state::scheduled);
  EXPECT_EQ(state_.total_used().milli_gpu, 3000);
  expect_rejected(bind(1, {at(1, 0, {2})}), errc::failed_precondition,
                  "bind of job 1 task 1: task is already bound to node 0");
}

TEST_F(ApplyDecision, RejectsUnknownIds) {
  queue(make_job(1, 2, whole_gpus(1), /*gang=*/false));
  expect_rejected(bind(99, {at(0, 0, {0})}), errc::not_found, "bind of job 99: unknown job");
  expect_rejected(bind(1, {at(2, 0, {0})}), errc::not_found,
                  "bind of job 1 task 2: unknown task (job has 2 tasks)");
  expect_rejected(bind(1, {at(0, 3, {0})}), errc::not_found,
                  "bind of job 1 task 0: unknown node 3");
  expect_rejected(bind(1, {at(0, 2, {20})}), errc::not_found,
                  "bind of job 1 task 0: unknown device 20");
  decision defer;
  defer.deferrals.push_back(deferral{job_id(42), defer_reason::quota_exceeded, ""});
  expect_rejected(defer, errc::not_found, "deferral of job 42: unknown job");
  decision preempt;
  preempt.preemptions.push_back(preemption{job_id(42), ""});
  expect_rejected(preempt, errc::not_found, "preemption of job 42: unknown job");
}

TEST_F(ApplyDecision, RejectsAJobInTwoEntries) {
  run(make_job(1, 1, whole_gpus(1)), {at(0, 0, {0})});
  queue(make_job(2, 1, whole_gpus(1)));
  decision both;
  both.preemptions.push_back(preemption{job_id(1), ""});
  both.suspensions.push_back(suspension{job_id(1)});
  expect_rejected(both, errc::invalid_argument,
                  "job 1 appears twice in the decision (preemption and suspension)");
  decision twice = bind(2, {at(0, 0, {1})});
  twice.binds.push_back(binding{job_id(2), {at(0, 0, {2})}});
  expect_rejected(twice, errc::invalid_argument,
                  "job 2 appears twice in the decision (bind and bind)");
  decision bind_and_defer = bind(2, {at(0, 0, {1})});
  bind_and_defer.deferrals.push_back(deferral{job_id(2), defer_reason::fragmented, ""});
  expect_rejected(bind_and_defer, errc::invalid_argument, "(bind and deferral)");
}

TEST_F(ApplyDecision, RejectsTransitionsTheJobStateForbids) {
  ASSERT_THAT(state_.submit(make_job(1, 1, whole_gpus(1))), IsOk());
  expect_rejected(bind(1, {at(0, 0, {0})}), errc::failed_precondition,
                  "bind of job 1: job is submitted, bind needs queued");
  queue(make_job(2, 1, whole_gpus(1)));
  commit(bind(2, {at(0, 0, {0})}));
  // a scheduled gang job cannot be bound again
  expect_rejected(bind(2, {at(0, 0, {1})}), errc::failed_precondition,
                  "bind of job 2: job is scheduled");

  decision suspend_scheduled;
  suspend_scheduled.suspensions.push_back(suspension{job_id(2)});
  expect_rejected(suspend_scheduled, errc::failed_precondition,
                  "suspension of job 2: job is scheduled, suspension needs running");
  decision resume_scheduled;
  resume_scheduled.resumes.push_back(resumption{job_id(2)});
  expect_rejected(resume_scheduled, errc::failed_precondition, "resume of job 2: job is scheduled");

  queue(make_job(3, 1, whole_gpus(1)));
  decision preempt_queued;
  preempt_queued.preemptions.push_back(preemption{job_id(3), ""});
  expect_rejected(preempt_queued, errc::failed_precondition, "preemption of job 3: job is queued");
  decision migrate_queued;
  migrate_queued.migrations.push_back(migration{job_id(3), {at(0, 0, {1})}});
  expect_rejected(migrate_queued, errc::failed_precondition, "migration of job 3: job is queued");

  run(make_job(4, 1, whole_gpus(1), true, /*preemptible=*/false), {at(0, 0, {5})});
  decision preempt_pinned;
  preempt_pinned.preemptions.push_back(preemption{job_id(4), ""});
  expect_rejected(preempt_pinned, errc::failed_precondition,
                  "preemption of job 4: job is not preemptible");
}

TEST_F(ApplyDecision, RejectsIncompleteGangsAndBadTaskLists) {
  queue(make_job(1, 2, whole_gpus(1)));
  expect_rejected(bind(1, {at(0, 0, {0})}), errc::invalid_argument,
                  "bind of job 1: gang job has 2 tasks, bind covers 1");
  expect_rejected(bind(1, {at(0, 0, {0}), at(0, 0, {1})}), errc::invalid_argument,
                  "bind of job 1 task 0: task listed twice");
  expect_rejected(bind(1, {}), errc::invalid_argument, "bind of job 1: no tasks");
}

TEST_F(ApplyDecision, RejectsPlacementsInconsistentWithTheRequest) {
  queue(make_job(1, 1, whole_gpus(2, v100)));
  expect_rejected(bind(1, {at(0, 2, {16})}), errc::invalid_argument,
                  "bind of job 1 task 0: 1 devices given, role 'worker' requests 2");
  expect_rejected(bind(1, {at(0, 2, {16, 3})}), errc::invalid_argument,
                  "bind of job 1 task 0: device 3 is on node 0, not node 2");
  expect_rejected(bind(1, {at(0, 2, {16, 16})}), errc::invalid_argument,
                  "bind of job 1 task 0: device 16 listed twice");
  expect_rejected(
      bind(1, {at(0, 0, {0, 1})}), errc::invalid_argument,
      "bind of job 1 task 0: device 0 is A100-SXM4-80GB, role 'worker' requests V100-SXM2-32GB");
  expect_rejected(bind(1, {at(0, 2, {16, 17}, 500)}), errc::invalid_argument,
                  "device 16 share is 500 milli-GPU, role 'worker' requests 1000");
  expect_rejected(bind(1, {at(0, 2, {16, 17}, 1000, 1024)}), errc::invalid_argument,
                  "device 16 share is 1024 MiB GPU memory, role 'worker' requests 0");
  commit(bind(1, {at(0, 2, {16, 17})}));
}

TEST_F(ApplyDecision, RejectsNewPlacementsOnUnhealthyOrCordonedHardware) {
  run(make_job(1, 1, whole_gpus(1)), {at(0, 1, {8})});
  ASSERT_THAT(state_.set_node_health(node_id(1), health::unhealthy), IsOk());
  ASSERT_THAT(state_.set_node_health(node_id(2), health::cordoned), IsOk());
  ASSERT_THAT(state_.set_device_health(device_id(3), health::unhealthy), IsOk());
  queue(make_job(2, 1, whole_gpus(1)));
  expect_rejected(bind(2, {at(0, 1, {9})}), errc::failed_precondition,
                  "bind of job 2 task 0: node 1 is unhealthy");
  expect_rejected(bind(2, {at(0, 2, {16})}), errc::failed_precondition, "node 2 is cordoned");
  expect_rejected(bind(2, {at(0, 0, {3})}), errc::failed_precondition,
                  "bind of job 2 task 0: device 3 is unhealthy");
  decision away;
  away.migrations.push_back(migration{job_id(1), {at(0, 1, {10})}});
  expect_rejected(away, errc::failed_precondition,
                  "migration of job 1 task 0: node 1 is unhealthy");
  // job 1 keeps running on the unhealthy node and can be moved to a healthy one
  EXPECT_EQ(state_of(1), job_state::running);
  away.migrations[0].tasks[0] = at(0, 0, {4});
  commit(away);
  EXPECT_EQ(state_.device_free(device_id(8)).milli_gpu, 1000);
}

TEST_F(ApplyDecision, RejectsNodeCapacityOverruns) {
  job_spec cpu_heavy = make_job(1, 2, whole_gpus(1));
  cpu_heavy.roles[0].milli_cpu = 40000;
  queue(cpu_heavy);
  // 64000 - 40000 = 24000 left for the second task
  expect_rejected(bind(1, {at(0, 0, {0}), at(1, 0, {1})}), errc::failed_precondition,
                  "bind of job 1 task 1: node 0 has 24000 milli-CPU free, needs 40000");

  job_spec memory_heavy = make_job(2, 1, whole_gpus(1));
  memory_heavy.roles[0].memory_mib = 600 * 1024;
  queue(memory_heavy);
  expect_rejected(bind(2, {at(0, 0, {0})}), errc::failed_precondition,
                  "node 0 has 524288 MiB memory free, needs 614400");

  job_spec rdma = make_job(3, 3, whole_gpus(1));
  rdma.roles[0].extended = {{"rdma/hca", 1}};
  queue(rdma);
  expect_rejected(bind(3, {at(0, 0, {0}), at(1, 0, {1}), at(2, 0, {2})}), errc::failed_precondition,
                  "bind of job 3 task 2: node 0 has 0 of 'rdma/hca' free, needs 1");
  // node 2 has no HCA at all
  expect_rejected(bind(3, {at(0, 2, {16}), at(1, 2, {17}), at(2, 2, {18})}),
                  errc::failed_precondition, "node 2 has 0 of 'rdma/hca' free, needs 1");
  commit(bind(3, {at(0, 0, {0}), at(1, 0, {1}), at(2, 1, {8})}));
  EXPECT_EQ(state_.node_free(node_id(0)).extended_amount("rdma/hca"), 0);
}

TEST_F(ApplyDecision, RejectsADeviceUsedTwiceInOneDecision) {
  queue(make_job(1, 1, whole_gpus(1)));
  queue(make_job(2, 1, whole_gpus(1)));
  decision d = bind(1, {at(0, 0, {3})});
  d.binds.push_back(binding{job_id(2), {at(0, 0, {3})}});
  expect_rejected(d, errc::failed_precondition,
                  "bind of job 2 task 0: device 3 has 0 milli-GPU free, needs 1000");
}

TEST_F(ApplyDecision, DeferralsAndEmptyDecisionsChangeNothing) {
  queue(make_job(1, 1, whole_gpus(16)));
  const cluster_state before = state_;
  decision d;
  commit(d);
  d.deferrals.push_back(deferral{job_id(1), defer_reason::fragmented, "16 GPUs on no node"});
  commit(d);
  // still queued, state identical
  EXPECT_EQ(state_, before);
}

TEST_F(ApplyDecision, IsDeterministic) {
  for (std::uint32_t j = 1; j <= 4; ++j) queue(make_job(j, 1, fractional_gpu(250)));
  decision forward;
  for (std::uint32_t j = 1; j <= 4; ++j)
    forward.binds.push_back(binding{job_id(j), {at(0, 0, {0}, 250)}});
  decision backward = forward;
  std::reverse(backward.binds.begin(), backward.binds.end());

  cluster_state a = state_;
  cluster_state b = state_;
  ASSERT_THAT(apply(a, forward), IsOk());
  ASSERT_THAT(apply(b, backward), IsOk());
  // the same commitments in any order give the same state; holders sorted by job
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.device_used(device_id(0)).holders.front().job, job_id(1));

  // with several problems, the first in the documented order is reported, every time: the
  // preemption is checked before the (empty) bind
  decision bad = bind(2, {});
  bad.preemptions.push_back(preemption{job_id(1), ""});
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(check_decision(state_, bad), ErrorContains("preemption of job 1: job is queued"));
  }
  bad.deferrals.push_back(deferral{job_id(77), defer_reason::fragmented, ""});
  // unknown job ids are found before any state check
  EXPECT_THAT(check_decision(state_, bad), ErrorContains("deferral of job 77: unknown job"));
}

}  // namespace
}  // namespace hetsched
