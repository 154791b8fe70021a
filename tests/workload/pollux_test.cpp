// SPDX-License-Identifier: MIT
// Tests of parse_pollux_workload() on the Pollux OSDI'21 workloads and on malformed rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include <hetsched/workload/pollux.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::workload {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

result<trace> read_workload(const std::string& relative) {
  const std::string path = "data/traces/pollux_osdi21/" + relative;
  return parse_pollux_workload(::hetsched::testing::read_shared(path), path);
}

TEST(PolluxWorkload, ReadsWorkload6) {
  auto t = read_workload("workloads/workload-6.csv");
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 160u);
  const trace_job& first = t->front();
  EXPECT_EQ(first.name, "cifar10-0");
  EXPECT_EQ(first.submit_ms, 53000);
  EXPECT_EQ(first.model, "cifar10");
  EXPECT_EQ(first.tasks, 6u);
  EXPECT_EQ(first.gpus_per_task, 1u);
  EXPECT_EQ(first.work_units, 100);
  // ceil(1,800,000 ms / 6 replicas)
  EXPECT_EQ(first.duration_ms, 300000);
  const trace_job& last = t->back();
  EXPECT_EQ(last.name, "cifar10-159");
  EXPECT_EQ(last.submit_ms, 28189000);
  EXPECT_EQ(last.tasks, 8u);
  std::map<std::string, int> apps;
  std::uint64_t gpus = 0;
  for (const auto& j : *t) {
    ++apps[j.model];
    gpus += j.tasks;
  }
  // Composition from the reference: cifar10 67, ncf 54, deepspeech2 16, bert 15, yolov3 5,
  // imagenet 3; 1,134 GPUs requested in total.
  EXPECT_EQ(apps["cifar10"], 67);
  EXPECT_EQ(apps["ncf"], 54);
  EXPECT_EQ(apps["deepspeech2"], 16);
  EXPECT_EQ(apps["bert"], 15);
  EXPECT_EQ(apps["yolov3"], 5);
  EXPECT_EQ(apps["imagenet"], 3);
  EXPECT_EQ(gpus, 1134u);
}

TEST(PolluxWorkload, ReadsEveryLoadVariant) {
  const std::map<std::string, std::size_t> sizes = {
      {"workloads-0.5", 80}, {"workloads", 160}, {"workloads-1.5", 240}, {"workloads-2.0", 320}};
  for (const auto& [dir, size] : sizes) {
    for (int w = 1; w <= 8; ++w) {
      auto t = read_workload(dir + "/workload-" + std::to_string(w) + ".csv");
      ASSERT_THAT(t, IsOk()) << dir << " " << w;
      EXPECT_EQ(t->size(), size) << dir << " " << w;
    }
  }
  auto t = read_workload("workloads-2.0/workload-8.csv");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->front().name, "ncf-0");
  EXPECT_EQ(t->front().submit_ms, 35000);
  EXPECT_EQ(t->front().work_units, 10);
  EXPECT_EQ(t->back().name, "deepspeech2-319");
  EXPECT_EQ(t->back().submit_ms, 28677000);
  // ceil(11,384,000 ms / 8 replicas)
  EXPECT_EQ(t->back().duration_ms, 1423000);
}

TEST(PolluxWorkload, CustomApplicationTable) {
  pollux_options options;
  options.tenant = "lab";
  options.applications = {{"toy", 3, 1000}};
  auto t = parse_pollux_workload("batch_size,num_replicas,time,application,name\n64,3,0.5,toy,j\n",
                                 "w.csv", options);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ(t->front().tenant, "lab");
  EXPECT_EQ(t->front().submit_ms, 500);
  EXPECT_EQ(t->front().duration_ms, 334);  // ceil(1000 / 3)
  EXPECT_EQ(t->front().work_units, 3);
  options.applications = {{"toy", 0, 1000}};
  EXPECT_THAT(parse_pollux_workload("", "w.csv", options),
              ErrorContains("w.csv:0: field 'applications': entry 'toy'"));
}

