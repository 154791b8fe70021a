// SPDX-License-Identifier: MIT
// plan_admission / apply_admission: orderings, strict and best-effort FIFO, gangs, flavors,
// the fair-sharing tournament, user limits and the two-phase preemption protocol.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hetsched/policies/capacity_queue.hpp>

#include "support/capacity_snapshot.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::describe;
using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;

capacity_node_spec node(std::string name, std::string parent, capacity_node_kind kind,
                        std::vector<quota_spec> q = {}, queue_order order = queue_order::priority) {
  capacity_node_spec s;
  s.name = std::move(name);
  s.parent = std::move(parent);
  s.kind = kind;
  s.quotas = std::move(q);
  if (kind == capacity_node_kind::queue) s.order = order;
  return s;
}

quota_spec gpu(std::int64_t nominal, std::string flavor = "a100") {
  return quota_spec{std::move(flavor), "gpu", nominal, std::nullopt, std::nullopt};
}

pending_workload job(std::uint32_t id, queue_id q, std::int64_t gpus, std::int32_t prio = 0,
                     std::int64_t submit = 0, tenant_id t = tenant_id(0)) {
  return pending_workload{job_id(id), q, t, prio, submit, {{"gpu", gpus}}, {}};
}

std::vector<std::uint32_t> admitted_ids(const admission_plan& p) {
  std::vector<std::uint32_t> out;
  for (const auto& a : p.admitted) out.push_back(a.job.value());
  return out;
}

TEST(CapacityAdmission, StrictFifoHeadBlocksBestEffortSkips) {
  for (const auto order : {queue_order::strict_fifo, queue_order::best_effort_fifo}) {
    auto t = capacity_tree::build({{node("q", "", capacity_node_kind::queue, {gpu(4)}, order)}});
    ASSERT_THAT(t, IsOk());
    capacity_state s(*t);
    const queue_id q(0);
    ASSERT_THAT(s.submit(job(1, q, 3, 0, 10)), IsOk());
    ASSERT_THAT(s.submit(job(2, q, 3, 0, 20)), IsOk());  // does not fit after job 1
    ASSERT_THAT(s.submit(job(3, q, 1, 0, 30)), IsOk());
    const auto plan = plan_admission(s, {});
    ASSERT_THAT(plan, IsOk());
    if (order == queue_order::strict_fifo) {
      EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(1u));
      ASSERT_EQ(plan->decision.deferrals.size(), 2u);
      EXPECT_THAT(plan->decision.deferrals[1].message, ::testing::HasSubstr("behind head job 2"));
    } else {
      EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(1u, 3u));
      ASSERT_EQ(plan->decision.deferrals.size(), 1u);
      EXPECT_EQ(plan->decision.deferrals[0].job, job_id(2));
      EXPECT_EQ(plan->decision.deferrals[0].reason, defer_reason::quota_exceeded);
    }
  }
}

