// SPDX-License-Identifier: MIT
// Proportional preemption (YARN PCPP) planner: one round over N running jobs.
//
// Scenario: a cluster of 2 dimensions (milli-GPU, milli-CPU), 10 parent queues of 10 leaves each
// (100 leaves, equal guarantees), N jobs of 1-M containers spread over the first 60 leaves (so
// they run above their guarantee) while the last 40 leaves have pending demand. Product defaults
// (dead zone 0.1, natural termination 0.2, 10% per round); every 7th job is a gang; the first
// container of a multi-container job is its application master.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>

#include <hetsched/policies/proportional_preemption.hpp>

namespace {

using hetsched::pcpp_container;
using hetsched::pcpp_job;
using hetsched::pcpp_queue;
using hetsched::pcpp_snapshot;

pcpp_snapshot make_snapshot(std::size_t jobs, std::size_t max_containers) {
  pcpp_snapshot s;
  s.dimensions = 2;
  const std::int64_t containers_estimate =
      static_cast<std::int64_t>(jobs * (max_containers + 1) / 2);
  s.cluster = {containers_estimate * 1000, containers_estimate * 4000};
  const std::int64_t leaf_g0 = s.cluster[0] / 100;
  const std::int64_t leaf_g1 = s.cluster[1] / 100;
  for (std::size_t p = 0; p < 10; ++p) {
    pcpp_queue parent;
    parent.name = fmt::format("p{}", p);
    parent.guaranteed = {leaf_g0 * 10, leaf_g1 * 10};
    parent.maximum = s.cluster;
    const std::size_t pi = s.queues.size();
    s.queues.push_back(parent);
    for (std::size_t l = 0; l < 10; ++l) {
      pcpp_queue leaf;
      leaf.name = fmt::format("p{}.l{}", p, l);
      leaf.parent = pi;
      leaf.guaranteed = {leaf_g0, leaf_g1};
      leaf.maximum = s.cluster;
      if (p >= 6) leaf.pending = {leaf_g0, leaf_g1};
      s.queues.push_back(leaf);
    }
  }
  std::uint64_t state = 12345;
  const auto next = [&state]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  std::int64_t used0 = 0;
  for (std::size_t j = 0; j < jobs; ++j) {
    const std::size_t leaf = (j % 60) / 10 * 11 + 1 + j % 10;
    pcpp_job job{j + 1, leaf, static_cast<std::int32_t>(next() % 3), static_cast<std::int64_t>(j),
                 j % 7 == 0};
    s.jobs.push_back(job);
    const std::size_t n = 1 + next() % max_containers;
    for (std::size_t c = 0; c < n && used0 + 1000 <= s.cluster[0]; ++c) {
      pcpp_container con;
      con.id = s.containers.size() + 1;
      con.job = j;
      con.priority = static_cast<std::int32_t>(next() % 2);
      con.start_time = static_cast<std::int64_t>(next() % 100000);
      con.size = {1000, 4000};
      con.am = c == 0 && n > 1;  // multi-container jobs have an application master
      used0 += 1000;
      s.containers.push_back(con);
    }
  }
  return s;
}

void BM_Pcpp_Plan(benchmark::State& state) {
  const pcpp_snapshot s = make_snapshot(static_cast<std::size_t>(state.range(0)),
                                        static_cast<std::size_t>(state.range(1)));
  hetsched::pcpp_params params;
  params.now = 200000;
  std::size_t victims = 0;
  for (auto _ : state) {
    auto plan = hetsched::plan_proportional_preemption(s, params);
    victims = plan->victims.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["containers"] = static_cast<double>(s.containers.size());
  state.counters["victims"] = static_cast<double>(victims);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
// Args: jobs, containers per job at most (1: one container per job).
BENCHMARK(BM_Pcpp_Plan)
    ->Args({1000, 8})
    ->Args({10000, 1})
    ->Args({10000, 8})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
