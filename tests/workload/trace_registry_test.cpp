// SPDX-License-Identifier: MIT
// Tests of parse_trace(), parse_trace_spec() and merge_traces().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/workload/gavel.hpp>
#include <hetsched/workload/trace_registry.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::workload {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::hetsched::testing::read_shared;

TEST(TraceRegistry, DispatchesBuiltinFormats) {
  const auto formats = builtin_trace_formats();
  ASSERT_EQ(formats.size(), 3u);
  EXPECT_EQ(formats[0].name, "gavel");
  EXPECT_EQ(formats[1].name, "pollux");
  EXPECT_EQ(formats[2].name, "tiresias");
  const std::string tiresias = "data/traces/tiresias_sim/60_job.csv";
  auto t = parse_trace("tiresias", read_shared(tiresias), tiresias);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->size(), 60u);
  const std::string pollux = "data/traces/pollux_osdi21/workloads/workload-1.csv";
  auto p = parse_trace("pollux", read_shared(pollux), pollux);
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->size(), 160u);
  const std::string gavel = "data/traces/gavel_msr_philly_derived/seed0/23dbec.trace";
  auto g = parse_trace("gavel", read_shared(gavel), gavel);
  ASSERT_THAT(g, IsOk());
  EXPECT_EQ(g->size(), 9u);
  EXPECT_EQ(g->front().tenant, "23dbec");
  // A reader's own error comes through unchanged.
  EXPECT_THAT(parse_trace("pollux", "x\n", "bad.csv"), ErrorContains("bad.csv:1: field 'name'"));
}

result<trace> one_job(std::string_view, std::string_view source) {
  trace_job job;
  job.name = std::string(source);
  job.duration_ms = 1;
  return trace{job};
}

TEST(TraceRegistry, ExtraFormatsComeFirstAndUnknownIsNotFound) {
  const std::vector<trace_format> extra = {{"openb", &one_job}, {"gavel", &one_job}};
  // A reader with bound options: a Gavel reader whose tenant is fixed.
  gavel_options bound;
  bound.tenant = "vcX";
  const std::vector<trace_format> with_options = {
      {"gavel",
       [&](std::string_view t, std::string_view s) { return parse_gavel_trace(t, s, bound); }}};
  auto b = parse_trace("gavel", "A\tc\t-n\t1\t10\t0\t1\n", "f.trace", with_options);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->front().tenant, "vcX");
  auto t = parse_trace("openb", "", "src", extra);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->front().name, "src");
  auto g = parse_trace("gavel", "", "shadowed", extra);
  ASSERT_THAT(g, IsOk());
  EXPECT_EQ(g->size(), 1u);
  auto u = parse_trace("philly", "", "p.json", extra);
  EXPECT_THAT(u, HasErrc(errc::not_found));
  EXPECT_THAT(
      u, ErrorContains("p.json: unknown trace format 'philly' (known: openb, gavel, gavel, pollux, "
                       "tiresias)"));
}

TEST(TraceSpec, SplitsFormatAndPath) {
  auto s = parse_trace_spec("gavel:/data/a:b.trace");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(*s, (trace_spec{"gavel", "/data/a:b.trace"}));
  EXPECT_THAT(parse_trace_spec("gavel"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(parse_trace_spec(":x"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(parse_trace_spec("gavel:"), ErrorContains("expected FORMAT:PATH"));
}

TEST(MergeTraces, InterleavesBySubmitTimeKeepingTraceOrderOnTies) {
  auto job = [](std::string name, std::int64_t at) {
    trace_job j;
    j.name = std::move(name);
    j.submit_ms = at;
    j.duration_ms = 1;
    return j;
  };
  const std::vector<trace> traces = {{job("a0", 0), job("a1", 10)}, {job("b0", 5), job("b1", 10)}};
  auto m = merge_traces(traces);
  ASSERT_THAT(m, IsOk());
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ((*m)[0].name, "a0");
  EXPECT_EQ((*m)[1].name, "b0");
  EXPECT_EQ((*m)[2].name, "a1");
  EXPECT_EQ((*m)[3].name, "b1");
  const std::vector<trace> clash = {{job("x", 0)}, {job("x", 1)}};
  EXPECT_THAT(merge_traces(clash), HasErrc(errc::already_exists));
}

}  // namespace
}  // namespace hetsched::workload
