// SPDX-License-Identifier: MIT
// capacity:preemption=proportional (YARN's ProportionalCapacityPreemptionPolicy) in the
// simulator: a borrower of the whole cluster gives a reclaiming tenant its share back at the
// pace of YARN's dead zone, natural termination factor and per-round cap, one round per
// monitoring interval. Hand-computed victims and start times.
#include <gtest/gtest.h>

#include <string>
#include <vector>

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
                        std::int64_t duration_s, std::uint32_t gpus, std::uint32_t tasks = 1) {
  workload::trace_job j =
      hetsched::testing::gpu_job(std::move(name), std::move(tenant), submit_s, duration_s, gpus);
  j.tasks = tasks;
  return j;
}

sim_params every_second() {
  sim_params p;
  p.round_ms = 1'000;  // a pass every second; jobs arriving at 0 start at 1 s
  p.preemption_delay_ms = 0;
  return p;
}

// Two 8-GPU nodes, quotas 8/8. A's a0..a15 (1 GPU, 1000 s) arrive at 0 and borrow all of B's
// quota; B's b0..b3 (1 GPU, 100 s) arrive at 100 s.
workload::trace borrow_then_reclaim() {
  workload::trace t;
  for (int i = 0; i < 16; ++i) t.push_back(job("a" + std::to_string(i), "A", 0, 1000, 1));
  for (int i = 0; i < 4; ++i) t.push_back(job("b" + std::to_string(i), "B", 100, 100, 1));
  return t;
}

