// SPDX-License-Identifier: MIT
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <hetsched/policies/proportional_preemption.hpp>

namespace hetsched {
namespace {

pcpp_vector v1(std::int64_t a) { return pcpp_vector{a}; }
pcpp_vector v2(std::int64_t a, std::int64_t b) { return pcpp_vector{a, b}; }

// Builds one-dimension snapshots: queues, then one job per call of `job` with n unit containers.
struct builder {
  pcpp_snapshot s;

  explicit builder(std::int64_t cluster) { s.cluster = v1(cluster); }

  std::size_t queue(std::string name, std::int64_t guaranteed, std::int64_t pending,
                    std::size_t parent = pcpp_root, std::int64_t maximum = -1) {
    pcpp_queue q;
    q.name = std::move(name);
    q.parent = parent;
    q.guaranteed = v1(guaranteed);
    q.maximum = v1(maximum < 0 ? s.cluster[0] : maximum);
    q.pending = v1(pending);
    s.queues.push_back(q);
    return s.queues.size() - 1;
  }

  // Adds a job of `n` containers of `size`, started at 1..n (container ids increase too).
  std::size_t job(std::size_t queue, int n, std::int64_t size = 1, bool gang = false,
                  std::int32_t priority = 0, std::int64_t submit = 0) {
    const std::size_t j = s.jobs.size();
    s.jobs.push_back(pcpp_job{j + 100, queue, priority, submit, gang});
    for (int i = 0; i < n; ++i) {
      pcpp_container c;
      c.id = s.containers.size() + 1;
      c.job = j;
      c.start_time = i + 1;
      c.size = v1(size);
      s.containers.push_back(c);
    }
    return j;
  }
};

pcpp_params ideal_params() {
  pcpp_params p;
  p.natural_termination_factor = {1, 1};
  p.total_preemption_per_round = {1, 1};
  return p;
}

std::int64_t victims_of(const pcpp_plan& plan, std::size_t job) {
  std::int64_t n = 0;
  for (const pcpp_victim& v : plan.victims) n += v.job == job ? 1 : 0;
  return n;
}

// testProportionalPreemption of YARN.
builder proportional() {
  builder b(100);
  const std::size_t a = b.queue("A", 10, 20);
  const std::size_t bq = b.queue("B", 40, 5);
  const std::size_t c = b.queue("C", 20, 20);
  b.queue("D", 30, 0);
  b.job(a, 30);
  b.job(bq, 60);
  b.job(c, 10);
  return b;
}

TEST(ProportionalPreemption, WaterFillsIdealAndPreemptsNewestFirst) {
  builder b = proportional();
  const auto plan = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(plan);
  // ideal: A 20, B 60, C 20, D 0
  EXPECT_EQ(plan->queues[0].ideal[0], 20);
  EXPECT_EQ(plan->queues[1].ideal[0], 60);
  EXPECT_EQ(plan->queues[2].ideal[0], 20);
  EXPECT_EQ(plan->queues[3].ideal[0], 0);
  EXPECT_EQ(plan->queues[0].to_be_preempted[0], 10);
  ASSERT_EQ(plan->victims.size(), 10u);
  // Newest container of A first: ids 30, 29, ..., 21 (indices 29..20).
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(plan->victims[i].container, 29 - i);
    EXPECT_EQ(plan->victims[i].queue, 0u);
    EXPECT_EQ(plan->victims[i].reason, pcpp_victim_reason::over_ideal);
  }
  EXPECT_EQ(plan->queues[0].selected[0], 10);
}

TEST(ProportionalPreemption, NaturalTerminationTakesAFractionRoundedUp) {
  builder b = proportional();
  pcpp_params p = ideal_params();
  p.natural_termination_factor = {2, 10};
  const auto plan = plan_proportional_preemption(b.s, p);
  ASSERT_TRUE(plan);
  // to_obtain = ceil(10 * 0.2) = 2
  EXPECT_EQ(plan->queues[0].to_obtain[0], 2);
  EXPECT_EQ(plan->victims.size(), 2u);
  p.natural_termination_factor = {15, 100};  // ceil(1.5) = 2 up, (long)(1.5 + 0.5) = 2 nearest
  p.rounding = pcpp_rounding::up;
  EXPECT_EQ(plan_proportional_preemption(b.s, p)->queues[0].to_obtain[0], 2);
  p.natural_termination_factor = {12, 100};  // 1.2: up -> 2, nearest -> 1
  EXPECT_EQ(plan_proportional_preemption(b.s, p)->queues[0].to_obtain[0], 2);
  p.rounding = pcpp_rounding::nearest;
  EXPECT_EQ(plan_proportional_preemption(b.s, p)->queues[0].to_obtain[0], 1);
}

TEST(ProportionalPreemption, PerRoundCapScalesTheNeed) {
  builder b = proportional();
  pcpp_params p = ideal_params();
  p.total_preemption_per_round = {5, 100};
  const auto plan = plan_proportional_preemption(b.s, p);
  ASSERT_TRUE(plan);
  // allowed 5 of a need of 10: factor 1/2
  EXPECT_EQ(plan->preemption_allowed[0], 5);
  EXPECT_EQ(plan->queues[0].to_be_preempted[0], 5);
  EXPECT_EQ(plan->victims.size(), 5u);
}

TEST(ProportionalPreemption, DeadZoneIgnoresSmallExcess) {
  builder b(100);
  const std::size_t a = b.queue("A", 50, 0);
  const std::size_t c = b.queue("B", 50, 10);
  b.job(a, 54);
  b.job(c, 46);
  pcpp_params p = ideal_params();
  auto plan = plan_proportional_preemption(b.s, p);
  ASSERT_TRUE(plan);
  // ideal A 50, to_be_preempted 4, but 54 <= 50 * 1.1 = 55: nothing this round
  EXPECT_EQ(plan->queues[0].ideal[0], 50);
  EXPECT_EQ(plan->queues[0].to_be_preempted[0], 4);
  EXPECT_EQ(plan->queues[0].to_obtain[0], 0);
  EXPECT_TRUE(plan->victims.empty());
  p.max_ignored_over_capacity = {0, 1};
  plan = plan_proportional_preemption(b.s, p);
  EXPECT_EQ(plan->victims.size(), 4u);
}

TEST(ProportionalPreemption, InFlightVictimsCoverTheNeedOfTheNextRound) {
  builder b = proportional();
  // Round 1 chose A's 4 newest containers; they still run.
  for (std::size_t i = 26; i < 30; ++i) b.s.containers[i].in_flight = true;
  const auto plan = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->queues[0].in_flight[0], 4);
  // need 10, 4 in flight: 6 new victims, ids 26..21
  EXPECT_EQ(plan->queues[0].to_be_preempted[0], 6);
  ASSERT_EQ(plan->victims.size(), 6u);
  EXPECT_EQ(plan->victims.front().container, 25u);
  EXPECT_EQ(plan->victims.back().container, 20u);
  // Everything in flight: no new victim.
  for (std::size_t i = 20; i < 30; ++i) b.s.containers[i].in_flight = true;
  EXPECT_TRUE(plan_proportional_preemption(b.s, ideal_params())->victims.empty());
}

