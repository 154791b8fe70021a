// SPDX-License-Identifier: MIT
// Tests for hetsched/policies/migration_planner.hpp: defragmentation order and threshold, gang
// consolidation, device choice on workstation, DGX-1 and DGX A100 servers, decisions that pass
// check_decision, limits, errors and determinism.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/migration_planner.hpp>
#include <hetsched/topology/cluster_builder.hpp>

#include "gandiva_test_support.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::gandiva_testing::bed;
using ::hetsched::gandiva_testing::ids;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

using u32s = std::vector<std::uint32_t>;

// Applies the plan's decision after checking it.
void apply_plan(cluster_state& state, const migration_plan& plan) {
  const decision d = to_decision(plan);
  EXPECT_THAT(check_decision(state, d), IsOk());
  EXPECT_THAT(apply(state, d), IsOk());
}

// s0: job 1 (1 GPU); s1: job 2 (2 GPUs on the NVLink pair 0,3) and job 3 (1 GPU); s2: job 4
// (1 GPU); s3 idle. Free GPUs 3, 1, 3, 4; fragmented 3 + 1 + 3 = 7.
bed fragmented_workstations() {
  bed b = bed::workstations();
  b.run(1, {{0, {0}}});
  b.run(2, {{1, {0, 3}}});
  b.run(3, {{1, {1}}});
  b.run(4, {{2, {0}}});
  return b;
}

TEST(MigrationPlanner, EmptiesTheServerWithMostFreeGpusIntoOneWithFewer) {
  bed b = fragmented_workstations();
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state);
  ASSERT_THAT(plan, IsOk());
  // Sources by free GPUs: s0 (3), s2 (3), s1 (1). s0's job 1 goes to s1 (1 free < 3): its last
  // free GPU, local 2 = device 6. Then s2's job 4 finds no server with 1..2 free GPUs.
  ASSERT_EQ(plan->moves.size(), 1u);
  const migration_move& m = plan->moves[0];
  EXPECT_EQ(m.job, job_id(1));
  EXPECT_EQ(m.kind, move_kind::defragment);
  EXPECT_EQ(m.target, node_id(1));
  EXPECT_EQ(ids(m.from.at(0)), (u32s{0}));
  EXPECT_EQ(ids(m.to.at(0)), (u32s{6}));
  EXPECT_EQ(m.gpus, 1u);
  EXPECT_EQ(m.span_before, 1u);
  EXPECT_EQ(m.span_after, 1u);
  EXPECT_EQ(m.idle_server_gpus, 4u);
  EXPECT_EQ(m.cost_s, 30);
  EXPECT_EQ(m.cost_gpu_s, 30);
  // Fragmented after: s1 0 + s2 3 = 3 (>= 3/4 of 4 GPUs, so it stopped for lack of benefit).
  EXPECT_EQ(plan->fragmented_before, 7u);
  EXPECT_EQ(plan->fragmented_after, 3u);
  EXPECT_EQ(plan->server_gpus, 4u);
  EXPECT_EQ(plan->servers_emptied, 1u);
  EXPECT_EQ(plan->total_cost_gpu_s, 30);
  EXPECT_EQ(plan->stop, migration_stop::no_benefit);
  apply_plan(b.state, *plan);
  EXPECT_EQ(b.state.device_used(b.dev(0, 0)).holders.size(), 0u);
  EXPECT_EQ(b.state.device_used(device_id(6)).holders.at(0).job, job_id(1));
}

TEST(MigrationPlanner, StopsBelowTheThreshold) {
  bed b = fragmented_workstations();
  const migration_planner planner(b.state.cluster(), b.topology);
  migration_params params;
  params.threshold_num = 1;  // a whole server: 4 free GPUs
  params.threshold_den = 1;
  params.checkpoint_restore_s = 12;
  const auto plan = planner.plan(b.state, params);
  ASSERT_THAT(plan, IsOk());
  // After emptying s0, 3 fragmented GPUs < 4: stop.
  ASSERT_EQ(plan->moves.size(), 1u);
  EXPECT_EQ(plan->moves[0].cost_gpu_s, 12);
  EXPECT_EQ(plan->stop, migration_stop::below_threshold);
  // A threshold of 8/1 (two servers) is below before any move.
  params.threshold_num = 8;
  const auto none = planner.plan(b.state, params);
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->moves.empty());
  EXPECT_EQ(none->stop, migration_stop::below_threshold);
  EXPECT_EQ(none->fragmented_after, 7u);
}

TEST(MigrationPlanner, StopsAtTheMoveLimit) {
  bed b = fragmented_workstations();
  // Cordon s1: it can no longer receive job 1, so s0 cannot be emptied.
  ASSERT_THAT(b.state.set_node_health(node_id(1), health::cordoned), IsOk());
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto cordoned = planner.plan(b.state);
  ASSERT_THAT(cordoned, IsOk());
  // Fragmented: s0 3 + s2 3 (s1 is not healthy) = 6; s0 and s2 need a server with 1..2 free.
  EXPECT_EQ(cordoned->fragmented_before, 6u);
  EXPECT_TRUE(cordoned->moves.empty());
  EXPECT_EQ(cordoned->stop, migration_stop::no_benefit);
  ASSERT_THAT(b.state.set_node_health(node_id(1), health::healthy), IsOk());
  migration_params params;
  params.max_moves = 1;
  const auto plan = planner.plan(b.state, params);
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->moves.size(), 1u);
  EXPECT_EQ(plan->stop, migration_stop::move_limit);
}

TEST(MigrationPlanner, EvacuatesSeveralJobsLargestFirst) {
  bed b = bed::workstations();
  // s0: jobs 1 and 2 (1 GPU each), free 2. s1: job 3 (2 GPUs, 1 and 2), free 2... make s1 fuller:
  // s1: job 3 (2 GPUs 1,2) + job 4 (1 GPU 0): free 1. s2: job 5 (2 GPUs 0,3): free 2.
  b.run(1, {{0, {0}}});
  b.run(2, {{0, {1}}});
  b.run(3, {{1, {1, 2}}});
  b.run(4, {{1, {0}}});
  b.run(5, {{2, {0, 3}}});
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state);
  ASSERT_THAT(plan, IsOk());
  // Fragmented 2 + 1 + 2 = 5. Sources: s0 (2), s2 (2), s1 (1). s0: job 1 then job 2 (1 GPU each,
  // lower id first) need servers with exactly 1 free GPU: s1 takes job 1 (device 7), then s1 is
  // full and s2 has 2 free (not < 2): the evacuation of s0 is undone. s2: job 5 (2 GPUs) needs
  // 2 <= free < 2: none. s1 (1 free): job 3 and 4 need servers with < 1 free: none.
  EXPECT_TRUE(plan->moves.empty());
  EXPECT_EQ(plan->stop, migration_stop::no_benefit);
  EXPECT_EQ(plan->fragmented_after, 5u);

  // With s2 holding a 3-GPU job instead (free 1), s0 empties: job 1 -> s1 (device 7), job 2 ->
  // s2 (its free GPU, local 3 = device 11).
  bed c = bed::workstations();
  c.run(1, {{0, {0}}});
  c.run(2, {{0, {1}}});
  c.run(3, {{1, {1, 2}}});
  c.run(4, {{1, {0}}});
  c.run(5, {{2, {0, 1, 2}}});
  const auto plan2 = migration_planner(c.state.cluster(), c.topology).plan(c.state);
  ASSERT_THAT(plan2, IsOk());
  ASSERT_EQ(plan2->moves.size(), 2u);
  EXPECT_EQ(plan2->moves[0].job, job_id(1));
  EXPECT_EQ(ids(plan2->moves[0].to.at(0)), (u32s{7}));
  EXPECT_EQ(plan2->moves[0].idle_server_gpus, 0u);
  EXPECT_EQ(plan2->moves[1].job, job_id(2));
  EXPECT_EQ(ids(plan2->moves[1].to.at(0)), (u32s{11}));
  EXPECT_EQ(plan2->moves[1].idle_server_gpus, 4u);
  EXPECT_EQ(plan2->fragmented_after, 0u);
  EXPECT_EQ(plan2->stop, migration_stop::below_threshold);
  apply_plan(c.state, *plan2);
}

