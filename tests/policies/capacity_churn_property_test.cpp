// SPDX-License-Identifier: MIT
// Quotas hold under churn: seeded random sequences of submissions, admission cycles (with
// preemption), finishes and victims terminating (and coming back), checked after every step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

#include "capacity_random_scenario.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::IsOk;

// Checks, for every node and every (flavor, resource):
//  - the usage equals its definition recomputed from the admitted workloads (a queue: the sum
//    of its workloads; a cohort: the sum over its children of max(0, usage - local quota));
//  - a node with a borrowing limit uses at most its subtree quota plus that limit (a queue's
//    subtree quota is its nominal quota), a queue at most its potential available (nominal plus
//    what its ancestors can lend it), and a root at most its subtree quota;
//  - a queue uses only the (flavor, resource) pairs it declares.
// Returns the first violation, or an empty string.
std::string check_quotas(const capacity_state& s, const std::vector<job_id>& admitted) {
  const capacity_tree& t = s.tree();
  const std::size_t nf = t.fr_count();
  std::vector<std::int64_t> usage(t.size() * nf, 0);
  for (const job_id j : admitted) {
    const admitted_workload* w = s.admitted(j);
    if (w == nullptr) return fmt::format("job {} is not admitted", j.value());
    for (const auto& [r, amount] : w->request) {
      if (amount == 0) continue;
      const auto f = t.find_fr(w->flavor, r);
      if (!f || !t.declares(w->queue, *f))
        return fmt::format("job {} uses {}@{} its queue '{}' does not declare", j.value(), r,
                           w->flavor, t.name(w->queue));
      usage[w->queue.value() * nf + *f] += amount;
    }
  }
  // Cohorts: usage(c) = sum over children of max(0, usage(child) - local(child)), computed
  // bottom-up by depth.
  std::vector<queue_id> by_depth;
  for (std::uint32_t i = 0; i < t.size(); ++i) by_depth.push_back(queue_id(i));
  std::stable_sort(by_depth.begin(), by_depth.end(), [&](queue_id a, queue_id b) {
    return t.path_to_root(a).size() > t.path_to_root(b).size();
  });
  for (const queue_id c : by_depth) {
    if (t.is_queue(c)) continue;
    for (std::size_t f = 0; f < nf; ++f) {
      std::int64_t sum = 0;
      for (const queue_id ch : t.children(c))
        sum += std::max<std::int64_t>(0, usage[ch.value() * nf + f] - t.local_quota(ch, f));
      usage[c.value() * nf + f] = sum;
    }
  }
  for (std::uint32_t i = 0; i < t.size(); ++i) {
    const queue_id n(i);
    for (std::size_t f = 0; f < nf; ++f) {
      const auto& fr = t.fr(f);
      const std::int64_t u = s.usage(n, f);
      if (u != usage[i * nf + f])
        return fmt::format("'{}' {}@{}: usage {} but its workloads make {}", t.name(n), fr.resource,
                           fr.flavor, u, usage[i * nf + f]);
      if (const auto limit = t.borrowing_limit(n, f); limit && u > t.subtree_quota(n, f) + *limit)
        return fmt::format("'{}' {}@{}: usage {} above quota {} + borrowing limit {}", t.name(n),
                           fr.resource, fr.flavor, u, t.subtree_quota(n, f), *limit);
      if (t.is_queue(n) && u > t.potential_available(n, f))
        return fmt::format("queue '{}' {}@{}: usage {} above what it can ever get ({})", t.name(n),
                           fr.resource, fr.flavor, u, t.potential_available(n, f));
      if (!t.parent(n).valid() && u > t.subtree_quota(n, f))
        return fmt::format("root '{}' {}@{}: usage {} above its quota {}", t.name(n), fr.resource,
                           fr.flavor, u, t.subtree_quota(n, f));
    }
  }
  return {};
}

TEST(CapacityChurnProperty, QuotasHoldAfterEveryStep) {
  int steps = 0;
  int admissions = 0;
  int preemptions = 0;
  for (std::uint64_t seed = 1; seed <= 600; ++seed) {
    capacity_scenario g(seed);
    auto tree = capacity_tree::build(g.tree());
    ASSERT_THAT(tree, IsOk()) << "seed " << seed;
    capacity_state s(std::move(*tree));
    capacity_cycle_options opt;
    opt.custom_order = capacity_scenario::by_tenant;
    opt.fair_sharing = g.chance(50);
    if (g.chance(30)) opt.min_runtime = 3;
    std::vector<job_id> admitted;
    std::uint32_t next = 1;
    std::int64_t now = 0;
    for (int step = 0; step < 60; ++step, ++now) {
      opt.now = now;
      const int what = static_cast<int>(g.pick(0, 9));
      std::string done;
      if (what <= 3) {  // submissions
        for (int k = static_cast<int>(g.pick(1, 3)); k > 0; --k) {
          auto w = g.workload(next++, g.any_queue(s.tree()));
          w.submit_time = now;
          if (s.validate_pending(w)) {
            ASSERT_THAT(s.submit(w), IsOk());
          }
        }
        done = "submit";
      } else if (what <= 6) {  // an admission cycle, applied
        const auto plan = plan_admission(s, opt);
        ASSERT_THAT(plan, IsOk()) << "seed " << seed;
        ASSERT_THAT(apply_admission(s, *plan), IsOk()) << "seed " << seed;
        for (const auto& a : plan->admitted) admitted.push_back(a.job);
        admissions += static_cast<int>(plan->admitted.size());
        for (const auto& p : plan->preemptions) preemptions += static_cast<int>(p.victims.size());
        done = "cycle";
      } else if (what <= 8 && !admitted.empty()) {  // a workload finishes
        const std::size_t k = g.rng()() % admitted.size();
        if (!s.in_flight(admitted[k])) {
          ASSERT_THAT(s.release(admitted[k]), IsOk());
          admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(k));
        }
        done = "finish";
      } else {  // the victims in flight terminate and come back to their queues
        for (std::size_t k = 0; k < admitted.size();) {
          const job_id j = admitted[k];
          if (!s.in_flight(j)) {
            ++k;
            continue;
          }
          const admitted_workload w = *s.admitted(j);
          ASSERT_THAT(s.release(j), IsOk());
          admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(k));
          ASSERT_THAT(s.submit({w.job, w.queue, w.tenant, w.priority, now, w.request, {}}), IsOk());
        }
        done = "victims terminate";
      }
      ++steps;
      const std::string why = check_quotas(s, admitted);
      ASSERT_EQ(why, "") << "seed " << seed << " step " << step << " (" << done << ")";
    }
  }
  EXPECT_GT(steps, 30000);
  EXPECT_GT(admissions, 5000);
  EXPECT_GT(preemptions, 300);
}

}  // namespace
}  // namespace hetsched
