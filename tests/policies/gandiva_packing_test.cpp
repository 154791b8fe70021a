// SPDX-License-Identifier: MIT
// Tests for hetsched/policies/gandiva_packing.hpp: greedy lowest-utilization packing, memory
// limits, rejected pairs, overload gating, exact keep-or-undo verdicts, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/gandiva_packing.hpp>

#include "gandiva_test_support.hpp"
#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::gandiva_testing::bed;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

// s0 of the 4x4-GPU workstations: job 1 (500 milli) on GPU 0, job 2 (500) on GPU 1, job 3 (400)
// on GPU 2. Job 9 (4 whole GPUs) waits in the queue: the cluster is overloaded.
bed packable() {
  bed b = bed::workstations();
  b.run_fractional(1, 0, 0, 500, 0);
  b.run_fractional(2, 0, 1, 500, 0);
  b.run_fractional(3, 0, 2, 400, 0);
  job_spec waiting;
  waiting.id = job_id(9);
  waiting.name = "waiting";
  waiting.roles.push_back(task_role{"w", 1, 0, 0, whole_gpus(4), {}});
  EXPECT_THAT(b.state.submit(waiting), IsOk());
  EXPECT_THAT(record(b.state, job_id(9), job_event::enqueue), IsOk());
  return b;
}

const std::vector<job_profile> profiles{
    {job_id(1), 300, 8000, 100}, {job_id(2), 200, 6000, 200}, {job_id(3), 600, 4000, 50}};

TEST(GandivaPacking, PacksTheLeastUtilizedJobOntoTheLeastUtilizedGpu) {
  bed b = packable();
  const auto prop = propose_packing(b.state, profiles, {});
  ASSERT_THAT(prop, IsOk());
  // Jobs by utilization: 2 (200), 1 (300), 3 (600). Devices: GPU 1 (200, job 2's own), GPU 0
  // (300), GPU 2 (600). Job 2 goes onto GPU 0 next to job 1: 500 + 500 milli, 14000 MiB.
  ASSERT_EQ(prop->trials.size(), 1u);
  const packing_trial& t = prop->trials[0];
  EXPECT_EQ(t.job, job_id(2));
  EXPECT_EQ(t.device, b.dev(0, 0));
  EXPECT_EQ(t.partners, (std::vector<job_id>{job_id(1)}));
  EXPECT_EQ(t.util_milli, 500);
  EXPECT_EQ(t.profiled_memory_mib, 14000);
  ASSERT_EQ(t.previous.size(), 1u);
  EXPECT_EQ(t.previous[0].devices.at(0).device, b.dev(0, 1));
  ASSERT_EQ(prop->start.migrations.size(), 1u);
  EXPECT_EQ(prop->start.migrations[0].tasks.at(0).devices.at(0).device, b.dev(0, 0));
  EXPECT_THAT(check_decision(b.state, prop->start), IsOk());
  ASSERT_THAT(apply(b.state, prop->start), IsOk());
  EXPECT_EQ(b.state.device_used(b.dev(0, 0)).milli_gpu, 1000);
  EXPECT_EQ(b.state.device_used(b.dev(0, 1)).milli_gpu, 0);
}

TEST(GandivaPacking, TriesTheNextGpuAfterARejectionAndRespectsMemory) {
  bed b = packable();
  const std::vector<rejected_pack> rejected{{job_id(2), b.dev(0, 0)}};
  auto prop = propose_packing(b.state, profiles, rejected);
  ASSERT_THAT(prop, IsOk());
  // GPU 0 rejected for job 2: GPU 2 (job 3, 400 + 500 milli).
  ASSERT_EQ(prop->trials.size(), 1u);
  EXPECT_EQ(prop->trials[0].job, job_id(2));
  EXPECT_EQ(prop->trials[0].device, b.dev(0, 2));
  // Job 3 now uses nearly all the memory of GPU 2 by its profile.
  const std::int64_t mem = b.state.cluster().device(b.dev(0, 2)).memory_mib;
  std::vector<job_profile> heavy = profiles;
  heavy[2].memory_mib = mem - 1000;
  prop = propose_packing(b.state, heavy, rejected);
  ASSERT_THAT(prop, IsOk());
  // Job 2: GPU 0 rejected, GPU 2 memory full; job 1 (300): GPU 1 (job 2, 200) 500 + 500 milli,
  // 14000 MiB: trial job 1 -> GPU 1.
  ASSERT_EQ(prop->trials.size(), 1u);
  EXPECT_EQ(prop->trials[0].job, job_id(1));
  EXPECT_EQ(prop->trials[0].device, b.dev(0, 1));
  EXPECT_THAT(check_decision(b.state, prop->start), IsOk());
}

