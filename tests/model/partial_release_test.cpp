// SPDX-License-Identifier: MIT
// Tests for partial_release (decision.hpp) through check_decision and apply: some tasks of a
// running non-gang job give their resources back, the job keeps running on the others, and the
// freed resources serve a bind of the same decision; every misuse is rejected with the state
// unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/model/cluster_state.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

// One node with 4 GPUs (devices 0-3), 8 cores.
cluster one_node() {
  cluster c;
  node_spec spec;
  spec.name = "n0";
  spec.milli_cpu = 8000;
  spec.memory_mib = 64 * 1024;
  for (int i = 0; i < 4; ++i)
    spec.devices.push_back(device_spec{gpu_type("A100-SXM4-80GB"), 81920, health::healthy});
  static_cast<void>(c.add_node(spec).value());
  return c;
}

job_spec make_job(std::uint32_t id, std::uint32_t tasks, bool gang, bool preemptible = true) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "job";
  spec.roles = {task_role{"worker", tasks, 1000, 1024, whole_gpus(1), {}}};
  spec.gang = gang;
  spec.preemptible = preemptible;
  return spec;
}

task_placement on(std::uint32_t task, std::uint32_t device) {
  return task_placement{task_id(task), node_id(0), {device_share{device_id(device), 1000, 0}}};
}

decision release(std::uint32_t job, std::vector<std::uint32_t> tasks) {
  decision d;
  partial_release r{job_id(job), {}};
  for (std::uint32_t t : tasks) r.tasks.push_back(task_id(t));
  d.releases.push_back(std::move(r));
  return d;
}

class PartialRelease : public ::testing::Test {
 protected:
  // Submits `spec`, binds task t onto device devices[t] and starts it.
  void run(const job_spec& spec, const std::vector<std::uint32_t>& devices) {
    ASSERT_THAT(state_.submit(spec), IsOk());
    ASSERT_THAT(record(state_, spec.id, job_event::enqueue), IsOk());
    decision d;
    binding b{spec.id, {}};
    for (std::size_t t = 0; t < devices.size(); ++t)
      b.tasks.push_back(on(static_cast<std::uint32_t>(t), devices[t]));
    d.binds.push_back(std::move(b));
    ASSERT_THAT(apply(state_, d), IsOk());
    ASSERT_THAT(record(state_, spec.id, job_event::start), IsOk());
  }
  void expect_rejected(const decision& d, errc code, const std::string& text) {
    const cluster_state before = state_;
    EXPECT_THAT(check_decision(state_, d), HasErrc(code));
    const auto r = apply(state_, d);
    EXPECT_THAT(r, HasErrc(code));
    EXPECT_THAT(r, ErrorContains(text));
    EXPECT_EQ(state_, before);
  }

  cluster_state state_{one_node()};
};

TEST_F(PartialRelease, ReleasedTasksFreeTheirGpusAndTheJobKeepsRunning) {
  // Job 1: 4 non-gang tasks on devices 0-3.
  run(make_job(1, 4, false), {0, 1, 2, 3});
  ASSERT_EQ(state_.total_used().milli_gpu, 4000);
  const decision d = release(1, {3, 2});
  EXPECT_FALSE(d.empty());
  ASSERT_THAT(apply(state_, d), IsOk());
  // Tasks 0 and 1 keep devices 0 and 1; tasks 2 and 3 are unplaced; the job still runs.
  EXPECT_EQ(state_.status(job_id(1)).value().state, job_state::running);
  const auto placement = state_.placement(job_id(1)).value();
  EXPECT_EQ(placement[0].node, node_id(0));
  EXPECT_EQ(placement[0].devices[0].device, device_id(0));
  EXPECT_EQ(placement[1].devices[0].device, device_id(1));
  EXPECT_FALSE(placement[2].node.valid());
  EXPECT_TRUE(placement[3].devices.empty());
  EXPECT_EQ(state_.total_used().milli_gpu, 2000);
  EXPECT_EQ(state_.total_used().milli_cpu, 2000);
  EXPECT_EQ(state_.device_used(device_id(2)).milli_gpu, 0);
  EXPECT_TRUE(state_.device_used(device_id(3)).holders.empty());
  // The released tasks can be bound again later (the job grows back).
  decision grow;
  grow.binds.push_back(binding{job_id(1), {on(2, 3)}});
  ASSERT_THAT(apply(state_, grow), IsOk());
  EXPECT_EQ(state_.total_used().milli_gpu, 3000);
}

