// SPDX-License-Identifier: MIT
// capacity with tree= (queue_placement.hpp): the library's hierarchical capacity queues in the
// simulator. Each scenario pins the outcome and the outcome of fifo+packer (or of the flat
// capacity form) on the same trace, so the test fails if the real admission cycle is bypassed:
// flavors bind jobs on their admitted GPU type and reclaim it by preemption, a cohort's borrowing
// limit holds a subtree inside its quota, a strict FIFO queue blocks behind its head.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <hetsched/policies/capacity_tree_json.hpp>
#include <hetsched/policies/queue_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/sim/policy_defaults.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::gpu_job;
using hetsched::testing::IsOk;
using hetsched::testing::sim_fixture;
using hetsched::testing::simulate_spec;
using hetsched::testing::two_dgx;

/// One DGX-1 (8 V100) and one HGX H100 (8 H100) node.
sim_fixture v100_and_h100() {
  sim_fixture f{cluster_builder("c")
                    .add_nodes(node_template::dgx1_v100, 1, "v")
                    .add_nodes(node_template::hgx_h100, 1, "h")
                    .racks(1)
                    .build()
                    .value(),
                nullptr};
  f.description = std::make_shared<const cluster>(to_cluster(f.topo).value());
  return f;
}

sim_params every_second() {
  sim_params p;
  p.round_ms = 1'000;
  p.preemption_delay_ms = 0;
  return p;
}

/// Runs `trace` under "fifo+capacity" with the queue tree `tree` (tenants filled as hetsched-sim
/// does).
sim_result simulate_tree(const sim_fixture& f, const workload::trace& trace, std::string tree,
                         const sim_params& params) {
  auto spec = parse_policy_spec("fifo+capacity");
  EXPECT_THAT(spec, IsOk());
  spec->placement_params["tree"] = std::move(tree);
  std::vector<policy_spec> specs{*spec};
  EXPECT_THAT(fill_quota_params(specs, trace, f.description->device_count(), nullptr), IsOk());
  auto inst = make_policy(specs.front(), *f.description, &f.topo);
  EXPECT_THAT(inst, IsOk());
  auto r = simulate(f.description, trace, *inst->order, *inst->place, params);
  EXPECT_THAT(r, IsOk());
  return std::move(*r);
}

// Flavors: queue a owns the V100s and may borrow H100s, queue b owns the H100s. a0 and a1 (8
// GPUs, 100 s, untyped) arrive at 0: a0 is admitted in the V100 flavor and placed on the V100
// node, a1 in the H100 flavor, borrowing b's idle quota, and placed on the H100 node. b0 (8 GPUs,
// 50 s) arrives at 5 s: the cycle reclaims b's H100 quota from a1 (InCohortReclamation); b0
// starts at the next pass, 6 s, on the H100 node, a1 waits for quota and restarts when b0 ends
// (56 s) with its 96 s left plus the 30 s preemption cost: 182 s.
constexpr std::string_view flavor_tree = R"({
  "nodes": [
    {"name": "org", "kind": "cohort"},
    {"name": "a", "parent": "org", "tenants": ["A"],
     "quotas": [{"flavor": "V100-SXM2-16GB", "resource": "gpu", "nominal": 8},
                {"flavor": "H100-SXM5-80GB", "resource": "gpu", "nominal": 0}]},
    {"name": "b", "parent": "org", "tenants": ["B"],
     "quotas": [{"flavor": "H100-SXM5-80GB", "resource": "gpu", "nominal": 8}],
     "preemption": {"reclaim_within_cohort": "any"}}
  ]
})";

const workload::trace flavor_trace{gpu_job("a0", "A", 0, 100, 8), gpu_job("a1", "A", 0, 100, 8),
                                   gpu_job("b0", "B", 5, 50, 8)};

