// SPDX-License-Identifier: MIT
// Capacity-queue micro-benchmarks: one admission cycle over 1,000 queues in 4 levels with up to
// 100k pending jobs, what-if calls on that state (each the next cycle's exact answer), and a
// preemption plan with 10k running jobs.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_preemption.hpp>
#include <hetsched/policies/capacity_queue.hpp>

namespace {

using namespace hetsched;

/// root -> 10 cohorts -> 10 cohorts -> 10 queues (1,000 queues, 4 levels), each queue with
/// 16 GPUs of A100 and 8 of H100 (milli-GPU) and 64 CPUs.
struct scenario_config {
  std::int64_t pending = 0;
  std::int64_t running = 0;
  bool fair = false;
  std::uint64_t seed = 7;
};

capacity_tree make_tree() {
  capacity_tree_spec spec;
  capacity_node_spec root;
  root.name = "root";
  root.kind = capacity_node_kind::cohort;
  spec.nodes.push_back(root);
  for (int i = 0; i < 10; ++i) {
    capacity_node_spec c1;
    c1.name = fmt::format("c{}", i);
    c1.parent = "root";
    c1.kind = capacity_node_kind::cohort;
    spec.nodes.push_back(c1);
    for (int j = 0; j < 10; ++j) {
      capacity_node_spec c2;
      c2.name = fmt::format("c{}.{}", i, j);
      c2.parent = c1.name;
      c2.kind = capacity_node_kind::cohort;
      spec.nodes.push_back(c2);
      for (int k = 0; k < 10; ++k) {
        capacity_node_spec q;
        q.name = fmt::format("q{}.{}.{}", i, j, k);
        q.parent = c2.name;
        q.quotas = {{"a100", "gpu", 16000, std::nullopt, std::nullopt},
                    {"a100", "cpu", 64000, std::nullopt, std::nullopt},
                    {"h100", "gpu", 8000, std::nullopt, std::nullopt},
                    {"h100", "cpu", 64000, std::nullopt, std::nullopt}};
        q.preemption.within_queue = within_queue_preemption::lower_priority;
        q.preemption.reclaim = cohort_reclaim::any;
        spec.nodes.push_back(q);
      }
    }
  }
  return std::move(capacity_tree::build(spec).value());
}

std::vector<queue_id> queues_of(const capacity_tree& t) {
  std::vector<queue_id> out;
  for (std::uint32_t i = 0; i < t.size(); ++i)
    if (t.is_queue(queue_id(i))) out.push_back(queue_id(i));
  return out;
}

capacity_state make_state(const scenario_config& cfg) {
  capacity_state s(make_tree());
  const auto queues = queues_of(s.tree());
  std::mt19937_64 rng(cfg.seed);
  std::uint32_t next = 1;
  // Running jobs: skewed so that a tenth of the queues borrow.
  for (std::int64_t i = 0; i < cfg.running; ++i) {
    const queue_id q = queues[(rng() % 10 == 0 ? rng() % 100 : rng() % queues.size())];
    const std::int64_t g = 1000 * static_cast<std::int64_t>(1 + rng() % 2);
    if (quota_available(s.tree(), s.usage(), q, *s.tree().find_fr("a100", "gpu")) < g) continue;
    static_cast<void>(s.add_admitted({job_id(next++),
                                      q,
                                      tenant_id(0),
                                      static_cast<std::int32_t>(rng() % 3),
                                      static_cast<std::int64_t>(i),
                                      "a100",
                                      {{"gpu", g}, {"cpu", 4000}}}));
  }
  for (std::int64_t i = 0; i < cfg.pending; ++i) {
    const queue_id q = queues[rng() % queues.size()];
    const std::int64_t g = 1000 * static_cast<std::int64_t>(1 << (rng() % 4));
    static_cast<void>(s.submit({job_id(next++),
                                q,
                                tenant_id(static_cast<std::uint32_t>(rng() % 8)),
                                static_cast<std::int32_t>(rng() % 4),
                                i,
                                {{"gpu", g}, {"cpu", 8000}},
                                {}}));
  }
  return s;
}

// One admission cycle: 1,000 queues, range(0) pending jobs, range(1) = fair sharing,
// range(2) = deferral messages.
void BM_Capacity_AdmissionCycle(benchmark::State& state) {
  const capacity_state s = make_state({state.range(0), 2000, state.range(1) != 0, 7});
  capacity_cycle_options opt;
  opt.fair_sharing = state.range(1) != 0;
  opt.explain = state.range(2) != 0;
  std::size_t admitted = 0;
  std::size_t victims = 0;
  std::uint64_t digest = 0;  // of the decisions, to check that optimisations change none
  for (auto _ : state) {
    auto plan = plan_admission(s, opt);
    admitted = plan->admitted.size();
    victims = 0;
    digest = 0;
    for (const auto& a : plan->admitted) digest = digest * 1000003 + a.job.value();
    for (const auto& p : plan->preemptions) {
      digest = digest * 1000003 + p.preemptor.value();
      for (const auto& v : p.victims) digest = digest * 1000003 + v.victim.value();
      victims += p.victims.size();
    }
    benchmark::DoNotOptimize(plan);
  }
  state.counters["admitted"] = static_cast<double>(admitted);
  state.counters["victims"] = static_cast<double>(victims);
  state.counters["digest"] = static_cast<double>(digest % 999983);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
// Debug builds (ctest's smoke run) use small sizes; Release runs the target sizes.
#ifdef NDEBUG
constexpr std::int64_t small_size = 10000;
constexpr std::int64_t big_size = 100000;
#else
constexpr std::int64_t small_size = 1000;
constexpr std::int64_t big_size = 2000;
#endif

BENCHMARK(BM_Capacity_AdmissionCycle)
    ->Args({small_size, 0, 1})
    ->Args({small_size, 1, 1})
    ->Args({big_size, 0, 1})
    ->Args({big_size, 1, 1})
    ->Args({big_size, 1, 0})
    ->Unit(benchmark::kMillisecond);

// One what-if on a state of range(0) pending jobs (and as many running, at most 10k), fair
// sharing when range(1). range(2) = 0: the earlier bench's job, 4 GPUs at priority 1 (with 100k
// pending the cycle defers it behind workloads of its own queue, so what-if runs the root's
// admissions up to that point); 1: a 1-GPU priority-5 job, which the cycle admits early (what-if
// stops at its admission) or plans victims for. The job's queue changes every call.
void BM_Capacity_WhatIf(benchmark::State& state) {
  const bool fair = state.range(1) != 0;
  const capacity_state s =
      make_state({state.range(0), std::min<std::int64_t>(state.range(0), 10000), fair, 7});
  const auto queues = queues_of(s.tree());
  capacity_cycle_options opt;
  opt.fair_sharing = fair;
  const bool small = state.range(2) != 0;
  std::size_t i = 0;
  std::size_t admissible = 0;
  std::size_t preempting = 0;
  for (auto _ : state) {
    const pending_workload w{job_id(1u << 30),
                             queues[(i++ * 37) % queues.size()],
                             tenant_id(0),
                             small ? 5 : 1,
                             0,
                             {{"gpu", small ? 1000 : 4000}, {"cpu", 8000}},
                             {}};
    auto ans = what_if(s, w, opt);
    admissible += ans->admissible_now ? 1u : 0u;
    preempting += ans->needs_preemption ? 1u : 0u;
    benchmark::DoNotOptimize(ans);
  }
  state.counters["admissible"] =
      static_cast<double>(admissible) / static_cast<double>(state.iterations());
  state.counters["preempting"] =
      static_cast<double>(preempting) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Capacity_WhatIf)
    ->Args({small_size, 1, 0})
    ->Args({big_size, 1, 0})
    ->Args({big_size, 0, 0})
    ->Args({big_size, 1, 1})
    ->Args({big_size, 0, 1})
    ->Unit(benchmark::kMillisecond);

// A preemption plan with range(0) running jobs filling every H100: the incoming job (priority
// 5) needs 8 H100s in queue 0, whose quota others borrow, so candidates span the whole tree.
void BM_Capacity_PreemptionPlan(benchmark::State& state) {
  capacity_state s(make_tree());
  const auto queues = queues_of(s.tree());
  std::mt19937_64 rng(11);
  std::uint32_t next = 1;
  const std::size_t h100 = *s.tree().find_fr("h100", "gpu");
  // Fill every H100 with 800-milli jobs in queues 100.. (most of them borrow).
  const std::int64_t size = 8000 * static_cast<std::int64_t>(queues.size()) / state.range(0);
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    for (int attempt = 0; attempt < 64; ++attempt) {
      const queue_id q = queues[100 + rng() % (queues.size() - 100)];
      if (quota_available(s.tree(), s.usage(), q, h100) < size) continue;
      static_cast<void>(s.add_admitted({job_id(next++),
                                        q,
                                        tenant_id(0),
                                        static_cast<std::int32_t>(rng() % 3),
                                        i,
                                        "h100",
                                        {{"gpu", size}}}));
      break;
    }
  }
  capacity_cycle_options opt;
  opt.fair_sharing = state.range(1) != 0;
  std::size_t victims = 0;
  for (auto _ : state) {
    const pending_workload w{job_id(1u << 30), queues[0], tenant_id(0), 5, 0,
                             {{"gpu", 8000}},  {"h100"}};
    auto plan = plan_preemption(s, w, opt);
    victims = plan->victims.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["running"] = static_cast<double>(s.admitted_count());
  state.counters["victims"] = static_cast<double>(victims);
}
BENCHMARK(BM_Capacity_PreemptionPlan)
    ->Args({small_size, 0})
    ->Args({small_size, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
