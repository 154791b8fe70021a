// SPDX-License-Identifier: MIT
// Tests of parse_cluster_summaries() on the Helios and Acme summary tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <hetsched/workload/cluster_summary.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::workload {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::IsOk;
using ::hetsched::testing::read_shared;

TEST(ClusterSummary, ReadsHeliosClusters) {
  const std::string path = "data/traces/helios_summary/helios_cluster_summary.csv";
  auto rows = parse_cluster_summaries(read_shared(path), path);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 5u);
  const cluster_summary* venus = find_cluster(*rows, "Venus");
  ASSERT_NE(venus, nullptr);
  EXPECT_EQ(venus->gpus, 1022.0);
  EXPECT_EQ(venus->jobs, 246708.0);
  EXPECT_EQ(venus->gpu_jobs, 125303.0);
  EXPECT_DOUBLE_EQ(*venus->avg_gpu_run_s, 13040.598);
  EXPECT_DOUBLE_EQ(*venus->avg_gpu_queue_s, 1253.288);
  EXPECT_DOUBLE_EQ(*venus->avg_gpus_per_job, 6.736);
  EXPECT_EQ(venus->median_gpu_run_s, 204.0);
  EXPECT_EQ(venus->median_gpus_per_job, 1.0);
  EXPECT_DOUBLE_EQ(*venus->gpu_fail_rate, 0.202);
  EXPECT_FALSE(venus->max_gpus_per_job.has_value());  // Helios has no max column
  const cluster_summary* earth = find_cluster(*rows, "Earth");
  ASSERT_NE(earth, nullptr);
  EXPECT_EQ(earth->gpus, 997.0);
  EXPECT_DOUBLE_EQ(*earth->avg_gpus_per_job, 2.101);
  EXPECT_EQ(rows->back().cluster, "total");
  EXPECT_EQ(rows->back().gpus, 6220.0);
  EXPECT_EQ(find_cluster(*rows, "Mars"), nullptr);
}

TEST(ClusterSummary, ReadsAcmeClustersWithEmptyCells) {
  const std::string path = "data/traces/acme_summary/cluster_summary.csv";
  auto rows = parse_cluster_summaries(read_shared(path), path);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 5u);
  const cluster_summary* philly = find_cluster(*rows, "Philly");
  ASSERT_NE(philly, nullptr);
  EXPECT_EQ(philly->gpu_jobs, 112956.0);
  EXPECT_DOUBLE_EQ(*philly->avg_gpu_run_s, 18006.055);
  EXPECT_DOUBLE_EQ(*philly->avg_gpu_queue_s, 3760.604);
  EXPECT_DOUBLE_EQ(*philly->avg_gpus_per_job, 1.928);
  EXPECT_EQ(philly->median_gpu_run_s, 874.0);
  EXPECT_EQ(philly->max_gpus_per_job, 128.0);
  EXPECT_EQ(philly->max_gpu_run_s, 4240676.0);
  EXPECT_FALSE(philly->gpus.has_value());  // Acme has no gpu_num column
  const cluster_summary* pai = find_cluster(*rows, "PAI");
  ASSERT_NE(pai, nullptr);
  EXPECT_DOUBLE_EQ(*pai->avg_gpus_per_job, 0.683);
  EXPECT_DOUBLE_EQ(*pai->median_gpus_per_job, 0.5);
  EXPECT_FALSE(pai->gpu_complete_rate.has_value());  // empty cell
  EXPECT_EQ(find_cluster(*rows, "Seren")->max_gpus_per_job, 1024.0);
}

TEST(ClusterSummary, ErrorsNameFileLineAndField) {
  EXPECT_THAT(parse_cluster_summaries("name,gpu_num\n", "s.csv"),
              ErrorContains("s.csv:1: field 'id': column missing from the header"));
  EXPECT_THAT(parse_cluster_summaries("id,gpu_num\nA,lots\n", "s.csv"),
              ErrorContains("s.csv:2: field 'gpu_num': 'lots' is not a finite number"));
  EXPECT_THAT(parse_cluster_summaries("id,gpu_num\nA,-3\n", "s.csv"),
              ErrorContains("s.csv:2: field 'gpu_num': must not be negative"));
  EXPECT_THAT(parse_cluster_summaries("id,gpu_num\nA,nan\n", "s.csv"),
              ErrorContains("s.csv:2: field 'gpu_num': 'nan' is not a finite number"));
  EXPECT_THAT(parse_cluster_summaries("id,gpu_num\nA,1\nA,2\n", "s.csv"),
              ErrorContains("s.csv:3: field 'id': 'A' is used twice"));
}

TEST(ClusterSummary, ReportsAFileCutInsideItsLastLineOrAfterItsHeader) {
  // issue 17: a cut file was read without a word.
  const std::string text = read_shared("data/traces/helios_summary/helios_cluster_summary.csv");
  ASSERT_TRUE(text.ends_with(",7288334702.0\n"));
  EXPECT_THAT(parse_cluster_summaries(text.substr(0, text.size() - 3), "helios.csv"),
              ErrorContains("helios.csv:6: field 'fail_gpu_time': '7288334702' ends the text "
                            "without a line break"));
  EXPECT_THAT(parse_cluster_summaries("id,gpu_num\n", "s.csv"),
              ErrorContains("s.csv:2: field 'id': no clusters after the header"));
}

}  // namespace
}  // namespace hetsched::workload
