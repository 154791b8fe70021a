// SPDX-License-Identifier: MIT
// Affinity packer benchmarks: one allocate() per iteration on a whole node, every request size.
//
// Target (issue 5): any size 1..16 on a 16-GPU node in <= 1 ms, exact. Scenarios: the dgx2
// template (16 GPUs), dgx-a100 and dgx1-v100 (8 GPUs); every GPU free, with no required GPU and
// with GPU 0 required; lexmax (default) and compat modes; on DGX-2 also the spread locality, a
// NIC bonus, and bandwidth pair scores. The argument is the request size.
// Asymmetric and partly used nodes (the hard cases for the search: few interchangeable GPUs):
// the DGX-2 seen through PCIe only (what go-gpuallocator sees on NVSwitch systems: PIX pairs,
// PXB quads, NODE per socket, SYS across), seeded random 16- and 8-GPU link matrices (each pair
// one of SYS..PIX or 1-2 NVLinks on top of a PCIe level), and the DGX-2 and a random 16-GPU
// matrix with 3 or 6 seeded random GPUs in use; on the random 16-GPU matrices also compat,
// spread and GPU 0 required; seeded two-level 16-GPU matrices (every pair 10 or 20: many equal
// blocks and optimal partitions) in lexmax, compat and spread; the worst spread inputs found by a
// wider survey (two-level seed 18 at size 5; pairs 20 with probability 1/4, seeds 99, 75, 30;
// spread with a per-GPU bonus of 0..15 on pairs 20 with probability 3/4).
// Arguments: request size, then the seed; a size above the free GPUs is skipped.
// Gang placement (no target; figure reported): 10,000 DGX A100 nodes in racks of 8, pods of 16
// racks and spine groups of 16 pods, every node with a deterministic 0..8 GPUs in use; the
// argument selects the gang (see gang_cases).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>
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

/// Returns the pair scores of the DGX-2 template from the PCIe relations alone.
pair_score_matrix dgx2_pcie_only() {
  const auto topology = make_node_template(node_template::dgx2).value();
  const node_views& views = topology.views();
  std::vector<std::vector<std::int64_t>> rows(views.gpu_count(),
                                              std::vector<std::int64_t>(views.gpu_count(), 0));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < rows.size(); ++j) {
      if (i != j) rows[i][j] = pcie_weight(views.relation(i, j).pcie);
    }
  }
  return pair_score_matrix::from_rows(rows).value();
}

/// A small deterministic generator (splitmix64).
std::uint64_t next_random(std::uint64_t& seed) {
  std::uint64_t z = (seed += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Returns a random symmetric `n`-GPU matrix: every pair a PCIe level (10..50), plus 1 or 2
/// NVLinks with probability 1/4 each.
pair_score_matrix random_matrix(std::size_t n, std::uint64_t seed) {
  constexpr std::int64_t pcie[] = {10, 20, 30, 40, 50};
  std::vector<std::vector<std::int64_t>> rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const std::uint64_t r = next_random(seed);
      const std::int64_t links = r % 4 == 0 ? 100 : r % 4 == 1 ? 200 : 0;
      rows[i][j] = rows[j][i] = pcie[(r >> 8) % 5] + links;
    }
  }
  return pair_score_matrix::from_rows(rows).value();
}

/// Returns a random symmetric `n`-GPU matrix whose pairs score 10 or 20 (two PCIe levels): many
/// equal blocks and many optimal partitions, the hard case for spread's walk over them.
pair_score_matrix two_level_matrix(std::size_t n, std::uint64_t seed) {
  std::vector<std::vector<std::int64_t>> rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      rows[i][j] = rows[j][i] = next_random(seed) % 2 == 0 ? 10 : 20;
    }
  }
  return pair_score_matrix::from_rows(rows).value();
}

