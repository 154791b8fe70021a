// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using testing::IsOk;
using gpus = std::vector<std::uint32_t>;
using rows_type = std::vector<std::vector<std::int64_t>>;

node_topology topo(node_template t) { return make_node_template(t).value(); }

gpus iota_gpus(std::size_t n) {
  gpus out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint32_t>(i);
  return out;
}

pair_score_matrix bandwidth_terms(const node_topology& t) {
  pair_terms terms;
  terms.metric = pair_metric::bandwidth;
  return pair_score_matrix::from_views(t.views(), terms);
}

TEST(PackerBandwidth, NvswitchPairsCarryTheirRealBandwidth) {
  // Through the NVSwitch fabric: DGX-2 NV6 of NVLink 2, DGX A100 NV12 of NVLink 3, HGX H100 NV18
  // of NVLink 4, 25000 MB/s per link; NCCL's app-level figures are 20, 20 and 20.6 GB/s per link.
  const auto dgx2 =
      pair_score_matrix::bandwidths(topo(node_template::dgx2).views(), bandwidth_source::links);
  const auto a100 =
      pair_score_matrix::bandwidths(topo(node_template::dgx_a100).views(), bandwidth_source::links);
  const auto h100 =
      pair_score_matrix::bandwidths(topo(node_template::hgx_h100).views(), bandwidth_source::links);
  EXPECT_EQ(dgx2.score(0, 15), 150000);
  EXPECT_EQ(a100.score(0, 7), 300000);
  EXPECT_EQ(h100.score(3, 4), 450000);
  const auto h100_nccl =
      pair_score_matrix::bandwidths(topo(node_template::hgx_h100).views(), bandwidth_source::nccl);
  EXPECT_EQ(h100_nccl.score(0, 1), 370800);
  // The NCCL source ignores NCCL's LOC bandwidth on the diagonal.
  EXPECT_EQ(h100_nccl.score(2, 2), 0);
  // Bandwidth scores: 2^18 * bandwidth + the link-count score (DGX A100 0-1: NV12 + PIX = 1250).
  const auto scores = bandwidth_terms(topo(node_template::dgx_a100));
  EXPECT_EQ(scores.score(0, 1), 300000 * bandwidth_scale + 1250);
  // Default terms equal from_views(views).
  const auto t = topo(node_template::dgx1_v100);
  EXPECT_EQ(pair_score_matrix::from_views(t.views(), pair_terms{}),
            pair_score_matrix::from_views(t.views()));
}

TEST(PackerBandwidth, BandwidthMetricSeesTheSocketSplitOfAllSysBoxes) {
  // 8x RTX 4090: every pair reads SYS (10), but same-socket pairs move 31504 MB/s and
  // cross-socket pairs 22000 (go-gpuallocator issue 17).
  const auto t = topo(node_template::pcie_8gpu);
  const auto link = pair_score_matrix::from_topology(t);
  const auto bw = bandwidth_terms(t);
  const gpus seven{0, 1, 2, 4, 5, 6, 7};
  // Link count: every 4-block scores 60, so the lexicographically first one, across sockets.
  EXPECT_EQ(allocate(link, seven, {}, 4).value().gpus, (gpus{0, 1, 2, 4}));
  // Bandwidth: the whole socket 1 quad.
  EXPECT_EQ(allocate(bw, seven, {}, 4).value().gpus, (gpus{4, 5, 6, 7}));
  // A same-NUMA term on the link count does the same.
  pair_terms numa;
  numa.same_numa = 5;
  const auto numa_scores = pair_score_matrix::from_views(t.views(), numa);
  EXPECT_EQ(numa_scores.score(0, 1), 15);
  EXPECT_EQ(numa_scores.score(0, 4), 10);
  EXPECT_EQ(allocate(numa_scores, seven, {}, 4).value().gpus, (gpus{4, 5, 6, 7}));
  // Pairs {0, x} must cross in every partition of {0, 4, 5, 6}: the best block is {4, 5}.
  EXPECT_EQ(allocate(link, gpus{0, 4, 5, 6}, {}, 2).value().gpus, (gpus{0, 4}));
  EXPECT_EQ(allocate(bw, gpus{0, 4, 5, 6}, {}, 2).value().gpus, (gpus{4, 5}));
}

