// SPDX-License-Identifier: MIT
// FGD micro-benchmarks on a synthetic openb-like cluster (8-GPU G2 nodes with 96 cores, 2-GPU T4
// nodes with 64 cores, 1:1) and an openb-like task mix (sharing 810/470/320 milli, 1/2/8 whole
// GPUs, CPU-only):
// - BM_Fgd_Choose/N: one fgd_scheduler::choose() on N nodes loaded to ~60 % GPU (score cache warm
//   except for the node the previous decision changed, as in a replay);
// - BM_Baseline_Choose/N: the same for BestFit;
// - BM_Fgd_Replay/N: a whole 130 % replay (arrivals + fragmentation after each) on N nodes.
// The openb default figure (1,213 nodes, 10,866 arrivals) comes from hetsched-fgd-experiment.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include <hetsched/policies/fgd.hpp>
#include <hetsched/sim/fgd_replay.hpp>

namespace {

using namespace hetsched;

std::vector<fgd_node_spec> make_nodes(std::int64_t n) {
  std::vector<fgd_node_spec> nodes;
  for (std::int64_t i = 0; i < n; ++i) {
    const bool big = i % 2 == 0;
    nodes.push_back({std::to_string(100000 + i), big ? 96000 : 64000, big ? 393216 : 262144,
                     big ? 8U : 2U, big ? "G2" : "T4"});
  }
  return nodes;
}

const std::vector<fgd_task>& task_mix() {
  static const std::vector<fgd_task> mix = {
      {3152, 5600, 1, 810, ""},    {11300, 40000, 1, 1000, ""}, {11908, 30000, 1, 470, ""},
      {12500, 50000, 0, 0, ""},    {8000, 30000, 1, 470, ""},   {4000, 10000, 1, 320, ""},
      {24000, 60000, 2, 1000, ""}, {64000, 200000, 8, 1000, ""}};
  return mix;
}

fgd_workload mix_workload() { return make_fgd_workload(task_mix(), 100).value(); }

/// Arrivals of the mix cycled until 130 % of the cluster's GPUs.
std::vector<sim::fgd_arrival> arrivals_for(std::int64_t gpus) {
  std::vector<sim::fgd_arrival> out;
  std::int64_t demand = 0;
  for (std::size_t i = 0;; ++i) {
    const auto& t = task_mix()[(i * 5) % task_mix().size()];
    demand += t.gpu_milli * t.num_gpu;
    if (demand > gpus * 1300) break;
    out.push_back({std::to_string(i), t});
  }
  return out;
}

void BM_Fgd_Choose(benchmark::State& state, fgd_policy policy) {
  auto nodes = make_nodes(state.range(0));
  auto c = fgd_cluster::make(nodes).value();
  fgd_scheduler s(policy, mix_workload());
  const auto arrivals = arrivals_for(c.total_gpus());
  std::size_t next = 0;
  // Load to ~60 % of the GPUs.
  while (next < arrivals.size() && c.used_gpu_milli() < c.total_gpus() * 600) {
    if (auto ch = s.choose(c, arrivals[next].task)) {
      (void)c.place(ch->node, arrivals[next].task, ch->gpus);
    }
    ++next;
  }
  std::size_t k = 0;
  for (auto _ : state) {
    auto ch = s.choose(c, task_mix()[k++ % task_mix().size()]);
    benchmark::DoNotOptimize(ch);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Fgd_Replay(benchmark::State& state) {
  const auto nodes = make_nodes(state.range(0));
  std::int64_t gpus = 0;
  for (const auto& n : nodes) gpus += n.gpus;
  const auto arrivals = arrivals_for(gpus);
  const auto w = mix_workload();
  for (auto _ : state) {
    auto run = sim::run_fgd_replay(nodes, arrivals, w, fgd_policy::fgd);
    benchmark::DoNotOptimize(run);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(arrivals.size()));
}

}  // namespace

BENCHMARK_CAPTURE(BM_Fgd_Choose, fgd, hetsched::fgd_policy::fgd)->Arg(128)->Arg(1213);
BENCHMARK_CAPTURE(BM_Fgd_Choose, best_fit, hetsched::fgd_policy::best_fit)->Arg(128)->Arg(1213);
BENCHMARK(BM_Fgd_Replay)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);
