// SPDX-License-Identifier: MIT
// scheduler::create on hostile configs (issue 17 §2): cell-type chains deeper than
// config_limits::max_levels (10,000 levels overflowed the stack), leaf counts that overflowed
// an int (65536 x 65536, 1e6 x 1e6), clusters above max_leaf_cells / max_cells, a VC asking for
// 2^31-1 cells (4 GB, then bad_alloc), 100,000 GPUs on one node (a quadratic duplicate check,
// 57 s) and to_json of 30,000 cell types (quadratic, 4.7 s). Each is a named error or runs in
// near-linear time.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

#include "hived_small_fixture.hpp"

namespace hetsched::hived {
namespace {

using small_fixture::pod;

/// A chain T<levels-2> -> ... -> T0 -> GPU (T0 the node level, one GPU per cell type), listed
/// top type first when `top_first`; one physical cell of the top type; VC "a" owns it.
config chain_config(int levels, bool top_first) {
  config cfg;
  for (int i = 0; i + 1 < levels; ++i)
    cfg.cell_types.push_back(
        {"T" + std::to_string(i), i == 0 ? "GPU" : "T" + std::to_string(i - 1), 1, i == 0});
  if (top_first) std::reverse(cfg.cell_types.begin(), cfg.cell_types.end());
  const std::string top = "T" + std::to_string(levels - 2);
  physical_cell_spec cell;
  cell.cell_type = top;
  cell.address = "n0";
  cfg.physical_cells = {cell};
  cfg.virtual_clusters = {{"a", {{top, 1}}, {}}};
  return cfg;
}

void expect_error(const result<scheduler>& s, errc code, const std::string& message) {
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, code);
  EXPECT_EQ(s.error().message, message);
}

TEST(HivedConfigLimits, ChainOfMaxLevelsIsAccepted) {
  auto created = scheduler::create(chain_config(64, false));
  ASSERT_TRUE(created.has_value()) << created.error().message;
  created->mark_all_nodes_healthy();
  auto p = pod("p", "a", 0, 1);
  auto r = created->schedule(p, node_filter{}, phase::filtering);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->kind, outcome::bind);
  // the node-level cell T0 is 62 levels below n0: its inferred address ends in "0"
  EXPECT_EQ(r->bind.node, "0");
  EXPECT_EQ(created->total_left_cells("T62").size(), 65U);  // levels 1..64
}

TEST(HivedConfigLimits, DeepChainsAreNamedErrors) {
  const std::string too_deep =
      " heads a chain of more than 64 levels (limit "
      "config_limits::max_levels)";
  // 65 levels, listed leaf side first: the first type past the bound is named
  expect_error(scheduler::create(chain_config(65, false)), errc::out_of_range,
               "cell type T63" + too_deep);
  // 10,000 and 100,000 levels (the stack overflow and Python's SIGSEGV), top type first
  expect_error(scheduler::create(chain_config(10000, true)), errc::out_of_range,
               "cell type T9998" + too_deep);
  expect_error(scheduler::create(chain_config(100000, true)), errc::out_of_range,
               "cell type T99998" + too_deep);
  expect_error(scheduler::create(chain_config(10000, false)), errc::out_of_range,
               "cell type T63" + too_deep);
  // a lower limit
  config_limits limits;
  limits.max_levels = 4;
  expect_error(scheduler::create(chain_config(5, false), limits), errc::out_of_range,
               "cell type T3 heads a chain of more than 4 levels (limit "
               "config_limits::max_levels)");
  EXPECT_TRUE(scheduler::create(chain_config(4, false), limits).has_value());
}

/// NODE (node level) of `gpus` GPUs, ROW of `nodes` NODEs; one ROW cell; no VC.
config wide_config(int gpus, int nodes) {
  config cfg;
  cfg.cell_types = {{"NODE", "GPU", gpus, true}, {"ROW", "NODE", nodes, false}};
  physical_cell_spec row;
  row.cell_type = "ROW";
  cfg.physical_cells = {row};
  return cfg;
}

TEST(HivedConfigLimits, LeafCountsThatOverflowedAnIntAreNamedErrors) {
  expect_error(scheduler::create(wide_config(65536, 65536)), errc::out_of_range,
               "cell type ROW holds 4294967296 leaf cells (65536 x 65536), more than the limit "
               "of 1048576 (config_limits::max_leaf_cells)");
  expect_error(scheduler::create(wide_config(1000000, 1000000)), errc::out_of_range,
               "cell type ROW holds 1000000000000 leaf cells (1000000 x 1000000), more than the "
               "limit of 1048576 (config_limits::max_leaf_cells)");
  expect_error(scheduler::create(wide_config(INT_MAX, 2)), errc::out_of_range,
               "cell type NODE holds 2147483647 leaf cells (2147483647 x 1), more than the limit "
               "of 1048576 (config_limits::max_leaf_cells)");
}

