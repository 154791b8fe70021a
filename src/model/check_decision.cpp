// SPDX-License-Identifier: MIT
// check_decision: the independent feasibility checker behind apply(). It reads the state only
// through its public accessors, so tests and policies can trust it as an outside referee.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/cluster_state.hpp>

namespace hetsched {

namespace {

enum class entry_kind : std::uint8_t {
  preemption,
  suspension,
  migration,
  bind,
  resume,
  deferral,
  release
};

std::string_view to_string(entry_kind k) noexcept {
  switch (k) {
    case entry_kind::preemption: return "preemption";
    case entry_kind::suspension: return "suspension";
    case entry_kind::migration: return "migration";
    case entry_kind::bind: return "bind";
    case entry_kind::resume: return "resume";
    case entry_kind::deferral: return "deferral";
    case entry_kind::release: return "release";
  }
  return "entry";
}

// Pass 1: every entry names a known job, and no job appears twice.
class job_registry {
 public:
  explicit job_registry(const cluster_state& state) : state_(state) {}

  result<void> add(entry_kind kind, job_id job) {
    if (state_.find_job(job) == nullptr) {
      return make_error(errc::not_found, "{} of job {}: unknown job", to_string(kind), job);
    }
    const auto [it, inserted] = seen_.emplace(job, kind);
    if (!inserted) {
      return make_error(errc::invalid_argument, "job {} appears twice in the decision ({} and {})",
                        job, to_string(it->second), to_string(kind));
    }
    return ok();
  }