/// Returns a random symmetric `n`-GPU matrix whose pairs score 20 with probability 1/4, else 10.
pair_score_matrix sparse_two_level_matrix(std::size_t n, std::uint64_t seed) {
  std::vector<std::vector<std::int64_t>> rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      rows[i][j] = rows[j][i] = next_random(seed) % 4 == 0 ? 20 : 10;
    }
  }
  return pair_score_matrix::from_rows(rows).value();
}

/// Returns a random symmetric `n`-GPU matrix whose pairs score 20 with probability 3/4, else 10,
/// and a bonus of 0..15 per GPU drawn after it from the same seed.
std::pair<pair_score_matrix, std::vector<std::int64_t>> dense_two_level_with_bonus(
    std::size_t n, std::uint64_t seed) {
  std::vector<std::vector<std::int64_t>> rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      rows[i][j] = rows[j][i] = next_random(seed) % 4 != 0 ? 20 : 10;
    }
  }
  std::vector<std::int64_t> bonus(n);
  for (std::int64_t& b : bonus) b = static_cast<std::int64_t>(next_random(seed) % 16);
  return {pair_score_matrix::from_rows(rows).value(), std::move(bonus)};
}

/// Returns GPUs 0..n-1 without `used` of them, chosen at random by `seed`.
std::vector<std::uint32_t> random_free(std::size_t n, std::size_t used, std::uint64_t seed) {
  std::vector<std::uint32_t> free(n);
  for (std::size_t i = 0; i < n; ++i) free[i] = static_cast<std::uint32_t>(i);
  for (std::size_t u = 0; u < used; ++u) {
    free.erase(free.begin() + static_cast<std::ptrdiff_t>(next_random(seed) % free.size()));
  }
  return free;
}

/// How run_matrix() calls the packer.
enum class matrix_call : std::uint8_t { lexmax, compat, spread, require_first };

