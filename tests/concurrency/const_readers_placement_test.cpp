// SPDX-License-Identifier: MIT
// Concurrent readers of the placement policies and the model: the gang placer and the affinity
// packer, Gandiva (reactive placement, migration and grow-shrink planners), FGD, cluster_state
// and the topology views. As const_readers_test.cpp: one object with state in it, several
// threads asking its const API at once (tests/support/concurrent_readers.hpp), every answer equal
// to the single-threaded one, which is pinned to concrete values. Run under ThreadSanitizer by CI
// (ctest -R ConstReaders).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/policies/fgd.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/gang_placement.hpp>
#include <hetsched/policies/grow_shrink.hpp>
#include <hetsched/policies/migration_planner.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

#include "support/concurrent_readers.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::IsOk;
using ::hetsched::testing::same_answers_concurrently;
using ::hetsched::testing::value_of;
using u32s = std::vector<std::uint32_t>;

// ---- Gang placer and affinity packer ---------------------------------------------------------

TEST(ConstReaders, GangPlacerAndPacker) {
  const gang_placer placer = gang_placer::make(
      cluster_builder("c").add_nodes(node_template::dgx_a100, 4, "n").racks(2).build().value());
  // n-0 has GPUs 2-7 free, n-1 all, n-2 0, 1, 4 and 5, n-3 none.
  const std::vector<u32s> free = {{2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 4, 5}, {}};
  const std::vector<gang_request> requests = {
      {1, 2, locality_sensitivity::consolidate, affinity_level::cluster, 0},
      {2, 4, locality_sensitivity::consolidate, affinity_level::rack, 0},
      {3, 8, locality_sensitivity::consolidate, affinity_level::cluster, 0},
      {3, 1, locality_sensitivity::spread, affinity_level::cluster, 0}};
  const pair_score_matrix dgx1 =
      pair_score_matrix::from_topology(make_node_template(node_template::dgx1_v100).value());
  const u32s all8 = {0, 1, 2, 3, 4, 5, 6, 7};
  struct answer {
    std::vector<std::optional<gang_placement>> placements;
    std::vector<std::optional<std::vector<std::int64_t>>> scores;
    std::vector<std::optional<packer_answer>> packed;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    for (const gang_request& r : requests) {
      out.placements.push_back(value_of(placer.place(free, r)));
      out.scores.push_back(value_of(placer.node_scores(free, r)));
    }
    for (std::size_t size = 1; size <= 8; ++size) {
      out.packed.push_back(value_of(allocate(dgx1, all8, {}, size, packer_mode::lexmax)));
      out.packed.push_back(value_of(allocate(dgx1, all8, {}, size, packer_mode::compat)));
    }
    return out;
  });
  ASSERT_EQ(got.placements.size(), 4u);
  // 1 x 2: best fit, n-2 (4 free; n-0's 6 would split a bigger block).
  ASSERT_TRUE(got.placements[0] && got.placements[0]->placed());
  EXPECT_EQ(got.placements[0]->tasks[0].node, node_id(2));
  // 3 x 8 needs 24 GPUs; 18 are free.
  ASSERT_TRUE(got.placements[2]);
  EXPECT_EQ(got.placements[2]->deferred, defer_reason::insufficient_capacity);
  // DGX-1V: size 4 is the quad {0,1,2,3} (block score 1080), size 2 the pair {2,3}.
  EXPECT_EQ(got.packed[2]->gpus, (u32s{2, 3}));
  EXPECT_EQ(got.packed[6]->gpus, (u32s{0, 1, 2, 3}));
  EXPECT_EQ(got.packed[6]->block_score, 1080);
}

// ---- Gandiva: reactive placement, migration and grow-shrink -----------------------------------

job_spec gpu_job(std::uint32_t id, std::uint32_t gpus, std::uint32_t tasks = 1, bool gang = true) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "job";
  spec.gang = gang;
  spec.preemptible = true;
  spec.roles.push_back(task_role{"worker", tasks, 0, 0, whole_gpus(gpus), {}});
  return spec;
}

