// SPDX-License-Identifier: MIT
// "Preempt now, start later" in the simulator: capacity queues reclaiming borrowed quota (Kueue
// classic and fair-sharing preemption) and HiveD guaranteed jobs preempting opportunistic ones,
// with hand-computed victims, preemption, eviction and restart times and JCTs.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;
using hetsched::testing::simulate_spec;

workload::trace_job job(std::string name, std::string tenant, std::int64_t submit_s,
                        std::int64_t duration_s, std::uint32_t gpus, std::int32_t priority = 0) {
  return hetsched::testing::gpu_job(std::move(name), std::move(tenant), submit_s, duration_s, gpus,
                                    priority);
}

using fixture = hetsched::testing::sim_fixture;
using hetsched::testing::two_dgx;

std::int64_t jct(const job_outcome& o) { return o.finish_ms - o.submit_ms; }

// Quotas 8/8. A's a0 and a1 start at 0 (a1 borrows B's idle quota); B's b0 arrives at 5.
const workload::trace reclaim{job("a0", "A", 0, 100, 8), job("a1", "A", 0, 100, 8),
                              job("b0", "B", 5, 50, 8)};

TEST(CapacityPreemption, WithoutPreemptionTheOwnerWaitsForTheBorrower) {
  const sim_result r = simulate_spec(two_dgx(), reclaim, "fifo+capacity:quota=8/8");
  EXPECT_EQ(r.counters.preemptions, 0u);
  EXPECT_EQ(jct(r.jobs[0]), 100'000);
  EXPECT_EQ(jct(r.jobs[1]), 100'000);
  EXPECT_EQ(r.jobs[2].first_start_ms, 100'000);
  EXPECT_EQ(jct(r.jobs[2]), 145'000);
}

TEST(CapacityPreemption, ClassicReclaimsBorrowedQuotaFromTheLatestAdmittedBorrower) {
  const sim_result r =
      simulate_spec(two_dgx(), reclaim, "fifo+capacity:quota=8/8,preemption=classic");
  // At 5 b0 is within B's nominal quota but the cohort is full: Kueue's reclaimWithinCohort picks
  // A's most recently admitted workload, a1 (removing it brings A back within nominal). a1 stops
  // at 5 (95 s left) and keeps its GPUs for the 30 s preemption delay; b0 starts at 35 on them.
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 35'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 85'000);
  EXPECT_EQ(jct(r.jobs[2]), 80'000);
  // a1 is requeued at 35; B's reservation keeps it from borrowing the GPUs back, so it restarts
  // when b0 ends (85) with 95 s + 30 s preemption cost: 85 + 125 = 210.
  EXPECT_EQ(r.jobs[1].first_start_ms, 0);
  EXPECT_EQ(r.jobs[1].pending_ms, 50'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 210'000);
  EXPECT_EQ(jct(r.jobs[0]), 100'000);
  EXPECT_EQ(r.jobs[1].state, job_state::succeeded);
}

TEST(CapacityPreemption, FairSharingReclaimsTheSameVictim) {
  const sim_result r = simulate_spec(two_dgx(), reclaim, "fifo+capacity:quota=8/8,preemption=fair");
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 35'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 210'000);
}

TEST(CapacityPreemption, TheDelayAndCostAreThoseOfTheEngine) {
  sim_params p;
  p.preemption_delay_ms = 0;
  p.preemption_cost_ms = 10'000;
  const sim_result r =
      simulate_spec(two_dgx(), reclaim, "fifo+capacity:quota=8/8,preemption=classic", p);
  EXPECT_EQ(r.jobs[2].first_start_ms, 5'000);  // the victim terminates at once
  EXPECT_EQ(r.jobs[2].finish_ms, 55'000);
  EXPECT_EQ(r.jobs[1].pending_ms, 50'000);  // requeued at 5, restarts at 55
  EXPECT_EQ(r.jobs[1].finish_ms, 160'000);  // 55 + 95 + 10
}

TEST(CapacityPreemption, VictimsInFlightAreNotPickedTwice) {
  // A runs four 4-GPU jobs (a0, a1 on n0, a2, a3 on n1; 8 GPUs borrowed). b0 needs 8: the two
  // latest admitted, a3 and a2, are its victims. b1 (B, 8 GPUs) arrives at 10 while they are in
  // flight: that pass retries b0, which holds a reservation and plans nothing new (a0 and a1,
  // the only other candidates, are never preempted), and b1 would have to borrow.
  const workload::trace t{job("a0", "A", 0, 100, 4), job("a1", "A", 0, 100, 4),
                          job("a2", "A", 0, 100, 4), job("a3", "A", 0, 100, 4),
                          job("b0", "B", 5, 50, 8),  job("b1", "B", 10, 50, 8)};
  const sim_result r = simulate_spec(two_dgx(), t, "fifo+capacity:quota=8/8,preemption=classic");
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
  EXPECT_EQ(r.jobs[1].preemptions, 0u);
  EXPECT_EQ(r.jobs[4].first_start_ms, 35'000);
  EXPECT_EQ(r.jobs[4].finish_ms, 85'000);
  // At 85 a2 and a3 borrow again (b0 is done), and b1, now within B's quota, reclaims them at
  // once: a second preemption each, for another preemptor, after the first ones terminated. b1
  // holds a reservation and binds as soon as there is room: n0 at 100 (a0 and a1 end), before
  // its victims terminate at 115; a2 and a3 then restart on n1 with 95 s + 2 x 30 s left.
  EXPECT_EQ(r.counters.preemptions, 4u);
  EXPECT_EQ(r.jobs[2].preemptions, 2u);
  EXPECT_EQ(r.jobs[3].preemptions, 2u);
  EXPECT_EQ(r.jobs[5].first_start_ms, 100'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 270'000);
  EXPECT_EQ(r.jobs[3].finish_ms, 270'000);
}

// Quotas 8/8. a1 is opportunistic (priority -1) and runs on B's idle cell; b0 (guaranteed)
// arrives at 5; c0 (A, guaranteed) arrives at 20 and causes a pass while a1 is in flight.
const workload::trace opportunistic{job("a0", "A", 0, 100, 8), job("a1", "A", 0, 100, 8, -1),
                                    job("b0", "B", 5, 50, 8), job("c0", "A", 20, 100, 8)};

// Two DGX-1 V100 servers in one rack (one chain of one rack cell).
fixture one_rack() {
  fixture f{
      cluster_builder("c").add_nodes(node_template::dgx1_v100, 2, "n").racks(2).build().value(),
      nullptr};
  f.description = std::make_shared<const cluster>(to_cluster(f.topo).value());
  return f;
}

TEST(HivedPreemption, GuaranteedJobPreemptsAnOpportunisticOne) {
  const sim_result r = simulate_spec(one_rack(), opportunistic, "fifo+hived:quota=8/8");
  // HiveD reserves B's cell for b0 at 5 and names a1's pods as victims; a1 is evicted at 35 and
  // b0 binds to the reserved cell. At 20 b0 is tried again: HiveD returns the same victim, in
  // flight, and nothing new is preempted.
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 35'000);
  EXPECT_EQ(jct(r.jobs[2]), 80'000);
  // a1 restarts on B's idle cell when b0 ends: 85 + 95 + 30 = 210.
  EXPECT_EQ(r.jobs[1].pending_ms, 50'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 210'000);
  // c0 waits for A's only cell (a0, same priority: no victim).
  EXPECT_EQ(r.jobs[3].first_start_ms, 100'000);

  // With one rack cell per server, A's VC cell is unbound when a0 ends at 100 and HiveD's free
  // list offers n1's cell (freed at 85, running a1 opportunistically) before n0's: c0 preempts a1
  // again, starts at 130, and a1 restarts on n0 with 95 - 15 + 2 x 30 = 140 s left.
  const sim_result s = simulate_spec(two_dgx(), opportunistic, "fifo+hived:quota=8/8");
  EXPECT_EQ(s.counters.preemptions, 2u);
  EXPECT_EQ(s.jobs[1].preemptions, 2u);
  EXPECT_EQ(s.jobs[3].first_start_ms, 130'000);
  EXPECT_EQ(s.jobs[1].finish_ms, 270'000);
}

TEST(HivedPreemption, WithoutPreemptionTheGuaranteedJobWaits) {
  const sim_result r =
      simulate_spec(one_rack(), opportunistic, "fifo+hived:quota=8/8,preemption=0");
  EXPECT_EQ(r.counters.preemptions, 0u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 100'000);
  EXPECT_EQ(jct(r.jobs[2]), 145'000);
  EXPECT_EQ(jct(r.jobs[1]), 100'000);
}

TEST(HivedPreemption, NonPreemptibleVictimsCancelThePreemption) {
  workload::trace t = opportunistic;
  t[1].preemptible = false;
  const sim_result r = simulate_spec(one_rack(), t, "fifo+hived:quota=8/8");
  EXPECT_EQ(r.counters.preemptions, 0u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 100'000);
}

// A stateless placement for the engine's own bookkeeping: the packer, and for a priority-1 job
// that does not fit, the running priority-0 job with the highest id as its victim (it does not
// track victims in flight itself).
class last_victim {
 public:
  explicit last_victim(const cluster& c) : packer_(c) {}
  result<decision> place(const cluster_state& s, job_id j) {
    auto d = packer_.place(s, j);
    if (!d || !d->binds.empty() || s.find_job(j)->spec.priority < 1) return d;
    for (auto it = s.jobs().rbegin(); it != s.jobs().rend(); ++it) {
      if (it->second.spec.priority == 0 && it->second.status.state == job_state::running) {
        d->preemptions.push_back(preemption{it->first, "test"});
        break;
      }
    }
    return d;
  }
  void commit(const cluster_state& s, const decision& d) { packer_.commit(s, d); }
  void release(const cluster_state& s, job_id j) { packer_.release(s, j); }
  void rebuild(const cluster_state& s) { packer_.rebuild(s); }

 private:
  indexed_packer packer_;
};

TEST(EnginePreemption, AJobWithVictimsInFlightGetsNoNewOnes) {
  const fixture f = two_dgx();
  // x0 (8 GPUs) on n0, x1 (4) on n1; h0 (priority 1, 8 GPUs) arrives at 5 and gets x1 as its
  // victim. f0 (4 GPUs, 10 s) arrives at 10 and, shortest first, takes n1's other half; h0 is
  // then retried and the placement names f0, but h0 still has x1 in flight: f0 is left alone.
  workload::trace t{job("x0", "T", 0, 100, 8), job("x1", "T", 0, 100, 4),
                    job("h0", "T", 5, 50, 8, 1), job("f0", "T", 10, 10, 4)};
  auto o = make_ordering("sjf", {});
  ASSERT_THAT(o, IsOk());
  placement_adapter<last_victim> place(last_victim(*f.description), "last_victim",
                                       placement_traits{.preempts = true});
  auto r = simulate(f.description, t, **o, place, sim_params{});
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->counters.preemptions, 1u);
  EXPECT_EQ(r->jobs[1].preemptions, 1u);
  EXPECT_EQ(r->jobs[3].preemptions, 0u);
  EXPECT_EQ(r->jobs[3].first_start_ms, 10'000);
  EXPECT_EQ(r->jobs[3].finish_ms, 20'000);
  // x1 terminates at 35: h0 takes n1 (35..85); x1 restarts at 85 with 95 + 30 s left.
  EXPECT_EQ(r->jobs[2].first_start_ms, 35'000);
  EXPECT_EQ(r->jobs[2].finish_ms, 85'000);
  EXPECT_EQ(r->jobs[1].finish_ms, 210'000);
}

TEST(PreemptionParameters, TraitsAndErrors) {
  const fixture f = two_dgx();
  auto none = make_placement("capacity", {}, *f.description, &f.topo);
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE((*none)->per_tenant());
  EXPECT_FALSE((*none)->preempts());
  auto classic = make_placement("capacity", {{"preemption", "classic"}}, *f.description, &f.topo);
  ASSERT_THAT(classic, IsOk());
  EXPECT_TRUE((*classic)->preempts());
  EXPECT_THAT(make_placement("capacity", {{"preemption", "sometimes"}}, *f.description, &f.topo),
              ErrorContains("preemption=none|classic|fair"));
  auto hived = make_placement("hived", {}, *f.description, &f.topo);
  ASSERT_THAT(hived, IsOk());
  EXPECT_TRUE((*hived)->preempts());
  auto hived_off = make_placement("hived", {{"preemption", "0"}}, *f.description, &f.topo);
  ASSERT_THAT(hived_off, IsOk());
  EXPECT_FALSE((*hived_off)->preempts());
  auto packer = make_placement("packer", {}, *f.description, &f.topo);
  ASSERT_THAT(packer, IsOk());
  EXPECT_FALSE((*packer)->per_tenant());
  EXPECT_FALSE((*packer)->preempts());
  // Under Tiresias HiveD's preemption is off unless asked for; placement preemption may be
  // combined with it (tiresias_preemption_test.cpp).
  auto tiresias_hived = make_policy(*parse_policy_spec("tiresias+hived"), *f.description, &f.topo);
  ASSERT_THAT(tiresias_hived, IsOk());
  EXPECT_FALSE(tiresias_hived->place->preempts());
  EXPECT_THAT(make_policy(*parse_policy_spec("tiresias+capacity:preemption=classic"),
                          *f.description, &f.topo),
              IsOk());
  sim_params p;
  p.preemption_delay_ms = -1;
  auto o = make_ordering("fifo", {});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(simulate(f.description, reclaim, **o, **packer, p),
              ErrorContains("preemption_delay_ms"));
}

}  // namespace
}  // namespace hetsched::sim
