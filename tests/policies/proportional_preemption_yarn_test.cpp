// SPDX-License-Identifier: MIT
// YARN's per-queue disable_preemption tests (TestProportionalCapacityPreemptionPolicy.
// testPerQueueDisablePreemption*), rebuilt from their qData tables as YARN's test harness builds
// them, with YARN's outcomes: a disabled queue is never a victim, its usage above its guarantee
// still counts (untouchable), and the flag is inherited from the parent (the root's included)
// unless a queue sets its own.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <hetsched/policies/proportional_preemption.hpp>

namespace hetsched {
namespace {

// YARN's qData columns: the root first, then the queues in pre-order ("queueA", "queueB", ...);
// subqueues gives each queue's child count (0: a leaf). Every leaf runs `apps` applications,
// numbered across leaves in order (appA = 0, appB = 1, ...), each with used / apps containers of
// one unit (the tests' granularity), newest last.
struct yarn_table {
  std::vector<std::int64_t> abs, max_cap, used, pending, apps, subqueues;
};

struct yarn_case {
  pcpp_snapshot snapshot;
  std::map<std::string, std::size_t> queue;  // "A", "B", ... -> snapshot index
};

yarn_case build(const yarn_table& t) {
  yarn_case out;
  pcpp_snapshot& s = out.snapshot;
  s.dimensions = 1;
  s.cluster = pcpp_vector{t.abs[0]};
  // The harness's parent stack: a parent is pushed once per child; each queue pops its parent.
  std::vector<std::size_t> parents(static_cast<std::size_t>(t.subqueues[0]), pcpp_root);
  std::uint64_t app = 0;
  for (std::size_t i = 1; i < t.abs.size(); ++i) {
    const std::size_t parent = parents.back();
    parents.pop_back();
    const std::string name(1, static_cast<char>('A' + i - 1));
    const std::size_t q = s.queues.size();
    out.queue[name] = q;
    s.queues.push_back(pcpp_queue{name,
                                  parent,
                                  pcpp_vector{t.abs[i]},
                                  pcpp_vector{t.max_cap[i]},
                                  pcpp_vector{t.subqueues[i] > 0 ? 0 : t.pending[i]},
                                  {}});
    if (t.subqueues[i] > 0) {
      parents.insert(parents.end(), static_cast<std::size_t>(t.subqueues[i]), q);
      continue;
    }
    for (std::int64_t a = 0; a < t.apps[i]; ++a, ++app) {
      const std::size_t job = s.jobs.size();
      s.jobs.push_back(pcpp_job{app, q, 0, static_cast<std::int64_t>(app), false});
      for (std::int64_t c = 0; c < t.used[i] / t.apps[i]; ++c) {
        pcpp_container unit;
        unit.id = app * 100000 + static_cast<std::uint64_t>(c);
        unit.job = job;
        unit.priority = 1;
        unit.start_time = c;
        unit.size = pcpp_vector{1};
        s.containers.push_back(unit);
      }
    }
  }
  return out;
}

// The test harness's settings: per-round cap and natural termination 1.0, dead zone 0.1, the
// DefaultResourceCalculator (memory only: rounding to nearest).
pcpp_params yarn_test_params() {
  pcpp_params p;
  p.total_preemption_per_round = {1, 1};
  p.natural_termination_factor = {1, 1};
  p.rounding = pcpp_rounding::nearest;
  return p;
}

// Preempted containers per application (appA = 0, ...), only those with at least one.
std::map<std::uint64_t, std::int64_t> preempted(const yarn_case& c) {
  const auto plan = plan_proportional_preemption(c.snapshot, yarn_test_params());
  EXPECT_TRUE(plan) << plan.error().message;
  std::map<std::uint64_t, std::int64_t> out;
  if (!plan) return out;
  for (const pcpp_victim& v : plan->victims) ++out[c.snapshot.jobs[v.job].id];
  return out;
}

using counts = std::map<std::uint64_t, std::int64_t>;
constexpr std::uint64_t app_a = 0, app_b = 1, app_c = 2, app_d = 3;

TEST(YarnDisablePreemption, PerQueueDisablePreemption) {
  const yarn_table t{{100, 55, 25, 20}, {100, 100, 100, 100}, {100, 0, 54, 46},
                     {10, 10, 0, 0},    {3, 1, 1, 1},         {3, 0, 0, 0}};
  yarn_case c = build(t);
  c.snapshot.queues[c.queue["B"]].preemption = pcpp_preemption::disabled;
  // queueB is not preemptable: the 10 come from queueC.
  EXPECT_EQ(preempted(c), (counts{{app_c, 10}}));
  c.snapshot.queues[c.queue["B"]].preemption = pcpp_preemption::inherit;
  EXPECT_EQ(preempted(c), (counts{{app_b, 4}, {app_c, 6}}));
}

TEST(YarnDisablePreemption, Hierarchical) {
  //                  /    A   B   C    D   E   F
  const yarn_table t{{200, 100, 50, 50, 100, 10, 90}, {200, 200, 200, 200, 200, 200, 200},
                     {200, 110, 60, 50, 90, 90, 0},   {10, 0, 0, 0, 10, 0, 10},
                     {4, 2, 1, 1, 2, 1, 1},           {2, 2, 0, 0, 2, 0, 0}};
  yarn_case c = build(t);
  // From queueB (appA): queueA is over its guarantee, queueD is not.
  EXPECT_EQ(preempted(c), (counts{{app_a, 10}}));
  // queueB disabled: queueA's extra is untouchable, so queueE (appC) gives the 10.
  c.snapshot.queues[c.queue["B"]].preemption = pcpp_preemption::disabled;
  EXPECT_EQ(preempted(c), (counts{{app_c, 10}}));
}

TEST(YarnDisablePreemption, BroadHierarchical) {
  //                  /     A    B    C    D    E    F    G    H    I
  const yarn_table t{{1000, 350, 150, 200, 400, 200, 200, 250, 100, 150},
                     {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000},
                     {1000, 400, 200, 200, 400, 250, 150, 200, 150, 50},
                     {50, 0, 0, 0, 50, 0, 50, 0, 0, 0},
                     {6, 2, 1, 1, 2, 1, 1, 2, 1, 1},
                     {3, 2, 0, 0, 2, 0, 0, 2, 0, 0}};
  yarn_case c = build(t);
  // queueF (appD) asks 50: from its sibling queueE (appC) and from queueB (appA), queueA being
  // over its guarantee.
  EXPECT_EQ(preempted(c), (counts{{app_a, 27}, {app_c, 23}}));
  c.snapshot.queues[c.queue["B"]].preemption = pcpp_preemption::disabled;
  EXPECT_EQ(preempted(c), (counts{{app_c, 50}}));
  // queueB and queueE disabled: queueH is over its guarantee but queueG is not: nothing.
  c.snapshot.queues[c.queue["E"]].preemption = pcpp_preemption::disabled;
  EXPECT_EQ(preempted(c), counts{});
}

TEST(YarnDisablePreemption, InheritParent) {
  //                  /     A    B    C    D    E    F    G    H
  const yarn_table t{{1000, 500, 200, 200, 100, 500, 200, 200, 100},
                     {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000},
                     {1000, 700, 0, 350, 350, 300, 0, 200, 100},
                     {200, 0, 0, 0, 0, 200, 200, 0, 0},
                     {5, 2, 0, 1, 1, 3, 1, 1, 1},
                     {2, 3, 0, 0, 0, 3, 0, 0, 0}};
  yarn_case c = build(t);
  // queueC (appA) gives 17, queueD (appB) 183: D is further over its guarantee.
  EXPECT_EQ(preempted(c), (counts{{app_a, 17}, {app_b, 183}}));
  // queueA disabled, inherited by its children: queueF's request starves.
  c.snapshot.queues[c.queue["A"]].preemption = pcpp_preemption::disabled;
  EXPECT_EQ(preempted(c), counts{});
  // A child that re-enables itself is preemptable again: queueC's extra (150) stays
  // untouchable, so queueC keeps 350 of queueA's ideal 500 and queueD (appB) gives back down to
  // the 150 left for it: 200.
  c.snapshot.queues[c.queue["D"]].preemption = pcpp_preemption::enabled;
  EXPECT_EQ(preempted(c), (counts{{app_b, 200}}));
}

TEST(YarnDisablePreemption, NotAllUntouchable) {
  //                  /     A     B    C    D    E     F    G    H
  const yarn_table t{{2000, 1000, 800, 100, 100, 1000, 500, 300, 200},
                     {2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000},
                     {2000, 1300, 300, 800, 200, 700, 500, 0, 200},
                     {300, 0, 0, 0, 0, 300, 0, 300, 0},
                     {6, 3, 1, 1, 1, 3, 1, 1, 1},
                     {2, 3, 0, 0, 0, 3, 0, 0, 0}};
  yarn_case c = build(t);
  c.snapshot.queues[c.queue["C"]].preemption = pcpp_preemption::disabled;
  // queueC (appB) is far over its guarantee but untouchable; queueD (appC) gives the 100.
  EXPECT_EQ(preempted(c), (counts{{app_c, 100}}));
}

TEST(YarnDisablePreemption, RootDisablesAll) {
  //                  /     A    B    C    D    E    F    G    H    I
  const yarn_table t{{1000, 500, 250, 250, 250, 100, 150, 250, 100, 150},
                     {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000},
                     {1000, 20, 0, 20, 490, 240, 250, 490, 240, 250},
                     {200, 200, 200, 0, 0, 0, 0, 0, 0, 0},
                     {6, 2, 1, 1, 2, 1, 1, 2, 1, 1},
                     {3, 2, 0, 0, 2, 0, 0, 2, 0, 0}};
  yarn_case c = build(t);
  // With preemption on, queueB's 200 come from the queues over their guarantees.
  EXPECT_FALSE(preempted(c).empty());
  c.snapshot.root_preemption = pcpp_preemption::disabled;
  EXPECT_EQ(preempted(c), counts{});
  // A top-level queue that enables itself is preemptable again under a disabled root: only
  // queueD's leaves (appC in queueE, appD in queueF) give back.
  c.snapshot.queues[c.queue["D"]].preemption = pcpp_preemption::enabled;
  const auto d_only = preempted(c);
  EXPECT_FALSE(d_only.empty());
  for (const auto& [app, n] : d_only) EXPECT_TRUE(app == app_c || app == app_d) << app;
  std::int64_t given = 0;
  for (const auto& [app, n] : d_only) given += n;
  EXPECT_LE(given, 240);  // queueD's extra above its guarantee: 490 - 250
}

TEST(YarnDisablePreemption, OverAbsMaxCapacity) {
  //                  /     A    B    C    D    E    F
  const yarn_table t{{1000, 725, 360, 365, 275, 17, 258},
                     {1000, 1000, 1000, 1000, 550, 109, 1000},
                     {1000, 741, 396, 345, 259, 110, 149},
                     {40, 20, 0, 20, 20, 20, 0},
                     {4, 2, 1, 1, 2, 1, 1},
                     {2, 2, 0, 0, 2, 0, 0}};
  yarn_case c = build(t);
  // queueE inherits queueD's disable: appC (queueE, above its maximum) is never a victim.
  c.snapshot.queues[c.queue["D"]].preemption = pcpp_preemption::disabled;
  EXPECT_EQ(preempted(c).count(app_c), 0u);
}

}  // namespace
}  // namespace hetsched
