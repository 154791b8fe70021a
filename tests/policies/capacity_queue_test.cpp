// SPDX-License-Identifier: MIT
// capacity_tree: quota algebra, usage propagation, DRS, bad input; capacity_state bookkeeping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

#include "support/capacity_snapshot.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

// "q<i>", built by appending (GCC 12 -O3 warns on "q" + std::string).
std::string qname(std::uint64_t i) {
  std::string s = "q";
  s += std::to_string(i);
  return s;
}

using testing::describe;
using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;

capacity_node_spec cohort(std::string name, std::string parent = {}, std::vector<quota_spec> q = {},
                          double w = 1.0) {
  capacity_node_spec s;
  s.name = std::move(name);
  s.parent = std::move(parent);
  s.kind = capacity_node_kind::cohort;
  s.quotas = std::move(q);
  s.fair_weight = w;
  return s;
}

capacity_node_spec queue(std::string name, std::string parent, std::vector<quota_spec> q,
                         double w = 1.0) {
  capacity_node_spec s;
  s.name = std::move(name);
  s.parent = std::move(parent);
  s.quotas = std::move(q);
  s.fair_weight = w;
  return s;
}

quota_spec gpu(std::int64_t nominal, std::string flavor = "a100",
               std::optional<std::int64_t> bl = std::nullopt,
               std::optional<std::int64_t> ll = std::nullopt) {
  return quota_spec{std::move(flavor), "gpu", nominal, bl, ll};
}

TEST(CapacityTree, SubtreeQuotaSubtractsLocalQuota) {
  // a: 10 with lending limit 4 (local 6); b: 10 with lending limit 6 (local 4).
  auto t = capacity_tree::build({{cohort("c"), queue("a", "c", {gpu(10, "a100", {}, 4)}),
                                  queue("b", "c", {gpu(10, "a100", {}, 6)})}});
  ASSERT_THAT(t, IsOk());
  const std::size_t f = *t->find_fr("a100", "gpu");
  const queue_id c = *t->find("c");
  const queue_id a = *t->find("a");
  EXPECT_EQ(t->local_quota(a, f), 6);
  EXPECT_EQ(t->subtree_quota(c, f), 10);  // 4 + 6 lent
  // a can use its 6 local plus the cohort's 10.
  EXPECT_EQ(t->potential_available(a, f), 16);
  EXPECT_EQ(t->potential_available(*t->find("b"), f), 14);
}

