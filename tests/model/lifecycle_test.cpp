// SPDX-License-Identifier: MIT
// Tests for the job lifecycle: the full (state, event) table and the retry rule, through
// next_status(), transition() and a cluster_state's record() and apply().
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <optional>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/lifecycle.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

constexpr std::size_t state_count = std::size(all_job_states);
constexpr std::size_t event_count = std::size(all_job_events);

using row = std::array<std::optional<job_state>, event_count>;
constexpr std::optional<job_state> no = std::nullopt;
constexpr job_state submitted = job_state::submitted;
constexpr job_state queued = job_state::queued;
constexpr job_state scheduled = job_state::scheduled;
constexpr job_state running = job_state::running;
constexpr job_state succeeded = job_state::succeeded;
constexpr job_state preempted = job_state::preempted;
constexpr job_state suspended = job_state::suspended;
constexpr job_state cancelled = job_state::cancelled;

// The whole transition table with a generous retry limit (so fail retries). Columns:
// enqueue, schedule, start, succeed, fail, preempt, requeue, suspend, resume, cancel.
const std::array<row, state_count> expected_table = {{
    /* submitted */ {queued, no, no, no, no, no, no, no, no, cancelled},
    /* queued    */ {no, scheduled, no, no, no, no, no, no, no, cancelled},
    /* scheduled */ {no, no, running, no, queued, preempted, no, no, no, cancelled},
    /* running   */ {no, no, no, succeeded, queued, preempted, no, suspended, no, cancelled},
    /* succeeded */ {no, no, no, no, no, no, no, no, no, no},
    /* failed    */ {no, no, no, no, no, no, no, no, no, no},
    /* preempted */ {no, no, no, no, no, no, queued, no, no, cancelled},
    /* suspended */ {no, no, no, no, queued, preempted, no, no, running, cancelled},
    /* cancelled */ {no, no, no, no, no, no, no, no, no, no},
}};

TEST(JobLifecycle, FollowsTheFullTransitionTable) {
  int legal = 0;
  for (std::size_t s = 0; s < state_count; ++s) {
    for (std::size_t e = 0; e < event_count; ++e) {
      const job_status from{all_job_states[s], 0};
      const job_event event = all_job_events[e];
      const auto got = next_status(from, event, 5);
      SCOPED_TRACE(fmt::format("state {} event {}", from.state, event));
      if (expected_table[s][e]) {
        ++legal;
        ASSERT_THAT(got, IsOk());
        EXPECT_EQ(got->state, *expected_table[s][e]);
        // only fail counts an attempt
        EXPECT_EQ(got->attempts, event == job_event::fail ? 1U : 0U);
      } else {
        EXPECT_THAT(got, HasErrc(errc::failed_precondition));
        EXPECT_THAT(got, ErrorContains(fmt::format("event '{}' is not allowed in state '{}'",
                                                   to_string(event), to_string(from.state))));
      }
    }
  }
  // 19 legal pairs out of 90
  EXPECT_EQ(legal, 19);
}

// transition() on every illegal (state, event) pair of the table, with attempts 0 and 3: an error
// naming both, and the status left exactly as it was.
TEST(JobLifecycle, TransitionRejectsEveryIllegalPairAndChangesNothing) {
  int illegal = 0;
  for (std::size_t s = 0; s < state_count; ++s) {
    for (std::size_t e = 0; e < event_count; ++e) {
      if (expected_table[s][e]) continue;
      for (const std::uint32_t attempts : {0U, 3U}) {
        job_status st{all_job_states[s], attempts};
        const job_event event = all_job_events[e];
        SCOPED_TRACE(fmt::format("state {} event {} attempts {}", st.state, event, attempts));
        const auto r = transition(st, event, 5);
        EXPECT_THAT(r, HasErrc(errc::failed_precondition));
        EXPECT_THAT(r, ErrorContains(fmt::format("event '{}' is not allowed in state '{}'",
                                                 to_string(event), to_string(all_job_states[s]))));
        EXPECT_EQ(st, (job_status{all_job_states[s], attempts}));
      }
      ++illegal;
    }
  }
  EXPECT_EQ(illegal, 90 - 19);
}

TEST(JobLifecycle, RetryLimitZeroMakesFirstFailureFinal) {
  job_status st{running, 0};
  ASSERT_THAT(transition(st, job_event::fail, 0), IsOk());
  // attempts 1 > limit 0
  EXPECT_EQ(st, (job_status{job_state::failed, 1}));
  EXPECT_TRUE(is_terminal(st.state));
}