TEST(ProportionalPreemption, MinimumRuntimeProtectsYoungContainers) {
  builder b = proportional();
  pcpp_params p = ideal_params();
  p.now = 30;
  p.min_runtime = 5;  // containers started after 25 are protected
  const auto plan = plan_proportional_preemption(b.s, p);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->victims.size(), 10u);
  // Start times 25..16 (indices 24..15) instead of 30..21.
  EXPECT_EQ(plan->victims.front().container, 24u);
  EXPECT_EQ(plan->victims.back().container, 15u);
}

TEST(ProportionalPreemption, GangsArePreemptedWhole) {
  builder b(100);
  const std::size_t a = b.queue("A", 50, 0);
  const std::size_t c = b.queue("B", 50, 30);
  const std::size_t small = b.job(a, 60, 1, false, 5);  // higher priority: loses last
  const std::size_t gang = b.job(a, 4, 5, true, 1);     // 20 units, lower priority: loses first
  b.job(c, 20);
  const auto plan = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(plan);
  // A uses 80, ideal 50: need 30 = the gang (20) + 10 small containers
  EXPECT_EQ(plan->queues[0].ideal[0], 50);
  ASSERT_EQ(victims_of(*plan, gang), 4);
  EXPECT_EQ(victims_of(*plan, small), 10);
  EXPECT_EQ(plan->victims[0].reason, pcpp_victim_reason::over_ideal);
  for (std::size_t i = 1; i < 4; ++i)
    EXPECT_EQ(plan->victims[i].reason, pcpp_victim_reason::gang_member);
  // A gang with one container in flight is in flight as a whole.
  b.s.containers[61].in_flight = true;
  const auto next = plan_proportional_preemption(b.s, ideal_params());
  EXPECT_EQ(victims_of(*next, gang), 0);
  EXPECT_EQ(victims_of(*next, small), 10);  // need 30 - 20 in flight
}