TEST(GandivaPacking, ProposesDisjointTrialsUpToTheLimit) {
  bed b = packable();
  b.run_fractional(4, 1, 0, 300, 0);  // s1 GPU 0
  std::vector<job_profile> more = profiles;
  more.push_back({job_id(4), 100, 1000, 10});
  packing_params params;
  params.max_trials = 3;
  const auto prop = propose_packing(b.state, more, {}, params);
  ASSERT_THAT(prop, IsOk());
  // Job 4 (100) -> GPU 1 of s0 (job 2, 200): 300 + 500. Then job 2 is a partner, job 1 (300)
  // -> GPU 2 (job 3): 500 + 400 (GPU 0 is its own, GPU 1 taken). Job 3 is then a partner.
  ASSERT_EQ(prop->trials.size(), 2u);
  EXPECT_EQ(prop->trials[0].job, job_id(4));
  EXPECT_EQ(prop->trials[0].device, b.dev(0, 1));
  EXPECT_EQ(prop->trials[1].job, job_id(1));
  EXPECT_EQ(prop->trials[1].device, b.dev(0, 2));
  EXPECT_THAT(check_decision(b.state, prop->start), IsOk());
}

TEST(GandivaPacking, PacksOnlyUnderOverload) {
  bed b = bed::workstations();
  b.run_fractional(1, 0, 0, 500, 0);
  b.run_fractional(2, 0, 1, 500, 0);
  const std::vector<job_profile> two(profiles.begin(), profiles.begin() + 2);
  const auto prop = propose_packing(b.state, two, {});
  ASSERT_THAT(prop, IsOk());
  EXPECT_TRUE(prop->trials.empty());
  packing_params params;
  params.only_under_overload = false;
  const auto forced = propose_packing(b.state, two, {}, params);
  ASSERT_THAT(forced, IsOk());
  ASSERT_EQ(forced->trials.size(), 1u);
  EXPECT_EQ(forced->trials[0].job, job_id(2));
}

