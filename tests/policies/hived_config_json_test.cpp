// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

namespace hetsched::hived {
namespace {

/// A rack of two DGX2 nodes (second node with explicit leaf addresses), one pinned node, and two
/// VCs; the hetsched extension sets every option.
constexpr const char* sample = R"({
  "physicalCluster": {
    "cellTypes": {
      "DGX2-V100-NODE": {"childCellType": "DGX2-V100", "childCellNumber": 4, "isNodeLevel": true},
      "2-DGX2-V100-NODE": {"childCellType": "DGX2-V100-NODE", "childCellNumber": 2}
    },
    "physicalCells": [
      {"cellType": "2-DGX2-V100-NODE", "cellChildren": [
        {"cellAddress": "10.0.0.1"},
        {"cellAddress": "10.0.0.2", "cellChildren": [
          {"cellAddress": "3"}, {"cellAddress": "2"}, {"cellAddress": "1"},
          {"cellAddress": "0", "hetsched": {"absoluteAddress": false}}]}]},
      {"cellType": "DGX2-V100-NODE", "cellAddress": "10.0.0.3", "pinnedCellId": "PIN-1"}
    ]
  },
  "virtualClusters": {
    "vc-b": {"virtualCells": [{"cellType": "2-DGX2-V100-NODE.DGX2-V100-NODE", "cellNumber": 1}]},
    "vc-a": {"virtualCells": [{"cellType": "2-DGX2-V100-NODE.DGX2-V100-NODE", "cellNumber": 1}],
             "pinnedCells": [{"pinnedCellId": "PIN-1"}]}
  },
  "hetsched": {"chainOrder": {"DGX2-V100": ["DGX2-V100-NODE", "2-DGX2-V100-NODE"]},
               "multiCellPods": true, "cellTypeRequests": true}
})";

config expected_sample() {
  config cfg;
  cfg.cell_types = {{"DGX2-V100-NODE", "DGX2-V100", 4, true},
                    {"2-DGX2-V100-NODE", "DGX2-V100-NODE", 2, false}};
  physical_cell_spec rack;
  rack.cell_type = "2-DGX2-V100-NODE";
  physical_cell_spec n1;
  n1.address = "10.0.0.1";
  physical_cell_spec n2;
  n2.address = "10.0.0.2";
  for (const char* a : {"3", "2", "1", "0"}) {
    physical_cell_spec leaf;
    leaf.address = a;
    n2.children.push_back(leaf);
  }
  rack.children = {n1, n2};
  physical_cell_spec pinned;
  pinned.cell_type = "DGX2-V100-NODE";
  pinned.address = "10.0.0.3";
  pinned.pinned_id = "PIN-1";
  cfg.physical_cells = {rack, pinned};
  cfg.virtual_clusters = {{"vc-b", {{"2-DGX2-V100-NODE.DGX2-V100-NODE", 1}}, {}},
                          {"vc-a", {{"2-DGX2-V100-NODE.DGX2-V100-NODE", 1}}, {"PIN-1"}}};
  cfg.opts.chain_order["DGX2-V100"] = {"DGX2-V100-NODE", "2-DGX2-V100-NODE"};
  cfg.opts.multi_cell_pods = true;
  cfg.opts.cell_type_requests = true;
  return cfg;
}

TEST(HivedConfigJson, ReadsEveryField) {
  auto cfg = parse_config_json(sample);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  // Document order is kept for cell types and VCs (vc-b before vc-a).
  ASSERT_EQ(cfg->cell_types.size(), 2U);
  EXPECT_EQ(cfg->cell_types[0].name, "DGX2-V100-NODE");
  EXPECT_EQ(cfg->cell_types[0].child_count, 4);
  EXPECT_TRUE(cfg->cell_types[0].node_level);
  EXPECT_FALSE(cfg->cell_types[1].node_level);  // isNodeLevel defaults to false
  ASSERT_EQ(cfg->physical_cells.size(), 2U);
  EXPECT_EQ(cfg->physical_cells[0].children[1].children[3].address, "0");
  EXPECT_EQ(cfg->physical_cells[1].pinned_id, "PIN-1");
  ASSERT_EQ(cfg->virtual_clusters.size(), 2U);
  EXPECT_EQ(cfg->virtual_clusters[0].name, "vc-b");
  EXPECT_EQ(cfg->virtual_clusters[1].pinned_cells, std::vector<std::string>{"PIN-1"});
  EXPECT_EQ(*cfg, expected_sample());
}

