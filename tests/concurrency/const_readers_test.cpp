// SPDX-License-Identifier: MIT
// Concurrent readers of the stateful allocators: the DRF sorter, capacity queues, YARN's
// proportional preemption and the HiveD scheduler. Each test builds one object with state in it,
// then several threads ask its const API the same questions at once (tests/support/
// concurrent_readers.hpp); every answer must equal the single-threaded one, which is also pinned
// to concrete values. Run under ThreadSanitizer by CI (ctest -R ConstReaders).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>
#include <hetsched/policies/drf.hpp>
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_topology.hpp>
#include <hetsched/policies/proportional_preemption.hpp>
#include <hetsched/topology/cluster_builder.hpp>

#include "support/concurrent_readers.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::IsOk;
using ::hetsched::testing::same_answers_concurrently;
using ::hetsched::testing::value_of;
using ::testing::ElementsAre;

// ---- DRF sorter ----------------------------------------------------------------------------

drf_vector res(std::int64_t cpus, std::int64_t mem, std::int64_t gpus) {
  return {{"cpus", cpus}, {"gpu", gpus}, {"mem", mem}};
}

TEST(ConstReaders, DrfSorter) {
  drf_sorter sorter;
  ASSERT_THAT(sorter.set_total(res(100, 100, 16)), IsOk());
  const auto a = sorter.add("a").value();
  const auto bx = sorter.add("b/x").value();
  const auto by = sorter.add("b/y").value();
  const auto c = sorter.add("c").value();
  ASSERT_THAT(sorter.set_weight("c", 2.0), IsOk());
  ASSERT_THAT(sorter.allocated(a, res(10, 20, 4)), IsOk());  // a: gpu 4/16 = .25
  ASSERT_THAT(sorter.allocated(bx, res(5, 5, 1)), IsOk());   // b: gpu 3/16, x 1/16, y 2/16
  ASSERT_THAT(sorter.allocated(by, res(5, 5, 2)), IsOk());
  ASSERT_THAT(sorter.allocated(c, res(40, 10, 4)), IsOk());  // c: cpus .4 / weight 2 = .2

  struct answer {
    std::vector<std::string> order;
    std::string next;
    std::vector<drf_share> shares;
    std::vector<std::int64_t> counts;
    std::vector<drf_vector> allocations;
    std::uint32_t found = 0;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    for (const auto id : sorter.sort()) out.order.push_back(sorter.path(id));
    const auto next = sorter.pick_next();
    out.next = next ? sorter.path(*next) : "";
    for (const auto id : {a, bx, by, c}) {
      out.shares.push_back(value_of(sorter.share(id)).value_or(drf_share{}));
      out.counts.push_back(value_of(sorter.allocation_count(id)).value_or(-1));
      out.allocations.push_back(value_of(sorter.allocation(id)).value_or(drf_vector{}));
    }
    out.found = value_of(sorter.find("b/y")).value_or(drf_client_id::invalid()).value();
    return out;
  });
  // b's subtree (3/16) before c (.4 cpus / 2 = .2) before a (.25); inside b, x (1/16) first.
  EXPECT_THAT(got.order, ElementsAre("b/x", "b/y", "c", "a"));
  EXPECT_EQ(got.next, "b/x");
  EXPECT_EQ(got.shares[0], (drf_share{4, 16}));
  EXPECT_EQ(got.counts[2], 1);
  EXPECT_EQ(got.allocations[3], res(40, 10, 4));
  EXPECT_EQ(got.found, by.value());
}

// ---- Capacity queues -------------------------------------------------------------------------

