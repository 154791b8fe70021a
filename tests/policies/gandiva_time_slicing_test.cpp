// SPDX-License-Identifier: MIT
// Tests for hetsched/policies/gandiva_time_slicing.hpp: rotation at quantum boundaries, fairness
// by attained time within a server, GPU memory limits, protected quanta, next review time,
// decisions that pass check_decision, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/gandiva_time_slicing.hpp>

#include "gandiva_test_support.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::gandiva_testing::bed;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

using jobs = std::vector<job_id>;

void apply_plan(cluster_state& state, const time_slice_plan& plan) {
  const decision d = to_decision(plan);
  EXPECT_THAT(check_decision(state, d), IsOk());
  EXPECT_THAT(apply(state, d), IsOk());
}

// s0: job 1 (2 GPUs, local 0 and 3) suspended, job 2 on the same GPUs running since t = 0.
bed two_sliced_jobs() {
  bed b = bed::workstations();
  b.run(1, {{0, {0, 3}}});
  b.suspend(1);
  b.run(2, {{0, {0, 3}}});
  return b;
}

TEST(GandivaTimeSlicing, SwapsJobsAtTheEndOfAQuantum) {
  bed b = two_sliced_jobs();
  const std::vector<slice_account> acc{{job_id(1), 60, 0}, {job_id(2), 0, 0}};
  // t = 60: job 2's quantum is over; attained 0 + 60 = 60 ties job 1's 60 and the running job
  // comes first on a tie: job 2 stays, job 1 waits, review at 60 + 60.
  auto plan = plan_time_slices(b.state, acc, {}, 60);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->suspend.empty());
  EXPECT_TRUE(plan->resume.empty());
  EXPECT_EQ(plan->next_review_s, 120);
  // t = 90: job 2 attained 90 > job 1's 60: job 2 out, job 1 back.
  plan = plan_time_slices(b.state, acc, {}, 90);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->suspend, (jobs{job_id(2)}));
  EXPECT_EQ(plan->resume, (jobs{job_id(1)}));
  EXPECT_EQ(plan->next_review_s, 150);
  apply_plan(b.state, *plan);
  EXPECT_EQ(b.state.find_job(job_id(1))->status.state, job_state::running);
  EXPECT_EQ(b.state.find_job(job_id(2))->status.state, job_state::suspended);
  EXPECT_EQ(b.state.device_used(b.dev(0, 3)).holders.at(0).job, job_id(1));
}

TEST(GandivaTimeSlicing, NeverCutsAQuantumShort) {
  bed b = two_sliced_jobs();
  // Job 2 resumed at t = 100 with attained 500; job 1 attained 0. At t = 130 (30 s in) job 2 is
  // protected: nothing changes; review at 160.
  const std::vector<slice_account> acc{{job_id(1), 0, 100}, {job_id(2), 500, 100}};
  auto plan = plan_time_slices(b.state, acc, {}, 130);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->suspend.empty());
  EXPECT_TRUE(plan->resume.empty());
  EXPECT_EQ(plan->next_review_s, 160);
  time_slice_params params;
  params.quantum_s = 20;
  plan = plan_time_slices(b.state, acc, params, 130);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->suspend, (jobs{job_id(2)}));
  EXPECT_EQ(plan->resume, (jobs{job_id(1)}));
}

TEST(GandivaTimeSlicing, ResumesTheLeastServedJobOfTheServer) {
  bed b = bed::workstations();
  // s1: jobs 3, 4 and 5 share all 4 GPUs; 5 runs since t = 60. Attained: 3 = 120, 4 = 60,
  // 5 = 120 + 60 at t = 120. s2: job 6 runs alone (no contender waits there).
  b.run(3, {{1, {0, 1, 2, 3}}});
  b.suspend(3);
  b.run(4, {{1, {0, 1, 2, 3}}});
  b.suspend(4);
  b.run(5, {{1, {0, 1, 2, 3}}});
  b.run(6, {{2, {0}}});
  const std::vector<slice_account> acc{
      {job_id(3), 120, 60}, {job_id(4), 60, 60}, {job_id(5), 120, 60}, {job_id(6), 0, 0}};
  const auto plan = plan_time_slices(b.state, acc, {}, 120);
  ASSERT_THAT(plan, IsOk());
  // Least attained: 4 (60), then 3 (120), then 5 (180): 4 resumes, 5 is suspended, 3 waits.
  EXPECT_EQ(plan->suspend, (jobs{job_id(5)}));
  EXPECT_EQ(plan->resume, (jobs{job_id(4)}));
  EXPECT_EQ(plan->next_review_s, 180);
  apply_plan(b.state, *plan);
  EXPECT_EQ(b.state.find_job(job_id(6))->status.state, job_state::running);
}

