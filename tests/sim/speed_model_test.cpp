// SPDX-License-Identifier: MIT
// speed_model: each factor against Gavel's measured table and the documented defaults, the
// disabled model, parameter validation, and placement_locality() on real node templates.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <hetsched/policies/throughput_table.hpp>
#include <hetsched/sim/speed_model.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;

const gpu_type k80("k80");
const gpu_type v100("v100");
constexpr const char* resnet50 = "ResNet-50 (batch size 64)";
constexpr const char* resnet18 = "ResNet-18 (batch size 16)";

const throughput_table& gavel() {
  static const throughput_table table = [] {
    auto t = parse_gavel_throughput_table(
        testing::read_shared("data/traces/gavel_throughputs/simulation_throughputs.json"));
    EXPECT_THAT(t, IsOk());
    return t ? *t : throughput_table{};
  }();
  return table;
}

speed_model enabled_model(bool with_table = true) {
  speed_model_params p;
  p.enabled = true;
  auto m = speed_model::make(p, with_table ? gavel() : throughput_table{});
  EXPECT_THAT(m, IsOk());
  return *m;
}

TEST(SpeedModel, DisabledGivesOneForEveryQuery) {
  const speed_model off;
  EXPECT_FALSE(off.enabled());
  const speed_query q{resnet50, k80, locality_tier::across_racks, "A3C", 8, 1};
  EXPECT_EQ(off.rate(q), 1.0);
  EXPECT_EQ(off.factors(q), speed_factors{});
  // A model built with a table but enabled = false is also today's behaviour.
  auto with_table = speed_model::make(speed_model_params{}, gavel());
  ASSERT_THAT(with_table, IsOk());
  EXPECT_EQ(with_table->rate(q), 1.0);
}

TEST(SpeedModel, HardwareFactorIsTheMeasuredRatioToTheReferenceType) {
  const auto m = enabled_model();
  // ResNet-50 (bs 64) alone on one GPU: 0.6190 steps/s on K80, 4.3948 on V100 (the reference).
  EXPECT_NEAR(m.rate({resnet50, k80}), 0.6190282202246573 / 4.394774823323071, 1e-12);
  EXPECT_NEAR(m.rate({resnet50, k80}), 0.14085, 1e-5);
  EXPECT_EQ(m.rate({resnet50, v100}), 1.0);
  // A GPU type or job type the table does not know: no heterogeneity information, factor 1.
  EXPECT_EQ(m.factors({resnet50, gpu_type("A100")}).hardware, 1.0);
  EXPECT_EQ(m.factors({"BERT-large", k80}).hardware, 1.0);
  // ResNet-50 (bs 128) cannot run on 2 K80s: the table's 0 gives rate 0.
  EXPECT_EQ(m.rate({"ResNet-50 (batch size 128)", k80, locality_tier::same_switch, "", 2}), 0.0);
}

TEST(SpeedModel, ClusterGpuTypesResolveToTheTablesTypes) {
  const auto m = enabled_model();
  // The node templates name their GPUs in full; the table by family.
  EXPECT_EQ(m.table_gpu(gpu_type("V100-SXM2-16GB")), v100);
  EXPECT_EQ(m.table_gpu(gpu_type("v100")), v100);
  EXPECT_EQ(m.table_gpu(gpu_type("K80")), k80);
  EXPECT_EQ(m.table_gpu(gpu_type("P100_PCIE")), gpu_type("p100"));
  // Only at a separator: "V1000" is not a V100; unknown types stay themselves.
  EXPECT_EQ(m.table_gpu(gpu_type("V1000")), gpu_type("V1000"));
  EXPECT_EQ(m.table_gpu(gpu_type("A100-SXM4-80GB")), gpu_type("A100-SXM4-80GB"));
  EXPECT_NEAR(m.rate({resnet50, gpu_type("Tesla-K80")}), 1.0, 1e-12);  // no "tesla" family
  speed_model_params p;
  p.enabled = true;
  p.gpu_aliases.emplace("Tesla-K80", k80);
  auto aliased = speed_model::make(p, gavel());
  ASSERT_THAT(aliased, IsOk());
  EXPECT_NEAR(aliased->rate({resnet50, gpu_type("Tesla-K80")}), 0.14085, 1e-5);
  EXPECT_NEAR(aliased->rate({resnet50, gpu_type("K80-12GB")}), 0.14085, 1e-5);
}

