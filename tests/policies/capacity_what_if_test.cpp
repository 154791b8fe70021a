// SPDX-License-Identifier: MIT
// what_if and queue_status: answers without side effects.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hetsched/model/job.hpp>
#include <hetsched/policies/capacity_queue.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::HasErrc;
using testing::IsOk;

capacity_tree two_gpu_types() {
  capacity_tree_spec spec;
  capacity_node_spec c;
  c.name = "org";
  c.kind = capacity_node_kind::cohort;
  spec.nodes.push_back(c);
  for (const char* name : {"team-a", "team-b"}) {
    capacity_node_spec q;
    q.name = name;
    q.parent = "org";
    q.quotas = {{"h100", "gpu", 8000, std::nullopt, std::nullopt},
                {"a100", "gpu", 16000, std::nullopt, std::nullopt}};
    q.preemption.reclaim = cohort_reclaim::any;
    q.preemption.within_queue = within_queue_preemption::lower_priority;
    spec.nodes.push_back(q);
  }
  return std::move(capacity_tree::build(spec).value());
}

TEST(CapacityWhatIf, AnswersFlavorAndVictimsWithoutSideEffects) {
  capacity_state s(two_gpu_types());
  const queue_id a = *s.tree().find("team-a");
  const queue_id b = *s.tree().find("team-b");
  // team-b borrows all of team-a's H100s.
  ASSERT_THAT(s.add_admitted({job_id(1), b, {}, 0, 0, "h100", {{"gpu", 16000}}}), IsOk());
  const pending_workload w{job_id(7), a, {}, 0, 0, {{"gpu", 4000}}, {"h100"}};
  const auto before = s.usage();
  const auto ans = what_if(s, w, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_FALSE(ans->admissible_now);
  EXPECT_TRUE(ans->needs_preemption);
  EXPECT_EQ(ans->flavor, "h100");
  ASSERT_EQ(ans->victims.size(), 1u);
  EXPECT_EQ(ans->victims[0].victim, job_id(1));
  EXPECT_EQ(ans->victims[0].reason, preemption_reason::in_cohort_reclamation);
  EXPECT_EQ(s.usage(), before);
  EXPECT_FALSE(s.is_pending(job_id(7)));
  // Without a flavor pin it simply fits on A100s.
  const auto any = what_if(s, {job_id(7), a, {}, 0, 0, {{"gpu", 4000}}, {}}, {});
  ASSERT_THAT(any, IsOk());
  EXPECT_TRUE(any->admissible_now);
  EXPECT_EQ(any->flavor, "a100");
  EXPECT_FALSE(any->borrowing);
}

TEST(CapacityWhatIf, ExplainsWhatCanNeverFit) {
  capacity_state s(two_gpu_types());
  const queue_id a = *s.tree().find("team-a");
  const auto ans = what_if(s, {job_id(7), a, {}, 0, 0, {{"gpu", 40000}}, {"h100"}}, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_FALSE(ans->admissible_now);
  EXPECT_FALSE(ans->needs_preemption);
  EXPECT_THAT(ans->reason, ::testing::HasSubstr("can ever get (16000)"));
  EXPECT_THAT(what_if(s, {job_id(7), a, {}, 0, 0, {{"gpu", 1}}, {"b200"}}, {}),
              HasErrc(errc::not_found));
}

TEST(CapacityWhatIf, ReportsQueueAheadAndShares) {
  capacity_state s(two_gpu_types());
  const queue_id a = *s.tree().find("team-a");
  ASSERT_THAT(s.submit({job_id(1), a, {}, 5, 0, {{"gpu", 1000}}, {}}), IsOk());
  ASSERT_THAT(s.submit({job_id(2), a, {}, 0, 0, {{"gpu", 1000}}, {}}), IsOk());
  const auto ans = what_if(s, {job_id(3), a, {}, 1, 0, {{"gpu", 30000}}, {"a100"}}, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_EQ(ans->ahead_in_queue, 1u);  // only the priority-5 job
  // 30000 of 16000 nominal borrows 14000; lendable gpu sums both flavors: 32000 + 16000 -> 292.
  EXPECT_TRUE(ans->borrowing);
  EXPECT_EQ(ans->drs_after.rounded(), 292);
  const auto st = queue_status(s, a);
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->lines.size(), 2u);
  EXPECT_EQ(st->lines[0].flavor, "a100");
  EXPECT_EQ(st->lines[0].available, 32000);  // both queues' A100s
  EXPECT_EQ(st->lines[1].potential_available, 16000);
  EXPECT_THAT(queue_status(s, queue_id(99)), HasErrc(errc::not_found));
}

TEST(CapacityWhatIf, WorkloadOfJobSpecPinsTheGpuType) {
  job_spec spec;
  spec.id = job_id(4);
  spec.queue = queue_id(1);
  task_role r;
  r.name = "worker";
  r.task_count = 4;
  r.milli_cpu = 2000;
  r.gpu = whole_gpus(2, gpu_type("H100"));
  spec.roles.push_back(r);
  const auto w = workload_of(spec, 42);
  ASSERT_THAT(w, IsOk());
  EXPECT_EQ(w->request.at("gpu"), 8000);
  EXPECT_EQ(w->request.at("cpu"), 8000);
  EXPECT_EQ(w->submit_time, 42);
  EXPECT_EQ(w->flavors, (std::vector<std::string>{"H100"}));
}

}  // namespace
}  // namespace hetsched
