// SPDX-License-Identifier: MIT
// Costs of reading and writing configuration text, which unit tests check for correctness only:
// parsing the 3.6 MB FGD conformance vector (../shared/vectors/fgd), writing a HiveD config of
// 3,000 and 30,000 node-level cell types (linear: the quadratic writer took 4.7 s for 30,000),
// building a HiveD scheduler of one node with 100,000 GPUs (57 s before the duplicate-leaf check
// became linear), and refusing a VC that asks for INT_MAX cells (before any cell is built).
#include <benchmark/benchmark.h>

#include <climits>
#include <fstream>
#include <sstream>
#include <string>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

#include "jsonio/json.hpp"

namespace {

using namespace hetsched;

/// The physical cell of node "n0" (a function: GCC 12 at -O3 reports a false
/// -Wmaybe-uninitialized on member-wise assignments of a local physical_cell_spec).
hived::physical_cell_spec one_node() {
  return hived::physical_cell_spec{.cell_type = "NODE",
                                   .address = "n0",
                                   .pinned_id = "",
                                   .children = {},
                                   .absolute_address = false};
}

void BM_JsonParseFgdVector(benchmark::State& state) {
  std::ifstream in(std::string(HETSCHED_SHARED_DIR) + "/vectors/fgd/openb_default_seed42_fgd.json",
                   std::ios::binary);
  if (!in) {
    state.SkipWithError("../shared/vectors/fgd/openb_default_seed42_fgd.json not found");
    return;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  for (auto _ : state) {
    auto v = jsonio::parse_json(text);
    if (!v) state.SkipWithError(v.error().message.c_str());
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_JsonParseFgdVector)->Unit(benchmark::kMillisecond);

void BM_HivedConfigToJson(benchmark::State& state) {
  hived::config cfg;
  const auto n = static_cast<int>(state.range(0));
  for (int i = 0; i < n; ++i) {
    // Built by append: GCC 12 at -O3 reports a false -Wrestrict on "T" + std::to_string(i).
    std::string name = "T";
    name += std::to_string(i);
    cfg.cell_types.push_back({std::move(name), "GPU", 1, true});
  }
  cfg.cell_types.push_back({"T0", "GPU", 2, true});  // a duplicate name: written once
  for (auto _ : state) benchmark::DoNotOptimize(hived::to_json(cfg));
  state.SetComplexityN(n);
}
BENCHMARK(BM_HivedConfigToJson)
    ->Arg(3'000)
    ->Arg(30'000)
    ->Complexity(benchmark::oN)
    ->Unit(benchmark::kMillisecond);

void BM_HivedCreateHundredThousandGpusOnOneNode(benchmark::State& state) {
  hived::config cfg;
  cfg.cell_types = {{"NODE", "GPU", 100'000, true}};
  cfg.physical_cells = {one_node()};
  cfg.virtual_clusters = {{"a", {{"NODE", 1}}, {}}};
  for (auto _ : state) {
    auto s = hived::scheduler::create(cfg);
    if (!s) state.SkipWithError(s.error().message.c_str());
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_HivedCreateHundredThousandGpusOnOneNode)->Unit(benchmark::kMillisecond);

void BM_HivedRefusesAHugeVc(benchmark::State& state) {
  hived::config cfg;
  cfg.cell_types = {{"NODE", "GPU", 8, true}};
  cfg.physical_cells = {one_node()};
  cfg.virtual_clusters = {{"a", {{"NODE", INT_MAX}}, {}}};
  for (auto _ : state) {
    auto s = hived::scheduler::create(cfg);
    if (s) state.SkipWithError("a VC of INT_MAX cells was accepted");
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_HivedRefusesAHugeVc);

}  // namespace
