// SPDX-License-Identifier: MIT
// Tests of the VC quota readers on the Philly, Venus and Earth tables and on malformed input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include <hetsched/workload/vc_quota.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::workload {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::hetsched::testing::read_shared;

TEST(VcNodeTable, ReadsPhillyVcs) {
  const std::string path = "data/traces/philly_vc_config/philly_vc_node_num.csv";
  auto t = parse_vc_node_table(read_shared(path), path, vc_node_options{8, "V100"});
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->vcs.size(), 11u);
  EXPECT_EQ(t->vcs.front(), (vc_quota{"6214e9", 512, 64}));
  EXPECT_EQ(t->vcs.back(), (vc_quota{"0e4a51", 256, 32}));
  ASSERT_NE(t->find("ed69ec"), nullptr);
  EXPECT_EQ(t->find("ed69ec")->gpus, 64u);
  EXPECT_EQ(t->find("nope"), nullptr);
  // 352 nodes of 8 GPUs.
  EXPECT_EQ(t->total_gpus(), 2816u);
  EXPECT_EQ(t->gpus_per_node, 8u);
  EXPECT_EQ(t->gpu_type, "V100");
}

TEST(VcNodeTable, ReadsVenusVcsWithAnEmptyHeaderCell) {
  const std::string path = "data/traces/helios_summary/Venus_Sept_vc_config_nodes.csv";
  auto t = parse_vc_node_table(read_shared(path), path);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->vcs.size(), 15u);
  EXPECT_EQ(t->vcs.front(), (vc_quota{"vcEwI", 72, 9}));
  EXPECT_EQ(t->vcs.back(), (vc_quota{"vcgkz", 8, 1}));
  EXPECT_EQ(t->find("vcJsw")->nodes, 32u);
  // 135 nodes of 8 GPUs.
  EXPECT_EQ(t->total_gpus(), 1080u);
}

TEST(VcNodeTable, ErrorsNameFileLineAndField) {
  auto check = [&](const std::string& text, const std::string& expected) {
    auto t = parse_vc_node_table(text, "vc.csv");
    EXPECT_THAT(t, HasErrc(errc::invalid_argument)) << text;
    EXPECT_THAT(t, ErrorContains(expected)) << text;
  };
  check("", "vc.csv:1: field 'vc': no header line");
  check("a,b,c\n", "vc.csv:1: field 'header': a VC table has two columns");
  check("vc,node num\nx,-1\n", "vc.csv:2: field 'node num': -1 is outside [0, 1000000]");
  check(",num\nx\n", "vc.csv:2: field 'num': missing");
  check("vc,n\nx,1\nx,2\n", "vc.csv:3: field 'vc': 'x' is used twice (first on line 2)");
  check(",\n,2\n", "vc.csv:2: field 'vc': is empty");
  EXPECT_THAT(parse_vc_node_table("vc,n\n", "vc.csv", vc_node_options{0, ""}),
              ErrorContains("vc.csv:0: field 'gpus_per_node'"));
}

TEST(VcGpuHistory, ReadsEarthDailyQuotas) {
  const std::string path = "data/traces/helios_summary/Earth_vc_gpu_number_daily.csv";
  auto h = parse_vc_gpu_history(read_shared(path), path);
  ASSERT_THAT(h, IsOk());
  ASSERT_EQ(h->vcs.size(), 25u);
  EXPECT_EQ(h->vcs.front(), "vchbv");
  EXPECT_EQ(h->vcs.back(), "vcp4O");
  ASSERT_EQ(h->days.size(), 181u);
  EXPECT_EQ(h->days.front().date, "2020-04-01");
  EXPECT_EQ(h->days.back().date, "2020-09-28");
  auto first = h->quota_on("2020-04-01");
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->total_gpus(), 784u);
  EXPECT_EQ(first->find("vchbv")->gpus, 112u);
  EXPECT_EQ(first->find("vcVP5")->gpus, 0u);
  EXPECT_FALSE(first->find("vchbv")->nodes.has_value());
  auto last = h->latest();
  ASSERT_THAT(last, IsOk());
  EXPECT_EQ(last->total_gpus(), 1208u);
  EXPECT_EQ(last->find("vchbv")->gpus, 64u);
  EXPECT_EQ(last->find("vcVP5")->gpus, 176u);
  EXPECT_THAT(h->quota_on("2021-01-01"), HasErrc(errc::not_found));
}

