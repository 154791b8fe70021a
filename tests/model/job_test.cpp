// SPDX-License-Identifier: MIT
// Tests for job specs: validation, task numbering and request totals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hetsched/model/job.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

// Job 7: 2 parameter servers (CPU only) and 4 workers with 2 A100s each.
job_spec training_job() {
  job_spec spec;
  spec.id = job_id(7);
  spec.name = "resnet";
  spec.tenant = tenant_id(1);
  spec.queue = queue_id(2);
  spec.priority = 10;
  spec.image = "registry/resnet:1";
  spec.command = "python train.py";
  spec.roles.push_back(task_role{"ps", 2, 4000, 8192, gpu_request{}, {}});
  spec.roles.push_back(task_role{"worker",
                                 4,
                                 8000,
                                 32768,
                                 whole_gpus(2, gpu_type("A100-SXM4-80GB"), 40960),
                                 {{"rdma/hca", 1}}});
  spec.gang = true;
  spec.preemptible = true;
  spec.retry_limit = 2;
  spec.duration_estimate_s = 3600;
  return spec;
}

TEST(JobSpec, ValidJobPasses) { EXPECT_THAT(validate(training_job()), IsOk()); }

TEST(JobSpec, TaskIdsAreRoleMajor) {
  const job_spec spec = training_job();
  // ps: tasks 0-1, worker: tasks 2-5
  EXPECT_EQ(task_count(spec), 6U);
  EXPECT_EQ(first_task(spec, 0), task_id(0));
  EXPECT_EQ(first_task(spec, 1), task_id(2));
  EXPECT_EQ(first_task(spec, 2), task_id(6));
  EXPECT_EQ(role_index_of(spec, task_id(0)), 0U);
  EXPECT_EQ(role_index_of(spec, task_id(1)), 0U);
  EXPECT_EQ(role_index_of(spec, task_id(2)), 1U);
  EXPECT_EQ(role_index_of(spec, task_id(5)), 1U);
  EXPECT_EQ(role_index_of(spec, task_id(6)), std::nullopt);
  EXPECT_EQ(role_index_of(spec, task_id::invalid()), std::nullopt);
}

TEST(JobSpec, TotalMilliGpuSumsEveryTask) {
  job_spec spec = training_job();
  // ps asks for no GPU; 4 workers x 2 whole GPUs = 8000 milli-GPUs.
  EXPECT_EQ(total_milli_gpu(spec), 8000);
  spec.roles.push_back(task_role{"eval", 3, 1000, 1024, fractional_gpu(250), {}});
  EXPECT_EQ(total_milli_gpu(spec), 8750);
  spec.roles.clear();
  EXPECT_EQ(total_milli_gpu(spec), 0);
}

TEST(JobSpec, TaskRequestLooksUpTheRole) {
  const job_spec spec = training_job();
  const auto ps = task_request(spec, task_id(1));
  ASSERT_THAT(ps, IsOk());
  // ps: 4000 milli-CPU, 8192 MiB, no GPU
  EXPECT_EQ(ps->milli_cpu, 4000);
  EXPECT_EQ(ps->memory_mib, 8192);
  EXPECT_EQ(ps->milli_gpu, 0);

  const auto worker = task_request(spec, task_id(3));
  ASSERT_THAT(worker, IsOk());
  // worker: 2 GPUs = 2000 milli-GPU, 2 x 40960 MiB GPU memory, one HCA
  EXPECT_EQ(worker->milli_gpu, 2000);
  EXPECT_EQ(worker->gpu_memory_mib, 81920);
  EXPECT_EQ(worker->milli_cpu, 8000);
  EXPECT_EQ(worker->extended_amount("rdma/hca"), 1);

  EXPECT_THAT(task_request(spec, task_id(6)), HasErrc(errc::not_found));
  EXPECT_THAT(task_request(spec, task_id(6)), ErrorContains("job 7 has no task 6 (6 tasks)"));
}

TEST(JobSpec, TotalRequestSumsAllTasks) {
  const resource_vector total = total_request(training_job());
  // 2 x ps + 4 x worker
  EXPECT_EQ(total.milli_gpu, 8000);
  EXPECT_EQ(total.gpu_memory_mib, 327680);
  EXPECT_EQ(total.milli_cpu, 2 * 4000 + 4 * 8000);
  EXPECT_EQ(total.memory_mib, 2 * 8192 + 4 * 32768);
  EXPECT_EQ(total.extended_amount("rdma/hca"), 4);
}

