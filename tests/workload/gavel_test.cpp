// SPDX-License-Identifier: MIT
// Tests of parse_gavel_trace() on Gavel's seed-0 Philly-derived per-VC traces and on synthetic
// and malformed lines, and of parse_gavel_throughputs().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
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

const std::vector<std::string> kVcs = {"0e4a51", "103959", "11cb48", "23dbec", "2869ce",
                                       "51b7ef", "6214e9", "6c71a0", "795a4c", "7f04ca",
                                       "925e2b", "b436b2", "e13805", "ed69ec", "ee9e8c"};

std::string vc_path(const std::string& vc) {
  return "data/traces/gavel_msr_philly_derived/seed0/" + vc + ".trace";
}

result<trace> read_vc(const std::string& vc, const gavel_options& options = {}) {
  return parse_gavel_trace(::hetsched::testing::read_shared(vc_path(vc)), vc_path(vc), options);
}

TEST(GavelTrace, ReadsFirstAndLastJobOfVc0e4a51) {
  auto t = read_vc("0e4a51");
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 1181u);
  const trace_job& first = t->front();
  EXPECT_EQ(first.name, "0e4a51-0");
  EXPECT_EQ(first.tenant, "0e4a51");
  EXPECT_EQ(first.model, "Transformer (batch size 128)");
  EXPECT_EQ(first.submit_ms, 0);
  EXPECT_EQ(first.tasks, 1u);
  EXPECT_EQ(first.gpus_per_task, 1u);
  EXPECT_EQ(first.gpu_milli_per_task, 1000);
  EXPECT_EQ(first.work_units, 95121);
  // ceil(95121 steps * 1000 / 219.8 steps/s) ms
  EXPECT_EQ(first.duration_ms, 432762);
  const trace_job& last = t->back();
  EXPECT_EQ(last.name, "0e4a51-1180");
  EXPECT_EQ(last.model, "CycleGAN");
  EXPECT_EQ(last.submit_ms, 7363956000);
  EXPECT_EQ(last.work_units, 236751);
  EXPECT_EQ(last.duration_ms, 1077121);
  std::uint64_t gpus = 0;
  int eight = 0;
  for (const auto& j : *t) {
    gpus += j.tasks * j.gpus_per_task;
    eight += j.tasks == 8 ? 1 : 0;
  }
  EXPECT_EQ(gpus, 3236u);
  EXPECT_EQ(eight, 68);
}

TEST(GavelTrace, VcEe9e8cHas543EightGpuJobs) {
  auto t = read_vc("ee9e8c");
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 2000u);
  int eight = 0;
  std::uint64_t gpus = 0;
  for (const auto& j : *t) {
    eight += j.tasks == 8 ? 1 : 0;
    gpus += j.tasks;
  }
  EXPECT_EQ(eight, 543);
  EXPECT_EQ(gpus, 8587u);
  EXPECT_EQ(t->front().work_units, 15486530);
  EXPECT_EQ(t->front().duration_ms, 70457371);
  EXPECT_EQ(t->back().model, "ResNet-50 (batch size 16)");
  EXPECT_EQ(t->back().submit_ms, 4508448000);
}

TEST(GavelTrace, AllFifteenVcsMergeInto15264Jobs) {
  std::vector<trace> traces;
  for (const auto& vc : kVcs) {
    auto t = read_vc(vc);
    ASSERT_THAT(t, IsOk()) << vc;
    traces.push_back(std::move(*t));
  }
  auto merged = merge_traces(traces);
  ASSERT_THAT(merged, IsOk());
  ASSERT_EQ(merged->size(), 15264u);
  std::uint64_t gpus = 0;
  std::int64_t steps = 0;
  std::map<std::uint32_t, int> by_size;
  for (const auto& j : *merged) {
    gpus += j.tasks;
    steps += *j.work_units;
    ++by_size[j.tasks];
  }
  EXPECT_EQ(gpus, 42192u);
  EXPECT_EQ(steps, 71547598694);
  EXPECT_EQ(by_size[1], 10480);
  EXPECT_EQ(by_size[8], 1916);
  EXPECT_EQ(by_size[64], 1);
  for (std::size_t i = 1; i < merged->size(); ++i) {
    ASSERT_LE((*merged)[i - 1].submit_ms, (*merged)[i].submit_ms);
  }
  EXPECT_EQ(merged->back().name, "7f04ca-971");
  EXPECT_EQ(merged->back().submit_ms, 10817570000);
}

