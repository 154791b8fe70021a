// SPDX-License-Identifier: MIT
// Affinity packer benchmarks: one allocate() per iteration on a whole node, every request size.
//
// Target (issue 5): any size 1..16 on a 16-GPU node in <= 1 ms, exact. Scenarios: the dgx2
// template (16 GPUs), dgx-a100 and dgx1-v100 (8 GPUs); every GPU free, with no required GPU and
// with GPU 0 required; lexmax (default) and compat modes; on DGX-2 also the spread locality, a
// NIC bonus, and bandwidth pair scores. The argument is the request size.
// Gang placement (no target; figure reported): 10,000 DGX A100 nodes in racks of 8, pods of 16
// racks and spine groups of 16 pods, every node with a deterministic 0..8 GPUs in use; the
// argument selects the gang (see gang_cases).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/policies/gang_placement.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/templates.hpp>

namespace {

using namespace hetsched;

/// One benchmark scenario.
struct packer_scenario {
  node_template node = node_template::dgx2;
  bool require_first = false;
  packer_mode mode = packer_mode::lexmax;
  /// Use allocate_with() with these preferences instead of allocate().
  bool with_preferences = false;
  locality_sensitivity locality = locality_sensitivity::consolidate;
  bool nic_bonus = false;
  pair_metric metric = pair_metric::link_count;
};

void run_packer(benchmark::State& state, const packer_scenario& config) {
  const auto topology = make_node_template(config.node);
  if (!topology) {
    state.SkipWithError("template failed");
    return;
  }
  pair_terms terms;
  terms.metric = config.metric;
  const auto scores = pair_score_matrix::from_views(topology->views(), terms);
  placement_preferences prefs;
  prefs.locality = config.locality;
  if (config.nic_bonus) prefs.gpu_bonus = nic_bonus(topology->views(), 100);
  std::vector<std::uint32_t> available(scores.size());
  for (std::size_t i = 0; i < available.size(); ++i) available[i] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> required;
  if (config.require_first) required.push_back(0);
  const auto size = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    auto answer = config.with_preferences
                      ? allocate_with(scores, available, required, size, prefs)
                      : allocate(scores, available, required, size, config.mode);
    benchmark::DoNotOptimize(answer);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_Packer_Dgx2Free(benchmark::State& state) { run_packer(state, {node_template::dgx2}); }
void BM_Packer_Dgx2Required(benchmark::State& state) {
  run_packer(state, {node_template::dgx2, true});
}
void BM_Packer_Dgx2FreeCompat(benchmark::State& state) {
  run_packer(state, {node_template::dgx2, false, packer_mode::compat});
}
void BM_Packer_Dgx2Spread(benchmark::State& state) {
  packer_scenario c;
  c.with_preferences = true;
  c.locality = locality_sensitivity::spread;
  run_packer(state, c);
}
void BM_Packer_Dgx2NicBonus(benchmark::State& state) {
  packer_scenario c;
  c.with_preferences = true;
  c.nic_bonus = true;
  run_packer(state, c);
}
void BM_Packer_Dgx2Bandwidth(benchmark::State& state) {
  packer_scenario c;
  c.metric = pair_metric::bandwidth;
  run_packer(state, c);
}
void BM_Packer_DgxA100Free(benchmark::State& state) {
  run_packer(state, {node_template::dgx_a100});
}
void BM_Packer_DgxA100Required(benchmark::State& state) {
  run_packer(state, {node_template::dgx_a100, true});
}
void BM_Packer_Dgx1V100Free(benchmark::State& state) {
  run_packer(state, {node_template::dgx1_v100});
}
void BM_Packer_Dgx1V100Required(benchmark::State& state) {
  run_packer(state, {node_template::dgx1_v100, true});
}

BENCHMARK(BM_Packer_Dgx2Free)->DenseRange(1, 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx2Required)->DenseRange(1, 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx2FreeCompat)->DenseRange(1, 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx2Spread)->DenseRange(1, 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx2NicBonus)->DenseRange(1, 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx2Bandwidth)->DenseRange(1, 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_DgxA100Free)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_DgxA100Required)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx1V100Free)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx1V100Required)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);

/// The gangs of BM_Gang_Place10k: tasks x GPUs per task, locality.
constexpr gang_request gang_cases[] = {
    {1, 8, locality_sensitivity::consolidate},  {4, 8, locality_sensitivity::consolidate},
    {16, 8, locality_sensitivity::consolidate}, {64, 8, locality_sensitivity::consolidate},
    {32, 2, locality_sensitivity::spread},
};

/// 10,000 DGX A100 nodes (racks of 8, pods of 16 racks, spine groups of 16 pods); node n has
/// (n * 7) % 9 GPUs in use, its lowest ones.
struct gang_fixture {
  gang_placer placer;
  std::vector<std::vector<std::uint32_t>> free;
};

const gang_fixture& gang_cluster() {
  static const gang_fixture fixture = [] {
    auto cluster = cluster_builder("bench-10k")
                       .add_nodes(node_template::dgx_a100, 10000)
                       .racks(8)
                       .tier("pod", 16)
                       .tier("spine", 16)
                       .build();
    gang_fixture f{gang_placer::make(std::move(cluster).value()), {}};
    f.free.resize(10000);
    for (std::uint32_t n = 0; n < 10000; ++n) {
      for (std::uint32_t g = (n * 7) % 9; g < 8; ++g) f.free[n].push_back(g);
    }
    return f;
  }();
  return fixture;
}

void BM_Gang_Place10k(benchmark::State& state) {
  const auto& f = gang_cluster();
  const gang_request request = gang_cases[state.range(0)];
  for (auto _ : state) {
    auto placement = f.placer.place(f.free, request);
    benchmark::DoNotOptimize(placement);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_Gang_NodeScores10k(benchmark::State& state) {
  const auto& f = gang_cluster();
  const gang_request request = gang_cases[state.range(0)];
  for (auto _ : state) {
    auto scores = f.placer.node_scores(f.free, request);
    benchmark::DoNotOptimize(scores);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

BENCHMARK(BM_Gang_Place10k)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Gang_NodeScores10k)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);

}  // namespace