 private:
  const cluster_state& state_;
  std::map<job_id, entry_kind> seen_;
};

template <typename Entries>
result<void> register_all(job_registry& registry, entry_kind kind, const Entries& entries) {
  for (const auto& e : entries) HETSCHED_TRY(registry.add(kind, e.job));
  return ok();
}

const task_role& role_of(const job_spec& spec, task_id task) {
  const auto role = role_index_of(spec, task);
  HETSCHED_ASSERT(role.has_value(), "task checked to exist");
  return spec.roles[*role];
}

// Pass 2a: the task ids of a bind or migration exist and appear once.
result<void> check_task_ids(entry_kind kind, job_id job, const job_record& rec,
                            const std::vector<task_placement>& tasks) {
  if (tasks.empty()) {
    return make_error(errc::invalid_argument, "{} of job {}: no tasks", to_string(kind), job);
  }
  const std::size_t n = rec.placement.size();
  std::vector<task_id> ids;
  ids.reserve(tasks.size());
  for (const task_placement& p : tasks) {
    if (!p.task.valid() || p.task.index() >= n) {
      return make_error(errc::not_found, "{} of job {} task {}: unknown task (job has {} tasks)",
                        to_string(kind), job, p.task, n);
    }
    ids.push_back(p.task);
  }
  std::sort(ids.begin(), ids.end());
  const auto dup = std::adjacent_find(ids.begin(), ids.end());
  if (dup != ids.end()) {
    return make_error(errc::invalid_argument, "{} of job {} task {}: task listed twice",
                      to_string(kind), job, *dup);
  }
  return ok();
}

// Pass 2b: a new placement is consistent with the task's role and lies on healthy hardware.
result<void> check_placement(const cluster_state& state, entry_kind kind, job_id job,
                             const job_spec& spec, const task_placement& p) {
  const hetsched::cluster& c = state.cluster();
  const task_role& role = role_of(spec, p.task);
  const gpu_request& req = role.gpu;
  const std::string_view what = to_string(kind);
  if (!c.contains(p.node)) {
    return make_error(errc::not_found, "{} of job {} task {}: unknown node {}", what, job, p.task,
                      p.node);
  }
  if (state.node_health(p.node) != health::healthy) {
    return make_error(errc::failed_precondition, "{} of job {} task {}: node {} is {}", what, job,
                      p.task, p.node, state.node_health(p.node));
  }
  if (p.devices.size() != req.count) {
    return make_error(errc::invalid_argument,
                      "{} of job {} task {}: {} devices given, role '{}' requests {}", what, job,
                      p.task, p.devices.size(), role.name, req.count);
  }
  for (std::size_t i = 0; i < p.devices.size(); ++i) {
    const device_share& share = p.devices[i];
    if (!c.contains(share.device)) {
      return make_error(errc::not_found, "{} of job {} task {}: unknown device {}", what, job,
                        p.task, share.device);
    }
    const device_info& dev = c.device(share.device);
    if (dev.node != p.node) {
      return make_error(errc::invalid_argument,
                        "{} of job {} task {}: device {} is on node {}, not node {}", what, job,
                        p.task, share.device, dev.node, p.node);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (p.devices[j].device == share.device) {
        return make_error(errc::invalid_argument, "{} of job {} task {}: device {} listed twice",
                          what, job, p.task, share.device);
      }
    }
    if (!req.type.empty() && dev.type != req.type) {
      return make_error(errc::invalid_argument,
                        "{} of job {} task {}: device {} is {}, role '{}' requests {}", what, job,
                        p.task, share.device, dev.type, role.name, req.type);
    }
    if (share.milli_gpu != std::int64_t{req.milli_per_gpu}) {
      return make_error(
          errc::invalid_argument,
          "{} of job {} task {}: device {} share is {} milli-GPU, role '{}' requests {}", what, job,
          p.task, share.device, share.milli_gpu, role.name, req.milli_per_gpu);
    }
    if (share.gpu_memory_mib != req.memory_mib) {
      return make_error(
          errc::invalid_argument,
          "{} of job {} task {}: device {} share is {} MiB GPU memory, role '{}' requests {}", what,
          job, p.task, share.device, share.gpu_memory_mib, role.name, req.memory_mib);
    }
    if (state.device_health(share.device) != health::healthy) {
      return make_error(errc::failed_precondition, "{} of job {} task {}: device {} is {}", what,
                        job, p.task, share.device, state.device_health(share.device));
    }
  }
  return ok();
}

result<void> check_preemption(const cluster_state& state, const preemption& p) {
  const job_record& rec = *state.find_job(p.job);
  const job_state s = rec.status.state;
  if (s != job_state::scheduled && s != job_state::running && s != job_state::suspended) {
    return make_error(
        errc::failed_precondition,
        "preemption of job {}: job is {}, preemption needs scheduled, running or suspended", p.job,
        s);
  }
  if (!rec.spec.preemptible) {
    return make_error(errc::failed_precondition, "preemption of job {}: job is not preemptible",
                      p.job);
  }
  return ok();
}

result<void> check_suspension(const cluster_state& state, const suspension& s) {
  const job_state st = state.find_job(s.job)->status.state;
  if (st != job_state::running) {
    return make_error(errc::failed_precondition,
                      "suspension of job {}: job is {}, suspension needs running", s.job, st);
  }
  return ok();
}

result<void> check_migration(const cluster_state& state, const migration& m) {
  const job_record& rec = *state.find_job(m.job);
  const job_state st = rec.status.state;
  if (st != job_state::scheduled && st != job_state::running) {
    return make_error(errc::failed_precondition,
                      "migration of job {}: job is {}, migration needs scheduled or running", m.job,
                      st);
  }
  HETSCHED_TRY(check_task_ids(entry_kind::migration, m.job, rec, m.tasks));
  for (const task_placement& p : m.tasks) {
    if (!rec.placement[p.task.index()].node.valid()) {
      return make_error(errc::failed_precondition,
                        "migration of job {} task {}: task is not placed", m.job, p.task);
    }
    HETSCHED_TRY(check_placement(state, entry_kind::migration, m.job, rec.spec, p));
  }
  return ok();
}

result<void> check_bind(const cluster_state& state, const binding& b) {
  const job_record& rec = *state.find_job(b.job);
  const job_state st = rec.status.state;
  const bool more_tasks =
      !rec.spec.gang && (st == job_state::scheduled || st == job_state::running);
  if (st != job_state::queued && !more_tasks) {
    return make_error(errc::failed_precondition,
                      "bind of job {}: job is {}, bind needs queued (or scheduled or running for a "
                      "non-gang job)",
                      b.job, st);
  }
  HETSCHED_TRY(check_task_ids(entry_kind::bind, b.job, rec, b.tasks));
  if (rec.spec.gang && b.tasks.size() != rec.placement.size()) {
    return make_error(errc::invalid_argument,
                      "bind of job {}: gang job has {} tasks, bind covers {}", b.job,
                      rec.placement.size(), b.tasks.size());
  }
  for (const task_placement& p : b.tasks) {
    const task_placement& current = rec.placement[p.task.index()];
    if (current.node.valid()) {
      return make_error(errc::failed_precondition,
                        "bind of job {} task {}: task is already bound to node {}", b.job, p.task,
                        current.node);
    }
    HETSCHED_TRY(check_placement(state, entry_kind::bind, b.job, rec.spec, p));
  }
  return ok();
}

result<void> check_release(const cluster_state& state, const partial_release& r) {
  const job_record& rec = *state.find_job(r.job);
  const job_state st = rec.status.state;
  if (st != job_state::scheduled && st != job_state::running) {
    return make_error(errc::failed_precondition,
                      "release of job {}: job is {}, release needs scheduled or running", r.job,
                      st);
  }
  if (rec.spec.gang) {
    return make_error(errc::failed_precondition,
                      "release of job {}: gang job (its tasks go all or nothing; preempt it)",
                      r.job);
  }
  if (!rec.spec.preemptible) {
    return make_error(errc::failed_precondition, "release of job {}: job is not preemptible",
                      r.job);
  }
  if (r.tasks.empty()) {
    return make_error(errc::invalid_argument, "release of job {}: no tasks", r.job);
  }
  const std::size_t n = rec.placement.size();
  std::vector<task_id> ids(r.tasks);
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!ids[i].valid() || ids[i].index() >= n) {
      return make_error(errc::not_found,
                        "release of job {} task {}: unknown task (job has {} tasks)", r.job, ids[i],
                        n);
    }
    if (i > 0 && ids[i] == ids[i - 1]) {
      return make_error(errc::invalid_argument, "release of job {} task {}: task listed twice",
                        r.job, ids[i]);
    }
    if (!rec.placement[ids[i].index()].node.valid()) {
      return make_error(errc::failed_precondition, "release of job {} task {}: task is not placed",
                        r.job, ids[i]);
    }
  }
  const auto placed = static_cast<std::size_t>(
      std::count_if(rec.placement.begin(), rec.placement.end(),
                    [](const task_placement& p) { return p.node.valid(); }));
  if (placed == ids.size()) {
    return make_error(
        errc::failed_precondition,
        "release of job {}: it would release all {} placed tasks (preempt it instead)", r.job,
        placed);
  }
  return ok();
}

