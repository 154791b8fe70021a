// SPDX-License-Identifier: MIT
// Gandiva's introspective migration in the simulator: migrating_placement (the trigger, the
// planned moves), the policy-spec parameters, and the engine applying the moves with their cost.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <hetsched/policies/gandiva_placement.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/migrating_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;

std::shared_ptr<const cluster> small_cluster(std::size_t nodes, std::size_t gpus) {
  return hetsched::testing::a100_servers(nodes, gpus);
}
workload::trace_job job(std::string name, std::int64_t submit_s, std::int64_t duration_s,
                        std::uint32_t gpus, std::uint32_t tasks = 1) {
  return hetsched::testing::vc0_job(std::move(name), submit_s, duration_s, gpus, tasks);
}

sim_result run(const std::shared_ptr<const cluster>& c, const workload::trace& t,
               std::string_view spec_text, const sim_params& p = {}) {
  auto spec = parse_policy_spec(spec_text);
  EXPECT_THAT(spec, IsOk());
  auto inst = make_policy(*spec, *c, nullptr);
  EXPECT_THAT(inst, IsOk());
  auto r = simulate(c, t, *inst->order, *inst->place, p);
  EXPECT_THAT(r, IsOk());
  return std::move(*r);
}

// Two 4-GPU servers. x (3 GPUs, 100 s) takes n0 and y (3 GPUs, 1000 s) n1 (Gandiva: empty
// servers, lowest id); the gang g (2 tasks x 1 GPU, 500 s, at 1 s) goes to the packer, whose
// best fit puts task 0 on n0 and task 1 on n1: g spans both servers.
workload::trace spread_gang_trace() {
  return {job("x", 0, 100, 3), job("y", 0, 1000, 3), job("g", 1, 500, 1, 2)};
}