// Cohort "org" with team-a and team-b: 8 H100 and 16 A100 GPUs of nominal quota each (milli-GPU),
// reclaim and within-queue preemption on.
capacity_tree two_teams() {
  capacity_tree_spec spec;
  capacity_node_spec org;
  org.name = "org";
  org.kind = capacity_node_kind::cohort;
  spec.nodes.push_back(org);
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

std::string describe(const capacity_tree& tree, const what_if_answer& w) {
  std::vector<std::string> victims;
  for (const auto& v : w.victims) {
    victims.push_back(fmt::format("{}@{}:{}", v.victim, tree.name(v.queue), to_string(v.reason)));
  }
  return fmt::format("admissible={} flavor={} borrowing={} drs={} victims=[{}] ahead={} reason={}",
                     w.admissible_now, w.flavor, w.borrowing, w.drs_after.rounded(),
                     fmt::join(victims, ","), w.ahead_in_queue, w.reason);
}

std::string describe(const queue_report& r) {
  std::vector<std::string> lines;
  for (const auto& l : r.lines) {
    lines.push_back(fmt::format("{}/{} nominal={} usage={} available={} borrowed={}", l.flavor,
                                l.resource, l.nominal, l.usage, l.available, l.borrowed));
  }
  return fmt::format("drs={} [{}]", r.drs.rounded(), fmt::join(lines, "; "));
}

TEST(ConstReaders, CapacityQueues) {
  capacity_state s(two_teams());
  const queue_id a = *s.tree().find("team-a");
  const queue_id b = *s.tree().find("team-b");
  // team-b borrows all 16 H100 of the cohort; team-a waits for 4 H100 (reclaim) and 20 A100.
  ASSERT_THAT(s.add_admitted({job_id(1), b, {}, 0, 0, "h100", {{"gpu", 16000}}}), IsOk());
  ASSERT_THAT(s.add_admitted({job_id(2), b, {}, 0, 0, "a100", {{"gpu", 4000}}}), IsOk());
  ASSERT_THAT(s.submit({job_id(3), a, {}, 5, 10, {{"gpu", 4000}}, {"h100"}}), IsOk());
  ASSERT_THAT(s.submit({job_id(4), a, {}, 0, 11, {{"gpu", 20000}}, {"a100"}}), IsOk());
  ASSERT_THAT(s.submit({job_id(5), b, {}, 0, 12, {{"gpu", 2000}}, {}}), IsOk());
  const pending_workload probe{job_id(9), a, {}, 1, 20, {{"gpu", 8000}}, {"h100"}};

  struct answer {
    std::vector<flavor_admission> admitted;
    std::vector<std::vector<preemption_target>> preemptions;
    decision cycle;
    std::string what_if;
    std::string team_a;
    std::string team_b;
    std::int64_t share_b = 0;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    capacity_cycle_options opts;
    opts.now = 100;
    if (auto plan = plan_admission(s, opts)) {
      out.admitted = plan->admitted;
      for (const auto& p : plan->preemptions) out.preemptions.push_back(p.victims);
      out.cycle = plan->decision;
    }
    if (auto w = what_if(s, probe, opts)) out.what_if = describe(s.tree(), *w);
    if (auto r = queue_status(s, a)) out.team_a = describe(*r);
    if (auto r = queue_status(s, b)) out.team_b = describe(*r);
    out.share_b = dominant_resource_share(s.tree(), s.usage(), b).rounded();
    return out;
  });
  // The cycle admits job 5 (team-b, within its nominal quota: first at the cohort), then job 4
  // (20 A100 of team-a's 16: borrowing 4 of team-b's idle A100); job 3 needs team-b's H100
  // back: a reclaim of job 1.
  ASSERT_EQ(got.admitted.size(), 2u);
  EXPECT_EQ(got.admitted[0], (flavor_admission{job_id(5), b, "a100", false}));
  EXPECT_EQ(got.admitted[1], (flavor_admission{job_id(4), a, "a100", true}));
  ASSERT_EQ(got.preemptions.size(), 1u);
  ASSERT_EQ(got.preemptions[0].size(), 1u);
  EXPECT_EQ(got.preemptions[0][0].victim, job_id(1));
  EXPECT_EQ(got.preemptions[0][0].reason, preemption_reason::in_cohort_reclamation);
  // The probe (priority 1, behind job 3 of priority 5) would need job 1's H100 as well, but the
  // cycle gives job 1 to job 3 as a victim first: the probe waits, with nothing to preempt.
  EXPECT_EQ(got.what_if,
            "admissible=false flavor=h100 borrowing=false drs=0 victims=[] ahead=1 "
            "reason=waiting for quota in queue 'team-a'; available now: gpu@h100=0 "
            "gpu@a100=28000");
  EXPECT_EQ(got.team_b,
            "drs=167 [a100/gpu nominal=16000 usage=4000 available=28000 borrowed=0; "
            "h100/gpu nominal=8000 usage=16000 available=0 borrowed=8000]");
  EXPECT_EQ(got.share_b, 167);
  EXPECT_EQ(s.pending_count(), 3u);
}

// ---- Proportional preemption (YARN PCPP) ------------------------------------------------------

