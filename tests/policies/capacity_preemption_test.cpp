// SPDX-License-Identifier: MIT
// plan_preemption: classic rules (borrowWithinCohort, fill-back), minimum runtime, fair-sharing
// strategies, the no-cycle property over random scenarios, and cycle heads vs fresh plans.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include <hetsched/policies/capacity_preemption.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

// "q<i>", built by appending (GCC 12 -O3 warns on "q" + std::string).
std::string qname(std::uint64_t i) {
  std::string s = "q";
  s += std::to_string(i);
  return s;
}

using testing::HasErrc;
using testing::IsOk;

capacity_node_spec node(std::string name, std::string parent, capacity_node_kind kind,
                        std::vector<quota_spec> q = {}, queue_preemption p = {}) {
  capacity_node_spec s;
  s.name = std::move(name);
  s.parent = std::move(parent);
  s.kind = kind;
  s.quotas = std::move(q);
  s.preemption = p;
  return s;
}

quota_spec gpu(std::int64_t nominal) {
  return quota_spec{"default", "gpu", nominal, std::nullopt, std::nullopt};
}

admitted_workload running(std::uint32_t id, queue_id q, std::int64_t gpus, std::int32_t prio = 0,
                          std::int64_t at = 0) {
  return admitted_workload{job_id(id), q, tenant_id(0), prio, at, "default", {{"gpu", gpus}}};
}

std::set<std::uint32_t> victims(const preemption_plan& p) {
  std::set<std::uint32_t> out;
  for (const auto& v : p.victims) out.insert(v.victim.value());
  return out;
}

queue_preemption reclaim_any() {
  queue_preemption p;
  p.within_queue = within_queue_preemption::lower_priority;
  p.reclaim = cohort_reclaim::any;
  return p;
}