TEST(GandivaTimeSlicing, RespectsGpuMemory) {
  bed b = bed::workstations();
  const std::int64_t mem = b.state.cluster().device(b.dev(3, 0)).memory_mib;
  ASSERT_GT(mem, 0);
  // On s3 GPU 0: job 7 (300 milli, 3/4 of the memory + 1) and job 8 (300 milli, 1/4) are
  // suspended; job 9 (300 milli, 1/2) runs since 0.
  b.run_fractional(7, 3, 0, 300, mem * 3 / 4 + 1);
  b.suspend(7);
  b.run_fractional(8, 3, 0, 300, mem / 4);
  b.suspend(8);
  b.run_fractional(9, 3, 0, 300, mem / 2);
  const std::vector<slice_account> acc{{job_id(7), 10, 0}, {job_id(8), 0, 0}, {job_id(9), 40, 0}};
  const auto plan = plan_time_slices(b.state, acc, {}, 60);
  ASSERT_THAT(plan, IsOk());
  // Order 8 (0), 7 (10), 9 (100): 8 fits (1/4), 7 does not (1/4 + 3/4 + 1 > all), 9 fits
  // (1/4 + 1/2): 8 is resumed next to 9 and 7 waits.
  EXPECT_TRUE(plan->suspend.empty());
  EXPECT_EQ(plan->resume, (jobs{job_id(8)}));
  apply_plan(b.state, *plan);
  EXPECT_EQ(b.state.device_used(b.dev(3, 0)).milli_gpu, 600);
  EXPECT_EQ(b.state.device_used(b.dev(3, 0)).gpu_memory_mib, mem / 4 + mem / 2);
}

TEST(GandivaTimeSlicing, FollowsReactiveOversubscriptionOnADgxA100) {
  bed b = bed::of(node_template::dgx_a100, 1);
  gandiva_reactive reactive(b.state.cluster(), b.topology);
  // Two 8-GPU jobs: the second time-slices the first (reactive stage 4).
  for (std::uint32_t j = 1; j <= 2; ++j) {
    job_spec spec;
    spec.id = job_id(j);
    spec.name = "job";
    spec.preemptible = true;
    spec.roles.push_back(task_role{"w", 1, 0, 0, whole_gpus(8), {}});
    ASSERT_THAT(b.state.submit(spec), IsOk());
    ASSERT_THAT(record(b.state, spec.id, job_event::enqueue), IsOk());
    const decision d = reactive.place(b.state, spec.id).value();
    ASSERT_THAT(apply(b.state, d), IsOk());
    ASSERT_THAT(reactive.commit(d), IsOk());
    ASSERT_THAT(record(b.state, spec.id, job_event::start), IsOk());
  }
  ASSERT_EQ(b.state.find_job(job_id(1))->status.state, job_state::suspended);
  // Job 1 ran 0..60, job 2 since 60. Rotating every quantum alternates them.
  std::vector<slice_account> acc{{job_id(1), 60, 60}, {job_id(2), 0, 60}};
  for (std::int64_t now = 120, i = 0; i < 4; now += 60, ++i) {
    const auto plan = plan_time_slices(b.state, acc, {}, now);
    ASSERT_THAT(plan, IsOk());
    EXPECT_TRUE(plan->suspend.empty() && plan->resume.empty()) << "at " << now;
    // Both have equal attained time at each boundary; the running one stays (no switch) until
    // the other is behind. With 1 s more: the waiting one is behind.
    const auto plan2 = plan_time_slices(b.state, acc, {}, now + 1);
    ASSERT_THAT(plan2, IsOk());
    ASSERT_EQ(plan2->suspend.size(), 1u);
    ASSERT_EQ(plan2->resume.size(), 1u);
    apply_plan(b.state, *plan2);
    for (slice_account& a : acc) {
      if (a.job == plan2->suspend[0]) a.attained_s += now + 1 - a.since_s;
      a.since_s = now + 1;
    }
    EXPECT_NE(plan2->suspend[0], plan2->resume[0]);
  }
  // After 4 swaps job 2 runs again.
  EXPECT_EQ(b.state.find_job(job_id(2))->status.state, job_state::running);
}

