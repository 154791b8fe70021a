// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/import.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"
#if defined(HETSCHED_HAVE_HWLOC)
#  include <hetsched/topology/hwloc_import.hpp>
#endif

namespace hetsched {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;
using gpus = std::vector<std::uint32_t>;
using rows_type = std::vector<std::vector<std::int64_t>>;

pair_score_matrix matrix(const rows_type& rows) {
  return pair_score_matrix::from_rows(rows).value();
}

pair_score_matrix template_scores(node_template t) {
  return pair_score_matrix::from_topology(make_node_template(t).value());
}

gpus iota_gpus(std::size_t n) {
  gpus out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint32_t>(i);
  return out;
}

/// go-gpuallocator's five-GPU padding fixture: all SYS, one NVLink between GPUs 3 and 4.
pair_score_matrix padding_edge() {
  rows_type rows(5, std::vector<std::int64_t>(5, 10));
  for (std::size_t i = 0; i < 5; ++i) rows[i][i] = 0;
  rows[3][4] = rows[4][3] = 110;
  return matrix(rows);
}

/// A literal port of go-gpuallocator's exhaustive best-effort search (the reference).
struct brute_answer {
  bool none = true;
  bool padded = false;
  gpus set;
  std::int64_t partition = -1;
  /// lexmax's block score: the best padding-free block holding `required` over every partition
  /// of the best score (size > 1 only).
  std::int64_t lexmax_block = -1;
  /// spread's block score: the weakest padding-free block holding `required` over every partition
  /// of the best score (size > 1 only).
  std::int64_t spread_block = -1;
  /// The sets lexmax and spread return: among those blocks, the lexicographically smallest.
  gpus lexmax_set;
  gpus spread_set;
};

brute_answer brute_force(const pair_score_matrix& s, const gpus& available, const gpus& required,
                         std::size_t size) {
  brute_answer out;
  if (available.size() < size || required.size() > size) return out;
  constexpr std::int64_t nil = -1;
  std::vector<std::int64_t> devices(available.begin(), available.end());
  while (devices.size() % size != 0) devices.push_back(nil);
  const auto padding = static_cast<std::size_t>(std::count(devices.begin(), devices.end(), nil));
  auto set_score = [&](const std::vector<std::int64_t>& set) {
    std::int64_t total = 0;
    for (std::size_t a = 0; a < set.size(); ++a) {
      for (std::size_t b = a + 1; b < set.size(); ++b) {
        if (set[a] != nil && set[b] != nil) {
          total += s.score(static_cast<std::size_t>(set[a]), static_cast<std::size_t>(set[b]));
        }
      }
    }
    return total;
  };
  auto contains_all = [&](const std::vector<std::int64_t>& set) {
    return std::all_of(required.begin(), required.end(), [&](std::uint32_t r) {
      return std::find(set.begin(), set.end(), std::int64_t{r}) != set.end();
    });
  };
  std::vector<std::vector<std::int64_t>> best;
  bool found = false;
  std::int64_t best_score = 0;
  std::vector<std::vector<std::int64_t>> accum;
  std::function<void(const std::vector<std::int64_t>&)> iterate =
      [&](const std::vector<std::int64_t>& devs) {
        if (devs.size() == size) {
          accum.push_back(devs);
          bool ok = false;
          std::int64_t total = 0;
          for (const auto& set : accum) {
            if (contains_all(set) && std::count(set.begin(), set.end(), nil) == 0) ok = true;
            total += set_score(set);
          }
          std::int64_t block = -1;
          std::int64_t weakest = -1;
          for (const auto& set : accum) {
            if (contains_all(set) && std::count(set.begin(), set.end(), nil) == 0) {
              block = std::max(block, set_score(set));
              weakest = weakest < 0 ? set_score(set) : std::min(weakest, set_score(set));
            }
          }
          // Merges this partition's padding-free blocks holding `required` into the two sets.
          auto merge = [&] {
            for (const auto& set : accum) {
              if (!contains_all(set) || std::count(set.begin(), set.end(), nil) != 0) continue;
              const std::int64_t score = set_score(set);
              const gpus g(set.begin(), set.end());
              if (score == out.lexmax_block && (out.lexmax_set.empty() || g < out.lexmax_set)) {
                out.lexmax_set = g;
              }
              if (score == out.spread_block && (out.spread_set.empty() || g < out.spread_set)) {
                out.spread_set = g;
              }
            }
          };
          if (ok && (!found || total > best_score)) {
            found = true;
            best = accum;
            best_score = total;
            out.lexmax_block = block;
            out.spread_block = weakest;
            out.lexmax_set.clear();
            out.spread_set.clear();
            merge();
          } else if (ok && total == best_score) {
            if (block > out.lexmax_block) out.lexmax_set.clear();
            if (weakest < out.spread_block) out.spread_set.clear();
            out.lexmax_block = std::max(out.lexmax_block, block);
            out.spread_block = std::min(out.spread_block, weakest);
            merge();
          }
          accum.pop_back();
          return;
        }
        std::vector<std::size_t> idx(size - 1);
        std::function<void(std::size_t, std::size_t)> combos = [&](std::size_t level,
                                                                   std::size_t from) {
          if (level == size - 1) {
            std::vector<std::int64_t> set{devs[0]};
            for (const std::size_t i : idx) set.push_back(devs[i]);
            const auto p = static_cast<std::size_t>(std::count(set.begin(), set.end(), nil));
            if (p != 0 && p != padding) return;
            std::vector<std::int64_t> rest;
            for (const std::int64_t d : devs) {
              if (std::find(set.begin(), set.end(), d) == set.end()) rest.push_back(d);
            }
            accum.push_back(set);
            iterate(rest);
            accum.pop_back();
            return;
          }
          for (std::size_t i = from; i < devs.size(); ++i) {
            idx[level] = i;
            combos(level + 1, i + 1);
          }
        };
        combos(0, 1);
      };
  if (size == 1) {
    out.none = false;
    out.partition = 0;
    out.set = required.empty() ? gpus{available.front()} : required;
    if (!required.empty() && !std::binary_search(available.begin(), available.end(), required[0])) {
      out.none = true;
    }
    return out;
  }
  iterate(devices);
  if (!found) return out;
  std::int64_t chosen_score = -1;
  std::vector<std::int64_t> chosen;
  for (const auto& set : best) {
    if (!contains_all(set)) continue;
    if (set_score(set) > chosen_score) {
      chosen_score = set_score(set);
      chosen = set;
    }
  }
  out.none = false;
  out.partition = best_score;
  out.padded = std::count(chosen.begin(), chosen.end(), nil) != 0;
  for (const std::int64_t d : chosen) {
    if (d != nil) out.set.push_back(static_cast<std::uint32_t>(d));
  }
  std::sort(out.set.begin(), out.set.end());
  return out;
}

/// Checks that `answer` is a feasible allocation of `size` GPUs.
void expect_feasible(const packer_answer& answer, const gpus& available, const gpus& required,
                     std::size_t size) {
  ASSERT_EQ(answer.status, packer_status::allocated);
  ASSERT_EQ(answer.gpus.size(), size);
  EXPECT_TRUE(std::is_sorted(answer.gpus.begin(), answer.gpus.end()));
  EXPECT_TRUE(
      std::includes(available.begin(), available.end(), answer.gpus.begin(), answer.gpus.end()));
  EXPECT_TRUE(
      std::includes(answer.gpus.begin(), answer.gpus.end(), required.begin(), required.end()));
}

/// Runs both modes on every size 1..n with nothing and with GPU n-1 required.
void expect_feasible_everywhere(const pair_score_matrix& scores, const std::string& what) {
  const std::size_t n = std::min(scores.size(), max_packer_gpus);
  const gpus all = iota_gpus(n);
  for (std::size_t size = 1; size <= n; ++size) {
    for (const gpus& required : {gpus{}, gpus{static_cast<std::uint32_t>(n - 1)}}) {
      SCOPED_TRACE(what + " size " + std::to_string(size) + " required " +
                   std::to_string(required.size()));
      const auto lexmax = allocate(scores, all, required, size, packer_mode::lexmax);
      ASSERT_THAT(lexmax, IsOk());
      expect_feasible(*lexmax, all, required, size);
      const auto compat = allocate(scores, all, required, size, packer_mode::compat);
      ASSERT_THAT(compat, IsOk());
      // Both modes reach the same best partition; lexmax's block is at least as good.
      EXPECT_EQ(lexmax->partition_score, compat->partition_score);
      if (compat->status == packer_status::allocated) {
        expect_feasible(*compat, all, required, size);
        EXPECT_GE(lexmax->block_score, compat->block_score);
      } else {
        EXPECT_EQ(compat->status, packer_status::padded_block);
      }
    }
  }
}

TEST(AffinityPacker, PairWeightsFollowGoGpuallocator) {
  // SYS 10, NODE 20, PHB 30, PXB 40, PIX 50; unknown and self 0; 100 per NVLink on top.
  EXPECT_EQ(pcie_weight(pcie_relation::sys), 10);
  EXPECT_EQ(pcie_weight(pcie_relation::node), 20);
  EXPECT_EQ(pcie_weight(pcie_relation::phb), 30);
  EXPECT_EQ(pcie_weight(pcie_relation::pxb), 40);
  EXPECT_EQ(pcie_weight(pcie_relation::pix), 50);
  EXPECT_EQ(pcie_weight(pcie_relation::unknown), 0);
  EXPECT_EQ(pcie_weight(pcie_relation::self), 0);
  EXPECT_EQ(pair_weight(pair_relation{pcie_relation::phb, 2}), 230);
  EXPECT_EQ(pair_weight(pair_relation{pcie_relation::unknown, 4}), 400);
  // Go enum ints: 0 unknown, 5 SingleSwitch 50, 6 SameBoard 60, 7 one NVLink, 24 eighteen.
  EXPECT_EQ(go_link_weight(-1).value(), 0);
  EXPECT_EQ(go_link_weight(0).value(), 0);
  EXPECT_EQ(go_link_weight(5).value(), 50);
  EXPECT_EQ(go_link_weight(6).value(), 60);
  EXPECT_EQ(go_link_weight(7).value(), 100);
  EXPECT_EQ(go_link_weight(24).value(), 1800);
  EXPECT_THAT(go_link_weight(25), HasErrc(errc::out_of_range));
}

TEST(AffinityPacker, MatrixFromViewsUsesRelations) {
  const auto topology = make_node_template(node_template::dgx1_v100).value();
  const auto scores = pair_score_matrix::from_topology(topology);
  ASSERT_EQ(scores.size(), 8U);
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      const std::int64_t want = i == j ? 0 : pair_weight(topology.views().relation(i, j));
      EXPECT_EQ(scores.score(i, j), want) << i << "," << j;
    }
  }
  // GPUs 2 and 3: NV2 behind one PCIe switch = 200 + 50.
  EXPECT_EQ(scores.score(2, 3), 250);
}

