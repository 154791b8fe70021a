// SPDX-License-Identifier: MIT
// Gandiva migration planner micro-benchmark: plan() on clusters of DGX A100 nodes (10,000 nodes =
// 80,000 GPUs for the target figure) filled to about 3/4 by reactive placement with 1-, 2-, 4-
// and 8-GPU jobs, after every third job finished, so many servers are fragmented.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/migration_planner.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace {

using namespace hetsched;

/// A fragmented cluster of `nodes` DGX A100 servers and a planner for it.
struct scenario {
  cluster_topology topology;
  std::unique_ptr<cluster_state> state;
  std::unique_ptr<migration_planner> planner;
};

scenario make_scenario(std::size_t nodes) {
  scenario out;
  out.topology =
      cluster_builder("bench").add_nodes(node_template::dgx_a100, nodes, "a100").build().value();
  out.state = std::make_unique<cluster_state>(to_cluster(out.topology).value());
  gandiva_reactive reactive(out.state->cluster(), out.topology);
  const std::uint32_t sizes[] = {1, 2, 4, 8};
  const std::uint64_t target = nodes * 8 * 3 / 4;
  std::uint64_t used = 0;
  for (std::uint32_t i = 0; used < target; ++i) {
    const job_id id(i + 1);
    job_spec spec;
    spec.id = id;
    spec.name = "job";
    spec.preemptible = true;
    spec.roles.push_back(task_role{"worker", 1, 0, 0, whole_gpus(sizes[i % 4]), {}});
    static_cast<void>(out.state->submit(spec));
    static_cast<void>(record(*out.state, id, job_event::enqueue));
    const decision d = reactive.place(*out.state, id).value();
    if (apply(*out.state, d)) static_cast<void>(reactive.commit(d).value());
    static_cast<void>(record(*out.state, id, job_event::start));
    used += sizes[i % 4];
  }
  for (std::uint32_t i = 0; i * 3 + 1 <= out.state->jobs().size(); ++i)
    static_cast<void>(record(*out.state, job_id(i * 3 + 1), job_event::succeed));
  out.planner = std::make_unique<migration_planner>(out.state->cluster(), out.topology);
  return out;
}

scenario& shared_scenario(std::size_t nodes) {
  static std::map<std::size_t, scenario> cache;
  auto it = cache.find(nodes);
  if (it == cache.end()) it = cache.emplace(nodes, make_scenario(nodes)).first;
  return it->second;
}

void BM_GandivaMigrationPlan(benchmark::State& bench) {
  scenario& s = shared_scenario(static_cast<std::size_t>(bench.range(0)));
  std::size_t moves = 0;
  for (auto _ : bench) {
    auto plan = s.planner->plan(*s.state);
    moves = plan ? plan->moves.size() : 0;
    benchmark::DoNotOptimize(plan);
  }
  bench.counters["moves"] = static_cast<double>(moves);
}
BENCHMARK(BM_GandivaMigrationPlan)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace
