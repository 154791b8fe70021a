// SPDX-License-Identifier: MIT
// Every configuration error scheduler::create can return (src/policies/hived_config.cpp), one
// minimal bad config each, plus the GPU that two chains claim (a leaf (node, index) may appear
// once in the whole config) and the JSON reader's duplicate names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

#include "hived_small_fixture.hpp"

namespace hetsched::hived {
namespace {

using small_fixture::pod;
using testing::HasSubstr;

// Chain NODE(2 PCIE, node level) -> PCIE(2 GPU): node n0 with GPUs 0-3; VC "a" owns the node.
config base_config() {
  config cfg;
  cfg.cell_types = {{"PCIE", "GPU", 2, false}, {"NODE", "PCIE", 2, true}};
  physical_cell_spec n0;
  n0.cell_type = "NODE";
  n0.address = "n0";
  cfg.physical_cells = {n0};
  cfg.virtual_clusters = {{"a", {{"NODE", 1}}, {}}};
  return cfg;
}

physical_cell_spec leaf(const std::string& address) { return {"", address, "", {}}; }

// A PCIE cell with the two given leaf addresses.
physical_cell_spec pcie(const std::string& first, const std::string& second) {
  physical_cell_spec p;
  p.children = {leaf(first), leaf(second)};
  return p;
}

// A top-level cell of `type` at `address`, optionally pinned.
physical_cell_spec top(const std::string& type, const std::string& address,
                       const std::string& pinned_id = "") {
  physical_cell_spec c;
  c.cell_type = type;
  c.address = address;
  c.pinned_id = pinned_id;
  return c;
}

struct bad_config {
  std::string name;
  std::function<void(config&)> edit;
  errc code;
  std::string message;  // the full expected message
};

const std::vector<bad_config>& bad_configs() {
  static const std::vector<bad_config> cases = {
      {"CellTypeWithEmptyName",
       [](config& c) {
         c.cell_types.push_back({"", "GPU", 2, false});
       },
       errc::invalid_argument, "cell type with empty name (cell_types[2])"},
      {"CellTypeDefinedTwice",
       [](config& c) {
         c.cell_types.push_back({"PCIE", "GPU", 4, false});
       },
       errc::invalid_argument, "cell type PCIE defined twice"},
      {"CellTypeWithoutChildType",
       [](config& c) {
         c.cell_types.push_back({"BOX", "", 2, false});
       },
       errc::invalid_argument,
       "cell type BOX needs a child type and a positive child count (child type '', count 2)"},
      {"CellTypeWithZeroChildren",
       [](config& c) {
         c.cell_types.push_back({"BOX", "NODE", 0, false});
       },
       errc::invalid_argument,
       "cell type BOX needs a child type and a positive child count (child type 'NODE', count "
       "0)"},
      {"CellTypeCycle",
       [](config& c) {
         c.cell_types.push_back({"A", "B", 2, false});
         c.cell_types.push_back({"B", "A", 2, false});
       },
       errc::invalid_argument, "cell type A is its own descendant"},
      {"CellTypeOwnChild",
       [](config& c) {
         c.cell_types.push_back({"A", "A", 2, true});
       },
       errc::invalid_argument, "cell type A is its own descendant"},
      {"PhysicalCellOfUnknownType",
       [](config& c) { c.physical_cells.push_back(top("RACK", "r0")); }, errc::invalid_argument,
       "cellType RACK in PhysicalCells is not found in cell types definition "
       "(physical_cells[1])"},
      {"PhysicalCellOfLeafType", [](config& c) { c.physical_cells.push_back(top("GPU", "0")); },
       errc::invalid_argument,
       "cellType GPU in PhysicalCells is not found in cell types definition "
       "(physical_cells[1])"},
      {"TopCellBelowNodeLevel", [](config& c) { c.physical_cells.push_back(top("PCIE", "p")); },
       errc::invalid_argument, "top cell must be node-level or above: PCIE (physical_cells[1])"},
      {"PinnedIdTwice",
       [](config& c) {
         c.physical_cells[0].pinned_id = "P";
         c.physical_cells.push_back(top("NODE", "n1", "P"));
       },
       errc::invalid_argument,
       "pinned cell id P appears twice: cell n0 and cell n1 (physical_cells[1])"},
      {"LeafAddressNotAnInteger",
       [](config& c) {
         c.physical_cells[0].children = {pcie("0", "gpu1"), pcie("2", "3")};
       },
       errc::invalid_argument,
       "leaf cell address n0/0/gpu1 (physical_cells[0].children[0].children[1]) is not an "
       "integer"},
      {"LeafAddressWithTrailingText",
       [](config& c) {
         c.physical_cells[0].children = {pcie("0", "1"), pcie("2", "3x")};
       },
       errc::invalid_argument,
       "leaf cell address n0/1/3x (physical_cells[0].children[1].children[1]) is not an "
       "integer"},
      {"GpuTwiceInOneNodeCell",
       [](config& c) {
         c.physical_cells[0].children = {pcie("0", "1"), pcie("1", "2")};
       },
       errc::invalid_argument,
       "GPU 1 of node n0 appears twice: leaf cell n0/0/1 in chain NODE and leaf cell n0/1/1 "
       "(physical_cells[0].children[1].children[0]) in chain NODE"},
      {"GpuTwiceInOneChain",
       [](config& c) {
         c.physical_cells[0].children = {pcie("0", "1"), pcie("2", "3")};
         c.physical_cells.push_back(top("NODE", "n0"));
         c.physical_cells[1].children = {pcie("4", "5"), pcie("3", "6")};
       },
       errc::invalid_argument,
       "GPU 3 of node n0 appears twice: leaf cell n0/1/3 in chain NODE and leaf cell n0/1/3 "
       "(physical_cells[1].children[1].children[0]) in chain NODE"},
      {"GpuInTwoChains",
       [](config& c) {
         // The audit's reproduction: n0 as a NODE cell and as a NODEB cell.
         c.cell_types.push_back({"NODEB", "PCIE", 2, true});
         c.physical_cells.push_back(top("NODEB", "n0"));
         c.virtual_clusters.push_back({"b", {{"NODEB", 1}}, {}});
       },
       errc::invalid_argument,
       "GPU 0 of node n0 appears twice: leaf cell n0/0/0 in chain NODE and leaf cell n0/0/0 "
       "(physical_cells[1].children[0].children[0]) in chain NODEB"},
      {"GpuInTwoChainsUnderARack",
       [](config& c) {
         // A rack chain whose second node names n0's GPU 2 by its full address.
         c.cell_types.push_back({"RACK", "NODE", 2, false});
         physical_cell_spec rack = top("RACK", "r0");
         physical_cell_spec n1;
         n1.address = "n1";
         physical_cell_spec n0_again;
         n0_again.address = "n0";
         n0_again.children = {pcie("4", "5"), pcie("2", "7")};
         rack.children = {n1, n0_again};
         c.physical_cells.push_back(rack);
       },
       errc::invalid_argument,
       "GPU 2 of node n0 appears twice: leaf cell n0/1/2 in chain NODE and leaf cell r0/n0/1/2 "
       "(physical_cells[1].children[1].children[1].children[0]) in chain RACK"},
      {"TooFewChildren", [](config& c) { c.physical_cells[0].children = {pcie("0", "1")}; },
       errc::invalid_argument, "cell n0 (physical_cells[0]) has 1 children, type NODE needs 2"},
      {"TooManyChildrenBelowNode",
       [](config& c) {
         physical_cell_spec p = pcie("0", "1");
         p.children.push_back(leaf("9"));
         c.physical_cells[0].children = {p, pcie("2", "3")};
       },
       errc::invalid_argument,
       "cell n0/0 (physical_cells[0].children[0]) has 3 children, type PCIE needs 2"},
      {"VcWithEmptyName",
       [](config& c) {
         c.virtual_clusters.push_back({"", {}, {}});
       },
       errc::invalid_argument, "VC with empty name"},
      {"VcDefinedTwice",
       [](config& c) {
         c.virtual_clusters.push_back({"a", {{"NODE.PCIE", 1}}, {}});
       },
       errc::invalid_argument, "VC a defined twice"},
      {"VcCellOfUnknownChain",
       [](config& c) {
         c.virtual_clusters[0].virtual_cells = {{"RACK.NODE", 1}};
       },
       errc::failed_precondition,
       "Illegal initial VC assignment: Chain RACK does not exists in physical cluster"},
      {"VcCellOfUnknownType",
       [](config& c) {
         c.virtual_clusters[0].virtual_cells = {{"NODE.SOCKET", 1}};
       },
       errc::invalid_argument,
       "cellType SOCKET in VirtualCells of VC a is not a type of chain NODE"},
      {"VcCellOfAnotherChainsType",
       [](config& c) {
         c.cell_types.push_back({"NODEB", "PCIE", 2, true});
         c.physical_cells.push_back(top("NODEB", "n1"));
         c.virtual_clusters[0].virtual_cells = {{"NODE.NODEB", 1}};
       },
       errc::invalid_argument,
       "cellType NODEB in VirtualCells of VC a is not a type of chain NODE"},
      {"VcCellAboveTheChainTop",
       [](config& c) {
         c.cell_types.push_back({"RACK", "NODE", 2, false});
         c.virtual_clusters[0].virtual_cells = {{"NODE.RACK", 1}};
       },
       errc::invalid_argument, "cellType RACK in VirtualCells of VC a is not a type of chain NODE"},
      {"NegativeCellCount",
       [](config& c) {
         c.virtual_clusters[0].virtual_cells = {{"NODE.PCIE", -1}};
       },
       errc::invalid_argument, "VC a has a negative cell count for NODE.PCIE"},
      {"PinnedCellNotFound", [](config& c) { c.virtual_clusters[0].pinned_cells = {"P"}; },
       errc::invalid_argument, "pinned cell not found in physicalCells: VC: a, ID: P"},
      {"PinnedCellInTwoVcs",
       [](config& c) {
         c.physical_cells.push_back(top("NODE", "n1", "P"));
         c.virtual_clusters.push_back({"c", {}, {"P"}});
         c.virtual_clusters.push_back({"b", {}, {"P"}});
       },
       errc::invalid_argument, "pinned cell P is assigned twice: to VC b and to VC c"},
      {"PinnedCellTwiceInOneVc",
       [](config& c) {
         c.physical_cells.push_back(top("NODE", "n1", "P"));
         c.virtual_clusters[0].pinned_cells = {"P", "P"};
       },
       errc::invalid_argument, "pinned cell P is assigned twice: to VC a and to VC a"},
      {"InsufficientCells",
       [](config& c) {
         c.virtual_clusters.push_back({"b", {{"NODE.PCIE", 1}}, {}});
       },
       errc::failed_precondition,
       "Illegal initial VC assignment: Insufficient physical cells at chain NODE level 2: 1 "
       "needed, 0 available"},
  };
  return cases;
}

class HivedConfigErrors : public testing::TestWithParam<bad_config> {};

TEST_P(HivedConfigErrors, CreateRefusesWithTheMessage) {
  config cfg = base_config();
  GetParam().edit(cfg);
  auto s = scheduler::create(cfg);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, GetParam().code) << to_string(s.error().code);
  EXPECT_EQ(s.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(EveryError, HivedConfigErrors, testing::ValuesIn(bad_configs()),
                         [](const testing::TestParamInfo<bad_config>& param_info) {
                           return param_info.param.name;
                         });

// "leaf cell ... is not under a node" cannot be reached: a top cell is node-level or above, so
// every leaf has a node-level ancestor. The base config itself builds.
TEST(HivedConfigErrorsBase, BaseConfigBuilds) {
  auto s = scheduler::create(base_config());
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->nodes(), std::vector<std::string>{"n0"});
}

// A node in two chains stays legal while its GPU indices differ (the recorded vectors' node
// 1.0.0.2 holds GPUs 8 and 9 in one chain and 0-7 in the other).
TEST(HivedConfigErrorsBase, NodeSharedByTwoChainsWithDistinctGpus) {
  config cfg = base_config();
  cfg.cell_types.push_back({"NODEB", "PCIE", 2, true});
  physical_cell_spec b = top("NODEB", "n0");
  b.children = {pcie("4", "5"), pcie("6", "7")};
  cfg.physical_cells.push_back(b);
  cfg.virtual_clusters.push_back({"b", {{"NODEB", 1}}, {}});
  auto s = scheduler::create(cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  auto a = s->schedule(pod("pa", "a", 0, 4), node_filter{}, phase::filtering);
  auto bb = s->schedule(pod("pb", "b", 0, 4), node_filter{}, phase::filtering);
  ASSERT_TRUE(a.has_value() && bb.has_value());
  ASSERT_EQ(a->kind, outcome::bind);
  ASSERT_EQ(bb->kind, outcome::bind);
  EXPECT_EQ(a->bind.node, "n0");
  EXPECT_EQ(a->bind.leaf_cells, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(bb->bind.node, "n0");
  EXPECT_EQ(bb->bind.leaf_cells, (std::vector<int>{4, 5, 6, 7}));
}

// The JSON reader refuses duplicate names itself (before create would): a cell type or VC
// named twice is a duplicate key of its object.
TEST(HivedConfigErrorsJson, DuplicateNamesAreDuplicateKeys) {
  auto types = parse_config_json(R"({"physicalCluster": {"cellTypes": {
      "NODE": {"childCellType": "GPU", "childCellNumber": 2, "isNodeLevel": true},
      "NODE": {"childCellType": "GPU", "childCellNumber": 4, "isNodeLevel": true}}}})");
  ASSERT_FALSE(types.has_value());
  EXPECT_EQ(types.error().code, errc::invalid_argument);
  EXPECT_THAT(types.error().message, HasSubstr("duplicate key \"NODE\" in object"));
  auto vcs = parse_config_json(R"({"physicalCluster": {}, "virtualClusters": {
      "a": {"virtualCells": []}, "a": {"virtualCells": []}}})");
  ASSERT_FALSE(vcs.has_value());
  EXPECT_THAT(vcs.error().message, HasSubstr("duplicate key \"a\" in object"));
}