TEST(MigrationPlanner, ConsolidatesAGangOntoTheServerHoldingMostOfIt) {
  bed b = bed::workstations();
  // Job 5: task 0 on s0 (local 0), task 1 on s1 (local 1). Job 7 on s1 (local 0, 3).
  b.run(5, {{0, {0}}, {1, {1}}});
  b.run(7, {{1, {0, 3}}});
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state);
  ASSERT_THAT(plan, IsOk());
  // Both servers hold 1 GPU of job 5; s1 has fewer free GPUs (1 vs 3): task 0 moves to s1's
  // last free GPU, local 2 = device 6; s0 becomes idle. Then nothing is fragmented.
  ASSERT_EQ(plan->moves.size(), 1u);
  const migration_move& m = plan->moves[0];
  EXPECT_EQ(m.job, job_id(5));
  EXPECT_EQ(m.kind, move_kind::consolidate);
  EXPECT_EQ(m.target, node_id(1));
  ASSERT_EQ(m.to.size(), 1u);
  EXPECT_EQ(m.to[0].task, task_id(0));
  EXPECT_EQ(ids(m.to[0]), (u32s{6}));
  EXPECT_EQ(m.span_before, 2u);
  EXPECT_EQ(m.span_after, 1u);
  EXPECT_EQ(m.idle_server_gpus, 4u);
  EXPECT_EQ(m.cost_gpu_s, 60);  // 30 s x 2 GPUs
  EXPECT_EQ(plan->fragmented_before, 3u + 1u);
  EXPECT_EQ(plan->fragmented_after, 0u);
  EXPECT_EQ(plan->stop, migration_stop::below_threshold);
  apply_plan(b.state, *plan);
  EXPECT_EQ(b.state.find_job(job_id(5))->placement[0].node, node_id(1));
}

TEST(MigrationPlanner, ConsolidatesOntoAnotherServerOnItsNvlinkPairs) {
  bed b = bed::workstations();
  // Job 1: 2 x 2 GPUs on s0 (0,3) and s1 (0,3); jobs 2 and 3 fill s0 and s1 (1,2).
  b.run(1, {{0, {0, 3}}, {1, {0, 3}}});
  b.run(2, {{0, {1, 2}}});
  b.run(3, {{1, {1, 2}}});
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state);
  ASSERT_THAT(plan, IsOk());
  // No own server has room; s2 and s3 are empty (4 free): s2 (lower id). Task 0 takes the
  // NVLink pair (0,3) = devices 8, 11; task 1 the pair (1,2) = devices 9, 10.
  ASSERT_GE(plan->moves.size(), 1u);
  const migration_move& m = plan->moves[0];
  EXPECT_EQ(m.kind, move_kind::consolidate);
  EXPECT_EQ(m.target, node_id(2));
  ASSERT_EQ(m.to.size(), 2u);
  EXPECT_EQ(ids(m.to[0]), (u32s{8, 11}));
  EXPECT_EQ(ids(m.to[1]), (u32s{9, 10}));
  EXPECT_EQ(m.gpus, 4u);
  EXPECT_EQ(m.span_before, 2u);
  EXPECT_EQ(m.span_after, 1u);
  EXPECT_EQ(m.idle_server_gpus, 0u);
  EXPECT_EQ(m.cost_gpu_s, 120);
  // Then s0 and s1 have 2 free each (4 fragmented) but jobs 2 and 3 need 2 <= free < 2: stop.
  EXPECT_EQ(plan->moves.size(), 1u);
  EXPECT_EQ(plan->fragmented_after, 4u);
  EXPECT_EQ(plan->stop, migration_stop::no_benefit);
  apply_plan(b.state, *plan);
  // Without consolidation, nothing moves.
  migration_params params;
  params.consolidate_gangs = false;
  bed c = bed::workstations();
  c.run(1, {{0, {0, 3}}, {1, {0, 3}}});
  c.run(2, {{0, {1, 2}}});
  c.run(3, {{1, {1, 2}}});
  const auto plan2 = migration_planner(c.state.cluster(), c.topology).plan(c.state, params);
  ASSERT_THAT(plan2, IsOk());
  EXPECT_TRUE(plan2->moves.empty());
}

TEST(MigrationPlanner, LeavesServersWithUnmovableJobs) {
  bed b = bed::workstations();
  b.run(1, {{0, {0}}}, /*preemptible=*/false);
  b.run(2, {{1, {0, 1, 2}}});
  migration_params params;
  params.require_preemptible = true;
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state, params);
  ASSERT_THAT(plan, IsOk());
  // s0 (3 free) holds non-preemptible job 1: not a source. s1 (1 free): no server with < 1.
  EXPECT_TRUE(plan->moves.empty());
  EXPECT_EQ(plan->stop, migration_stop::no_benefit);
  // Allowing every job: job 1 moves to s1's device 7.
  const auto plan2 = planner.plan(b.state);
  ASSERT_THAT(plan2, IsOk());
  ASSERT_EQ(plan2->moves.size(), 1u);
  EXPECT_EQ(ids(plan2->moves[0].to.at(0)), (u32s{7}));
}

