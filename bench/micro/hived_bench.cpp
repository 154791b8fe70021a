// SPDX-License-Identifier: MIT
// HiveD micro-benchmarks in the issue-4 shape: rows x 8 racks x 4 nodes x 8 GPUs with the chain
// V100 -> PCIE(2) -> SOCKET(2) -> NODE(node level) -> RACK(4) -> ROW(8); 8 VCs, each owning 10%
// of the racks as rack cells plus an equal share of the remaining nodes as node cells; a
// background load of about half of each VC's quota in 1/2/4/8-GPU pods and 2x8 / 4x8 gangs at
// priorities 0-2. Measured: schedule of a 1x8 pod and of a 4x8 gang (Filtering phase, no state
// change; each checks once, untimed, that it binds), the same with an explicit suggested-node
// list honoured (ignore_suggested_nodes = false), schedule + commit + release of a 4x8 gang,
// construction + marking every node healthy, what-if (journal and copy), and what-if through the
// policy contract (hived_placement on 2,048 DGX A100 servers, half busy).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

namespace {

using namespace hetsched;

constexpr int vc_count = 8;

hived::config bench_config(int gpus) {
  const int rows = gpus / 256;
  hived::config cfg;
  cfg.cell_types = {{"PCIE", "V100", 2, false},
                    {"SOCKET", "PCIE", 2, false},
                    {"NODE", "SOCKET", 2, true},
                    {"RACK", "NODE", 4, false},
                    {"ROW", "RACK", 8, false}};
  for (int r = 0; r < rows; ++r) {
    hived::physical_cell_spec row;
    row.cell_type = "ROW";
    for (int k = 0; k < 8; ++k) {
      hived::physical_cell_spec rack;
      for (int n = 0; n < 4; ++n) {
        hived::physical_cell_spec node;
        node.address = fmt::format("node-{}", (r * 8 + k) * 4 + n);
        rack.children.push_back(std::move(node));
      }
      row.children.push_back(std::move(rack));
    }
    cfg.physical_cells.push_back(std::move(row));
  }
  const int racks = rows * 8;
  const int racks_per_vc = racks / 10;
  const int nodes_per_vc = (racks - racks_per_vc * vc_count) * 4 / vc_count;
  for (int v = 0; v < vc_count; ++v) {
    hived::virtual_cluster_spec vc;
    vc.name = fmt::format("vc{}", v);
    vc.virtual_cells = {{"ROW.RACK", racks_per_vc}, {"ROW.RACK.NODE", nodes_per_vc}};
    cfg.virtual_clusters.push_back(std::move(vc));
  }
  return cfg;
}

hived::pod_request make_pod(const std::string& name, int vc, int prio, int leaves, int pods) {
  hived::pod_request p;
  p.name = name;
  p.vc = fmt::format("vc{}", vc);
  p.priority = prio;
  p.leaf_type = "V100";
  p.leaf_cells = leaves;
  p.group = name + "-g";
  p.members = {{pods, leaves}};
  p.lazy_preemption = true;
  return p;
}

struct scenario {
  std::unique_ptr<hived::scheduler> s;
  int next = 0;
};

/// Commits every pod of a bind result's group; returns the bind records.
std::vector<std::pair<hived::pod_request, hived::bind_info>> commit_group(
    hived::scheduler& s, const hived::pod_request& first, const hived::bind_info& bind) {
  std::vector<std::pair<hived::pod_request, hived::bind_info>> out;
  for (const auto& [num, pods] : bind.group_placements) {
    for (std::size_t i = 0; i < pods.size(); ++i) {
      hived::pod_request p = first;
      p.name = fmt::format("{}-{}", first.name, i);
      hived::bind_info info = bind;
      info.node = pods[i].node;
      info.leaf_cells = pods[i].leaf_cells;
      static_cast<void>(s.add_allocated(p, info));
      out.emplace_back(std::move(p), std::move(info));
    }
  }
  return out;
}

scenario& shared(int gpus) {
  static std::map<int, scenario> all;
  auto it = all.find(gpus);
  if (it != all.end()) return it->second;
  scenario sc;
  sc.s = std::make_unique<hived::scheduler>(hived::scheduler::create(bench_config(gpus)).value());
  sc.s->mark_all_nodes_healthy();
  const int quota = gpus * 9 / 10 / vc_count;  // leaves per VC (rack + node cells)
  const int sizes[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {8, 2}, {8, 4}};
  for (int v = 0; v < vc_count; ++v) {
    int used = 0;
    for (int i = 0; used < quota / 2 && i < 100000; ++i) {
      const auto& sz = sizes[i % 6];
      auto p = make_pod(fmt::format("bg{}", sc.next++), v, i % 3, sz[0], sz[1]);
      auto r = sc.s->schedule(p, hived::node_filter{}, hived::phase::filtering);
      if (!r || r->kind != hived::outcome::bind) continue;
      commit_group(*sc.s, p, r->bind);
      used += sz[0] * sz[1];
    }
  }
  return all.emplace(gpus, std::move(sc)).first->second;
}

/// True if a Filtering-phase schedule of `p` binds (checked once, outside the timed loop:
/// Filtering changes no state, so every timed call gives the same answer).
bool binds(hived::scheduler& s, const hived::pod_request& p, const hived::node_filter& nodes,
           benchmark::State& state) {
  auto r = s.schedule(p, nodes, hived::phase::filtering);
  if (!r) {
    state.SkipWithError(("user error: " + r.error().message).c_str());
    return false;
  }
  if (r->kind != hived::outcome::bind) {
    state.SkipWithError(("no bind: " + r->wait_reason).c_str());
    return false;
  }
  return true;
}

void BM_Hived_Schedule1x8(benchmark::State& state) {
  auto& sc = shared(static_cast<int>(state.range(0)));
  auto p = make_pod("probe1", 3, 1, 8, 1);
  if (!binds(*sc.s, p, hived::node_filter{}, state)) return;
  for (auto _ : state) {
    auto r = sc.s->schedule(p, hived::node_filter{}, hived::phase::filtering);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Hived_Schedule1x8)->Arg(16384)->Unit(benchmark::kMicrosecond);

void BM_Hived_Schedule4x8(benchmark::State& state) {
  auto& sc = shared(static_cast<int>(state.range(0)));
  auto p = make_pod("probe4", 3, 1, 8, 4);
  if (!binds(*sc.s, p, hived::node_filter{}, state)) return;
  for (auto _ : state) {
    auto r = sc.s->schedule(p, hived::node_filter{}, hived::phase::filtering);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Hived_Schedule4x8)->Arg(16384)->Unit(benchmark::kMicrosecond);

/// The Kubernetes-extender path: an explicit suggested-node list (every node but one in 16, as
/// if K8s predicates had filtered a few out) honoured by the pod (ignore_suggested_nodes =
/// false). Costs on top of the plain schedule: resolving the names to a sorted id list and the
/// full re-sort of the views the list changes the keys of. Args: GPUs, pods of 8 GPUs.
void BM_Hived_ScheduleSuggestedNodes(benchmark::State& state) {
  auto& sc = shared(static_cast<int>(state.range(0)));
  auto p = make_pod("probe-suggested", 3, 1, 8, static_cast<int>(state.range(1)));
  p.ignore_suggested_nodes = false;
  hived::node_filter nodes{false, {}};
  const auto all = sc.s->nodes();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (i % 16 != 15) nodes.nodes.push_back(all[i]);
  if (!binds(*sc.s, p, nodes, state)) return;
  for (auto _ : state) {
    auto r = sc.s->schedule(p, nodes, hived::phase::filtering);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["suggested_nodes"] = static_cast<double>(nodes.nodes.size());
}
BENCHMARK(BM_Hived_ScheduleSuggestedNodes)
    ->Args({16384, 1})
    ->Args({16384, 4})
    ->Unit(benchmark::kMicrosecond);

// what_if() runs schedule() on the allocator under its undo journal and rolls it back: its cost
// is one schedule() plus saving and restoring what it wrote (target <= 20 µs at 16,384 GPUs,
// DESIGN.md §8). The preempting phase is the costlier one.
void BM_Hived_WhatIf1x8(benchmark::State& state) {
  auto& sc = shared(static_cast<int>(state.range(0)));
  auto p = make_pod("probe1", 3, 1, 8, 1);
  for (auto _ : state) {
    auto r = sc.s->what_if(p, hived::node_filter{}, hived::phase::preempting);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Hived_WhatIf1x8)->Arg(16384)->Unit(benchmark::kMicrosecond);

// what_if_on_copy(): the same answer on a copy of the whole allocator state (for const,
// concurrent readers); its cost is that of the copy.
void BM_Hived_WhatIfOnCopy1x8(benchmark::State& state) {
  auto& sc = shared(static_cast<int>(state.range(0)));
  auto p = make_pod("probe1", 3, 1, 8, 1);
  for (auto _ : state) {
    auto r = sc.s->what_if_on_copy(p, hived::node_filter{}, hived::phase::preempting);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Hived_WhatIfOnCopy1x8)->Arg(16384)->Unit(benchmark::kMicrosecond);

void BM_Hived_ScheduleCommitRelease4x8(benchmark::State& state) {
  auto& sc = shared(static_cast<int>(state.range(0)));
  auto p = make_pod("cycle", 5, 1, 8, 4);
  for (auto _ : state) {
    auto r = sc.s->schedule(p, hived::node_filter{}, hived::phase::preempting);
    if (!r || r->kind != hived::outcome::bind) {
      state.SkipWithError("the 4x8 gang did not bind");
      break;
    }
    auto pods = commit_group(*sc.s, p, r->bind);
    for (const auto& [pod, info] : pods) static_cast<void>(sc.s->delete_allocated(pod, info));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Hived_ScheduleCommitRelease4x8)->Arg(16384)->Unit(benchmark::kMicrosecond);

/// hived_placement's what-if through the contract: 2,048 DGX A100 servers (16,384 GPUs) in racks
/// of 4, 4 tenants with equal quota, half of every tenant's GPUs busy with 1/2/4/8-GPU jobs; the
/// probe is a queued 8-GPU guaranteed job. what_if() runs place()'s calls in a
/// hived::scheduler::trial (target <= 20 µs, DESIGN.md §8).
void BM_HivedPlacement_WhatIf8(benchmark::State& state) {
  const auto servers = static_cast<std::uint32_t>(state.range(0) / 8);
  const cluster_topology topo = cluster_builder("bench")
                                    .add_nodes(node_template::dgx_a100, servers, "n")
                                    .racks(servers / 4)
                                    .build()
                                    .value();
  const cluster description = to_cluster(topo).value();
  const std::uint32_t quota = servers * 8 / 4;
  hived_placement_params params;
  params.quota = {quota, quota, quota, quota};
  auto policy = hived_placement::create(description, &topo, params);
  if (!policy) {
    state.SkipWithError(policy.error().message.c_str());
    return;
  }
  cluster_state st(description);
  auto job = [](std::uint32_t id, std::uint32_t tenant, std::uint32_t gpus) {
    job_spec s;
    s.id = job_id(id);
    s.name = fmt::format("j{}", id);
    s.tenant = tenant_id(tenant);
    s.preemptible = true;
    task_role r;
    r.name = "t";
    r.gpu = whole_gpus(gpus);
    s.roles.push_back(r);
    return s;
  };
  const std::uint32_t sizes[] = {1, 2, 4, 8};
  std::uint32_t id = 0;
  for (std::uint32_t t = 0; t < 4; ++t) {
    for (std::uint32_t used = 0, i = 0; used < quota / 2; ++i) {
      const std::uint32_t gpus = sizes[i % 4];
      if (!st.submit(job(id, t, gpus)) || !record(st, job_id(id), job_event::enqueue)) break;
      auto d = policy->place(st, job_id(id));
      ++id;
      if (!d || d->binds.empty() || !apply(st, *d)) continue;
      policy->commit(st, *d);
      used += gpus;
    }
  }
  const job_id probe(id);
  if (!st.submit(job(id, 1, 8)) || !record(st, probe, job_event::enqueue)) {
    state.SkipWithError("the probe was refused");
    return;
  }
  auto first = policy->what_if(st, probe);
  if (!first || first->binds.empty()) {
    state.SkipWithError("the probe does not bind");
    return;
  }
  for (auto _ : state) {
    auto d = policy->what_if(st, probe);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["busy_gpus"] =
      static_cast<double>(std::int64_t{servers} * 8 - policy->free_leaf_cells());
}
BENCHMARK(BM_HivedPlacement_WhatIf8)->Arg(16384)->Unit(benchmark::kMicrosecond);

void BM_Hived_InitHealthy(benchmark::State& state) {
  auto cfg = bench_config(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto s = hived::scheduler::create(cfg);
    s->mark_all_nodes_healthy();
    benchmark::DoNotOptimize(s);
  }
}
#ifdef NDEBUG
BENCHMARK(BM_Hived_InitHealthy)->Arg(131072)->Unit(benchmark::kMillisecond)->Iterations(3);
#else
BENCHMARK(BM_Hived_InitHealthy)->Arg(4096)->Unit(benchmark::kMillisecond)->Iterations(1);
#endif

}  // namespace
