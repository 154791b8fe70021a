// SPDX-License-Identifier: MIT
// The simulator with the speed model on (engine.hpp "Speed"): a job's finish follows its rate
// from GPU type, locality, co-location and GPU count, and moves when a peer starts or stops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include <hetsched/metrics/metrics.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/sim/speed_model.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::gpu_job;
using hetsched::testing::IsOk;
using hetsched::testing::simulate_spec;
using hetsched::testing::two_dgx;

sim_params speed_on(const hetsched::testing::sim_fixture& f, throughput_table table = {},
                    speed_model_params params = {}) {
  params.enabled = true;
  sim_params p;
  p.speed = speed_model::make(std::move(params), std::move(table)).value();
  p.topology = std::make_shared<const cluster_topology>(f.topo);
  return p;
}

workload::trace_job typed(workload::trace_job j, std::string model) {
  j.model = std::move(model);
  return j;
}

// Two tasks of 8 GPUs: one whole DGX-1 each, so the job crosses servers (same rack).
workload::trace_job two_servers(std::string name, std::string model) {
  workload::trace_job j = gpu_job(std::move(name), "vc0", 0, 1000, 8);
  j.tasks = 2;
  j.model = std::move(model);
  return j;
}

TEST(SpeedEngine, OffRunsEveryJobAtItsNominalSpeed) {
  const auto f = two_dgx();
  const workload::trace trace{two_servers("a", "LM")};
  const sim_result r = simulate_spec(f, trace, "fifo+packer");
  EXPECT_EQ(r.jobs[0].finish_ms, 1'000'000);
  EXPECT_EQ(r.jobs[0].run_ms, 1'000'000);
  EXPECT_DOUBLE_EQ(r.jobs[0].ideal_run_ms, 1'000'000.0);
  EXPECT_DOUBLE_EQ(metrics::summarize(r).placement_slowdown, 1.0);
}

TEST(SpeedEngine, ACommunicationHeavyJobAcrossServersRunsFiveTimesSlower) {
  const auto f = two_dgx();
  // LM: sensitivity 1, across servers 5x (the seed's figure); ResNet-50: sensitivity 0.02.
  const workload::trace trace{two_servers("lm", "LM")};
  const sim_result lm = simulate_spec(f, trace, "fifo+packer", speed_on(f));
  EXPECT_EQ(lm.jobs[0].finish_ms, 5'000'000);
  EXPECT_EQ(lm.jobs[0].run_ms, 5'000'000);
  EXPECT_DOUBLE_EQ(lm.jobs[0].ideal_run_ms, 1'000'000.0);
  EXPECT_DOUBLE_EQ(metrics::summarize(lm).placement_slowdown, 5.0);

  const sim_result resnet =
      simulate_spec(f, {two_servers("r", "ResNet-50 (batch size 64)")}, "fifo+packer", speed_on(f));
  EXPECT_EQ(resnet.jobs[0].finish_ms, 1'080'000);  // 1 + 0.02 x (5 - 1)
}

TEST(SpeedEngine, PackerKeepsATwoGpuJobOnNvlinkAndRandomPlacementNeedNot) {
  const auto f = two_dgx();
  const workload::trace trace{typed(gpu_job("a", "vc0", 0, 1000, 2), "LM")};
  const sim_result packed = simulate_spec(f, trace, "fifo+packer", speed_on(f));
  EXPECT_EQ(packed.jobs[0].finish_ms, 1'000'000);  // an NVLink pair: same_switch
  // first-fit takes devices 0 and 1 of a DGX-1: an NVLink pair too.
  EXPECT_EQ(simulate_spec(f, trace, "fifo+first-fit", speed_on(f)).jobs[0].finish_ms, 1'000'000);
  // Over seeds, random placement picks pairs without NVLink under one CPU socket (1.4x) or
  // across sockets (1.48x) as often as NVLink pairs.
  std::int64_t slower = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const sim_result r =
        simulate_spec(f, trace, "fifo+random:seed=" + std::to_string(seed), speed_on(f));
    const std::int64_t finish = r.jobs[0].finish_ms;
    EXPECT_TRUE(finish == 1'000'000 || finish == 1'400'000 || finish == 1'480'000) << finish;
    slower += finish > 1'000'000 ? 1 : 0;
  }
  EXPECT_GT(slower, 0);
  EXPECT_LT(slower, 20);
}