TEST(CapacityProportional, TheReclaimingTenantGetsItsDemandOneVictimPerRound) {
  const sim_result r =
      simulate_spec(two_dgx(), borrow_then_reclaim(),
                    "fifo+capacity:quota=8/8,preemption=proportional", every_second());
  // Round at 100 s: ideal B = 4000 (its demand), A = 12000; A gives back 4000, scaled to the
  // per-round cap floor(16000 * 0.1) = 1600, over the dead zone (16000 > 8800), natural
  // termination round(1600 * 0.2) = 320: one 1-GPU victim, the last-submitted A job (a15).
  // Rounds every 3 s (monitoring_interval 3000 ms): 103 s (A 15000: 3000 -> 1600 -> 320, a14),
  // 106 s (2000 -> 1600 -> 320, a13), 109 s (1000 -> 200, a12), 112 s (A at its ideal: none).
  // Each victim is killed at once and its B job starts at the next pass.
  EXPECT_EQ(r.counters.preemptions, 4u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(r.jobs[static_cast<std::size_t>(i)].preemptions, 0u) << i;
  for (int i = 12; i < 16; ++i) EXPECT_EQ(r.jobs[static_cast<std::size_t>(i)].preemptions, 1u) << i;
  EXPECT_EQ(r.jobs[16].first_start_ms, 101'000);
  EXPECT_EQ(r.jobs[17].first_start_ms, 104'000);
  EXPECT_EQ(r.jobs[18].first_start_ms, 107'000);
  EXPECT_EQ(r.jobs[19].first_start_ms, 110'000);
  EXPECT_EQ(r.jobs[19].finish_ms, 210'000);
  // The victims restart in FIFO order as B's jobs end: a12 (ran 1..109 s: 892 s + 30 s of cost
  // left) at 201 s, a15 (ran 1..100 s: 901 s + 30 s left) at 210 s.
  EXPECT_EQ(r.jobs[12].finish_ms, 201'000 + 922'000);
  EXPECT_EQ(r.jobs[15].finish_ms, 210'000 + 931'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 1'001'000);
}

TEST(CapacityProportional, AShorterMonitoringIntervalAndALargerFactorReclaimFaster) {
  // natural_termination_factor=1 and a per-round cap of half the cluster: the round at 100 s
  // plans A's whole excess above its ideal (4000): a15, a14, a13, a12. In one pass only the
  // first B job asks (the engine skips a shape after its first failure), so b0 takes a15; the
  // rounds every second (101, 102, 103 s) re-plan the rest and b1, b2, b3 take a14, a13, a12,
  // each starting one pass later.
  const sim_result r =
      simulate_spec(two_dgx(), borrow_then_reclaim(),
                    "fifo+capacity:quota=8/8,preemption=pcpp,natural_termination_factor=1,"
                    "total_preemption_per_round=0.5,monitoring_interval_ms=1000",
                    every_second());
  EXPECT_EQ(r.counters.preemptions, 4u);
  for (int i = 12; i < 16; ++i) EXPECT_EQ(r.jobs[static_cast<std::size_t>(i)].preemptions, 1u) << i;
  for (int i = 16; i < 20; ++i)
    EXPECT_EQ(r.jobs[static_cast<std::size_t>(i)].first_start_ms, 101'000 + (i - 16) * 1'000) << i;
}

TEST(CapacityProportional, TheDeadZoneKeepsASmallExcess) {
  // With a dead zone of 1 (act only above 2 x 8000 = 16000 GPUs used) A is never preempted: B
  // waits for A's jobs to end at 1001 s.
  const sim_result r =
      simulate_spec(two_dgx(), borrow_then_reclaim(),
                    "fifo+capacity:quota=8/8,preemption=proportional,max_ignored_over_capacity=1",
                    every_second());
  EXPECT_EQ(r.counters.preemptions, 0u);
  EXPECT_EQ(r.jobs[16].first_start_ms, 1'001'000);
}

TEST(CapacityProportional, GangsArePreemptedWhole) {
  // A: eight gangs of 2 tasks x 1 GPU (1000 s) fill the cluster; B's one 4-GPU job arrives at
  // 100 s. Per-round cap 8000, factor 1: A gives back 4000 = the two last-submitted gangs
  // (a7, a6), each as a whole; B's job starts at the next pass.
  workload::trace t;
  for (int i = 0; i < 8; ++i) t.push_back(job("a" + std::to_string(i), "A", 0, 1000, 1, 2));
  t.push_back(job("b", "B", 100, 100, 4));
  const sim_result r = simulate_spec(two_dgx(), t,
                                     "fifo+capacity:quota=8/8,preemption=proportional,"
                                     "natural_termination_factor=1,total_preemption_per_round=0.5",
                                     every_second());
  EXPECT_EQ(r.counters.preemptions, 2u);
  EXPECT_EQ(r.jobs[6].preemptions, 1u);
  EXPECT_EQ(r.jobs[7].preemptions, 1u);
  EXPECT_EQ(r.jobs[8].first_start_ms, 101'000);
  // With YARN's default cap (1600 milli-GPU) a 2-GPU gang never fits a round: B waits.
  const sim_result capped = simulate_spec(
      two_dgx(), t, "fifo+capacity:quota=8/8,preemption=proportional", every_second());
  EXPECT_EQ(capped.counters.preemptions, 0u);
  EXPECT_EQ(capped.jobs[8].first_start_ms, 1'001'000);
}

TEST(CapacityProportional, AJobPartlyCoveredAsksAgainAtTheNextRound) {
  // B's one 4-GPU job against 1-GPU borrowers, YARN's defaults: one victim per round (as in the
  // first test); the job keeps its reservation and takes the next round's victim until its
  // four victims are gone (rounds at 100, 103, 106, 109 s), then starts at 110 s.
  workload::trace t;
  for (int i = 0; i < 16; ++i) t.push_back(job("a" + std::to_string(i), "A", 0, 1000, 1));
  t.push_back(job("b", "B", 100, 100, 4));
  const sim_result r = simulate_spec(
      two_dgx(), t, "fifo+capacity:quota=8/8,preemption=proportional", every_second());
  EXPECT_EQ(r.counters.preemptions, 4u);
  for (int i = 12; i < 16; ++i) EXPECT_EQ(r.jobs[static_cast<std::size_t>(i)].preemptions, 1u) << i;
  EXPECT_EQ(r.jobs[16].first_start_ms, 110'000);
}

TEST(CapacityProportional, MinRuntimeProtectsYoungBorrowers) {
  // min_runtime_s=200: A's jobs (started at 1 s) are no victims before 201 s; rounds run at 100,
  // 103, ..., 199, 202 s: a15 is taken at 202 s and b0 starts at 203 s.
  const sim_result r = simulate_spec(
      two_dgx(), borrow_then_reclaim(),
      "fifo+capacity:quota=8/8,preemption=proportional,min_runtime_s=200", every_second());
  EXPECT_EQ(r.counters.preemptions, 4u);
  EXPECT_EQ(r.jobs[16].first_start_ms, 203'000);
  EXPECT_EQ(r.jobs[19].first_start_ms, 212'000);
}

TEST(CapacityProportional, BadValuesNameTheParameter) {
  const auto f = two_dgx();
  const auto make = [&](std::string k, std::string v, std::string preemption = "proportional") {
    return make_placement("capacity", {{"preemption", preemption}, {k, v}}, *f.description,
                          &f.topo);
  };
  EXPECT_THAT(make("max_ignored_over_capacity", "0"), IsOk());
  EXPECT_THAT(make("natural_termination_factor", "0.25"), IsOk());
  EXPECT_THAT(make("total_preemption_per_round", "1"), IsOk());
  EXPECT_THAT(make("monitoring_interval_ms", "0"), IsOk());
  EXPECT_THAT(make("monitoring_interval_ms", "3000", "pcpp"), IsOk());
  EXPECT_THAT(make("natural_termination_factor", "0"),
              ErrorContains("capacity: parameter natural_termination_factor: 0 is not in (0..1"));
  EXPECT_THAT(make("total_preemption_per_round", "1.5"),
              ErrorContains("parameter total_preemption_per_round: 1.5 is not in (0..1"));
  EXPECT_THAT(make("max_ignored_over_capacity", "-0.1"),
              ErrorContains("parameter max_ignored_over_capacity: '-0.1' is not a decimal"));
  EXPECT_THAT(make("max_ignored_over_capacity", "0.1.2"),
              ErrorContains("max_ignored_over_capacity: '0.1.2' is not a decimal"));
  EXPECT_THAT(make("natural_termination_factor", "0.0000000001"),
              ErrorContains("natural_termination_factor: '0.0000000001' is not a decimal"));
  EXPECT_THAT(make("monitoring_interval_ms", "3s"),
              ErrorContains("parameter monitoring_interval_ms: '3s' is not an integer"));
  EXPECT_THAT(make("monitoring_interval_ms", "-1"),
              ErrorContains("monitoring_interval_ms: -1 is not in 0..1000000000000 ms"));
  EXPECT_THAT(make("natural_termination_factor", "0.5", "classic"),
              ErrorContains("parameter natural_termination_factor needs preemption=proportional"));
  EXPECT_THAT(make("monitoring_interval_ms", "10", "none"),
              ErrorContains("parameter monitoring_interval_ms needs preemption=proportional"));
  EXPECT_THAT(make_placement("capacity", {{"preemption", "yarn"}}, *f.description, &f.topo),
              ErrorContains("parameter preemption: 'yarn' is not one of "
                            "preemption=none|classic|fair|proportional (alias pcpp)"));
}

}  // namespace
}  // namespace hetsched::sim