TEST(PackerBandwidth, RingTreeAndPairBottlenecks) {
  const auto dgx1 = pair_score_matrix::bandwidths(topo(node_template::dgx1_v100).views(),
                                                  bandwidth_source::links);
  // The hybrid cube-mesh has an NV2 ring 0-3-2-1-5-6-7-4-0 (50000 MB/s); the weakest pair is a
  // SYS pair (10000).
  EXPECT_EQ(collective_bandwidth_of(dgx1, iota_gpus(8)).value(),
            (collective_bandwidth{50000, 50000, 10000}));
  // {0,1,2,3}: NV2 on 0-3, 1-2, 2-3 only, so GPU 0 has one NV2 pair and the ring needs an NV1
  // (25000); the chain 0-3-2-1 is all NV2.
  EXPECT_EQ(collective_bandwidth_of(dgx1, gpus{0, 1, 2, 3}).value(),
            (collective_bandwidth{25000, 50000, 25000}));
  EXPECT_EQ(collective_bandwidth_of(dgx1, gpus{0, 5}).value(),
            (collective_bandwidth{10000, 10000, 10000}));
  EXPECT_EQ(collective_bandwidth_of(dgx1, gpus{3}).value(), (collective_bandwidth{0, 0, 0}));
  // All-SYS box: a ring over both sockets crosses twice (22000); one socket stays at 31504.
  const auto pcie = pair_score_matrix::bandwidths(topo(node_template::pcie_8gpu).views(),
                                                  bandwidth_source::links);
  EXPECT_EQ(collective_bandwidth_of(pcie, iota_gpus(8)).value(),
            (collective_bandwidth{22000, 22000, 22000}));
  EXPECT_EQ(collective_bandwidth_of(pcie, gpus{4, 5, 6, 7}).value(),
            (collective_bandwidth{31504, 31504, 31504}));
  // A ring of five where the only way round uses the 1-unit edge: a path 0-1-2-3-4 of 9s
  // closed by (4,0) = 1, every other pair 1 as well.
  rows_type rows(5, std::vector<std::int64_t>(5, 1));
  for (std::size_t i = 0; i < 5; ++i) rows[i][i] = 0;
  for (std::size_t i = 0; i + 1 < 5; ++i) rows[i][i + 1] = rows[i + 1][i] = 9;
  const auto path = pair_score_matrix::from_rows(rows).value();
  EXPECT_EQ(collective_bandwidth_of(path, iota_gpus(5)).value(), (collective_bandwidth{1, 9, 1}));
  // Errors name the GPU.
  EXPECT_THAT(collective_bandwidth_of(dgx1, gpus{0, 8}), HasErrc(errc::out_of_range));
  EXPECT_THAT(collective_bandwidth_of(dgx1, gpus{1, 1}), ErrorContains("GPU 1"));
}

TEST(PackerBandwidth, BandwidthNodeScoreRanksNvlinkGenerations) {
  // 100 * ring / 900000: DGX-2 16, DGX A100 33, HGX H100 50; DGX-1 V100 (NV2 ring) 5.
  auto score = [](node_template t, const gpus& set) {
    return bandwidth_node_score(
               pair_score_matrix::bandwidths(topo(t).views(), bandwidth_source::links), set)
        .value();
  };
  EXPECT_EQ(score(node_template::dgx2, iota_gpus(16)), 16);
  EXPECT_EQ(score(node_template::dgx_a100, gpus{0, 7}), 33);
  EXPECT_EQ(score(node_template::hgx_h100, iota_gpus(8)), 50);
  EXPECT_EQ(score(node_template::dgx1_v100, iota_gpus(8)), 5);
  EXPECT_EQ(score(node_template::hgx_h100, gpus{2}), 0);
  const auto h100 =
      pair_score_matrix::bandwidths(topo(node_template::hgx_h100).views(), bandwidth_source::links);
  // A reference at or below the ring clips to 100.
  EXPECT_EQ(bandwidth_node_score(h100, gpus{0, 1}, 450000).value(), 100);
  EXPECT_EQ(bandwidth_node_score(h100, gpus{0, 1}, 0).value(), 0);
}