TEST(QueuePlacement, FlavorsBindOnTheirTypeAndReclaimByPreemption) {
  const sim_fixture f = v100_and_h100();
  const sim_result r = simulate_tree(f, flavor_trace, std::string(flavor_tree), every_second());
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[0].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 101'000);
  EXPECT_EQ(r.jobs[1].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 6'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 56'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 182'000);
  // fifo+packer on the same trace: b0 waits for a whole node, until a0 and a1 end at 101 s.
  const sim_result p = simulate_spec(f, flavor_trace, "fifo+packer", every_second());
  EXPECT_EQ(p.counters.preemptions, 0u);
  EXPECT_EQ(p.jobs[2].first_start_ms, 101'000);
  EXPECT_EQ(p.jobs[1].finish_ms, 101'000);
}

// A typed job is admitted only in its own flavor: B's H100 job b0 cannot use a's V100 quota, and
// A's V100 job a0 cannot borrow H100 quota, whatever is idle.
TEST(QueuePlacement, ATypedJobIsAdmittedInItsOwnFlavorOnly) {
  const sim_fixture f = v100_and_h100();
  workload::trace t{gpu_job("a0", "A", 0, 100, 8), gpu_job("a1", "A", 0, 100, 8)};
  t[0].gpu_type = "V100-SXM2-16GB";
  t[1].gpu_type = "V100-SXM2-16GB";
  const sim_result r = simulate_tree(f, t, std::string(flavor_tree), every_second());
  EXPECT_EQ(r.jobs[0].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[1].first_start_ms, 101'000);  // after a0: one V100 node
}

// Hierarchy: org -> {r1 -> q1 (A), r2 -> q2 (B)}, 8 GPUs each. Cohort r1 has a borrowing limit
// of 0: its queues never use more than r1's 8 GPUs, even with r2 idle. The flat capacity form
// (one cohort, quota=8/8, borrowing) lets a1 borrow B's idle quota at once.
constexpr std::string_view nested_tree = R"({
  "nodes": [
    {"name": "org", "kind": "cohort"},
    {"name": "r1", "kind": "cohort", "parent": "org",
     "quotas": [{"resource": "gpu", "nominal": 0, "borrowing_limit": 0}]},
    {"name": "r2", "kind": "cohort", "parent": "org"},
    {"name": "q1", "parent": "r1", "tenants": ["A"], "quotas": [{"resource": "gpu", "nominal": 8}]},
    {"name": "q2", "parent": "r2", "tenants": ["B"], "quotas": [{"resource": "gpu", "nominal": 8}]}
  ]
})";

TEST(QueuePlacement, ACohortBorrowingLimitHoldsItsSubtreeToItsQuota) {
  const sim_fixture f = two_dgx();
  const workload::trace t{gpu_job("a0", "A", 0, 100, 8), gpu_job("a1", "A", 0, 100, 8),
                          gpu_job("b0", "B", 200, 10, 4)};
  const sim_result r = simulate_tree(f, t, std::string(nested_tree), every_second());
  EXPECT_EQ(r.jobs[0].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[1].first_start_ms, 101'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 201'000);
  const sim_result flat = simulate_spec(f, t, "fifo+capacity:quota=8/8", every_second());
  EXPECT_EQ(flat.jobs[1].first_start_ms, 1'000);
  EXPECT_EQ(flat.jobs[1].finish_ms, 101'000);
}

// A strict FIFO queue blocks behind a head that does not fit (a1 needs 8 of the 1 GPU left); a
// best-effort one lets the 1-GPU a2 go first. Nominal 9 of 16 GPUs, no borrowing.
std::string fifo_tree(std::string_view order) {
  return fmt::format(R"({{"nodes": [{{"name": "q", "tenants": ["A"], "order": "{}",
    "quotas": [{{"resource": "gpu", "nominal": 9}}]}}]}})",
                     order);
}

TEST(QueuePlacement, AStrictFifoQueueBlocksBehindItsHead) {
  const sim_fixture f = two_dgx();
  const workload::trace t{gpu_job("a0", "A", 0, 100, 8), gpu_job("a1", "A", 1, 100, 8),
                          gpu_job("a2", "A", 2, 10, 1)};
  const sim_result strict = simulate_tree(f, t, fifo_tree("strict_fifo"), every_second());
  EXPECT_EQ(strict.jobs[1].first_start_ms, 101'000);
  EXPECT_EQ(strict.jobs[2].first_start_ms, 101'000);  // behind a1, then next to it (9 GPUs)
  const sim_result best = simulate_tree(f, t, fifo_tree("best_effort_fifo"), every_second());
  EXPECT_EQ(best.jobs[2].first_start_ms, 2'000);
  EXPECT_EQ(best.jobs[1].first_start_ms, 101'000);
  // fifo+packer has no quota: a1 starts at once on the second node.
  const sim_result p = simulate_spec(f, t, "fifo+packer", every_second());
  EXPECT_EQ(p.jobs[1].first_start_ms, 1'000);
}

// A job that can never be admitted (more than its queue can ever get) waits with the cycle's
// reason; it does not stop the others.
TEST(QueuePlacement, AJobAboveWhatItsQueueCanEverGetWaits) {
  const sim_fixture f = two_dgx();
  const workload::trace t{gpu_job("big", "A", 0, 10, 16), gpu_job("small", "A", 1, 10, 4)};
  const sim_result r = simulate_tree(f, t, fifo_tree("best_effort_fifo"), every_second());
  EXPECT_EQ(r.jobs[1].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 11'000);
  EXPECT_LT(r.jobs[0].first_start_ms, 0);  // never started
}

TEST(QueuePlacement, BadTreesAndParametersAreRefusedByName) {
  const sim_fixture f = two_dgx();
  policy_params p{{"tree", std::string(nested_tree)}, {"tenants", "A/C"}};
  EXPECT_THAT(make_placement("capacity", p, *f.description, &f.topo),
              ErrorContains("tenant 'C' maps to no queue"));
  p["tenants"] = "A/B";
  p["quota"] = "8/8";
  EXPECT_THAT(make_placement("capacity", p, *f.description, &f.topo),
              ErrorContains("parameter 'quota' does not apply with tree="));
  p.erase("quota");
  p["tree"] = R"({"nodes": [{"name": "q", "quotas": [{"resource": "gpu", "nominal": -1}]}]})";
  EXPECT_THAT(make_placement("capacity", p, *f.description, &f.topo),
              ErrorContains("nodes[0].quotas[0].nominal: -1 is not a non-negative amount"));
  p["tree"] = R"({"nodes": [{"name": "q", "ordr": "drf"}]})";
  EXPECT_THAT(make_placement("capacity", p, *f.description, &f.topo),
              ErrorContains("nodes[0].ordr: unknown member"));
  p["tree"] = R"({"nodes": [{"name": "q", "parent": "q"}]})";
  EXPECT_THAT(make_placement("capacity", p, *f.description, &f.topo), ErrorContains("q"));
}

}  // namespace
}  // namespace hetsched::sim