TEST(VcGpuHistory, ErrorsNameFileLineAndField) {
  auto check = [&](const std::string& text, const std::string& expected) {
    auto h = parse_vc_gpu_history(text, "e.csv");
    EXPECT_THAT(h, HasErrc(errc::invalid_argument)) << text;
    EXPECT_THAT(h, ErrorContains(expected)) << text;
  };
  check("", "e.csv:1: field 'date': no header line");
  check("day,a\n", "e.csv:1: field 'day': the first column must be named 'date'");
  check("date,a,a\n", "e.csv:1: field 'a': 'a' is used twice");
  check("date,a,,total\n", "e.csv:1: field '#3': empty VC name");
  check("date,a,b,total\nd1,1,2,4\n",
        "e.csv:2: field 'total': 4 differs from the sum of the VCs, 3");
  check("date,a,b\nd1,1,x\n", "e.csv:2: field 'b': 'x' is not an integer");
  check("date,a,b\nd1,1,2\nd1,1,2\n", "e.csv:3: field 'date': 'd1' is used twice");
  check("date,a,b\nd1,1\n", "e.csv:2: field 'b': missing");
  vc_gpu_history empty;
  EXPECT_THAT(empty.latest(), HasErrc(errc::invalid_argument));
}

TEST(VcGpuHistory, DaySelectors) {
  auto h = parse_vc_gpu_history("date,a,b,total\nd1,8,0,8\nd2,16,3,19\nd3,4,1,5\n", "s.csv");
  ASSERT_THAT(h, IsOk());
  const auto gpus = [&](const vc_day_selector& day) {
    auto t = h->select(day);
    EXPECT_THAT(t, IsOk());
    return std::pair<std::uint32_t, std::uint32_t>{t->find("a")->gpus, t->find("b")->gpus};
  };
  EXPECT_EQ(gpus({vc_day_selector::kind::latest, ""}), std::make_pair(4u, 1u));
  EXPECT_EQ(gpus({vc_day_selector::kind::date, "d2"}), std::make_pair(16u, 3u));
  EXPECT_EQ(gpus({vc_day_selector::kind::max, ""}), std::make_pair(16u, 3u));
  // Means 28/3 = 9.33 -> 9 and 4/3 = 1.33 -> 1, half up.
  EXPECT_EQ(gpus({vc_day_selector::kind::mean, ""}), std::make_pair(9u, 1u));
  auto h2 = parse_vc_gpu_history("date,a\nd1,1\nd2,2\n", "s.csv");
  ASSERT_THAT(h2, IsOk());
  EXPECT_EQ(h2->select({vc_day_selector::kind::mean, ""})->find("a")->gpus, 2u);  // 1.5 -> 2
  EXPECT_THAT(h->select({vc_day_selector::kind::date, "d9"}), HasErrc(errc::not_found));
  vc_gpu_history empty;
  EXPECT_THAT(empty.select({vc_day_selector::kind::max, ""}), HasErrc(errc::invalid_argument));

  EXPECT_EQ(*parse_vc_day_selector("latest"), (vc_day_selector{vc_day_selector::kind::latest, ""}));
  EXPECT_EQ(*parse_vc_day_selector("max"), (vc_day_selector{vc_day_selector::kind::max, ""}));
  EXPECT_EQ(*parse_vc_day_selector("mean"), (vc_day_selector{vc_day_selector::kind::mean, ""}));
  EXPECT_EQ(*parse_vc_day_selector("2020-06-01"),
            (vc_day_selector{vc_day_selector::kind::date, "2020-06-01"}));
  EXPECT_THAT(parse_vc_day_selector(""), HasErrc(errc::invalid_argument));
}

