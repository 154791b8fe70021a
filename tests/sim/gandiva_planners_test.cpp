// SPDX-License-Identifier: MIT
// Gandiva's introspective planners in the simulator, each switched on by a gandiva parameter:
// time-slicing by plan_time_slices (slicing=planner), grow-shrink (grow=1) and packing (pack=1).
// Each test runs a small trace with the planner on and off and pins what differs.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;

workload::trace_job job(std::string name, std::int64_t submit_s, std::int64_t duration_s,
                        std::uint32_t gpus, std::uint32_t tasks = 1) {
  return hetsched::testing::vc0_job(std::move(name), submit_s, duration_s, gpus, tasks);
}

/// A one-task job of `milli` milli-GPU on one device.
workload::trace_job fraction(std::string name, std::int64_t submit_s, std::int64_t duration_s,
                             std::int64_t milli) {
  workload::trace_job j = job(std::move(name), submit_s, duration_s, 1);
  j.gpu_milli_per_task = milli;
  return j;
}

sim_result run(const std::shared_ptr<const cluster>& c, const workload::trace& t,
               std::string_view spec_text, const sim_params& p = {}) {
  auto spec = parse_policy_spec(spec_text);
  EXPECT_THAT(spec, IsOk());
  auto inst = make_policy(*spec, *c, nullptr);
  EXPECT_THAT(inst, IsOk());
  auto r = simulate(c, t, *inst->order, *inst->place, p);
  EXPECT_THAT(r, IsOk());
  return std::move(*r);
}

// One 1-GPU server. a (300 s) runs from 0; b (100 s) arrives at 100 s and Gandiva's reactive
// mode time-slices it onto a's GPU (a suspended, b bound).
workload::trace slicing_trace() { return {job("a", 0, 300, 1), job("b", 100, 100, 1)}; }

