// SPDX-License-Identifier: MIT
// The new exact search (affinity_packer_search.cpp) against the previous one
// (affinity_packer_reference.cpp) on many seeded inputs: identical answers in every mode.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/templates.hpp>

#include "../../src/policies/affinity_packer_detail.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using gpus = std::vector<std::uint32_t>;
using rows_type = std::vector<std::vector<std::int64_t>>;

/// A random symmetric n x n matrix with pair scores drawn from `levels`.
pair_score_matrix random_matrix(std::size_t n, std::mt19937& rng,
                                const std::vector<std::int64_t>& levels) {
  rows_type rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      rows[i][j] = rows[j][i] = levels[rng() % levels.size()];
    }
  }
  return pair_score_matrix::from_rows(rows).value();
}

/// Every mode of the new search equals the previous one for `size` GPUs of `available`.
void expect_same(const pair_score_matrix& scores, const gpus& available, const gpus& required,
                 std::size_t size, const std::vector<std::int64_t>& bonus,
                 const std::string& what) {
  SCOPED_TRACE(what + " size " + std::to_string(size) + " available " +
               std::to_string(available.size()) + " required " + std::to_string(required.size()));
  struct variant {
    packer_mode mode;
    bool with_bonus;
    bool lowest;
  };
  for (const variant v :
       {variant{packer_mode::compat, false, false}, variant{packer_mode::lexmax, false, false},
        variant{packer_mode::lexmax, true, false}, variant{packer_mode::lexmax, false, true},
        variant{packer_mode::lexmax, true, true}}) {
    const std::span<const std::int64_t> b =
        v.with_bonus ? std::span<const std::int64_t>(bonus) : std::span<const std::int64_t>();
    const auto got = detail::allocate_bonus(scores, available, required, size, v.mode, b, v.lowest);
    const auto want =
        detail::allocate_bonus_reference(scores, available, required, size, v.mode, b, v.lowest);
    ASSERT_TRUE(got.has_value()) << got.error().message;
    ASSERT_TRUE(want.has_value()) << want.error().message;
    EXPECT_EQ(*got, *want) << "mode " << static_cast<int>(v.mode) << " bonus " << v.with_bonus
                           << " spread " << v.lowest << " got {"
                           << ::testing::PrintToString(got->gpus) << "} want {"
                           << ::testing::PrintToString(want->gpus) << "}";
  }
}

/// Score levels: go-gpuallocator-like (many distinct values), few values (many ties), the bench's
/// PCIe + NVLink mix, and a bandwidth-like scale.
std::vector<std::vector<std::int64_t>> level_sets() {
  return {{0, 10, 20, 30, 40, 50, 110, 210, 240},
          {10, 110},
          {10, 20},
          {0, 10, 20},
          {10, 20, 30, 40, 50, 110, 120, 130, 140, 150, 210, 220, 230, 240, 250},
          {(std::int64_t{1} << 18) * 12000 + 10, (std::int64_t{1} << 18) * 150000 + 50,
           (std::int64_t{1} << 18) * 24000 + 30}};
}

TEST(AffinityPackerCompare, EveryGpuFreeOnSixteenGpus) {
  std::mt19937 rng(516);
  const auto levels = level_sets();
  std::vector<std::pair<std::string, pair_score_matrix>> cases;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    for (int copy = 0; copy < 2; ++copy) {
      cases.emplace_back("random levels " + std::to_string(l) + " copy " + std::to_string(copy),
                         random_matrix(16, rng, levels[l]));
    }
  }
  cases.emplace_back(
      "dgx2", pair_score_matrix::from_topology(make_node_template(node_template::dgx2).value()));
  gpus all(16);
  for (std::uint32_t g = 0; g < 16; ++g) all[g] = g;
  for (const auto& [what, scores] : cases) {
    std::vector<std::int64_t> bonus(16);
    for (auto& x : bonus) x = static_cast<std::int64_t>(rng() % 3) * 40;
    for (std::size_t size = 1; size <= 16; ++size) {
      expect_same(scores, all, {}, size, bonus, what);
      expect_same(scores, all, {static_cast<std::uint32_t>(rng() % 16)}, size, bonus, what);
      if (size >= 2) expect_same(scores, all, {3, 11}, size, bonus, what);
    }
  }
}