TEST(AffinityPacker, MatrixValidationNamesTheCell) {
  // Ragged row 1, negative (0,1), asymmetric (1,0) vs (0,1), non-zero diagonal (1,1).
  EXPECT_THAT(pair_score_matrix::from_rows(rows_type{{0, 1}, {1}}), ErrorContains("row 1"));
  EXPECT_THAT(pair_score_matrix::from_rows(rows_type{{0, -1}, {-1, 0}}), ErrorContains("(0, 1)"));
  EXPECT_THAT(pair_score_matrix::from_rows(rows_type{{0, 5}, {6, 0}}), ErrorContains("(1, 0)"));
  EXPECT_THAT(pair_score_matrix::from_rows(rows_type{{0, 5}, {5, 7}}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(pair_score_matrix::from_rows(rows_type{{0, 5}, {5, 0}}), IsOk());
}

TEST(AffinityPacker, Dgx1V100PairsAndQuads) {
  const auto scores = template_scores(node_template::dgx1_v100);
  const gpus all = iota_gpus(8);
  // Size 2: best partition {0,4}{1,5}{2,3}{6,7} = 210+210+250+250 = 920; its best pair is
  // {2,3} (NV2 + PIX = 250) in both modes.
  const auto two = allocate(scores, all, {}, 2, packer_mode::compat).value();
  EXPECT_EQ(two.gpus, (gpus{2, 3}));
  EXPECT_EQ(two.partition_score, 920);
  EXPECT_EQ(allocate(scores, all, {}, 2).value().gpus, (gpus{2, 3}));
  // Size 4: {0,1,2,3}{4,5,6,7}, 1080 each; the first quad wins the tie.
  const auto four = allocate(scores, all, {}, 4).value();
  EXPECT_EQ(four.gpus, (gpus{0, 1, 2, 3}));
  EXPECT_EQ(four.block_score, 1080);
  EXPECT_EQ(allocate(scores, all, {}, 4, packer_mode::compat).value().gpus, (gpus{0, 1, 2, 3}));
  // Size 2 with GPU 5 required: GPU 5's best partner in the 920 partition is 1 (NV2, 210).
  EXPECT_EQ(allocate(scores, all, gpus{5}, 2).value().gpus, (gpus{1, 5}));
}

TEST(AffinityPacker, Dgx2SizeFourPicksAPxbQuad) {
  const auto topology = make_node_template(node_template::dgx2).value();
  const auto scores = pair_score_matrix::from_topology(topology);
  const gpus all = iota_gpus(16);
  const auto answer = allocate(scores, all, {}, 4).value();
  // {0,1,2,3}: two PIX pairs under one PXB switch (6 x NV6 + 2 x 50 + 4 x 40 = 3860).
  EXPECT_EQ(answer.gpus, (gpus{0, 1, 2, 3}));
  EXPECT_EQ(answer.block_score, 3860);
  for (const std::uint32_t a : answer.gpus) {
    for (const std::uint32_t b : answer.gpus) {
      if (a != b) {
        const auto pcie = topology.views().relation(a, b).pcie;
        EXPECT_TRUE(pcie == pcie_relation::pix || pcie == pcie_relation::pxb) << a << "," << b;
      }
    }
  }
  // With GPUs 0..3 taken, the next quad is {4,5,6,7}.
  const gpus rest{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_EQ(allocate(scores, rest, {}, 4).value().gpus, (gpus{4, 5, 6, 7}));
}

TEST(AffinityPacker, EdgePaddingBugInBothModes) {
  const auto scores = padding_edge();
  const gpus all = iota_gpus(5);
  // go-gpuallocator: first best partition {0,1,2}{3,4,nil} (30 + 110 = 140), then the padded
  // block [3,4,nil] (110 > 30): compat reports padded_block and no GPUs.
  const auto compat = allocate(scores, all, {}, 3, packer_mode::compat).value();
  EXPECT_EQ(compat.status, packer_status::padded_block);
  EXPECT_TRUE(compat.gpus.empty());
  EXPECT_EQ(compat.partition_score, 140);
  // lexmax: {0,3,4}{1,2,nil} also scores 140 and its block scores 130: [0,3,4].
  const auto lexmax = allocate(scores, all, {}, 3, packer_mode::lexmax).value();
  EXPECT_EQ(lexmax.status, packer_status::allocated);
  EXPECT_EQ(lexmax.gpus, (gpus{0, 3, 4}));
  EXPECT_EQ(lexmax.block_score, 130);
}

TEST(AffinityPacker, RejectsBadInputs) {
  const auto scores = template_scores(node_template::dgx1_v100);
  const gpus all = iota_gpus(8);
  EXPECT_THAT(allocate(scores, all, {}, 0), HasErrc(errc::invalid_argument));
  EXPECT_THAT(allocate(scores, gpus{0, 1, 1}, {}, 2), HasErrc(errc::invalid_argument));
  EXPECT_THAT(allocate(scores, all, gpus{2, 2}, 2), HasErrc(errc::invalid_argument));
  EXPECT_THAT(allocate(scores, gpus{0, 8}, {}, 1), HasErrc(errc::out_of_range));
  const auto big = matrix(rows_type(17, std::vector<std::int64_t>(17, 0)));
  EXPECT_THAT(allocate(big, iota_gpus(17), {}, 2), HasErrc(errc::out_of_range));
}

TEST(AffinityPacker, GoFailuresAreStatuses) {
  const auto scores = template_scores(node_template::dgx1_v100);
  // Fewer available than size, more required than size, required not available: no GPUs.
  EXPECT_EQ(allocate(scores, gpus{0, 1}, {}, 3).value().status, packer_status::insufficient_gpus);
  EXPECT_EQ(allocate(scores, iota_gpus(8), gpus{0, 1, 2}, 2).value().status,
            packer_status::too_many_required);
  EXPECT_EQ(allocate(scores, gpus{1, 2, 3}, gpus{0}, 2).value().status,
            packer_status::required_unavailable);
  EXPECT_TRUE(allocate(scores, gpus{1, 2, 3}, gpus{0}, 2).value().gpus.empty());
}

TEST(AffinityPacker, DeterministicAndOrderIndependent) {
  const auto scores = template_scores(node_template::dgx2);
  const gpus all = iota_gpus(16);
  gpus shuffled = all;
  std::mt19937 rng(7);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (std::size_t size = 1; size <= 16; ++size) {
    for (const auto mode : {packer_mode::lexmax, packer_mode::compat}) {
      const auto a = allocate(scores, all, {}, size, mode);
      const auto b = allocate(scores, shuffled, {}, size, mode);
      ASSERT_THAT(a, IsOk());
      ASSERT_THAT(b, IsOk());
      // Same inputs (in any order): the same answer.
      EXPECT_EQ(*a, *b) << size;
    }
  }
}

/// Returns a random symmetric n-GPU matrix with pair scores drawn from go-gpuallocator's levels
/// (no link, SYS..PIX, PIX plus 1 or 2 NVLinks, 2 NVLinks plus PXB).
pair_score_matrix random_matrix(std::size_t n, std::mt19937& rng) {
  const std::int64_t levels[] = {0, 10, 20, 30, 40, 50, 110, 210, 240};
  rows_type rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      rows[i][j] = rows[j][i] = levels[rng() % std::size(levels)];
    }
  }
  return matrix(rows);
}

/// Checks both modes against the exhaustive search for `size` GPUs of `available` with the first
/// `r` available GPUs required: compat returns go-gpuallocator's set (or padded_block), both
/// reach its best partition score, lexmax returns a feasible block with the best block score
/// over all best partitions, spread one with the weakest.
void expect_matches_brute_force(const pair_score_matrix& scores, const gpus& available,
                                std::size_t size, std::size_t r, const std::string& what) {
  gpus required(available.begin(), available.begin() + static_cast<std::ptrdiff_t>(r));
  SCOPED_TRACE(what + " size " + std::to_string(size) + " required " + std::to_string(r));
  const auto want = brute_force(scores, available, required, size);
  const auto compat = allocate(scores, available, required, size, packer_mode::compat);
  const auto lexmax = allocate(scores, available, required, size, packer_mode::lexmax);
  ASSERT_THAT(compat, IsOk());
  ASSERT_THAT(lexmax, IsOk());
  if (want.none) {
    EXPECT_NE(compat->status, packer_status::allocated);
    EXPECT_NE(lexmax->status, packer_status::allocated);
    return;
  }
  // compat == go-gpuallocator's answer, padded block included.
  if (want.padded) {
    EXPECT_EQ(compat->status, packer_status::padded_block);
  } else {
    EXPECT_EQ(compat->gpus, want.set);
  }
  expect_feasible(*lexmax, available, required, size);
  if (size > 1) {
    EXPECT_EQ(compat->partition_score, want.partition);
    EXPECT_EQ(lexmax->partition_score, want.partition);
    EXPECT_EQ(lexmax->block_score, want.lexmax_block);
    EXPECT_EQ(lexmax->gpus, want.lexmax_set);
    placement_preferences spread;
    spread.locality = locality_sensitivity::spread;
    const auto weakest = allocate_with(scores, available, required, size, spread);
    ASSERT_THAT(weakest, IsOk());
    expect_feasible(*weakest, available, required, size);
    EXPECT_EQ(weakest->partition_score, want.partition);
    EXPECT_EQ(weakest->block_score, want.spread_block);
    EXPECT_EQ(weakest->gpus, want.spread_set);
  }
}

TEST(AffinityPacker, MatchesExhaustiveGoSearchOnRandomMatrices) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t n = 3 + static_cast<std::size_t>(trial % 8);
    const auto scores = random_matrix(n, rng);
    gpus available;
    for (std::uint32_t g = 0; g < n; ++g) {
      if (rng() % 5 != 0) available.push_back(g);
    }
    if (available.empty()) continue;
    for (std::size_t size = 1; size <= available.size(); ++size) {
      for (std::size_t r = 0; r <= std::min<std::size_t>(size, 3); ++r) {
        expect_matches_brute_force(scores, available, size, r, "trial " + std::to_string(trial));
      }
    }
  }
}