TEST(JobLifecycle, RetryLimitTwoRequeuesTwiceThenFails) {
  job_status st{submitted, 0};
  ASSERT_THAT(transition(st, job_event::enqueue, 2), IsOk());
  for (std::uint32_t attempt = 1; attempt <= 2; ++attempt) {
    ASSERT_THAT(transition(st, job_event::schedule, 2), IsOk());
    ASSERT_THAT(transition(st, job_event::start, 2), IsOk());
    ASSERT_THAT(transition(st, job_event::fail, 2), IsOk());
    // attempts 1 and 2 are <= 2: back to queued
    EXPECT_EQ(st, (job_status{queued, attempt}));
  }
  ASSERT_THAT(transition(st, job_event::schedule, 2), IsOk());
  ASSERT_THAT(transition(st, job_event::fail, 2), IsOk());
  // third failure: attempts 3 > 2
  EXPECT_EQ(st, (job_status{job_state::failed, 3}));
}

TEST(JobLifecycle, FailFromSuspendedCountsAnAttempt) {
  const auto got = next_status(job_status{suspended, 1}, job_event::fail, 1);
  ASSERT_THAT(got, IsOk());
  // attempts 2 > limit 1
  EXPECT_EQ(*got, (job_status{job_state::failed, 2}));
}

TEST(JobLifecycle, PreemptAndRequeueKeepAttempts) {
  job_status st{running, 1};
  ASSERT_THAT(transition(st, job_event::preempt, 3), IsOk());
  ASSERT_THAT(transition(st, job_event::requeue, 3), IsOk());
  // preemption is not a failure
  EXPECT_EQ(st, (job_status{queued, 1}));
}

TEST(JobLifecycle, SuspendAndResumeRoundTrip) {
  job_status st{running, 0};
  ASSERT_THAT(transition(st, job_event::suspend, 0), IsOk());
  EXPECT_EQ(st.state, suspended);
  ASSERT_THAT(transition(st, job_event::resume, 0), IsOk());
  EXPECT_EQ(st.state, running);
}

TEST(JobLifecycle, TransitionChangesNothingOnError) {
  job_status st{queued, 2};
  const auto r = transition(st, job_event::start, 5);
  EXPECT_THAT(r, HasErrc(errc::failed_precondition));
  EXPECT_THAT(r, ErrorContains("event 'start' is not allowed in state 'queued'"));
  // unchanged
  EXPECT_EQ(st, (job_status{queued, 2}));
}

TEST(JobLifecycle, TerminalStatesAreExactlyThree) {
  int terminal = 0;
  for (job_state s : all_job_states) terminal += is_terminal(s) ? 1 : 0;
  // succeeded, failed, cancelled
  EXPECT_EQ(terminal, 3);
  EXPECT_TRUE(is_terminal(cancelled));
  EXPECT_FALSE(is_terminal(preempted));
  EXPECT_TRUE(holds_resources(scheduled));
  EXPECT_TRUE(holds_resources(running));
  EXPECT_FALSE(holds_resources(suspended));
  EXPECT_FALSE(holds_resources(preempted));
}

TEST(JobLifecycle, NamesStatesAndEvents) {
  EXPECT_EQ(to_string(job_state::suspended), "suspended");
  EXPECT_EQ(to_string(job_event::requeue), "requeue");
  EXPECT_EQ(fmt::format("{}/{}", job_state::cancelled, job_event::cancel), "cancelled/cancel");
}

// ---------------------------------------------------------------------------------------------
// The same table through a cluster_state: job 7 is driven into each state while job 1 runs on
// GPU 0 (so there is held state to disturb), then every event the table forbids is recorded
// (record() for platform events, apply() for schedule/preempt/suspend/resume/migrate). Each is
// refused and the whole cluster_state compares equal to the copy taken before.

const gpu_type a100("A100-SXM4-80GB");

// One node with 2 A100s, 16 cores, 64 GiB.
cluster one_node() {
  cluster c;
  node_spec n;
  n.name = "gpu-0";
  n.milli_cpu = 16000;
  n.memory_mib = 65536;
  n.devices = {device_spec{a100, 81920, health::healthy},
               device_spec{a100, 81920, health::healthy}};
  static_cast<void>(c.add_node(n).value());
  return c;
}

job_spec one_gpu_job(std::uint32_t id) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "job";
  spec.roles = {task_role{"main", 1, 4000, 8192, whole_gpus(1), {}}};
  spec.preemptible = true;
  return spec;
}

task_placement on_gpu(std::uint32_t device) {
  return task_placement{task_id(0), node_id(0), {device_share{device_id(device), 1000, 0}}};
}

decision bind_job(std::uint32_t id, std::uint32_t device) {
  decision d;
  d.binds.push_back(binding{job_id(id), {on_gpu(device)}});
  return d;
}

