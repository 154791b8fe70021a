// SPDX-License-Identifier: MIT
// Affinity packer benchmarks: one allocate() per iteration on a whole node, every request size.
//
// Target (issue 5): any size 1..16 on a 16-GPU node in <= 1 ms, exact. Scenarios: the dgx2
// template (16 GPUs), dgx-a100 and dgx1-v100 (8 GPUs); every GPU free, with no required GPU and
// with GPU 0 required; lexmax (default) and compat modes. The argument is the request size.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/templates.hpp>

namespace {

using namespace hetsched;

/// One benchmark scenario.
struct packer_scenario {
  node_template node = node_template::dgx2;
  bool require_first = false;
  packer_mode mode = packer_mode::lexmax;
};

void run_packer(benchmark::State& state, const packer_scenario& config) {
  const auto topology = make_node_template(config.node);
  if (!topology) {
    state.SkipWithError("template failed");
    return;
  }
  const auto scores = pair_score_matrix::from_topology(*topology);
  std::vector<std::uint32_t> available(scores.size());
  for (std::size_t i = 0; i < available.size(); ++i) available[i] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> required;
  if (config.require_first) required.push_back(0);
  const auto size = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    auto answer = allocate(scores, available, required, size, config.mode);
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
BENCHMARK(BM_Packer_DgxA100Free)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_DgxA100Required)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx1V100Free)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Packer_Dgx1V100Required)->DenseRange(1, 8)->Unit(benchmark::kMicrosecond);

}  // namespace
