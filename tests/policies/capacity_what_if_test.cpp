// SPDX-License-Identifier: MIT
// what_if and queue_status: answers without side effects.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

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

// One queue "a" of `gpus` A100s with the given order and optional YARN user limit.
capacity_tree single_queue(queue_order order, std::int64_t gpus,
                           std::optional<yarn_user_limit_spec> ul = std::nullopt) {
  capacity_node_spec q;
  q.name = "a";
  q.quotas = {{"a100", "gpu", gpus, std::nullopt, std::nullopt}};
  q.order = order;
  q.user_limit = std::move(ul);
  return std::move(capacity_tree::build({{q}}).value());
}

pending_workload gpu_job(std::uint32_t id, std::int64_t gpus, std::int64_t submit,
                         tenant_id t = tenant_id(0)) {
  return pending_workload{job_id(id), queue_id(0), t, 0, submit, {{"gpu", gpus}}, {}};
}

// The deferral message plan_admission gives `job`, or "admitted".
std::string plan_says(const capacity_state& s, job_id job) {
  const auto plan = plan_admission(s, {});
  if (!plan) return "error: " + plan.error().message;
  for (const auto& a : plan->admitted)
    if (a.job == job) return "admitted";
  for (const auto& d : plan->decision.deferrals)
    if (d.job == job) return d.message;
  return "not in the plan";
}