TEST(ProportionalPreemption, ApplicationMastersGoLast) {
  builder b = proportional();
  b.s.containers[29].am = true;  // A's newest container
  auto plan = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->victims.size(), 10u);
  EXPECT_EQ(plan->victims.front().container, 28u);
  EXPECT_EQ(plan->victims.back().container, 19u);

  // Only the AM is old enough: the AM pass takes it, with its own reason.
  builder c(100);
  const std::size_t a = c.queue("A", 10, 0);
  c.queue("B", 90, 90);
  c.job(a, 12);
  c.s.containers[11].am = true;
  c.s.containers[11].start_time = 0;
  pcpp_params p = ideal_params();
  p.now = 100;
  p.min_runtime = 100;
  plan = plan_proportional_preemption(c.s, p);
  ASSERT_TRUE(plan);
  // ideal A 10, B 90: need 2, but only the AM may go
  EXPECT_EQ(plan->queues[0].to_obtain[0], 2);
  ASSERT_EQ(plan->victims.size(), 1u);
  EXPECT_EQ(plan->victims[0].container, 11u);
  EXPECT_EQ(plan->victims[0].reason, pcpp_victim_reason::over_ideal_am);
}

TEST(ProportionalPreemption, DisableIsInheritedUnlessOverridden) {
  builder b(100);
  const std::size_t p = b.queue("P", 50, 0);
  const std::size_t x = b.queue("P.X", 25, 0, p);
  const std::size_t y = b.queue("P.Y", 25, 0, p);
  const std::size_t q = b.queue("Q", 50, 40);
  b.job(x, 40);
  b.job(y, 40);
  b.job(q, 20);
  b.s.queues[p].preemption = pcpp_preemption::disabled;
  auto plan = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->queues[x].preemption_disabled);
  EXPECT_TRUE(plan->queues[y].preemption_disabled);
  EXPECT_TRUE(plan->victims.empty());
  // Y re-enabled: P's extra (30) is preemptable through Y only (15 of it). Ideal of P: 50 + 15
  // untouchable (X's extra) = 65; Q gets 35; Y: 65 - X's 40 = 25.
  b.s.queues[y].preemption = pcpp_preemption::enabled;
  plan = plan_proportional_preemption(b.s, ideal_params());
  EXPECT_EQ(plan->queues[p].ideal[0], 65);
  EXPECT_EQ(plan->queues[q].ideal[0], 35);
  EXPECT_EQ(plan->queues[y].ideal[0], 25);
  EXPECT_EQ(plan->victims.size(), 15u);
  for (const pcpp_victim& v : plan->victims) EXPECT_EQ(v.queue, y);
}