TEST(GavelTrace, ThroughputTableSetsDuration) {
  gavel_options options;
  options.throughputs = {{"CycleGAN", 1, 2.5}, {"Transformer (batch size 128)", 1, 20.0}};
  options.fallback_steps_per_second = 0;
  const std::string text =
      "Transformer (batch size 128)\tcmd\t-step\t1\t1000\t1.5\t1\n"
      "CycleGAN\tcmd\t-n\t0\t10\t2.0004\t1\n";
  auto t = parse_gavel_trace(text, "x/vc1.trace", options);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 2u);
  // 1000 steps / 20 steps/s = 50 s; 10 / 2.5 = 4 s; 2.0004 s rounds to 2000 ms
  EXPECT_EQ((*t)[0].duration_ms, 50000);
  EXPECT_EQ((*t)[0].submit_ms, 1500);
  EXPECT_EQ((*t)[1].duration_ms, 4000);
  EXPECT_EQ((*t)[1].submit_ms, 2000);
  EXPECT_EQ((*t)[1].tenant, "vc1");
  // A job type with no entry and no fallback is an error naming the pair.
  auto missing = parse_gavel_trace("A3C\tc\t-n\t1\t5\t0\t2\n", "m.trace", options);
  EXPECT_THAT(missing, ErrorContains("m.trace:1: field 'job_type': no throughput for ('A3C', 2)"));
}

TEST(GavelTrace, ReadsNineAndTenFieldLayouts) {
  const std::string nine = "LM (batch size 20)\tcmd\t-n\t1\t300\t4\t1\t-1\t12.25\n";
  auto a = parse_gavel_trace(nine, "nine.trace");
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->front().tasks, 4u);
  EXPECT_EQ(a->front().submit_ms, 12250);
  const std::string ten = "A3C\tcmd\twd\t-n\t1\t300\t2\t1\t-1.000000\t7\n";
  auto b = parse_gavel_trace(ten, "ten.trace");
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->front().tasks, 2u);
  EXPECT_EQ(b->front().submit_ms, 7000);
  EXPECT_EQ(b->front().work_units, 300);
}

TEST(GavelTrace, SortsByArrivalKeepingTies) {
  const std::string text =
      "A\tc\t-n\t1\t1\t5\t1\n"
      "B\tc\t-n\t1\t1\t3\t1\n"
      "C\tc\t-n\t1\t1\t5\t1\n";
  auto t = parse_gavel_trace(text, "t", gavel_options{"vc", {}, 1.0});
  ASSERT_THAT(t, IsOk());
  // B (3 s) first, then A and C in file order.
  EXPECT_EQ((*t)[0].name, "vc-1");
  EXPECT_EQ((*t)[1].name, "vc-0");
  EXPECT_EQ((*t)[2].name, "vc-2");
  EXPECT_EQ((*t)[0].duration_ms, 1000);
}

TEST(GavelTrace, ErrorsNameFileLineAndField) {
  const std::string good = "A\tc\t-n\t1\t10\t0\t1\n";
  auto check = [&](const std::string& bad, const std::string& expected) {
    auto t = parse_gavel_trace(good + "\n" + bad + "\n", "vc.trace");
    EXPECT_THAT(t, HasErrc(errc::invalid_argument)) << bad;
    EXPECT_THAT(t, ErrorContains(expected)) << bad;
  };
  check("A\tc\t-n\t1\tten\t0\t1", "vc.trace:3: field 'total_steps': 'ten' is not an integer");
  check("A\tc\t-n\t1\t0\t0\t1", "vc.trace:3: field 'total_steps': 0 is outside");
  check("A\tc\t-n\t1\t10\t-1\t1", "vc.trace:3: field 'arrival_time'");
  check("A\tc\t-n\t1\t10\tsoon\t1", "vc.trace:3: field 'arrival_time': 'soon' is not a number");
  check("A\tc\t-n\t1\t10\t0\t0", "vc.trace:3: field 'scale_factor': 0 is outside [1, 100000]");
  check("A\tc\t-n\t2\t10\t0\t1", "vc.trace:3: field 'needs_data_dir'");
  check("\tc\t-n\t1\t10\t0\t1", "vc.trace:3: field 'job_type': is empty");
  check("A\tc\t-n\t1\t10", "vc.trace:3: field 'arrival_time': a Gavel trace line has 7, 9 or 10");
  check("A\tc\t-n\t1\t10\t0\t1\tx", "vc.trace:3: field 'arrival_time'");
  check("A\tc\tw\t-n\t1\t10\t1\t1\t-1\t0\tx", "vc.trace:3: field '#11'");
  check("A\tc\t-n\t1\t10\t1\t0\t-1\t0", "vc.trace:3: field 'priority_weight': must be positive");
  check("A\tc\t-n\t1\t99999999999999999\t0\t1", "vc.trace:3: field 'total_steps': the duration");
}