/// Returns true if brute_force() stays cheap for `size` of `n` available GPUs: its first level
/// walks C(padded - 1, size - 1) combinations (padding slots included), at most 30,000 here.
bool first_level_affordable(std::size_t n, std::size_t size) {
  const std::size_t padded = (n + size - 1) / size * size;
  std::uint64_t combos = 1;
  for (std::size_t i = 1; i < size; ++i) combos = combos * (padded - i) / i;
  return combos <= 30000;
}

TEST(AffinityPacker, MatchesExhaustiveGoSearchOnElevenAndTwelveGpus) {
  // 11 and 12 available GPUs (at most 15,400 partitions per call), seeded random matrices: the
  // DP's exactness beyond the 10 GPUs above, for every size whose padding the exhaustive search
  // affords (all but 10 and 11 of 12, and 10 of 11).
  std::mt19937 rng(77);
  for (int trial = 0; trial < 6; ++trial) {
    const auto scores = random_matrix(12, rng);
    gpus available = iota_gpus(12);
    // Odd trials lose one random GPU (11 available, so every size but 1 and 11 pads).
    if (trial % 2 == 1)
      available.erase(available.begin() + static_cast<std::ptrdiff_t>(rng() % 12));
    for (std::size_t size = 1; size <= available.size(); ++size) {
      if (!first_level_affordable(available.size(), size)) continue;
      for (std::size_t r = 0; r <= std::min<std::size_t>(size, 2); ++r) {
        expect_matches_brute_force(scores, available, size, r, "trial " + std::to_string(trial));
      }
    }
  }
}