TEST(MigrationPlanner, HonoursTheMoveLimitPerServer) {
  bed b = bed::workstations();
  b.run(1, {{0, {0}}});
  b.run(2, {{0, {1}}});
  b.run(3, {{1, {0, 1, 2}}});
  b.run(4, {{2, {0, 1, 2}}});
  migration_params params;
  params.max_moves = 1;
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state, params);
  ASSERT_THAT(plan, IsOk());
  // Emptying s0 takes 2 moves > 1: skipped; s1 and s2 (1 free) cannot be emptied.
  EXPECT_TRUE(plan->moves.empty());
  params.max_moves = 2;
  const auto plan2 = planner.plan(b.state, params);
  ASSERT_THAT(plan2, IsOk());
  ASSERT_EQ(plan2->moves.size(), 2u);
  EXPECT_EQ(plan2->moves[0].target, node_id(1));
  EXPECT_EQ(plan2->moves[1].target, node_id(2));
  EXPECT_EQ(plan2->stop, migration_stop::below_threshold);
}

TEST(MigrationPlanner, PicksTheBestNvlinkPairOnADgx1) {
  bed b = bed::of(node_template::dgx1_v100, 2);
  // n0: a 4-GPU job on 0-3 (free 4-7); n1: a 2-GPU job on 0,1 (free 6). Fragmented 10 >= 6.
  b.run(1, {{0, {0, 1, 2, 3}}});
  b.run(2, {{1, {0, 1}}});
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state);
  ASSERT_THAT(plan, IsOk());
  // Job 2 moves to n0. Pair scores among 4-7: 4-5 150, 4-6 120, 4-7 220, 5-6 220, 5-7 120,
  // 6-7 250; the best partition {4,7}+{5,6} (440), first block {4,7}: devices 4 and 7.
  ASSERT_EQ(plan->moves.size(), 1u);
  EXPECT_EQ(ids(plan->moves[0].to.at(0)), (u32s{4, 7}));
  EXPECT_EQ(plan->moves[0].idle_server_gpus, 8u);
  EXPECT_EQ(plan->fragmented_after, 2u);
  EXPECT_EQ(plan->stop, migration_stop::below_threshold);
  apply_plan(b.state, *plan);
}

TEST(MigrationPlanner, DefragmentsDgxA100Servers) {
  bed b = bed::of(node_template::dgx_a100, 3);
  // n0: 4-GPU job (0-3) and 1-GPU job (4): free 3. n1: 1-GPU job (0): free 7. n2: 8-GPU job.
  b.run(1, {{0, {0, 1, 2, 3}}});
  b.run(2, {{0, {4}}});
  b.run(3, {{1, {0}}});
  b.run(4, {{2, {0, 1, 2, 3, 4, 5, 6, 7}}});
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state);
  ASSERT_THAT(plan, IsOk());
  // Fragmented 3 + 7 = 10 >= 6: n1 (7 free) empties into n0 (3 free); NVSwitch makes every GPU
  // equal, so the lowest free one, local 5 = device 5.
  ASSERT_EQ(plan->moves.size(), 1u);
  EXPECT_EQ(plan->moves[0].job, job_id(3));
  EXPECT_EQ(ids(plan->moves[0].to.at(0)), (u32s{5}));
  EXPECT_EQ(plan->fragmented_before, 10u);
  EXPECT_EQ(plan->fragmented_after, 2u);
  EXPECT_EQ(plan->servers_emptied, 1u);
  apply_plan(b.state, *plan);
}

TEST(MigrationPlanner, PlansValidDeterministicDecisionsAfterReactivePlacement) {
  bed b = bed::workstations();
  gandiva_reactive reactive(b.state.cluster(), b.topology);
  const std::uint32_t sizes[] = {1, 2, 1, 1, 2, 1, 4, 1, 2, 1};
  for (std::uint32_t j = 1; j <= 10; ++j) {
    job_spec spec;
    spec.id = job_id(j);
    spec.name = "job";
    spec.preemptible = true;
    spec.roles.push_back(task_role{"w", 1, 0, 0, whole_gpus(sizes[j - 1]), {}});
    ASSERT_THAT(b.state.submit(spec), IsOk());
    ASSERT_THAT(record(b.state, spec.id, job_event::enqueue), IsOk());
    const decision d = reactive.place(b.state, spec.id).value();
    ASSERT_THAT(apply(b.state, d), IsOk());
    ASSERT_THAT(reactive.commit(d), IsOk());
    if (!d.binds.empty()) {
      ASSERT_THAT(record(b.state, spec.id, job_event::start), IsOk());
    }
  }
  // Jobs 1, 3, 8 finish: holes appear.
  for (std::uint32_t j : {1u, 3u, 8u})
    ASSERT_THAT(record(b.state, job_id(j), job_event::succeed), IsOk());
  const migration_planner planner(b.state.cluster(), b.topology);
  const auto plan = planner.plan(b.state);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(planner.plan(b.state).value(), *plan);
  EXPECT_LE(plan->fragmented_after, plan->fragmented_before);
  apply_plan(b.state, *plan);
  // A second plan on the result moves nothing it already could.
  const auto again = planner.plan(b.state);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->fragmented_before, plan->fragmented_after);
}

