// SPDX-License-Identifier: MIT
// Tests for hetsched/policies/grow_shrink.hpp: growing elastic jobs round-robin onto free GPUs
// (own servers first), the reserve, shrinking when jobs wait, decisions, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/grow_shrink.hpp>

#include "gandiva_test_support.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::gandiva_testing::bed;
using ::hetsched::gandiva_testing::ids;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

using u32s = std::vector<std::uint32_t>;

// Submits elastic job `id` (non-gang, preemptible, `tasks` tasks of `gpus` GPUs) and binds its
// task 0 onto `locals` of `node`.
void run_elastic(bed& b, std::uint32_t id, std::uint32_t tasks, std::uint32_t gpus,
                 std::uint32_t node, std::vector<std::uint32_t> locals) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "elastic";
  spec.gang = false;
  spec.preemptible = true;
  spec.roles.push_back(task_role{"w", tasks, 0, 0, whole_gpus(gpus), {}});
  ASSERT_THAT(b.state.submit(spec), IsOk());
  ASSERT_THAT(record(b.state, spec.id, job_event::enqueue), IsOk());
  task_placement p{task_id(0), node_id(node), {}};
  for (std::uint32_t k : locals) p.devices.push_back(device_share{b.dev(node, k), 1000, 0});
  decision d;
  d.binds.push_back(binding{spec.id, {p}});
  ASSERT_THAT(apply(b.state, d), IsOk());
  ASSERT_THAT(record(b.state, spec.id, job_event::start), IsOk());
}

void queue_gang(bed& b, std::uint32_t id, std::uint32_t tasks, std::uint32_t gpus) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = "waiting";
  spec.roles.push_back(task_role{"w", tasks, 0, 0, whole_gpus(gpus), {}});
  ASSERT_THAT(b.state.submit(spec), IsOk());
  ASSERT_THAT(record(b.state, spec.id, job_event::enqueue), IsOk());
}

TEST(GandivaGrowShrink, GrowsOntoItsOwnServerFirstThenBestFit) {
  bed b = bed::workstations();
  run_elastic(b, 1, 4, 1, 0, {0});
  b.run(2, {{0, {1}}});
  b.run(3, {{2, {0}}});
  const grow_shrink_planner planner(b.state.cluster(), b.topology);
  const std::vector<elastic_job> elastic{{job_id(1), 1}};
  const auto plan = planner.plan(b.state, elastic);
  ASSERT_THAT(plan, IsOk());
  // Free: s0 2 (local 2, 3), s1 4, s2 3, s3 4 = 13. Tasks 1 and 2 fill s0 (devices 2, 3); task 3
  // goes to the server with the fewest free GPUs: s2 (3 free: local 1, 2, 3); the packer's
  // least-damage single GPU keeps the NVLink pair (1,2) whole: local 3 = device 11.
  EXPECT_EQ(plan->free_gpus, 13u);
  EXPECT_EQ(plan->waiting_gpus, 0u);
  ASSERT_EQ(plan->grow.size(), 1u);
  ASSERT_EQ(plan->grow[0].tasks.size(), 3u);
  EXPECT_EQ(plan->grow[0].tasks[0].task, task_id(1));
  EXPECT_EQ(ids(plan->grow[0].tasks[0]), (u32s{2}));
  EXPECT_EQ(ids(plan->grow[0].tasks[1]), (u32s{3}));
  EXPECT_EQ(plan->grow[0].tasks[2].node, node_id(2));
  EXPECT_EQ(ids(plan->grow[0].tasks[2]), (u32s{11}));
  EXPECT_EQ(plan->offered_gpus, 3u);
  const decision d = to_decision(*plan);
  EXPECT_THAT(check_decision(b.state, d), IsOk());
  ASSERT_THAT(apply(b.state, d), IsOk());
}

TEST(GandivaGrowShrink, SharesIdleGpusRoundRobinAndKeepsTheReserve) {
  bed b = bed::workstations();
  run_elastic(b, 1, 8, 2, 0, {0, 3});
  run_elastic(b, 2, 8, 2, 1, {0, 3});
  const grow_shrink_planner planner(b.state.cluster(), b.topology);
  const std::vector<elastic_job> elastic{{job_id(2), 1}, {job_id(1), 1}};
  grow_shrink_params params;
  params.reserve_gpus = 6;
  const auto plan = planner.plan(b.state, elastic, params);
  ASSERT_THAT(plan, IsOk());
  // 12 free, 6 kept back: 3 two-GPU tasks. Job 1 (lower id on a tie) takes s0's pair (1,2),
  // job 2 s1's pair (1,2), then job 1 again on the emptiest-fit server: s2 (4 free, lower id
  // than s3), its NVLink pair (0,3) = devices 8, 11.
  EXPECT_EQ(plan->offered_gpus, 6u);
  ASSERT_EQ(plan->grow.size(), 2u);
  EXPECT_EQ(plan->grow[0].job, job_id(1));
  ASSERT_EQ(plan->grow[0].tasks.size(), 2u);
  EXPECT_EQ(ids(plan->grow[0].tasks[0]), (u32s{1, 2}));
  EXPECT_EQ(ids(plan->grow[0].tasks[1]), (u32s{8, 11}));
  EXPECT_EQ(plan->grow[1].job, job_id(2));
  EXPECT_EQ(ids(plan->grow[1].tasks.at(0)), (u32s{5, 6}));
  EXPECT_THAT(check_decision(b.state, to_decision(*plan)), IsOk());
  params.reserve_gpus = 0;
  params.max_grow_tasks = 1;
  const auto one = planner.plan(b.state, elastic, params);
  ASSERT_THAT(one, IsOk());
  EXPECT_EQ(one->offered_gpus, 2u);
}