/// An n-GPU matrix whose pair (i, j), i < j in row order, scores level(rng()).
template <typename Level>
pair_score_matrix level_matrix(std::size_t n, std::mt19937& rng, Level level) {
  rows_type rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) rows[i][j] = rows[j][i] = level(rng());
  }
  return matrix(rows);
}

/// Every size whose exhaustive search is affordable on all n GPUs, no or one required GPU.
void expect_matches_brute_force_at_every_size(const pair_score_matrix& scores, std::size_t n,
                                              const std::string& what) {
  const gpus available = iota_gpus(n);
  for (std::size_t size = 1; size <= n; ++size) {
    if (!first_level_affordable(n, size)) continue;
    for (std::size_t r = 0; r <= 1; ++r) {
      expect_matches_brute_force(scores, available, size, r, what);
    }
  }
}

TEST(AffinityPacker, MatchesExhaustiveGoSearchOnTwoLevelMatrices) {
  // Every pair scores 10 or 20: many equal blocks and many optimal partitions, where the search
  // falls back from the largest blocks to the lowest GPU and compat and spread walk many states.
  std::mt19937 rng(1020);
  for (int trial = 0; trial < 4; ++trial) {
    const std::size_t n = 11 + static_cast<std::size_t>(trial % 2);
    const auto scores = level_matrix(
        n, rng, [](std::mt19937::result_type r) -> std::int64_t { return r % 2 == 0 ? 10 : 20; });
    expect_matches_brute_force_at_every_size(scores, n, "two-level " + std::to_string(trial));
  }
}