TEST(PackerPreferences, ConsolidateWithoutBonusIsAllocate) {
  for (const node_template t : {node_template::dgx1_v100, node_template::dgx2,
                                node_template::dgx_a100, node_template::workstation_4gpu}) {
    const auto scores = pair_score_matrix::from_topology(topo(t));
    const gpus all = iota_gpus(scores.size());
    for (std::size_t size = 1; size <= scores.size(); ++size) {
      EXPECT_EQ(allocate_with(scores, all, {}, size, {}).value(),
                allocate(scores, all, {}, size).value())
          << to_string(t) << " size " << size;
    }
  }
}

TEST(PackerPreferences, NumaBonusPicksTheJobsNumaNode) {
  // DGX A100 GPUs sit on NUMA 3,3,1,1,7,7,5,5. Without a preference: {0,1}; with the job's
  // CPUs on NUMA 7 and 1000 per local GPU: {4,5}.
  const auto t = topo(node_template::dgx_a100);
  const auto scores = pair_score_matrix::from_topology(t);
  const gpus all = iota_gpus(8);
  EXPECT_EQ(allocate_with(scores, all, {}, 2, {}).value().gpus, (gpus{0, 1}));
  EXPECT_EQ(numa_bonus(t.views(), 7, 1000),
            (std::vector<std::int64_t>{0, 0, 0, 0, 1000, 1000, 0, 0}));
  placement_preferences prefs;
  prefs.gpu_bonus = numa_bonus(t.views(), 7, 1000);
  const auto answer = allocate_with(scores, all, {}, 2, prefs).value();
  EXPECT_EQ(answer.gpus, (gpus{4, 5}));
  // The block score stays the pair score (1250); the partition is still the best one.
  EXPECT_EQ(answer.block_score, 1250);
  EXPECT_EQ(answer.partition_score, 5000);
  EXPECT_EQ(numa_bonus(t.views(), -1, 1000), std::vector<std::int64_t>(8, 0));
  // HGX H100: every pair NV18 + SYS (1810), so every quad ties; GPUs 4-7 are local to NUMA 1.
  const auto h100 = topo(node_template::hgx_h100);
  const auto h100_scores = pair_score_matrix::from_topology(h100);
  EXPECT_EQ(allocate(h100_scores, all, {}, 4).value().gpus, (gpus{0, 1, 2, 3}));
  placement_preferences numa1;
  numa1.gpu_bonus = numa_bonus(h100.views(), 1, 500);
  EXPECT_EQ(allocate_with(h100_scores, all, {}, 4, numa1).value().gpus, (gpus{4, 5, 6, 7}));
  // With GPU 4 busy, NUMA 1 keeps its three GPUs and adds the lowest other one.
  EXPECT_EQ(allocate_with(h100_scores, gpus{0, 1, 2, 3, 5, 6, 7}, {}, 4, numa1).value().gpus,
            (gpus{0, 5, 6, 7}));
}

TEST(PackerPreferences, NicBonusFollowsGpuDirectLevel) {
  // 8x RTX 4090: only GPU 6 has NICs, behind its host bridge (PHB): nothing at PXB.
  const auto t = topo(node_template::pcie_8gpu);
  EXPECT_EQ(nic_bonus(t.views(), 7), std::vector<std::int64_t>(8, 0));
  const auto phb = nic_bonus(t.views(), 1000, pcie_relation::phb);
  EXPECT_EQ(phb, (std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 1000, 0}));
  placement_preferences prefs;
  prefs.gpu_bonus = phb;
  // Size 1: the NIC GPU; size 2 with bandwidth scores: GPU 6 with its socket's first GPU.
  EXPECT_EQ(
      allocate_with(pair_score_matrix::from_topology(t), iota_gpus(8), {}, 1, prefs).value().gpus,
      (gpus{6}));
  EXPECT_EQ(allocate_with(bandwidth_terms(t), iota_gpus(8), {}, 2, prefs).value().gpus,
            (gpus{4, 6}));
  // DGX A100: every GPU shares a PCIe switch tree with two NICs (PXB).
  EXPECT_EQ(nic_bonus(topo(node_template::dgx_a100).views(), 3), std::vector<std::int64_t>(8, 3));
}

