// SPDX-License-Identifier: MIT
// DRF micro-benchmarks: the sorter's pick-next + allocation update, and task-by-task filling.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <hetsched/policies/drf.hpp>

namespace {

/// The large client count of the pick + update benchmarks: 100k in optimized builds; Debug
/// builds (ctest's smoke run) use 4096 so that setup stays well under 2 s.
#ifdef NDEBUG
constexpr std::int64_t large_clients = 100000;
#else
constexpr std::int64_t large_clients = 4096;
#endif

/// A flat sorter scenario: `clients` active clients with seeded random initial allocations.
struct sorter_config {
  std::int64_t clients = 0;
  std::int64_t depth = 1;  ///< 1: flat roles; 2: "group<i % 64>/client<i>".
  std::uint64_t seed = 42;
  bool per_resource_weights = false;  ///< Every client weighs cpu 1..4 and mem 1..3.
  bool groups_are_clients = false;    ///< With depth 2: each "group<g>" is a client too.
};

hetsched::drf_sorter make_sorter(const sorter_config& config) {
  hetsched::drf_sorter sorter;
  const std::int64_t big = std::int64_t{1} << 39;
  static_cast<void>(sorter.set_total({{"cpu", big}, {"gpu", big}, {"mem", big}}));
  std::mt19937_64 rng(config.seed);
  std::uniform_int_distribution<std::int64_t> amount(0, 1000);
  for (std::int64_t i = 0; i < config.clients; ++i) {
    const std::string path =
        config.depth == 1 ? fmt::format("client{}", i) : fmt::format("group{}/client{}", i % 64, i);
    const auto id = sorter.add(path).value();
    if (config.per_resource_weights) {
      hetsched::drf_client_weight w;
      w.per_resource.emplace("cpu", hetsched::drf_weight{1 + i % 4, 1});
      w.per_resource.emplace("mem", hetsched::drf_weight{1 + i % 3, 1});
      static_cast<void>(sorter.set_weight(path, w));
    }
    static_cast<void>(
        sorter.allocated(id, {{"cpu", amount(rng)}, {"gpu", amount(rng)}, {"mem", amount(rng)}}));
  }
  if (config.depth == 2 && config.groups_are_clients) {
    for (std::int64_t g = 0; g < 64 && g < config.clients; ++g) {
      const auto id = sorter.add(fmt::format("group{}", g)).value();
      static_cast<void>(
          sorter.allocated(id, {{"cpu", amount(rng)}, {"gpu", amount(rng)}, {"mem", amount(rng)}}));
    }
  }
  return sorter;
}

void run_pick_update(benchmark::State& state, sorter_config config) {
  config.clients = state.range(0);
  hetsched::drf_sorter sorter = make_sorter(config);
  const hetsched::drf_vector task{{"cpu", 3}, {"gpu", 1}, {"mem", 7}};
  for (auto _ : state) {
    const auto next = sorter.pick_next();
    auto done = sorter.allocated(*next, task);
    benchmark::DoNotOptimize(done);
  }
  state.SetItemsProcessed(state.iterations());
}

// One pick_next() plus one allocated() on the picked client; flat roles.
void BM_Drf_SorterPickUpdate(benchmark::State& state) { run_pick_update(state, {0, 1}); }
BENCHMARK(BM_Drf_SorterPickUpdate)->RangeMultiplier(4)->Range(64, 16384)->Arg(large_clients);

// The same with two-level roles (64 groups).
void BM_Drf_SorterPickUpdateTwoLevel(benchmark::State& state) { run_pick_update(state, {0, 2}); }
BENCHMARK(BM_Drf_SorterPickUpdateTwoLevel)->Arg(large_clients);

// Flat roles, each with per-resource weights (cpu 1..4, mem 1..3).
void BM_Drf_SorterPickUpdatePerResourceWeights(benchmark::State& state) {
  run_pick_update(state, {0, 1, 42, true, false});
}
BENCHMARK(BM_Drf_SorterPickUpdatePerResourceWeights)->Arg(large_clients);

// Two-level roles where every group is also a client (virtual "." leaves).
void BM_Drf_SorterPickUpdateGroupsAreClients(benchmark::State& state) {
  run_pick_update(state, {0, 2, 42, false, true});
}
BENCHMARK(BM_Drf_SorterPickUpdateGroupsAreClients)->Arg(large_clients);

// Task-by-task progressive filling: `users` users with distinct demands on 3 resources.
void BM_Drf_FillTasks(benchmark::State& state) {
  std::vector<hetsched::drf_user> users;
  for (std::int64_t i = 0; i < state.range(0); ++i)
    users.push_back({fmt::format("u{}", i),
                     {{"cpu", 1 + i % 7}, {"gpu", 1 + i % 3}, {"mem", 2 + i % 5}},
                     1.0 + static_cast<double>(i % 4),
                     {},
                     std::nullopt});
  const hetsched::drf_vector capacity{
      {"cpu", 64 * state.range(0)}, {"gpu", 16 * state.range(0)}, {"mem", 128 * state.range(0)}};
  std::int64_t tasks = 0;
  for (auto _ : state) {
    auto got = hetsched::drf_fill_tasks(capacity, users);
    tasks += static_cast<std::int64_t>(got->order.size());
    benchmark::DoNotOptimize(got);
  }
  state.SetItemsProcessed(tasks);
}
BENCHMARK(BM_Drf_FillTasks)->RangeMultiplier(4)->Range(64, 1024);

}  // namespace