TEST(AffinityPacker, MatchesExhaustiveGoSearchOnFewLevelMatrices) {
  // The adversarial inputs of the spread and compat walks (docs/packer.md §5): pair scores from
  // two or three levels (10/20 with 20 at 1/2, 1/4 or 3/4, 10/20/40), 11 and 12 GPUs, every
  // affordable size, no or one required GPU; lexmax and spread must return the exhaustive
  // search's own set (its tie-break), not only its score. 20 at 3/4 makes many blocks tie at
  // the top score: the value search then takes the weakest GPU's blocks (size 3 of 12: four
  // blocks, so also the block table).
  std::mt19937 rng(510);
  for (int trial = 0; trial < 8; ++trial) {
    const std::size_t n = 11 + static_cast<std::size_t>(trial % 2);
    const auto scores = level_matrix(n, rng, [trial](std::mt19937::result_type r) -> std::int64_t {
      return trial / 2 == 0   ? (r % 2 == 0 ? 10 : 20)
             : trial / 2 == 1 ? (r % 4 == 0 ? 20 : 10)
             : trial / 2 == 2 ? std::int64_t{10} << (r % 3)
                              : (r % 4 == 0 ? 10 : 20);
    });
    expect_matches_brute_force_at_every_size(scores, n, "few-level " + std::to_string(trial));
  }
}