TEST(SpeedModel, ScalingUsesMeasuredCountsElseThePowerLaw) {
  const auto m = enabled_model();
  // ResNet-18 (bs 16) on V100: 100.142 steps/s on 2 GPUs, 32.353 on 1 (Gavel's table as is).
  const auto f = m.factors({resnet18, v100, locality_tier::same_switch, "", 2, 1});
  EXPECT_NEAR(f.scaling, 100.14206200421837 / 32.353384328946916, 1e-12);
  // Same job on 2 K80s against 1 V100: measured end to end, 8.758 / 32.353.
  const auto k = m.factors({resnet18, k80, locality_tier::same_switch, "", 2, 1});
  EXPECT_NEAR(k.hardware * k.scaling, *gavel().single(resnet18, 2, k80) / 32.353384328946916,
              1e-12);
  // Unknown job type: 4 GPUs against 1 gives 4^0.75 = 2.828; 2 against 4 gives 0.5^0.75.
  EXPECT_NEAR(m.factors({"BERT", v100, locality_tier::same_switch, "", 4, 1}).scaling,
              std::pow(4.0, 0.75), 1e-12);
  EXPECT_NEAR(m.factors({"BERT", v100, locality_tier::same_switch, "", 2, 4}).scaling, 0.5946,
              1e-4);
  // Reference count 0 means "the count it runs on": no scaling.
  EXPECT_EQ(m.factors({"BERT", v100, locality_tier::same_switch, "", 8, 0}).scaling, 1.0);
}

TEST(SpeedModel, LocalityFollowsTheTierAndTheJobTypeSensitivity) {
  const auto m = enabled_model(/*with_table=*/false);
  const auto locality = [&](const char* job, locality_tier tier) {
    return m.factors({job, v100, tier, "", 2}).locality;
  };
  // A job type with no sensitivity of its own takes the seed's figures: 40% slower across PCIe
  // switches, 1 + 0.4 x 12/10 = 1.48 across sockets, 5x across servers.
  EXPECT_EQ(locality("BERT", locality_tier::same_switch), 1.0);
  EXPECT_NEAR(locality("BERT", locality_tier::same_socket), 1 / 1.4, 1e-12);
  EXPECT_NEAR(locality("BERT", locality_tier::same_node), 1 / 1.48, 1e-12);
  EXPECT_NEAR(locality("BERT", locality_tier::same_rack), 0.2, 1e-12);
  EXPECT_NEAR(locality("BERT", locality_tier::across_racks), 0.2, 1e-12);
  // Families: ResNet-50 (sensitivity 0.02) barely slows down; ResNet-18 (0.43) across servers
  // runs at 1 / (1 + 0.43 x 4) = 0.368; LM (1.0) like the seed's figure.
  EXPECT_NEAR(locality(resnet50, locality_tier::same_rack), 1 / 1.08, 1e-12);
  EXPECT_NEAR(locality(resnet18, locality_tier::same_rack), 1 / 2.72, 1e-12);
  EXPECT_NEAR(locality("LM (batch size 20)", locality_tier::same_socket), 1 / 1.4, 1e-12);
  EXPECT_EQ(m.sensitivity("Transformer (batch size 32)"), 0.27);
  // One GPU crosses nothing, whatever tier is passed.
  EXPECT_EQ(m.factors({"BERT", v100, locality_tier::across_racks, "", 1}).locality, 1.0);
}