// YARN's testProportionalPreemption: cluster 100; A (10, pending 20), B (40, pending 5),
// C (20, pending 20), D (30); A runs 30, B 60, C 10 unit containers.
pcpp_snapshot yarn_proportional() {
  pcpp_snapshot s;
  s.cluster = pcpp_vector{100};
  const auto queue = [&](std::string name, std::int64_t guaranteed, std::int64_t pending) {
    pcpp_queue q;
    q.name = std::move(name);
    q.guaranteed = pcpp_vector{guaranteed};
    q.maximum = pcpp_vector{100};
    q.pending = pcpp_vector{pending};
    s.queues.push_back(q);
  };
  queue("A", 10, 20);
  queue("B", 40, 5);
  queue("C", 20, 20);
  queue("D", 30, 0);
  const std::size_t runs[] = {30, 60, 10};
  for (std::size_t q = 0; q < 3; ++q) {
    const std::size_t job = s.jobs.size();
    s.jobs.push_back(pcpp_job{job + 100, q, 0, 0, false});
    for (std::size_t i = 0; i < runs[q]; ++i) {
      pcpp_container c;
      c.id = s.containers.size() + 1;
      c.job = job;
      c.start_time = static_cast<std::int64_t>(i) + 1;
      c.size = pcpp_vector{1};
      s.containers.push_back(c);
    }
  }
  return s;
}

TEST(ConstReaders, ProportionalPreemption) {
  const pcpp_snapshot snapshot = yarn_proportional();
  pcpp_params params;
  params.natural_termination_factor = {1, 1};
  params.total_preemption_per_round = {1, 1};
  struct answer {
    std::vector<pcpp_victim> victims;
    std::vector<pcpp_vector> ideal;
    std::vector<pcpp_vector> to_be_preempted;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    if (auto plan = plan_proportional_preemption(snapshot, params)) {
      out.victims = plan->victims;
      for (const auto& q : plan->queues) {
        out.ideal.push_back(q.ideal);
        out.to_be_preempted.push_back(q.to_be_preempted);
      }
    }
    return out;
  });
  // ideal: A 20, B 60, C 20, D 0; A gives back 10: its newest containers, indices 29..20.
  ASSERT_EQ(got.ideal.size(), 4u);
  EXPECT_EQ(got.ideal[0][0], 20);
  EXPECT_EQ(got.ideal[1][0], 60);
  EXPECT_EQ(got.ideal[2][0], 20);
  EXPECT_EQ(got.to_be_preempted[0][0], 10);
  ASSERT_EQ(got.victims.size(), 10u);
  EXPECT_EQ(got.victims.front().container, 29u);
  EXPECT_EQ(got.victims.back().container, 20u);
}

// ---- HiveD ------------------------------------------------------------------------------------

// HiveD on node cells derived from 4 DGX A100 nodes: VCs a and b own two nodes each. Committed:
// a-0 (VC a, 8 GPUs) and three opportunistic pods of b (8, 8 and 4 GPUs): every node is busy.
struct hived_bed {
  hived::scheduler scheduler;
  std::string chain;
};

hived::pod_request pod(std::string name, std::string vc, int priority, int leaves) {
  hived::pod_request p;
  p.name = std::move(name);
  p.vc = std::move(vc);
  p.priority = priority;
  p.leaf_cells = leaves;
  return p;
}

hived_bed make_hived() {
  const auto topology =
      cluster_builder("c").add_nodes(node_template::dgx_a100, 4, "n").build().value();
  hived::derive_options options;
  options.top = hived::top_cell_level::node;
  hived::config cfg = hived::derive_cells(topology, options).value();
  std::string node_type;
  for (const auto& t : cfg.cell_types) {
    if (t.node_level) node_type = t.name;
  }
  cfg.virtual_clusters = {{"a", {{node_type, 2}}, {}}, {"b", {{node_type, 2}}, {}}};
  auto scheduler = hived::scheduler::create(cfg).value();
  scheduler.mark_all_nodes_healthy();
  std::string chain;
  for (auto p : {pod("a-0", "a", 1, 8), pod("opp-1", "b", hived::opportunistic_priority, 8),
                 pod("opp-2", "b", hived::opportunistic_priority, 8),
                 pod("opp-3", "b", hived::opportunistic_priority, 4)}) {
    auto answer = scheduler.schedule(p, {}, hived::phase::filtering).value();
    EXPECT_EQ(answer.kind, hived::outcome::bind) << p.name;
    chain = answer.bind.chain;
    EXPECT_THAT(scheduler.add_allocated(p, answer.bind), IsOk());
  }
  return hived_bed{std::move(scheduler), chain};
}