TEST(HivedConfigJson, ParsedConfigBuildsAScheduler) {
  auto cfg = parse_config_json(sample);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  auto s = scheduler::create(*cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  EXPECT_EQ(s->nodes(), (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "10.0.0.3"}));
  // The second node lists its leaves with the configured indices, in tree order.
  auto nodes = s->node_level_cells();
  ASSERT_EQ(nodes.size(), 3U);
  EXPECT_EQ(nodes[1].leaf_indices, (std::vector<int>{3, 2, 1, 0}));
  EXPECT_EQ(s->pinned_physical_cells().at(0).pinned_id, "PIN-1");
}

TEST(HivedConfigJson, RoundTrips) {
  const config cfg = expected_sample();
  const std::string text = to_json(cfg);
  auto again = parse_config_json(text);
  ASSERT_TRUE(again.has_value()) << again.error().message << "\n" << text;
  EXPECT_EQ(*again, cfg);
  EXPECT_EQ(to_json(*again), text);

  // absolute_address and empty option sets survive too.
  config other = cfg;
  other.physical_cells[0].children[0].absolute_address = true;
  other.opts = options{};
  auto back = parse_config_json(to_json(other));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, other);
  EXPECT_TRUE(back->physical_cells[0].children[0].absolute_address);
  EXPECT_EQ(to_json(other).find("\"hetsched\": {\n      \"chainOrder\""), std::string::npos);
}

TEST(HivedConfigJson, MinimalDocument) {
  auto cfg = parse_config_json(R"({"physicalCluster": {}})");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  EXPECT_EQ(*cfg, config{});
  EXPECT_EQ(to_json(config{}),
            "{\n  \"physicalCluster\": {\n    \"cellTypes\": {},\n    \"physicalCells\": []\n  "
            "},\n  \"virtualClusters\": {}\n}");
}

/// Returns the error of parsing `text` (empty if it parses).
error parse_error(const std::string& text) {
  auto cfg = parse_config_json(text);
  return cfg ? error{} : cfg.error();
}

std::string with_type(const std::string& type_body) {
  return R"({"physicalCluster": {"cellTypes": {"DGX2-V100": )" + type_body + "}}}";
}

TEST(HivedConfigJson, RejectsMalformedJson) {
  auto e = parse_error(R"({"physicalCluster": {},})");
  EXPECT_EQ(e.code, errc::invalid_argument);
  EXPECT_NE(e.message.find("line 1, column"), std::string::npos) << e.message;
  EXPECT_EQ(parse_error("[]").message, "(root): expected an object, got an array");
}

TEST(HivedConfigJson, RejectsMissingMembers) {
  EXPECT_EQ(parse_error("{}").message, "physicalCluster: missing required member");
  EXPECT_EQ(parse_error(with_type(R"({"childCellNumber": 2})")).message,
            "physicalCluster.cellTypes.DGX2-V100.childCellType: missing required member");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {}, "virtualClusters": {"VC1": {"virtualCells":
              [{"cellType": "A.B"}]}}})")
                .message,
            "virtualClusters.VC1.virtualCells[0].cellNumber: missing required member");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {}, "virtualClusters": {"VC1": {"pinnedCells":
              [{}]}}})")
                .message,
            "virtualClusters.VC1.pinnedCells[0].pinnedCellId: missing required member");
}

TEST(HivedConfigJson, RejectsUnknownMembers) {
  EXPECT_EQ(parse_error(R"({"physicalCluster": {}, "kubeApiServerAddress": "x"})").message,
            "kubeApiServerAddress: unknown member");
  EXPECT_EQ(
      parse_error(with_type(R"({"childCellType": "G", "childCellNumber": 2, "gpu": 1})")).message,
      "physicalCluster.cellTypes.DGX2-V100.gpu: unknown member");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {"physicalCells": [{"cellType": "N",
              "cellChildren": [{"cellAddres": "x"}]}]}})")
                .message,
            "physicalCluster.physicalCells[0].cellChildren[0].cellAddres: unknown member");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {"physicalCells": [{"cellType": "N",
              "hetsched": {"absolute": true}}]}})")
                .message,
            "physicalCluster.physicalCells[0].hetsched.absolute: unknown member");
  EXPECT_EQ(
      parse_error(R"({"physicalCluster": {}, "virtualClusters": {"VC1": {"quota": 1}}})").message,
      "virtualClusters.VC1.quota: unknown member");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {}, "hetsched": {"multiCellPod": true}})").message,
            "hetsched.multiCellPod: unknown member");
}