// The decision that carries `event` for job 7 (binds and migrates it to GPU 1).
decision decision_for(job_event event) {
  decision d;
  switch (event) {
    case job_event::schedule: d = bind_job(7, 1); break;
    case job_event::preempt: d.preemptions.push_back(preemption{job_id(7), "test"}); break;
    case job_event::suspend: d.suspensions.push_back(suspension{job_id(7)}); break;
    case job_event::resume: d.resumes.push_back(resumption{job_id(7)}); break;
    default: break;
  }
  return d;
}

// Drives job 7 of `state` into `target` by legal steps (job 1 already runs on GPU 0).
void drive(cluster_state& state, job_state target) {
  ASSERT_THAT(state.submit(one_gpu_job(7)), IsOk());
  const auto step = [&](job_event e) {
    if (e == job_event::schedule || e == job_event::preempt || e == job_event::suspend ||
        e == job_event::resume) {
      ASSERT_THAT(apply(state, decision_for(e)), IsOk());
    } else {
      ASSERT_THAT(record(state, job_id(7), e), IsOk());
    }
  };
  using enum job_event;
  std::vector<job_event> path;
  switch (target) {
    case job_state::submitted: break;
    case job_state::queued: path = {enqueue}; break;
    case job_state::scheduled: path = {enqueue, schedule}; break;
    case job_state::running: path = {enqueue, schedule, start}; break;
    case job_state::succeeded: path = {enqueue, schedule, start, succeed}; break;
    case job_state::failed: path = {enqueue, schedule, start, fail}; break;  // retry limit 0
    case job_state::preempted: path = {enqueue, schedule, start, preempt}; break;
    case job_state::suspended: path = {enqueue, schedule, start, suspend}; break;
    case job_state::cancelled: path = {enqueue, schedule, cancel}; break;
  }
  for (const job_event e : path) step(e);
  ASSERT_EQ(state.status(job_id(7))->state, target);
}

TEST(JobLifecycleInClusterState, EveryIllegalEventIsRefusedAndChangesNothing) {
  int refused = 0;
  for (std::size_t s = 0; s < state_count; ++s) {
    const job_state from = all_job_states[s];
    cluster_state state(one_node());
    ASSERT_THAT(state.submit(one_gpu_job(1)), IsOk());
    ASSERT_THAT(record(state, job_id(1), job_event::enqueue), IsOk());
    ASSERT_THAT(apply(state, bind_job(1, 0)), IsOk());
    ASSERT_THAT(record(state, job_id(1), job_event::start), IsOk());
    drive(state, from);
    if (::testing::Test::HasFatalFailure()) return;
    // Job 7 holds GPU 1 exactly in scheduled and running.
    EXPECT_EQ(state.device_used(device_id(1)).holders.size(), holds_resources(from) ? 1U : 0U);
    const cluster_state before = state;
    for (std::size_t e = 0; e < event_count; ++e) {
      const job_event event = all_job_events[e];
      if (expected_table[s][e]) continue;
      SCOPED_TRACE(fmt::format("state {} event {}", from, event));
      const bool from_apply = event == job_event::schedule || event == job_event::preempt ||
                              event == job_event::suspend || event == job_event::resume;
      if (from_apply) {
        const decision d = decision_for(event);
        EXPECT_THAT(apply(state, d), HasErrc(errc::failed_precondition));
        EXPECT_THAT(check_decision(state, d), ErrorContains("of job 7: job is"));
      } else {
        const auto r = record(state, job_id(7), event);
        EXPECT_THAT(r, HasErrc(errc::failed_precondition));
        EXPECT_THAT(r, ErrorContains(fmt::format("job 7: event '{}' is not allowed in state '{}'",
                                                 to_string(event), to_string(from))));
      }
      EXPECT_EQ(state, before);
      ++refused;
    }
    // Legal through apply() only: record() refuses those events whatever the state.
    for (const job_event event :
         {job_event::schedule, job_event::preempt, job_event::suspend, job_event::resume}) {
      EXPECT_THAT(record(state, job_id(7), event), HasErrc(errc::invalid_argument));
      EXPECT_EQ(state, before);
    }
    // Migration needs scheduled or running.
    decision migrate;
    migrate.migrations.push_back(migration{job_id(7), {on_gpu(1)}});
    if (!holds_resources(from)) {
      EXPECT_THAT(apply(state, migrate), HasErrc(errc::failed_precondition));
      EXPECT_EQ(state, before);
    }
  }
  EXPECT_EQ(refused, 90 - 19);
}

}  // namespace
}  // namespace hetsched
