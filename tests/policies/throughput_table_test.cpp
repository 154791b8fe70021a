// SPDX-License-Identifier: MIT
// throughput_table: Gavel's measured tables read back with their published values, the own
// format, and the errors that name the offending entry.
#include <gtest/gtest.h>

#include <string>

#include <hetsched/policies/throughput_table.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;

const gpu_type k80("k80");
const gpu_type v100("v100");

const throughput_table& gavel_simulation_table() {
  static const throughput_table table = [] {
    auto t = parse_gavel_throughput_table(
        testing::read_shared("data/traces/gavel_throughputs/simulation_throughputs.json"));
    EXPECT_THAT(t, IsOk());
    return t ? *t : throughput_table{};
  }();
  return table;
}

TEST(GavelJobKey, ParsesNameAndScaleFactor) {
  auto k = parse_gavel_job_key("('ResNet-50 (batch size 64)', 4)");
  ASSERT_THAT(k, IsOk());
  EXPECT_EQ(*k, (job_type_key{"ResNet-50 (batch size 64)", 4}));
  EXPECT_EQ(to_string(*k), "('ResNet-50 (batch size 64)', 4)");
  EXPECT_EQ(*parse_gavel_job_key("(\"A3C\",1)"), (job_type_key{"A3C", 1}));
  EXPECT_THAT(parse_gavel_job_key("A3C"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(parse_gavel_job_key("('A3C', 0)"), ErrorContains("scale factor"));
  EXPECT_THAT(parse_gavel_job_key("('', 1)"), ErrorContains("empty name"));
  EXPECT_THAT(parse_gavel_job_key("('A3C, 1)"), ErrorContains("unterminated"));
  EXPECT_THAT(parse_gavel_job_key("('A3C', 1x)"), ErrorContains("\"('A3C', 1x)\""));
}

TEST(GavelThroughputTable, ReadsTheSimulationTable) {
  const auto& t = gavel_simulation_table();
  ASSERT_EQ(t.gpu_types().size(), 3u);
  EXPECT_EQ(t.gpu_types()[0], k80);
  EXPECT_EQ(t.gpu_types()[2], v100);
  // 83 job types (26 models x their scale factors) on each of the three types.
  EXPECT_EQ(t.job_types().size(), 83u);
  EXPECT_EQ(t.single_count(), 3u * 83u);
  // k80_unconsolidated lists 77 of them; the others 83.
  EXPECT_EQ(t.spread_count(), 83u + 83u + 77u);
  // 5,277 packed figures under k80, p100 and v100, each pair listed under both of its jobs (the
  // 5,061 under the *_unconsolidated keys are checked, not kept).
  EXPECT_EQ(t.packed_count(), 5277u);
}

TEST(GavelThroughputTable, ResNet50IsSevenTimesFasterOnV100ThanOnK80) {
  const auto& t = gavel_simulation_table();
  const auto on_v100 = t.single("ResNet-50 (batch size 64)", 1, v100);
  const auto on_k80 = t.single("ResNet-50 (batch size 64)", 1, k80);
  ASSERT_TRUE(on_v100 && on_k80);
  // simulation_throughputs.json: 4.3948 vs 0.6190 steps/s, ratio 7.10.
  EXPECT_NEAR(*on_v100, 4.394774823323071, 1e-12);
  EXPECT_NEAR(*on_k80, 0.6190282202246573, 1e-12);
  EXPECT_NEAR(*on_v100 / *on_k80, 7.0995, 1e-3);
  // ResNet-50 at batch size 128 cannot run on 2 K80s (0 in the table).
  EXPECT_EQ(t.single("ResNet-50 (batch size 128)", 2, k80), 0.0);
  EXPECT_EQ(t.single("ResNet-50 (batch size 64)", 3, v100), std::nullopt);
  EXPECT_EQ(t.single("ResNet-50 (batch size 64)", 1, gpu_type("A100")), std::nullopt);
}

TEST(GavelThroughputTable, PackedPairsReadBothWays) {
  const auto& t = gavel_simulation_table();
  // v100: ResNet-50 (bs 64) with A3C -> [2.9506, 1.6837]; the mirror lists A3C first.
  const auto p = t.packed("ResNet-50 (batch size 64)", "A3C", 1, v100);
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->self, 2.950603089845603, 1e-12);
  EXPECT_NEAR(p->peer, 1.6837215567338348, 1e-12);
  const auto mirror = t.packed("A3C", "ResNet-50 (batch size 64)", 1, v100);
  ASSERT_TRUE(mirror);
  EXPECT_EQ(mirror->self, p->peer);
  EXPECT_EQ(mirror->peer, p->self);
  // k80: ResNet-18 (bs 16) with itself -> 2.4082 each.
  const auto self = t.packed("ResNet-18 (batch size 16)", "ResNet-18 (batch size 16)", 1, k80);
  ASSERT_TRUE(self);
  EXPECT_NEAR(self->self, 2.4081728540044867, 1e-12);
  EXPECT_EQ(t.packed("A3C", "ResNet-18 (batch size 16)", 2, k80), std::nullopt);
}

TEST(GavelThroughputTable, SpreadFiguresComeFromUnconsolidatedKeys) {
  const auto& t = gavel_simulation_table();
  // ResNet-18 (bs 16) on 2 V100s: 100.14 steps/s on one server, 35.34 spread (2.83x slower).
  const auto together = t.single("ResNet-18 (batch size 16)", 2, v100);
  const auto spread = t.spread("ResNet-18 (batch size 16)", 2, v100);
  ASSERT_TRUE(together && spread);
  EXPECT_NEAR(*together / *spread, 2.834, 1e-3);
}

TEST(GavelThroughputTable, PhysicalClusterTableAlsoReads) {
  auto t = parse_gavel_throughput_table(
      testing::read_shared("data/traces/gavel_throughputs/physical_cluster_throughputs.json"));
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->single_count(), 3u * 83u);
}