TEST(AffinityPacker, MatchesExhaustiveGoSearchOnSixteenGpusForLargeRequests) {
  // 16 GPUs: the exhaustive search is affordable for sizes 1, 8, 9 and 16 (at most 24,310 first
  // blocks); seeded random matrices and the DGX-2 template.
  std::mt19937 rng(16);
  std::vector<std::pair<std::string, pair_score_matrix>> cases;
  for (int trial = 0; trial < 3; ++trial)
    cases.emplace_back("random " + std::to_string(trial), random_matrix(16, rng));
  cases.emplace_back("dgx2", template_scores(node_template::dgx2));
  const gpus all = iota_gpus(16);
  for (const auto& [what, scores] : cases) {
    for (std::size_t size = 1; size <= 16; ++size) {
      if (size > 1 && size < 8) continue;
      if (!first_level_affordable(16, size)) continue;
      for (std::size_t r = 0; r <= 1; ++r) expect_matches_brute_force(scores, all, size, r, what);
    }
  }
}

TEST(AffinityPacker, SizeOneKeepsTheBestConnectedGpusFree) {
  // Sums of pair scores: GPU 0 -> 310, 1 -> 210, 2 -> 310, 3 -> 210 (ties: lowest index).
  const auto scores =
      matrix(rows_type{{0, 100, 200, 10}, {100, 0, 10, 100}, {200, 10, 0, 100}, {10, 100, 100, 0}});
  const gpus all = iota_gpus(4);
  // lexmax: [1]; compat (go-gpuallocator): the first available, [0]; required wins: [2].
  EXPECT_EQ(allocate(scores, all, {}, 1).value().gpus, (gpus{1}));
  EXPECT_EQ(allocate(scores, all, {}, 1, packer_mode::compat).value().gpus, (gpus{0}));
  EXPECT_EQ(allocate(scores, all, gpus{2}, 1).value().gpus, (gpus{2}));
  // Only the available GPUs count: without GPU 1, GPU 3 sums 110 and is taken: [3].
  EXPECT_EQ(allocate(scores, gpus{0, 2, 3}, {}, 1).value().gpus, (gpus{3}));
  // DGX-1V template: every GPU sums 730 (NV2 + 2 x NV1 + PCIe), so the tie gives [0].
  const auto dgx1 = template_scores(node_template::dgx1_v100);
  for (std::uint32_t i = 0; i < 8; ++i) {
    const gpus others = {0, 1, 2, 3, 4, 5, 6, 7};
    std::int64_t sum = 0;
    for (const std::uint32_t j : others) sum += dgx1.score(i, j);
    EXPECT_EQ(sum, 730) << i;
  }
  EXPECT_EQ(allocate(dgx1, iota_gpus(8), {}, 1).value().gpus, (gpus{0}));
}

