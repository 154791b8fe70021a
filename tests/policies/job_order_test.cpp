// SPDX-License-Identifier: MIT
// Job orderings: Tiresias 2D-LAS keys, and the preemption guarantee they give a preemptive
// scheduler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <hetsched/policies/job_order.hpp>

namespace hetsched {
namespace {

job_view job(std::uint32_t id, std::int64_t submit, std::int64_t attained, bool running) {
  job_view j;
  j.id = job_id(id);
  j.submit_ms = submit;
  j.milli_gpu = 1000;
  j.attained_gpu_ms = attained;
  j.running = running;
  return j;
}

TEST(JobOrderLas, LowerQueueFirstThenRunningThenFifo) {
  const las_params p{{1000, 5000}};
  EXPECT_EQ(las_queue(p, 0), 0u);
  EXPECT_EQ(las_queue(p, 1000), 1u);  // a threshold starts the next queue
  EXPECT_EQ(las_queue(p, 4999), 1u);
  EXPECT_EQ(las_queue(p, 5000), 2u);
  // {queue, running ? 0 : 1, submit}
  EXPECT_EQ(las_key(p, job(1, 7, 1200, false)), (order_key{1, 1, 7}));
  EXPECT_EQ(las_key(p, job(2, 9, 1200, true)), (order_key{1, 0, 9}));
  // A waiting job never goes before a running one of its own queue.
  EXPECT_TRUE(key_before(las_key(p, job(2, 9, 1200, true)), job_id(2),
                         las_key(p, job(1, 7, 1000, false)), job_id(1)));
}

// A preemptive scheduler over `gpus` whole GPUs driven by las_key, as hetsched-sim's preempt
// pass: every round all active jobs are taken in LAS order and each runs if it still fits; a
// running job that does not is preempted by the jobs started this round ahead of it.
struct las_edge {
  std::uint32_t preemptor = 0;
  std::uint32_t victim = 0;
  int round = 0;
  std::uint32_t preemptor_queue = 0;
  std::uint32_t victim_queue = 0;
};

struct las_run {
  std::vector<las_edge> edges;
  std::vector<int> demotion_rounds;  // rounds in which some job changed queue
};

las_run run_las(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t round_ms = 60'000;
  const std::int64_t gpus = 8;
  // Three queues: below 2 GPU-rounds of service, below 6, the rest (GPU-ms).
  const las_params p{{2 * round_ms, 6 * round_ms}};
  struct sim_job {
    job_view v;
    std::int64_t work = 0;  // GPU-ms to finish
    int arrival = 0;
    bool done = false;
  };
  std::vector<sim_job> jobs;
  const int n = 12 + static_cast<int>(rng() % 20);
  for (int i = 0; i < n; ++i) {
    sim_job j;
    j.arrival = static_cast<int>(rng() % 30);
    j.v = job(static_cast<std::uint32_t>(i), j.arrival * round_ms, 0, false);
    j.v.milli_gpu = 1000 * static_cast<std::int64_t>(1 + rng() % 4);
    j.work = j.v.milli_gpu * round_ms / 1000 * static_cast<std::int64_t>(1 + rng() % 25);
    jobs.push_back(j);
  }
  las_run out;
  for (int round = 0; round < 400; ++round) {
    std::vector<std::size_t> active;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (!jobs[i].done && jobs[i].arrival <= round) active.push_back(i);
    if (active.empty() && round > 30) break;
    std::sort(active.begin(), active.end(), [&](std::size_t a, std::size_t b) {
      return key_before(las_key(p, jobs[a].v), jobs[a].v.id, las_key(p, jobs[b].v), jobs[b].v.id);
    });
    std::int64_t budget = gpus * 1000;
    std::vector<std::size_t> started;
    std::vector<bool> runs(jobs.size(), false);
    for (const std::size_t i : active) {
      if (jobs[i].v.milli_gpu <= budget) {
        budget -= jobs[i].v.milli_gpu;
        runs[i] = true;
        if (!jobs[i].v.running) started.push_back(i);
      } else if (jobs[i].v.running) {
        for (const std::size_t a : started)  // started ahead of it in LAS order
          out.edges.push_back({jobs[a].v.id.value(), jobs[i].v.id.value(), round,
                               las_queue(p, jobs[a].v.attained_gpu_ms),
                               las_queue(p, jobs[i].v.attained_gpu_ms)});
      }
    }
    bool demoted = false;
    for (const std::size_t i : active) {
      sim_job& j = jobs[i];
      j.v.running = runs[i];
      if (!runs[i]) continue;
      const std::uint32_t before = las_queue(p, j.v.attained_gpu_ms);
      j.v.attained_gpu_ms += j.v.milli_gpu * round_ms / 1000;
      demoted = demoted || las_queue(p, j.v.attained_gpu_ms) != before;
      if (j.v.attained_gpu_ms >= j.work) {
        j.done = true;
        j.v.running = false;
      }
    }
    if (demoted) out.demotion_rounds.push_back(round);
  }
  return out;
}

// Tiresias' guarantee: a running job is displaced only by jobs of a strictly lower queue (less
// attained service); inside a queue running jobs go first, so jobs of one queue never preempt
// each other. Attained service only grows, so a job's queue never goes down: a preemption cycle
// A -> B -> ... -> A needs demotions between its preemptions (a cycle of L jobs, L in total),
// and within any stretch of rounds in which no job changes queue the preemptions form no cycle.
// With K queues a job is demoted at most K - 1 times, which bounds how often it can come back.
TEST(TiresiasProperty, PreemptionCyclesOnlyThroughDemotions) {
  int edges = 0;
  int cycles_through_demotions = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    const las_run r = run_las(seed);
    for (const las_edge& e : r.edges) {
      EXPECT_LT(e.preemptor_queue, e.victim_queue)
          << "seed " << seed << " round " << e.round << ": job " << e.preemptor << " preempts "
          << e.victim;
      ++edges;
    }
    // Windows between demotions: their preemption graphs have no cycle (the queues order them).
    std::size_t k = 0;
    std::vector<int> bounds = r.demotion_rounds;
    bounds.push_back(1 << 30);
    int window_start = 0;
    for (const int end : bounds) {
      std::map<std::uint32_t, std::set<std::uint32_t>> graph;
      for (; k < r.edges.size() && r.edges[k].round <= end; ++k)
        if (r.edges[k].round >= window_start) graph[r.edges[k].preemptor].insert(r.edges[k].victim);
      // No edge both ways, and no longer cycle: a topological order by queue exists.
      for (const auto& [a, out] : graph)
        for (const std::uint32_t b : out) {
          const auto back = graph.find(b);
          EXPECT_TRUE(back == graph.end() || !back->second.contains(a))
              << "seed " << seed << ": jobs " << a << " and " << b
              << " preempt each other without a demotion";
        }
      window_start = end + 1;
    }
    // Across the run, jobs may take turns (that is LAS), but only after the first preemptor
    // was demoted past the other.
    for (const las_edge& x : r.edges)
      for (const las_edge& y : r.edges)
        if (x.preemptor == y.victim && x.victim == y.preemptor && x.round < y.round) {
          // A's queue: x.preemptor_queue < x.victim_queue <= y.preemptor_queue < y.victim_queue.
          EXPECT_GE(y.victim_queue, x.preemptor_queue + 2) << "seed " << seed;
          ++cycles_through_demotions;
        }
  }
  EXPECT_GT(edges, 200);
  EXPECT_GT(cycles_through_demotions, 0);  // the runs do exercise the conditional part
}

}  // namespace
}  // namespace hetsched