TEST(GandivaPacking, BindsAQueuedFractionalJobOnADgxA100) {
  bed b = bed::of(node_template::dgx_a100, 1);
  b.run_fractional(1, 0, 3, 600, 10'000);
  b.run_fractional(2, 0, 5, 500, 10'000);
  job_spec q;
  q.id = job_id(3);
  q.name = "queued";
  q.roles.push_back(task_role{"w", 1, 0, 0, fractional_gpu(450, {}, 20'000), {}});
  ASSERT_THAT(b.state.submit(q), IsOk());
  ASSERT_THAT(record(b.state, job_id(3), job_event::enqueue), IsOk());
  const std::vector<job_profile> prof{
      {job_id(1), 700, 30'000, 10}, {job_id(2), 500, 30'000, 10}, {job_id(3), 100, 20'000, 10}};
  const auto prop = propose_packing(b.state, prof, {});
  ASSERT_THAT(prop, IsOk());
  // Job 3 (100) first: GPU 5 (500) has 500 milli free >= 450 and 30000 + 20000 MiB fit 80 GB.
  ASSERT_EQ(prop->trials.size(), 1u);
  EXPECT_EQ(prop->trials[0].device, b.dev(0, 5));
  EXPECT_TRUE(prop->trials[0].previous.empty());
  ASSERT_EQ(prop->start.binds.size(), 1u);
  EXPECT_THAT(check_decision(b.state, prop->start), IsOk());
}

TEST(GandivaPacking, KeepsOnlyWhenPackedThroughputBeatsTimeSlicing) {
  bed b = packable();
  const auto prop = propose_packing(b.state, profiles, {});
  ASSERT_THAT(prop, IsOk());
  ASSERT_THAT(apply(b.state, prop->start), IsOk());
  const packing_trial& t = prop->trials.at(0);  // job 2 on GPU 0 with job 1
  // Rates alone: job 1 100, job 2 200. Packed 70 and 120: 0.7 + 0.6 = 1.3 > 1: keep.
  auto v = judge_packing(b.state, t, profiles,
                         std::vector<packed_rate>{{job_id(1), 70}, {job_id(2), 120}});
  ASSERT_THAT(v, IsOk());
  EXPECT_TRUE(v->keep);
  EXPECT_EQ(v->packed_throughput_milli, 1300);
  EXPECT_TRUE(v->undo.empty());
  // Exactly 1 (50 + 100): not better than time-slicing: undo by moving job 2 back to GPU 1.
  v = judge_packing(b.state, t, profiles,
                    std::vector<packed_rate>{{job_id(1), 50}, {job_id(2), 100}});
  ASSERT_THAT(v, IsOk());
  EXPECT_FALSE(v->keep);
  EXPECT_EQ(v->packed_throughput_milli, 1000);
  ASSERT_EQ(v->undo.migrations.size(), 1u);
  EXPECT_EQ(v->undo.migrations[0].tasks.at(0).devices.at(0).device, b.dev(0, 1));
  EXPECT_THAT(check_decision(b.state, v->undo), IsOk());
  ASSERT_THAT(apply(b.state, v->undo), IsOk());
  EXPECT_EQ(b.state.device_used(b.dev(0, 1)).milli_gpu, 500);
}

TEST(GandivaPacking, UndoPreemptsWhenTheOldGpuIsTaken) {
  bed b = packable();
  const auto prop = propose_packing(b.state, profiles, {});
  ASSERT_THAT(prop, IsOk());
  ASSERT_THAT(apply(b.state, prop->start), IsOk());
  b.run_fractional(5, 0, 1, 900, 0);  // GPU 1 is no longer free enough for job 2
  const auto v = judge_packing(b.state, prop->trials.at(0), profiles,
                               std::vector<packed_rate>{{job_id(1), 10}, {job_id(2), 20}});
  ASSERT_THAT(v, IsOk());
  EXPECT_FALSE(v->keep);
  EXPECT_EQ(v->packed_throughput_milli, 200);
  ASSERT_EQ(v->undo.preemptions.size(), 1u);
  EXPECT_EQ(v->undo.preemptions[0].job, job_id(2));
  EXPECT_THAT(check_decision(b.state, v->undo), IsOk());
}

TEST(GandivaPacking, RejectsBadInput) {
  bed b = packable();
  std::vector<job_profile> bad = profiles;
  bad[0].gpu_util_milli = 1001;
  EXPECT_THAT(propose_packing(b.state, bad, {}), HasErrc(errc::invalid_argument));
  bad = profiles;
  bad[1].rate = 0;
  EXPECT_THAT(propose_packing(b.state, bad, {}), HasErrc(errc::invalid_argument));
  bad = profiles;
  bad.push_back(profiles[0]);
  EXPECT_THAT(propose_packing(b.state, bad, {}), HasErrc(errc::invalid_argument));
  bad = profiles;
  bad.push_back({job_id(77), 0, 0, 1});
  EXPECT_THAT(propose_packing(b.state, bad, {}), HasErrc(errc::not_found));
  packing_params params;
  params.max_trials = 0;
  EXPECT_THAT(propose_packing(b.state, profiles, {}, params), HasErrc(errc::invalid_argument));
  const packing_trial t{job_id(2), b.dev(0, 0), {}, {job_id(1)}, 0, 0};
  // Job 2 is not on GPU 0 yet.
  EXPECT_THAT(judge_packing(b.state, t, profiles, {}), HasErrc(errc::not_found));
  const packing_trial own{job_id(2), b.dev(0, 1), {}, {}, 0, 0};
  EXPECT_THAT(judge_packing(b.state, own, profiles, {}), HasErrc(errc::not_found));
  EXPECT_THAT(judge_packing(b.state, own, profiles, std::vector<packed_rate>{{job_id(2), -1}}),
              HasErrc(errc::invalid_argument));
}

}  // namespace
}  // namespace hetsched