TEST(PolluxWorkload, ErrorsNameFileLineAndField) {
  const std::string header = "name,time,application,num_replicas,batch_size\n";
  auto check = [&](const std::string& text, const std::string& expected) {
    auto t = parse_pollux_workload(text, "w.csv");
    EXPECT_THAT(t, HasErrc(errc::invalid_argument)) << text;
    EXPECT_THAT(t, ErrorContains(expected)) << text;
  };
  check("", "w.csv:1: field 'name': no header line");
  check("name,time,app,num_replicas,batch_size\n",
        "w.csv:1: field 'application': column missing from the header");
  check(header + "a,1,cifar10,1,32\na,2,cifar10,1,32\n",
        "w.csv:3: field 'name': 'a' is used twice (first on line 2)");
  check(header + "a,x,cifar10,1,32\n", "w.csv:2: field 'time': 'x' is not a number of seconds");
  check(header + "a,1,gpt5,1,32\n", "w.csv:2: field 'application': unknown application 'gpt5'");
  check(header + "a,1,cifar10,0,32\n", "w.csv:2: field 'num_replicas': 0 is outside");
  check(header + "a,1,cifar10,1,0\n", "w.csv:2: field 'batch_size': 0 is outside");
  check(header + "a,1,cifar10,1\n", "w.csv:2: field 'batch_size': missing (the line has 4 of 5");
  check(header + "a,1,cifar10,1,2,3\n", "w.csv:2: field '#6': extra field");
  check(header + ",1,cifar10,1,2\n", "w.csv:2: field 'name': is empty");
}

TEST(PolluxWorkload, ReportsAFileCutInsideItsLastLine) {
  // issue 17: workload-6.csv cut inside its last field read batch_size 2048 as 204 without a
  // word; every line of a Pollux workload ends with a line break, so a last line without one is
  // a cut.
  const std::string path = "data/traces/pollux_osdi21/workloads/workload-6.csv";
  const std::string text = ::hetsched::testing::read_shared(path);
  ASSERT_TRUE(text.ends_with("cifar10-159,28189,cifar10,8,2048\n"));
  const auto cut = parse_pollux_workload(text.substr(0, text.size() - 2), "workload-6.csv");
  EXPECT_THAT(cut, HasErrc(errc::invalid_argument));
  EXPECT_THAT(cut, ErrorContains("workload-6.csv:161: field 'batch_size': '204' ends the text "
                                 "without a line break: the file looks cut inside this line"));
  // Cut before the last field: the last field present is named.
  const auto earlier = parse_pollux_workload(text.substr(0, text.size() - 6), "workload-6.csv");
  EXPECT_THAT(earlier,
              ErrorContains("workload-6.csv:161: field 'num_replicas': '8' ends the text"));
  // Cut inside the header, and right after it (a cut at that line boundary leaves no jobs).
  EXPECT_THAT(parse_pollux_workload("name,time,application,num_replicas,batch", "w.csv"),
              ErrorContains("w.csv:1: field 'batch': 'batch' ends the text without a line break"));
  EXPECT_THAT(
      parse_pollux_workload("name,time,application,num_replicas,batch_size\n", "w.csv"),
      ErrorContains("w.csv:2: field 'name': no jobs after the header (an empty table, or a file "
                    "cut after its header)"));
  // CRLF files cut between '\r' and '\n' are cut too.
  EXPECT_THAT(parse_pollux_workload(
                  "name,time,application,num_replicas,batch_size\r\na,1,cifar10,1,32\r", "w.csv"),
              ErrorContains("w.csv:2: field 'batch_size': '32' ends the text"));
}

TEST(PolluxWorkload, BoundsTheApplicationGpuTime) {
  // issue 17: gpu_ms near INT64_MAX overflowed ceil(gpu_ms / replicas) into a negative duration.
  const std::string text = "name,time,application,num_replicas,batch_size\na,1,big,3,32\n";
  pollux_options options;
  options.applications = {{"big", 1, std::numeric_limits<std::int64_t>::max()}};
  EXPECT_THAT(parse_pollux_workload(text, "w.csv", options),
              ErrorContains("w.csv:0: field 'applications': entry 'big' needs a unique non-empty "
                            "name, epochs >= 1 and gpu_ms in [1, 10000000000000]"));
  options.applications = {{"big", 1, 10'000'000'000'000}};
  const auto t = parse_pollux_workload(text, "w.csv", options);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->front().duration_ms, 3'333'333'333'334);  // ceil(10^13 / 3)
}

}  // namespace
}  // namespace hetsched::workload