TEST(SimGandivaPlanners, TimeSlicingPlannerRotatesByLeastAttainedTime) {
  const auto c = hetsched::testing::a100_servers(1, 1);
  const sim_result r = run(c, slicing_trace(), "fifo+gandiva:slicing=planner");
  // plan_time_slices at b's quantum end (160 s): b attained 60 s < a's 100 s, so b keeps the
  // GPU (no switch) and ends at 200 s; its completion frees the GPU and the next plan resumes a
  // (1 s resume cost): a's 200 s left + 1 s end it at 401 s.
  EXPECT_EQ(r.jobs[1].first_start_ms, 100'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 200'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 401'000);
  EXPECT_EQ(r.counters.suspensions, 1u);
  EXPECT_EQ(r.counters.resumes, 1u);
  EXPECT_EQ(r.jobs[0].suspensions, 1u);
  EXPECT_EQ(r.jobs[1].suspensions, 0u);

  // The engine's own rotation (the default) swaps the pair every 60 s regardless of attained
  // time: b is suspended at 160 s and a at 220 s, so b ends later.
  const sim_result off = run(c, slicing_trace(), "fifo+gandiva");
  EXPECT_EQ(off.jobs[1].finish_ms, 261'000);
  EXPECT_EQ(off.jobs[0].finish_ms, 403'000);
  EXPECT_EQ(off.counters.suspensions, 3u);
  EXPECT_EQ(off.counters.resumes, 3u);

  // A longer quantum: b is never cut short (it needs 100 s < 150 s), same result as above.
  const sim_result longer = run(c, slicing_trace(), "fifo+gandiva:slicing=planner,quantum_s=150");
  EXPECT_EQ(longer.jobs[1].finish_ms, 200'000);
  EXPECT_EQ(longer.counters.suspensions, 1u);
}

TEST(SimGandivaPlanners, TimeSlicingPlannerKeepsTiesRunning) {
  // Two 1-GPU jobs of 120 s on one GPU, both at 0 s: a is bound, then b is time-sliced in (a
  // suspended with 0 s attained). Quanta of 60 s, least attained time first:
  //   0-60 b; 60 a resumes (its 120 s + 1 s cost); 120 a and b have 60 s each: the tie keeps
  //   the running a (no switch); 180 a (120 s) yields to b (60 s) with 1 s of work left;
  //   b resumes, 61 s left, ends at 241 s; a resumes at 241 s, 2 s left, ends at 243 s.
  const auto c = hetsched::testing::a100_servers(1, 1);
  const workload::trace t{job("a", 0, 120, 1), job("b", 0, 120, 1)};
  const sim_result r = run(c, t, "fifo+gandiva:slicing=planner");
  EXPECT_EQ(r.jobs[0].finish_ms, 243'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 241'000);
  EXPECT_EQ(r.jobs[0].suspensions, 2u);
  EXPECT_EQ(r.jobs[1].suspensions, 1u);
  EXPECT_EQ(r.counters.resumes, 3u);

  // The engine's rotation swaps the pair every 60 s (at 60, 120, 180 and 240 s).
  const sim_result off = run(c, t, "fifo+gandiva");
  EXPECT_EQ(off.jobs[0].finish_ms, 245'000);
  EXPECT_EQ(off.jobs[1].finish_ms, 242'000);
  EXPECT_EQ(off.counters.suspensions, 5u);
}

// One 4-GPU server. e is elastic (4 tasks of 1 GPU, 400 s at full size) and takes the server;
// w (2 GPUs, 100 s) arrives at 100 s.
workload::trace elastic_trace() { return {job("e", 0, 400, 1, 4), job("w", 100, 100, 2)}; }

TEST(SimGandivaPlanners, GrowShrinkShrinksForAWaitingJobAndGrowsBack) {
  const auto c = hetsched::testing::a100_servers(1, 4);
  sim_params p;
  p.elastic = true;
  const sim_result r = run(c, elastic_trace(), "fifo+gandiva:grow=1", p);
  // At 100 s e gives back tasks 3 and 2 and w starts on them; e runs at half speed until w ends
  // at 200 s, then grows back to 4 tasks: 100 + 50 s of work done by 200 s, 250 s left: 450 s.
  EXPECT_EQ(r.jobs[1].first_start_ms, 100'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 200'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 450'000);
  EXPECT_EQ(r.counters.shrinks, 1u);
  EXPECT_EQ(r.counters.grows, 1u);
  // GPU-seconds: e 4 x 100 + 2 x 100 + 4 x 250, w 2 x 100.
  EXPECT_DOUBLE_EQ(r.allocated_gpu_ms, 1'800'000.0);

  // Without grow-shrink w waits for e to end.
  const sim_result off = run(c, elastic_trace(), "fifo+gandiva", p);
  EXPECT_EQ(off.jobs[1].first_start_ms, 400'000);
  EXPECT_EQ(off.jobs[1].finish_ms, 500'000);
  EXPECT_EQ(off.jobs[0].finish_ms, 400'000);
  EXPECT_EQ(off.counters.shrinks, 0u);
  EXPECT_EQ(off.counters.grows, 0u);
  // Without elastic jobs (sim_params::elastic false) e is a gang and nothing shrinks.
  const sim_result gang = run(c, elastic_trace(), "fifo+gandiva:grow=1");
  EXPECT_EQ(gang.jobs[1].first_start_ms, 400'000);
  EXPECT_EQ(gang.counters.shrinks, 0u);
}

// One 2-GPU server, oversubscription off. a (600 milli, 100 s) and b (600 milli, 1000 s) take
// one GPU each; c (300 milli, 1000 s, at 1 s) shares a's GPU. When a ends, c and b hold one GPU
// each; w (1 whole GPU, 100 s) arrives at 150 s and finds no free GPU.
workload::trace packing_trace() {
  return {fraction("a", 0, 100, 600), fraction("b", 0, 1000, 600), fraction("c", 1, 1000, 300),
          job("w", 150, 100, 1)};
}

TEST(SimGandivaPlanners, PackingFreesAGpuForAWaitingJob) {
  const auto c = hetsched::testing::a100_servers(1, 2);
  const sim_result r = run(c, packing_trace(), "fifo+gandiva:oversubscribe=0,pack=1");
  // Under overload the packing planner moves c (least utilized, 300) onto b's GPU (600 + 300
  // fits), which frees a GPU for w at 150 s. c pays the 30 s migration cost: 1 + 1000 + 30.
  EXPECT_EQ(r.jobs[3].first_start_ms, 150'000);
  EXPECT_EQ(r.jobs[3].finish_ms, 250'000);
  EXPECT_EQ(r.jobs[2].migrations, 1u);
  EXPECT_EQ(r.jobs[2].finish_ms, 1'031'000);
  EXPECT_EQ(r.counters.migrations, 1u);

  // Without packing w waits until b ends at 1000 s.
  const sim_result off = run(c, packing_trace(), "fifo+gandiva:oversubscribe=0");
  EXPECT_EQ(off.jobs[3].first_start_ms, 1'000'000);
  EXPECT_EQ(off.jobs[2].finish_ms, 1'001'000);
  EXPECT_EQ(off.counters.migrations, 0u);
}

TEST(SimGandivaPlanners, ParametersAreChecked) {
  const auto c = hetsched::testing::a100_servers(1, 1);
  const auto make = [&](std::string_view text) {
    auto spec = parse_policy_spec(text);
    EXPECT_THAT(spec, IsOk());
    return make_policy(*spec, *c, nullptr);
  };
  EXPECT_THAT(make("fifo+gandiva:slicing=planner,quantum_s=30,pack=1,grow=true"), IsOk());
  EXPECT_THAT(make("fifo+gandiva:slicing=sometimes"), ErrorContains("slicing=sometimes"));
  EXPECT_THAT(make("fifo+gandiva:slicing=planner,quantum_s=0"), ErrorContains("quantum_s"));
  EXPECT_THAT(make("fifo+gandiva:quantum_s=30"), ErrorContains("quantum_s needs slicing"));
  EXPECT_THAT(make("fifo+gandiva:pack=2"), ErrorContains("pack"));
  EXPECT_THAT(make("fifo+gandiva:grow=yes"), ErrorContains("grow"));
}

}  // namespace
}  // namespace hetsched::sim
