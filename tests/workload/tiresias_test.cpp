// SPDX-License-Identifier: MIT
// Tests of parse_tiresias_jobs() and parse_tiresias_cluster_spec() on the Tiresias simulator's
// sample files and on malformed rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <hetsched/workload/tiresias.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::workload {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::hetsched::testing::read_shared;

TEST(TiresiasJobs, Reads60JobSample) {
  const std::string path = "data/traces/tiresias_sim/60_job.csv";
  auto t = parse_tiresias_jobs(read_shared(path), path);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 60u);
  const trace_job& first = t->front();
  EXPECT_EQ(first.name, "0");
  EXPECT_EQ(first.tasks, 1u);
  EXPECT_EQ(first.submit_ms, 0);
  EXPECT_EQ(first.work_units, 606);
  EXPECT_EQ(first.model, "vgg19");
  EXPECT_EQ(first.duration_ms, 164000);
  const trace_job& last = t->back();
  EXPECT_EQ(last.name, "59");
  EXPECT_EQ(last.submit_ms, 1779000);
  EXPECT_EQ(last.model, "inception3");
  EXPECT_EQ(last.duration_ms, 122000);
  std::map<std::uint32_t, int> by_gpus;
  std::int64_t duration = 0;
  std::int64_t gpu_ms = 0;
  for (const auto& j : *t) {
    ++by_gpus[j.tasks];
    duration += j.duration_ms;
    gpu_ms += j.duration_ms * j.tasks;
  }
  // GPUs: 1 x30, 2 x10, 4 x10, 8 x10; durations sum to 10,705 s, GPU time to 26,624 GPU-s.
  EXPECT_EQ(by_gpus, (std::map<std::uint32_t, int>{{1, 30}, {2, 10}, {4, 10}, {8, 10}}));
  EXPECT_EQ(duration, 10705000);
  EXPECT_EQ(gpu_ms, 26624000);
}

TEST(TiresiasJobs, ErrorsNameFileLineAndField) {
  const std::string header =
      "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\r\n";
  auto check = [&](const std::string& text, const std::string& expected) {
    auto t = parse_tiresias_jobs(text, "j.csv");
    EXPECT_THAT(t, HasErrc(errc::invalid_argument)) << text;
    EXPECT_THAT(t, ErrorContains(expected)) << text;
  };
  check(header + "1,1,0,10,m,0,0\r\n", "j.csv:2: field 'duration': '0' s is outside");
  check(header + "1,1,0,10,m,0.0004,0\r\n", "j.csv:2: field 'duration'");
  check(header + "1,1,-5,10,m,1,0\r\n", "j.csv:2: field 'submit_time'");
  check(header + "1,100001,0,10,m,1,0\r\n", "j.csv:2: field 'num_gpu': 100001 is outside");
  check(header + "1,1,0,-1,m,1,0\r\n", "j.csv:2: field 'iterations'");
  check(header + "1,1,0,1,,1,0\r\n", "j.csv:2: field 'model_name': is empty");
  check(header + "1,1,0,1,m,1,x\r\n", "j.csv:2: field 'interval'");
  check(header + "\r\n1,1,0,1,m,1,0\r\n1,1,0,1,m,1,0\r\n",
        "j.csv:4: field 'job_id': '1' is used twice (first on line 3)");
}

TEST(TiresiasJobs, AcceptsDecimalAndExponentSeconds) {
  auto t = parse_tiresias_jobs(
      "job_id,num_gpu,submit_time,iterations,model_name,duration,interval,extra\n"
      "a,2,1.2345,7,m,1e2,0,whatever\n"
      "b,1,0.5e-3,7,m,.25,0,x\n",
      "j.csv", tiresias_options{"t"});
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 2u);
  // b arrives first (0.0005 s rounds to 1 ms); 1.2345 s rounds half up to 1235 ms.
  EXPECT_EQ((*t)[0].name, "b");
  EXPECT_EQ((*t)[0].submit_ms, 1);
  EXPECT_EQ((*t)[0].duration_ms, 250);
  EXPECT_EQ((*t)[1].submit_ms, 1235);
  EXPECT_EQ((*t)[1].duration_ms, 100000);
  EXPECT_EQ((*t)[1].tasks, 2u);
  EXPECT_EQ((*t)[1].tenant, "t");
}