TEST(CapacityPreemption, FillBackKeepsTheVictimSetMinimal) {
  queue_preemption p;
  p.within_queue = within_queue_preemption::lower_priority;
  auto t = capacity_tree::build({{node("q", "", capacity_node_kind::queue, {gpu(6)}, p)}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id q(0);
  ASSERT_THAT(s.add_admitted(running(1, q, 1, 0)), IsOk());
  ASSERT_THAT(s.add_admitted(running(2, q, 4, 1)), IsOk());
  ASSERT_THAT(s.add_admitted(running(3, q, 1, 5)), IsOk());
  // Needs 4: greedy takes job 1 (prio 0) then job 2 (prio 1); fill-back returns job 1.
  const auto plan = plan_preemption(s, {job_id(9), q, {}, 3, 0, {{"gpu", 4}}, {}}, {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(victims(*plan), (std::set<std::uint32_t>{2}));
  EXPECT_EQ(plan->victims[0].reason, preemption_reason::in_cluster_queue);
}

TEST(CapacityPreemption, ReclaimWithinNominalButNotWhileBorrowing) {
  auto t =
      capacity_tree::build({{node("c", "", capacity_node_kind::cohort),
                             node("a", "c", capacity_node_kind::queue, {gpu(4)}, reclaim_any()),
                             node("b", "c", capacity_node_kind::queue, {gpu(4)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id a = *t->find("a");
  const queue_id b = *t->find("b");
  ASSERT_THAT(s.add_admitted(running(1, b, 3)), IsOk());
  ASSERT_THAT(s.add_admitted(running(2, b, 3)), IsOk());
  // a is under nominal and needs 4 of which 2 are free: reclaim one of b's (b borrows 2).
  auto plan = plan_preemption(s, {job_id(9), a, {}, 0, 0, {{"gpu", 4}}, {}}, {});
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->victims.size(), 1u);
  // Both have priority 0 and were admitted at 0: the lower job id goes first.
  EXPECT_EQ(plan->victims[0].victim, job_id(1));
  EXPECT_EQ(plan->victims[0].queue, b);
  EXPECT_EQ(plan->victims[0].reason, preemption_reason::in_cohort_reclamation);
  // Asking 6 would make a borrow: classic preemption refuses to take b's quota for that.
  plan = plan_preemption(s, {job_id(9), a, {}, 0, 0, {{"gpu", 6}}, {}}, {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->victims.empty());
}

TEST(CapacityPreemption, BorrowWithinCohortBelowThreshold) {
  queue_preemption p = reclaim_any();
  p.borrow = borrow_within_cohort{true, 0};
  auto t = capacity_tree::build({{node("c", "", capacity_node_kind::cohort),
                                  node("a", "c", capacity_node_kind::queue, {gpu(2)}, p),
                                  node("b", "c", capacity_node_kind::queue, {gpu(2)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id a = *t->find("a");
  const queue_id b = *t->find("b");
  ASSERT_THAT(s.add_admitted(running(1, b, 3, -5)), IsOk());
  ASSERT_THAT(s.add_admitted(running(2, b, 1, 3)), IsOk());
  // a wants 3 (borrowing 1): only workloads below priority 1 (threshold 0 + 1) may go.
  const auto plan = plan_preemption(s, {job_id(9), a, {}, 10, 0, {{"gpu", 3}}, {}}, {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(victims(*plan), (std::set<std::uint32_t>{1}));
  EXPECT_EQ(plan->victims[0].reason, preemption_reason::in_cohort_reclaim_while_borrowing);
}

TEST(CapacityPreemption, MinimumRuntimeProtectsYoungWorkloadsOfOtherQueues) {
  auto t =
      capacity_tree::build({{node("c", "", capacity_node_kind::cohort),
                             node("a", "c", capacity_node_kind::queue, {gpu(4)}, reclaim_any()),
                             node("b", "c", capacity_node_kind::queue, {gpu(4)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id a = *t->find("a");
  const queue_id b = *t->find("b");
  ASSERT_THAT(s.add_admitted(running(1, b, 4, 0, 0)), IsOk());
  ASSERT_THAT(s.add_admitted(running(2, b, 4, 0, 90)), IsOk());
  capacity_cycle_options opt;
  opt.fair_sharing = true;
  opt.now = 100;
  opt.min_runtime = 30;
  // Job 2 ran 10 < 30: only job 1 (ran 100) may go, though it is older.
  auto plan = plan_preemption(s, {job_id(9), a, {}, 0, 0, {{"gpu", 4}}, {}}, opt);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(victims(*plan), (std::set<std::uint32_t>{1}));
  opt.min_runtime = 200;
  plan = plan_preemption(s, {job_id(9), a, {}, 0, 0, {{"gpu", 4}}, {}}, opt);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->victims.empty());
}

TEST(CapacityPreemption, BadStrategyListIsRejected) {
  auto t = capacity_tree::build({{node("q", "", capacity_node_kind::queue, {gpu(1)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  capacity_cycle_options opt;
  opt.strategies = {fair_strategy::less_than_initial_share,
                    fair_strategy::less_than_or_equal_to_final_share};
  EXPECT_THAT(plan_preemption(s, {job_id(1), queue_id(0), {}, 0, 0, {{"gpu", 1}}, {}}, opt),
              HasErrc(errc::invalid_argument));
}

// Kueue's LessThanInitialShare (S2-b) on its own. Cohort c: a (nominal 1), b (4) running jobs 1
// (3 GPUs) and 2 (4 GPUs), x (4) running job 3 (2 GPUs): lendable 9, full. Job 9 asks a for 2:
// a borrows 1 -> DRS 1000/9 = 111. b borrows 3 -> 333; x borrows nothing (pruned). b's first
// candidate is job 1 (equal priority and age, lower id); without it b is at its nominal: DRS 0.
// S2-b: 111 < 333 holds -> job 1. S2-a (LessThanOrEqualToFinalShare) alone: 111 <= 0 fails for
// job 1 and for job 2, so it takes nothing; the default [S2-a, S2-b] falls through to S2-b.
TEST(CapacityPreemption, LessThanInitialShareAloneTakesWhatFinalShareRefuses) {
  queue_preemption reclaim = reclaim_any();
  auto t = capacity_tree::build({{node("c", "", capacity_node_kind::cohort),
                                  node("a", "c", capacity_node_kind::queue, {gpu(1)}, reclaim),
                                  node("b", "c", capacity_node_kind::queue, {gpu(4)}),
                                  node("x", "c", capacity_node_kind::queue, {gpu(4)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id a = *t->find("a");
  const queue_id b = *t->find("b");
  ASSERT_THAT(s.add_admitted(running(1, b, 3)), IsOk());
  ASSERT_THAT(s.add_admitted(running(2, b, 4)), IsOk());
  ASSERT_THAT(s.add_admitted(running(3, *t->find("x"), 2)), IsOk());
  const pending_workload w{job_id(9), a, {}, 0, 0, {{"gpu", 2}}, {}};
  capacity_cycle_options opt;
  opt.fair_sharing = true;
  opt.strategies = {fair_strategy::less_than_initial_share};
  auto plan = plan_preemption(s, w, opt);
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->victims.size(), 1u);
  EXPECT_EQ(plan->victims[0].victim, job_id(1));
  EXPECT_EQ(plan->victims[0].queue, b);
  EXPECT_EQ(plan->victims[0].reason, preemption_reason::in_cohort_fair_sharing);
  opt.strategies = {fair_strategy::less_than_or_equal_to_final_share};
  plan = plan_preemption(s, w, opt);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->victims.empty());
  opt.strategies = {fair_strategy::less_than_or_equal_to_final_share,
                    fair_strategy::less_than_initial_share};
  plan = plan_preemption(s, w, opt);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(victims(*plan), (std::set<std::uint32_t>{1}));
  // Asking 4 (a borrows 3 -> 333): 333 < 333 fails, nothing qualifies under S2-b alone.
  opt.strategies = {fair_strategy::less_than_initial_share};
  plan = plan_preemption(s, {job_id(9), a, {}, 0, 0, {{"gpu", 4}}, {}}, opt);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->victims.empty());
}

// The 2-cycle the anti-cycle guard exists for (docs/capacity_queues.md), found by the property
// test below: root (3) > left (1) > q1 (0, weight 2) and root > right (1) > q0 (1, weight 3),
// q2 (1, weight 2); lendable 7, full. q0 runs job 1 (2 GPUs, priority 1); q2 runs jobs 2 (2,
// priority 0), 3 (2, priority 1), 4 (1, priority 0). Job 1000 (3 GPUs, priority 0) in q0: Kueue's
// rules pick jobs 4 and 2 of q2. Once that is applied, job 4 back in q2 (DRS 2/7 / 2 = 143)
// would preempt job 1000 in q0 (DRS 4/7 / 3 = 190) under S2-b, and so on forever. The guard
// drops the plan instead; smaller requests that leave no way back still preempt.
TEST(CapacityPreemption, AntiCycleGuardDropsThePlanThatWouldBePreemptedBack) {
  auto weighted = [](capacity_node_spec n, double w) {
    n.fair_weight = w;
    return n;
  };
  auto t = capacity_tree::build(
      {{node("root", "", capacity_node_kind::cohort, {gpu(3)}),
        node("left", "root", capacity_node_kind::cohort, {gpu(1)}),
        node("right", "root", capacity_node_kind::cohort, {gpu(1)}),
        weighted(node("q0", "right", capacity_node_kind::queue, {gpu(1)}, reclaim_any()), 3.0),
        weighted(node("q1", "left", capacity_node_kind::queue, {gpu(0)}, reclaim_any()), 2.0),
        weighted(node("q2", "right", capacity_node_kind::queue, {gpu(1)}, reclaim_any()), 2.0)}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id q0 = *t->find("q0");
  const queue_id q2 = *t->find("q2");
  ASSERT_THAT(s.add_admitted(running(1, q0, 2, 1)), IsOk());
  ASSERT_THAT(s.add_admitted(running(2, q2, 2, 0)), IsOk());
  ASSERT_THAT(s.add_admitted(running(3, q2, 2, 1)), IsOk());
  ASSERT_THAT(s.add_admitted(running(4, q2, 1, 0)), IsOk());
  capacity_cycle_options opt;
  opt.fair_sharing = true;
  auto plan = plan_preemption(s, {job_id(1000), q0, {}, 0, 0, {{"gpu", 3}}, {}}, opt);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->victims.empty());
  // The state Kueue's plan {4, 2} would lead to: job 4 back in q2 preempts job 1000.
  capacity_state after = s;
  ASSERT_THAT(after.release(job_id(4)), IsOk());
  ASSERT_THAT(after.release(job_id(2)), IsOk());
  ASSERT_THAT(after.add_admitted(running(1000, q0, 3, 0, 1)), IsOk());
  const drs_value q0_with_1000 = dominant_resource_share(after.tree(), after.usage(), q0);
  EXPECT_EQ(q0_with_1000.borrowed, 4);
  EXPECT_EQ(q0_with_1000.lendable, 7);
  EXPECT_EQ(q0_with_1000.rounded(), 191);  // 4000 / 21 = 190.48, rounded up
  const auto back = plan_preemption(after, {job_id(4), q2, {}, 0, 2, {{"gpu", 1}}, {}}, opt);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(victims(*back), (std::set<std::uint32_t>{1000}));
  EXPECT_EQ(back->victims[0].reason, preemption_reason::in_cohort_fair_sharing);
  // 1 or 2 GPUs: job 2 alone is enough and cannot come back; the plan stands.
  for (const std::int64_t g : {1, 2}) {
    plan = plan_preemption(s, {job_id(1000), q0, {}, 0, 0, {{"gpu", g}}, {}}, opt);
    ASSERT_THAT(plan, IsOk());
    EXPECT_EQ(victims(*plan), (std::set<std::uint32_t>{2})) << g << " GPUs";
  }
}

// No preemption cycles: whenever w (queue A) preempts v (queue B != A), re-submitting v right
// after (w admitted, victims gone) must not preempt w. Random flat and two-level trees.
TEST(CapacityPreemptionProperty, TwoWorkloadsNeverPreemptEachOtherBack) {
  std::mt19937_64 rng(20261121);
  int checked = 0;
  for (int scenario = 0; scenario < 3000; ++scenario) {
    const bool fair = scenario % 2 == 0;
    const bool two_level = scenario % 4 >= 2;
    capacity_tree_spec spec;
    spec.nodes.push_back(
        node("root", "", capacity_node_kind::cohort, {gpu(static_cast<std::int64_t>(rng() % 4))}));
    const int nq = 2 + static_cast<int>(rng() % 3);
    if (two_level) {
      spec.nodes.push_back(node("left", "root", capacity_node_kind::cohort, {gpu(1)}));
      spec.nodes.push_back(node("right", "root", capacity_node_kind::cohort, {gpu(1)}));
    }
    for (int i = 0; i < nq; ++i) {
      auto n = node(qname(static_cast<std::uint64_t>(i)),
                    two_level ? (i % 2 ? "left" : "right") : "root", capacity_node_kind::queue,
                    {gpu(static_cast<std::int64_t>(rng() % 5))}, reclaim_any());
      n.fair_weight = 1.0 + static_cast<double>(rng() % 3);
      spec.nodes.push_back(std::move(n));
    }
    auto t = capacity_tree::build(spec);
    ASSERT_THAT(t, IsOk());
    capacity_state s(*t);
    const std::size_t f = 0;
    const queue_id root = *t->find("root");
    std::uint32_t next = 1;
    for (int k = 0; k < 12; ++k) {
      const queue_id q = *t->find(qname(rng() % static_cast<unsigned>(nq)));
      const std::int64_t g = 1 + static_cast<std::int64_t>(rng() % 3);
      if (s.usage(root, f) + g > t->subtree_quota(root, f)) continue;
      if (quota_available(s.tree(), s.usage(), q, f) < g) continue;
      ASSERT_THAT(s.add_admitted(running(next++, q, g, static_cast<std::int32_t>(rng() % 2))),
                  IsOk());
    }
    const queue_id qa = *t->find(qname(rng() % static_cast<unsigned>(nq)));
    const pending_workload w{job_id(1000),
                             qa,
                             {},
                             static_cast<std::int32_t>(rng() % 2),
                             0,
                             {{"gpu", 1 + static_cast<std::int64_t>(rng() % 3)}},
                             {}};
    capacity_cycle_options opt;
    opt.fair_sharing = fair;
    const auto plan = plan_preemption(s, w, opt);
    ASSERT_THAT(plan, IsOk());
    if (plan->victims.empty()) continue;
    // Apply: victims leave, w runs.
    std::vector<admitted_workload> gone;
    for (const auto& v : plan->victims) {
      gone.push_back(*s.admitted(v.victim));
      ASSERT_THAT(s.release(v.victim), IsOk());
    }
    ASSERT_THAT(s.add_admitted({w.job, w.queue, {}, w.priority, 1, "default", w.request}), IsOk());
    for (const auto& v : gone) {
      if (v.queue == w.queue) continue;  // in-queue priority preemption, not a cycle
      const pending_workload back{v.job, v.queue, {}, v.priority, 2, v.request, {}};
      const auto again = plan_preemption(s, back, opt);
      ASSERT_THAT(again, IsOk());
      for (const auto& x : again->victims)
        EXPECT_NE(x.victim, w.job) << "scenario " << scenario << " fair " << fair << " victim "
                                   << v.job.value() << " preempts its preemptor back";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// The same property with two flavors (a100, h100) of two resources (gpu, cpu): each queue has a
// random nominal per (flavor, resource), workloads ask for both resources and run in one flavor,
// the incoming workload accepts either flavor and the victims come back accepting either.
TEST(CapacityPreemptionProperty, NoPreemptionBackAcrossTwoFlavorsAndTwoResources) {
  std::mt19937_64 rng(20261123);
  const std::vector<std::string> flavors{"a100", "h100"};
  int checked = 0;
  for (int scenario = 0; scenario < 2000; ++scenario) {
    const bool fair = scenario % 2 == 0;
    const bool two_level = scenario % 4 >= 2;
    const auto quotas = [&](std::int64_t gpu_max, std::int64_t cpu_max) {
      std::vector<quota_spec> q;
      for (const auto& f : flavors) {
        q.push_back({f, "gpu", static_cast<std::int64_t>(rng() % static_cast<unsigned>(gpu_max)),
                     std::nullopt, std::nullopt});
        q.push_back({f, "cpu", static_cast<std::int64_t>(rng() % static_cast<unsigned>(cpu_max)),
                     std::nullopt, std::nullopt});
      }
      return q;
    };
    capacity_tree_spec spec;
    spec.nodes.push_back(node("root", "", capacity_node_kind::cohort, quotas(3, 5)));
    const int nq = 2 + static_cast<int>(rng() % 3);
    if (two_level) {
      spec.nodes.push_back(node("left", "root", capacity_node_kind::cohort, quotas(2, 3)));
      spec.nodes.push_back(node("right", "root", capacity_node_kind::cohort, quotas(2, 3)));
    }
    for (int i = 0; i < nq; ++i) {
      auto n = node(qname(static_cast<std::uint64_t>(i)),
                    two_level ? (i % 2 ? "left" : "right") : "root", capacity_node_kind::queue,
                    quotas(5, 9), reclaim_any());
      n.fair_weight = 1.0 + static_cast<double>(rng() % 3);
      spec.nodes.push_back(std::move(n));
    }
    auto t = capacity_tree::build(spec);
    ASSERT_THAT(t, IsOk());
    capacity_state s(*t);
    const queue_id root = *t->find("root");
    // Admits `w` in flavor `fl` if both resources fit under the queue's and the root's quota.
    const auto fits_in = [&](queue_id q, const std::string& fl, const drf_vector& request) {
      for (const auto& [r, amount] : request) {
        const auto f = t->find_fr(fl, r);
        if (!f || s.usage(root, *f) + amount > t->subtree_quota(root, *f) ||
            quota_available(s.tree(), s.usage(), q, *f) < amount)
          return false;
      }
      return true;
    };
    std::uint32_t next = 1;
    for (int k = 0; k < 16; ++k) {
      const queue_id q = *t->find(qname(rng() % static_cast<unsigned>(nq)));
      const drf_vector request{{"cpu", 1 + static_cast<std::int64_t>(rng() % 4)},
                               {"gpu", 1 + static_cast<std::int64_t>(rng() % 3)}};
      const std::string& fl = flavors[rng() % 2];
      if (!fits_in(q, fl, request)) continue;
      ASSERT_THAT(s.add_admitted({job_id(next++), q, tenant_id(0),
                                  static_cast<std::int32_t>(rng() % 2), 0, fl, request}),
                  IsOk());
    }
    const pending_workload w{job_id(1000),
                             *t->find(qname(rng() % static_cast<unsigned>(nq))),
                             {},
                             static_cast<std::int32_t>(rng() % 2),
                             0,
                             {{"cpu", 1 + static_cast<std::int64_t>(rng() % 4)},
                              {"gpu", 1 + static_cast<std::int64_t>(rng() % 3)}},
                             {}};
    if (!s.validate_pending(w)) continue;  // no flavor of its queue declares both resources
    capacity_cycle_options opt;
    opt.fair_sharing = fair;
    const auto plan = plan_preemption(s, w, opt);
    ASSERT_THAT(plan, IsOk());
    if (plan->victims.empty()) continue;
    std::vector<admitted_workload> gone;
    for (const auto& v : plan->victims) {
      gone.push_back(*s.admitted(v.victim));
      ASSERT_THAT(s.release(v.victim), IsOk());
    }
    ASSERT_THAT(s.add_admitted({w.job, w.queue, {}, w.priority, 1, plan->flavor, w.request}),
                IsOk());
    for (const auto& v : gone) {
      if (v.queue == w.queue) continue;  // in-queue priority preemption, not a cycle
      const pending_workload back{v.job, v.queue, {}, v.priority, 2, v.request, {}};
      if (!s.validate_pending(back)) continue;
      const auto again = plan_preemption(s, back, opt);
      ASSERT_THAT(again, IsOk());
      for (const auto& x : again->victims)
        EXPECT_NE(x.victim, w.job) << "scenario " << scenario << " fair " << fair << " victim "
                                   << v.job.value() << " preempts its preemptor back";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// The admission cycle shares its victim-search state across heads (candidate index, borrowing
// masks, DRS at the starting usage, exclusions). With a full root nothing is admitted, so head
// k's plan must equal a fresh plan_preemption once the victims of heads 0..k-1 are in flight.
// Variants: reclaim any; reclaim lower priority; borrowWithinCohort with a threshold; reclaim
// lower priority with a minimum runtime (the priority and age rules of other queues).
TEST(CapacityPreemptionProperty, CycleHeadsMatchFreshPlans) {
  std::mt19937_64 rng(20261122);
  int checked = 0;
  for (int scenario = 0; scenario < 800; ++scenario) {
    const bool fair = scenario % 2 == 0;
    const bool two_level = scenario % 4 >= 2;
    const int variant = (scenario / 4) % 4;
    queue_preemption policy = reclaim_any();
    if (variant == 1 || variant == 3) policy.reclaim = cohort_reclaim::lower_priority;
    if (variant == 2) policy.borrow = borrow_within_cohort{true, scenario % 8 < 4 ? 0 : 1};
    capacity_tree_spec spec;
    spec.nodes.push_back(node("root", "", capacity_node_kind::cohort,
                              {gpu(4 + static_cast<std::int64_t>(rng() % 6))}));
    const int nq = 3 + static_cast<int>(rng() % 4);
    if (two_level) {
      spec.nodes.push_back(node("left", "root", capacity_node_kind::cohort, {gpu(1)}));
      spec.nodes.push_back(node("right", "root", capacity_node_kind::cohort, {gpu(1)}));
    }
    for (int i = 0; i < nq; ++i) {
      auto n = node(qname(static_cast<std::uint64_t>(i)),
                    two_level ? (i % 2 ? "left" : "right") : "root", capacity_node_kind::queue,
                    {gpu(static_cast<std::int64_t>(rng() % 4))}, policy);
      n.fair_weight = 1.0 + static_cast<double>(rng() % 3);
      spec.nodes.push_back(std::move(n));
    }
    auto t = capacity_tree::build(spec);
    ASSERT_THAT(t, IsOk());
    capacity_state s(*t);
    const queue_id root = *t->find("root");
    std::uint32_t next = 1;
    // Fill the root exactly with running workloads (sizes 1-3, then 1).
    for (int k = 0; k < 200 && s.usage(root, 0) < t->subtree_quota(root, 0); ++k) {
      const queue_id q = *t->find(qname(rng() % static_cast<unsigned>(nq)));
      std::int64_t g = 1 + static_cast<std::int64_t>(rng() % 3);
      if (k >= 100) g = 1;
      if (quota_available(s.tree(), s.usage(), q, 0) < g) continue;
      ASSERT_THAT(s.add_admitted(running(next++, q, g, static_cast<std::int32_t>(rng() % 3),
                                         static_cast<std::int64_t>(rng() % 5))),
                  IsOk());
    }
    if (s.usage(root, 0) < t->subtree_quota(root, 0)) continue;
    for (int i = 0; i < nq; ++i) {
      const queue_id q = *t->find(qname(static_cast<std::uint64_t>(i)));
      ASSERT_THAT(s.submit({job_id(1000 + next++),
                            q,
                            {},
                            static_cast<std::int32_t>(rng() % 3),
                            static_cast<std::int64_t>(rng() % 4),
                            {{"gpu", 1 + static_cast<std::int64_t>(rng() % 3)}},
                            {}}),
                  IsOk());
    }
    capacity_cycle_options opt;
    opt.fair_sharing = fair;
    if (variant == 3) {
      opt.now = 5;
      opt.min_runtime = 2;  // running workloads admitted at 4 are too young
    }
    const auto plan = plan_admission(s, opt);
    ASSERT_THAT(plan, IsOk());
    ASSERT_TRUE(plan->admitted.empty());
    for (std::size_t k = 0; k < plan->preemptions.size(); ++k) {
      capacity_state before = s;
      admission_plan earlier;
      earlier.preemptions.assign(plan->preemptions.begin(),
                                 plan->preemptions.begin() + static_cast<std::ptrdiff_t>(k));
      ASSERT_THAT(apply_admission(before, earlier), IsOk());
      const auto& head = plan->preemptions[k];
      const auto fresh = plan_preemption(before, *s.pending(head.preemptor), opt);
      ASSERT_THAT(fresh, IsOk());
      EXPECT_EQ(fresh->victims, head.victims) << "scenario " << scenario << " head " << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace hetsched
