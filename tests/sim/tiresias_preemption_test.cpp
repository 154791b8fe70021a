// SPDX-License-Identifier: MIT
// Tiresias' own preemption combined with per-tenant placements (capacity queues, HiveD): under a
// per-tenant placement a waiting job displaces only running jobs of its own tenant and priority,
// so the ordering and the placement's preemption cannot undo each other's choices; and an
// eviction whose preemptor is not placed is rolled back.
#include <gtest/gtest.h>

#include <string>

#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::IsOk;
using hetsched::testing::simulate_spec;
using fixture = hetsched::testing::sim_fixture;
using hetsched::testing::two_dgx;

workload::trace_job job(std::string name, std::string tenant, std::int64_t submit_s,
                        std::int64_t duration_s, std::uint32_t gpus) {
  return hetsched::testing::gpu_job(std::move(name), std::move(tenant), submit_s, duration_s, gpus);
}

// 16 GPUs, quotas 8/8, Tiresias threshold 1,000 GPU-s. a0 and a1 (A) start at 0, a1 borrowing
// B's idle quota; b0 (B) arrives at 10.
const workload::trace reclaim{job("a0", "A", 0, 10'000, 8), job("a1", "A", 0, 10'000, 8),
                              job("b0", "B", 10, 1'000, 8)};

TEST(TiresiasCapacity, QuotaReclaimThenPreemptionWithinTheTenant) {
  const sim_result r = simulate_spec(
      two_dgx(), reclaim, "tiresias:thresholds=1000+capacity:quota=8/8,preemption=classic");
  // At 10 the capacity placement reclaims B's quota from the borrower a1 (80 GPU-s attained,
  // queue 0): a1 stops at 10 and is requeued at 40, when b0 starts. At the round of 180 b0 has
  // 1,120 GPU-s (queue 1) and a1, waiting in queue 0, would displace it by GPU count; it may only
  // displace A's own a0 (queue 1 since 125 s), which it does: a1 restarts at 180 on a0's GPUs.
  // Without the per-tenant rule this looped: Tiresias evicted b0, the placement a1, every round.
  EXPECT_EQ(r.jobs[2].first_start_ms, 40'000);
  EXPECT_EQ(r.jobs[2].preemptions, 0u);
  EXPECT_EQ(r.jobs[2].finish_ms, 1'040'000);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[0].preemptions, 1u);
  EXPECT_EQ(r.counters.preemptions, 2u);
  EXPECT_EQ(r.counters.unplaceable, 0u);
}

TEST(TiresiasCapacity, WithoutPlacementPreemptionOnlyTheTenantsOwnJobsAreVictims) {
  const sim_result r =
      simulate_spec(two_dgx(), reclaim, "tiresias:thresholds=1000+capacity:quota=8/8");
  // b0 waits for quota (no reclaim); Tiresias in B's group has no running job to displace, and
  // A's jobs (queue 1 at 180) are never displaced by a job of another tenant.
  EXPECT_EQ(r.counters.preemptions, 0u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 10'000'000);
}

// A job of a tenant with no free quota cannot be placed even once other tenants' jobs are gone.
TEST(TiresiasHived, NoVictimsForAJobItsQuotaCannotPlace) {
  const workload::trace t{job("a0", "A", 0, 600, 8), job("b0", "B", 100, 600, 8),
                          job("b1", "B", 150, 100, 8)};
  const sim_result r = simulate_spec(two_dgx(), t, "tiresias:thresholds=1000+hived:quota=8/8");
  // At the round of 180 a0 is in queue 1 and b1 (queue 0) waits for B's only cell, held by b0
  // (queue 0, no displacement among equals). By GPU count b1 would displace a0, but a0 is A's:
  // it runs on (before the per-tenant rule a0 was evicted, b1 still did not fit and a0
  // restarted in the same pass). At 240 b0 reaches queue 1 and b1, of its own tenant, takes its
  // cell.
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
  EXPECT_EQ(r.jobs[0].finish_ms, 600'000);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 240'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 340'000);
  EXPECT_EQ(r.counters.preemptions, 1u);
}

// The preemptor is admitted by GPU count but cannot be placed once its victims are gone: its 8
// GPUs on one server are split 4 + 4 over the two servers. The victims restart in the same pass
// (the eviction is rolled back: no preemption counted, no cost).
TEST(TiresiasPacker, AnEvictionThatPlacesNothingIsRolledBack) {
  workload::trace t{job("a0", "A", 0, 1'000, 4), job("b0", "A", 0, 1'000, 4),
                    job("a1", "A", 0, 1'000, 4), job("b1", "A", 0, 1'000, 4),
                    job("w", "A", 70, 100, 8)};
  t[0].preemptible = false;
  t[2].preemptible = false;
  const sim_result r = simulate_spec(two_dgx(), t, "tiresias:thresholds=100+packer");
  // Rounds at 120, 180, ...: w (queue 0) outranks b0 and b1 (queue 1 since 25 s) and fits in the
  // 8 preemptible GPUs by count; they are evicted, w does not fit, they restart at once. w is
  // then blocked until a release (1,000 s), so the round of 120 is the only one.
  EXPECT_EQ(r.counters.preemptions, 0u);
  EXPECT_EQ(r.counters.preemption_rollbacks, 2u);
  EXPECT_EQ(r.jobs[1].preemptions, 0u);
  EXPECT_EQ(r.jobs[1].finish_ms, 1'000'000);
  EXPECT_EQ(r.jobs[3].finish_ms, 1'000'000);
  EXPECT_EQ(r.jobs[4].first_start_ms, 1'000'000);
  EXPECT_EQ(r.jobs[4].finish_ms, 1'100'000);
}

// a1 is opportunistic (priority -1) and runs on B's idle cell until HiveD reclaims it for b0.
// Grouping by tenant alone looped inside A: at the round of 120 a1 (queue 0) displaced a0 (queue
// 1), then HiveD evicted a1 for the guaranteed a0, and so on (3 preemptions here, a0 delayed by
// 920 s). With (tenant, priority) groups a1 cannot displace a0.
TEST(TiresiasHived, AnOpportunisticJobDoesNotDisplaceAGuaranteedOne) {
  workload::trace t{job("a0", "A", 0, 10'000, 8), job("a1", "A", 0, 10'000, 8),
                    job("b0", "B", 70, 1'000, 8)};
  t[1].priority = -1;
  const sim_result r =
      simulate_spec(two_dgx(), t, "tiresias:thresholds=1000+hived:quota=8/8,preemption=1");
  // HiveD preempts a1 at 70; it frees B's cell at 100, when b0 starts. a1 waits until b0 ends at
  // 1,100 and restarts with 9,930 s + 30 s: 11,060.
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
  EXPECT_EQ(r.jobs[0].finish_ms, 10'000'000);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[1].pending_ms, 1'000'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 11'060'000);
  EXPECT_EQ(r.jobs[2].first_start_ms, 100'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 1'100'000);
}

TEST(TiresiasPlacementPreemption, CombinationsAreAccepted) {
  const fixture f = two_dgx();
  for (const std::string_view text :
       {"tiresias+capacity:preemption=classic", "tiresias+capacity:preemption=fair",
        "tiresias+hived:preemption=1"}) {
    auto inst = make_policy(*parse_policy_spec(text), *f.description, &f.topo);
    ASSERT_THAT(inst, IsOk()) << text;
    EXPECT_TRUE(inst->place->preempts()) << text;
  }
  auto hived = make_policy(*parse_policy_spec("tiresias+hived"), *f.description, &f.topo);
  ASSERT_THAT(hived, IsOk());
  EXPECT_FALSE(hived->place->preempts());
}

}  // namespace
}  // namespace hetsched::sim
