// SPDX-License-Identifier: MIT
// FIFO, SJF, Tiresias 2D-LAS and DRF orderings.
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/policies/job_order.hpp>
#include <hetsched/sim/ordering.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::HasErrc;
using hetsched::testing::IsOk;

job_view jv(std::uint32_t id, std::uint32_t tenant, std::int64_t submit, std::int64_t milli_gpu,
            std::int64_t est = -1, std::int64_t attained = 0, bool running = false) {
  job_view v;
  v.id = job_id(id);
  v.tenant = tenant;
  v.submit_ms = submit;
  v.milli_gpu = milli_gpu;
  v.duration_estimate_ms = est;
  v.attained_gpu_ms = attained;
  v.running = running;
  return v;
}

TEST(JobOrder, FifoAndSjfKeys) {
  const std::vector<job_view> jobs{jv(0, 0, 30, 1000, 500), jv(1, 0, 10, 1000, 900),
                                   jv(2, 0, 20, 1000, -1), jv(3, 0, 10, 1000, 500)};
  const sim::fifo_order fifo;
  // Submit 10 (ids 1, 3), 20, 30.
  EXPECT_EQ(fifo.order(jobs, {}), (std::vector<std::uint32_t>{1, 3, 2, 0}));
  const sim::sjf_order sjf;
  // Estimate 500 (submit 10: id 3, then submit 30: id 0), 900, unknown last.
  EXPECT_EQ(sjf.order(jobs, {}), (std::vector<std::uint32_t>{3, 0, 1, 2}));
  EXPECT_EQ(sjf_key(jobs[2])[0], std::numeric_limits<std::int64_t>::max());
}

TEST(JobOrder, LasQueuesFromAttainedService) {
  const las_params p{{1000, 5000}};
  EXPECT_EQ(las_queue(p, 0), 0u);
  EXPECT_EQ(las_queue(p, 999), 0u);
  EXPECT_EQ(las_queue(p, 1000), 1u);
  EXPECT_EQ(las_queue(p, 4999), 1u);
  EXPECT_EQ(las_queue(p, 5000), 2u);
  const std::vector<job_view> jobs{
      jv(0, 0, 0, 1000, -1, 6000, true), jv(1, 0, 5, 1000, -1, 2000, false),
      jv(2, 0, 9, 1000, -1, 0, false), jv(3, 0, 1, 1000, -1, 3000, true)};
  const sim::las_order las{p};
  // Queue 0: id 2; queue 1: running id 3 before waiting id 1; queue 2: id 0.
  EXPECT_EQ(las.order(jobs, {}), (std::vector<std::uint32_t>{2, 3, 1, 0}));
  EXPECT_THAT(validate(las_params{{5, 5}}), ErrorContains("threshold 1 (5) is not above"));
  EXPECT_THAT(validate(las_params{{0}}), HasErrc(errc::invalid_argument));
}

TEST(JobOrder, DrfInterleavesTenantsByDominantShare) {
  const std::vector<tenant_usage> usage{{4000, 0, 0, 1}, {0, 0, 0, 1}};
  order_context ctx;
  ctx.capacity_milli_gpu = 8000;
  ctx.tenants = usage;
  const std::vector<job_view> jobs{jv(0, 0, 0, 1000), jv(1, 1, 1, 2000), jv(2, 1, 2, 2000),
                                   jv(3, 0, 3, 1000)};
  // Shares: t0 .5, t1 0 -> job 1 (t1 .25) -> job 2 (t1 .5) -> tie .5/.5 goes to t0: job 0
  // (t0 .625) -> job 3.
  EXPECT_EQ(drf_order(jobs, ctx), (std::vector<std::uint32_t>{1, 2, 0, 3}));
  // Weight 2 halves t0's share: .25 vs 0 -> job 1 (t1 .25) -> tie, t0 first: job 0 (5/16) ->
  // job 2 (t1 .5) -> job 3.
  const std::vector<tenant_usage> weighted{{4000, 0, 0, 2}, {0, 0, 0, 1}};
  ctx.tenants = weighted;
  EXPECT_EQ(drf_order(jobs, ctx), (std::vector<std::uint32_t>{1, 0, 2, 3}));
}

TEST(JobOrder, FactoryNamesAndParameters) {
  auto t = sim::make_ordering("tiresias", {{"thresholds", "3200/36000"}});
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ((*t)->name(), "tiresias");
  EXPECT_TRUE((*t)->preemptive());
  EXPECT_FALSE((*t)->static_keys());
  EXPECT_THAT(sim::make_ordering("tiresias", {{"thresholds", "3200/100"}}),
              ErrorContains("is not above"));
  EXPECT_THAT(sim::make_ordering("fifo", {{"x", "1"}}), ErrorContains("unknown parameter x"));
  EXPECT_THAT(sim::make_ordering("lifo", {}), HasErrc(errc::not_found));
  static_assert(sim::job_ordering<sim::fifo_order>);
  static_assert(sim::job_ordering<sim::drf_job_order>);
}

}  // namespace
}  // namespace hetsched