result<void> check_resume(const cluster_state& state, const resumption& r) {
  const job_record& rec = *state.find_job(r.job);
  const job_state st = rec.status.state;
  if (st != job_state::suspended) {
    return make_error(errc::failed_precondition,
                      "resume of job {}: job is {}, resume needs suspended", r.job, st);
  }
  for (const task_placement& p : rec.placement) {
    if (!p.node.valid()) continue;
    if (state.node_health(p.node) != health::healthy) {
      return make_error(errc::failed_precondition, "resume of job {} task {}: node {} is {}", r.job,
                        p.task, p.node, state.node_health(p.node));
    }
    for (const device_share& share : p.devices) {
      if (state.device_health(share.device) != health::healthy) {
        return make_error(errc::failed_precondition, "resume of job {} task {}: device {} is {}",
                          r.job, p.task, share.device, state.device_health(share.device));
      }
    }
  }
  return ok();
}

// Pass 3: free capacity after the decision's releases, consumed acquisition by acquisition.
// Only touched devices and nodes are materialized, in id-ordered maps.
class capacity_ledger {
 public:
  explicit capacity_ledger(const cluster_state& state) : state_(state) {}

  void release(const job_spec& spec, const task_placement& p) {
    resource_vector& node = node_free(p.node);
    node += host_request(role_of(spec, p.task));
    for (const device_share& share : p.devices) {
      device_capacity& dev = device_free(share.device);
      dev.milli_gpu += share.milli_gpu;
      dev.gpu_memory_mib += share.gpu_memory_mib;
    }
  }

  void release_held(const job_record& rec) {
    if (!holds_resources(rec.status.state)) return;
    for (const task_placement& p : rec.placement) {
      if (p.node.valid()) release(rec.spec, p);
    }
  }

  result<void> acquire(entry_kind kind, job_id job, const job_spec& spec, const task_placement& p) {
    const std::string_view what = to_string(kind);
    for (const device_share& share : p.devices) {
      device_capacity& dev = device_free(share.device);
      if (dev.milli_gpu < share.milli_gpu) {
        return make_error(errc::failed_precondition,
                          "{} of job {} task {}: device {} has {} milli-GPU free, needs {}", what,
                          job, p.task, share.device, dev.milli_gpu, share.milli_gpu);
      }
      if (dev.gpu_memory_mib < share.gpu_memory_mib) {
        return make_error(errc::failed_precondition,
                          "{} of job {} task {}: device {} has {} MiB GPU memory free, needs {}",
                          what, job, p.task, share.device, dev.gpu_memory_mib,
                          share.gpu_memory_mib);
      }
      dev.milli_gpu -= share.milli_gpu;
      dev.gpu_memory_mib -= share.gpu_memory_mib;
    }
    const task_role& role = role_of(spec, p.task);
    resource_vector& node = node_free(p.node);
    if (node.milli_cpu < role.milli_cpu) {
      return make_error(errc::failed_precondition,
                        "{} of job {} task {}: node {} has {} milli-CPU free, needs {}", what, job,
                        p.task, p.node, node.milli_cpu, role.milli_cpu);
    }
    if (node.memory_mib < role.memory_mib) {
      return make_error(errc::failed_precondition,
                        "{} of job {} task {}: node {} has {} MiB memory free, needs {}", what, job,
                        p.task, p.node, node.memory_mib, role.memory_mib);
    }
    for (const auto& [name, amount] : role.extended) {
      const std::int64_t free = node.extended_amount(name);
      if (free < amount) {
        return make_error(errc::failed_precondition,
                          "{} of job {} task {}: node {} has {} of '{}' free, needs {}", what, job,
                          p.task, p.node, free, name, amount);
      }
    }
    node -= host_request(role);
    return ok();
  }

