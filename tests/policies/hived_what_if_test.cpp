// SPDX-License-Identifier: MIT
// hived::scheduler::what_if: no state changes (state_digest before == after), and the answer is
// what schedule() then does (decision, lazy preemptions, preemption state).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_small_fixture.hpp"

namespace hetsched::hived {
namespace {

using small_fixture::make;
using small_fixture::pod;
using small_fixture::small_config;

/// Runs what_if, checks that it changed nothing, then schedule(), checks that it did what the
/// answer says, and returns the answer.
what_if_answer what_if_then_schedule(scheduler& s, const pod_request& p, const node_filter& f,
                                     phase ph) {
  const std::uint64_t before = s.state_digest();
  auto a = s.what_if(p, f, ph);
  EXPECT_TRUE(a.has_value()) << a.error().message;
  if (!a) return {};
  EXPECT_EQ(s.state_digest(), before) << "what_if changed the state for " << p.name;
  auto again = s.what_if(p, f, ph);
  EXPECT_TRUE(again.has_value() && *again == *a) << "what_if is not repeatable for " << p.name;
  auto on_copy = s.what_if_on_copy(p, f, ph);
  EXPECT_TRUE(on_copy.has_value() && *on_copy == *a)
      << "what_if (journal) and what_if_on_copy differ for " << p.name;
  for (const auto& g : a->lazy_preempted_groups) {
    auto st = s.group(g);
    EXPECT_TRUE(st && !st->virtual_placement_dropped) << g;
  }
  auto r = s.schedule(p, f, ph);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  if (!r) return *a;
  EXPECT_EQ(*r, a->decision) << "schedule differs from what_if for " << p.name;
  for (const auto& g : a->lazy_preempted_groups) {
    auto st = s.group(g);
    EXPECT_TRUE(st && st->virtual_placement_dropped) << g;
  }
  for (const auto& g : a->cancelled_preemptions) {
    if (g == a->group && a->starts_preemption) continue;
    EXPECT_FALSE(s.group(g).has_value()) << g;
  }
  if (a->starts_preemption) {
    auto st = s.group(a->group);
    EXPECT_TRUE(st && st->state == group_state::preempting) << a->group;
  }
  return *a;
}

TEST(HivedWhatIf, BindAnswersWhereWithCellsAndChangesNothing) {
  auto s = make();
  const auto p1 = pod("p1", "a", 1, 2);
  const std::uint64_t fresh = s.state_digest();
  const what_if_answer a = what_if_then_schedule(s, p1, {}, phase::filtering);
  EXPECT_EQ(a.decision.kind, outcome::bind);
  EXPECT_EQ(a.decision.bind.node, "n0");
  EXPECT_EQ(a.decision.bind.leaf_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(a.group, "p1");
  EXPECT_FALSE(a.existing_group.has_value());
  EXPECT_EQ(a.chain, "RACK");
  ASSERT_EQ(a.pods.size(), 1u);
  const what_if_pod& row = a.pods[0];
  EXPECT_EQ(row.leaf_cells, 2);
  EXPECT_EQ(row.index, 0);
  EXPECT_EQ(row.node, "n0");
  EXPECT_EQ(row.leaf_indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(row.physical_cells, (std::vector<std::string>{"0/n0/0/0", "0/n0/0/1"}));
  EXPECT_EQ(row.virtual_cells, (std::vector<std::string>{"a/0/0/0", "a/0/0/1"}));
  EXPECT_EQ(row.preassigned_types, (std::vector<std::string>{"NODE", "NODE"}));
  EXPECT_TRUE(a.victims.empty());
  EXPECT_TRUE(a.lazy_preempted_groups.empty());
  EXPECT_TRUE(a.cancelled_preemptions.empty());
  EXPECT_FALSE(a.starts_preemption);
  // schedule() itself is not free of side effects (it refreshed the VC's cluster view).
  EXPECT_NE(s.state_digest(), fresh);
  ASSERT_TRUE(s.add_allocated(p1, a.decision.bind));
  // The next pod of VC a: the other PCIe switch of n0.
  const what_if_answer b = what_if_then_schedule(s, pod("p2", "a", 1, 2), {}, phase::filtering);
  EXPECT_EQ(b.decision.bind.leaf_cells, (std::vector<int>{2, 3}));
  EXPECT_EQ(b.pods[0].physical_cells, (std::vector<std::string>{"0/n0/1/2", "0/n0/1/3"}));
}

TEST(HivedWhatIf, GuaranteedPodPreemptsOpportunistic) {
  auto s = make();
  // An opportunistic pod of 4 GPUs on n2 (only n2 suggested).
  const auto o1 = pod("o1", "b", opportunistic_priority, 4);
  const node_filter only_n2{false, {"n2"}};
  const what_if_answer o = what_if_then_schedule(s, o1, only_n2, phase::filtering);
  ASSERT_EQ(o.decision.kind, outcome::bind);
  EXPECT_EQ(o.decision.bind.node, "n2");
  EXPECT_EQ(o.chain, "NODE");
  EXPECT_EQ(o.pods[0].virtual_cells, (std::vector<std::string>(4, "")));
  EXPECT_EQ(o.pods[0].preassigned_types, (std::vector<std::string>(4, "")));
  ASSERT_TRUE(s.add_allocated(o1, o.decision.bind));

  // VC b's guaranteed pod needs VC b's only cell, bound to n2: it preempts o1.
  const auto g1 = pod("g1", "b", 0, 4);
  const std::uint64_t before = s.state_digest();
  auto filtering = s.what_if(g1, {}, phase::filtering);
  ASSERT_TRUE(filtering);
  EXPECT_EQ(filtering->decision.kind, outcome::preempt);
  EXPECT_FALSE(filtering->starts_preemption);  // the filtering phase records nothing
  EXPECT_EQ(s.state_digest(), before);
  const what_if_answer a = what_if_then_schedule(s, g1, {}, phase::preempting);
  EXPECT_EQ(a.decision.kind, outcome::preempt);
  EXPECT_EQ(a.decision.victims_by_node,
            (std::map<std::string, std::vector<std::string>>{{"n2", {"o1"}}}));
  ASSERT_EQ(a.victims.size(), 1u);
  EXPECT_EQ(a.victims[0], (what_if_victim{"o1", "n2", "o1", "b", opportunistic_priority, false}));
  EXPECT_TRUE(a.starts_preemption);
  EXPECT_EQ(a.chain, "NODE");
  ASSERT_EQ(a.pods.size(), 1u);
  EXPECT_EQ(a.pods[0].node, "n2");
  EXPECT_EQ(a.pods[0].leaf_indices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(a.pods[0].physical_cells,
            (std::vector<std::string>{"n2/0/0", "n2/0/1", "n2/1/2", "n2/1/3"}));
  EXPECT_EQ(a.pods[0].virtual_cells,
            (std::vector<std::string>{"b/0/0/0", "b/0/0/1", "b/0/1/2", "b/0/1/3"}));
  EXPECT_EQ(s.group("o1")->state, group_state::being_preempted);

  // A second, higher-priority pod of VC b overlaps g1's reservation: it cancels it and starts its
  // own preemption of o1.
  const what_if_answer c = what_if_then_schedule(s, pod("g2", "b", 3, 4), {}, phase::preempting);
  EXPECT_EQ(c.decision.kind, outcome::preempt);
  EXPECT_EQ(c.cancelled_preemptions, (std::vector<std::string>{"g1"}));
  EXPECT_TRUE(c.starts_preemption);
  ASSERT_EQ(c.victims.size(), 1u);
  EXPECT_EQ(c.victims[0].pod, "o1");
  EXPECT_FALSE(s.group("g1").has_value());

  // g2 asking again joins its own reservation: nothing new is started or cancelled.
  const what_if_answer d = what_if_then_schedule(s, pod("g2", "b", 3, 4), {}, phase::preempting);
  EXPECT_EQ(d.existing_group, group_state::preempting);
  EXPECT_EQ(d.decision.kind, outcome::preempt);
  EXPECT_FALSE(d.starts_preemption);
  EXPECT_TRUE(d.cancelled_preemptions.empty());
}

TEST(HivedWhatIf, ReportsLazyPreemption) {
  auto s = make();
  auto low = pod("low", "a", 0, 4);
  low.lazy_preemption = true;
  const what_if_answer l = what_if_then_schedule(s, low, {}, phase::filtering);
  ASSERT_EQ(l.decision.kind, outcome::bind);
  ASSERT_TRUE(s.add_allocated(low, l.decision.bind));
  // A higher-priority pod of VC a takes VC a's only cell: the lazy group loses its guaranteed
  // placement (it keeps running, opportunistic), which frees the VC cell and merges the rack back.
  // Splitting it again lists n0 first (hivedscheduler sorts the candidates by opportunistic use
  // only after picking), so the pod still preempts "low" on n0.
  const auto high = pod("high", "a", 5, 4);
  const what_if_answer h = what_if_then_schedule(s, high, {}, phase::filtering);
  EXPECT_EQ(h.lazy_preempted_groups, (std::vector<std::string>{"low"}));
  EXPECT_EQ(h.decision.kind, outcome::preempt);
  ASSERT_EQ(h.victims.size(), 1u);
  EXPECT_EQ(h.victims[0], (what_if_victim{"low", "n0", "low", "a", 0, true}));
  EXPECT_EQ(h.pods.at(0).node, "n0");
  EXPECT_EQ(h.pods.at(0).virtual_cells,
            (std::vector<std::string>{"a/0/0/0", "a/0/0/1", "a/0/1/2", "a/0/1/3"}));
  // The filtering phase kept the lazy preemption: asked again, "low" is an opportunistic victim
  // and nothing is lazily preempted any more.
  const what_if_answer again = what_if_then_schedule(s, high, {}, phase::filtering);
  EXPECT_TRUE(again.lazy_preempted_groups.empty());
  EXPECT_EQ(again.decision.kind, outcome::preempt);
  ASSERT_EQ(again.victims.size(), 1u);
  EXPECT_EQ(again.victims[0], (what_if_victim{"low", "n0", "low", "a", 0, false}));
}

TEST(HivedWhatIf, ExplainsWaits) {
  auto s = make();
  // VC b owns 4 GPUs: 8 do not fit.
  const what_if_answer a = what_if_then_schedule(s, pod("big", "b", 0, 8), {}, phase::preempting);
  EXPECT_EQ(a.decision.kind, outcome::wait);
  EXPECT_EQ(a.decision.wait_reason, "insufficient capacity when scheduling in VC b");
  EXPECT_TRUE(a.pods.empty());
  EXPECT_TRUE(a.chain.empty());
  EXPECT_FALSE(a.starts_preemption);
}

TEST(HivedWhatIf, ErrorsChangeNothing) {
  auto s = make();
  const std::uint64_t before = s.state_digest();
  auto unknown = s.what_if(pod("x", "zzz", 0, 1), {}, phase::preempting);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, errc::not_found);
  EXPECT_NE(unknown.error().message.find("zzz"), std::string::npos);
  auto bad = s.what_if(pod("x", "a", 2000, 1), {}, phase::preempting);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, errc::out_of_range);
  EXPECT_EQ(s.state_digest(), before);
}

TEST(HivedWhatIf, GangMembersAreAllPlaced) {
  auto s = make();
  auto first = pod("w0", "a", 1, 1);
  first.group = "job";
  first.members = {member_spec{2, 1}, member_spec{1, 2}};
  const what_if_answer a = what_if_then_schedule(s, first, {}, phase::filtering);
  ASSERT_EQ(a.decision.kind, outcome::bind);
  EXPECT_EQ(a.group, "job");
  // Members by leaf count (1-GPU pods first), then pod index.
  ASSERT_EQ(a.pods.size(), 3u);
  EXPECT_EQ(std::make_pair(a.pods[0].leaf_cells, a.pods[0].index), std::make_pair(1, 0));
  EXPECT_EQ(std::make_pair(a.pods[1].leaf_cells, a.pods[1].index), std::make_pair(1, 1));
  EXPECT_EQ(std::make_pair(a.pods[2].leaf_cells, a.pods[2].index), std::make_pair(2, 0));
  int gpus = 0;
  for (const auto& p : a.pods) gpus += static_cast<int>(p.leaf_indices.size());
  EXPECT_EQ(gpus, 4);
  ASSERT_TRUE(s.add_allocated(first, a.decision.bind));
  // The second 1-GPU pod joins the allocated group at its recorded place.
  auto second = first;
  second.name = "w1";
  const what_if_answer b = what_if_then_schedule(s, second, {}, phase::filtering);
  EXPECT_EQ(b.existing_group, group_state::allocated);
  EXPECT_EQ(b.decision.bind.node, a.pods[1].node);
  EXPECT_EQ(b.decision.bind.leaf_cells, a.pods[1].leaf_indices);
  EXPECT_EQ(b.pods, a.pods);
}

/// A fixed pseudo-random sequence of pods (guaranteed, opportunistic, lazy, gangs), commits,
/// releases and health changes; at every step what_if changes nothing and schedule() does what it
/// said.
TEST(HivedWhatIf, RandomSequencesMatchSchedule) {
  struct committed {
    pod_request pod;
    bind_info bind;
  };
  std::map<std::string, int> seen;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    auto s = make();
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL;
    auto next = [&](std::uint64_t n) {
      x ^= x << 13U;
      x ^= x >> 7U;
      x ^= x << 17U;
      return static_cast<int>(x % n);
    };
    std::map<std::string, committed> running;
    const std::vector<std::string> nodes{"n0", "n1", "n2"};
    const int priorities[] = {opportunistic_priority, 0, 1, 5};
    const int sizes[] = {1, 2, 4};
    for (int step = 0; step < 60; ++step) {
      const int action = next(10);
      if (action <= 6) {
        // One draw per statement: the order of a call's arguments is unspecified (g++ and
        // clang drew them in opposite orders, so the two builds ran different sequences).
        const int size = sizes[next(3)];
        const int priority = priorities[next(4)];
        const std::string vc = next(2) == 0 ? "a" : "b";
        auto p = pod("p" + std::to_string(step), vc, priority, size);
        p.lazy_preemption = next(2) == 0;
        const bool gang = next(4) == 0;
        if (gang) {
          p.group = "g" + std::to_string(step);
          p.members = {member_spec{2, p.leaf_cells}};
        }
        const phase ph = next(2) == 0 ? phase::filtering : phase::preempting;
        node_filter f;
        if (next(4) == 0) f = node_filter{false, {nodes[static_cast<std::size_t>(next(3))]}};
        for (int member = 0; member < (gang ? 2 : 1); ++member) {
          if (member == 1) p.name += "b";
          const what_if_answer a = what_if_then_schedule(s, p, f, ph);
          constexpr const char* kinds[] = {"bind", "preempt", "wait"};
          ++seen[kinds[static_cast<int>(a.decision.kind)]];
          seen["lazy"] += static_cast<int>(a.lazy_preempted_groups.size());
          seen["cancelled"] += static_cast<int>(a.cancelled_preemptions.size());
          seen["started"] += a.starts_preemption ? 1 : 0;
          seen["joined"] += a.existing_group ? 1 : 0;
          if (a.decision.kind == outcome::bind) {
            ASSERT_TRUE(s.add_allocated(p, a.decision.bind)) << p.name;
            running[p.name] = committed{p, a.decision.bind};
          } else {
            if (a.decision.kind == outcome::preempt && next(2) == 0) s.delete_unallocated(p);
            break;
          }
        }
      } else if (action <= 8 && !running.empty()) {
        auto it = running.begin();
        std::advance(it, next(running.size()));
        ASSERT_TRUE(s.delete_allocated(it->second.pod, it->second.bind)) << it->first;
        running.erase(it);
      } else {
        const auto& node = nodes[static_cast<std::size_t>(next(3))];
        if (next(2) == 0) {
          s.set_node_bad(node);
        } else {
          s.set_node_healthy(node);
        }
      }
    }
  }
  // Every kind of answer came up.
  for (const char* k : {"bind", "preempt", "wait", "lazy", "cancelled", "started", "joined"})
    EXPECT_GT(seen[k], 0) << k;
}

}  // namespace
}  // namespace hetsched::hived