TEST(TiresiasJobs, RejectsMalformedSeconds) {
  const std::string header = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";
  for (const std::string bad :
       {"1e", "1.2.3", "--1", "0x10", "", "1e+", "inf", "nan", ".", "+-1"}) {
    auto t = parse_tiresias_jobs(header + "a,1," + bad + ",1,m,1,0\n", "j.csv");
    EXPECT_THAT(
        t, ErrorContains("j.csv:2: field 'submit_time': '" + bad + "' is not a number of seconds"))
        << bad;
  }
  // Too large for int64 milliseconds, or above the 10^13 ms limit.
  for (const std::string big : {"1e400", "99999999999999999999", "10000000000.001"}) {
    auto t = parse_tiresias_jobs(header + "a,1," + big + ",1,m,1,0\n", "j.csv");
    EXPECT_THAT(t, ErrorContains("j.csv:2: field 'submit_time'")) << big;
  }
  // Tiny and long-mantissa values round exactly: 1e-400 s is 0 ms; 0.0015 s rounds up to 2 ms.
  auto t = parse_tiresias_jobs(header +
                                   "a,1,1e-400,1,m,0.0015,0\n"
                                   "b,1,0.000000000000000000000000000000000000001,1,m,"
                                   "2.49949999999999999999999999999999999999999,0\n",
                               "j.csv");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ((*t)[0].submit_ms, 0);
  EXPECT_EQ((*t)[0].duration_ms, 2);
  EXPECT_EQ((*t)[1].submit_ms, 0);
  EXPECT_EQ((*t)[1].duration_ms, 2499);
}

TEST(TiresiasClusterSpec, ReadsTheFourSpecs) {
  const std::map<std::string, tiresias_cluster_spec> expected = {
      {"cluster_spec.csv", {1, 16, 4, 128, 254}},
      {"n32g4.csv", {1, 32, 4, 40, 256}},
      {"n160g8.csv", {5, 32, 8, 128, 256}},
      {"n256g8.csv", {8, 32, 8, 64, 256}},
  };
  for (const auto& [file, spec] : expected) {
    const std::string path = "data/traces/tiresias_sim/" + file;
    auto s = parse_tiresias_cluster_spec(read_shared(path), path);
    ASSERT_THAT(s, IsOk()) << file;
    EXPECT_EQ(*s, spec) << file;
  }
}

TEST(TiresiasClusterSpec, RejectsMalformedSpecs) {
  const std::string header =
      "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n";
  EXPECT_THAT(parse_tiresias_cluster_spec(header, "c.csv"),
              ErrorContains("c.csv:2: field 'num_switch': no data row"));
  EXPECT_THAT(parse_tiresias_cluster_spec(header + "1,2,0,4,5\n", "c.csv"),
              ErrorContains("c.csv:2: field 'num_gpu_p_node': 0 is outside"));
  EXPECT_THAT(parse_tiresias_cluster_spec(header + "1,2,3,4,5\n1,2,3,4,5\n", "c.csv"),
              ErrorContains("c.csv:3: field 'num_switch': a cluster spec has one data row"));
}

TEST(TiresiasJobs, ReportsAFileCutInsideItsLastLineOrAfterItsHeader) {
  // issue 17: a cut file was read without a word.
  const std::string text = read_shared("data/traces/tiresias_sim/60_job.csv");
  ASSERT_TRUE(text.ends_with(",122,33\r\n"));
  const auto cut = parse_tiresias_jobs(text.substr(0, text.size() - 3), "60_job.csv");
  EXPECT_THAT(cut, HasErrc(errc::invalid_argument));
  EXPECT_THAT(cut, ErrorContains("60_job.csv:61: field 'interval': '3' ends the text without a "
                                 "line break"));
  EXPECT_THAT(parse_tiresias_jobs(
                  "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n", "j.csv"),
              ErrorContains("j.csv:2: field 'job_id': no jobs after the header"));
}

TEST(TiresiasClusterSpec, AcceptsTheLastLineWithoutLineBreakAsPublished) {
  // The published cluster specs end without a line break: no cut is reported there.
  const std::string text = read_shared("data/traces/tiresias_sim/cluster_spec.csv");
  ASSERT_FALSE(text.ends_with("\n"));
  EXPECT_THAT(parse_tiresias_cluster_spec(text, "cluster_spec.csv"), IsOk());
}

}  // namespace
}  // namespace hetsched::workload
