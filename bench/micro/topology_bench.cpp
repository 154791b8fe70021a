// SPDX-License-Identifier: MIT
// Topology benchmarks: templates with their views, and whole clusters up to 100k GPUs.
//
// Target (DESIGN.md §8): a 100k-GPU cluster (12,500 DGX A100 nodes in racks and tiers) with its
// derived views in <= 1 s and <= 200 MB. The memory counter is the heap in use while one cluster is
// alive minus before it was built (glibc mallinfo2), i.e. what the cluster itself holds.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

namespace {

using namespace hetsched;

double heap_in_use_mb() { return static_cast<double>(mallinfo2().uordblks) / 1048576.0; }

void BM_NodeTemplate_BuildWithViews(benchmark::State& state) {
  const auto t = all_node_templates()[static_cast<std::size_t>(state.range(0))];
  state.SetLabel(std::string(to_string(t)));
  for (auto _ : state) {
    auto topo = make_node_template(t);
    benchmark::DoNotOptimize(topo);
  }
}
BENCHMARK(BM_NodeTemplate_BuildWithViews)->DenseRange(0, 5);

void BM_ClusterBuilder_DgxA100(benchmark::State& state) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    auto c = cluster_builder("bench")
                 .add_nodes(node_template::dgx_a100, nodes)
                 .racks(8)
                 .tier("pod", 16, oversubscription{2, 1})
                 .tier("spine", 16)
                 .build();
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(nodes) * 8);
}
BENCHMARK(BM_ClusterBuilder_DgxA100)
    ->RangeMultiplier(4)
    ->Range(64, 16384)
    ->Unit(benchmark::kMillisecond);

// The DESIGN.md target: 12,500 DGX A100 nodes = 100,000 GPUs, from nothing to a cluster whose
// views are all computed.
void BM_ClusterBuilder_A100_100k(benchmark::State& state) {
  double held = 0;
  for (auto _ : state) {
    const double before = heap_in_use_mb();
    auto c = make_builtin_cluster("a100-100k");
    held = heap_in_use_mb() - before;
    if (!c || c->gpu_count() != 100000) state.SkipWithError("unexpected cluster");
    benchmark::DoNotOptimize(c);
  }
  state.counters["heap_mb"] = held;
  state.counters["gpus"] = 100000;
}
BENCHMARK(BM_ClusterBuilder_A100_100k)->Unit(benchmark::kMillisecond);

}  // namespace