TEST(GavelTrace, RejectsBadOptions) {
  gavel_options options;
  options.fallback_steps_per_second = -1;
  EXPECT_THAT(parse_gavel_trace("", "s", options),
              ErrorContains("s:0: field 'fallback_steps_per_second'"));
  options.fallback_steps_per_second = 1;
  options.throughputs = {{"A", 1, 0.0}};
  EXPECT_THAT(parse_gavel_trace("", "s", options), ErrorContains("field 'throughputs'"));
}

TEST(GavelThroughputs, ReadsRunAloneRatesOfOneWorkerType) {
  const std::string json = R"json({
    "v100": {
      "('ResNet-18 (batch size 32)', 1)": {"null": 25.5, "('A3C', 1)": [1.0, 2.0]},
      "('A3C', 4)": {"null": 3},
      "('CycleGAN', 1)": {"null": 0.0}
    },
    "k80": {"('A3C', 1)": {"null": 1.5}}
  })json";
  auto t = parse_gavel_throughputs(json, "tp.json", "v100");
  ASSERT_THAT(t, IsOk());
  // CycleGAN's rate 0 is left out; sorted by job type.
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0], (gavel_throughput{"A3C", 4, 3.0}));
  EXPECT_EQ((*t)[1], (gavel_throughput{"ResNet-18 (batch size 32)", 1, 25.5}));
  EXPECT_THAT(parse_gavel_throughputs(json, "tp.json", "p100"), HasErrc(errc::not_found));
  EXPECT_THAT(parse_gavel_throughputs("{\"v100\": {\"A3C\": {\"null\": 1}}}", "tp.json", "v100"),
              ErrorContains("tp.json: v100.A3C: key is not"));
  EXPECT_THAT(
      parse_gavel_throughputs("{\"v100\": {\"('A', 1)\": {\"null\": -1}}}", "tp.json", "v100"),
      ErrorContains("must not be negative"));
  EXPECT_THAT(parse_gavel_throughputs("{\"v100\": {\"('A', 1)\": {}}}", "tp.json", "v100"),
              ErrorContains(".null: missing"));
  EXPECT_THAT(parse_gavel_throughputs("[1", "tp.json", "v100"), ErrorContains("tp.json: line 1"));
}

TEST(GavelTrace, ReportsAFileCutInsideItsLastLineOrEmpty) {
  // issue 17: a cut file was read without a word (a cut inside the arrival time or scale factor
  // changes the job silently).
  const std::string text = ::hetsched::testing::read_shared(vc_path("23dbec"));
  ASSERT_TRUE(text.ends_with("\t188011.000000\t8\n"));
  const auto cut = parse_gavel_trace(text.substr(0, text.size() - 1), "seed0/23dbec.trace");
  EXPECT_THAT(cut, HasErrc(errc::invalid_argument));
  EXPECT_THAT(cut, ErrorContains("seed0/23dbec.trace:9: field 'scale_factor': '8' ends the text "
                                 "without a line break"));
  const auto inside = parse_gavel_trace(text.substr(0, text.size() - 6), "seed0/23dbec.trace");
  EXPECT_THAT(inside, ErrorContains("seed0/23dbec.trace:9: field 'arrival_time': '188011.000' "
                                    "ends the text"));
  EXPECT_THAT(parse_gavel_trace("", "x.trace"),
              ErrorContains("x.trace:1: field 'job_type': no jobs (the text has no non-blank "
                            "line)"));
}

}  // namespace
}  // namespace hetsched::workload
