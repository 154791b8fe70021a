// SPDX-License-Identifier: MIT
// The packer on every real machine under ../shared/data/topologies (hwloc XML, NCCL XML,
// nvidia-smi topo -m): each file is imported and every request size is run in every mode, with
// the invariants checked for each answer and the concrete answers pinned per file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/import.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"
#if defined(HETSCHED_HAVE_HWLOC)
#  include <hetsched/topology/hwloc_import.hpp>
#endif

namespace hetsched {
namespace {

using testing::IsOk;
using gpus = std::vector<std::uint32_t>;

/// What each file must give: GPU count, ring bandwidth of all GPUs (links source), and the
/// lexmax blocks of sizes 2 and 4 and the spread block of size 2 on the whole free node.
struct expected_file {
  std::string path;
  std::size_t gpu_count = 0;
  std::int64_t ring_mb_s = 0;
  gpus lexmax2;
  gpus spread2;
  gpus lexmax4;
};

std::vector<expected_file> expectations() {
  return {
    // 16 NV6 GPUs but rows GPU0-3 only: pairs among GPUs 4..15 are unknown (no NVLink, 0 MB/s),
    // so no ring beats 0 and the best pair is an NV6 pair with GPU 0..3.
    {"nvidia-smi-topo/dgx2_nccl-tests-issue78_PARTIAL.txt", 16, 0, {0, 4}, {4, 5}, {0, 4, 5, 6}},
        // DGX-1V numbering: NV2 + PIX pair {2,3}; spread takes the NV2 + SYS pair {0,4}; the NVLink
        // ring 0-3-2-1-5-6-7-4 runs at 50 GB/s.
        {"nvidia-smi-topo/dgx1v-like_v100-sxm2x8_dlperf.txt",
         8,
         50000,
         {2, 3},
         {0, 4},
         {0, 1, 2, 3}},
        // A100 PCIe with NV12 bridges on (0,2), (1,3), (4,5), (6,7): pairs follow the bridges; the
        // importer knows no PCIe speed, so SYS pairs carry 0 MB/s and so does the ring.
        {"nvidia-smi-topo/a100-pcie-8x-nvlink-bridge-pairs_k8s-device-plugin-issue546.txt",
         8,
         0,
         {0, 2},
         {0, 2},
         {0, 1, 2, 3}},
        // HGX H100: NV18 everywhere through the NVSwitches, 450 GB/s per pair and per ring.
        {"nvidia-smi-topo/hgx-h100-sxm_nccl-issue1264.txt",
         8,
         450000,
         {0, 1},
         {0, 1},
         {0, 1, 2, 3}},
        // 8x RTX 4090, every pair SYS and no PCIe speed known: lexicographic ties.
        {"nvidia-smi-topo/pcie-only-8x-rtx4090_go-gpuallocator-issue17.txt",
         8,
         0,
         {0, 1},
         {0, 1},
         {0, 1, 2, 3}},
        // DGX A100 rows GPU0-5 only: GPUs 6 and 7 reach each other through no known link.
        {"nvidia-smi-topo/dgx-a100-320gb_dcgm-issue149_PARTIAL.txt",
         8,
         300000,
         {0, 1},
         {0, 6},
         {0, 1, 2, 6}},
        // Azure NDv4 / NDv2: PCIe skeletons (NCCL adds NVLinks at run time); rings cross the
        // inter-CPU link (AMD 16 GB/s, Skylake 10 GB/s).
        {"nccl-topo-xml/azure-ndv4-topo.xml", 8, 16000, {0, 1}, {0, 1}, {0, 1, 2, 3}},
        {"nccl-topo-xml/azure-ndv2-topo.xml", 8, 10000, {0, 1}, {0, 1}, {0, 1, 2, 3}},
#if defined(HETSCHED_HAVE_HWLOC)
        // DGX-2 from hwloc: NV6 through 12 NVSwitches (150 GB/s), PIX pairs and PXB quads.
        {"hwloc/nvidiaDGX2.xml", 16, 150000, {0, 1}, {0, 1}, {0, 1, 2, 3}},
        // Tesla K40m + Radeon under one host bridge (PHB, no known speed).
        {"hwloc/32em64t-2n8c2t-pci-normalio.xml", 2, 0, {0, 1}, {0, 1}, {}},
        // Machines without a GPU: every request is insufficient_gpus.
        {"hwloc/24em64t-2n6c2t-pci.xml", 0, 0, {}, {}, {}},
        {"hwloc/devel09-pci.xml", 0, 0, {}, {}, {}},
        {"hwloc/fakeheterodistances.xml", 0, 0, {}, {}, {}},
        {"hwloc/16amd64-4distances.xml", 0, 0, {}, {}, {}},
#endif
  };
}

std::optional<node_topology> import_file(const std::string& path) {
  const std::string text = testing::read_shared("data/topologies/" + path);
  if (path.starts_with("nvidia-smi-topo/")) {
    nvidia_smi_import_options options;
    options.allow_partial = true;
    auto t = import_nvidia_smi_topo(text, options);
    EXPECT_THAT(t, IsOk()) << path;
    if (t) return *t;
  } else if (path.starts_with("nccl-topo-xml/")) {
    auto t = import_nccl_xml(text);
    EXPECT_THAT(t, IsOk()) << path;
    if (t) return *t;
#if defined(HETSCHED_HAVE_HWLOC)
  } else {
    auto t = import_hwloc_xml(text);
    EXPECT_THAT(t, IsOk()) << path;
    if (t) return *t;
#endif
  }
  return std::nullopt;
}

/// Checks one answer: status, size, order, subset of the free GPUs, required held, block score.
void check_answer(const pair_score_matrix& scores, const packer_answer& a, const gpus& free,
                  const gpus& required, std::size_t size) {
  ASSERT_EQ(a.status, packer_status::allocated);
  ASSERT_EQ(a.gpus.size(), size);
  EXPECT_TRUE(std::is_sorted(a.gpus.begin(), a.gpus.end()));
  EXPECT_TRUE(std::includes(free.begin(), free.end(), a.gpus.begin(), a.gpus.end()));
  EXPECT_TRUE(std::includes(a.gpus.begin(), a.gpus.end(), required.begin(), required.end()));
  EXPECT_EQ(a.block_score, scores.set_score(a.gpus));
}

/// Every size 1..n, without and with a required GPU, in every mode and metric.
void run_every_size(const node_topology& t, const std::string& what) {
  const auto& views = t.views();
  const auto link = pair_score_matrix::from_topology(t);
  pair_terms terms;
  terms.metric = pair_metric::bandwidth;
  terms.same_numa = 7;
  const auto bw_scores = pair_score_matrix::from_views(views, terms);
  const auto bandwidths = pair_score_matrix::bandwidths(views, bandwidth_source::links);
  const std::size_t n = std::min(views.gpu_count(), max_packer_gpus);
  gpus all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::uint32_t>(i);
  placement_preferences spread;
  spread.locality = locality_sensitivity::spread;
  placement_preferences near;
  near.gpu_bonus = nic_bonus(views, 50);
  for (std::size_t size = 1; size <= n; ++size) {
    for (const gpus& required : {gpus{}, gpus{static_cast<std::uint32_t>(n - 1)}}) {
      SCOPED_TRACE(what + " size " + std::to_string(size) + " required " +
                   std::to_string(required.size()));
      const auto lexmax = allocate(link, all, required, size).value();
      const auto compat = allocate(link, all, required, size, packer_mode::compat).value();
      const auto loose = allocate_with(link, all, required, size, spread).value();
      const auto with_nic = allocate_with(link, all, required, size, near).value();
      const auto by_bw = allocate(bw_scores, all, required, size).value();
      check_answer(link, lexmax, all, required, size);
      check_answer(link, loose, all, required, size);
      check_answer(link, with_nic, all, required, size);
      check_answer(bw_scores, by_bw, all, required, size);
      // One best partition score for every lexmax-family answer; lexmax's block is the best of
      // it and spread's the worst.
      EXPECT_EQ(compat.partition_score, lexmax.partition_score);
      EXPECT_EQ(loose.partition_score, lexmax.partition_score);
      EXPECT_EQ(with_nic.partition_score, lexmax.partition_score);
      EXPECT_LE(loose.block_score, lexmax.block_score);
      if (compat.status == packer_status::allocated) {
        check_answer(link, compat, all, required, size);
        EXPECT_LE(compat.block_score, lexmax.block_score);
      } else {
        EXPECT_EQ(compat.status, packer_status::padded_block);
      }
      // Bottlenecks: pair <= ring <= tree; the node score is a percentage.
      const auto figures = collective_bandwidth_of(bandwidths, by_bw.gpus).value();
      EXPECT_LE(figures.pair_min_mb_s, figures.ring_mb_s);
      EXPECT_LE(figures.ring_mb_s, figures.tree_mb_s);
      const auto score = bandwidth_node_score(bandwidths, by_bw.gpus).value();
      EXPECT_GE(score, 0);
      EXPECT_LE(score, 100);
      EXPECT_GE(node_score(link, lexmax.gpus), 0);
      EXPECT_LE(node_score(link, lexmax.gpus), 100);
    }
    // Sequential requests of this size until the node is full: disjoint blocks, floor(n/size)
    // of them.
    packer_state state(link);
    std::set<std::uint32_t> taken;
    std::size_t blocks = 0;
    while (state.available().size() >= size) {
      const auto a = state.allocate(size).value();
      ASSERT_EQ(a.status, packer_status::allocated);
      for (const std::uint32_t g : a.gpus) EXPECT_TRUE(taken.insert(g).second) << what << g;
      ++blocks;
    }
    EXPECT_EQ(blocks, n / size) << what << " size " << size;
  }
}

TEST(PackerOnSharedTopologies, EveryFileEverySize) {
  std::size_t files = 0;
  for (const auto& e : expectations()) {
    SCOPED_TRACE(e.path);
    const auto topology = import_file(e.path);
    ASSERT_TRUE(topology.has_value());
    const auto& views = topology->views();
    ASSERT_EQ(views.gpu_count(), e.gpu_count);
    ++files;
    const auto link = pair_score_matrix::from_topology(*topology);
    gpus all(e.gpu_count);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint32_t>(i);
    if (e.gpu_count == 0) {
      EXPECT_EQ(allocate(link, all, {}, 1).value().status, packer_status::insufficient_gpus);
      continue;
    }
    const auto bandwidths = pair_score_matrix::bandwidths(views, bandwidth_source::links);
    EXPECT_EQ(collective_bandwidth_of(bandwidths, all).value().ring_mb_s, e.ring_mb_s);
    EXPECT_EQ(allocate(link, all, {}, 2).value().gpus, e.lexmax2);
    placement_preferences spread;
    spread.locality = locality_sensitivity::spread;
    EXPECT_EQ(allocate_with(link, all, {}, 2, spread).value().gpus, e.spread2);
    if (e.gpu_count >= 4) {
      EXPECT_EQ(allocate(link, all, {}, 4).value().gpus, e.lexmax4);
    }
    run_every_size(*topology, e.path);
  }
  // Every file of the three folders is in the table (4 hwloc files have no GPU).
  std::size_t on_disk = 0;
  for (const char* dir : {
         "nvidia-smi-topo", "nccl-topo-xml"
#if defined(HETSCHED_HAVE_HWLOC)
             ,
             "hwloc"
#endif
       }) {
    for (const auto& entry :
         std::filesystem::directory_iterator(testing::shared_path("data/topologies/") + dir)) {
      if (entry.is_regular_file()) ++on_disk;
    }
  }
  EXPECT_EQ(files, on_disk);
}

TEST(PackerOnSharedTopologies, NumaTermSplitsTheAllSysBox) {
  // The published 8x RTX 4090 matrix reads SYS everywhere; only the NUMA affinity column (0-3,
  // 4-7) tells the sockets apart. With 5 per same-NUMA pair the quad stays on one socket.
  const auto t = import_file("nvidia-smi-topo/pcie-only-8x-rtx4090_go-gpuallocator-issue17.txt");
  ASSERT_TRUE(t.has_value());
  const gpus seven{0, 1, 2, 4, 5, 6, 7};
  EXPECT_EQ(allocate(pair_score_matrix::from_topology(*t), seven, {}, 4).value().gpus,
            (gpus{0, 1, 2, 4}));
  pair_terms numa;
  numa.same_numa = 5;
  EXPECT_EQ(allocate(pair_score_matrix::from_views(t->views(), numa), seven, {}, 4).value().gpus,
            (gpus{4, 5, 6, 7}));
}

TEST(PackerOnSharedTopologies, BridgePairsAreHandedOutWhole) {
  // k8s-device-plugin #546: four 2-GPU jobs must get the four NV12 bridge pairs.
  const auto t = import_file(
      "nvidia-smi-topo/a100-pcie-8x-nvlink-bridge-pairs_k8s-device-plugin-issue546.txt");
  ASSERT_TRUE(t.has_value());
  packer_state state(pair_score_matrix::from_topology(*t));
  std::vector<gpus> got;
  for (int i = 0; i < 4; ++i) got.push_back(state.allocate(2).value().gpus);
  EXPECT_EQ(got, (std::vector<gpus>{{0, 2}, {1, 3}, {4, 5}, {6, 7}}));
}

}  // namespace
}  // namespace hetsched