TEST(HivedConfigJson, RejectsNegativeAndOversizedCounts) {
  auto e = parse_error(with_type(R"({"childCellType": "G", "childCellNumber": -1})"));
  EXPECT_EQ(e.code, errc::out_of_range);
  EXPECT_EQ(e.message,
            "physicalCluster.cellTypes.DGX2-V100.childCellNumber: -1 is below the minimum 0");
  e = parse_error(R"({"physicalCluster": {}, "virtualClusters": {"VC1": {"virtualCells":
        [{"cellType": "A.B", "cellNumber": 2147483648}]}}})");
  EXPECT_EQ(e.code, errc::out_of_range);
  EXPECT_EQ(e.message,
            "virtualClusters.VC1.virtualCells[0].cellNumber: 2147483648 is above the maximum "
            "2147483647");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {}, "virtualClusters": {"VC1": {"virtualCells":
              [{"cellType": "A.B", "cellNumber": 0}]}}})")
                .message,
            "");  // zero cells is a valid quota
}

TEST(HivedConfigJson, RejectsWrongTypes) {
  EXPECT_EQ(parse_error(with_type(R"({"childCellType": "G", "childCellNumber": 2.0})")).message,
            "physicalCluster.cellTypes.DGX2-V100.childCellNumber: expected an integer, got a "
            "non-integral number");
  EXPECT_EQ(parse_error(with_type(R"({"childCellType": 7, "childCellNumber": 2})")).message,
            "physicalCluster.cellTypes.DGX2-V100.childCellType: expected a string, got an integer");
  EXPECT_EQ(parse_error(with_type(R"({"childCellType": "G", "childCellNumber": 2,
              "isNodeLevel": "true"})"))
                .message,
            "physicalCluster.cellTypes.DGX2-V100.isNodeLevel: expected a boolean, got a string");
  EXPECT_EQ(parse_error(with_type("[]")).message,
            "physicalCluster.cellTypes.DGX2-V100: expected an object, got an array");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {"cellTypes": []}})").message,
            "physicalCluster.cellTypes: expected an object, got an array");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {"physicalCells": {}}})").message,
            "physicalCluster.physicalCells: expected an array, got an object");
  EXPECT_EQ(
      parse_error(R"({"physicalCluster": {"physicalCells": [{"cellChildren": [1]}]}})").message,
      "physicalCluster.physicalCells[0].cellChildren[0]: expected an object, got an integer");
  EXPECT_EQ(parse_error(R"({"physicalCluster": {}, "virtualClusters": {"VC1": {"pinnedCells":
              ["PIN"]}}})")
                .message,
            "virtualClusters.VC1.pinnedCells[0]: expected an object, got a string");
  EXPECT_EQ(
      parse_error(R"({"physicalCluster": {}, "hetsched": {"chainOrder": {"G": "C"}}})").message,
      "hetsched.chainOrder.G: expected an array, got a string");
  EXPECT_EQ(
      parse_error(R"({"physicalCluster": {}, "hetsched": {"chainOrder": {"G": [1]}}})").message,
      "hetsched.chainOrder.G[0]: expected a string, got an integer");
}

TEST(HivedConfigJson, StructuralErrorsAreLeftToCreate) {
  // The importer reads shapes; scheduler::create names the unknown child type.
  auto cfg = parse_config_json(R"({"physicalCluster": {"cellTypes": {"N": {"childCellType": "G",
      "childCellNumber": 2, "isNodeLevel": true}}, "physicalCells": [{"cellType": "X"}]}})");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  EXPECT_FALSE(scheduler::create(*cfg).has_value());
}

}  // namespace
}  // namespace hetsched::hived