TEST(SpeedEngine, TheGpuTypeSetsTheRateAgainstTheReferenceType) {
  const auto f = two_dgx();
  throughput_table table;
  ASSERT_THAT(table.add_gpu_type(gpu_type("k80")), IsOk());
  ASSERT_THAT(table.add_gpu_type(gpu_type("v100")), IsOk());
  ASSERT_THAT(table.set_single({"ResNet-50", 1}, gpu_type("k80"), 1.0), IsOk());
  ASSERT_THAT(table.set_single({"ResNet-50", 1}, gpu_type("v100"), 4.0), IsOk());
  speed_model_params params;
  params.reference_gpu = gpu_type("k80");  // durations measured on K80s: a V100 is 4x faster
  const workload::trace trace{typed(gpu_job("a", "vc0", 0, 1000, 1), "ResNet-50")};
  const sim_result r = simulate_spec(f, trace, "fifo+packer", speed_on(f, table, params));
  EXPECT_EQ(r.jobs[0].finish_ms, 250'000);
  EXPECT_DOUBLE_EQ(metrics::summarize(r).placement_slowdown, 1.0);  // hardware is not placement
}

TEST(SpeedEngine, AJobThatCannotRunOnItsGpuTypeFailsItsAttempts) {
  const auto f = two_dgx();
  throughput_table table;
  ASSERT_THAT(table.add_gpu_type(gpu_type("v100")), IsOk());
  ASSERT_THAT(table.set_single({"Huge", 1}, gpu_type("v100"), 0.0), IsOk());
  const workload::trace trace{typed(gpu_job("a", "vc0", 0, 1000, 1), "Huge")};
  sim_params p = speed_on(f, table);
  p.retry_limit = 2;
  const sim_result r = simulate_spec(f, trace, "fifo+packer", p);
  EXPECT_EQ(r.jobs[0].state, job_state::failed);
  EXPECT_EQ(r.jobs[0].failures, 3u);
  EXPECT_EQ(r.jobs[0].finish_ms, 3);  // each attempt fails 1 ms after it starts
}

// Two half-GPU jobs share device 0 (the packer fills the partly used GPU first). Without a
// packed figure each runs at the default interference 0.58 while the other runs.
TEST(SpeedEngine, CoLocatedJobsSlowEachOtherAndSpeedUpWhenThePeerLeaves) {
  const auto f = two_dgx();
  workload::trace_job a = gpu_job("a", "vc0", 0, 1000, 1);
  a.gpu_milli_per_task = 500;
  workload::trace_job b = a;
  b.name = "b";
  b.submit_ms = 500'000;
  const sim_result r = simulate_spec(f, {a, b}, "fifo+packer", speed_on(f));
  // a: 500 s alone, then its last 500 s of work at 0.58: ceil(500000 / 0.58) = 862069 ms.
  EXPECT_EQ(r.jobs[0].finish_ms, 1'362'069);
  // b: 862069 ms at 0.58 (500000 ms of work), then alone for the other 500000 ms.
  EXPECT_EQ(r.jobs[1].finish_ms, 1'862'069);
  EXPECT_EQ(r.jobs[1].run_ms, 1'362'069);
  EXPECT_NEAR(r.jobs[1].ideal_run_ms, 862'069 * 0.58 + 500'000, 1e-6);
}

TEST(SpeedEngine, MeasuredPackedThroughputReplacesTheDefaultInterference) {
  const auto f = two_dgx();
  throughput_table table;
  ASSERT_THAT(table.add_gpu_type(gpu_type("v100")), IsOk());
  ASSERT_THAT(table.set_single({"A", 1}, gpu_type("v100"), 10.0), IsOk());
  ASSERT_THAT(table.set_single({"B", 1}, gpu_type("v100"), 10.0), IsOk());
  ASSERT_THAT(table.set_packed({"A", 1}, {"B", 1}, gpu_type("v100"), {8.0, 5.0}), IsOk());
  workload::trace_job a = typed(gpu_job("a", "vc0", 0, 1000, 1), "A");
  a.gpu_milli_per_task = 500;
  workload::trace_job b = typed(a, "B");
  b.name = "b";
  const sim_result r = simulate_spec(f, {a, b}, "fifo+packer", speed_on(f, table));
  // Both start at 0: a at 0.8, b at 0.5. b has 1000000 ms of work: at 0.5 it would take 2000 s,
  // so a finishes first at 1250 s, when b has done 625000 ms; b then runs alone.
  EXPECT_EQ(r.jobs[0].finish_ms, 1'250'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 1'625'000);
}

TEST(SpeedEngine, RefusesAnEnabledModelWithoutAMatchingTopology) {
  const auto f = two_dgx();
  const workload::trace trace{gpu_job("a", "vc0", 0, 10, 1)};
  auto inst = make_policy(parse_policy_spec("fifo+packer").value(), *f.description, &f.topo);
  ASSERT_THAT(inst, IsOk());
  sim_params p = speed_on(f);
  p.topology = nullptr;
  EXPECT_THAT(simulate(f.description, trace, *inst->order, *inst->place, p),
              ErrorContains("topology is empty"));
  p.topology = std::make_shared<const cluster_topology>(
      cluster_builder("c").add_nodes(node_template::dgx1_v100, 1, "n").build().value());
  EXPECT_THAT(simulate(f.description, trace, *inst->order, *inst->place, p),
              ErrorContains("1 nodes and 8 GPUs"));
}

}  // namespace
}  // namespace hetsched::sim
