// SPDX-License-Identifier: MIT
// No preemption cycles of any length: in a closed system (no arrivals or completions; victims
// terminate and come back to their queues, as Kueue requeues evicted workloads with the
// eviction time as their queue-order time) rounds of admission cycles never produce jobs A, B,
// ..., Z where A preempts B, B preempts C, ..., Z preempts A, and the rounds reach a fixed point.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

#include "capacity_random_scenario.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::IsOk;

// Returns a cycle of the directed graph `edges` (as its node list), or an empty list.
std::vector<std::uint32_t> find_cycle(
    const std::map<std::uint32_t, std::set<std::uint32_t>>& edges) {
  std::map<std::uint32_t, int> color;  // 0 new, 1 on the stack, 2 done
  std::vector<std::uint32_t> stack;
  std::vector<std::uint32_t> cycle;
  const auto visit = [&](auto&& self, std::uint32_t v) -> bool {
    color[v] = 1;
    stack.push_back(v);
    if (const auto it = edges.find(v); it != edges.end())
      for (const std::uint32_t w : it->second) {
        if (color[w] == 1) {
          const auto from = std::find(stack.begin(), stack.end(), w);
          cycle.assign(from, stack.end());
          return true;
        }
        if (color[w] == 0 && self(self, w)) return true;
      }
    stack.pop_back();
    color[v] = 2;
    return false;
  };
  for (const auto& [v, out] : edges)
    if (color[v] == 0 && visit(visit, v)) return cycle;
  return {};
}

// One closed-system run: returns the preemption edges (preemptor -> victims) of every round.
struct run_result {
  std::map<std::uint32_t, std::set<std::uint32_t>> edges;
  int rounds = 0;
  bool fixed_point = false;
  int victims = 0;
};

run_result closed_run(std::uint64_t seed, bool fair) {
  capacity_scenario g(seed);
  run_result out;
  auto tree = capacity_tree::build(g.tree());
  EXPECT_THAT(tree, IsOk());
  if (!tree) return out;
  capacity_state s(std::move(*tree));
  std::uint32_t next = 1;
  for (int k = static_cast<int>(g.pick(2, 12)); k > 0; --k) {
    const auto w = g.workload(next, g.any_queue(s.tree()));
    const admitted_workload a{w.job,      w.queue,      w.tenant,
                              w.priority, g.pick(0, 4), g.flavors()[g.rng()() % g.flavors().size()],
                              w.request};
    if (!capacity_scenario::fits_now(s, a)) continue;
    EXPECT_THAT(s.add_admitted(a), IsOk());
    ++next;
  }
  for (int k = static_cast<int>(g.pick(1, 10)); k > 0; --k) {
    const auto w = g.workload(next++, g.any_queue(s.tree()));
    if (s.validate_pending(w)) {
      EXPECT_THAT(s.submit(w), IsOk());
    }
  }
  capacity_cycle_options opt;
  opt.custom_order = capacity_scenario::by_tenant;
  opt.fair_sharing = fair;
  for (std::int64_t now = 10; out.rounds < 40; ++now) {
    ++out.rounds;
    opt.now = now;
    const auto plan = plan_admission(s, opt);
    EXPECT_THAT(plan, IsOk());
    if (!plan) return out;
    EXPECT_THAT(apply_admission(s, *plan), IsOk());
    for (const auto& p : plan->preemptions)
      for (const auto& v : p.victims) {
        out.edges[p.preemptor.value()].insert(v.victim.value());
        ++out.victims;
      }
    // The victims terminate and are requeued with the eviction time.
    std::vector<admitted_workload> gone;
    for (const auto& p : plan->preemptions)
      for (const auto& v : p.victims) gone.push_back(*s.admitted(v.victim));
    for (const auto& w : gone) {
      EXPECT_THAT(s.release(w.job), IsOk());
      EXPECT_THAT(s.submit({w.job, w.queue, w.tenant, w.priority, now, w.request, {}}), IsOk());
    }
    if (plan->admitted.empty() && plan->preemptions.empty()) {
      out.fixed_point = true;
      break;
    }
  }
  return out;
}

TEST(CapacityPreemptionCycles, ClosedSystemRunsHaveNoPreemptionCycle) {
  int with_victims = 0;
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    for (const bool fair : {false, true}) {
      const run_result r = closed_run(seed, fair);
      const auto cycle = find_cycle(r.edges);
      EXPECT_TRUE(cycle.empty()) << "seed " << seed << (fair ? " fair" : " classic")
                                 << ": preemption cycle of " << cycle.size() << " jobs, first "
                                 << (cycle.empty() ? 0 : cycle.front());
      EXPECT_TRUE(r.fixed_point) << "seed " << seed << (fair ? " fair" : " classic")
                                 << ": no fixed point after " << r.rounds << " rounds";
      with_victims += r.victims > 0 ? 1 : 0;
    }
  }
  EXPECT_GT(with_victims, 500);
}

}  // namespace
}  // namespace hetsched
