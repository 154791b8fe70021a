// SPDX-License-Identifier: MIT
// FGD fragmentation of simulated clusters: a trace's target workload, an idle and a partly down
// cluster, and the recorder's series over a run, with hand-computed amounts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/metrics/fragmentation.hpp>
#include <hetsched/sim/fragmentation_recorder.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::metrics {
namespace {

using sim::fragmentation_recorder;
using sim::trace_fgd_tasks;
using sim::trace_fgd_workload;
using testing::gpu_job;
using testing::IsOk;

TEST(Fragmentation, TraceTasksAndTargetWorkload) {
  workload::trace trace{gpu_job("a", "t", 0, 10, 4), gpu_job("b", "t", 0, 10, 4),
                        gpu_job("c", "t", 0, 10, 1)};
  trace[2].gpu_milli_per_task = 500;
  trace[2].cpu_milli_per_task = 2000;
  trace[2].gpu_type = "T4";
  trace[0].tasks = 2;
  const std::vector<fgd_task> tasks = trace_fgd_tasks(trace);
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[0].num_gpu, 4u);
  EXPECT_EQ(tasks[0].gpu_milli, 1000);
  EXPECT_EQ(tasks[3].num_gpu, 1u);
  EXPECT_EQ(tasks[3].gpu_milli, 500);
  EXPECT_EQ(tasks[3].cpu_milli, 2000);
  EXPECT_EQ(tasks[3].gpu_spec, "T4");
  auto w = trace_fgd_workload(trace);
  ASSERT_THAT(w, IsOk());
  // Classes by count: 3 tasks of 4 GPUs, then 1 sharing task (95% needs both).
  ASSERT_EQ(w->classes.size(), 2u);
  EXPECT_EQ(w->classes[0].num_gpu, 4u);
  EXPECT_DOUBLE_EQ(w->weights[0], 0.75);
  EXPECT_THAT(trace_fgd_workload({}), testing::HasErrc(errc::invalid_argument));
}

TEST(Fragmentation, IdleAndDownNodes) {
  const auto f = testing::two_dgx();
  // Only 12-GPU tasks: no 8-GPU node can host one, every idle GPU is fragment.
  auto w = trace_fgd_workload({gpu_job("big", "t", 0, 10, 12)});
  ASSERT_THAT(w, IsOk());
  cluster_state state(f.description);
  frag_breakdown b = state_fragmentation(state, *w);
  EXPECT_DOUBLE_EQ(b.fragment(), 16000);
  EXPECT_DOUBLE_EQ(b.idle(), 16000);
  ASSERT_THAT(state.set_node_health(node_id(1), health::unhealthy), IsOk());
  b = state_fragmentation(state, *w);
  EXPECT_DOUBLE_EQ(b.fragment(), 8000);
  // 4-GPU tasks fit an idle node: nothing is fragment.
  auto small = trace_fgd_workload({gpu_job("s", "t", 0, 10, 4)});
  ASSERT_THAT(small, IsOk());
  EXPECT_DOUBLE_EQ(state_fragmentation(state, *small).fragment(), 0);
  EXPECT_DOUBLE_EQ(state_fragmentation(state, *small).idle(), 8000);
}