TEST(CapacityTree, AvailableHonoursBorrowingLimit) {
  auto t = capacity_tree::build(
      {{cohort("c"), queue("a", "c", {gpu(9, "a100", 1)}), queue("b", "c", {gpu(12)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const std::size_t f = *t->find_fr("a100", "gpu");
  const queue_id a = *t->find("a");
  const queue_id b = *t->find("b");
  EXPECT_EQ(quota_available(s.tree(), s.usage(), a, f), 10);  // 9 + borrowing limit 1
  EXPECT_EQ(quota_available(s.tree(), s.usage(), b, f), 21);
  ASSERT_THAT(s.add_admitted({job_id(1), b, tenant_id(0), 0, 0, "a100", {{"gpu", 15}}}), IsOk());
  // b borrows 3 of a's 9: a still has its 6 unused plus nothing more.
  EXPECT_EQ(quota_available(s.tree(), s.usage(), a, f), 6);
  EXPECT_EQ(s.usage(*t->find("c"), f), 15);
  ASSERT_THAT(s.release(job_id(1)), IsOk());
  EXPECT_EQ(s.usage(*t->find("c"), f), 0);
}

TEST(CapacityTree, DrsSumsFlavorsOfOneResource) {
  auto t = capacity_tree::build({{cohort("c"), queue("a", "c", {gpu(2, "a100"), gpu(2, "h100")}),
                                  queue("b", "c", {gpu(8, "a100"), gpu(8, "h100")})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id a = *t->find("a");
  ASSERT_THAT(s.add_admitted({job_id(1), a, tenant_id(0), 0, 0, "a100", {{"gpu", 4}}}), IsOk());
  ASSERT_THAT(s.add_admitted({job_id(2), a, tenant_id(0), 0, 0, "h100", {{"gpu", 3}}}), IsOk());
  // borrowed (4-2) + (3-2) = 3 of lendable 10 + 10 -> 150.
  const drs_value d = dominant_resource_share(s.tree(), s.usage(), a);
  EXPECT_EQ(d.rounded(), 150);
  EXPECT_EQ(d.dominant, "gpu");
  EXPECT_TRUE(d.borrowing());
  EXPECT_FALSE(dominant_resource_share(s.tree(), s.usage(), *t->find("b")).borrowing());
}

TEST(CapacityTree, ZeroWeightBorrowerRanksAboveAll) {
  auto t = capacity_tree::build({{cohort("c"), queue("a", "c", {gpu(1)}, 0.0),
                                  queue("b", "c", {gpu(1)}, 1.0), queue("z", "c", {gpu(100)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  ASSERT_THAT(s.add_admitted({job_id(1), *t->find("a"), {}, 0, 0, "a100", {{"gpu", 2}}}), IsOk());
  ASSERT_THAT(s.add_admitted({job_id(2), *t->find("b"), {}, 0, 0, "a100", {{"gpu", 90}}}), IsOk());
  const drs_value da = dominant_resource_share(s.tree(), s.usage(), *t->find("a"));
  const drs_value db = dominant_resource_share(s.tree(), s.usage(), *t->find("b"));
  EXPECT_TRUE(da.infinite);
  EXPECT_EQ(da.rounded(), std::numeric_limits<std::int64_t>::max());
  EXPECT_GT(da, db);
  EXPECT_EQ(db.rounded(), 873);  // 89 * 1000 / 102 = 872.5, rounded up
}

// Kueue accepts any non-negative weight (a decimal quantity): so does the tree, exactly.
TEST(CapacityTree, AcceptsAnyNonNegativeWeightAsAnExactDecimal) {
  const struct {
    double weight;
    std::uint64_t digits;
    std::int32_t exponent;
  } cases[] = {{123456789.0, 123456789, 0},
               {0.1, 1, -1},
               {0.3, 3, -1},
               {2.5e-9, 25, -10},
               {1e300, 1, 300},
               {1e-300, 1, -300},
               {1.0, 1, 0},
               {0.0, 0, 0},
               {4.9406564584124654e-324, 5, -324}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.weight);
    const auto w = make_decimal_weight(c.weight, "q");
    ASSERT_THAT(w, IsOk());
    EXPECT_EQ(w->digits, c.digits);
    EXPECT_EQ(w->exponent, c.exponent);
    const auto t = capacity_tree::build({{cohort("c"), queue("q", "c", {gpu(1)}, c.weight)}});
    ASSERT_THAT(t, IsOk());
    EXPECT_EQ(t->zero_weight(*t->find("q")), c.weight == 0.0);
  }
  EXPECT_THAT(make_decimal_weight(std::numeric_limits<double>::infinity(), "q"),
              ErrorContains("node 'q': fair weight inf must be finite and >= 0"));
}

// Shares divided by weights are compared without rounding, at every magnitude.
TEST(CapacityTree, WeightedSharesCompareExactly) {
  // Lendable 10^9 GPUs (the root's quota); a and b borrow (their nominal quotas are 0).
  const std::int64_t n = 123456789;
  const auto build = [](double wa, double wb) {
    return std::move(
        capacity_tree::build({{cohort("c", "", {gpu(1'000'000'000)}), queue("a", "c", {gpu(0)}, wa),
                               queue("b", "c", {gpu(0)}, wb)}})
            .value());
  };
  const auto shares = [](const capacity_tree& t, std::int64_t ua, std::int64_t ub) {
    capacity_state s(t);
    EXPECT_THAT(s.add_admitted({job_id(1), *t.find("a"), {}, 0, 0, "a100", {{"gpu", ua}}}), IsOk());
    EXPECT_THAT(s.add_admitted({job_id(2), *t.find("b"), {}, 0, 0, "a100", {{"gpu", ub}}}), IsOk());
    return std::pair{dominant_resource_share(s.tree(), s.usage(), *t.find("a")),
                     dominant_resource_share(s.tree(), s.usage(), *t.find("b"))};
  };
  {
    // (n + 1) / n vs n / (n - 1): (n + 1)(n - 1) = n^2 - 1 < n^2, a below b by 1 / n^2 (about
    // 6.6e-17 relative, under a double's epsilon).
    const auto [a, b] = shares(build(static_cast<double>(n), static_cast<double>(n - 1)), n + 1, n);
    EXPECT_LT(a, b);
    EXPECT_GT(b, a);
  }
  {
    // Weights 0.1 and 0.3 are 1/10 and 3/10: borrowing 1 and 3 ties exactly (in doubles,
    // 3 / 0.3 and 1 / 0.1 differ).
    const auto [a, b] = shares(build(0.1, 0.3), 1, 3);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.rounded(), 1);  // 1 * 1000 / 10^9 / 0.1 = 10^-5, rounded up
  }
  {
    // Extreme weights: 10^-300 makes any borrowing huge, 10^300 makes it tiny; still ordered.
    const auto [a, b] = shares(build(1e-300, 1e300), 1, 1'000'000'000);
    EXPECT_GT(a, b);
    EXPECT_EQ(a.rounded(), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(b.rounded(), 1);  // 10^12 / 10^9 / 10^300, rounded up
  }
  {
    // 2.5e-9: 1 GPU of 10^9 lendable -> 1000 / 10^9 / 2.5e-9 = 400 exactly.
    const auto [a, b] = shares(build(2.5e-9, 123456789.0), 1, n);
    EXPECT_EQ(a.rounded(), 400);
    EXPECT_EQ(b.rounded(), 1);  // n * 1000 / 10^9 / n = 10^-6, rounded up
    EXPECT_GT(a, b);
  }
}

// Each bad tree is refused with its code and a message naming the node and the quota at fault.
TEST(CapacityTreeBadInput, RejectsEachProblemWithAClearError) {
  capacity_tree_spec big;  // many large quotas overflow the root's subtree quota
  big.nodes.push_back(cohort("root"));
  for (std::uint64_t i = 0; i < 8; ++i)
    big.nodes.push_back(queue(qname(i), "root", {gpu(std::int64_t{1} << 40)}));
  capacity_node_spec cohort_with_order = cohort("c");
  cohort_with_order.order = queue_order::strict_fifo;
  const struct {
    capacity_tree_spec spec;
    errc code;
    std::string message;
  } cases[] = {
      {{{queue("a", "", {gpu(-1)})}},
       errc::invalid_argument,
       "node 'a': nominal quota of gpu@a100 is negative (-1)"},
      {{{queue("a", "", {gpu(std::int64_t{1} << 41)})}},
       errc::out_of_range,
       "node 'a': nominal quota of gpu@a100 is 2199023255552 (above 2^40)"},
      {{{cohort("c"), queue("a", "c", {gpu(1, "a100", -2)})}},
       errc::invalid_argument,
       "node 'a': borrowing limit of gpu@a100 is negative (-2)"},
      {{{queue("a", "nowhere", {gpu(1)})}},
       errc::not_found,
       "node 'a': parent 'nowhere' is not defined"},
      {{{cohort("x", "y"), cohort("y", "x")}},
       errc::invalid_argument,
       "node 'x' is on a parent cycle"},
      {{{cohort("c"), queue("a", "c", {gpu(4, "a100", {}, 5)})}},
       errc::invalid_argument,
       "queue 'a': lending limit 5 of gpu@a100 is above its nominal quota 4"},
      {{{queue("a", "", {gpu(1)}, -1.0)}},
       errc::invalid_argument,
       "node 'a': fair weight -1 must be finite and >= 0"},
      {{{queue("a", "", {gpu(1)}, std::nan(""))}},
       errc::invalid_argument,
       "node 'a': fair weight nan must be finite and >= 0"},
      {{{queue("a", "", {gpu(1)}), queue("a", "", {gpu(1)})}},
       errc::already_exists,
       "node 'a' is defined twice"},
      {{{queue("a", "", {gpu(1), gpu(2)})}},
       errc::already_exists,
       "node 'a': quota gpu@a100 is given twice"},
      {{{queue("a", "", {gpu(1, "")})}},
       errc::invalid_argument,
       "node 'a': a quota has an empty flavor"},
      {{{queue("q", "", {}), queue("a", "q", {gpu(1)})}},
       errc::invalid_argument,
       "node 'a': parent 'q' is a queue (only cohorts have children)"},
      {{{queue("a", "", {gpu(1, "a100", 3)})}},
       errc::invalid_argument,
       "node 'a': borrowing limit of gpu@a100 on a root (nothing to borrow)"},
      {{{cohort_with_order}},
       errc::invalid_argument,
       "cohort 'c': preemption, order and user limits are queue settings"},
      {big, errc::out_of_range, "node 'root': subtree quota of gpu@a100 exceeds 2^42"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    const auto t = capacity_tree::build(c.spec);
    EXPECT_THAT(t, HasErrc(c.code));
    EXPECT_THAT(t, ErrorContains(c.message));
  }
}

TEST(CapacityStateBadInput, RejectsUnknownFlavorAndChangesNothing) {
  auto t = capacity_tree::build({{cohort("c"), queue("a", "c", {gpu(4)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id a = *t->find("a");
  const std::string empty = describe(s);
  pending_workload w{job_id(1), a, tenant_id(0), 0, 0, {{"gpu", 1}}, {"h200"}};
  EXPECT_THAT(s.submit(w), HasErrc(errc::not_found));
  EXPECT_THAT(s.submit(w), ErrorContains("job 1: no queue has flavor 'h200'"));
  w.flavors.clear();
  w.request = {{"cpu", 1}};
  EXPECT_THAT(s.submit(w), HasErrc(errc::invalid_argument));
  EXPECT_THAT(s.submit(w), ErrorContains("job 1: no allowed flavor of queue 'a' has quota for all "
                                         "its resources"));
  w.request = {{"gpu", -1}};
  EXPECT_THAT(s.submit(w), HasErrc(errc::invalid_argument));
  EXPECT_THAT(s.submit(w), ErrorContains("job 1: request of gpu is negative (-1)"));
  w.queue = *t->find("c");
  w.request = {{"gpu", 1}};
  EXPECT_THAT(s.submit(w), HasErrc(errc::invalid_argument));
  EXPECT_THAT(s.submit(w), ErrorContains("job 1: 'c' is a cohort, not a queue"));
  EXPECT_EQ(describe(s), empty);
  w.queue = a;
  ASSERT_THAT(s.submit(w), IsOk());
  const std::string one_pending = describe(s);
  EXPECT_THAT(s.submit(w), HasErrc(errc::already_exists));
  EXPECT_THAT(s.submit(w), ErrorContains("job 1 is already known"));
  EXPECT_THAT(s.release(job_id(7)), HasErrc(errc::not_found));
  EXPECT_THAT(s.release(job_id(7)), ErrorContains("job 7 is neither pending nor admitted"));
  EXPECT_EQ(describe(s), one_pending);
  EXPECT_EQ(s.pending_count(), 1u);
}

// Every add_admitted error leaves usage, pending and admitted workloads exactly as they were.
TEST(CapacityStateBadInput, AddAdmittedErrorsNameTheProblemAndChangeNothing) {
  auto t = capacity_tree::build({{cohort("c", "", {gpu(std::int64_t{1} << 40, "h100")}),
                                  queue("a", "c", {gpu(4)}), queue("b", "c", {gpu(4)})}});
  ASSERT_THAT(t, IsOk());
  capacity_state s(*t);
  const queue_id a = *t->find("a");
  const queue_id b = *t->find("b");
  ASSERT_THAT(s.add_admitted({job_id(1), a, tenant_id(0), 0, 0, "a100", {{"gpu", 3}}}), IsOk());
  ASSERT_THAT(s.submit({job_id(2), b, tenant_id(0), 0, 0, {{"gpu", 2}}, {}}), IsOk());
  const std::string before = describe(s);
  const struct {
    admitted_workload w;
    errc code;
    std::string message;
  } cases[] = {
      {{job_id::invalid(), a, {}, 0, 0, "a100", {{"gpu", 1}}},
       errc::invalid_argument,
       "admitted workload has no job id"},
      {{job_id(3), queue_id(99), {}, 0, 0, "a100", {{"gpu", 1}}},
       errc::not_found,
       "job 3: queue 99 does not exist"},
      {{job_id(3), *t->find("c"), {}, 0, 0, "a100", {{"gpu", 1}}},
       errc::invalid_argument,
       "job 3: 'c' is a cohort, not a queue"},
      {{job_id(1), a, {}, 0, 0, "a100", {{"gpu", 1}}},
       errc::already_exists,
       "job 1 is already known"},
      {{job_id(2), a, {}, 0, 0, "a100", {{"gpu", 1}}},
       errc::already_exists,
       "job 2 is already known"},
      {{job_id(3), a, {}, 0, 0, "a100", {{"gpu", 1}, {"cpu", 5}}},
       errc::not_found,
       "job 3: queue 'a' has no quota for cpu in flavor 'a100'"},
      {{job_id(3), a, {}, 0, 0, "v100", {{"gpu", 1}}},
       errc::not_found,
       "job 3: queue 'a' has no quota for gpu in flavor 'v100'"},
      {{job_id(3), a, {}, 0, 0, "a100", {{"gpu", 2}, {"rdma", -1}}},
       errc::invalid_argument,
       "job 3: request of rdma is negative (-1)"},
      {{job_id(3), a, {}, 0, 0, "a100", {{"gpu", (std::int64_t{1} << 40) + 1}}},
       errc::out_of_range,
       "job 3: request of gpu is 1099511627777 (above 2^40)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    const auto r = s.add_admitted(c.w);
    EXPECT_THAT(r, HasErrc(c.code));
    EXPECT_THAT(r, ErrorContains(c.message));
    EXPECT_EQ(describe(s), before);
  }
  // Usage above 2^42 on a node: a's path already holds 3; four jobs of 2^40 - 1 in h100 (which
  // only the cohort declares) fill the cohort to just under 2^42, the fifth is refused.
  for (std::uint32_t j = 10; j < 14; ++j)
    ASSERT_THAT(
        s.add_admitted({job_id(j), a, {}, 0, 0, "h100", {{"gpu", (std::int64_t{1} << 40) - 1}}}),
        IsOk());
  const std::string full = describe(s);
  const auto over = s.add_admitted({job_id(14), b, {}, 0, 0, "h100", {{"gpu", 5}}});
  EXPECT_THAT(over, HasErrc(errc::out_of_range));
  EXPECT_THAT(over, ErrorContains("job 14: usage of 'c' would exceed 2^42"));
  EXPECT_EQ(describe(s), full);
}

// The flat pending order (sorted runs, tombstones, merges) yields exactly the key order of the
// live workloads, also in a copy of the state after the original changed.
TEST(CapacityState, PendingOrderStaysSortedThroughMergesRemovalsAndCopies) {
  auto t = capacity_tree::build({{cohort("c"), queue("a", "c", {gpu(4)})}});
  ASSERT_THAT(t, IsOk());
  const queue_id a = *t->find("a");
  const std::size_t f = *t->find_fr("a100", "gpu");
  auto s = std::make_unique<capacity_state>(*t);
  using key = capacity_state::pending_key;
  std::vector<key> expected;
  for (std::uint32_t j = 1; j <= 1000; ++j) {
    const auto prio = static_cast<std::int32_t>((j * 37) % 7);
    const std::int64_t submit = (j * 53) % 1000;
    ASSERT_THAT(s->submit({job_id(j), a, tenant_id(0), prio, submit, {{"gpu", 1 + j % 2}}, {}}),
                IsOk());
  }
  for (std::uint32_t j = 3; j <= 1000; j += 3) ASSERT_THAT(s->release(job_id(j)), IsOk());
  const capacity_state copy = *s;
  for (std::uint32_t j = 1; j <= 500; j += 3) ASSERT_THAT(s->release(job_id(j)), IsOk());
  s.reset();  // the copy must not point into the original's records
  for (std::uint32_t j = 1; j <= 1000; ++j)
    if (j % 3 != 0)
      expected.push_back({-static_cast<std::int64_t>((j * 37) % 7), (j * 53) % 1000, job_id(j)});
  std::sort(expected.begin(), expected.end());
  std::vector<key> seen;
  copy.queue(a).pending.for_each([&](const capacity_state::pending_entry& e) {
    seen.push_back(e.key);
    EXPECT_EQ(e.rec, &copy.pending_record(e.key.job));
    EXPECT_EQ(e.uses, e.rec->uses);
    ASSERT_EQ(e.uses->size(), 1u);
    const std::int64_t amount = 1 + e.key.job.value() % 2;
    EXPECT_EQ(e.uses->front().second, (std::vector<std::pair<std::uint32_t, std::int64_t>>{
                                          {static_cast<std::uint32_t>(f), amount}}));
  });
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(copy.queue(a).pending.size(), expected.size());
  EXPECT_EQ(copy.pending_count(), 667u);
  // what_if counts the workloads ordered before a probe (priority 3, submitted at 500).
  const key probe{-3, 500, job_id(5000)};
  const auto ahead = static_cast<std::size_t>(
      std::lower_bound(expected.begin(), expected.end(), probe) - expected.begin());
  auto ans = what_if(copy, {job_id(5000), a, tenant_id(0), 3, 500, {{"gpu", 1}}, {}}, {});
  ASSERT_THAT(ans, IsOk());
  EXPECT_EQ(ans->ahead_in_queue, ahead);
  EXPECT_GT(ahead, 100u);
}

// Random submits and releases (merges of the recent run, tombstones, compactions) against a
// std::set of the expected keys.
TEST(CapacityState, PendingOrderMatchesASortedSetUnderRandomChurn) {
  auto t = capacity_tree::build({{cohort("c"), queue("a", "c", {gpu(4)})}});
  ASSERT_THAT(t, IsOk());
  const queue_id a = *t->find("a");
  capacity_state s(*t);
  using key = capacity_state::pending_key;
  std::set<key> expected;
  std::vector<std::uint32_t> live;
  std::uint64_t x = 12345;
  const auto next = [&] {
    x = x * 6364136223846793005u + 1442695040888963407u;
    return static_cast<std::uint32_t>(x >> 33);
  };
  std::uint32_t job = 1;
  for (int step = 0; step < 20000; ++step) {
    // Grow for the first half, then mostly shrink (compactions), with bursts either way.
    const bool grow = live.empty() || next() % 100 < (step < 10000 ? 70u : 25u);
    if (grow) {
      const auto prio = static_cast<std::int32_t>(next() % 5);
      const std::int64_t submit = next() % 3000;
      ASSERT_THAT(s.submit({job_id(job), a, tenant_id(0), prio, submit, {{"gpu", 1}}, {}}), IsOk());
      expected.insert({-static_cast<std::int64_t>(prio), submit, job_id(job)});
      live.push_back(job++);
    } else {
      const std::size_t i = next() % live.size();
      const job_id j(live[i]);
      const auto* w = s.pending(j);
      ASSERT_NE(w, nullptr);
      expected.erase({-static_cast<std::int64_t>(w->priority), w->submit_time, j});
      ASSERT_THAT(s.release(j), IsOk());
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 997 != 0 && step != 19999) continue;
    const auto& order = s.queue(a).pending;
    std::vector<key> seen;
    order.for_each([&](const capacity_state::pending_entry& e) { seen.push_back(e.key); });
    ASSERT_EQ(seen, std::vector<key>(expected.begin(), expected.end())) << "step " << step;
    ASSERT_EQ(order.size(), expected.size());
    const key probe{-2, 1500, job_id(1u << 30)};
    EXPECT_EQ(order.count_before(probe), static_cast<std::size_t>(std::distance(
                                             expected.begin(), expected.lower_bound(probe))));
  }
}

TEST(YarnUserLimit, MinimumUserLimitPercentFloorsTheShare) {
  yarn_user_limit_spec spec;
  spec.minimum_user_limit_percent = 25;
  // 100 units saturated, 3 users: 100/3.
  auto l = yarn_user_limit(100, 100, 100, 0, 3, spec);
  ASSERT_THAT(l, IsOk());
  EXPECT_EQ(*l, (drf_share{100, 3}));
  // 5 users: the 25% floor wins.
  EXPECT_EQ(*yarn_user_limit(100, 100, 100, 0, 5, spec), (drf_share{25, 1}));
  // Granularity 8 rounds 33.3 up to 40.
  EXPECT_EQ(*yarn_user_limit(100, 100, 100, 0, 3, spec, 8), (drf_share{40, 1}));
  // ULF 2 on an idle queue of 10: one user may take 10, capped at 20 (max capacity 50).
  spec.minimum_user_limit_percent = 100;
  spec.user_limit_factor = 2;
  EXPECT_EQ(*yarn_user_limit(10, 50, 30, 0, 1, spec), (drf_share{20, 1}));
  spec.user_limit_factor = 0;
  EXPECT_THAT(yarn_user_limit(10, 50, 30, 0, 1, spec), HasErrc(errc::invalid_argument));
}

TEST(YarnConversion, CapacitiesBecomeNominalAndMaximumBecomesBorrowingLimit) {
  std::vector<yarn_queue_spec> qs{{"root", "", false, 100, -1, {}, {}},
                                  {"eng", "root", true, 60, 80, {}, {}},
                                  {"ops", "root", true, 40, -1, {}, {}}};
  std::vector<quota_spec> total{{"default", "gpu", 100, {}, {}}};
  auto spec = capacity_spec_from_yarn(qs, total);
  ASSERT_THAT(spec, IsOk());
  auto t = capacity_tree::build(*spec);
  ASSERT_THAT(t, IsOk());
  const std::size_t f = *t->find_fr("default", "gpu");
  EXPECT_EQ(t->nominal(*t->find("eng"), f), 60);
  EXPECT_EQ(t->borrowing_limit(*t->find("eng"), f), 20);
  EXPECT_EQ(t->potential_available(*t->find("eng"), f), 80);
  EXPECT_EQ(t->potential_available(*t->find("ops"), f), 100);
  qs[1].maximum_capacity_percent = 50;
  EXPECT_THAT(capacity_spec_from_yarn(qs, total), HasErrc(errc::invalid_argument));
}

TEST(YarnConversion, ChildrenCapacitiesMustSumToExactly100) {
  std::vector<quota_spec> total{{"default", "gpu", 100, {}, {}}};
  // Above 100 at the root: refused, naming the parent and the sum.
  std::vector<yarn_queue_spec> over{{"root", "", false, 100, -1, {}, {}},
                                    {"eng", "root", true, 60, -1, {}, {}},
                                    {"ops", "root", true, 50, -1, {}, {}}};
  EXPECT_THAT(capacity_spec_from_yarn(over, total), HasErrc(errc::invalid_argument));
  EXPECT_THAT(capacity_spec_from_yarn(over, total),
              ErrorContains("YARN queue 'root': the capacities of its children sum to 110%, not "
                            "100%"));
  // Below 100 (YARN percentage mode requires exactly 100): refused too.
  over[2].capacity_percent = 30;
  EXPECT_THAT(capacity_spec_from_yarn(over, total),
              ErrorContains("YARN queue 'root': the capacities of its children sum to 90%"));
  // A nested parent: the sum of its own children is checked (root's children sum to 100).
  std::vector<yarn_queue_spec> nested{{"root", "", false, 100, -1, {}, {}},
                                      {"eng", "root", false, 70, -1, {}, {}},
                                      {"ops", "root", true, 30, -1, {}, {}},
                                      {"train", "eng", true, 75, -1, {}, {}},
                                      {"serve", "eng", true, 25.5, -1, {}, {}}};
  EXPECT_THAT(capacity_spec_from_yarn(nested, total),
              ErrorContains("YARN queue 'eng': the capacities of its children sum to 100.5%"));
  // A non-leaf without children sums to 0.
  std::vector<yarn_queue_spec> empty{{"root", "", false, 100, -1, {}, {}},
                                     {"eng", "root", false, 100, -1, {}, {}}};
  EXPECT_THAT(capacity_spec_from_yarn(empty, total),
              ErrorContains("YARN queue 'eng': the capacities of its children sum to 0%"));
  // Decimal percentages whose double sum is not exactly 100.0 are accepted.
  nested[4].capacity_percent = 25;
  ASSERT_THAT(capacity_spec_from_yarn(nested, total), IsOk());
  std::vector<yarn_queue_spec> five{
      {"root", "", false, 100, -1, {}, {}},  {"a", "root", true, 39.7, -1, {}, {}},
      {"b", "root", true, 34.4, -1, {}, {}}, {"c", "root", true, 4.8, -1, {}, {}},
      {"d", "root", true, 13.3, -1, {}, {}}, {"e", "root", true, 7.8, -1, {}, {}}};
  ASSERT_NE(39.7 + 34.4 + 4.8 + 13.3 + 7.8, 100.0);  // 99.99999999999999
  const std::vector<quota_spec> thousand{{"default", "gpu", 1000, {}, {}}};
  const auto spec = capacity_spec_from_yarn(five, thousand);
  ASSERT_THAT(spec, IsOk());
  auto t = capacity_tree::build(*spec);
  ASSERT_THAT(t, IsOk());
  const std::size_t f = *t->find_fr("default", "gpu");
  EXPECT_EQ(t->nominal(*t->find("a"), f), 397);
  EXPECT_EQ(t->nominal(*t->find("c"), f), 48);
  EXPECT_EQ(t->nominal(*t->find("e"), f), 78);
  EXPECT_EQ(t->nominal(*t->find("root"), f), 0);
}

}  // namespace
}  // namespace hetsched
