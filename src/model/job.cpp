// SPDX-License-Identifier: MIT
// Job spec validation and per-task request lookup.
#include <string_view>

#include <hetsched/model/job.hpp>

namespace hetsched {

namespace {

result<void> check_amount(const job_spec& spec, const task_role& role, std::string_view what,
                          std::int64_t amount) {
  if (amount < 0) {
    return make_error(errc::invalid_argument, "job {} role '{}': {} is negative ({})", spec.id,
                      role.name, what, amount);
  }
  if (amount > max_resource_amount) {
    return make_error(errc::out_of_range, "job {} role '{}': {} is {}, exceeds {}", spec.id,
                      role.name, what, amount, max_resource_amount);
  }
  return ok();
}

result<void> validate_role(const job_spec& spec, const task_role& role) {
  if (role.task_count == 0) {
    return make_error(errc::invalid_argument, "job {} role '{}': task count is 0", spec.id,
                      role.name);
  }
  HETSCHED_TRY(check_amount(spec, role, "milli-CPU per task", role.milli_cpu));
  HETSCHED_TRY(check_amount(spec, role, "memory MiB per task", role.memory_mib));
  if (auto r = validate(role.gpu); !r) {
    return make_error(r.error().code, "job {} role '{}': {}", spec.id, role.name,
                      r.error().message);
  }
  // Both factors are bounded by validate(gpu_request), so the product cannot overflow.
  HETSCHED_TRY(check_amount(spec, role, "GPU memory MiB per task",
                            std::int64_t{role.gpu.count} * role.gpu.memory_mib));
  if (auto r = validate(role.extended); !r) {
    return make_error(r.error().code, "job {} role '{}': {}", spec.id, role.name,
                      r.error().message);
  }
  return ok();
}

}  // namespace

result<void> validate(const job_spec& spec) {
  if (!spec.id.valid()) {
    return make_error(errc::invalid_argument, "job '{}': the job id is invalid", spec.name);
  }
  if (spec.roles.empty()) {
    return make_error(errc::invalid_argument, "job {}: no task roles", spec.id);
  }
  std::uint64_t tasks = 0;
  for (std::size_t i = 0; i < spec.roles.size(); ++i) {
    const task_role& role = spec.roles[i];
    if (role.name.empty()) {
      return make_error(errc::invalid_argument, "job {} role {}: empty role name", spec.id, i);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (spec.roles[j].name == role.name) {
        return make_error(errc::already_exists,
                          "job {} role '{}': duplicate role name (roles {} and {})", spec.id,
                          role.name, j, i);
      }
    }
    HETSCHED_TRY(validate_role(spec, role));
    tasks += role.task_count;
    if (tasks > max_tasks_per_job) {
      return make_error(errc::out_of_range, "job {} role '{}': the job has more than {} tasks",
                        spec.id, role.name, max_tasks_per_job);
    }
  }
  if (spec.duration_estimate_s && *spec.duration_estimate_s < 0) {
    return make_error(errc::invalid_argument, "job {}: duration estimate is negative ({} s)",
                      spec.id, *spec.duration_estimate_s);
  }
  return ok();
}

std::uint32_t task_count(const job_spec& spec) noexcept {
  std::uint32_t n = 0;
  for (const task_role& role : spec.roles) n += role.task_count;
  return n;
}

std::int64_t total_milli_gpu(const job_spec& spec) noexcept {
  std::int64_t m = 0;
  for (const task_role& role : spec.roles) {
    m += std::int64_t{role.task_count} * role.gpu.total_milli_gpu();
  }
  return m;
}

task_id first_task(const job_spec& spec, std::size_t role_index) noexcept {
  HETSCHED_ASSERT(role_index <= spec.roles.size(), "role index out of range");
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < role_index; ++i) n += spec.roles[i].task_count;
  return task_id(n);
}

std::optional<std::size_t> role_index_of(const job_spec& spec, task_id task) noexcept {
  if (!task.valid()) return std::nullopt;
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < spec.roles.size(); ++i) {
    end += spec.roles[i].task_count;
    if (task.value() < end) return i;
  }
  return std::nullopt;
}

resource_vector task_request(const task_role& role) {
  resource_vector r;
  r.milli_gpu = role.gpu.total_milli_gpu();
  r.milli_cpu = role.milli_cpu;
  r.memory_mib = role.memory_mib;
  r.gpu_memory_mib = std::int64_t{role.gpu.count} * role.gpu.memory_mib;
  for (const auto& [name, amount] : role.extended) r.set_extended(name, amount);
  return r;
}

result<resource_vector> task_request(const job_spec& spec, task_id task) {
  const auto role = role_index_of(spec, task);
  if (!role) {
    return make_error(errc::not_found, "job {} has no task {} ({} tasks)", spec.id, task,
                      task_count(spec));
  }
  return task_request(spec.roles[*role]);
}

resource_vector total_request(const job_spec& spec) {
  resource_vector total;
  for (const task_role& role : spec.roles)
    total += task_request(role) * std::int64_t{role.task_count};
  return total;
}

}  // namespace hetsched