TEST(PackerPreferences, SpreadTakesTheWeakestBlockOfABestPartition) {
  placement_preferences spread;
  spread.locality = locality_sensitivity::spread;
  // DGX-1 V100 size 2: best partition {0,4}{1,5}{2,3}{6,7} (920). consolidate takes {2,3}
  // (NV2 + PIX = 250); spread takes {0,4} (NV2 + SYS = 210) and leaves both 250 pairs.
  const auto dgx1 = pair_score_matrix::from_topology(topo(node_template::dgx1_v100));
  const auto loose = allocate_with(dgx1, iota_gpus(8), {}, 2, spread).value();
  EXPECT_EQ(loose.gpus, (gpus{0, 4}));
  EXPECT_EQ(loose.block_score, 210);
  EXPECT_EQ(loose.partition_score, 920);
  EXPECT_EQ(allocate_with(dgx1, iota_gpus(8), {}, 2, {}).value().gpus, (gpus{2, 3}));
  // DGX-2 size 3: consolidate {0,1,2} (PIX + 2 PXB, 1930); spread {0,4,8} (1840, one per
  // socket quad), same partition score 9560.
  const auto dgx2 = pair_score_matrix::from_topology(topo(node_template::dgx2));
  const auto three = allocate_with(dgx2, iota_gpus(16), {}, 3, spread).value();
  EXPECT_EQ(three.gpus, (gpus{0, 4, 8}));
  EXPECT_EQ(three.block_score, 1840);
  EXPECT_EQ(three.partition_score, 9560);
  // Required GPUs are honoured: GPU 2 with its weakest partner in a best partition.
  const auto with_two = allocate_with(dgx1, iota_gpus(8), gpus{2}, 2, spread).value();
  EXPECT_EQ(with_two.partition_score, 920);
  EXPECT_EQ(with_two.gpus, (gpus{2, 3}));
}

/// The spread answer by enumerating every partition (go-gpuallocator's padding rules): over the
/// partitions with the best total, the padding-free blocks holding `required`, highest bonus -
/// block score, then lexicographically smallest.
gpus brute_spread(const pair_score_matrix& s, const gpus& available, const gpus& required,
                  std::size_t size, const std::vector<std::int64_t>& bonus) {
  constexpr std::int64_t nil = -1;
  std::vector<std::int64_t> devices(available.begin(), available.end());
  while (devices.size() % size != 0) devices.push_back(nil);
  const auto padding = static_cast<std::size_t>(std::count(devices.begin(), devices.end(), nil));
  auto block_score = [&](const std::vector<std::int64_t>& b) {
    std::int64_t total = 0;
    for (std::size_t x = 0; x < b.size(); ++x) {
      for (std::size_t y = x + 1; y < b.size(); ++y) {
        if (b[x] != nil && b[y] != nil) {
          total += s.score(static_cast<std::size_t>(b[x]), static_cast<std::size_t>(b[y]));
        }
      }
    }
    return total;
  };
  auto holds_required = [&](const std::vector<std::int64_t>& b) {
    return std::all_of(required.begin(), required.end(), [&](std::uint32_t r) {
      return std::find(b.begin(), b.end(), std::int64_t{r}) != b.end();
    });
  };
  std::int64_t best_total = -1;
  std::vector<std::vector<std::int64_t>> best_blocks;  // Blocks of the best partitions.
  std::vector<std::vector<std::int64_t>> accum;
  std::function<void(std::vector<std::int64_t>)> recurse = [&](std::vector<std::int64_t> left) {
    if (left.empty()) {
      bool ok = required.empty();
      std::int64_t total = 0;
      for (const auto& b : accum) {
        const bool padded = std::count(b.begin(), b.end(), nil) != 0;
        if (!padded && holds_required(b)) ok = true;
        total += block_score(b);
      }
      if (!ok) return;
      if (total > best_total) {
        best_total = total;
        best_blocks.clear();
      }
      if (total == best_total) {
        for (const auto& b : accum) {
          if (std::count(b.begin(), b.end(), nil) == 0 && holds_required(b)) {
            best_blocks.push_back(b);
          }
        }
      }
      return;
    }
    std::vector<std::size_t> pick;
    std::function<void(std::size_t)> choose = [&](std::size_t from) {
      if (pick.size() == size - 1) {
        std::vector<std::int64_t> b{left[0]};
        for (const std::size_t i : pick) b.push_back(left[i]);
        const auto p = static_cast<std::size_t>(std::count(b.begin(), b.end(), nil));
        if (p != 0 && p != padding) return;
        std::vector<std::int64_t> rest;
        for (std::size_t i = 1; i < left.size(); ++i) {
          if (std::find(pick.begin(), pick.end(), i) == pick.end()) rest.push_back(left[i]);
        }
        accum.push_back(b);
        recurse(rest);
        accum.pop_back();
        return;
      }
      for (std::size_t i = from; i < left.size(); ++i) {
        pick.push_back(i);
        choose(i + 1);
        pick.pop_back();
      }
    };
    choose(1);
  };
  recurse(devices);
  gpus chosen;
  std::int64_t chosen_key = 0;
  for (const auto& b : best_blocks) {
    gpus set(b.begin(), b.end());
    std::sort(set.begin(), set.end());
    std::int64_t key = -block_score(b);
    for (const std::uint32_t g : set) key += bonus.empty() ? 0 : bonus[g];
    if (chosen.empty() || key > chosen_key || (key == chosen_key && set < chosen)) {
      chosen = set;
      chosen_key = key;
    }
  }
  return chosen;
}