TEST(CapacityWhatIf, StrictQueueHeadThatWaitsBlocksTheJob) {
  capacity_state s(single_queue(queue_order::strict_fifo, 4));
  ASSERT_THAT(s.add_admitted({job_id(10), queue_id(0), {}, 0, 0, "a100", {{"gpu", 2}}}), IsOk());
  ASSERT_THAT(s.submit(gpu_job(1, 3, 5)), IsOk());  // the head: 3 > 2 available
  const pending_workload w = gpu_job(7, 1, 9);      // fits the quota (1 <= 2)
  const auto ans = what_if(s, w, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_FALSE(ans->admissible_now);
  EXPECT_FALSE(ans->needs_preemption);
  EXPECT_TRUE(ans->victims.empty());
  EXPECT_EQ(ans->reason, "behind head job 1 of strict queue 'a'");
  EXPECT_EQ(ans->ahead_in_queue, 1u);
  EXPECT_EQ(ans->flavor, "a100");
  // The admission cycle agrees, with the same text.
  capacity_state submitted = s;
  ASSERT_THAT(submitted.submit(w), IsOk());
  EXPECT_EQ(plan_says(submitted, job_id(7)), "behind head job 1 of strict queue 'a'");
  // Submitted before the head, w is the head itself and fits.
  const auto first = what_if(s, gpu_job(7, 1, 1), {});
  ASSERT_THAT(first, IsOk());
  EXPECT_TRUE(first->admissible_now);
  EXPECT_EQ(first->ahead_in_queue, 0u);
  EXPECT_EQ(first->reason, "");
  // A best-effort queue skips the waiting head: admissible, and the cycle admits it.
  capacity_state best_effort(single_queue(queue_order::best_effort_fifo, 4));
  ASSERT_THAT(best_effort.add_admitted({job_id(10), queue_id(0), {}, 0, 0, "a100", {{"gpu", 2}}}),
              IsOk());
  ASSERT_THAT(best_effort.submit(gpu_job(1, 3, 5)), IsOk());
  const auto skip = what_if(best_effort, w, {});
  ASSERT_THAT(skip, IsOk());
  EXPECT_TRUE(skip->admissible_now);
  EXPECT_EQ(skip->ahead_in_queue, 1u);
  ASSERT_THAT(best_effort.submit(w), IsOk());
  EXPECT_EQ(plan_says(best_effort, job_id(7)), "admitted");
}

TEST(CapacityWhatIf, StrictQueueCountsTheAdmissionsAheadOfTheJob) {
  capacity_state s(single_queue(queue_order::strict_fifo, 4));
  ASSERT_THAT(s.submit(gpu_job(1, 1, 1)), IsOk());
  ASSERT_THAT(s.submit(gpu_job(2, 2, 2)), IsOk());
  // Jobs 1 and 2 fit and go first (3 of 4 GPUs): a 2-GPU job waits, a 1-GPU job fits.
  const auto big = what_if(s, gpu_job(7, 2, 9), {});
  ASSERT_THAT(big, IsOk());
  EXPECT_FALSE(big->admissible_now);
  EXPECT_FALSE(big->needs_preemption);
  // The cycle's text once jobs 1 and 2 are admitted.
  EXPECT_EQ(big->reason, "waiting for quota in queue 'a'; available now: gpu@a100=1");
  const auto small = what_if(s, gpu_job(8, 1, 9), {});
  ASSERT_THAT(small, IsOk());
  EXPECT_TRUE(small->admissible_now);
  EXPECT_EQ(small->ahead_in_queue, 2u);
  capacity_state with_big = s;
  ASSERT_THAT(with_big.submit(gpu_job(7, 2, 9)), IsOk());
  EXPECT_THAT(plan_says(with_big, job_id(7)), ::testing::HasSubstr("waiting for quota"));
  capacity_state with_small = s;
  ASSERT_THAT(with_small.submit(gpu_job(8, 1, 9)), IsOk());
  EXPECT_EQ(plan_says(with_small, job_id(8)), "admitted");
}

// Queue of 8 GPUs, MULP 50: with 2 active users each may use max(8 / 2, 8 * 50%) = 4.
TEST(CapacityWhatIf, YarnUserLimitMakesTheJobWait) {
  yarn_user_limit_spec ul;
  ul.minimum_user_limit_percent = 50;
  capacity_state s(single_queue(queue_order::best_effort_fifo, 8, ul));
  ASSERT_THAT(s.add_admitted({job_id(10), queue_id(0), tenant_id(1), 0, 0, "a100", {{"gpu", 4}}}),
              IsOk());
  ASSERT_THAT(s.submit(gpu_job(3, 2, 1, tenant_id(2))), IsOk());
  const pending_workload over = gpu_job(7, 1, 9, tenant_id(1));
  const auto ans = what_if(s, over, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_FALSE(ans->admissible_now);
  EXPECT_FALSE(ans->needs_preemption);
  EXPECT_TRUE(ans->victims.empty());
  EXPECT_EQ(ans->reason, "user limit of tenant 1 in queue 'a' reached for gpu@a100 (4 + 1 > 4)");
  capacity_state submitted = s;
  ASSERT_THAT(submitted.submit(over), IsOk());
  EXPECT_EQ(plan_says(submitted, job_id(7)),
            "user limit of tenant 1 in queue 'a' reached for gpu@a100 (4 + 1 > 4)");
  // Tenant 2 uses 0 (+ 2 pending) of its 4: admissible, and the cycle admits it.
  const pending_workload within = gpu_job(8, 1, 9, tenant_id(2));
  const auto ok = what_if(s, within, {});
  ASSERT_THAT(ok, IsOk());
  EXPECT_TRUE(ok->admissible_now);
  EXPECT_EQ(ok->reason, "");
  ASSERT_THAT(s.submit(within), IsOk());
  EXPECT_EQ(plan_says(s, job_id(8)), "admitted");
  // A lone user (tenant 1 alone active) may use max(8 / 1, 8 * 50%) = 8.
  capacity_state alone(single_queue(queue_order::best_effort_fifo, 8, ul));
  ASSERT_THAT(
      alone.add_admitted({job_id(10), queue_id(0), tenant_id(1), 0, 0, "a100", {{"gpu", 4}}}),
      IsOk());
  const auto lone = what_if(alone, over, {});
  ASSERT_THAT(lone, IsOk());
  EXPECT_TRUE(lone->admissible_now);
}

// In a strict queue a head over its user limit blocks the jobs of other tenants behind it.
TEST(CapacityWhatIf, StrictHeadOverItsUserLimitBlocksOtherTenants) {
  yarn_user_limit_spec ul;
  ul.minimum_user_limit_percent = 50;
  capacity_state s(single_queue(queue_order::strict_fifo, 8, ul));
  ASSERT_THAT(s.add_admitted({job_id(10), queue_id(0), tenant_id(1), 0, 0, "a100", {{"gpu", 4}}}),
              IsOk());
  ASSERT_THAT(s.submit(gpu_job(1, 1, 1, tenant_id(1))), IsOk());  // 4 + 1 > 4
  const pending_workload w = gpu_job(7, 1, 9, tenant_id(2));
  const auto ans = what_if(s, w, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_FALSE(ans->admissible_now);
  EXPECT_EQ(ans->reason, "behind head job 1 of strict queue 'a'");
  ASSERT_THAT(s.submit(w), IsOk());
  EXPECT_EQ(plan_says(s, job_id(7)), "behind head job 1 of strict queue 'a'");
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
