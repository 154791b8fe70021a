// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <hetsched/policies/gang_placement.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using testing::ErrorContains;
using testing::HasErrc;
using gpus = std::vector<std::uint32_t>;
using free_lists = std::vector<gpus>;

gpus iota_gpus(std::uint32_t from, std::uint32_t to) {
  gpus out;
  for (std::uint32_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

/// 8 DGX A100 in racks of 2 and pods of 2 racks: node (height 0) < rack < pod < cluster (3).
gang_placer small_cluster() {
  return gang_placer::make(cluster_builder("t")
                               .add_nodes(node_template::dgx_a100, 8)
                               .racks(2)
                               .tier("pod", 2)
                               .build()
                               .value());
}

free_lists all_free(const gang_placer& p) {
  free_lists out;
  for (const auto& n : p.cluster().nodes()) out.push_back(iota_gpus(0, n.gpu_count));
  return out;
}

std::vector<std::uint32_t> nodes_of(const gang_placement& g) {
  std::vector<std::uint32_t> out;
  for (const auto& t : g.tasks) out.push_back(t.node.value());
  return out;
}

TEST(GangPlacement, TwoWholeNodesShareARack) {
  const auto p = small_cluster();
  const auto g = p.place(all_free(p), gang_request{2, 8}).value();
  ASSERT_TRUE(g.placed());
  // Nodes 0 and 1 (rack-0): the lowest group holding two 8-GPU tasks, first of four equal racks.
  EXPECT_EQ(nodes_of(g), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(g.level, affinity_level::rack);
  EXPECT_EQ(p.cluster().groups()[g.group].name, "rack-0");
  EXPECT_EQ(g.nodes_used, 2U);
  EXPECT_EQ(g.tasks[1].gpus, iota_gpus(0, 8));
  // Node 1's GPUs are cluster devices 8..15.
  EXPECT_EQ(g.tasks[1].devices.front(), device_id(8));
  EXPECT_EQ(g.tasks[1].devices.back(), device_id(15));
}

TEST(GangPlacement, BestFitAndFewestChildGroups) {
  const auto p = small_cluster();
  auto free = all_free(p);
  free[1] = iota_gpus(4, 8);  // Node 1 half used: rack-0 holds one 8-GPU task.
  // Two tasks of 8: rack-1 (nodes 2, 3).
  EXPECT_EQ(nodes_of(p.place(free, gang_request{2, 8}).value()),
            (std::vector<std::uint32_t>{2, 3}));
  // One task of 4: the best-fit node is node 1 (4 free), which gives its GPUs 4..7.
  const auto small = p.place(free, gang_request{1, 4}).value();
  EXPECT_EQ(nodes_of(small), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(small.tasks[0].gpus, iota_gpus(4, 8));
  EXPECT_EQ(small.level, affinity_level::node);
  // Three tasks of 8: no rack holds them; pod-0 (5 free nodes' worth: 28 GPUs) is the best fit
  // over pod-1 (32). Inside: rack-1 holds the most (2 tasks), then rack-0 node 0 the last one.
  const auto three = p.place(free, gang_request{3, 8}).value();
  EXPECT_EQ(nodes_of(three), (std::vector<std::uint32_t>{0, 2, 3}));
  EXPECT_EQ(three.level, affinity_level::network_tier);
  EXPECT_EQ(p.cluster().groups()[three.group].name, "pod-0");
}

TEST(GangPlacement, SeveralTasksOnOneNodeGetDisjointPackedBlocks) {
  const auto p = small_cluster();
  // Three tasks of 2 fit on one DGX A100: node 0, blocks {0,1} {2,3} {4,5} (PIX pairs first).
  const auto g = p.place(all_free(p), gang_request{3, 2}).value();
  ASSERT_EQ(g.tasks.size(), 3U);
  EXPECT_EQ(nodes_of(g), (std::vector<std::uint32_t>{0, 0, 0}));
  EXPECT_EQ(g.tasks[0].gpus, (gpus{0, 1}));
  EXPECT_EQ(g.tasks[1].gpus, (gpus{2, 3}));
  EXPECT_EQ(g.tasks[2].gpus, (gpus{4, 5}));
  EXPECT_EQ(g.level, affinity_level::node);
  EXPECT_EQ(g.nodes_used, 1U);
}

TEST(GangPlacement, SpreadFillsTheFullestNodesFirst) {
  const auto p = small_cluster();
  auto free = all_free(p);
  free[5] = gpus{6, 7};
  free[6] = gpus{0, 1, 2, 3};
  gang_request req{3, 2};
  req.locality = locality_sensitivity::spread;
  // Node 5 (2 free) takes one task, node 6 (4 free) two; the gang crosses the cluster root.
  const auto g = p.place(free, req).value();
  EXPECT_EQ(nodes_of(g), (std::vector<std::uint32_t>{5, 6, 6}));
  EXPECT_EQ(g.tasks[0].gpus, (gpus{6, 7}));
  EXPECT_EQ(g.level, affinity_level::network_tier);  // pod-1 holds nodes 4..7.
  // consolidate puts the same gang on one whole node instead (node 0).
  EXPECT_EQ(nodes_of(p.place(free, gang_request{3, 2}).value()),
            (std::vector<std::uint32_t>{0, 0, 0}));
}

TEST(GangPlacement, AllOrNothingDeferrals) {
  const auto p = small_cluster();
  // 9 x 8 GPUs on 64 GPUs: insufficient capacity; nothing placed.
  const auto big = p.place(all_free(p), gang_request{9, 8}).value();
  EXPECT_EQ(big.deferred, defer_reason::insufficient_capacity);
  EXPECT_TRUE(big.tasks.empty());
  // Every node half used: 32 GPUs free, but no node holds an 8-GPU task.
  free_lists half(8, iota_gpus(0, 4));
  EXPECT_EQ(p.place(half, gang_request{2, 8}).value().deferred, defer_reason::fragmented);
  // Limits: three nodes never fit in one rack; they do in one pod (tier 1).
  gang_request limited{3, 8};
  limited.max_level = affinity_level::rack;
  EXPECT_EQ(p.place(all_free(p), limited).value().deferred, defer_reason::topology_unsatisfiable);
  limited.max_level = affinity_level::network_tier;
  limited.max_tier = 1;
  EXPECT_TRUE(p.place(all_free(p), limited).value().placed());
  limited.max_level = affinity_level::node;
  gang_request one_node{4, 2};
  one_node.max_level = affinity_level::node;
  EXPECT_TRUE(p.place(all_free(p), one_node).value().placed());
  EXPECT_EQ(p.place(all_free(p), limited).value().deferred, defer_reason::topology_unsatisfiable);
}

TEST(GangPlacement, StaysInsideOneNvlinkDomain) {
  // 64 HGX H100 in racks of 4 and NVLink domains of 32 nodes (8 racks each).
  const auto p = gang_placer::make(make_builtin_cluster("h100-nvlink-pod").value());
  auto free = all_free(p);
  // Sixteen 8-GPU tasks: no rack holds them, NVLink domain nvl-0 does.
  const auto g = p.place(free, gang_request{16, 8}).value();
  ASSERT_TRUE(g.placed());
  EXPECT_EQ(g.level, affinity_level::nvlink_domain);
  EXPECT_EQ(p.cluster().groups()[g.group].name, "nvl-0");
  EXPECT_EQ(nodes_of(g), iota_gpus(0, 16));
  // With nodes 0..19 busy, nvl-0 holds only 12: the gang moves to nvl-1 (nodes 32..47).
  for (std::size_t n = 0; n < 20; ++n) free[n].clear();
  const auto moved = p.place(free, gang_request{16, 8}).value();
  EXPECT_EQ(p.cluster().groups()[moved.group].name, "nvl-1");
  EXPECT_EQ(nodes_of(moved), iota_gpus(32, 48));
  // 40 tasks exceed a domain: allowed up to the cluster, refused within one domain.
  EXPECT_EQ(p.place(all_free(p), gang_request{40, 8}).value().level, affinity_level::cluster);
  gang_request capped{40, 8};
  capped.max_level = affinity_level::nvlink_domain;
  EXPECT_EQ(p.place(all_free(p), capped).value().deferred, defer_reason::topology_unsatisfiable);
}

TEST(GangPlacement, MixedClusterUsesTheNodesThatFit) {
  // demo: 4 DGX A100, 2 HGX H100, 2 DGX-2 in racks of 4 under one pod. 16-GPU tasks fit only
  // on the DGX-2 nodes 6 and 7 (rack-1).
  const auto p = gang_placer::make(make_builtin_cluster("demo").value());
  const auto g = p.place(all_free(p), gang_request{2, 16}).value();
  EXPECT_EQ(nodes_of(g), (std::vector<std::uint32_t>{6, 7}));
  EXPECT_EQ(g.level, affinity_level::rack);
  EXPECT_EQ(g.tasks[0].gpus.size(), 16U);
}

TEST(GangPlacement, NodeScoresForThePrioritizeCall) {
  const auto p = small_cluster();
  auto free = all_free(p);
  free[1] = iota_gpus(4, 8);
  // consolidate 2 x 8 (H = 3, four levels): a node whose rack holds the gang 75, whose pod
  // holds it 50 (each task takes a whole node: best block and best fit, so only the tier
  // counts); node 1 cannot hold a task: 0.
  EXPECT_EQ(p.node_scores(free, gang_request{2, 8}).value(),
            (std::vector<std::int64_t>{50, 0, 75, 75, 75, 75, 75, 75}));
  // A gang one node can hold scores 100 there.
  EXPECT_EQ(p.node_scores(free, gang_request{1, 8}).value(),
            (std::vector<std::int64_t>{100, 0, 100, 100, 100, 100, 100, 100}));
  // spread 2-GPU tasks: the fuller the node after the task, the higher (8 GPUs per node).
  free[5] = gpus{6, 7};
  gang_request spread{1, 2};
  spread.locality = locality_sensitivity::spread;
  EXPECT_EQ(p.node_scores(free, spread).value(),
            (std::vector<std::int64_t>{25, 75, 25, 25, 25, 100, 25, 25}));
  // Within one rack only: a 3-node gang scores 0 everywhere.
  gang_request capped{3, 8};
  capped.max_level = affinity_level::rack;
  EXPECT_EQ(p.node_scores(free, capped).value(), std::vector<std::int64_t>(8, 0));
}

TEST(GangPlacement, NodeScoresRankWithinATierByGpuQualityAndFit) {
  // 4 DGX-1V (hybrid cube-mesh NVLink) in one rack: H = 2 (node < rack < cluster). One 2-GPU
  // task fits every node alone (T = 2): scores are floor(100 * (2 + (q + f) / 2) / 3).
  const auto p = gang_placer::make(
      cluster_builder("v").add_nodes(node_template::dgx1_v100, 4).racks(4).build().value());
  const auto scores =
      pair_score_matrix::from_topology(make_node_template(node_template::dgx1_v100).value());
  // The best pair of the machine, and a pair without NVLink (its score is PCIe only).
  std::uint32_t best_a = 0, best_b = 1, weak_a = 0, weak_b = 1;
  for (std::uint32_t i = 0; i < 8; ++i) {
    for (std::uint32_t j = i + 1; j < 8; ++j) {
      if (scores.score(i, j) > scores.score(best_a, best_b)) best_a = i, best_b = j;
      if (scores.score(i, j) < scores.score(weak_a, weak_b)) weak_a = i, weak_b = j;
    }
  }
  ASSERT_EQ(scores.score(best_a, best_b), 250);  // NV2 + same PCIe switch
  ASSERT_EQ(scores.score(weak_a, weak_b), 10);   // SYS only
  free_lists free = all_free(p);
  free[1] = gpus{best_a, best_b};
  free[2] = gpus{weak_a, weak_b};
  free[3] = iota_gpus(0, 4);
  const auto got = p.node_scores(free, gang_request{1, 2}).value();
  // Node 0: all free, q = 1 (the packer picks a best pair), f = 2/8: floor(100 * 2.625 / 3) = 87.
  // Node 1: the best pair, q = 1, f = 1: 100. Node 2: q = 10/250 = 0.04, f = 1: 84.
  // Node 3: GPUs 0-3; the packer keeps the best partition {0,3} + {1,2} (220 + 220) and picks
  // (0,3), q = 220/250 = 0.88 (not the 250 pair (2,3), which would leave (0,1) at 150), f = 6/8:
  // floor(100 * (2 + 0.815) / 3) = 93.
  EXPECT_EQ(got[0], 87);
  EXPECT_EQ(got[1], 100);
  EXPECT_EQ(got[2], 84);
  EXPECT_EQ(got[3], 93);
  // The same nodes for a locality-insensitive task: fit only, floor(100 * f).
  gang_request spread{1, 2};
  spread.locality = locality_sensitivity::spread;
  EXPECT_EQ(p.node_scores(free, spread).value(), (std::vector<std::int64_t>{25, 100, 100, 75}));
  // One GPU per task: q = 1, so fit decides: node 1 (2 free) f = 7/8: floor(100 * (2 + 15/16) / 3)
  // = 97; node 0 (8 free) f = 1/8: floor(100 * (2 + 9/16) / 3) = 85; node 3 f = 5/8: 93.
  EXPECT_EQ(p.node_scores(free, gang_request{1, 1}).value(),
            (std::vector<std::int64_t>{85, 97, 97, 93}));
}

TEST(GangPlacement, RejectsBadInput) {
  const auto p = small_cluster();
  auto free = all_free(p);
  EXPECT_THAT(p.place(free_lists(3), gang_request{1, 1}), ErrorContains("3 lists"));
  EXPECT_THAT(p.place(free, gang_request{0, 1}), HasErrc(errc::invalid_argument));
  free[2] = gpus{3, 1};
  EXPECT_THAT(p.place(free, gang_request{1, 1}), ErrorContains("node 'dgx-a100-2'"));
  free[2] = gpus{8};
  EXPECT_THAT(p.place(free, gang_request{1, 1}), HasErrc(errc::invalid_argument));
  gang_request no_domain{1, 1};
  no_domain.max_level = affinity_level::nvlink_domain;
  EXPECT_THAT(p.place(all_free(p), no_domain), ErrorContains("no level nvlink_domain"));
  no_domain.max_level = affinity_level::network_tier;
  no_domain.max_tier = 2;
  EXPECT_THAT(p.node_scores(all_free(p), no_domain), ErrorContains("of tier 2"));
}

TEST(GangPlacement, Deterministic) {
  const auto p = gang_placer::make(make_builtin_cluster("superpod-a100").value());
  auto free = all_free(p);
  for (std::size_t n = 0; n < free.size(); n += 3) free[n] = iota_gpus(2, 8);
  const auto a = p.place(free, gang_request{12, 4});
  const auto b = p.place(free, gang_request{12, 4});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, *b);
  // A 4-node rack holds at most eight 4-GPU tasks, so twelve need a scalable unit (tier 1);
  // 12 tasks of 4 GPUs in all.
  EXPECT_EQ(a->level, affinity_level::network_tier);
  std::size_t gpus_total = 0;
  for (const auto& t : a->tasks) gpus_total += t.gpus.size();
  EXPECT_EQ(gpus_total, 48U);
}

TEST(GangPlacement, RandomStatesCrossTheLowestFeasibleLevel) {
  // 24 mixed nodes in racks of 3, pods of 2 racks and spine groups of 2 pods.
  const auto p = gang_placer::make(cluster_builder("mixed")
                                       .add_nodes(node_template::dgx_a100, 12)
                                       .add_nodes(node_template::dgx1_v100, 6)
                                       .add_nodes(node_template::workstation_4gpu, 6)
                                       .racks(3)
                                       .tier("pod", 2)
                                       .tier("spine", 2)
                                       .build()
                                       .value());
  const auto groups = p.cluster().groups();
  const auto nodes = p.cluster().nodes();
  // Heights from depths, independently of the placer.
  std::vector<std::uint32_t> depth(groups.size(), 0);
  std::uint32_t max_depth = 0;
  for (std::size_t g = 1; g < groups.size(); ++g) {
    for (std::uint32_t a = static_cast<std::uint32_t>(g); a != 0; a = groups[a].parent) ++depth[g];
    max_depth = std::max(max_depth, depth[g]);
  }
  std::mt19937 rng(11);
  std::size_t placed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    free_lists free(nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      for (std::uint32_t g = 0; g < nodes[n].gpu_count; ++g) {
        if (rng() % 3 != 0) free[n].push_back(g);
      }
    }
    gang_request req{1 + static_cast<std::uint32_t>(rng() % 10),
                     1 + static_cast<std::uint32_t>(rng() % 8)};
    if (trial % 4 == 3) req.locality = locality_sensitivity::spread;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const auto g = p.place(free, req).value();
    std::uint64_t total_free = 0;
    std::uint64_t total_tasks = 0;
    for (const auto& f : free) {
      total_free += f.size();
      total_tasks += f.size() / req.gpus_per_task;
    }
    if (!g.placed()) {
      EXPECT_TRUE(g.tasks.empty());
      if (total_free < std::uint64_t{req.tasks} * req.gpus_per_task) {
        EXPECT_EQ(g.deferred, defer_reason::insufficient_capacity);
      } else {
        EXPECT_EQ(total_tasks < req.tasks ? defer_reason::fragmented
                                          : defer_reason::topology_unsatisfiable,
                  *g.deferred);
        EXPECT_LT(total_tasks, req.tasks);  // No limit was set: it must not be the topology.
      }
      continue;
    }
    ++placed;
    ASSERT_EQ(g.tasks.size(), req.tasks);
    std::set<std::uint32_t> used_nodes;
    std::set<std::pair<std::uint32_t, std::uint32_t>> used_gpus;
    for (const auto& t : g.tasks) {
      const std::uint32_t n = t.node.value();
      used_nodes.insert(n);
      ASSERT_EQ(t.gpus.size(), req.gpus_per_task);
      ASSERT_EQ(t.devices.size(), t.gpus.size());
      for (std::size_t i = 0; i < t.gpus.size(); ++i) {
        EXPECT_TRUE(std::binary_search(free[n].begin(), free[n].end(), t.gpus[i]));
        EXPECT_TRUE(used_gpus.insert({n, t.gpus[i]}).second);
        EXPECT_EQ(t.devices[i].value(), nodes[n].first_gpu.value() + t.gpus[i]);
      }
    }
    EXPECT_EQ(g.nodes_used, used_nodes.size());
    // The reported group holds every node used and no child of it does.
    const auto& grp = groups[g.group];
    for (const std::uint32_t n : used_nodes) {
      EXPECT_GE(n, grp.first_node.value());
      EXPECT_LT(n, grp.first_node.value() + grp.node_count);
    }
    for (const std::uint32_t c : grp.children) {
      const auto& child = groups[c];
      EXPECT_FALSE(std::all_of(used_nodes.begin(), used_nodes.end(), [&](std::uint32_t n) {
        return n >= child.first_node.value() && n < child.first_node.value() + child.node_count;
      }));
    }
    if (req.locality == locality_sensitivity::spread) continue;
    // consolidate: no group of a lower height can hold the gang.
    std::uint32_t lowest = max_depth + 1;
    for (std::size_t k = 0; k < groups.size(); ++k) {
      std::uint64_t cap = 0;
      for (std::uint32_t n = groups[k].first_node.value();
           n < groups[k].first_node.value() + groups[k].node_count; ++n) {
        cap += free[n].size() / req.gpus_per_task;
      }
      if (cap >= req.tasks) lowest = std::min(lowest, max_depth - depth[k]);
    }
    EXPECT_EQ(max_depth - depth[g.group], lowest);
    // For the prioritize call the nodes used lie in the best tier's band (the tier decides
    // first; GPU quality and fit order nodes inside it), and no node scores above that band.
    const auto scores = p.node_scores(free, req).value();
    const std::int64_t levels = max_depth + 1;
    const std::int64_t tier = max_depth - lowest;
    const auto top = *std::max_element(scores.begin(), scores.end());
    EXPECT_LE(top, 100 * (tier + 1) / levels);
    for (const std::uint32_t n : used_nodes) EXPECT_GE(scores[n], 100 * tier / levels) << n;
  }
  EXPECT_GT(placed, 150U);
}

}  // namespace
}  // namespace hetsched