TEST(AffinityPacker, TrivialRequestsAnswerWithoutTheSearch) {
  // The whole node and one required GPU skip the search (DESIGN.md §8); every mode agrees.
  const auto dgx1 = template_scores(node_template::dgx1_v100);
  placement_preferences spread;
  spread.locality = locality_sensitivity::spread;
  spread.gpu_bonus = std::vector<std::int64_t>{0, 5, 0, 9, 0, 0, 7, 0};
  for (const packer_mode mode : {packer_mode::lexmax, packer_mode::compat}) {
    const auto whole = allocate(dgx1, iota_gpus(8), {}, 8, mode).value();
    EXPECT_EQ(whole.status, packer_status::allocated);
    EXPECT_EQ(whole.gpus, iota_gpus(8));
    // Every GPU's pairs sum to 730 (SizeOneKeepsTheBestConnectedGpusFree): 8 * 730 / 2.
    EXPECT_EQ(whole.block_score, 2920);
    EXPECT_EQ(whole.partition_score, 2920);
    // The rest of a partly used node, listed out of order, with a required GPU.
    const auto rest = allocate(dgx1, gpus{4, 1, 3}, gpus{3}, 3, mode).value();
    EXPECT_EQ(rest.gpus, (gpus{1, 3, 4}));
    const std::int64_t rest_score = dgx1.score(1, 3) + dgx1.score(1, 4) + dgx1.score(3, 4);
    EXPECT_EQ(rest.block_score, rest_score);
    EXPECT_EQ(rest.partition_score, rest_score);
    const auto one = allocate(dgx1, iota_gpus(8), gpus{5}, 1, mode).value();
    EXPECT_EQ(one.gpus, (gpus{5}));
    EXPECT_EQ(one.block_score, 0);
    EXPECT_EQ(one.partition_score, 0);
  }
  EXPECT_EQ(allocate_with(dgx1, iota_gpus(8), {}, 8, spread).value().gpus, iota_gpus(8));
  EXPECT_EQ(allocate_with(dgx1, iota_gpus(8), gpus{6}, 1, spread).value().gpus, (gpus{6}));
  // A required GPU that is not available is still refused before the shortcut.
  EXPECT_EQ(allocate(dgx1, gpus{0, 1}, gpus{5}, 2).value().status,
            packer_status::required_unavailable);
  EXPECT_EQ(allocate(dgx1, gpus{0, 1}, gpus{5}, 1).value().status,
            packer_status::required_unavailable);
}

