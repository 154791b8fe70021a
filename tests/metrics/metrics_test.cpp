// SPDX-License-Identifier: MIT
// Run metrics on hand-made outcomes.
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/metrics/metrics.hpp>

#include "support/sim_fixtures.hpp"

namespace hetsched::metrics {
namespace {

TEST(Metrics, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const distribution d = describe(v);
  EXPECT_EQ(d.count, 100u);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  EXPECT_DOUBLE_EQ(d.median, 50);
  EXPECT_DOUBLE_EQ(d.p95, 95);
  EXPECT_DOUBLE_EQ(d.p99, 99);
  EXPECT_DOUBLE_EQ(d.p999, 100);
  EXPECT_DOUBLE_EQ(d.max, 100);
  EXPECT_EQ(describe({}).count, 0u);
}

TEST(Metrics, P999DiffersFromTheMaxWithEnoughSamples) {
  // 1000 values: p99.9 is rank ceil(0.999 x 1000) = 999, not the maximum.
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  distribution d = describe(v);
  EXPECT_DOUBLE_EQ(d.p999, 999);
  EXPECT_DOUBLE_EQ(d.p99, 990);
  EXPECT_DOUBLE_EQ(d.max, 1000);
  // 2000 values: rank 1998 exactly (0.999 x 2000 is 1998.0000000000002 in floating point).
  for (int i = 1001; i <= 2000; ++i) v.push_back(i);
  d = describe(v);
  EXPECT_DOUBLE_EQ(d.p999, 1998);
  EXPECT_DOUBLE_EQ(d.p99, 1980);
  EXPECT_DOUBLE_EQ(d.p95, 1900);
  EXPECT_DOUBLE_EQ(d.median, 1000);
  EXPECT_DOUBLE_EQ(d.max, 2000);
  // 10000 values: rank 9990.
  std::vector<double> big;
  for (int i = 1; i <= 10000; ++i) big.push_back(i);
  EXPECT_DOUBLE_EQ(percentile_sorted(big, 99.9), 9990);
  EXPECT_DOUBLE_EQ(percentile_sorted(big, 100), 10000);
  EXPECT_DOUBLE_EQ(percentile_sorted(big, 0.01), 1);
}

TEST(Metrics, JainIndex) {
  EXPECT_DOUBLE_EQ(jain_index(std::vector<double>{1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index(std::vector<double>{1, 0}), 0.5);
  // (1+3)^2 / (2 * 10) = 0.8
  EXPECT_DOUBLE_EQ(jain_index(std::vector<double>{1, 3}), 0.8);
}

sim::job_outcome outcome(std::uint32_t tenant, std::int64_t submit, std::int64_t start,
                         std::int64_t finish, std::int64_t duration, std::int64_t milli,
                         std::int64_t active) {
  sim::job_outcome o;
  o.tenant = tenant;
  o.submit_ms = submit;
  o.first_start_ms = start;
  o.finish_ms = finish;
  o.duration_ms = duration;
  o.milli_gpu = milli;
  o.active_at_submit = active;
  o.state = job_state::succeeded;
  return o;
}

TEST(Metrics, SummaryOfTwoTenants) {
  sim::sim_result r;
  r.tenants = {"a", "b"};
  r.total_milli_gpu = 4000;
  r.first_submit_ms = 0;
  // a: 4 GPUs 0..100 s; b: 2 GPUs waits 100 s, runs 100..200 s.
  r.jobs = {outcome(0, 0, 0, 100'000, 100'000, 4000, 1),
            outcome(1, 0, 100'000, 200'000, 100'000, 2000, 2)};
  r.jobs[1].pending_ms = 100'000;
  sim::job_outcome rej;
  rej.rejected = true;
  rej.state = job_state::cancelled;
  r.jobs.push_back(rej);
  r.busy_gpu_ms = 4.0 * 100'000 + 2.0 * 100'000;
  r.allocated_gpu_ms = r.busy_gpu_ms;
  r.tenant_usage = {{400'000, 0, 0}, {200'000, 0, 0}};
  r.counters.preemptions = 3;
  const run_summary s = summarize(r);
  EXPECT_EQ(s.succeeded, 2u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_DOUBLE_EQ(s.jct_s.mean, 150);
  EXPECT_DOUBLE_EQ(s.queue_s.mean, 50);
  EXPECT_DOUBLE_EQ(s.mean_pending_s, 50);
  EXPECT_DOUBLE_EQ(s.makespan_s, 200);
  EXPECT_DOUBLE_EQ(s.throughput_per_h, 36);
  // 600 GPU-s over 4 GPUs x 200 s.
  EXPECT_DOUBLE_EQ(s.utilisation, 0.75);
  // Service ratios 1 and 0.5: Jain = 2.25 / (2 * 1.25) = 0.9.
  EXPECT_DOUBLE_EQ(s.jain, 0.9);
  // Dominant shares 400/800 = 0.5 and 200/800 = 0.25.
  EXPECT_DOUBLE_EQ(s.tenants[0].dominant_share, 0.5);
  EXPECT_DOUBLE_EQ(s.dominant_share_spread, 0.25);
  // rho: a 100/100 = 1; b: share 2 GPUs x 2 active / 4 = 1 -> 200/100 = 2.
  EXPECT_DOUBLE_EQ(s.ftf_mean, 1.5);
  EXPECT_DOUBLE_EQ(s.ftf_max, 2);
  EXPECT_DOUBLE_EQ(s.ftf_unfair_fraction, 0.5);
  EXPECT_EQ(s.preemptions, 3u);
  EXPECT_DOUBLE_EQ(s.tenants[1].mean_queue_s, 100);

  run_summary priv;
  priv.tenants = {tenant_summary{"b", 1, 1, 20, 120, 1, 0.5}};
  const std::vector<run_summary> privates{priv};
  const auto anomaly = sharing_anomaly(s, privates);
  ASSERT_EQ(anomaly.size(), 1u);
  EXPECT_EQ(anomaly[0].name, "b");
  EXPECT_DOUBLE_EQ(anomaly[0].anomaly_s, 80);
}

TEST(Metrics, AllocationRatioCountsAllocatedButIdleGpus) {
  sim::sim_result r;
  r.tenants = {"a"};
  r.total_milli_gpu = 8000;
  r.first_submit_ms = 0;
  r.jobs = {outcome(0, 0, 0, 100'000, 100'000, 8000, 1)};
  // 8 GPUs allocated for 100 s, but only 6 of them busy (e.g. a preemption victim holding 2 GPUs
  // while it terminates): utilisation 600/800, allocation 800/800.
  r.busy_gpu_ms = 6.0 * 100'000;
  r.allocated_gpu_ms = 8.0 * 100'000;
  const run_summary s = summarize(r);
  EXPECT_DOUBLE_EQ(s.utilisation, 0.75);
  EXPECT_DOUBLE_EQ(s.allocation_ratio, 1.0);
}

TEST(Metrics, CountersOfPreemptionsMigrationsRetries) {
  sim::sim_result r;
  r.tenants = {"a"};
  r.total_milli_gpu = 1000;
  r.jobs = {outcome(0, 0, 0, 10'000, 10'000, 1000, 1)};
  r.counters.preemptions = 2;
  r.counters.migrations = 5;
  r.counters.retries = 7;
  r.counters.failures = 9;
  r.counters.suspensions = 11;
  r.counters.node_failures = 13;
  const run_summary s = summarize(r);
  EXPECT_EQ(s.preemptions, 2u);
  EXPECT_EQ(s.migrations, 5u);
  EXPECT_EQ(s.retries, 7u);
  EXPECT_EQ(s.suspensions, 11u);
  EXPECT_EQ(s.node_failures, 13u);
}

TEST(Metrics, RetriesOfASimulatedRun) {
  // Attempts fail with probability 0.999: with seed 1 all three do; the job is requeued twice
  // (retry_limit 2), then fails for good.
  const auto f = testing::two_dgx();
  sim::sim_params params;
  params.job_failure_probability = 0.999;
  params.retry_limit = 2;
  const workload::trace trace{testing::gpu_job("j", "a", 0, 100, 1),
                              testing::gpu_job("ok", "a", 0, 100, 1)};
  workload::trace one{trace[0]};
  const run_summary s = summarize(testing::simulate_spec(f, one, "fifo+packer", params));
  EXPECT_EQ(s.retries, 2u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.succeeded, 0u);
  params.job_failure_probability = 0.0;
  const run_summary ok = summarize(testing::simulate_spec(f, trace, "fifo+packer", params));
  EXPECT_EQ(ok.retries, 0u);
  EXPECT_EQ(ok.succeeded, 2u);
}

TEST(Metrics, ArrivedDemandIsCumulative) {
  sim::sim_result r;
  r.tenants = {"a"};
  r.jobs = {outcome(0, 50, 50, 60, 10, 2000, 1), outcome(0, 0, 0, 30, 30, 500, 1),
            outcome(0, 100, 100, 110, 10, 4000, 1)};
  for (const std::int64_t t : {0, 49, 50, 99, 200}) {
    sim::time_sample ts;
    ts.time_ms = t;
    r.series.push_back(ts);
  }
  EXPECT_EQ(arrived_demand_milli(r), (std::vector<std::int64_t>{500, 500, 2500, 2500, 6500}));
}

}  // namespace
}  // namespace hetsched::metrics