TEST(JobSpec, FractionalRequestCountsMilliGpu) {
  job_spec spec = training_job();
  spec.roles = {task_role{"infer", 3, 1000, 1024, fractional_gpu(250, {}, 8192), {}}};
  EXPECT_THAT(validate(spec), IsOk());
  // 3 tasks x 250 milli-GPU
  EXPECT_EQ(total_request(spec).milli_gpu, 750);
  EXPECT_EQ(total_request(spec).gpu_memory_mib, 3 * 8192);
}

TEST(JobSpec, ValidateRejectsInvalidJobId) {
  job_spec spec = training_job();
  spec.id = job_id::invalid();
  EXPECT_THAT(validate(spec), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(spec), ErrorContains("job 'resnet'"));
}

TEST(JobSpec, ValidateRejectsNoRolesAndZeroTasks) {
  job_spec none = training_job();
  none.roles.clear();
  EXPECT_THAT(validate(none), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(none), ErrorContains("job 7: no task roles"));

  job_spec zero = training_job();
  zero.roles[1].task_count = 0;
  EXPECT_THAT(validate(zero), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(zero), ErrorContains("job 7 role 'worker': task count is 0"));
}

TEST(JobSpec, ValidateRejectsEmptyAndDuplicateRoleNames) {
  job_spec unnamed = training_job();
  unnamed.roles[1].name.clear();
  EXPECT_THAT(validate(unnamed), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(unnamed), ErrorContains("job 7 role 1: empty role name"));

  job_spec dup = training_job();
  dup.roles[1].name = "ps";
  EXPECT_THAT(validate(dup), HasErrc(errc::already_exists));
  EXPECT_THAT(validate(dup), ErrorContains("job 7 role 'ps': duplicate role name"));
}

TEST(JobSpec, ValidateRejectsNegativeResources) {
  job_spec cpu = training_job();
  cpu.roles[0].milli_cpu = -1;
  EXPECT_THAT(validate(cpu), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(cpu), ErrorContains("job 7 role 'ps': milli-CPU per task is negative (-1)"));

  job_spec mem = training_job();
  mem.roles[1].memory_mib = -2;
  EXPECT_THAT(validate(mem), HasErrc(errc::invalid_argument));

  job_spec gpu_mem = training_job();
  gpu_mem.roles[1].gpu.memory_mib = -3;
  EXPECT_THAT(validate(gpu_mem), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(gpu_mem), ErrorContains("job 7 role 'worker'"));

  job_spec ext = training_job();
  ext.roles[1].extended = {{"rdma/hca", -1}};
  EXPECT_THAT(validate(ext), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(ext), ErrorContains("job 7 role 'worker': extended resource 'rdma/hca'"));

  job_spec duration = training_job();
  duration.duration_estimate_s = -10;
  EXPECT_THAT(validate(duration), HasErrc(errc::invalid_argument));
}

TEST(JobSpec, ValidateRejectsBadGpuRequests) {
  job_spec frac = training_job();
  frac.roles[1].gpu = gpu_request{2, 500, {}, 0};
  EXPECT_THAT(validate(frac), HasErrc(errc::invalid_argument));
  EXPECT_THAT(validate(frac),
              ErrorContains("job 7 role 'worker': fractional GPU request of 500 milli-GPU needs "
                            "count 1, got 2"));

  job_spec milli = training_job();
  milli.roles[1].gpu = gpu_request{1, 1500, {}, 0};
  EXPECT_THAT(validate(milli), HasErrc(errc::out_of_range));

  // 1024 GPUs x 2^31 MiB per GPU exceeds the per-task limit of 2^40
  job_spec huge = training_job();
  huge.roles[1].gpu = whole_gpus(1024, {}, std::int64_t{1} << 31);
  EXPECT_THAT(validate(huge), HasErrc(errc::out_of_range));
  EXPECT_THAT(validate(huge), ErrorContains("GPU memory MiB per task"));
}

TEST(JobSpec, ValidateRejectsTooManyTasks) {
  job_spec spec = training_job();
  spec.roles[0].task_count = max_tasks_per_job;
  // 2^20 + 4 tasks
  EXPECT_THAT(validate(spec), HasErrc(errc::out_of_range));
  spec.roles[0].task_count = max_tasks_per_job - 4;
  EXPECT_THAT(validate(spec), IsOk());
}

TEST(JobSpec, ReportsTheFirstProblemInRoleOrder) {
  job_spec spec = training_job();
  spec.roles[0].milli_cpu = -1;
  spec.roles[1].task_count = 0;
  // role 'ps' comes first
  EXPECT_THAT(validate(spec), ErrorContains("role 'ps'"));
}

}  // namespace
}  // namespace hetsched