TEST(GavelThroughputTable, RefusesBadInputNamingTheEntry) {
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {", "tp.json"),
              ErrorContains("tp.json: line 1, column 11:"));
  EXPECT_THAT(parse_gavel_throughput_table("[1]"), HasErrc(errc::invalid_argument));
  // A number beyond double's range (found by the fuzzer) is an error, not an exception.
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"null\": 1e400}}}"),
              ErrorContains("line 1, column 32: number 1e400 is outside the range of a double"));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"null\": -1}}}"),
              ErrorContains("v100.\"('A', 1)\".\"null\": throughput -1 is not a finite number"));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"null\": \"x\"}}}"),
              ErrorContains("expected a number"));
  // A duplicate key would otherwise be dropped silently by the JSON library.
  EXPECT_THAT(
      parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"null\": 1, \"null\": 2}}}"),
      ErrorContains("duplicate key \"null\" in object"));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"A\": {\"null\": 1}}}"),
              ErrorContains("job type key \"A\""));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {}, \"a100_unconsolidated\": {}}"),
              HasErrc(errc::not_found));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v 100\": {}}"), ErrorContains("bad GPU type"));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"('B', 2)\": [1, 2]}}}"),
              ErrorContains("packed peer of another scale factor"));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"('B', 1)\": [1]}}}"),
              ErrorContains("expected a list of two throughputs"));
  // The mirrored entry must agree.
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"('B', 1)\": [1, 2]}, "
                                           "\"('B', 1)\": {\"('A', 1)\": [2, 1.5]}}}"),
              ErrorContains("disagrees with the mirrored entry"));
  EXPECT_THAT(parse_gavel_throughput_table("{\"v100\": {\"('A', 1)\": {\"('B', 1)\": [1, 2]}, "
                                           "\"('B', 1)\": {\"('A', 1)\": [2, 1]}}}"),
              IsOk());
}

constexpr const char* own_table = R"({
  "gpu_types": ["A100", "H100"],
  "jobs": [
    {"name": "GPT-2", "throughputs": {"A100": 3.0, "H100": 7.5}},
    {"name": "GPT-2", "scale_factor": 8, "throughputs": {"A100": 20.0}, "spread": {"A100": 9.0}},
    {"name": "ResNet-50", "throughputs": {"A100": 30.0, "H100": 51.0}}
  ],
  "packed": [
    {"gpu_type": "A100", "jobs": ["GPT-2", "ResNet-50"], "throughputs": [2.0, 21.0]}
  ]
})";

