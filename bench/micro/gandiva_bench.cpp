// SPDX-License-Identifier: MIT
// Gandiva reactive placement micro-benchmarks: place() of one queued k-GPU job on a cluster of
// 10,000 DGX A100 nodes (80,000 GPUs) that is half full with a mix of 1-, 2-, 4- and 8-GPU jobs,
// the full place + apply + commit + release cycle, and place() by time-slicing (stage 4) on a
// full, half time-sliced cluster.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace {

using namespace hetsched;

job_spec make_job(std::uint32_t id, std::uint32_t gpus) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "job";
  spec.roles.push_back(task_role{"worker", 1, 0, 0, whole_gpus(gpus), {}});
  spec.preemptible = true;
  return spec;
}

/// The scenario shared by every benchmark: built once.
struct scenario {
  cluster_topology topology;
  std::unique_ptr<cluster_state> state;
  std::unique_ptr<gandiva_reactive> policy;
  std::uint32_t next_id = 1;
};

scenario& shared_scenario() {
  static scenario s = [] {
    scenario out;
    out.topology =
        cluster_builder("bench").add_nodes(node_template::dgx_a100, 10'000, "a100").build().value();
    out.state = std::make_unique<cluster_state>(to_cluster(out.topology).value());
    out.policy = std::make_unique<gandiva_reactive>(out.state->cluster(), out.topology);
    // Fill to half of the 80,000 GPUs with sizes cycling 1, 2, 4, 8 (15 GPUs per cycle).
    const std::uint32_t sizes[] = {1, 2, 4, 8};
    std::uint64_t used = 0;
    for (std::uint32_t i = 0; used < 40'000; ++i) {
      const std::uint32_t k = sizes[i % 4];
      const job_id id(out.next_id++);
      static_cast<void>(out.state->submit(make_job(id.value(), k)));
      static_cast<void>(record(*out.state, id, job_event::enqueue));
      const decision d = out.policy->place(*out.state, id).value();
      if (apply(*out.state, d)) static_cast<void>(out.policy->commit(d).value());
      static_cast<void>(record(*out.state, id, job_event::start));
      used += k;
    }
    return out;
  }();
  return s;
}

void BM_GandivaPlace(benchmark::State& bench) {
  scenario& s = shared_scenario();
  const auto k = static_cast<std::uint32_t>(bench.range(0));
  const job_id id(s.next_id++);
  static_cast<void>(s.state->submit(make_job(id.value(), k)));
  static_cast<void>(record(*s.state, id, job_event::enqueue));
  for (auto _ : bench) {
    auto d = s.policy->place(*s.state, id);
    benchmark::DoNotOptimize(d);
  }
  static_cast<void>(record(*s.state, id, job_event::cancel));
}
BENCHMARK(BM_GandivaPlace)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMicrosecond);

// place + apply + commit, then cancel + release, so the cluster stays at the same load.
void BM_GandivaPlaceCommitRelease(benchmark::State& bench) {
  scenario& s = shared_scenario();
  const auto k = static_cast<std::uint32_t>(bench.range(0));
  for (auto _ : bench) {
    const job_id id(s.next_id++);
    static_cast<void>(s.state->submit(make_job(id.value(), k)));
    static_cast<void>(record(*s.state, id, job_event::enqueue));
    const decision d = s.policy->place(*s.state, id).value();
    if (apply(*s.state, d)) static_cast<void>(s.policy->commit(d).value());
    static_cast<void>(record(*s.state, id, job_event::cancel));
    s.policy->release(id);
    static_cast<void>(s.state->forget(id));
  }
}
BENCHMARK(BM_GandivaPlaceCommitRelease)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond);

/// 1,000 DGX A100 nodes (8,000 GPUs) full of 1-GPU jobs, then every other GPU set time-sliced
/// once (4,000 suspended jobs spread by the balanced stage 4): place() of one more 1-GPU job runs
/// stages 1-3 without a candidate and stage 4 on the least-loaded server.
struct oversubscribed {
  cluster_topology topology;
  std::unique_ptr<cluster_state> state;
  std::unique_ptr<gandiva_reactive> policy;
  std::uint32_t next_id = 1;
};

oversubscribed& oversubscribed_scenario() {
  static oversubscribed s = [] {
    oversubscribed out;
    out.topology =
        cluster_builder("bench").add_nodes(node_template::dgx_a100, 1'000, "a100").build().value();
    out.state = std::make_unique<cluster_state>(to_cluster(out.topology).value());
    out.policy = std::make_unique<gandiva_reactive>(out.state->cluster(), out.topology);
    for (std::uint32_t i = 0; i < 8'000 + 4'000; ++i) {
      const job_id id(out.next_id++);
      static_cast<void>(out.state->submit(make_job(id.value(), 1)));
      static_cast<void>(record(*out.state, id, job_event::enqueue));
      const decision d = out.policy->place(*out.state, id).value();
      if (apply(*out.state, d)) static_cast<void>(out.policy->commit(d).value());
      static_cast<void>(record(*out.state, id, job_event::start));
    }
    return out;
  }();
  return s;
}

void BM_GandivaPlaceOversubscribed(benchmark::State& bench) {
  oversubscribed& s = oversubscribed_scenario();
  const job_id id(s.next_id++);
  static_cast<void>(s.state->submit(make_job(id.value(), 1)));
  static_cast<void>(record(*s.state, id, job_event::enqueue));
  if (s.policy->place(*s.state, id).value().suspensions.size() != 1) {
    bench.SkipWithError("the job is not time-sliced");
    return;
  }
  for (auto _ : bench) {
    auto d = s.policy->place(*s.state, id);
    benchmark::DoNotOptimize(d);
  }
  static_cast<void>(record(*s.state, id, job_event::cancel));
}
BENCHMARK(BM_GandivaPlaceOversubscribed)->Unit(benchmark::kMicrosecond);

}  // namespace