TEST(PackerPreferences, SpreadMatchesExhaustiveEnumeration) {
  std::mt19937 rng(31);
  const std::int64_t levels[] = {0, 10, 20, 40, 50, 110, 210, 250};
  std::size_t checked = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const std::size_t n = 3 + static_cast<std::size_t>(trial % 6);
    rows_type rows(n, std::vector<std::int64_t>(n, 0));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        rows[i][j] = rows[j][i] = levels[rng() % std::size(levels)];
      }
    }
    const auto scores = pair_score_matrix::from_rows(rows).value();
    gpus available;
    for (std::uint32_t g = 0; g < n; ++g) {
      if (rng() % 5 != 0) available.push_back(g);
    }
    if (available.size() < 2) continue;
    std::vector<std::int64_t> bonus(n, 0);
    for (auto& b : bonus) b = rng() % 3 == 0 ? levels[rng() % std::size(levels)] : 0;
    for (std::size_t size = 2; size <= available.size(); ++size) {
      for (const bool with_required : {false, true}) {
        for (const bool with_bonus : {false, true}) {
          const gpus required = with_required ? gpus{available[rng() % available.size()]} : gpus{};
          placement_preferences prefs;
          prefs.locality = locality_sensitivity::spread;
          if (with_bonus) prefs.gpu_bonus = bonus;
          SCOPED_TRACE("trial " + std::to_string(trial) + " size " + std::to_string(size));
          const auto got = allocate_with(scores, available, required, size, prefs).value();
          EXPECT_EQ(got.gpus, brute_spread(scores, available, required, size, prefs.gpu_bonus));
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 800U);
}

TEST(PackerPreferences, RejectsBadBonuses) {
  const auto dgx1 = pair_score_matrix::from_topology(topo(node_template::dgx1_v100));
  placement_preferences prefs;
  prefs.gpu_bonus = {1, 2, 3};
  EXPECT_THAT(allocate_with(dgx1, iota_gpus(8), {}, 2, prefs), ErrorContains("3 values"));
  prefs.gpu_bonus = std::vector<std::int64_t>(8, 0);
  prefs.gpu_bonus[5] = -1;
  EXPECT_THAT(allocate_with(dgx1, iota_gpus(8), {}, 2, prefs), ErrorContains("GPU 5"));
  prefs.gpu_bonus[5] = 0;
  EXPECT_THAT(allocate_with(dgx1, iota_gpus(8), {}, 0, prefs), HasErrc(errc::invalid_argument));
  EXPECT_EQ(allocate_with(dgx1, gpus{0}, {}, 2, prefs).value().status,
            packer_status::insufficient_gpus);
  EXPECT_THAT(allocate_with(dgx1, iota_gpus(8), {}, 2, prefs), IsOk());
}

}  // namespace
}  // namespace hetsched