TEST(SpeedModel, AcrossServersUsesTheMeasuredSpreadThroughput) {
  const auto m = enabled_model();
  // ResNet-18 (bs 16) on 2 V100s: 35.337 steps/s spread over servers vs 100.142 on one.
  const double measured = *gavel().spread(resnet18, 2, v100) / *gavel().single(resnet18, 2, v100);
  EXPECT_NEAR(m.factors({resnet18, v100, locality_tier::same_rack, "", 2}).locality, measured,
              1e-12);
  EXPECT_NEAR(measured, 1 / 2.834, 1e-3);
  // Within a server the sensitivity formula applies: 1 / (1 + 0.43 x 0.4).
  EXPECT_NEAR(m.factors({resnet18, v100, locality_tier::same_socket, "", 2}).locality, 1 / 1.172,
              1e-12);
  // A spread figure above the consolidated one (K80 noise) is capped: locality never speeds up.
  EXPECT_EQ(m.factors({resnet18, k80, locality_tier::same_rack, "", 2}).locality, 1.0);
}

TEST(SpeedModel, ColocationUsesThePackedThroughputElseTheInterferenceFactor) {
  const auto m = enabled_model();
  // v100: ResNet-50 (bs 64) packed with A3C runs at 2.9506 of its 4.3948 steps/s alone.
  EXPECT_NEAR(m.factors({resnet50, v100, locality_tier::same_switch, "A3C"}).colocation,
              2.950603089845603 / 4.394774823323071, 1e-12);
  EXPECT_NEAR(m.factors({"A3C", v100, locality_tier::same_switch, resnet50}).colocation,
              1.6837215567338348 / *gavel().single("A3C", 1, v100), 1e-12);
  // No packed figure for the pair: the default interference factor 0.58.
  EXPECT_EQ(m.factors({"BERT", v100, locality_tier::same_switch, resnet50}).colocation, 0.58);
  EXPECT_EQ(m.factors({resnet50, v100, locality_tier::same_switch, ""}).colocation, 1.0);
}

TEST(SpeedModel, RateIsTheProductOfTheFactorsAndDeterministic) {
  const auto m = enabled_model();
  const speed_query q{resnet18, k80, locality_tier::same_node, "BERT", 2, 4};
  const auto f = m.factors(q);
  EXPECT_EQ(m.rate(q), f.hardware * f.scaling * f.locality * f.colocation);
  EXPECT_EQ(m.rate(q), enabled_model().rate(q));
  EXPECT_GT(m.rate(q), 0.0);
  EXPECT_LT(m.rate(q), 1.0);
}

TEST(SpeedModelParams, ValidateNamesTheBadField) {
  speed_model_params p;
  EXPECT_THAT(validate(p), IsOk());
  p.tier_slowdown[1] = 0.5;
  EXPECT_THAT(speed_model::make(p), ErrorContains("tier_slowdown[same_socket]"));
  p = {};
  p.tier_slowdown[3] = 1.2;
  EXPECT_THAT(validate(p), ErrorContains("must not decrease"));
  p = {};
  p.sensitivity["GPT"] = -1;
  EXPECT_THAT(validate(p), ErrorContains("sensitivity of 'GPT'"));
  p = {};
  p.interference = 1.5;
  EXPECT_THAT(validate(p), ErrorContains("interference"));
  p = {};
  p.scaling_exponent = std::nan("");
  EXPECT_THAT(validate(p), HasErrc(errc::invalid_argument));
  p = {};
  p.enabled = true;
  p.reference_gpu = gpu_type();
  EXPECT_THAT(validate(p), ErrorContains("reference_gpu"));
}

cluster_topology dgx1_cluster() {
  auto c = cluster_builder("dgx1").add_nodes(node_template::dgx1_v100, 4).racks(2).build();
  EXPECT_THAT(c, IsOk());
  return *c;
}

locality_tier tier_of(const cluster_topology& c, std::vector<std::uint32_t> ids,
                      bool use_nvlink = true) {
  std::vector<device_id> gpus;
  for (auto i : ids) gpus.emplace_back(i);
  auto t = placement_locality(c, gpus, locality_options{use_nvlink});
  EXPECT_THAT(t, IsOk());
  return t ? *t : locality_tier::across_racks;
}

