// SPDX-License-Identifier: MIT
// Tests for the job lifecycle: the full (state, event) table and the retry rule.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <optional>

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

}  // namespace
}  // namespace hetsched