TEST(Fragmentation, RecorderFollowsTheSeries) {
  const auto f = testing::two_dgx();
  // A 6-GPU and a 4-GPU job on separate nodes leave 2 and 4 GPUs free. Classes {6, 4} weigh
  // 1/2 each: the 2 free GPUs fit neither (2000), the 4 free fit only the 4-GPU class (half of
  // 4000); F = 4000 milli of 6000 idle.
  const workload::trace trace{gpu_job("six", "t", 0, 1000, 6), gpu_job("four", "t", 0, 1000, 4)};
  auto w = trace_fgd_workload(trace);
  ASSERT_THAT(w, IsOk());
  auto spec = parse_policy_spec("fifo+packer");
  ASSERT_THAT(spec, IsOk());
  auto inst = make_policy(*spec, *f.description, &f.topo);
  ASSERT_THAT(inst, IsOk());
  fragmentation_recorder rec(*w);
  sim::sim_params params;
  params.sample_ms = 500'000;
  auto r = sim::simulate(f.description, trace, *inst->order, *inst->place, params, &rec);
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(rec.samples().size(), r->series.size());
  ASSERT_EQ(r->series.size(), 3u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(rec.samples()[k].time_ms, r->series[k].time_ms);
    EXPECT_DOUBLE_EQ(rec.samples()[k].fragmented_milli_gpu, 4000);
    EXPECT_DOUBLE_EQ(rec.samples()[k].idle_milli_gpu, 6000);
    EXPECT_DOUBLE_EQ(rec.samples()[k].ratio_pct(), 100.0 * 4000 / 6000);
    EXPECT_EQ(r->series[k].busy_milli_gpu, 10'000);
    EXPECT_EQ(r->series[k].allocated_milli_gpu, 10'000);
    // By bucket: the 2 free GPUs lack GPU for both classes (Q2, 2 x 1000); the 4 free lack GPU
    // for the 6-GPU class (Q2, 2000) and satisfy the 4-GPU class (Q3, 2000).
    const frag_breakdown& b = rec.samples()[k].breakdown;
    EXPECT_DOUBLE_EQ(b.milli[static_cast<std::size_t>(frag_bucket::q2_lack_gpu)], 4000);
    EXPECT_DOUBLE_EQ(b.milli[static_cast<std::size_t>(frag_bucket::q3_satisfied)], 2000);
    EXPECT_DOUBLE_EQ(b.milli[static_cast<std::size_t>(frag_bucket::q1_lack_both)], 0);
    EXPECT_DOUBLE_EQ(b.milli[static_cast<std::size_t>(frag_bucket::q4_lack_cpu)], 0);
    EXPECT_DOUBLE_EQ(b.milli[static_cast<std::size_t>(frag_bucket::no_access)], 0);
    EXPECT_DOUBLE_EQ(b.fragment(), 4000);
    EXPECT_DOUBLE_EQ(b.idle(), 6000);
  }
  // At the end everything is idle and both classes fit.
  EXPECT_EQ(rec.samples()[2].time_ms, 1'000'000);
  EXPECT_DOUBLE_EQ(rec.samples()[2].fragmented_milli_gpu, 0);
  EXPECT_DOUBLE_EQ(rec.samples()[2].idle_milli_gpu, 16000);
  EXPECT_DOUBLE_EQ(
      rec.samples()[2].breakdown.milli[static_cast<std::size_t>(frag_bucket::q3_satisfied)], 16000);
  EXPECT_DOUBLE_EQ(rec.samples()[2].breakdown.fragment(), 0);
  EXPECT_EQ(r->series[2].busy_milli_gpu, 0);
  // Samples compare bucket by bucket: the busy start differs from the idle end.
  EXPECT_EQ(rec.samples()[2], rec.samples()[2]);
  EXPECT_NE(rec.samples()[0].breakdown, rec.samples()[2].breakdown);
}

TEST(Fragmentation, RecorderBreakdownOfAnIdleNodeIsReused) {
  const auto f = testing::two_dgx();
  // One 6-GPU job on n0; target classes {6 GPUs, 1/2 GPU of a T4}: n0's 2 free V100s lack GPU
  // for the 6-GPU class (Q2, 1000) and are not a T4 (NoAccess, 1000); idle n1 satisfies the
  // 6-GPU class (Q3, 4000) and is NoAccess for the T4 class (4000). Every sample until the
  // job ends reuses n1's breakdown.
  workload::trace trace{gpu_job("six", "t", 0, 1000, 6), gpu_job("t4", "t", 0, 1000, 1)};
  trace[1].gpu_milli_per_task = 500;
  trace[1].gpu_type = "T4";
  auto w = trace_fgd_workload(trace);
  ASSERT_THAT(w, IsOk());
  auto spec = parse_policy_spec("fifo+packer");
  ASSERT_THAT(spec, IsOk());
  auto inst = make_policy(*spec, *f.description, &f.topo);
  ASSERT_THAT(inst, IsOk());
  fragmentation_recorder rec(*w);
  sim::sim_params params;
  params.sample_ms = 250'000;
  const workload::trace run_trace{trace[0]};
  auto r = sim::simulate(f.description, run_trace, *inst->order, *inst->place, params, &rec);
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(rec.samples().size(), 5u);
  const auto bucket = [&](std::size_t k, frag_bucket b) {
    return rec.samples()[k].breakdown.milli[static_cast<std::size_t>(b)];
  };
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(bucket(k, frag_bucket::q2_lack_gpu), 1000) << k;
    EXPECT_DOUBLE_EQ(bucket(k, frag_bucket::q3_satisfied), 4000) << k;
    EXPECT_DOUBLE_EQ(bucket(k, frag_bucket::no_access), 5000) << k;
    EXPECT_DOUBLE_EQ(bucket(k, frag_bucket::q1_lack_both), 0) << k;
    EXPECT_DOUBLE_EQ(rec.samples()[k].fragmented_milli_gpu, 6000) << k;
    EXPECT_DOUBLE_EQ(rec.samples()[k].breakdown.idle(), 10000) << k;
  }
  // All idle: each node 8000 satisfied (6-GPU class) + 8000 no access (T4 class), halved.
  EXPECT_DOUBLE_EQ(bucket(4, frag_bucket::q3_satisfied), 8000);
  EXPECT_DOUBLE_EQ(bucket(4, frag_bucket::no_access), 8000);
  EXPECT_DOUBLE_EQ(bucket(4, frag_bucket::q2_lack_gpu), 0);
}

}  // namespace
}  // namespace hetsched::metrics