// 4 workstation-4gpu servers (16 GPUs). Gandiva places and starts jobs 1 (2 GPUs), 2 (1),
// 3 (4) and 4 (1); elastic job 10 (3 tasks of 1 GPU, non-gang) runs task 0 on ws-3 GPU 0; jobs 5
// (2 GPUs) and 6 (4 GPUs) wait.
struct gandiva_bed {
  cluster_topology topology;
  cluster_state state;
  gandiva_reactive policy;

  gandiva_bed()
      : topology(cluster_builder("ws")
                     .add_nodes(node_template::workstation_4gpu, 4, "ws")
                     .build()
                     .value()),
        state(to_cluster(topology).value()),
        policy(state.cluster(), topology) {
    for (const job_spec& spec : {gpu_job(1, 2), gpu_job(2, 1), gpu_job(3, 4), gpu_job(4, 1)}) {
      queue(spec);
      const decision d = policy.place(state, spec.id).value();
      EXPECT_EQ(d.binds.size(), 1u);
      EXPECT_THAT(apply(state, d), IsOk());
      EXPECT_THAT(policy.commit(d), IsOk());
      EXPECT_THAT(record(state, spec.id, job_event::start), IsOk());
    }
    queue(gpu_job(10, 1, 3, false));
    const device_id gpu = state.cluster().device_at(node_id(3), 0).value();
    decision elastic;
    elastic.binds.push_back(binding{
        job_id(10), {task_placement{task_id(0), node_id(3), {device_share{gpu, 1000, 0}}}}});
    EXPECT_THAT(apply(state, elastic), IsOk());
    EXPECT_THAT(record(state, job_id(10), job_event::start), IsOk());
    EXPECT_THAT(policy.rebuild(state), IsOk());
    queue(gpu_job(5, 2));
    queue(gpu_job(6, 4));
  }

  void queue(const job_spec& spec) {
    EXPECT_THAT(state.submit(spec), IsOk());
    EXPECT_THAT(record(state, spec.id, job_event::enqueue), IsOk());
  }
};

TEST(ConstReaders, Gandiva) {
  const gandiva_bed bed;
  const migration_planner migrations(bed.state.cluster(), bed.topology);
  const grow_shrink_planner elastic(bed.state.cluster(), bed.topology);
  const std::vector<elastic_job> elastic_jobs = {{job_id(10), 1}};
  struct answer {
    std::optional<decision> job5;
    std::optional<decision> job6;
    std::vector<std::uint32_t> affinity;
    std::vector<std::uint32_t> free;
    std::optional<decision> migration;
    std::optional<grow_shrink_plan> grow;
    std::optional<grow_shrink_plan> shrink;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    out.job5 = value_of(bed.policy.place(bed.state, job_id(5)));
    out.job6 = value_of(bed.policy.place(bed.state, job_id(6)));
    for (std::uint32_t n = 0; n < 4; ++n) {
      out.affinity.push_back(bed.policy.affinity(node_id(n)));
      out.free.push_back(bed.policy.free_gpus(node_id(n)));
    }
    if (auto plan = migrations.plan(bed.state)) out.migration = to_decision(*plan);
    out.grow = value_of(elastic.plan(bed.state, elastic_jobs));
    out.shrink = value_of(elastic.plan(bed.state, elastic_jobs, {1, 1}));
    return out;
  });
  // ws-0 hosts job 1 (2 GPUs), ws-1 jobs 2 and 4 (1 each), ws-2 job 3 (4), ws-3 job 10 (1).
  EXPECT_EQ(got.free, (u32s{2, 2, 0, 3}));
  EXPECT_EQ(got.affinity, (u32s{2, 1, 4, 1}));
  // Job 5 (2 GPUs) joins job 1 on ws-0 (same affinity): devices 1 and 2. Job 6 (4 GPUs) finds no
  // empty server and time-slices with job 3 on ws-2 (stage 4: suspend job 3, bind 8-11).
  ASSERT_TRUE(got.job5 && got.job6);
  ASSERT_EQ(got.job5->binds.size(), 1u);
  EXPECT_EQ(got.job5->binds[0].tasks[0].node, node_id(0));
  ASSERT_EQ(got.job6->suspensions.size(), 1u);
  EXPECT_EQ(got.job6->suspensions[0].job, job_id(3));
  ASSERT_EQ(got.job6->binds.size(), 1u);
  EXPECT_EQ(got.job6->binds[0].tasks[0].node, node_id(2));
  // No server is fragmented enough to migrate; 7 free GPUs, 6 asked by jobs 5 and 6: no grow.
  ASSERT_TRUE(got.migration && got.grow && got.shrink);
  EXPECT_TRUE(got.migration->empty());
  EXPECT_EQ(got.grow->free_gpus, 7u);
  EXPECT_EQ(got.grow->waiting_gpus, 6u);
  EXPECT_TRUE(got.grow->grow.empty() && got.grow->shrink.empty());
}