TEST(HivedConfigLimits, ClusterSizeBounds) {
  config_limits limits;
  limits.max_leaf_cells = 16;
  limits.max_cells = 40;
  // two ROW cells of 2 x 4 GPUs: 16 leaves, 2 x (1 + 2 x 5) = 22 cells
  auto cfg = wide_config(4, 2);
  cfg.physical_cells.push_back(cfg.physical_cells[0]);
  cfg.physical_cells[1].children = {physical_cell_spec{"", "n2", "", {}},
                                    physical_cell_spec{"", "n3", "", {}}};
  ASSERT_TRUE(scheduler::create(cfg, limits).has_value());
  cfg.physical_cells.push_back(cfg.physical_cells[0]);
  expect_error(scheduler::create(cfg, limits), errc::out_of_range,
               "physical_cells[2] (ROW) brings the physical cluster to 24 leaf cells, more than "
               "the limit of 16 (config_limits::max_leaf_cells)");
  limits.max_leaf_cells = 1000;
  limits.max_cells = 20;
  expect_error(scheduler::create(cfg, limits), errc::out_of_range,
               "physical_cells[1] (ROW) brings the physical cluster to 22 cells, more than "
               "the limit of 20 (config_limits::max_cells)");
  // a chain of single children holds more cells than leaves
  limits.max_cells = 10;
  expect_error(scheduler::create(chain_config(12, false), limits), errc::out_of_range,
               "cell type T9 holds 11 cells, more than the limit of 10 (config_limits::max_cells)");
}

TEST(HivedConfigLimits, HugeVcCountsAreRefusedBeforeAnyCellIsBuilt) {
  config cfg;
  cfg.cell_types = {{"NODE", "GPU", 8, true}};
  physical_cell_spec n0;
  n0.cell_type = "NODE";
  n0.address = "n0";
  cfg.physical_cells = {n0};
  cfg.virtual_clusters = {{"a", {{"NODE", INT_MAX}}, {}}};
  // Refused before any cell is built (its cost: bench/micro/config_io_bench.cpp).
  expect_error(scheduler::create(cfg), errc::failed_precondition,
               "Illegal initial VC assignment: Insufficient physical cells at chain NODE level "
               "2: 2147483647 needed, 1 available");
  // two entries of INT_MAX (an int sum overflowed) and a second VC
  cfg.virtual_clusters = {{"a", {{"NODE", INT_MAX}, {"NODE", INT_MAX}}, {}},
                          {"b", {{"NODE.GPU", INT_MAX}}, {}}};
  expect_error(scheduler::create(cfg), errc::failed_precondition,
               "Illegal initial VC assignment: Insufficient physical cells at chain NODE level 2: "
               "4294967294 needed, 1 available");
}

TEST(HivedConfigLimits, HundredThousandGpusOnOneNodeAreLinear) {
  config cfg;
  cfg.cell_types = {{"NODE", "GPU", 100000, true}};
  physical_cell_spec n0;
  n0.cell_type = "NODE";
  n0.address = "n0";
  cfg.physical_cells = {n0};
  cfg.virtual_clusters = {{"a", {{"NODE", 1}}, {}}};
  // 57 s before (each leaf compared with every earlier one); its cost is benchmarked in
  // bench/micro/config_io_bench.cpp.
  auto s = scheduler::create(cfg);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->node_level_cells()[0].leaf_indices.size(), 100000U);
  // the last GPU repeats the first: named, still fast
  for (int i = 0; i < 100000; ++i)
    n0.children.push_back(physical_cell_spec{"", std::to_string(i == 99999 ? 0 : i), "", {}});
  cfg.physical_cells = {n0};
  expect_error(scheduler::create(cfg), errc::invalid_argument,
               "GPU 0 of node n0 appears twice: leaf cell n0/0 in chain NODE and leaf cell "
               "n0/0 (physical_cells[0].children[99999]) in chain NODE");
}

/// `n` node-level cell types T0..T(n-1) of one GPU each, plus a duplicate of T0.
config many_types(int n) {
  config cfg;
  for (int i = 0; i < n; ++i) cfg.cell_types.push_back({"T" + std::to_string(i), "GPU", 1, true});
  cfg.cell_types.push_back({"T0", "GPU", 2, true});  // a duplicate name: written once
  return cfg;
}

TEST(HivedConfigLimits, ToJsonOfThirtyThousandCellTypesReadsBack) {
  // Its cost (linear; the quadratic writer took 4.7 s) is BM_HivedConfigToJson in
  // bench/micro/config_io_bench.cpp.
  auto back = parse_config_json(to_json(many_types(30000)));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->cell_types.size(), 30000U);
  EXPECT_EQ(back->cell_types[29999].name, "T29999");
  EXPECT_EQ(back->cell_types[0].child_count, 1);
}

}  // namespace
}  // namespace hetsched::hived