TEST(ProportionalPreemption, HierarchyProtectsLeafUnderSatisfiedParent) {
  // H over its guarantee under G within its guarantee: H keeps its containers.
  builder b(100);
  const std::size_t g = b.queue("G", 50, 0);
  const std::size_t h = b.queue("G.H", 10, 0, g);
  b.queue("G.I", 40, 0, g);
  const std::size_t d = b.queue("D", 50, 20);
  b.job(h, 30);
  b.job(d, 50);
  const auto plan = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->queues[g].ideal[0], 30);
  EXPECT_EQ(plan->queues[h].ideal[0], 30);
  EXPECT_TRUE(plan->victims.empty());
}

TEST(ProportionalPreemption, TwoDimensionsFollowDominantShares) {
  pcpp_snapshot s;
  s.dimensions = 2;
  s.cluster = v2(100, 1000);
  s.queues.push_back(pcpp_queue{"A", pcpp_root, v2(50, 500), v2(100, 1000), v2(0, 0), {}});
  s.queues.push_back(pcpp_queue{"B", pcpp_root, v2(50, 500), v2(100, 1000), v2(30, 300), {}});
  s.jobs.push_back(pcpp_job{1, 0, 0, 0, false});
  for (int i = 0; i < 80; ++i) {
    pcpp_container c;
    c.id = static_cast<std::uint64_t>(i + 1);
    c.start_time = i;
    c.size = v2(1, 10);
    s.containers.push_back(c);
  }
  const auto plan = plan_proportional_preemption(s, ideal_params());
  ASSERT_TRUE(plan);
  // B: offers (25,250) then (5,50) reach its demand; A gets the remaining (20,200).
  EXPECT_EQ(plan->queues[1].ideal, v2(30, 300));
  EXPECT_EQ(plan->queues[0].ideal, v2(70, 700));
  EXPECT_EQ(plan->queues[0].to_be_preempted, v2(10, 100));
  EXPECT_EQ(plan->victims.size(), 10u);
}

TEST(ProportionalPreemption, RoundingModesAgreeOnYarnDisableCase) {
  // testPerQueueDisablePreemption with B enabled: B gives 4, C gives 6 under both roundings.
  for (const pcpp_rounding r : {pcpp_rounding::up, pcpp_rounding::nearest}) {
    builder b(100);
    const std::size_t a = b.queue("A", 55, 10);
    const std::size_t bq = b.queue("B", 25, 0);
    const std::size_t c = b.queue("C", 20, 0);
    b.job(a, 0);
    const std::size_t jb = b.job(bq, 54);
    const std::size_t jc = b.job(c, 46);
    pcpp_params p = ideal_params();
    p.rounding = r;
    const auto plan = plan_proportional_preemption(b.s, p);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->queues[0].ideal[0], 10);
    EXPECT_EQ(plan->queues[1].ideal[0], 50);
    EXPECT_EQ(plan->queues[2].ideal[0], 40);
    EXPECT_EQ(victims_of(*plan, jb), 4);
    EXPECT_EQ(victims_of(*plan, jc), 6);
  }
}

TEST(ProportionalPreemption, IsDeterministic) {
  builder b = proportional();
  const auto x = plan_proportional_preemption(b.s, ideal_params());
  const auto y = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->victims, y->victims);
}

TEST(ProportionalPreemption, RejectsBadInput) {
  builder b = proportional();
  pcpp_snapshot s = b.s;
  s.queues[1].parent = 2;
  auto r = plan_proportional_preemption(s, ideal_params());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::invalid_argument);
  EXPECT_NE(r.error().message.find("queue 'B'"), std::string::npos);

  s = b.s;
  s.queues.push_back(pcpp_queue{"A.X", 0, v1(5), v1(100), v1(0), {}});
  r = plan_proportional_preemption(s, ideal_params());
  ASSERT_FALSE(r);  // A has pending and a job, and now a child
  EXPECT_NE(r.error().message.find("'A'"), std::string::npos);

  s = b.s;
  s.containers[0].size[1] = 1;
  EXPECT_FALSE(plan_proportional_preemption(s, ideal_params()));
  s = b.s;
  s.cluster[0] = 0;
  EXPECT_FALSE(plan_proportional_preemption(s, ideal_params()));
  pcpp_params p = ideal_params();
  p.natural_termination_factor = {1, 0};
  EXPECT_FALSE(plan_proportional_preemption(b.s, p));
  p = ideal_params();
  p.min_runtime = -1;
  EXPECT_FALSE(plan_proportional_preemption(b.s, p));
}