// ---- FGD ----------------------------------------------------------------------------------

TEST(ConstReaders, FgdScores) {
  constexpr std::int64_t mem = 1 << 20;
  fgd_cluster c = fgd_cluster::make({{"a", 64000, mem, 8, "V100"},
                                     {"b", 64000, mem, 8, "V100"},
                                     {"c", 32000, mem, 4, "T4"},
                                     {"d", 96000, mem, 0, ""}})
                      .value();
  // a: two half GPUs and one whole GPU used; c: three quarter GPUs used.
  ASSERT_THAT(c.place(0, {4000, 0, 1, 500, ""}, u32s{0}), IsOk());
  ASSERT_THAT(c.place(0, {4000, 0, 1, 500, ""}, u32s{1}), IsOk());
  ASSERT_THAT(c.place(0, {8000, 0, 1, 1000, ""}, u32s{2}), IsOk());
  ASSERT_THAT(c.place(2, {2000, 0, 1, 750, ""}, u32s{0}), IsOk());
  ASSERT_THAT(c.place(2, {2000, 0, 1, 750, ""}, u32s{1}), IsOk());
  ASSERT_THAT(c.place(2, {2000, 0, 1, 750, ""}, u32s{2}), IsOk());
  const fgd_workload workload =
      fgd_workload_from_classes(
          {{4000, 500, 1, "", 6}, {8000, 1000, 1, "", 3}, {16000, 1000, 2, "", 1}}, 10)
          .value();
  const std::vector<fgd_task> tasks = {
      {4000, 0, 1, 500, ""}, {8000, 0, 1, 1000, ""}, {16000, 0, 4, 1000, ""}, {2000, 0, 0, 0, ""}};
  struct answer {
    std::vector<std::vector<std::optional<fgd_choice>>> scores;  // [policy * task][node]
    frag_breakdown fragmentation;
    bool operator==(const answer&) const = default;
  };
  const std::vector<fgd_scheduler> schedulers = {
      fgd_scheduler(fgd_policy::fgd, workload), fgd_scheduler(fgd_policy::best_fit, workload),
      fgd_scheduler(fgd_policy::dot_product, workload),
      fgd_scheduler(fgd_policy::gpu_packing, workload),
      fgd_scheduler(fgd_policy::gpu_clustering, workload)};
  const answer got = same_answers_concurrently([&] {
    answer out;
    for (const fgd_scheduler& s : schedulers) {
      for (const fgd_task& t : tasks) {
        auto& row = out.scores.emplace_back();
        for (std::size_t n = 0; n < c.size(); ++n) {
          row.push_back(c.fits(n, t) ? std::optional(s.score(c, n, t)) : std::nullopt);
        }
      }
    }
    out.fragmentation = cluster_fragmentation(c, workload);
    return out;
  });
  ASSERT_EQ(got.scores.size(), 20u);
  // FGD: the half-GPU task scores 54 on a (it shares a half-used GPU), 45 on b, 47 on c. The
  // 4-GPU task fits on a (GPUs 3-6) and b only; the CPU-only task everywhere.
  EXPECT_EQ(got.scores[0][0]->score, 54);
  EXPECT_EQ(got.scores[0][1]->score, 45);
  EXPECT_EQ(got.scores[0][2]->score, 47);
  ASSERT_TRUE(got.scores[2][0].has_value());
  EXPECT_EQ(got.scores[2][0]->gpus, (u32s{3, 4, 5, 6}));
  EXPECT_FALSE(got.scores[2][2].has_value());
  EXPECT_FALSE(got.scores[2][3].has_value());
  EXPECT_TRUE(got.scores[3][3].has_value());
}