// The JSON shape of the audit's reproduction parses (the reader checks shapes) and create
// refuses it, naming both chains.
TEST(HivedConfigErrorsJson, GpuInTwoChainsRefusedByCreate) {
  auto cfg = parse_config_json(R"({"physicalCluster": {"cellTypes": {
      "PCIE": {"childCellType": "GPU", "childCellNumber": 2},
      "NODE": {"childCellType": "PCIE", "childCellNumber": 2, "isNodeLevel": true},
      "NODEB": {"childCellType": "PCIE", "childCellNumber": 2, "isNodeLevel": true}},
      "physicalCells": [{"cellType": "NODE", "cellAddress": "n0"},
                        {"cellType": "NODEB", "cellAddress": "n0"}]},
      "virtualClusters": {"a": {"virtualCells": [{"cellType": "NODE", "cellNumber": 1}]},
                          "b": {"virtualCells": [{"cellType": "NODEB", "cellNumber": 1}]}}})");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  auto s = scheduler::create(*cfg);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, errc::invalid_argument);
  EXPECT_EQ(s.error().message,
            "GPU 0 of node n0 appears twice: leaf cell n0/0/0 in chain NODE and leaf cell n0/0/0 "
            "(physical_cells[1].children[0].children[0]) in chain NODEB");
}

}  // namespace
}  // namespace hetsched::hived
