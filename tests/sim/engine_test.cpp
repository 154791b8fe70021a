// SPDX-License-Identifier: MIT
// The discrete-event simulator on small clusters with hand-computed outcomes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <hetsched/sim/engine.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/workload/synthetic.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;

std::shared_ptr<const cluster> small_cluster(std::size_t nodes, std::size_t gpus) {
  return hetsched::testing::a100_servers(nodes, gpus);
}
workload::trace_job job(std::string name, std::int64_t submit_s, std::int64_t duration_s,
                        std::uint32_t gpus, std::uint32_t tasks = 1) {
  return hetsched::testing::vc0_job(std::move(name), submit_s, duration_s, gpus, tasks);
}

sim_result run(const std::shared_ptr<const cluster>& c, const workload::trace& t,
               std::string_view order, std::string_view place, const sim_params& p = {},
               const policy_params& order_params = {}) {
  auto o = make_ordering(order, order_params);
  EXPECT_THAT(o, IsOk());
  auto pl = make_placement(place, {}, *c, nullptr);
  EXPECT_THAT(pl, IsOk());
  auto r = simulate(c, t, **o, **pl, p);
  EXPECT_THAT(r, IsOk());
  return std::move(*r);
}

TEST(SimEngine, FifoPackerGangWaitsForTwoWholeNodes) {
  const auto c = small_cluster(2, 4);
  const workload::trace t{job("j0", 0, 100, 4), job("j1", 0, 50, 4), job("j2", 10, 10, 4, 2),
                          job("j3", 5, 20, 1)};
  const sim_result r = run(c, t, "fifo", "packer");
  // j0 -> n0 and j1 -> n1 at 0; j3 takes a GPU of n1 at 50 (FIFO before j2, which needs both
  // nodes); j2 starts at 100 when j0 ends.
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  EXPECT_EQ(r.jobs[0].finish_ms, 100'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 50'000);
  EXPECT_EQ(r.jobs[3].first_start_ms, 50'000);
  EXPECT_EQ(r.jobs[3].finish_ms, 70'000);
  EXPECT_EQ(r.jobs[2].first_start_ms, 100'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 110'000);
  EXPECT_EQ(r.jobs[2].state, job_state::succeeded);
  EXPECT_EQ(r.end_ms, 110'000);
  EXPECT_EQ(r.counters.binds, 4u);
  // GPU-seconds held: 400 + 200 + 80 + 20 = 700.
  EXPECT_DOUBLE_EQ(r.allocated_gpu_ms, 700'000'000.0 / 1000.0);
}

TEST(SimEngine, SjfRunsTheShortJobFirst) {
  const auto c = small_cluster(1, 4);
  const workload::trace t{job("j0", 0, 100, 4), job("j1", 1, 50, 4), job("j2", 2, 10, 4)};
  const sim_result fifo = run(c, t, "fifo", "packer");
  // FIFO: j1 100..150, j2 150..160.
  EXPECT_EQ(fifo.jobs[1].finish_ms, 150'000);
  EXPECT_EQ(fifo.jobs[2].finish_ms, 160'000);
  const sim_result sjf = run(c, t, "sjf", "packer");
  // SJF: j2 100..110, j1 110..160.
  EXPECT_EQ(sjf.jobs[2].finish_ms, 110'000);
  EXPECT_EQ(sjf.jobs[1].finish_ms, 160'000);
}

TEST(SimEngine, RejectsJobsLargerThanTheCluster) {
  const auto c = small_cluster(2, 4);
  const workload::trace t{job("big", 0, 10, 4, 3), job("wide", 0, 10, 8), job("ok", 0, 10, 4)};
  const sim_result r = run(c, t, "fifo", "packer");
  EXPECT_TRUE(r.jobs[0].rejected);
  EXPECT_TRUE(r.jobs[1].rejected);
  EXPECT_EQ(r.jobs[2].state, job_state::succeeded);
  EXPECT_EQ(r.counters.rejected, 2u);
}

TEST(SimEngine, TiresiasPreemptsTheJobWithMoreAttainedService) {
  const auto c = small_cluster(1, 4);
  const workload::trace t{job("long", 0, 1000, 4), job("short", 30, 50, 4)};
  const sim_result r = run(c, t, "tiresias", "packer", {}, {{"thresholds", "100"}});
  // Round at 60 s: long has 240 GPU-s (queue 1), short 0 (queue 0): long is preempted, short runs
  // 60..110; long resumes at 110 with 940 s + 30 s preemption cost left.
  EXPECT_EQ(r.jobs[1].first_start_ms, 60'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 110'000);
  EXPECT_EQ(r.jobs[0].preemptions, 1u);
  EXPECT_EQ(r.jobs[0].finish_ms, 1'080'000);
  EXPECT_EQ(r.jobs[0].pending_ms, 50'000);
  EXPECT_EQ(r.counters.preemptions, 1u);
}

TEST(SimEngine, GandivaTimeSlicesSameSizeJobs) {
  const auto c = small_cluster(1, 4);
  const workload::trace t{job("a", 0, 1000, 4), job("b", 10, 100, 4)};
  const sim_result r = run(c, t, "fifo", "gandiva");
  // a 0..10, b 10..70, a 70..130, b 130..171 (40 s + 1 s resume), a 171..1103 (930 + 1 + 1).
  EXPECT_EQ(r.jobs[1].first_start_ms, 10'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 171'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 1'103'000);
  EXPECT_EQ(r.counters.suspensions, 3u);
  EXPECT_EQ(r.counters.resumes, 3u);
  EXPECT_EQ(r.jobs[0].suspensions, 2u);
}

TEST(SimEngine, GandivaTakesAJobOutOfTimeSlicingWhenGpusFreeUp) {
  const auto c = small_cluster(2, 4);
  const workload::trace t{job("a", 0, 1000, 4), job("c", 0, 100, 4), job("b", 10, 100, 4)};
  const sim_result r = run(c, t, "fifo", "gandiva");
  // a on n0, c on n1; b time-slices a on n0 at 10; swap at 70; c ends at 100; at the 130
  // rotation 4 GPUs are free, so b (60 s done) is preempted and requeued: it runs on n1 130..200
  // (40 s + 30 s preemption cost). a resumed at 70 with 990 + 1 s: ends at 1061.
  EXPECT_EQ(r.jobs[2].finish_ms, 200'000);
  EXPECT_EQ(r.jobs[2].preemptions, 1u);
  EXPECT_EQ(r.jobs[0].finish_ms, 1'061'000);
  EXPECT_EQ(r.counters.suspensions, 2u);
  EXPECT_EQ(r.counters.resumes, 1u);
}

TEST(SimEngine, FixedRoundsScheduleOnlyAtRoundBoundaries) {
  const auto c = small_cluster(1, 4);
  const workload::trace t{job("a", 10, 100, 2), job("b", 70, 30, 2)};
  sim_params p;
  p.round_ms = 60'000;
  const sim_result r = run(c, t, "fifo", "packer", p);
  // a waits for the round at 60 s, b for the one at 120 s.
  EXPECT_EQ(r.jobs[0].first_start_ms, 60'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 160'000);
  EXPECT_EQ(r.jobs[1].first_start_ms, 120'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 150'000);
  EXPECT_EQ(r.jobs[1].pending_ms, 50'000);
}

class counting_observer final : public sim_observer {
 public:
  void on_progress(std::uint64_t done, std::uint64_t total, std::int64_t now_ms) override {
    last_done = done;
    last_total = total;
    last_now = now_ms;
    ++calls;
  }
  std::uint64_t calls = 0;
  std::uint64_t last_done = 0;
  std::uint64_t last_total = 0;
  std::int64_t last_now = 0;
};

TEST(SimEngine, ReportsProgressToTheObserver) {
  const auto c = small_cluster(1, 4);
  const workload::trace t{job("a", 0, 10, 1), job("b", 0, 20, 1), job("c", 0, 30, 1)};
  auto o = make_ordering("fifo", {});
  auto pl = make_placement("packer", {}, *c, nullptr);
  counting_observer obs;
  obs.progress_every = 1;
  ASSERT_THAT(simulate(c, t, **o, **pl, {}, &obs), IsOk());
  EXPECT_EQ(obs.calls, 3u);
  EXPECT_EQ(obs.last_done, 3u);
  EXPECT_EQ(obs.last_total, 3u);
  EXPECT_EQ(obs.last_now, 30'000);
}

TEST(SimEngine, FailedAttemptsAreRetriedThenFail) {
  const auto c = small_cluster(1, 4);
  const workload::trace t{job("flaky", 0, 100, 2)};
  sim_params p;
  p.job_failure_probability = 0.999999;
  p.retry_limit = 2;
  const sim_result r = run(c, t, "fifo", "packer", p);
  EXPECT_EQ(r.jobs[0].state, job_state::failed);
  EXPECT_EQ(r.jobs[0].failures, 3u);
  EXPECT_EQ(r.counters.retries, 2u);
  EXPECT_EQ(r.counters.failures, 3u);
}

TEST(SimEngine, NodeFailuresFailJobsWhichRetryElsewhere) {
  const auto c = small_cluster(4, 8);
  workload::synthetic_params sp;
  sp.jobs = 300;
  sp.cluster_gpus = 32;
  sp.max_gpus = 8;
  sp.seed = 7;
  auto t = workload::synthesize(sp);
  ASSERT_THAT(t, IsOk());
  sim_params p;
  p.node_mtbf_hours = 200;
  p.node_repair_ms = 1'800'000;
  p.retry_limit = 100;
  const sim_result a = run(c, *t, "fifo", "packer", p);
  EXPECT_GT(a.counters.node_failures, 0u);
  EXPECT_GT(a.counters.retries, 0u);
  std::size_t succeeded = 0;
  for (const job_outcome& o : a.jobs) succeeded += o.state == job_state::succeeded;
  EXPECT_EQ(succeeded, 300u);
  const sim_result b = run(c, *t, "fifo", "packer", p);
  EXPECT_EQ(a.jobs, b.jobs);
  EXPECT_EQ(a.counters, b.counters);
}

TEST(SimEngine, EveryPolicyFinishesASyntheticWorkloadOnTheDemoCluster) {
  auto topo = make_builtin_cluster("demo");
  ASSERT_THAT(topo, IsOk());
  auto model = to_cluster(*topo);
  ASSERT_THAT(model, IsOk());
  const auto c = std::make_shared<const cluster>(std::move(*model));
  workload::synthetic_params sp;
  sp.jobs = 400;
  sp.cluster_gpus = c->device_count();
  sp.max_gpus = 32;
  const auto t = workload::synthesize(sp);
  ASSERT_THAT(t, IsOk());
  for (const std::string_view order : {"fifo", "sjf", "tiresias", "drf"}) {
    for (const std::string_view place : {"packer", "gandiva"}) {
      auto o = make_ordering(order, {});
      ASSERT_THAT(o, IsOk());
      auto pl = make_placement(place, {}, *c, &*topo);
      ASSERT_THAT(pl, IsOk());
      auto r = simulate(c, *t, **o, **pl, {});
      ASSERT_THAT(r, IsOk()) << order << "+" << place;
      std::size_t succeeded = 0;
      for (const job_outcome& out : r->jobs) succeeded += out.state == job_state::succeeded;
      EXPECT_EQ(succeeded, 400u) << order << "+" << place;
    }
  }
}

TEST(SimEngine, BadTraceJobNamesTheField) {
  const auto c = small_cluster(1, 4);
  workload::trace t{job("ok", 0, 10, 1), job("bad", 0, 10, 1)};
  t[1].duration_ms = -5;
  auto o = make_ordering("fifo", {});
  auto pl = make_placement("packer", {}, *c, nullptr);
  auto r = simulate(c, t, **o, **pl, {});
  EXPECT_THAT(r, ErrorContains("trace job 1 (bad): field duration_ms is -5"));
  t[1].duration_ms = 5;
  t[1].gpu_milli_per_task = 1500;
  r = simulate(c, t, **o, **pl, {});
  EXPECT_THAT(r, ErrorContains("field gpu_milli_per_task is 1500"));
}

TEST(SimEngine, DrfTenantWeightStartsTheWeightedTenantEarlier) {
  // Six GPUs; at 0, tenant b (index 0, wins ties) submits six one-GPU jobs of 100 s, then
  // tenant a six more.
  const auto c = small_cluster(1, 6);
  workload::trace t;
  for (int i = 0; i < 6; ++i)
    t.push_back(hetsched::testing::gpu_job(fmt::format("b{}", i), "b", 0, 100, 1));
  for (int i = 0; i < 6; ++i)
    t.push_back(hetsched::testing::gpu_job(fmt::format("a{}", i), "a", 0, 100, 1));
  const auto starts = [](const sim_result& r, std::size_t from) {
    std::vector<std::int64_t> out;
    for (std::size_t j = from; j < from + 6; ++j) out.push_back(r.jobs[j].first_start_ms / 1000);
    return out;
  };
  // Equal weights: b, a, b, a, b, a take the six GPUs at 0; the rest start at 100.
  const sim_result equal = run(c, t, "drf", "packer");
  EXPECT_EQ(starts(equal, 0), (std::vector<std::int64_t>{0, 0, 0, 100, 100, 100}));
  EXPECT_EQ(starts(equal, 6), (std::vector<std::int64_t>{0, 0, 0, 100, 100, 100}));
  // a weighs 2 (shares b = n/6, a = n/12): b, a, a, b, a, a at 0, so a gets four GPUs, b two.
  const sim_result weighted = run(c, t, "drf", "packer", {}, {{"weights", "a=2"}});
  EXPECT_EQ(starts(weighted, 0), (std::vector<std::int64_t>{0, 0, 100, 100, 100, 100}));
  EXPECT_EQ(starts(weighted, 6), (std::vector<std::int64_t>{0, 0, 0, 0, 100, 100}));
  EXPECT_EQ(weighted.tenants, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(weighted.end_ms, 200'000);
  // Tenant a's jobs wait 200 s in all instead of 300; b's 400 instead of 300.
  const auto waited = [](const sim_result& r, std::size_t from) {
    std::int64_t sum = 0;
    for (std::size_t j = from; j < from + 6; ++j) sum += r.jobs[j].pending_ms;
    return sum;
  };
  EXPECT_EQ(waited(equal, 6), 300'000);
  EXPECT_EQ(waited(weighted, 6), 200'000);
  EXPECT_EQ(waited(weighted, 0), 400'000);
}

TEST(SimEngine, FractionalJobsShareOneGpu) {
  const auto c = small_cluster(1, 1);
  workload::trace t{job("a", 0, 100, 1), job("b", 0, 100, 1)};
  t[0].gpu_milli_per_task = 500;
  t[1].gpu_milli_per_task = 400;
  const sim_result r = run(c, t, "fifo", "packer");
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  EXPECT_EQ(r.jobs[1].first_start_ms, 0);
  EXPECT_EQ(r.jobs[1].finish_ms, 100'000);
}

}  // namespace
}  // namespace hetsched::sim
