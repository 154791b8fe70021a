// SPDX-License-Identifier: MIT
// Tests for decision value types: emptiness, equality and reason names.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <hetsched/model/decision.hpp>

namespace hetsched {
namespace {

decision sample() {
  decision d;
  d.binds.push_back(binding{
      job_id(1), {task_placement{task_id(0), node_id(2), {device_share{device_id(16), 1000, 0}}}}});
  d.preemptions.push_back(preemption{job_id(2), "priority"});
  d.migrations.push_back(migration{job_id(3), {task_placement{task_id(1), node_id(0), {}}}});
  d.suspensions.push_back(suspension{job_id(4)});
  d.resumes.push_back(resumption{job_id(5)});
  d.deferrals.push_back(deferral{job_id(6), defer_reason::fragmented, "8 GPUs free on 8 nodes"});
  return d;
}

TEST(Decision, DefaultIsEmpty) {
  EXPECT_TRUE(decision{}.empty());
  EXPECT_FALSE(sample().empty());
}

TEST(Decision, AnySingleEntryMakesItNonEmpty) {
  decision only_deferral;
  only_deferral.deferrals.push_back(deferral{job_id(1), defer_reason::quota_exceeded, ""});
  EXPECT_FALSE(only_deferral.empty());
  decision only_resume;
  only_resume.resumes.push_back(resumption{job_id(1)});
  EXPECT_FALSE(only_resume.empty());
}

TEST(Decision, ComparesByValue) {
  EXPECT_EQ(sample(), sample());
  decision changed = sample();
  // a different share on the bound device
  changed.binds[0].tasks[0].devices[0].milli_gpu = 500;
  EXPECT_NE(changed, sample());
  decision reason = sample();
  reason.deferrals[0].reason = defer_reason::insufficient_capacity;
  EXPECT_NE(reason, sample());
}

TEST(DeferReason, NamesEveryReason) {
  EXPECT_EQ(to_string(defer_reason::insufficient_capacity), "insufficient_capacity");
  EXPECT_EQ(to_string(defer_reason::quota_exceeded), "quota_exceeded");
  EXPECT_EQ(to_string(defer_reason::topology_unsatisfiable), "topology_unsatisfiable");
  EXPECT_EQ(to_string(defer_reason::fragmented), "fragmented");
  EXPECT_EQ(fmt::format("{}", defer_reason::fragmented), "fragmented");
}

}  // namespace
}  // namespace hetsched