TEST_F(PartialRelease, FreedGpusServeABindOfTheSameDecision) {
  run(make_job(1, 4, false), {0, 1, 2, 3});
  // Job 2 (2 GPUs, gang) waits; releasing tasks 2 and 3 of job 1 makes room on devices 2 and 3.
  const job_spec two = make_job(2, 2, true);
  ASSERT_THAT(state_.submit(two), IsOk());
  ASSERT_THAT(record(state_, two.id, job_event::enqueue), IsOk());
  decision bind_only;
  bind_only.binds.push_back(binding{job_id(2), {on(0, 2), on(1, 3)}});
  // Without the release the bind does not fit.
  EXPECT_THAT(check_decision(state_, bind_only), HasErrc(errc::failed_precondition));
  decision d = release(1, {2, 3});
  d.binds = bind_only.binds;
  ASSERT_THAT(apply(state_, d), IsOk());
  EXPECT_EQ(state_.status(job_id(2)).value().state, job_state::scheduled);
  EXPECT_EQ(state_.status(job_id(1)).value().state, job_state::running);
  EXPECT_EQ(state_.device_used(device_id(3)).holders.front().job, job_id(2));
  EXPECT_EQ(state_.total_used().milli_gpu, 4000);
}

TEST_F(PartialRelease, RejectsWhatItCannotDo) {
  run(make_job(1, 2, false), {0, 1});
  run(make_job(2, 2, true), {2, 3});
  expect_rejected(release(1, {0, 1}), errc::failed_precondition,
                  "release of job 1: it would release all 2 placed tasks (preempt it instead)");
  expect_rejected(release(2, {1}), errc::failed_precondition, "release of job 2: gang job");
  expect_rejected(release(1, {2}), errc::not_found,
                  "release of job 1 task 2: unknown task (job has 2 tasks)");
  expect_rejected(release(1, {1, 1}), errc::invalid_argument,
                  "release of job 1 task 1: task listed twice");
  expect_rejected(release(1, {}), errc::invalid_argument, "release of job 1: no tasks");
  expect_rejected(release(9, {0}), errc::not_found, "release of job 9: unknown job");
  decision twice = release(1, {1});
  twice.suspensions.push_back(suspension{job_id(1)});
  expect_rejected(twice, errc::invalid_argument,
                  "job 1 appears twice in the decision (suspension and release)");
}

TEST_F(PartialRelease, NeedsAPreemptibleScheduledOrRunningJobAndPlacedTasks) {
  run(make_job(1, 2, false, /*preemptible=*/false), {0, 1});
  expect_rejected(release(1, {1}), errc::failed_precondition,
                  "release of job 1: job is not preemptible");
  // Job 2: 3 tasks, only tasks 0 and 1 placed.
  const job_spec three = make_job(2, 3, false);
  ASSERT_THAT(state_.submit(three), IsOk());
  ASSERT_THAT(record(state_, three.id, job_event::enqueue), IsOk());
  decision bind;
  bind.binds.push_back(binding{job_id(2), {on(0, 2), on(1, 3)}});
  ASSERT_THAT(apply(state_, bind), IsOk());
  expect_rejected(release(2, {2}), errc::failed_precondition,
                  "release of job 2 task 2: task is not placed");
  // Scheduled (not started yet) is fine.
  ASSERT_THAT(apply(state_, release(2, {1})), IsOk());
  EXPECT_EQ(state_.status(job_id(2)).value().state, job_state::scheduled);
  // Queued jobs hold nothing to release.
  const job_spec queued = make_job(3, 2, false);
  ASSERT_THAT(state_.submit(queued), IsOk());
  ASSERT_THAT(record(state_, queued.id, job_event::enqueue), IsOk());
  expect_rejected(release(3, {0}), errc::failed_precondition,
                  "release of job 3: job is queued, release needs scheduled or running");
}

}  // namespace
}  // namespace hetsched