void run_matrix(benchmark::State& state, const pair_score_matrix& scores,
                const std::vector<std::uint32_t>& available,
                matrix_call call = matrix_call::lexmax) {
  const auto size = static_cast<std::size_t>(state.range(0));
  if (size > available.size()) {
    state.SkipWithError("size above the free GPUs");
    return;
  }
  placement_preferences spread;
  spread.locality = locality_sensitivity::spread;
  std::vector<std::uint32_t> required;
  if (call == matrix_call::require_first) required.push_back(available.front());
  for (auto _ : state) {
    auto answer =
        call == matrix_call::spread
            ? allocate_with(scores, available, {}, size, spread)
            : allocate(scores, available, required, size,
                       call == matrix_call::compat ? packer_mode::compat : packer_mode::lexmax);
    benchmark::DoNotOptimize(answer);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

std::vector<std::uint32_t> all_gpus(std::size_t n) { return random_free(n, 0, 0); }

void BM_Packer_Dgx2PcieOnly(benchmark::State& state) {
  static const pair_score_matrix scores = dgx2_pcie_only();
  run_matrix(state, scores, all_gpus(16));
}
void BM_Packer_Random16(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, random_matrix(16, seed), all_gpus(16));
}
void BM_Packer_Random16Compat(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, random_matrix(16, seed), all_gpus(16), matrix_call::compat);
}
void BM_Packer_Random16Spread(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, random_matrix(16, seed), all_gpus(16), matrix_call::spread);
}
void BM_Packer_Random16Required(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, random_matrix(16, seed), all_gpus(16), matrix_call::require_first);
}
void BM_Packer_TwoLevel16(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, two_level_matrix(16, seed), all_gpus(16));
}
void BM_Packer_TwoLevel16Compat(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, two_level_matrix(16, seed), all_gpus(16), matrix_call::compat);
}
void BM_Packer_TwoLevel16Spread(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, two_level_matrix(16, seed), all_gpus(16), matrix_call::spread);
}
/// The worst inputs found outside the seeded sweeps above (docs/packer.md §5): spread on
/// two_level_matrix(16, 18) at size 5, and on sparse two-level matrices (seeds 99, 75, 30).
void BM_Packer_TwoLevel16SpreadWorst(benchmark::State& state) {
  static const pair_score_matrix scores = two_level_matrix(16, 18);
  run_matrix(state, scores, all_gpus(16), matrix_call::spread);
}
void BM_Packer_SparseTwoLevel16Spread(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, sparse_two_level_matrix(16, seed), all_gpus(16), matrix_call::spread);
}
/// lexmax on dense two-level matrices (pairs 20 with probability 3/4, else 10): many blocks
/// tie at the top score, the case of the weakest-GPU pivot (docs/packer.md §1a).
void BM_Packer_DenseTwoLevel16(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, dense_two_level_with_bonus(16, seed).first, all_gpus(16));
}
/// spread with a per-GPU bonus on dense two-level matrices: the worst inputs of the survey
/// (seeds 91, 95, 44 at size 3; seed 60 at size 5).
void BM_Packer_DenseTwoLevel16BonusSpread(benchmark::State& state) {
  const auto [scores, bonus] =
      dense_two_level_with_bonus(16, static_cast<std::uint64_t>(state.range(1)));
  const auto size = static_cast<std::size_t>(state.range(0));
  const std::vector<std::uint32_t> available = all_gpus(16);
  placement_preferences prefs;
  prefs.locality = locality_sensitivity::spread;
  prefs.gpu_bonus = bonus;
  for (auto _ : state) {
    auto answer = allocate_with(scores, available, {}, size, prefs);
    benchmark::DoNotOptimize(answer);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
void BM_Packer_Random8(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, random_matrix(8, seed), all_gpus(8));
}
void BM_Packer_Dgx2ThreeUsed(benchmark::State& state) {
  static const pair_score_matrix scores =
      pair_score_matrix::from_topology(make_node_template(node_template::dgx2).value());
  run_matrix(state, scores, random_free(16, 3, static_cast<std::uint64_t>(state.range(1))));
}
void BM_Packer_Dgx2PcieOnlyThreeUsed(benchmark::State& state) {
  static const pair_score_matrix scores = dgx2_pcie_only();
  run_matrix(state, scores, random_free(16, 3, static_cast<std::uint64_t>(state.range(1))));
}
void BM_Packer_Random16ThreeUsed(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, random_matrix(16, seed), random_free(16, 3, seed));
}
void BM_Packer_Random16SixUsed(benchmark::State& state) {
  const auto seed = static_cast<std::uint64_t>(state.range(1));
  run_matrix(state, random_matrix(16, seed), random_free(16, 6, seed));
}

/// Sizes 1..max with seeds 1..seeds.
void sizes_and_seeds(benchmark::internal::Benchmark* b, std::int64_t max, std::int64_t seeds) {
  for (std::int64_t size = 1; size <= max; ++size) {
    for (std::int64_t seed = 1; seed <= seeds; ++seed) b->Args({size, seed});
  }
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Packer_Dgx2PcieOnly)->DenseRange(1, 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Random16)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_Random16Compat)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_Random16Spread)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_Random16Required)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_TwoLevel16)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_TwoLevel16Compat)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_TwoLevel16Spread)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_TwoLevel16SpreadWorst)->Arg(5)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_SparseTwoLevel16Spread)
    ->Args({4, 99})
    ->Args({5, 99})
    ->Args({5, 75})
    ->Args({5, 30})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_DenseTwoLevel16)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 16, 4);
});
BENCHMARK(BM_Packer_DenseTwoLevel16BonusSpread)
    ->Args({3, 91})
    ->Args({3, 95})
    ->Args({3, 44})
    ->Args({5, 60})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Random8)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 8, 4);
});
BENCHMARK(BM_Packer_Dgx2ThreeUsed)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 13, 2);
});
BENCHMARK(BM_Packer_Dgx2PcieOnlyThreeUsed)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 13, 2);
});
BENCHMARK(BM_Packer_Random16ThreeUsed)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 13, 2);
});
BENCHMARK(BM_Packer_Random16SixUsed)->Apply([](benchmark::internal::Benchmark* b) {
  sizes_and_seeds(b, 10, 2);
});
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