 private:
  // The node-level part of a task's request; GPU amounts are accounted per device.
  static resource_vector host_request(const task_role& role) {
    resource_vector r = task_request(role);
    r.milli_gpu = 0;
    r.gpu_memory_mib = 0;
    return r;
  }

  device_capacity& device_free(device_id id) {
    const auto [it, inserted] = devices_.try_emplace(id);
    if (inserted) it->second = state_.device_free(id);
    return it->second;
  }

  resource_vector& node_free(node_id id) {
    const auto [it, inserted] = nodes_.try_emplace(id);
    if (inserted) it->second = state_.node_free(id);
    return it->second;
  }

  const cluster_state& state_;
  std::map<device_id, device_capacity> devices_;
  std::map<node_id, resource_vector> nodes_;
};

result<void> check_capacity(const cluster_state& state, const decision& d) {
  capacity_ledger ledger(state);
  for (const preemption& p : d.preemptions) ledger.release_held(*state.find_job(p.job));
  for (const suspension& s : d.suspensions) ledger.release_held(*state.find_job(s.job));
  for (const partial_release& r : d.releases) {
    const job_record& rec = *state.find_job(r.job);
    for (const task_id t : r.tasks) ledger.release(rec.spec, rec.placement[t.index()]);
  }
  for (const migration& m : d.migrations) {
    const job_record& rec = *state.find_job(m.job);
    for (const task_placement& p : m.tasks) ledger.release(rec.spec, rec.placement[p.task.index()]);
  }
  for (const binding& b : d.binds) {
    const job_record& rec = *state.find_job(b.job);
    for (const task_placement& p : b.tasks) {
      HETSCHED_TRY(ledger.acquire(entry_kind::bind, b.job, rec.spec, p));
    }
  }
  for (const resumption& r : d.resumes) {
    const job_record& rec = *state.find_job(r.job);
    for (const task_placement& p : rec.placement) {
      if (p.node.valid()) HETSCHED_TRY(ledger.acquire(entry_kind::resume, r.job, rec.spec, p));
    }
  }
  for (const migration& m : d.migrations) {
    const job_record& rec = *state.find_job(m.job);
    for (const task_placement& p : m.tasks) {
      HETSCHED_TRY(ledger.acquire(entry_kind::migration, m.job, rec.spec, p));
    }
  }
  return ok();
}

}  // namespace

result<void> check_decision(const cluster_state& state, const decision& d) {
  job_registry registry(state);
  HETSCHED_TRY(register_all(registry, entry_kind::preemption, d.preemptions));
  HETSCHED_TRY(register_all(registry, entry_kind::suspension, d.suspensions));
  HETSCHED_TRY(register_all(registry, entry_kind::migration, d.migrations));
  HETSCHED_TRY(register_all(registry, entry_kind::bind, d.binds));
  HETSCHED_TRY(register_all(registry, entry_kind::resume, d.resumes));
  HETSCHED_TRY(register_all(registry, entry_kind::deferral, d.deferrals));
  HETSCHED_TRY(register_all(registry, entry_kind::release, d.releases));

  for (const preemption& p : d.preemptions) HETSCHED_TRY(check_preemption(state, p));
  for (const suspension& s : d.suspensions) HETSCHED_TRY(check_suspension(state, s));
  for (const migration& m : d.migrations) HETSCHED_TRY(check_migration(state, m));
  for (const binding& b : d.binds) HETSCHED_TRY(check_bind(state, b));
  for (const resumption& r : d.resumes) HETSCHED_TRY(check_resume(state, r));
  for (const partial_release& r : d.releases) HETSCHED_TRY(check_release(state, r));

  return check_capacity(state, d);
}

}  // namespace hetsched