std::string describe(const std::optional<hived::group_status>& g) {
  if (!g) return "none";
  std::vector<std::string> nodes;
  for (const auto& [node, leaves] : g->physical_placement) {
    nodes.push_back(fmt::format("{}:{}", node, fmt::join(leaves, ",")));
  }
  return fmt::format("state={} dropped={} [{}]", static_cast<int>(g->state),
                     g->virtual_placement_dropped, fmt::join(nodes, " "));
}

std::string describe(const std::vector<hived::vc_cell_status>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) {
    out.push_back(fmt::format("{}:{}:{}:{}", c.address, c.priority, c.healthy, c.bound_to));
  }
  return fmt::format("{}", fmt::join(out, " "));
}

std::string describe(const std::vector<hived::cell_info>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) {
    out.push_back(fmt::format("{}:{}:{}:{}:{}", c.address, c.type, c.level, fmt::join(c.nodes, ","),
                              fmt::join(c.leaf_indices, ",")));
  }
  return fmt::format("{}", fmt::join(out, " "));
}

TEST(ConstReaders, HivedScheduler) {
  const hived_bed bed = make_hived();
  const hived::scheduler& s = bed.scheduler;
  const std::uint64_t digest_before = s.state_digest();
  hived::pod_request gang = pod("gang-0", "a", 1, 8);
  gang.group = "gang";
  gang.members = {{2, 8}};
  struct answer {
    std::vector<hived::what_if_answer> what_ifs;
    std::uint64_t digest = 0;
    std::vector<std::string> queries;
    std::vector<std::string> nodes;
    std::vector<int> left;
    std::vector<int> vc_free;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    for (const auto& [p, ph] : {std::pair{pod("probe", "a", 1, 4), hived::phase::filtering},
                                std::pair{gang, hived::phase::filtering},
                                std::pair{pod("urgent", "b", 5, 8), hived::phase::preempting}}) {
      out.what_ifs.push_back(
          value_of(s.what_if_on_copy(p, {}, ph)).value_or(hived::what_if_answer{}));
    }
    out.digest = s.state_digest();
    out.queries = {describe(s.group("a-0")),
                   describe(s.group("opp-1")),
                   describe(s.vc_cells_all("a")),
                   describe(s.vc_cells_all("b")),
                   describe(s.node_level_cells()),
                   describe(s.vc_preassigned_cells()),
                   fmt::format("{}", fmt::join(s.free_list(bed.chain, 1), ","))};
    out.nodes = s.nodes();
    out.left = s.total_left_cells(bed.chain);
    out.vc_free = s.all_vc_free_cells(bed.chain);
    return out;
  });
  ASSERT_EQ(got.what_ifs.size(), 3u);
  // The probe (4 GPUs of a's free cell) and the urgent pod of b preempt opportunistic opp-3 on
  // n-3; the 2 x 8 gang waits (a has one node left).
  for (const std::size_t i : {0u, 2u}) {
    EXPECT_EQ(got.what_ifs[i].decision.kind, hived::outcome::preempt);
    ASSERT_EQ(got.what_ifs[i].pods.size(), 1u);
    EXPECT_EQ(got.what_ifs[i].pods[0].node, "n-3");
    ASSERT_EQ(got.what_ifs[i].victims.size(), 1u);
    EXPECT_EQ(got.what_ifs[i].victims[0].pod, "opp-3");
  }
  EXPECT_EQ(got.what_ifs[1].decision.kind, hived::outcome::wait);
  EXPECT_EQ(got.what_ifs[1].decision.wait_reason, "insufficient capacity when scheduling in VC a");
  EXPECT_EQ(got.queries[0], "state=0 dropped=false [n-0:0,1,2,3,4,5,6,7]");
  EXPECT_EQ(got.queries[2], "a/0:1:true:n-0 a/1:-2:true:");
  EXPECT_EQ(got.digest, digest_before);
  EXPECT_EQ(got.nodes, (std::vector<std::string>{"n-0", "n-1", "n-2", "n-3"}));
  EXPECT_EQ(s.state_digest(), digest_before);
}

}  // namespace
}  // namespace hetsched