TEST(AffinityPackerCompare, RandomFreeMasks) {
  std::mt19937 rng(2026);
  const auto levels = level_sets();
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 4 + static_cast<std::size_t>(rng() % 13);
    const auto scores =
        random_matrix(n, rng, levels[static_cast<std::size_t>(trial) % levels.size()]);
    gpus available;
    for (std::uint32_t g = 0; g < n; ++g) {
      if (rng() % 4 != 0) available.push_back(g);
    }
    if (available.size() < 2) continue;
    std::vector<std::int64_t> bonus(n);
    for (auto& x : bonus) x = static_cast<std::int64_t>(rng() % 4) * 25;
    const std::string what = "trial " + std::to_string(trial);
    for (std::size_t size = 1; size <= available.size(); ++size) {
      expect_same(scores, available, {}, size, bonus, what);
      const gpus one{available[rng() % available.size()]};
      expect_same(scores, available, one, size, bonus, what);
      if (size >= 3) {
        gpus two{available[0], available[available.size() - 1]};
        expect_same(scores, available, two, size, bonus, what);
      }
    }
  }
}

/// A random hierarchical n-GPU node (many twins): GPUs in PIX pairs, PXB quads and NODE halves,
/// SYS across, and NVLinks added per pair class at random.
pair_score_matrix hierarchical_matrix(std::size_t n, std::mt19937& rng) {
  const std::int64_t nvlink_pair = 100 * static_cast<std::int64_t>(rng() % 3);
  const std::int64_t nvlink_quad = 100 * static_cast<std::int64_t>(rng() % 2);
  rows_type rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      std::int64_t v = 10;
      if (i / 2 == j / 2) {
        v = 50 + nvlink_pair;
      } else if (i / 4 == j / 4) {
        v = 40 + nvlink_quad;
      } else if (i / 8 == j / 8) {
        v = 20;
      }
      rows[i][j] = rows[j][i] = v;
    }
  }
  return pair_score_matrix::from_rows(rows).value();
}

TEST(AffinityPackerCompare, StructuredNodesWithTwins) {
  std::mt19937 rng(88);
  std::vector<std::pair<std::string, pair_score_matrix>> cases;
  for (const node_template t :
       {node_template::dgx2, node_template::dgx_a100, node_template::dgx1_v100,
        node_template::hgx_h100, node_template::pcie_8gpu}) {
    const auto topology = make_node_template(t).value();
    cases.emplace_back("template " + std::to_string(static_cast<int>(t)),
                       pair_score_matrix::from_topology(topology));
    pair_terms terms;
    terms.metric = pair_metric::bandwidth;
    cases.emplace_back("bandwidth template " + std::to_string(static_cast<int>(t)),
                       pair_score_matrix::from_views(topology.views(), terms));
  }
  for (int h = 0; h < 6; ++h) {
    cases.emplace_back("hierarchical " + std::to_string(h), hierarchical_matrix(16, rng));
  }
  for (const auto& [what, scores] : cases) {
    const std::size_t n = scores.size();
    for (int trial = 0; trial < 6; ++trial) {
      gpus available;
      for (std::uint32_t g = 0; g < n; ++g) {
        if (trial == 0 || rng() % 5 != 0) available.push_back(g);
      }
      if (available.size() < 2) continue;
      std::vector<std::int64_t> bonus(n);
      for (auto& x : bonus) x = static_cast<std::int64_t>(rng() % 2) * 30;
      for (std::size_t size = 1; size <= available.size(); ++size) {
        expect_same(scores, available, {}, size, bonus, what);
        expect_same(scores, available, {available[rng() % available.size()]}, size, bonus, what);
      }
    }
  }
}

}  // namespace
}  // namespace hetsched