TEST(MigrationPlanner, RandomStatesGiveValidImprovingPlans) {
  // 40 seeded states on 4 DGX-1 + 4 workstation servers: reactive placement of 1-8 GPU jobs,
  // some finished; every plan passes check_decision, never adds fragmentation, empties what it
  // says, and planning the result again starts from the plan's fragmentation.
  std::uint64_t seed = 12345;
  const auto next = [&seed](std::uint32_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>((seed >> 33) % bound);
  };
  std::size_t total_moves = 0;
  for (int round = 0; round < 40; ++round) {
    bed b(cluster_builder("mix")
              .add_nodes(node_template::dgx1_v100, 4, "dgx")
              .add_nodes(node_template::workstation_4gpu, 4, "ws")
              .build()
              .value());
    gandiva_reactive reactive(b.state.cluster(), b.topology);
    const std::uint32_t sizes[] = {1, 1, 2, 4, 8};
    for (std::uint32_t j = 1; j <= 24; ++j) {
      job_spec spec;
      spec.id = job_id(j);
      spec.name = "job";
      spec.preemptible = true;
      spec.roles.push_back(task_role{"w", 1, 0, 0, whole_gpus(sizes[next(5)]), {}});
      ASSERT_THAT(b.state.submit(spec), IsOk());
      ASSERT_THAT(record(b.state, spec.id, job_event::enqueue), IsOk());
      const decision d = reactive.place(b.state, spec.id).value();
      ASSERT_THAT(apply(b.state, d), IsOk());
      ASSERT_THAT(reactive.commit(d), IsOk());
      if (!d.binds.empty()) {
        ASSERT_THAT(record(b.state, spec.id, job_event::start), IsOk());
      }
    }
    for (std::uint32_t j = 1; j <= 24; ++j) {
      const job_state st = b.state.find_job(job_id(j))->status.state;
      if (st == job_state::running && next(3) == 0) {
        ASSERT_THAT(record(b.state, job_id(j), job_event::succeed), IsOk());
      }
    }
    const migration_planner planner(b.state.cluster(), b.topology);
    const auto plan = planner.plan(b.state);
    ASSERT_THAT(plan, IsOk());
    EXPECT_EQ(planner.plan(b.state).value(), *plan);
    EXPECT_LE(plan->fragmented_after, plan->fragmented_before) << "round " << round;
    std::uint32_t idle = 0;
    for (const migration_move& m : plan->moves) {
      EXPECT_EQ(m.kind, move_kind::defragment);
      EXPECT_EQ(m.from.size(), m.to.size());
      if (m.idle_server_gpus > 0) ++idle;
    }
    EXPECT_EQ(idle, plan->servers_emptied);
    total_moves += plan->moves.size();
    // The reactive indices follow the migrations (commit) exactly as a rebuild sees them.
    ASSERT_THAT(reactive.rebuild(b.state), IsOk());
    apply_plan(b.state, *plan);
    gandiva_reactive committed = reactive;
    ASSERT_THAT(committed.commit(to_decision(*plan)), IsOk());
    gandiva_reactive rebuilt = reactive;
    ASSERT_THAT(rebuilt.rebuild(b.state), IsOk());
    EXPECT_TRUE(committed == rebuilt) << "round " << round;
    const auto again = planner.plan(b.state);
    ASSERT_THAT(again, IsOk());
    EXPECT_EQ(again->fragmented_before, plan->fragmented_after) << "round " << round;
  }
  EXPECT_GT(total_moves, 20u);
}

TEST(MigrationPlanner, RejectsBadParametersAndForeignStates) {
  bed b = bed::workstations();
  const migration_planner planner(b.state.cluster(), b.topology);
  migration_params params;
  params.threshold_den = 0;
  EXPECT_THAT(planner.plan(b.state, params), HasErrc(errc::invalid_argument));
  params = {};
  params.checkpoint_restore_s = -1;
  EXPECT_THAT(planner.plan(b.state, params), HasErrc(errc::invalid_argument));
  bed other = bed::of(node_template::dgx_a100, 1);
  EXPECT_THAT(planner.plan(other.state), HasErrc(errc::invalid_argument));
  EXPECT_EQ(to_string(migration_stop::move_limit), "move_limit");
  EXPECT_EQ(to_string(move_kind::consolidate), "consolidate");
}

}  // namespace
}  // namespace hetsched
