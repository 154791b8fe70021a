// SPDX-License-Identifier: MIT
// Tests for hetsched/policies/grow_shrink.hpp: growing elastic jobs round-robin onto free GPUs
// (own servers first), the reserve, shrinking when jobs wait, decisions, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/gandiva.hpp>
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
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_TRUE(d.binds.empty());
  ASSERT_EQ(d.releases.size(), 1u);
  EXPECT_EQ(d.releases[0],
            (partial_release{job_id(1), std::vector<task_id>{task_id(3), task_id(2)}}));
  // Job 1's base task 0 and optional task 1 keep running where they are.
  const auto held = b.state.placement(job_id(1)).value();
  const std::vector<task_placement> before(held.begin(), held.end());
  ASSERT_THAT(apply(b.state, d), IsOk());
  EXPECT_EQ(b.state.status(job_id(1)).value().state, job_state::running);
  const auto after = b.state.placement(job_id(1)).value();
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[1], before[1]);
  EXPECT_FALSE(after[2].node.valid());
  EXPECT_FALSE(after[3].node.valid());
  // The freed GPUs go to the waiting 2-GPU job: Gandiva's reactive placement puts job 6 on
  // server 0 (affinity 2: job 1 holds 2 GPUs there, 2 free), exactly onto tasks 2 and 3's GPUs.
  gandiva_reactive reactive(b.state.cluster(), b.topology);
  ASSERT_THAT(reactive.rebuild(b.state), IsOk());
  const auto placed = reactive.place(b.state, job_id(6));
  ASSERT_THAT(placed, IsOk());
  ASSERT_EQ(placed->binds.size(), 1u);
  EXPECT_EQ(placed->binds[0].tasks[0].node, node_id(0));
  EXPECT_EQ(ids(placed->binds[0].tasks[0]),
            (u32s{before[2].devices[0].device.value(), before[3].devices[0].device.value()}));
  ASSERT_THAT(apply(b.state, *placed), IsOk());
  // And the 3 x 4-GPU gang fits the three idle servers.
  decision gang;
  gang.binds.push_back(binding{job_id(5), {}});
  for (std::uint32_t t = 0; t < 3; ++t) {
    task_placement p{task_id(t), node_id(t + 1), {}};
    for (std::uint32_t k = 0; k < 4; ++k)
      p.devices.push_back(device_share{b.dev(t + 1, k), 1000, 0});
    gang.binds[0].tasks.push_back(std::move(p));
  }
  EXPECT_THAT(apply(b.state, gang), IsOk());
}

TEST(GandivaGrowShrink, ShrinkKeepsOnePlacedTaskWhenTheBaseIsNotBound) {
  bed b = bed::workstations();
  // Job 1 has 3 one-GPU tasks, base 1; only its optional tasks 1 and 2 are bound (server 0,
  // local 0 and 1).
  job_spec spec;
  spec.id = job_id(1);
  spec.name = "elastic";
  spec.gang = false;
  spec.preemptible = true;
  spec.roles.push_back(task_role{"w", 3, 0, 0, whole_gpus(1), {}});
  ASSERT_THAT(b.state.submit(spec), IsOk());
  ASSERT_THAT(record(b.state, spec.id, job_event::enqueue), IsOk());
  decision bind;
  bind.binds.push_back(
      binding{spec.id,
              {task_placement{task_id(1), node_id(0), {device_share{b.dev(0, 0), 1000, 0}}},
               task_placement{task_id(2), node_id(0), {device_share{b.dev(0, 1), 1000, 0}}}}});
  ASSERT_THAT(apply(b.state, bind), IsOk());
  ASSERT_THAT(record(b.state, spec.id, job_event::start), IsOk());
  // Every other GPU is busy; a 4-GPU job waits: the plan wants 4 GPUs back, but job 1 keeps
  // task 1 and gives back task 2 only.
  b.run(2, {{0, {2, 3}}});
  for (std::uint32_t n = 1; n < 4; ++n) b.run(2 + n, {{n, {0, 1, 2, 3}}});
  queue_gang(b, 9, 1, 4);
  const grow_shrink_planner planner(b.state.cluster(), b.topology);
  const std::vector<elastic_job> elastic{{job_id(1), 1}};
  const auto plan = planner.plan(b.state, elastic);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->waiting_gpus, 4u);
  EXPECT_EQ(plan->free_gpus, 0u);
  ASSERT_EQ(plan->shrink.size(), 1u);
  EXPECT_EQ(plan->shrink[0].tasks, (std::vector<task_id>{task_id(2)}));
  EXPECT_EQ(plan->reclaimed_gpus, 1u);
  ASSERT_THAT(apply(b.state, to_decision(*plan)), IsOk());
  EXPECT_EQ(b.state.placement(job_id(1)).value()[1].node, node_id(0));
  EXPECT_EQ(b.state.status(job_id(1)).value().state, job_state::running);
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