// The message of a plan that must fail with invalid_argument, or a note that it did not.
std::string bad_input_message(const pcpp_snapshot& s) {
  const auto r = plan_proportional_preemption(s, ideal_params());
  if (r) return "accepted";
  if (r.error().code != errc::invalid_argument) return "wrong code: " + r.error().message;
  return r.error().message;
}

TEST(ProportionalPreemption, RejectsGuaranteeAboveMaximum) {
  pcpp_snapshot s = proportional().s;
  s.queues[1].maximum = v1(30);  // B guarantees 40
  EXPECT_EQ(bad_input_message(s), "queue 'B': guaranteed 40 exceeds its maximum 30 in dimension 0");
  s.queues[1].maximum = v1(40);  // equal is YARN's maximum-capacity = capacity
  EXPECT_EQ(bad_input_message(s), "accepted");
  // Two dimensions: the offending one is named.
  pcpp_snapshot two;
  two.dimensions = 2;
  two.cluster = v2(100, 400);
  two.queues.push_back(pcpp_queue{"gpu-heavy", pcpp_root, v2(10, 50), v2(20, 40), {}, {}});
  EXPECT_EQ(bad_input_message(two),
            "queue 'gpu-heavy': guaranteed 50 exceeds its maximum 40 in dimension 1");
}

TEST(ProportionalPreemption, RejectsGuaranteesAboveTheParentOrTheCluster) {
  pcpp_snapshot s = proportional().s;
  s.queues[3].guaranteed = v1(31);  // 10 + 40 + 20 + 31 = 101 of a 100 cluster
  EXPECT_EQ(bad_input_message(s),
            "top-level queues: guarantees sum to 101 in dimension 0, above the cluster's 100");
  builder b(100);
  const std::size_t parent = b.queue("P", 50, 0);
  b.queue("P.x", 30, 0, parent);
  const std::size_t y = b.queue("P.y", 25, 0, parent);
  b.queue("Q", 50, 0);
  EXPECT_EQ(bad_input_message(b.s),
            "queue 'P': its children's guarantees sum to 55 in dimension 0, above its own "
            "guarantee 50");
  b.s.queues[y].guaranteed = v1(20);  // exactly the parent's
  EXPECT_EQ(bad_input_message(b.s), "accepted");
  b.s.queues[y].guaranteed = v1(5);  // below: the rest is shared by the water-filling
  EXPECT_EQ(bad_input_message(b.s), "accepted");
}

// The cluster shrank under running containers (a node failed): 90 units run on 80. YARN plans
// on such states; so does hetsched. A (guaranteed 40) runs 60, B (guaranteed 40) runs 30 and
// asks 20 more: ideal A 40 (its guarantee), B 30 + the 10 left unassigned = 40; A gives back 20,
// and the queues then hold exactly the cluster.
TEST(ProportionalPreemption, PlansWhenUsageExceedsAShrunkCluster) {
  builder b(80);
  const std::size_t a = b.queue("A", 40, 0);
  const std::size_t bq = b.queue("B", 40, 20);
  const std::size_t ja = b.job(a, 60);
  const std::size_t jb = b.job(bq, 30);
  auto plan = plan_proportional_preemption(b.s, ideal_params());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->queues[a].used[0], 60);
  EXPECT_EQ(plan->queues[a].ideal[0], 40);
  EXPECT_EQ(plan->queues[bq].ideal[0], 40);
  EXPECT_EQ(plan->queues[a].to_be_preempted[0], 20);
  EXPECT_EQ(victims_of(*plan, ja), 20);
  EXPECT_EQ(victims_of(*plan, jb), 0);
  // With nothing pending the excess above the cluster alone is given back: A 50 over 40 with
  // B at its 40 (90 on 80) -> A gives 10.
  builder full(80);
  const std::size_t fa = full.queue("A", 40, 0);
  const std::size_t fb = full.queue("B", 40, 0);
  const std::size_t fja = full.job(fa, 50);
  full.job(fb, 40);
  plan = plan_proportional_preemption(full.s, ideal_params());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->queues[fa].ideal[0], 40);
  EXPECT_EQ(plan->queues[fb].ideal[0], 40);
  EXPECT_EQ(victims_of(*plan, fja), 10);
  // YARN's product defaults: the per-round cap is 10% of the (shrunk) cluster, 8 units, which
  // scales A's 20 to 8, and natural termination takes 20% of that: ceil(1.6) = 2 units.
  pcpp_params defaults;
  plan = plan_proportional_preemption(b.s, defaults);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->preemption_allowed[0], 8);
  EXPECT_EQ(plan->queues[a].to_be_preempted[0], 8);  // 20 scaled by the cap: 8 / 20
  EXPECT_EQ(victims_of(*plan, ja), 2);
}

