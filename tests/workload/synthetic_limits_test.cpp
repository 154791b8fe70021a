// SPDX-License-Identifier: MIT
// The synthetic generator's parameter limits (issue 17): absurd job counts, tenants, node sizes,
// durations and loads are refused with an error naming the parameter, before anything is
// allocated (hetsched-sim --jobs 1000000000000 aborted on an uncaught bad_alloc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include <hetsched/workload/synthetic.hpp>

#include "support/matchers.hpp"

namespace hetsched::workload {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

synthetic_params small() {
  synthetic_params p;
  p.jobs = 100;
  p.cluster_gpus = 64;
  return p;
}

TEST(SyntheticLimits, RefusesMoreJobsThanTheLimitBeforeAllocating) {
  synthetic_params p = small();
  p.jobs = 1'000'000'000'000;
  const auto t = synthesize(p);
  EXPECT_THAT(t, HasErrc(errc::out_of_range));
  EXPECT_THAT(t, ErrorContains("synthetic workload: jobs 1000000000000 is above the limit "
                               "10000000"));
  p.jobs = std::numeric_limits<std::uint64_t>::max();
  EXPECT_THAT(synthesize(p), HasErrc(errc::out_of_range));
}

TEST(SyntheticLimits, RefusesTenantsNodeSizesAndAmountsAboveTheirLimits) {
  synthetic_params p = small();
  p.tenants = std::numeric_limits<std::uint32_t>::max();
  EXPECT_THAT(synthesize(p), ErrorContains("tenants 4294967295 is above the limit 1000000"));
  p = small();
  p.gpus_per_node = 4096;
  EXPECT_THAT(synthesize(p), ErrorContains("gpus_per_node 4096 is above the limit 1024"));
  p = small();
  p.max_duration_ms = std::numeric_limits<std::int64_t>::max();
  EXPECT_THAT(synthesize(p), ErrorContains("max_duration_ms 9223372036854775807 is above the "
                                           "limit 10000000000000"));
  p = small();
  p.cpu_milli_per_gpu = std::numeric_limits<std::int64_t>::max() / 2;
  EXPECT_THAT(synthesize(p), ErrorContains("cpu_milli_per_gpu 4611686018427387903"));
  EXPECT_THAT(synthesize(p), HasErrc(errc::out_of_range));
}

TEST(SyntheticLimits, RefusesALoadThatSpreadsArrivalsBeyondTheTimeLimit) {
  // A tiny load stretches the arrivals: past 10^13 ms the submit times would not be valid trace
  // times (and past 2^63 ms llround overflowed).
  synthetic_params p = small();
  p.load = 1e-12;
  const auto t = synthesize(p);
  EXPECT_THAT(t, HasErrc(errc::out_of_range));
  EXPECT_THAT(t, ErrorContains("raise load or lower jobs"));
  p.load = 0.9;
  const auto fine = synthesize(p);
  ASSERT_THAT(fine, IsOk());
  EXPECT_EQ(fine->size(), 100u);
  EXPECT_LE(fine->back().submit_ms, max_trace_time_ms);
}

}  // namespace
}  // namespace hetsched::workload