// ---- cluster_state and the topology views ---------------------------------------------------

TEST(ConstReaders, ClusterStateChecks) {
  const gandiva_bed bed;
  const cluster_state& state = bed.state;
  const device_id held = state.cluster().device_at(node_id(3), 0).value();
  const device_id spare = state.cluster().device_at(node_id(3), 1).value();
  // Job 5 (2 GPUs) onto ws-3's GPU 0 (held by job 10) and 1: refused; job 2's GPUs are fine.
  decision clash;
  clash.binds.push_back(binding{
      job_id(5), {task_placement{task_id(0), node_id(3), {{held, 1000, 0}, {spare, 1000, 0}}}}});
  struct answer {
    std::optional<error> clash_error;
    std::vector<std::optional<job_status>> statuses;
    std::vector<resource_vector> node_free;
    std::vector<std::int64_t> device_free;
    std::size_t jobs = 0;
    std::size_t placed_tasks = 0;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    if (auto r = check_decision(state, clash); !r) out.clash_error = r.error();
    for (const auto& entry : state.jobs()) {
      const job_id id = entry.first;
      out.statuses.push_back(value_of(state.status(id)));
    }
    for (std::uint32_t n = 0; n < state.cluster().node_count(); ++n) {
      out.node_free.push_back(state.node_free(node_id(n)));
    }
    for (std::uint32_t d = 0; d < state.cluster().device_count(); ++d) {
      out.device_free.push_back(state.device_free(device_id(d)).milli_gpu);
    }
    out.jobs = state.jobs().size();
    out.placed_tasks =
        value_of(state.placement(job_id(10))).value_or(std::span<const task_placement>()).size();
    return out;
  });
  ASSERT_TRUE(got.clash_error);
  EXPECT_EQ(got.clash_error->code, errc::failed_precondition);
  EXPECT_EQ(got.clash_error->message,
            "bind of job 5 task 0: device 12 has 0 milli-GPU free, needs 1000");
  EXPECT_EQ(got.jobs, 7u);
  EXPECT_EQ(got.device_free[12], 0);
  EXPECT_EQ(got.device_free[13], 1000);
  EXPECT_EQ(got.placed_tasks, 3u);  // one entry per task of job 10
}

TEST(ConstReaders, TopologyViews) {
  const node_topology dgx2 = make_node_template(node_template::dgx2).value();
  const cluster_topology cluster = make_builtin_cluster("demo").value();
  struct answer {
    std::vector<std::string> relations;
    std::vector<std::int64_t> bandwidths;
    std::vector<std::int32_t> numa;
    std::size_t groups = 0;
    pair_score_matrix scores;
    std::vector<int> levels;
    std::vector<std::uint32_t> common;
    std::uint32_t found = 0;
    bool operator==(const answer&) const = default;
  };
  const answer got = same_answers_concurrently([&] {
    answer out;
    const node_views& v = dgx2.views();
    for (std::size_t i = 0; i < v.gpu_count(); ++i) {
      for (std::size_t j = 0; j < v.gpu_count(); ++j) {
        out.relations.push_back(v.relation(i, j).token());
        out.bandwidths.push_back(v.bandwidth_mb_s(i, j) + v.nccl_bandwidth_mb_s(i, j));
      }
      out.numa.push_back(v.gpu_numa(i));
    }
    out.groups = v.affinity_groups().size();
    out.scores = pair_score_matrix::from_views(v);
    for (std::uint32_t gpu = 0; gpu < cluster.gpu_count(); gpu += 7) {
      out.levels.push_back(static_cast<int>(cluster.level_between(device_id(0), device_id(gpu))));
      out.common.push_back(cluster.node_of_gpu(device_id(gpu)).value());
    }
    out.found = value_of(cluster.find_node(cluster.node(node_id(5)).name))
                    .value_or(node_id::invalid())
                    .value();
    return out;
  });
  ASSERT_EQ(got.relations.size(), 256u);
  EXPECT_EQ(got.relations[1], "NV6");
  EXPECT_EQ(got.found, 5u);
}

}  // namespace
}  // namespace hetsched