TEST(GandivaGrowShrink, ShrinksTheMostGrownJobWhenJobsWait) {
  bed b = bed::workstations();
  run_elastic(b, 1, 4, 1, 0, {0});
  const grow_shrink_planner planner(b.state.cluster(), b.topology);
  const std::vector<elastic_job> elastic{{job_id(1), 1}};
  const auto grow = planner.plan(b.state, elastic);
  ASSERT_THAT(grow, IsOk());
  ASSERT_THAT(apply(b.state, to_decision(*grow)), IsOk());
  EXPECT_EQ(grow->offered_gpus, 3u);  // tasks 1-3 on s0: 12 GPUs stay free
  // A gang of 3 x 4 GPUs waits: 12 wanted, 12 free: nothing to take back.
  queue_gang(b, 5, 3, 4);
  auto plan = planner.plan(b.state, elastic);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->waiting_gpus, 12u);
  EXPECT_TRUE(plan->shrink.empty());
  EXPECT_TRUE(plan->grow.empty());
  // One more 2-GPU job waits: 14 wanted, 12 free: tasks 3 and 2 go back.
  queue_gang(b, 6, 1, 2);
  plan = planner.plan(b.state, elastic);
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->shrink.size(), 1u);
  EXPECT_EQ(plan->shrink[0].job, job_id(1));
  EXPECT_EQ(plan->shrink[0].tasks, (std::vector<task_id>{task_id(3), task_id(2)}));
  EXPECT_EQ(plan->reclaimed_gpus, 2u);
  const decision d = to_decision(*plan);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].reason, "shrink: give back tasks 3 2");
  EXPECT_THAT(check_decision(b.state, d), IsOk());
}

TEST(GandivaGrowShrink, GrowsOnTheBestNvlinkPairsOfADgx1) {
  bed b = bed::of(node_template::dgx1_v100, 1);
  run_elastic(b, 1, 3, 2, 0, {0, 3});
  b.run(2, {{0, {1, 2}}});
  const grow_shrink_planner planner(b.state.cluster(), b.topology);
  const std::vector<elastic_job> elastic{{job_id(1), 1}};
  const auto plan = planner.plan(b.state, elastic);
  ASSERT_THAT(plan, IsOk());
  // Free 4-7: the best partition {4,7} + {5,6}; task 1 takes {4,7}, task 2 then {5,6}.
  ASSERT_EQ(plan->grow.size(), 1u);
  ASSERT_EQ(plan->grow[0].tasks.size(), 2u);
  EXPECT_EQ(ids(plan->grow[0].tasks[0]), (u32s{4, 7}));
  EXPECT_EQ(ids(plan->grow[0].tasks[1]), (u32s{5, 6}));
  EXPECT_THAT(check_decision(b.state, to_decision(*plan)), IsOk());
}

TEST(GandivaGrowShrink, RejectsBadElasticEntries) {
  bed b = bed::workstations();
  run_elastic(b, 1, 4, 1, 0, {0});
  b.run(2, {{1, {0}}});  // a gang job
  const grow_shrink_planner planner(b.state.cluster(), b.topology);
  EXPECT_THAT(planner.plan(b.state, std::vector<elastic_job>{{job_id(9), 1}}),
              HasErrc(errc::not_found));
  EXPECT_THAT(planner.plan(b.state, std::vector<elastic_job>{{job_id(2), 1}}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(planner.plan(b.state, std::vector<elastic_job>{{job_id(1), 0}}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(planner.plan(b.state, std::vector<elastic_job>{{job_id(1), 5}}),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(planner.plan(b.state, std::vector<elastic_job>{{job_id(1), 1}, {job_id(1), 2}}),
              HasErrc(errc::invalid_argument));
  const bed other = bed::of(node_template::dgx_a100, 1);
  EXPECT_THAT(planner.plan(other.state, {}), HasErrc(errc::invalid_argument));
}

}  // namespace
}  // namespace hetsched