// A seeded random two-level snapshot in two dimensions.
pcpp_snapshot random_snapshot(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto pick = [&rng](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  pcpp_snapshot s;
  s.dimensions = 2;
  s.cluster = v2(1000, 4000);
  std::vector<std::size_t> leaves;
  for (int p = 0; p < 4; ++p) {
    pcpp_queue parent{fmt::format("p{}", p), pcpp_root, v2(250, 1000), s.cluster, {}, {}};
    if (pick(0, 4) == 0) parent.preemption = pcpp_preemption::disabled;
    const std::size_t pi = s.queues.size();
    s.queues.push_back(parent);
    for (int l = 0; l < 3; ++l) {
      // Three leaves' guarantees fit in their parent's (YARN: children share the parent's).
      pcpp_queue leaf{fmt::format("p{}/{}", p, l),    pi, v2(pick(0, 83), pick(0, 333)), s.cluster,
                      v2(pick(0, 100), pick(0, 400)), {}};
      if (pick(0, 5) == 0) leaf.preemption = pcpp_preemption::enabled;
      leaves.push_back(s.queues.size());
      s.queues.push_back(leaf);
    }
  }
  std::int64_t used = 0;
  std::int64_t used_second = 0;  // the containers fit in the cluster in both dimensions
  for (int j = 0; j < 60; ++j) {
    const std::size_t leaf = leaves[static_cast<std::size_t>(pick(0, 11))];
    s.jobs.push_back(pcpp_job{static_cast<std::uint64_t>(j + 1), leaf,
                              static_cast<std::int32_t>(pick(0, 2)), pick(0, 50), pick(0, 3) == 0});
    for (std::int64_t c = pick(1, 5); c > 0 && used + 10 <= 1000 && used_second + 40 <= 4000; --c) {
      pcpp_container con;
      con.id = s.containers.size() + 1;
      con.job = static_cast<std::size_t>(j);
      con.priority = static_cast<std::int32_t>(pick(0, 1));
      con.start_time = pick(0, 100);
      con.size = v2(pick(1, 10), pick(1, 40));
      con.am = pick(0, 6) == 0;
      con.in_flight = pick(0, 9) == 0;
      used += con.size[0];
      used_second += con.size[1];
      s.containers.push_back(con);
    }
  }
  return s;
}

TEST(ProportionalPreemption, RandomPlansKeepTheirInvariantsAndIgnoreInputOrder) {
  std::size_t total_victims = 0;
  std::size_t gang_victims = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    const pcpp_snapshot s = random_snapshot(seed);
    pcpp_params p;
    p.natural_termination_factor = {1, 2};
    p.total_preemption_per_round = {1, 5};
    p.now = 100;
    p.min_runtime = 20;
    const auto plan = plan_proportional_preemption(s, p);
    ASSERT_TRUE(plan) << plan.error().message;
    std::set<std::size_t> seen;
    pcpp_vector taken{};
    total_victims += plan->victims.size();
    for (const pcpp_victim& v : plan->victims) {
      gang_victims += v.reason == pcpp_victim_reason::gang_member ? 1 : 0;
      const pcpp_container& c = s.containers[v.container];
      EXPECT_TRUE(seen.insert(v.container).second) << "seed " << seed;
      EXPECT_FALSE(c.in_flight) << "seed " << seed;
      EXPECT_EQ(s.jobs[c.job].queue, v.queue);
      EXPECT_TRUE(plan->queues[v.queue].leaf);
      EXPECT_FALSE(plan->queues[v.queue].preemption_disabled) << "seed " << seed;
      taken[0] += c.size[0];
      taken[1] += c.size[1];
    }
    // The per-round cap holds, and every gang is all in or all out.
    EXPECT_LE(taken[0], plan->preemption_allowed[0]) << "seed " << seed;
    EXPECT_LE(taken[1], plan->preemption_allowed[1]) << "seed " << seed;
    for (std::size_t j = 0; j < s.jobs.size(); ++j) {
      if (!s.jobs[j].gang) continue;
      std::size_t in = 0;
      std::size_t all = 0;
      for (std::size_t c = 0; c < s.containers.size(); ++c) {
        if (s.containers[c].job != j) continue;
        ++all;
        in += seen.count(c);
      }
      EXPECT_TRUE(in == 0 || in == all) << "seed " << seed << " job " << j;
    }
    // Shuffling the containers changes nothing but their indices.
    pcpp_snapshot shuffled = s;
    std::vector<std::size_t> perm(s.containers.size());
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
    for (std::size_t i = 0; i < perm.size(); ++i) shuffled.containers[i] = s.containers[perm[i]];
    const auto again = plan_proportional_preemption(shuffled, p);
    ASSERT_TRUE(again);
    ASSERT_EQ(again->victims.size(), plan->victims.size()) << "seed " << seed;
    for (std::size_t i = 0; i < plan->victims.size(); ++i) {
      EXPECT_EQ(shuffled.containers[again->victims[i].container].id,
                s.containers[plan->victims[i].container].id)
          << "seed " << seed;
      EXPECT_EQ(again->victims[i].reason, plan->victims[i].reason);
    }
    for (std::size_t q = 0; q < s.queues.size(); ++q)
      EXPECT_EQ(again->queues[q].ideal, plan->queues[q].ideal);
  }
  // The scenarios do preempt, gangs included (685 victims, 33 of them gang members, over these
  // 150 seeds).
  EXPECT_GT(total_victims, 100U);
  EXPECT_GT(gang_victims, 10U);
  RecordProperty("victims", static_cast<int>(total_victims));
}

