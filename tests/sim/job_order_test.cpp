// SPDX-License-Identifier: MIT
// FIFO, SJF, Tiresias 2D-LAS and DRF orderings.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/job_order.hpp>
#include <hetsched/policies/orderings.hpp>
#include <hetsched/policies/registry.hpp>

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
  const fifo_order fifo;
  // Submit 10 (ids 1, 3), 20, 30.
  EXPECT_EQ(fifo.order(jobs, {}), (std::vector<std::uint32_t>{1, 3, 2, 0}));
  const sjf_order sjf;
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
  const las_order las{p};
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
  auto t = make_ordering("tiresias", {{"thresholds", "3200/36000"}});
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ((*t)->name(), "tiresias");
  EXPECT_TRUE((*t)->preemptive());
  EXPECT_FALSE((*t)->static_keys());
  EXPECT_THAT(make_ordering("tiresias", {{"thresholds", "3200/100"}}),
              ErrorContains("is not above"));
  EXPECT_THAT(make_ordering("fifo", {{"x", "1"}}), ErrorContains("unknown parameter x"));
  EXPECT_THAT(make_ordering("lifo", {}), HasErrc(errc::not_found));
  static_assert(job_ordering<fifo_order>);
  static_assert(job_ordering<drf_job_order>);
  static_assert(weighted_job_ordering<drf_job_order>);
  static_assert(!weighted_job_ordering<fifo_order>);
}

TEST(JobOrder, DrfTenantWeightsInterleaveTwoToOne) {
  // Tenant 0 "a" has weight 2, tenant 1 "b" weight 1; 8 GPUs, nothing running; 6 one-GPU jobs
  // each, a's ids 0..5, b's 6..11.
  auto drf = make_ordering("drf", {{"weights", "a=2"}});
  ASSERT_THAT(drf, IsOk());
  EXPECT_EQ((*drf)->tenant_weight("a"), 2u);
  EXPECT_EQ((*drf)->tenant_weight("b"), 1u);
  EXPECT_EQ((*drf)->tenant_weight("c"), 1u);
  std::vector<job_view> jobs;
  for (std::uint32_t i = 0; i < 12; ++i) jobs.push_back(jv(i, i < 6 ? 0 : 1, i, 1000));
  std::vector<tenant_usage> usage(2);
  usage[0].weight = (*drf)->tenant_weight("a");
  usage[1].weight = (*drf)->tenant_weight("b");
  order_context ctx;
  ctx.capacity_milli_gpu = 8000;
  ctx.tenants = usage;
  // Weighted shares a = n/16, b = n/8; ties go to tenant 0: a 0/0 -> a(1/16), b(2/16), a(2/16),
  // tie -> a(3/16), b(4/16), a(4/16), tie -> a(5/16), b(6/16), a(6/16), tie -> b's last three.
  EXPECT_EQ((*drf)->order(jobs, ctx),
            (std::vector<std::uint32_t>{0, 6, 1, 2, 7, 3, 4, 8, 5, 9, 10, 11}));
  // Equal weights alternate: a, b, a, b, ...
  auto plain = make_ordering("drf", {});
  ASSERT_THAT(plain, IsOk());
  EXPECT_EQ((*plain)->tenant_weight("a"), 1u);
  usage[0].weight = 1;
  EXPECT_EQ((*plain)->order(jobs, ctx),
            (std::vector<std::uint32_t>{0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}));
  // '*' weighs every tenant not listed.
  auto star = make_ordering("drf", {{"weights", "a=5/*=3"}});
  ASSERT_THAT(star, IsOk());
  EXPECT_EQ((*star)->tenant_weight("a"), 5u);
  EXPECT_EQ((*star)->tenant_weight("zz"), 3u);
  // Orderings without weights answer 1.
  auto fifo = make_ordering("fifo", {});
  ASSERT_THAT(fifo, IsOk());
  EXPECT_EQ((*fifo)->tenant_weight("a"), 1u);
}

TEST(JobOrder, DrfWeightErrorsNameTheEntry) {
  const auto drf = [](std::string w) { return make_ordering("drf", {{"weights", std::move(w)}}); };
  EXPECT_THAT(drf("a=0"),
              ErrorContains("weight '0' of tenant a is not an integer in [1, 1000000]"));
  EXPECT_THAT(drf("a=2/b=x"), ErrorContains("weight 'x' of tenant b is not an integer"));
  EXPECT_THAT(drf("a=-1"), ErrorContains("weight '-1' of tenant a"));
  EXPECT_THAT(drf("a=1000001"), ErrorContains("weight '1000001' of tenant a"));
  EXPECT_THAT(drf("a=2.5"), ErrorContains("weight '2.5' of tenant a"));
  EXPECT_THAT(drf("a="), ErrorContains("weight '' of tenant a"));
  EXPECT_THAT(drf("a=2/a=3"), ErrorContains("weights=a=2/a=3: tenant a is given twice"));
  EXPECT_THAT(drf("*=2/*=3"), ErrorContains("'*' is given twice"));
  EXPECT_THAT(drf("a"), ErrorContains("entry 'a' is not <tenant>=<weight>"));
  EXPECT_THAT(drf("=2"), ErrorContains("entry '=2' is not <tenant>=<weight>"));
  EXPECT_THAT(drf("a=2/"), ErrorContains("entry '' is not <tenant>=<weight>"));
  EXPECT_THAT(drf("quota"), ErrorContains("weights=quota needs a VC quota table"));
  EXPECT_THAT(make_ordering("drf", {{"weight", "a=2"}}),
              ErrorContains("drf: unknown parameter weight (known: weights)"));
  EXPECT_THAT(drf("a=0"), HasErrc(errc::invalid_argument));
  // The policy syntax carries the whole list as one parameter.
  auto spec = parse_policy_spec("drf:weights=vc1=2/vc2=3+packer");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->order, "drf");
  EXPECT_EQ(spec->order_params, (policy_params{{"weights", "vc1=2/vc2=3"}}));
  EXPECT_EQ(spec->placement, "packer");
}

}  // namespace
}  // namespace hetsched
