// SPDX-License-Identifier: MIT
// capacity:min_runtime_s (Kueue's minimum runtime before preemption) in the simulator: a borrower
// that has run less than N seconds of simulated time is no victim; the preemption happens at the
// first scheduling pass after it reached N s. Hand-computed preemption, start and finish times.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;
using hetsched::testing::simulate_spec;
using hetsched::testing::two_dgx;

workload::trace_job job(std::string name, std::string tenant, std::int64_t submit_s,
                        std::int64_t duration_s, std::uint32_t gpus) {
  return hetsched::testing::gpu_job(std::move(name), std::move(tenant), submit_s, duration_s, gpus);
}

// Two 8-GPU nodes, quotas 8/8. A's a0 and a1 (8 GPUs, 100 s) arrive at 0 (a1 borrows B's idle
// quota); B's b0 (8 GPUs, 50 s) arrives at 5 and reclaims a1. With passes every second and no
// kill delay, a1 is requeued at the preemption time and b0 starts at the next pass, 1 s later;
// a1's progress stops at the preemption (its finish time pins it; the restart adds 30 s).
const workload::trace reclaim{job("a0", "A", 0, 100, 8), job("a1", "A", 0, 100, 8),
                              job("b0", "B", 5, 50, 8)};

sim_params every_second() {
  sim_params p;
  p.round_ms = 1'000;  // a pass every second: a0 and a1 start at the first round, 1 s
  p.preemption_delay_ms = 0;
  return p;
}

TEST(CapacityMinRuntime, WithoutAMinimumTheBorrowerIsPreemptedAtOnce) {
  const sim_result r = simulate_spec(two_dgx(), reclaim,
                                     "fifo+capacity:quota=8/8,preemption=classic", every_second());
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[0].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[1].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 6'000);  // a1 preempted at 5 s, having run 4 s
  EXPECT_EQ(r.jobs[2].finish_ms, 56'000);
  // a1: 96 s left + 30 s cost, restarts when b0 ends: 56 + 126 = 182.
  EXPECT_EQ(r.jobs[1].finish_ms, 182'000);
}

TEST(CapacityMinRuntime, TheBorrowerIsPreemptedWhenItHasRunTheMinimum) {
  const sim_result r =
      simulate_spec(two_dgx(), reclaim,
                    "fifo+capacity:quota=8/8,preemption=classic,min_runtime_s=20", every_second());
  // a1 started at 1 s: it is no victim at 5..20 s and becomes one at 21 s (run 20 s), the
  // preemption time; b0 starts at the next pass, 22 s.
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 22'000);
  EXPECT_EQ(r.jobs[2].pending_ms, 17'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 72'000);
  // a1 stopped at 21 s with 80 s left (+ 30 s cost) and restarts when b0 ends: 72 + 110 = 182
  // (stopped at 22 s it would end at 181, at 20 s at 183).
  EXPECT_EQ(r.jobs[1].finish_ms, 182'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 101'000);
}

TEST(CapacityMinRuntime, FairSharingHonoursTheMinimumToo) {
  const sim_result r =
      simulate_spec(two_dgx(), reclaim, "fifo+capacity:quota=8/8,preemption=fair,min_runtime_s=20",
                    every_second());
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 22'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 182'000);
}

TEST(CapacityMinRuntime, AMinimumLongerThanTheVictimsRunMeansNoPreemption) {
  const sim_result r =
      simulate_spec(two_dgx(), reclaim,
                    "fifo+capacity:quota=8/8,preemption=classic,min_runtime_s=100", every_second());
  // a1 would reach 100 s of run time at 101 s, when it ends anyway: b0 takes its GPUs then.
  EXPECT_EQ(r.counters.preemptions, 0u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 101'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 101'000);
}

TEST(CapacityMinRuntime, EventDrivenTheDeferredPreemptionWaitsForTheNextPass) {
  // Event-driven (no rounds): a0 and a1 start at 0. At 5 s a1 is too young; the next pass is
  // a2's arrival at 30 s, where a1 has run 30 >= 20 s: b0 (first in FIFO order) preempts it
  // then. a2 (A, over its quota and the cohort full) waits.
  sim_params p;
  p.preemption_delay_ms = 0;
  workload::trace t = reclaim;
  t.push_back(job("a2", "A", 30, 10, 8));
  const sim_result r =
      simulate_spec(two_dgx(), t, "fifo+capacity:quota=8/8,preemption=classic,min_runtime_s=20", p);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 30'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 80'000);
  // Without a2 nothing happens between 5 and 100 s: b0 waits for a1 to finish.
  const sim_result quiet = simulate_spec(
      two_dgx(), reclaim, "fifo+capacity:quota=8/8,preemption=classic,min_runtime_s=20", p);
  EXPECT_EQ(quiet.counters.preemptions, 0u);
  EXPECT_EQ(quiet.jobs[2].first_start_ms, 100'000);
}

TEST(CapacityMinRuntime, BadValuesNameTheParameter) {
  const auto f = two_dgx();
  const auto make = [&](std::string v, std::string preemption = "classic") {
    return make_placement("capacity", {{"preemption", preemption}, {"min_runtime_s", v}},
                          *f.description, &f.topo);
  };
  EXPECT_THAT(make("20"), IsOk());
  EXPECT_THAT(make("0", "none"), IsOk());
  EXPECT_THAT(make("soon"),
              ErrorContains("capacity: parameter min_runtime_s: 'soon' is not an integer"));
  EXPECT_THAT(make("20s"), ErrorContains("min_runtime_s: '20s' is not an integer"));
  EXPECT_THAT(make("-5"), ErrorContains("min_runtime_s: -5 is not in 0..1000000000 seconds"));
  EXPECT_THAT(make("1000000001"), ErrorContains("min_runtime_s: 1000000001 is not in"));
  EXPECT_THAT(make("20", "none"),
              ErrorContains("min_runtime_s=20 needs preemption=classic or fair"));
  auto spec = parse_policy_spec("fifo+capacity:min_runtime_s=x,preemption=fair");
  ASSERT_THAT(spec, IsOk());
  EXPECT_THAT(make_policy(*spec, *f.description, &f.topo), ErrorContains("min_runtime_s: 'x'"));
}

}  // namespace
}  // namespace hetsched::sim