TEST(PlacementLocality, Dgx1PcieTreeWithoutNvlink) {
  const auto c = dgx1_cluster();
  // The DGX-1 PCIe tree: GPUs 0,1 share a switch; 0,2 sit on two switches of socket 0; 0,4 are
  // on different sockets.
  EXPECT_EQ(tier_of(c, {0, 1}, false), locality_tier::same_switch);
  EXPECT_EQ(tier_of(c, {0, 2}, false), locality_tier::same_socket);
  EXPECT_EQ(tier_of(c, {0, 4}, false), locality_tier::same_node);
  EXPECT_EQ(tier_of(c, {0, 1, 2, 3}, false), locality_tier::same_socket);
}

TEST(PlacementLocality, Dgx1NvlinkIslands) {
  const auto c = dgx1_cluster();
  // Hybrid cube mesh: 0-2 (NV1) and 0-4 (NV2) are NVLinked; 0-5 is not (SYS).
  EXPECT_EQ(tier_of(c, {0, 2}), locality_tier::same_switch);
  EXPECT_EQ(tier_of(c, {0, 4}), locality_tier::same_switch);
  EXPECT_EQ(tier_of(c, {0, 5}), locality_tier::same_node);
  // 0-1-5 is one island through GPU 1 (0-1 NV1, 1-5 NV2); all eight GPUs are one island.
  EXPECT_EQ(tier_of(c, {5, 0, 1}), locality_tier::same_switch);
  EXPECT_EQ(tier_of(c, {0, 1, 2, 3, 4, 5, 6, 7}), locality_tier::same_switch);
  EXPECT_EQ(tier_of(c, {3}), locality_tier::same_switch);
}

TEST(PlacementLocality, AcrossNodesAndRacks) {
  const auto c = dgx1_cluster();
  // Nodes 0,1 form rack 0 and nodes 2,3 rack 1; node k holds GPUs 8k..8k+7.
  EXPECT_EQ(tier_of(c, {0, 8}), locality_tier::same_rack);
  EXPECT_EQ(tier_of(c, {0, 1, 9, 10}), locality_tier::same_rack);
  EXPECT_EQ(tier_of(c, {0, 16}), locality_tier::across_racks);
  EXPECT_EQ(tier_of(c, {9, 31, 8}), locality_tier::across_racks);
  // Without racks, any two servers are same_rack.
  auto flat = cluster_builder("flat").add_nodes(node_template::dgx1_v100, 2).build();
  ASSERT_THAT(flat, IsOk());
  EXPECT_EQ(tier_of(*flat, {0, 15}), locality_tier::same_rack);
}

TEST(PlacementLocality, MultiNodeNvlinkDomain) {
  auto c = make_builtin_cluster("h100-nvlink-pod");
  ASSERT_THAT(c, IsOk());
  // 64 HGX H100 nodes (8 GPUs each), racks of 4, NVLink domains of 32 nodes.
  EXPECT_EQ(tier_of(*c, {0, 8 * 5}), locality_tier::same_switch);
  EXPECT_EQ(tier_of(*c, {0, 8 * 5}, false), locality_tier::across_racks);
  EXPECT_EQ(tier_of(*c, {0, 8 * 1}, false), locality_tier::same_rack);
  EXPECT_EQ(tier_of(*c, {0, 8 * 32}), locality_tier::across_racks);
}

TEST(PlacementLocality, RefusesBadPlacements) {
  const auto c = dgx1_cluster();
  EXPECT_THAT(placement_locality(c, {}), HasErrc(errc::invalid_argument));
  const std::vector<device_id> twice{device_id(3), device_id(3)};
  EXPECT_THAT(placement_locality(c, twice), ErrorContains("GPU 3 listed twice"));
  const std::vector<device_id> outside{device_id(32)};
  EXPECT_THAT(placement_locality(c, outside), HasErrc(errc::out_of_range));
}

TEST(LocalityTier, Names) {
  EXPECT_EQ(to_string(locality_tier::same_switch), "same_switch");
  EXPECT_EQ(to_string(locality_tier::across_racks), "across_racks");
}

}  // namespace
}  // namespace hetsched
