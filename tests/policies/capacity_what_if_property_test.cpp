// SPDX-License-Identifier: MIT
// what_if gives the next admission cycle's answer: on thousands of seeded random states it is
// compared with plan_admission run on the same state with the workload submitted. Every
// disagreement (admitted or not, flavor, borrowing, DRS, victims and reasons, deferral text) fails.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_preemption.hpp>
#include <hetsched/policies/capacity_queue.hpp>

#include "capacity_random_scenario.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::IsOk;

// The example of issue 17: two 4-GPU queues under one cohort, queue b holding a pending 4-GPU
// job. A 6-GPU job in queue a would fit the idle cohort (8 GPUs) on its own, but the cycle
// admits b's job first (it stays within b's nominal quota, a's would borrow), after which 6 no
// longer fits. what_if used to answer admissible_now; it must give the cycle's answer.
TEST(CapacityWhatIfProperty, OtherQueuesPendingJobsWinFirst) {
  capacity_tree_spec spec;
  capacity_node_spec org;
  org.name = "org";
  org.kind = capacity_node_kind::cohort;
  spec.nodes.push_back(org);
  for (const char* name : {"a", "b"}) {
    capacity_node_spec q;
    q.name = name;
    q.parent = "org";
    q.quotas = {{"default", "gpu", 4, std::nullopt, std::nullopt}};
    spec.nodes.push_back(q);
  }
  capacity_state s(std::move(capacity_tree::build(spec).value()));
  const queue_id a = *s.tree().find("a");
  const queue_id b = *s.tree().find("b");
  ASSERT_THAT(s.submit({job_id(1), b, {}, 0, 0, {{"gpu", 4}}, {}}), IsOk());
  const pending_workload w{job_id(2), a, {}, 0, 0, {{"gpu", 6}}, {}};
  const auto ans = what_if(s, w, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_FALSE(ans->admissible_now);
  EXPECT_FALSE(ans->needs_preemption);
  // After job 1 is admitted the cohort has 4 GPUs left.
  EXPECT_EQ(ans->reason, "waiting for quota in queue 'a'; available now: gpu@default=4");
  capacity_state submitted = s;
  ASSERT_THAT(submitted.submit(w), IsOk());
  const auto plan = plan_admission(submitted, {});
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->admitted.size(), 1u);
  EXPECT_EQ(plan->admitted[0].job, job_id(1));
  ASSERT_EQ(plan->decision.deferrals.size(), 1u);
  EXPECT_EQ(plan->decision.deferrals[0].message, ans->reason);
  // A 4-GPU job fits next to job 1: admissible, borrowing nothing.
  const auto small = what_if(s, {job_id(3), a, {}, 0, 0, {{"gpu", 4}}, {}}, {});
  ASSERT_THAT(small, IsOk());
  EXPECT_TRUE(small->admissible_now);
  EXPECT_FALSE(small->borrowing);
}