// No preemption back and forth: round 1's victims terminate and come back as pending demand of
// their leaves; what they freed goes, as the scheduler would hand it out, to leaves below their
// ideal assignment with pending demand (never beyond that ideal). Round 2 then computes the same
// ideal assignment (it depends on used + pending, guarantees and maxima, all unchanged per
// queue), so no leaf that received is preempted, let alone the containers it received. Flat and
// two-level hierarchies, YARN's default parameters and the full ones, some leaves disabled.
TEST(ProportionalPreemptionProperty, ReceiversAreNeverPreemptedBackInTheNextRound) {
  std::mt19937_64 rng(20261124);
  int rounds_with_victims = 0;
  std::int64_t received = 0;
  const auto split = [&](std::int64_t total, std::size_t n) {
    std::vector<std::int64_t> parts(n, 0);
    for (std::int64_t u = 0; u < total; ++u) ++parts[rng() % n];
    return parts;
  };
  for (int scenario = 0; scenario < 1500; ++scenario) {
    const auto cluster = static_cast<std::int64_t>(20 + rng() % 21);
    builder b(cluster);
    std::vector<std::size_t> leaves;
    const auto add_leaf = [&](std::string name, std::int64_t guaranteed, std::size_t parent) {
      const std::int64_t maximum =
          guaranteed +
          static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cluster - guaranteed + 1));
      const std::size_t q = b.queue(std::move(name), guaranteed,
                                    static_cast<std::int64_t>(rng() % 9), parent, maximum);
      if (rng() % 8 == 0) b.s.queues[q].preemption = pcpp_preemption::disabled;
      leaves.push_back(q);
    };
    if (scenario % 2 == 1) {
      const auto top = split(cluster, 2);
      for (std::size_t p = 0; p < 2; ++p) {
        const std::size_t parent = b.queue(fmt::format("p{}", p), top[p], 0);
        const auto parts = split(top[p], 2 + rng() % 2);
        for (std::size_t i = 0; i < parts.size(); ++i)
          add_leaf(fmt::format("p{}.l{}", p, i), parts[i], parent);
      }
    } else {
      const auto parts = split(cluster, 3 + rng() % 3);
      for (std::size_t i = 0; i < parts.size(); ++i)
        add_leaf(fmt::format("l{}", i), parts[i], pcpp_root);
    }
    // Fill the cluster with unit containers, one job per leaf, within each leaf's maximum.
    std::vector<std::int64_t> used(b.s.queues.size(), 0);
    for (std::int64_t u = 0, tries = 0; u < cluster && tries < 1000; ++tries) {
      const std::size_t l = leaves[rng() % leaves.size()];
      if (used[l] >= b.s.queues[l].maximum[0]) continue;
      ++used[l];
      ++u;
    }
    for (const std::size_t l : leaves)
      if (used[l] > 0) b.job(l, static_cast<int>(used[l]));
    const pcpp_params params = scenario % 4 < 2 ? pcpp_params{} : ideal_params();
    const auto first = plan_proportional_preemption(b.s, params);
    ASSERT_TRUE(first) << first.error().message;
    if (first->victims.empty()) continue;
    ++rounds_with_victims;
    // The victims terminate and ask again; the freed units go to leaves below their ideal.
    pcpp_snapshot next = b.s;
    std::set<std::size_t> victim_index;
    std::int64_t freed = 0;
    for (const pcpp_victim& v : first->victims) {
      victim_index.insert(v.container);
      next.queues[v.queue].pending[0] += b.s.containers[v.container].size[0];
      used[v.queue] -= b.s.containers[v.container].size[0];
      freed += b.s.containers[v.container].size[0];
    }
    next.containers.clear();
    for (std::size_t c = 0; c < b.s.containers.size(); ++c)
      if (victim_index.count(c) == 0) next.containers.push_back(b.s.containers[c]);
    std::set<std::size_t> receivers;
    std::set<std::uint64_t> given;
    std::uint64_t next_id = 10000;
    for (const std::size_t l : leaves) {
      const std::int64_t room = first->queues[l].ideal[0] - used[l];
      const std::int64_t give = std::min({freed, next.queues[l].pending[0], room});
      if (give <= 0) continue;
      next.jobs.push_back(pcpp_job{next_id++, l, 0, 50, false});
      for (std::int64_t k = 0; k < give; ++k) {
        pcpp_container c;
        c.id = next_id++;
        c.job = next.jobs.size() - 1;
        c.start_time = 50;
        c.size = v1(1);
        next.containers.push_back(c);
        given.insert(c.id);
      }
      next.queues[l].pending[0] -= give;
      freed -= give;
      received += give;
      receivers.insert(l);
    }
    const auto second = plan_proportional_preemption(next, params);
    ASSERT_TRUE(second) << second.error().message;
    for (std::size_t q = 0; q < next.queues.size(); ++q)
      EXPECT_EQ(second->queues[q].ideal, first->queues[q].ideal)
          << "scenario " << scenario << " queue " << q;
    for (const pcpp_victim& v : second->victims) {
      EXPECT_EQ(receivers.count(v.queue), 0U)
          << "scenario " << scenario << ": leaf " << next.queues[v.queue].name
          << " received in round 1 and loses in round 2";
      EXPECT_EQ(given.count(next.containers[v.container].id), 0U) << "scenario " << scenario;
    }
  }
  EXPECT_GT(rounds_with_victims, 300);
  EXPECT_GT(received, 300);
}

}  // namespace
}  // namespace hetsched
