// SPDX-License-Identifier: MIT
// Tests for resource vectors and GPU requests.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hetsched/model/resources.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

resource_vector make(std::int64_t gpu, std::int64_t cpu, std::int64_t mem, std::int64_t gpu_mem) {
  resource_vector v;
  v.milli_gpu = gpu;
  v.milli_cpu = cpu;
  v.memory_mib = mem;
  v.gpu_memory_mib = gpu_mem;
  return v;
}

TEST(ResourceVector, AddsAndSubtractsComponentwise) {
  resource_vector a = make(1500, 2000, 4096, 80);
  a.set_extended("rdma/hca", 1);
  resource_vector b = make(500, 1000, 1024, 20);
  b.set_extended("rdma/hca", 2);
  b.set_extended("fpga", 3);

  const resource_vector sum = a + b;
  // sum = {2000, 3000, 5120, 100, fpga=3, rdma/hca=3}
  EXPECT_EQ(sum.milli_gpu, 2000);
  EXPECT_EQ(sum.milli_cpu, 3000);
  EXPECT_EQ(sum.memory_mib, 5120);
  EXPECT_EQ(sum.gpu_memory_mib, 100);
  EXPECT_EQ(sum.extended_amount("rdma/hca"), 3);
  EXPECT_EQ(sum.extended_amount("fpga"), 3);

  const resource_vector diff = a - b;
  // diff = {1000, 1000, 3072, 60, fpga=-3, rdma/hca=-1}
  EXPECT_EQ(diff, [] {
    resource_vector v = make(1000, 1000, 3072, 60);
    v.set_extended("fpga", -3);
    v.set_extended("rdma/hca", -1);
    return v;
  }());
  EXPECT_TRUE(diff.any_negative());
  // (a + b) - b == a
  EXPECT_EQ(sum - b, a);
}

TEST(ResourceVector, ErasesExtendedEntriesThatBecomeZero) {
  resource_vector a;
  a.set_extended("rdma/hca", 2);
  resource_vector b;
  b.set_extended("rdma/hca", 2);
  a -= b;
  // the entry is gone, so a equals the default vector
  EXPECT_TRUE(a.extended.empty());
  EXPECT_EQ(a, resource_vector{});
  EXPECT_TRUE(a.is_zero());
}

TEST(ResourceVector, SetExtendedZeroErases) {
  resource_vector a;
  a.set_extended("x", 5);
  a.set_extended("x", 7);
  // overwritten, not added
  EXPECT_EQ(a.extended_amount("x"), 7);
  a.set_extended("x", 0);
  EXPECT_EQ(a.extended.size(), 0U);
  EXPECT_EQ(a.extended_amount("missing"), 0);
}

TEST(ResourceVector, IsZeroAndAnyNegative) {
  EXPECT_TRUE(resource_vector{}.is_zero());
  EXPECT_FALSE(make(0, 1, 0, 0).is_zero());
  EXPECT_FALSE(make(0, 0, 0, 0).any_negative());
  EXPECT_TRUE(make(0, 0, -1, 0).any_negative());
  resource_vector v;
  v.set_extended("x", -1);
  EXPECT_TRUE(v.any_negative());
  EXPECT_FALSE(v.is_zero());
}

TEST(ResourceVector, LessEqualIsComponentwiseWithMissingExtendedAsZero) {
  resource_vector cap = make(1000, 4000, 8192, 40960);
  cap.set_extended("rdma/hca", 1);
  resource_vector req = make(1000, 4000, 8192, 40960);
  EXPECT_TRUE(req <= cap);
  EXPECT_TRUE(fits(req, cap));
  // cap has rdma/hca=1, req lacks it (0): cap is not <= req
  EXPECT_FALSE(cap <= req);

  req.set_extended("rdma/hca", 1);
  EXPECT_TRUE(fits(req, cap));
  req.set_extended("rdma/hca", 2);
  EXPECT_FALSE(fits(req, cap));
  req.set_extended("rdma/hca", 0);
  req.set_extended("fpga", 1);
  // fpga missing on cap counts as 0
  EXPECT_FALSE(fits(req, cap));

  // one component over: cpu 4001 > 4000
  EXPECT_FALSE(fits(make(0, 4001, 0, 0), cap));
  EXPECT_FALSE(fits(make(1001, 0, 0, 0), cap));
  EXPECT_FALSE(fits(make(0, 0, 8193, 0), cap));
  EXPECT_FALSE(fits(make(0, 0, 0, 40961), cap));
  EXPECT_TRUE(fits(resource_vector{}, cap));
}

TEST(ResourceVector, LessEqualHandlesNegativeExtendedOnTheRight) {
  resource_vector lhs;
  resource_vector rhs;
  rhs.set_extended("x", -1);
  // 0 <= -1 is false
  EXPECT_FALSE(lhs <= rhs);
  EXPECT_TRUE(rhs <= lhs);
}