TEST(SimMigration, GandivaConsolidatesASpreadGangWhenGpusFreeUp) {
  const auto c = small_cluster(2, 4);
  const sim_result r = run(c, spread_gang_trace(), "fifo+gandiva");
  // x ends at 100 s: the pass at 100 s moves g's task 1 to n0 (3 GPUs free there). g has run
  // 99 s; the remaining 401 s plus the 30 s migration cost end it at 531 s instead of 501 s.
  EXPECT_EQ(r.counters.migrations, 1u);
  EXPECT_EQ(r.jobs[2].migrations, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 1'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 531'000);
  EXPECT_EQ(r.jobs[0].finish_ms, 100'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 1'000'000);
  EXPECT_EQ(r.jobs[1].migrations, 0u);
  // Both GPUs of g are held throughout; the migration pauses the gang but keeps its GPUs.
  // GPU-seconds: x 300 + y 3000 + g 2 x 530 = 4360.
  EXPECT_DOUBLE_EQ(r.allocated_gpu_ms, 4'360'000.0);
  EXPECT_DOUBLE_EQ(r.busy_gpu_ms, 4'360'000.0);

  // Without migration g ends at 501 s; with a 7 s cost at 508 s; the cost is the only change.
  const sim_result off = run(c, spread_gang_trace(), "fifo+gandiva:migrate=0");
  EXPECT_EQ(off.counters.migrations, 0u);
  EXPECT_EQ(off.jobs[2].finish_ms, 501'000);
  sim_params p;
  p.migration_cost_ms = 7'000;
  const sim_result cheap = run(c, spread_gang_trace(), "fifo+gandiva", p);
  EXPECT_EQ(cheap.counters.migrations, 1u);
  EXPECT_EQ(cheap.jobs[2].finish_ms, 508'000);

  // Defragmentation alone does not consolidate: g stays spread.
  EXPECT_EQ(run(c, spread_gang_trace(), "fifo+gandiva:migrate=defragment").counters.migrations, 0u);
  EXPECT_EQ(run(c, spread_gang_trace(), "fifo+gandiva:migrate=consolidate").counters.migrations,
            1u);
  // A job that is not preemptible is never moved.
  workload::trace pinned = spread_gang_trace();
  pinned[2].preemptible = false;
  EXPECT_EQ(run(c, pinned, "fifo+gandiva").jobs[2].finish_ms, 501'000);
}

TEST(SimMigration, RunsAreDeterministic) {
  const auto c = small_cluster(2, 4);
  const sim_result a = run(c, spread_gang_trace(), "fifo+gandiva");
  const sim_result b = run(c, spread_gang_trace(), "fifo+gandiva");
  EXPECT_EQ(a.jobs, b.jobs);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.series, b.series);
}

// Three 4-GPU servers. a (3 GPUs) -> n0, b (3 GPUs, 100 s) -> n1, e (2 GPUs) -> n2 at 0 s; c and
// d (1 GPU each) at 1 s by best fit -> n0 and n1. f (4 GPUs, 100 s) arrives at 50 s and waits:
// no server has 4 free GPUs.
workload::trace defragment_trace() {
  return {job("a", 0, 1000, 3), job("b", 0, 100, 3),  job("e", 0, 1000, 2),
          job("c", 1, 1000, 1), job("d", 1, 1000, 1), job("f", 50, 100, 4)};
}

TEST(SimMigration, PackerDefragmentsSoThatAWholeServerJobStarts) {
  const auto c = small_cluster(3, 4);
  const sim_result on = run(c, defragment_trace(), "fifo+packer:migrate=1");
  // b ends at 100 s: n1 has 3 free GPUs and n2 2, 5 >= 3/4 of a server. The server with the most
  // free GPUs, n1, is emptied: d moves to n2 (2 free, fewer than n1's 3). f starts on n1 at
  // 100 s. d ends at 1001 + 30 s.
  EXPECT_EQ(on.counters.migrations, 1u);
  EXPECT_EQ(on.jobs[4].migrations, 1u);
  EXPECT_EQ(on.jobs[4].finish_ms, 1'031'000);
  EXPECT_EQ(on.jobs[5].first_start_ms, 100'000);
  EXPECT_EQ(on.jobs[5].finish_ms, 200'000);
  EXPECT_EQ(on.end_ms, 1'031'000);

  // The packer does not migrate by default: f waits until e and a end at 1000 s.
  const sim_result off = run(c, defragment_trace(), "fifo+packer");
  EXPECT_EQ(off.counters.migrations, 0u);
  EXPECT_EQ(off.jobs[5].first_start_ms, 1'000'000);
  EXPECT_EQ(off.jobs[4].finish_ms, 1'001'000);

  // A threshold of 2 servers' worth (8 GPUs) is not reached by 5 fragmented GPUs: no move.
  const sim_result high = run(c, defragment_trace(), "fifo+packer:migrate=1,migrate_threshold=2/1");
  EXPECT_EQ(high.counters.migrations, 0u);
  EXPECT_EQ(high.jobs[5].first_start_ms, 1'000'000);
}

TEST(SimMigration, DefragmentsOnlyWhileAJobWaits) {
  const auto c = small_cluster(3, 4);
  workload::trace t = defragment_trace();
  t.pop_back();  // no f: nobody waits when b ends, so nothing moves
  const sim_result r = run(c, t, "fifo+packer:migrate=1");
  EXPECT_EQ(r.counters.migrations, 0u);
  EXPECT_EQ(r.jobs[4].finish_ms, 1'001'000);
}

TEST(SimMigration, IntervalDelaysThePlanToTheFirstPassAfterIt) {
  const auto c = small_cluster(3, 4);
  // spread_gang_trace on three servers, without time-slicing: w (4 GPUs, 0..40 s) fills n2, so g
  // is spread over n0 and n1 as before; v (3 GPUs) waits from 30 s and takes n2 at 40 s. The
  // pass at 40 s plans (w freed GPUs, g is spread) but no server can hold g: no move. x ends at
  // 100 s.
  workload::trace t = spread_gang_trace();
  t.insert(t.begin() + 2, job("w", 0, 40, 4));
  t.push_back(job("v", 30, 1000, 3));
  const std::string_view spec = "fifo+gandiva:oversubscribe=0,migrate_interval_s=120";
  // With a 120 s interval the release at 100 s waits for a pass at or after 160 s; none comes
  // before g ends at 501 s: no move.
  const sim_result quiet = run(c, t, spec);
  EXPECT_EQ(quiet.counters.migrations, 0u);
  EXPECT_EQ(quiet.jobs[3].finish_ms, 501'000);
  // A job arriving at 170 s makes that pass: g moves then (its finish pays the cost).
  t.push_back(job("h", 170, 10, 1));
  const sim_result later = run(c, t, spec);
  EXPECT_EQ(later.counters.migrations, 1u);
  EXPECT_EQ(later.jobs[3].finish_ms, 531'000);
  // With the default 60 s interval the pass at 100 s moves g.
  t.pop_back();
  const sim_result eager = run(c, t, "fifo+gandiva:oversubscribe=0");
  EXPECT_EQ(eager.counters.migrations, 1u);
  EXPECT_EQ(eager.jobs[3].finish_ms, 531'000);
}

// migrating_placement on a cluster_state driven by hand, as an embedding scheduler would.
job_spec gang(std::uint32_t id, std::uint32_t gpus, std::uint32_t tasks) {
  job_spec s;
  s.id = job_id(id);
  s.name = fmt::format("j{}", id);
  task_role r;
  r.name = "t";
  r.task_count = tasks;
  r.gpu = whole_gpus(gpus);
  s.roles.push_back(r);
  s.preemptible = true;
  return s;
}

void place_and_start(cluster_state& st, placement_policy& p, job_spec s) {
  const job_id id = s.id;
  ASSERT_THAT(st.submit(std::move(s)), IsOk());
  ASSERT_THAT(record(st, id, job_event::enqueue), IsOk());
  auto d = p.place(st, id);
  ASSERT_THAT(d, IsOk());
  ASSERT_EQ(d->binds.size(), 1u);
  ASSERT_THAT(apply(st, *d), IsOk());
  p.commit(st, *d);
  ASSERT_THAT(record(st, id, job_event::start), IsOk());
}

// The placement of task `task` of job `job` (the job must exist).
task_placement task_of(const cluster_state& st, std::uint32_t job, std::uint32_t task) {
  auto pl = st.placement(job_id(job));
  EXPECT_THAT(pl, IsOk());
  return (*pl)[task];
}

void finish(cluster_state& st, placement_policy& p, job_id id) {
  ASSERT_THAT(record(st, id, job_event::succeed), IsOk());
  p.release(st, id);
  ASSERT_THAT(st.forget(id), IsOk());
}

using gandiva_adapter = placement_adapter<migrating_placement<gandiva_placement>>;

TEST(MigratingPlacement, PlansAfterAReleaseAndMovesTheGangsTasks) {
  const auto c = small_cluster(2, 4);
  auto made = make_placement("gandiva", {}, *c, nullptr);
  ASSERT_THAT(made, IsOk());
  placement_policy& p = **made;
  EXPECT_TRUE(p.migrates());
  auto* adapter = dynamic_cast<gandiva_adapter*>(&p);
  ASSERT_NE(adapter, nullptr);
  const migration_trigger& trigger = adapter->inner().trigger();
  EXPECT_EQ(trigger.params().interval_ms, 60'000);
  EXPECT_TRUE(trigger.params().planner.require_preemptible);
  cluster_state st(c);
  p.rebuild(st);  // arms the trigger
  p.set_time(0);
  // Nobody waits and no gang is spread: no plan (the trigger stays armed).
  auto d = p.plan_migrations(st);
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->empty());
  place_and_start(st, p, gang(0, 3, 1));  // n0, devices 0-2
  place_and_start(st, p, gang(1, 3, 1));  // n1, devices 4-6
  place_and_start(st, p, gang(2, 1, 2));  // task 0 on n0 device 3, task 1 on n1 device 7
  ASSERT_EQ(task_of(st, 2, 1).devices.at(0).device, device_id(7));
  EXPECT_EQ(trigger.spread(), (std::set<std::uint32_t>{2}));
  EXPECT_TRUE(trigger.waiting().empty());
  // At 50 s g is spread and the trigger armed: a plan is made, but no server can hold g.
  p.set_time(50'000);
  d = p.plan_migrations(st);
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->empty());

  finish(st, p, job_id(0));
  p.set_time(110'000);
  d = p.plan_migrations(st);
  ASSERT_THAT(d, IsOk());
  ASSERT_EQ(d->migrations.size(), 1u);
  const migration& m = d->migrations[0];
  EXPECT_EQ(m.job, job_id(2));
  ASSERT_EQ(m.tasks.size(), 1u);
  EXPECT_EQ(m.tasks[0].task, task_id(1));
  EXPECT_EQ(m.tasks[0].node, node_id(0));
  ASSERT_EQ(m.tasks[0].devices.size(), 1u);
  EXPECT_EQ(m.tasks[0].devices[0].device, device_id(0));  // lowest free index of n0
  ASSERT_THAT(check_decision(st, *d), IsOk());
  ASSERT_THAT(apply(st, *d), IsOk());
  p.commit(st, *d);
  EXPECT_EQ(task_of(st, 2, 0).node, node_id(0));
  EXPECT_EQ(task_of(st, 2, 1).node, node_id(0));
  EXPECT_TRUE(trigger.spread().empty());
  // The plan disarmed the trigger.
  p.set_time(200'000);
  d = p.plan_migrations(st);
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->empty());
  // The indices saw the move: n1 has 1 free GPU, n0 2, so a 2-GPU job goes to n0.
  place_and_start(st, p, gang(3, 2, 1));
  EXPECT_EQ(task_of(st, 3, 0).node, node_id(0));
  // A job that does not fit waits; binding it ends the wait.
  ASSERT_THAT(st.submit(gang(4, 4, 1)), IsOk());
  ASSERT_THAT(record(st, job_id(4), job_event::enqueue), IsOk());
  d = p.place(st, job_id(4));
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->binds.empty());
  EXPECT_EQ(trigger.waiting(), (std::set<std::uint32_t>{4}));
}

TEST(MigratingPlacement, IntervalBoundsHowOftenItPlans) {
  const auto c = small_cluster(2, 4);
  policy_params params{{"migrate", "1"}, {"migrate_interval_s", "60"}};
  auto made = make_placement("packer", params, *c, nullptr);
  ASSERT_THAT(made, IsOk());
  placement_policy& p = **made;
  cluster_state st(c);
  p.rebuild(st);
  place_and_start(st, p, gang(0, 3, 1));  // n0
  place_and_start(st, p, gang(1, 3, 1));  // n1
  place_and_start(st, p, gang(2, 1, 2));  // n0 + n1
  p.set_time(10'000);
  auto d = p.plan_migrations(st);  // plans at 10 s: nothing can move
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->empty());
  finish(st, p, job_id(0));
  p.set_time(69'999);  // 59.999 s after the last plan: too early, the trigger stays armed
  d = p.plan_migrations(st);
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->empty());
  p.set_time(70'000);
  d = p.plan_migrations(st);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->migrations.size(), 1u);
}

TEST(MigratingPlacement, SpecParametersAndErrors) {
  const auto c = small_cluster(2, 4);
  const auto make = [&](std::string_view text) {
    auto spec = parse_policy_spec(text);
    EXPECT_THAT(spec, IsOk());
    return make_policy(*spec, *c, nullptr);
  };
  EXPECT_TRUE(make("fifo+gandiva")->place->migrates());
  EXPECT_FALSE(make("fifo+gandiva:migrate=0")->place->migrates());
  EXPECT_TRUE(make("fifo+gandiva:migrate=0,slices=2")->place->oversubscribes());
  EXPECT_TRUE(make("fifo+gandiva:slices=2")->place->oversubscribes());
  EXPECT_FALSE(make("fifo+packer")->place->migrates());
  EXPECT_TRUE(make("fifo+packer:migrate=defragment,migrate_threshold=1/2")->place->migrates());
  EXPECT_FALSE(make("fifo+capacity")->place->migrates());
  EXPECT_THAT(make("fifo+gandiva:migrate=2"),
              ErrorContains("gandiva: migrate=2 (expected 0, 1, consolidate or defragment)"));
  EXPECT_THAT(make("fifo+packer:migrate=1,migrate_threshold=3"),
              ErrorContains("packer: migrate_threshold=3 (expected N/D with integers N, D > 0"));
  EXPECT_THAT(make("fifo+packer:migrate=1,migrate_threshold=0/4"),
              ErrorContains("migrate_threshold=0/4"));
  EXPECT_THAT(make("fifo+packer:migrate=1,migrate_threshold=3/4x"),
              ErrorContains("migrate_threshold=3/4x"));
  EXPECT_THAT(make("fifo+gandiva:migrate_interval_s=-1"),
              ErrorContains("migrate_interval_s=-1 is not a non-negative integer"));
  EXPECT_THAT(
      make("fifo+packer:migrate_threshold=1/2"),
      ErrorContains("packer: migrate_threshold needs migrate=1, consolidate or defragment"));
  EXPECT_THAT(make("fifo+gandiva:migrate=0,migrate_interval_s=5"),
              ErrorContains("gandiva: migrate_interval_s needs migrate=1"));
  EXPECT_THAT(make("fifo+packer:nope=1"),
              ErrorContains("known: fit, gang, migrate, migrate_threshold, migrate_interval_s"));
  static_assert(job_placement<migrating_placement<indexed_packer>>);
  static_assert(job_placement<migrating_placement<gandiva_placement>>);
}

}  // namespace
}  // namespace hetsched::sim