TEST(VcQuotaFile, EitherKindByItsHeader) {
  auto daily = parse_vc_quota_file("date,a,b\nd1,8,0\nd2,16,3\n", "d.csv",
                                   {vc_day_selector::kind::date, "d1"});
  ASSERT_THAT(daily, IsOk());
  EXPECT_EQ(daily->find("a")->gpus, 8u);
  EXPECT_EQ(daily->gpus_per_node, 0u);
  auto nodes = parse_vc_quota_file("vc,nodes\na,2\nb,1\n", "n.csv");
  ASSERT_THAT(nodes, IsOk());
  EXPECT_EQ(nodes->find("a")->gpus, 16u);
  EXPECT_EQ(nodes->find("a")->nodes, 2u);
  EXPECT_THAT(parse_vc_quota_file("date,a\nd1,1\n", "d.csv", {vc_day_selector::kind::date, "x"}),
              ErrorContains("d.csv: no quota for date 'x'"));
}

TEST(VcQuotaFile, HeliosEarthMaxAndMean) {
  const std::string text =
      testing::read_shared("data/traces/helios_summary/Earth_vc_gpu_number_daily.csv");
  auto latest = parse_vc_quota_file(text, "Earth");
  ASSERT_THAT(latest, IsOk());
  EXPECT_EQ(latest->total_gpus(), 1208u);
  EXPECT_EQ(latest->vcs.size(), 25u);
  auto day = parse_vc_quota_file(text, "Earth", *parse_vc_day_selector("2020-05-31"));
  ASSERT_THAT(day, IsOk());
  EXPECT_EQ(day->total_gpus(), 856u);
  auto most = parse_vc_quota_file(text, "Earth", *parse_vc_day_selector("max"));
  ASSERT_THAT(most, IsOk());
  EXPECT_EQ(most->find("vchbv")->gpus, 112u);
  EXPECT_EQ(most->find("vc6YE")->gpus, 216u);
  EXPECT_EQ(most->total_gpus(), 2504u);
  auto mean = parse_vc_quota_file(text, "Earth", *parse_vc_day_selector("mean"));
  ASSERT_THAT(mean, IsOk());
  // vchbv: 12,288 GPU-days over 181 days = 67.9 -> 68; vcvcM 480 / 181 = 2.65 -> 3.
  EXPECT_EQ(mean->find("vchbv")->gpus, 68u);
  EXPECT_EQ(mean->find("vc6YE")->gpus, 201u);
  EXPECT_EQ(mean->find("vcvcM")->gpus, 3u);
  EXPECT_EQ(mean->total_gpus(), 999u);
}

TEST(VcQuotaTables, ReportAFileCutInsideItsLastLineOrAfterItsHeader) {
  // issue 17: Philly's table cut inside its last line read VC 0e4a51 with 3 nodes, not 32.
  const std::string philly = read_shared("data/traces/philly_vc_config/philly_vc_node_num.csv");
  ASSERT_TRUE(philly.ends_with("0e4a51,32\n"));
  const auto cut = parse_vc_node_table(philly.substr(0, philly.size() - 2), "philly.csv");
  EXPECT_THAT(cut, HasErrc(errc::invalid_argument));
  EXPECT_THAT(cut, ErrorContains("philly.csv:12: field 'node num': '3' ends the text without a "
                                 "line break: the file looks cut inside this line"));
  EXPECT_THAT(parse_vc_node_table("vc,node_num\n", "vc.csv"),
              ErrorContains("vc.csv:2: field 'vc': no VCs after the header"));
  const std::string earth = read_shared("data/traces/helios_summary/Earth_vc_gpu_number_daily.csv");
  ASSERT_TRUE(earth.ends_with(",40,0,1208\n"));
  EXPECT_THAT(parse_vc_gpu_history(earth.substr(0, earth.size() - 3), "earth.csv"),
              ErrorContains("earth.csv:182: field 'total': '12' ends the text without a line "
                            "break"));
  EXPECT_THAT(parse_vc_gpu_history("date,a,total\n", "e.csv"),
              ErrorContains("e.csv:2: field 'date': no days after the header"));
  // Through parse_vc_quota_file too (the simulator's --vc-quota).
  EXPECT_THAT(parse_vc_quota_file("date,a,total\nd1,1,1", "e.csv", vc_day_selector{}, {}),
              ErrorContains("e.csv:2: field 'total': '1' ends the text"));
}

}  // namespace
}  // namespace hetsched::workload