TEST(ResourceVector, ScalesByFactor) {
  resource_vector v = make(250, 1000, 512, 10);
  v.set_extended("x", 2);
  const resource_vector scaled = v * 4;
  // {1000, 4000, 2048, 40, x=8}
  EXPECT_EQ(scaled.milli_gpu, 1000);
  EXPECT_EQ(scaled.milli_cpu, 4000);
  EXPECT_EQ(scaled.memory_mib, 2048);
  EXPECT_EQ(scaled.gpu_memory_mib, 40);
  EXPECT_EQ(scaled.extended_amount("x"), 8);
  // scaling by 0 gives the zero vector with no extended entries
  EXPECT_EQ(v * 0, resource_vector{});
}

TEST(ResourceVector, SumsClusterTotalsWithoutOverflow) {
  // 100,000 nodes each at the per-amount limit of 2^40.
  resource_vector node =
      make(max_resource_amount, max_resource_amount, max_resource_amount, max_resource_amount);
  resource_vector total;
  for (int i = 0; i < 100000; ++i) total += node;
  // 100000 * 2^40 = 109951162777600000
  EXPECT_EQ(total.memory_mib, std::int64_t{109951162777600000});
  EXPECT_FALSE(total.any_negative());
}

TEST(ResourceVector, FormatsAllComponents) {
  resource_vector v = make(1500, 2000, 4096, 0);
  v.set_extended("rdma/hca", 1);
  // extended entries follow in name order
  EXPECT_EQ(fmt::format("{}", v),
            "{milli_gpu=1500, milli_cpu=2000, memory_mib=4096, gpu_memory_mib=0, rdma/hca=1}");
  EXPECT_EQ(fmt::format("{}", resource_vector{}),
            "{milli_gpu=0, milli_cpu=0, memory_mib=0, gpu_memory_mib=0}");
}

TEST(GpuRequest, HelpersBuildWholeAndFractionalRequests) {
  const gpu_request whole = whole_gpus(4, gpu_type("A100-SXM4-80GB"), 1024);
  // 4 x 1000 milli
  EXPECT_EQ(whole.count, 4U);
  EXPECT_EQ(whole.milli_per_gpu, 1000U);
  EXPECT_EQ(whole.type, gpu_type("A100-SXM4-80GB"));
  EXPECT_EQ(whole.memory_mib, 1024);
  EXPECT_EQ(whole.total_milli_gpu(), 4000);
  EXPECT_FALSE(whole.is_fractional());

  const gpu_request frac = fractional_gpu(250);
  // 1 x 250 milli, any type
  EXPECT_EQ(frac.count, 1U);
  EXPECT_EQ(frac.milli_per_gpu, 250U);
  EXPECT_TRUE(frac.type.empty());
  EXPECT_EQ(frac.total_milli_gpu(), 250);
  EXPECT_TRUE(frac.is_fractional());
  EXPECT_THAT(validate(whole), IsOk());
  EXPECT_THAT(validate(frac), IsOk());
  EXPECT_THAT(validate(gpu_request{}), IsOk());
}

TEST(GpuRequest, ValidateRejectsMalformedRequests) {
  // fractional needs count 1
  EXPECT_THAT(validate(gpu_request{2, 500, {}, 0}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(gpu_request{2, 500, {}, 0}), ErrorContains("needs count 1, got 2"));
  // milli outside 1..1000
  EXPECT_THAT(validate(gpu_request{1, 0, {}, 0}), HasErrc(errc::out_of_range));
  EXPECT_THAT(validate(gpu_request{1, 1001, {}, 0}), HasErrc(errc::out_of_range));
  EXPECT_THAT(validate(gpu_request{1, 1001, {}, 0}), ErrorContains("1001"));
  // negative or absurd memory
  EXPECT_THAT(validate(gpu_request{1, 1000, {}, -1}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(gpu_request{1, 1000, {}, max_resource_amount + 1}),
              HasErrc(errc::out_of_range));
  // more than max_gpus_per_task devices
  EXPECT_THAT(validate(whole_gpus(max_gpus_per_task + 1)), HasErrc(errc::out_of_range));
  // boundaries are accepted: 1 and 999 milli, 1024 GPUs
  EXPECT_THAT(validate(fractional_gpu(1)), IsOk());
  EXPECT_THAT(validate(fractional_gpu(999)), IsOk());
  EXPECT_THAT(validate(whole_gpus(max_gpus_per_task)), IsOk());
}

TEST(ExtendedResources, ValidateRejectsEmptyNamesAndBadAmounts) {
  EXPECT_THAT(validate(extended_resources{{"rdma/hca", 4}}), IsOk());
  EXPECT_THAT(validate(extended_resources{{"", 1}}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(extended_resources{{"x", -1}}), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(extended_resources{{"x", -1}}), ErrorContains("'x'"));
  EXPECT_THAT(validate(extended_resources{{"x", max_resource_amount + 1}}),
              HasErrc(errc::out_of_range));
}

}  // namespace
}  // namespace hetsched