TEST(AffinityPacker, NodeScoreNormalizesByEighteenNvlinks) {
  // kerthcet node-1: GPUs 0 and 2 with 18 NVLinks (1800) -> 100; 8 NVLinks -> floor(800/18).
  const auto scores = matrix(rows_type{{0, 1800, 800}, {1800, 0, 100}, {800, 100, 0}});
  EXPECT_EQ(node_score(scores, gpus{0, 2}), 44);
  EXPECT_EQ(node_score(scores, gpus{0, 1}), 100);
  // Three GPUs: (1800 + 800 + 100) * 100 / (3 * 1800) = 50.
  EXPECT_EQ(node_score(scores, gpus{0, 1, 2}), 50);
  EXPECT_EQ(node_score(scores, gpus{1}), 0);
  EXPECT_EQ(node_score(scores, gpus{}), 0);
}

TEST(AffinityPacker, StateCarriesAllocations) {
  packer_state state(template_scores(node_template::dgx1_v100));
  // Quads: {0,1,2,3}, then {4,5,6,7}, then nothing is left.
  EXPECT_EQ(state.allocate(4).value().gpus, (gpus{0, 1, 2, 3}));
  EXPECT_EQ(state.allocate(4).value().gpus, (gpus{4, 5, 6, 7}));
  EXPECT_TRUE(state.available().empty());
  EXPECT_EQ(state.allocate(1).value().status, packer_status::insufficient_gpus);
  EXPECT_THAT(state.release(gpus{2, 3}), IsOk());
  EXPECT_EQ(gpus(state.available().begin(), state.available().end()), (gpus{2, 3}));
  EXPECT_THAT(state.release(gpus{3}), HasErrc(errc::already_exists));
  EXPECT_THAT(state.release(gpus{9}), HasErrc(errc::out_of_range));
  // {2,3} is the only pair left.
  EXPECT_EQ(state.allocate(2, gpus{3}).value().gpus, (gpus{2, 3}));
  EXPECT_THAT(packer_state::make(template_scores(node_template::dgx1_v100), gpus{1, 1}),
              HasErrc(errc::invalid_argument));
}

TEST(AffinityPacker, FeasibleOnEveryTemplate) {
  for (const node_template t : all_node_templates()) {
    expect_feasible_everywhere(template_scores(t), std::string(to_string(t)));
  }
}

TEST(AffinityPacker, FeasibleOnEverySharedTopology) {
  namespace fs = std::filesystem;
  std::size_t checked = 0;
  for (const auto& entry :
       fs::directory_iterator(testing::shared_path("data/topologies/nvidia-smi-topo"))) {
    const std::string name = entry.path().filename().string();
    nvidia_smi_import_options options;
    // PARTIAL files (and excerpts such as the HGX H100 one, whose NIC rows are cut) need it.
    options.allow_partial = true;
    const auto topology = import_nvidia_smi_topo(
        testing::read_shared("data/topologies/nvidia-smi-topo/" + name), options);
    ASSERT_THAT(topology, IsOk()) << name;
    expect_feasible_everywhere(pair_score_matrix::from_topology(*topology), name);
    ++checked;
  }
  for (const auto& entry :
       fs::directory_iterator(testing::shared_path("data/topologies/nccl-topo-xml"))) {
    const std::string name = entry.path().filename().string();
    const auto topology =
        import_nccl_xml(testing::read_shared("data/topologies/nccl-topo-xml/" + name));
    ASSERT_THAT(topology, IsOk()) << name;
    expect_feasible_everywhere(pair_score_matrix::from_topology(*topology), name);
    ++checked;
  }
#if defined(HETSCHED_HAVE_HWLOC)
  for (const auto& entry : fs::directory_iterator(testing::shared_path("data/topologies/hwloc"))) {
    const std::string name = entry.path().filename().string();
    const auto topology = import_hwloc_xml(testing::read_shared("data/topologies/hwloc/" + name));
    ASSERT_THAT(topology, IsOk()) << name;
    expect_feasible_everywhere(pair_score_matrix::from_topology(*topology), name);
    ++checked;
  }
#endif
  EXPECT_GE(checked, 8U);
}

}  // namespace
}  // namespace hetsched