TEST(GandivaTimeSlicing, RandomRotationsStayValid) {
  // 4x4-GPU workstations oversubscribed by reactive placement (up to 2 time-sliced jobs per
  // server); 30 rotations with seeded clocks: every plan passes check_decision, suspends only
  // running jobs, and no device ever holds more than it has.
  std::uint64_t seed = 99;
  const auto next = [&seed](std::uint32_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>((seed >> 33) % bound);
  };
  bed b = bed::workstations();
  gandiva_params gp;
  gp.max_time_sliced_jobs_per_gpu_set = 2;
  gandiva_reactive reactive(b.state.cluster(), b.topology, gp);
  const std::uint32_t sizes[] = {1, 2, 4};
  std::vector<slice_account> acc;
  for (std::uint32_t j = 1; j <= 20; ++j) {
    job_spec spec;
    spec.id = job_id(j);
    spec.name = "job";
    spec.preemptible = true;
    spec.roles.push_back(task_role{"w", 1, 0, 0, whole_gpus(sizes[next(3)]), {}});
    ASSERT_THAT(b.state.submit(spec), IsOk());
    ASSERT_THAT(record(b.state, spec.id, job_event::enqueue), IsOk());
    const decision d = reactive.place(b.state, spec.id).value();
    ASSERT_THAT(apply(b.state, d), IsOk());
    ASSERT_THAT(reactive.commit(d), IsOk());
    if (!d.binds.empty()) {
      ASSERT_THAT(record(b.state, spec.id, job_event::start), IsOk());
      acc.push_back({spec.id, 0, 0});
    }
  }
  std::int64_t now = 0;
  std::size_t swaps = 0;
  for (int round = 0; round < 30; ++round) {
    now += 1 + next(90);
    const auto plan = plan_time_slices(b.state, acc, {}, now);
    ASSERT_THAT(plan, IsOk());
    for (const job_id j : plan->suspend)
      EXPECT_EQ(b.state.find_job(j)->status.state, job_state::running);
    for (const job_id j : plan->resume)
      EXPECT_EQ(b.state.find_job(j)->status.state, job_state::suspended);
    const decision d = to_decision(*plan);
    ASSERT_THAT(check_decision(b.state, d), IsOk()) << "round " << round;
    ASSERT_THAT(apply(b.state, d), IsOk());
    swaps += plan->suspend.size() + plan->resume.size();
    for (slice_account& a : acc) {
      const bool out =
          std::find(plan->suspend.begin(), plan->suspend.end(), a.job) != plan->suspend.end();
      const bool in =
          std::find(plan->resume.begin(), plan->resume.end(), a.job) != plan->resume.end();
      if (out) a.attained_s += now - a.since_s;
      if (out || in) a.since_s = now;
    }
    for (std::size_t i = 0; i < b.state.cluster().device_count(); ++i)
      EXPECT_LE(b.state.device_used(device_id(static_cast<std::uint32_t>(i))).milli_gpu, 1000);
  }
  EXPECT_GT(swaps, 10u);
}

TEST(GandivaTimeSlicing, RejectsBadAccounts) {
  bed b = two_sliced_jobs();
  time_slice_params params;
  params.quantum_s = 0;
  EXPECT_THAT(plan_time_slices(b.state, {}, params, 0), HasErrc(errc::invalid_argument));
  const std::vector<slice_account> unknown{{job_id(42), 0, 0}};
  EXPECT_THAT(plan_time_slices(b.state, unknown, {}, 0), HasErrc(errc::not_found));
  const std::vector<slice_account> dup{{job_id(1), 0, 0}, {job_id(1), 0, 0}};
  EXPECT_THAT(plan_time_slices(b.state, dup, {}, 0), HasErrc(errc::invalid_argument));
  const std::vector<slice_account> future{{job_id(1), 0, 10}};
  EXPECT_THAT(plan_time_slices(b.state, future, {}, 5), HasErrc(errc::invalid_argument));
  const std::vector<slice_account> negative{{job_id(1), -1, 0}};
  EXPECT_THAT(plan_time_slices(b.state, negative, {}, 5), HasErrc(errc::invalid_argument));
  // Without accounts every quantum is over and every job has attained 0: the running job 2
  // stays (running first), job 1 waits; review at now + quantum.
  const auto plan = plan_time_slices(b.state, {}, {}, 7);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->resume.empty());
  EXPECT_EQ(plan->next_review_s, 67);
}

}  // namespace
}  // namespace hetsched