TEST(CapacityAdmission, PriorityOrderAndGangAllOrNothing) {
  auto t = capacity_tree::build({{node("q", "", capacity_node_kind::queue, {gpu(8)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id q(0);
  ASSERT_THAT(s.submit(job(1, q, 6, 0, 1)), IsOk());
  ASSERT_THAT(s.submit(job(2, q, 4, 5, 2)), IsOk());  // higher priority goes first
  ASSERT_THAT(s.submit(job(3, q, 2, 1, 3)), IsOk());
  const auto plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  // 2 (4 GPUs), 3 (2 GPUs); the 6-GPU gang does not fit in the 2 left and gets nothing.
  EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(2u, 3u));
  ASSERT_THAT(apply_admission(s, *plan), IsOk());
  EXPECT_TRUE(s.is_pending(job_id(1)));
  EXPECT_EQ(s.usage(q, 0), 6);
  // Applying the same plan twice fails and changes nothing observable.
  const std::string applied = describe(s);
  EXPECT_THAT(apply_admission(s, *plan), HasErrc(errc::failed_precondition));
  EXPECT_THAT(apply_admission(s, *plan), ErrorContains("job 2 is not pending"));
  EXPECT_EQ(describe(s), applied);
}

// A plan that admits job 4 (queue r) and preempts job 2 for job 3 (queue q). Each way the state
// can move under the plan makes apply_admission fail with failed_precondition naming the job,
// and leave usage, the pending sets and the victims in flight exactly as they were (job 4 is not
// admitted even though its own check passed).
TEST(CapacityAdmission, ApplyAdmissionFailuresChangeNothingObservable) {
  capacity_node_spec q = node("q", "", capacity_node_kind::queue, {gpu(4)});
  q.preemption.within_queue = within_queue_preemption::lower_priority;
  auto t = capacity_tree::build({{q, node("r", "", capacity_node_kind::queue, {gpu(2)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state base(*t);
  const queue_id qid = *t->find("q");
  const queue_id rid = *t->find("r");
  ASSERT_THAT(base.add_admitted({job_id(1), qid, {}, 0, 0, "a100", {{"gpu", 2}}}), IsOk());
  ASSERT_THAT(base.add_admitted({job_id(2), qid, {}, 0, 5, "a100", {{"gpu", 2}}}), IsOk());
  ASSERT_THAT(base.submit(job(3, qid, 2, 10)), IsOk());
  ASSERT_THAT(base.submit(job(4, rid, 1)), IsOk());
  const auto plan = plan_admission(base, {});
  ASSERT_THAT(plan, IsOk());
  ASSERT_THAT(admitted_ids(*plan), ::testing::ElementsAre(4u));
  ASSERT_EQ(plan->preemptions.size(), 1u);
  ASSERT_EQ(plan->preemptions[0].victims.size(), 1u);
  ASSERT_EQ(plan->preemptions[0].victims[0].victim, job_id(2));

  const struct {
    job_id released;  // removed from the state after planning
    std::string message;
  } stale[] = {
      {job_id(2), "victim job 2 is not admitted or already in flight"},
      {job_id(3), "preemptor job 3 is not pending"},
      {job_id(4), "job 4 is not pending"},
  };
  for (const auto& c : stale) {
    SCOPED_TRACE(c.message);
    capacity_state s = base;
    ASSERT_THAT(s.release(c.released), IsOk());
    const std::string before = describe(s);
    const auto r = apply_admission(s, *plan);
    EXPECT_THAT(r, HasErrc(errc::failed_precondition));
    EXPECT_THAT(r, ErrorContains(c.message));
    EXPECT_EQ(describe(s), before);
    EXPECT_TRUE(c.released == job_id(4) || s.is_pending(job_id(4)));
  }
  // Applied once: job 4 admitted in r, job 2 in flight for job 3. Applying again changes nothing.
  capacity_state s = base;
  ASSERT_THAT(apply_admission(s, *plan), IsOk());
  EXPECT_EQ(s.usage(rid, 0), 1);
  EXPECT_EQ(s.usage(qid, 0), 4);
  EXPECT_TRUE(s.in_flight(job_id(2)));
  EXPECT_EQ(s.victims_in_flight(job_id(3)), 1u);
  const std::string applied = describe(s);
  EXPECT_NE(applied, describe(base));
  EXPECT_THAT(applied, ::testing::HasSubstr("admitted job 2 queue q tenant"));
  EXPECT_THAT(applied, ::testing::HasSubstr("in flight for job 3"));
  EXPECT_THAT(apply_admission(s, *plan), HasErrc(errc::failed_precondition));
  EXPECT_EQ(describe(s), applied);
  // A victim already in flight cannot be planned again by a plan made before.
  capacity_state other = base;
  admission_plan victims_only = *plan;
  victims_only.admitted.clear();
  ASSERT_THAT(apply_admission(other, victims_only), IsOk());
  const std::string in_flight = describe(other);
  EXPECT_THAT(apply_admission(other, victims_only),
              ErrorContains("victim job 2 is not admitted or already in flight"));
  EXPECT_EQ(describe(other), in_flight);
}

TEST(CapacityAdmission, FlavorPreferenceThenFallback) {
  auto t = capacity_tree::build(
      {{node("q", "", capacity_node_kind::queue, {gpu(2, "h100"), gpu(8, "a100")})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id q(0);
  ASSERT_THAT(s.submit(job(1, q, 2, 0, 1)), IsOk());
  ASSERT_THAT(s.submit(job(2, q, 2, 0, 2)), IsOk());
  auto pinned = job(3, q, 1, 0, 3);
  pinned.flavors = {"h100"};
  ASSERT_THAT(s.submit(pinned), IsOk());
  const auto plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->admitted.size(), 2u);
  EXPECT_EQ(plan->admitted[0].flavor, "h100");     // first preference
  EXPECT_EQ(plan->admitted[1].flavor, "a100");     // h100 full
  EXPECT_EQ(plan->decision.deferrals.size(), 1u);  // job 3 only accepts h100
}

TEST(CapacityAdmission, ClassicOrderPrefersNonBorrowingThenPriority) {
  auto t = capacity_tree::build({{node("c", "", capacity_node_kind::cohort),
                                  node("a", "c", capacity_node_kind::queue, {gpu(2)}),
                                  node("b", "c", capacity_node_kind::queue, {gpu(2)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  // a's head borrows (3 > 2) with priority 9; b's head fits within nominal with priority 0.
  ASSERT_THAT(s.submit(job(1, *t->find("a"), 3, 9)), IsOk());
  ASSERT_THAT(s.submit(job(2, *t->find("b"), 2, 0)), IsOk());
  const auto plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  // b first; then a's 3 no longer fits in the 2 left.
  EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(2u));
  EXPECT_FALSE(plan->admitted[0].borrowing);
}

TEST(CapacityAdmission, FairTournamentAlternatesBetweenBorrowers) {
  auto t = capacity_tree::build({{node("c", "", capacity_node_kind::cohort, {gpu(10)}),
                                  node("a", "c", capacity_node_kind::queue, {gpu(0)}),
                                  node("b", "c", capacity_node_kind::queue, {gpu(0)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  for (std::uint32_t i = 0; i < 6; ++i) {
    ASSERT_THAT(s.submit(job(10 + i, *t->find("a"), 2, 0, i)), IsOk());
    ASSERT_THAT(s.submit(job(20 + i, *t->find("b"), 2, 0, i)), IsOk());
  }
  capacity_cycle_options opt;
  opt.fair_sharing = true;
  const auto plan = plan_admission(s, opt);
  ASSERT_THAT(plan, IsOk());
  // Equal DRS ties go to the earlier submit, then the lower job id: a, b, a, b, a.
  EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(10u, 20u, 11u, 21u, 12u));
  EXPECT_EQ(plan->decision.deferrals.size(), 7u);
}

TEST(CapacityAdmission, DrfOrderServesTheTenantWithTheLowestShare) {
  auto t = capacity_tree::build(
      {{node("q", "", capacity_node_kind::queue, {gpu(10)}, queue_order::drf)}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id q(0);
  ASSERT_THAT(s.add_admitted({job_id(1), q, tenant_id(1), 0, 0, "a100", {{"gpu", 4}}}), IsOk());
  ASSERT_THAT(s.submit(job(2, q, 1, 0, 1, tenant_id(1))), IsOk());
  ASSERT_THAT(s.submit(job(3, q, 1, 0, 2, tenant_id(2))), IsOk());
  ASSERT_THAT(s.submit(job(4, q, 1, 0, 3, tenant_id(2))), IsOk());
  const auto plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  // tenant 2 (share 0, then 1/10) before tenant 1 (4/10).
  EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(3u, 4u, 2u));
}

TEST(CapacityAdmission, CustomOrderIsPluggable) {
  auto t = capacity_tree::build(
      {{node("q", "", capacity_node_kind::queue, {gpu(2)}, queue_order::custom)}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  ASSERT_THAT(s.submit(job(1, queue_id(0), 2)), IsOk());
  ASSERT_THAT(s.submit(job(2, queue_id(0), 1)), IsOk());
  capacity_cycle_options opt;
  EXPECT_THAT(plan_admission(s, opt), HasErrc(errc::invalid_argument));
  // Smallest first.
  opt.custom_order = [](const pending_workload& a, const pending_workload& b) {
    return a.request.at("gpu") < b.request.at("gpu");
  };
  const auto plan = plan_admission(s, opt);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(2u));
}

TEST(CapacityAdmission, YarnUserLimitCapsEachUser) {
  capacity_node_spec q =
      node("q", "", capacity_node_kind::queue, {gpu(12)}, queue_order::best_effort_fifo);
  yarn_user_limit_spec ul;
  ul.minimum_user_limit_percent = 50;
  q.user_limit = ul;
  auto t = capacity_tree::build({{q}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  for (std::uint32_t i = 0; i < 5; ++i)
    ASSERT_THAT(s.submit(job(i, queue_id(0), 2, 0, i, tenant_id(1))), IsOk());
  ASSERT_THAT(s.submit(job(9, queue_id(0), 2, 0, 9, tenant_id(2))), IsOk());
  const auto plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  // 2 active users, queue 12: limit max(12/2, 12*50%) = 6 per user -> 3 jobs of tenant 1.
  EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(0u, 1u, 2u, 9u));
}

TEST(CapacityAdmission, VictimsInFlightAreNotReplanned) {
  capacity_node_spec q = node("q", "", capacity_node_kind::queue, {gpu(4)});
  q.preemption.within_queue = within_queue_preemption::lower_priority;
  auto t = capacity_tree::build({{q}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id id(0);
  ASSERT_THAT(s.add_admitted({job_id(1), id, {}, 0, 0, "a100", {{"gpu", 2}}}), IsOk());
  ASSERT_THAT(s.add_admitted({job_id(2), id, {}, 0, 5, "a100", {{"gpu", 2}}}), IsOk());
  ASSERT_THAT(s.submit(job(3, id, 2, 10)), IsOk());
  auto plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->preemptions.size(), 1u);
  // Most recently admitted first: job 2.
  ASSERT_EQ(plan->preemptions[0].victims.size(), 1u);
  EXPECT_EQ(plan->preemptions[0].victims[0].victim, job_id(2));
  EXPECT_EQ(plan->decision.preemptions[0].reason, "InClusterQueue by job 3");
  ASSERT_THAT(apply_admission(s, *plan), IsOk());
  EXPECT_TRUE(s.in_flight(job_id(2)));
  EXPECT_EQ(s.victims_in_flight(job_id(3)), 1u);
  // Second cycle: the victim still runs; no new victims are chosen.
  plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->preemptions.empty());
  EXPECT_TRUE(plan->admitted.empty());
  EXPECT_THAT(plan->decision.deferrals[0].message, ::testing::HasSubstr("waiting for 1"));
  // The victim terminates; its quota is free and the preemptor is admitted.
  ASSERT_THAT(s.release(job_id(2)), IsOk());
  plan = plan_admission(s, {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(admitted_ids(*plan), ::testing::ElementsAre(3u));
}

TEST(CapacityAdmission, DeterministicAcrossRuns) {
  auto t = capacity_tree::build({{node("c", "", capacity_node_kind::cohort, {gpu(7)}),
                                  node("a", "c", capacity_node_kind::queue, {gpu(3)}),
                                  node("b", "c", capacity_node_kind::queue, {gpu(3)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  for (std::uint32_t i = 0; i < 20; ++i)
    ASSERT_THAT(
        s.submit(job(i, *t->find(i % 2 ? "a" : "b"), 1 + i % 3, static_cast<int>(i % 4), i / 3)),
        IsOk());
  capacity_cycle_options opt;
  opt.fair_sharing = true;
  const auto p1 = plan_admission(s, opt);
  const auto p2 = plan_admission(s, opt);
  ASSERT_THAT(p1, IsOk());
  ASSERT_THAT(p2, IsOk());
  EXPECT_EQ(p1->admitted, p2->admitted);
  EXPECT_EQ(p1->decision, p2->decision);
  std::int64_t used = 0;
  for (const auto& a : p1->admitted) used += s.pending(a.job)->request.at("gpu");
  EXPECT_LE(used, 13);
}

}  // namespace
}  // namespace hetsched