TEST(CapacityWhatIfProperty, AgreesWithTheNextCycleOnRandomStates) {
  int compared = 0;
  int admitted = 0;
  int preempting = 0;
  int deferred = 0;
  for (std::uint64_t seed = 1; seed <= 4000; ++seed) {
    capacity_scenario g(seed);
    auto tree = capacity_tree::build(g.tree());
    ASSERT_THAT(tree, IsOk()) << "seed " << seed;
    capacity_state s(std::move(*tree));
    const auto queue_of = [&](const std::string& name) { return *s.tree().find(name); };
    std::uint32_t next = 1;
    for (int k = static_cast<int>(g.pick(0, 10)); k > 0; --k) {
      const auto w = g.workload(next, queue_of(g.queues()[g.rng()() % g.queues().size()]));
      const admitted_workload a{w.job,        w.queue,
                                w.tenant,     w.priority,
                                g.pick(0, 4), g.flavors()[g.rng()() % g.flavors().size()],
                                w.request};
      if (!capacity_scenario::fits_now(s, a)) continue;
      ASSERT_THAT(s.add_admitted(a), IsOk());
      ++next;
    }
    capacity_cycle_options opt;
    opt.custom_order = capacity_scenario::by_tenant;
    opt.fair_sharing = g.chance(50);
    opt.preemption = g.chance(90);
    opt.explain = g.chance(70);
    if (g.chance(20)) {
      opt.now = 5;
      opt.min_runtime = 2;
    }
    if (g.chance(15))
      opt.strategies = {g.chance(50) ? fair_strategy::less_than_or_equal_to_final_share
                                     : fair_strategy::less_than_initial_share};
    const auto submit_some = [&](int most) {
      for (int k = static_cast<int>(g.pick(0, most)); k > 0; --k) {
        const auto w = g.workload(next++, queue_of(g.queues()[g.rng()() % g.queues().size()]));
        if (s.validate_pending(w)) {
          ASSERT_THAT(s.submit(w), IsOk());
        }
      }
    };
    submit_some(8);
    if (g.chance(50)) {  // one cycle applied: admissions, and victims in flight
      const auto plan = plan_admission(s, opt);
      ASSERT_THAT(plan, IsOk());
      ASSERT_THAT(apply_admission(s, *plan), IsOk());
      submit_some(6);
    }
    // The probe: a new workload, a pending one as it is, or a pending one changed.
    std::vector<job_id> pending_jobs;
    for (std::uint32_t j = 1; j < next; ++j)
      if (s.is_pending(job_id(j))) pending_jobs.push_back(job_id(j));
    pending_workload w = g.workload(100000, queue_of(g.queues()[g.rng()() % g.queues().size()]));
    bool as_is = false;
    if (!pending_jobs.empty() && g.chance(50)) {
      const job_id j = pending_jobs[g.rng()() % pending_jobs.size()];
      const bool changeable =
          s.victims_in_flight(j) == 0 && !s.pending_record(j).preemptor && g.chance(40);
      if (changeable) {  // the same job with another priority, queue and request
        w.job = j;
      } else {
        w = *s.pending(j);
        as_is = true;
      }
    }
    if (!s.validate_pending(w)) continue;
    const auto ans = what_if(s, w, opt);
    ASSERT_THAT(ans, IsOk()) << "seed " << seed;
    capacity_state with = s;
    if (!as_is) {
      if (with.is_pending(w.job)) {
        ASSERT_THAT(with.release(w.job), IsOk());
      }
      ASSERT_THAT(with.submit(w), IsOk());
    }
    capacity_cycle_options cycle_opt = opt;
    cycle_opt.explain = true;  // the cycle's texts, compared with what_if's reason
    const auto plan = plan_admission(with, cycle_opt);
    ASSERT_THAT(plan, IsOk());
    ++compared;
    const std::string where = fmt::format("seed {} job {}", seed, w.job.value());
    std::size_t k = 0;
    while (k < plan->admitted.size() && plan->admitted[k].job != w.job) ++k;
    if (k < plan->admitted.size()) {
      ++admitted;
      EXPECT_TRUE(ans->admissible_now) << where << ": the cycle admits it; " << ans->reason;
      EXPECT_EQ(ans->flavor, plan->admitted[k].flavor) << where;
      EXPECT_EQ(ans->borrowing, plan->admitted[k].borrowing) << where;
      EXPECT_FALSE(ans->needs_preemption) << where;
      // drs_after: its queue's DRS once the cycle's admissions up to it are applied.
      admission_plan prefix;
      prefix.admitted.assign(plan->admitted.begin(),
                             plan->admitted.begin() + static_cast<std::ptrdiff_t>(k) + 1);
      capacity_state after = with;
      ASSERT_THAT(apply_admission(after, prefix), IsOk()) << where;
      EXPECT_EQ(ans->drs_after, dominant_resource_share(after.tree(), after.usage(), w.queue))
          << where;
      continue;
    }
    EXPECT_FALSE(ans->admissible_now) << where << ": the cycle does not admit it";
    const preemption_plan* mine = nullptr;
    for (const auto& p : plan->preemptions)
      if (p.preemptor == w.job) mine = &p;
    if (mine != nullptr) {
      ++preempting;
      EXPECT_TRUE(ans->needs_preemption) << where;
      EXPECT_EQ(ans->victims, mine->victims) << where;
      EXPECT_EQ(ans->flavor, mine->flavor) << where;
      EXPECT_EQ(ans->reason, "") << where;
      continue;
    }
    ++deferred;
    EXPECT_FALSE(ans->needs_preemption) << where << ": the cycle plans no preemption for it";
    std::optional<std::string> message;
    for (const auto& d : plan->decision.deferrals)
      if (d.job == w.job) message = d.message;
    ASSERT_TRUE(message.has_value()) << where << ": neither admitted nor deferred";
    EXPECT_EQ(ans->reason, *message) << where;
  }
  // The mix the comparison covered (fixed by the seeds).
  EXPECT_GT(compared, 3500);
  EXPECT_GT(admitted, 500);
  EXPECT_GT(preempting, 100);
  EXPECT_GT(deferred, 500);
}

}  // namespace
}  // namespace hetsched