TEST(OwnThroughputTable, ReadsJobsSpreadAndPacked) {
  auto t = parse_throughput_table(own_table);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->gpu_types().size(), 2u);
  EXPECT_EQ(t->single("GPT-2", 1, gpu_type("H100")), 7.5);
  EXPECT_EQ(t->single("GPT-2", 8, gpu_type("A100")), 20.0);
  EXPECT_EQ(t->spread("GPT-2", 8, gpu_type("A100")), 9.0);
  EXPECT_EQ(t->packed("ResNet-50", "GPT-2", 1, gpu_type("A100")), (packed_throughput{21.0, 2.0}));
  EXPECT_EQ(t->job_types(),
            (std::vector<job_type_key>{{"GPT-2", 1}, {"GPT-2", 8}, {"ResNet-50", 1}}));
}

TEST(OwnThroughputTable, RefusesBadInputNamingTheEntry) {
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "jobs": [
      {"name": "GPT-2", "throughputs": {"V100": 1}}]})"),
              ErrorContains("jobs[0] (GPT-2).throughputs.V100: single throughput of "
                            "('GPT-2', 1) on V100: unknown GPU type 'V100'"));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "jobs": [
      {"name": "GPT-2", "throughputs": {"V100": 1}}]})"),
              HasErrc(errc::not_found));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "jobs": [
      {"name": "GPT-2", "throughputs": {"A100": -2.5}}]})"),
              ErrorContains("jobs[0] (GPT-2).throughputs.A100: throughput -2.5"));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "jobs": [
      {"name": "GPT-2", "throughputs": {"A100": 1}},
      {"name": "GPT-2", "throughputs": {"A100": 2}}]})"),
              HasErrc(errc::already_exists));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100", "A100"]})"),
              HasErrc(errc::already_exists));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "jobs": [{"name": "x",
      "scale_factor": 0}]})"),
              ErrorContains("jobs[0].scale_factor: expected an integer"));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "job": []})"),
              ErrorContains("unknown member \"job\""));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "packed": [
      {"gpu_type": "A100", "jobs": ["a", "b"], "throughputs": [1, 2]},
      {"gpu_type": "A100", "jobs": ["b", "a"], "throughputs": [2, 1]}]})"),
              ErrorContains("packed[1]: packed throughputs of ('b', 1) with ('a', 1) on A100 "
                            "given twice"));
  EXPECT_THAT(parse_throughput_table(R"({"gpu_types": ["A100"], "packed": [
      {"gpu_type": "A100", "jobs": ["a"], "throughputs": [1, 2]}]})"),
              ErrorContains("packed[0].jobs: expected two job type names"));
  EXPECT_THAT(parse_throughput_table(R"({"jobs": []})"), ErrorContains("gpu_types"));
  EXPECT_THAT(parse_throughput_table("{\"gpu_types\": [\"A100\"], \"gpu_types\": []}"),
              ErrorContains("duplicate key \"gpu_types\" in object"));
}

TEST(ThroughputTable, SetRefusesNaNAndUndeclaredTypes) {
  throughput_table t;
  ASSERT_THAT(t.add_gpu_type(gpu_type("A100")), IsOk());
  EXPECT_THAT(t.add_gpu_type(gpu_type()), HasErrc(errc::invalid_argument));
  EXPECT_THAT(t.set_single({"x", 1}, gpu_type("A100"), std::nan("")),
              ErrorContains("single throughput of ('x', 1) on A100: throughput nan"));
  EXPECT_THAT(t.set_single({"x", 1}, gpu_type("B200"), 1.0), HasErrc(errc::not_found));
  EXPECT_THAT(t.set_packed({"x", 1}, {"y", 2}, gpu_type("A100"), {1, 1}),
              ErrorContains("scale factors differ"));
  EXPECT_TRUE(t.empty());
}

}  // namespace
}  // namespace hetsched
