// SPDX-License-Identifier: MIT
// cluster_state: accessors, platform events (submit, record, health) and the commit of apply().
// The feasibility checks live in check_decision.cpp.
#include <algorithm>
#include <tuple>
#include <utility>

#include <hetsched/model/cluster_state.hpp>

namespace hetsched {

cluster_state::cluster_state(std::shared_ptr<const hetsched::cluster> description)
    : cluster_(std::move(description)) {
  HETSCHED_ASSERT(cluster_ != nullptr, "cluster_state needs a cluster");
  const hetsched::cluster& c = *cluster_;
  node_health_.reserve(c.node_count());
  for (const node_info& n : c.nodes()) node_health_.push_back(n.health);
  device_health_.reserve(c.device_count());
  for (const device_info& d : c.all_devices()) device_health_.push_back(d.health);
  node_used_.resize(c.node_count());
  device_used_.resize(c.device_count());
}

cluster_state::cluster_state(hetsched::cluster description)
    : cluster_state(std::make_shared<const hetsched::cluster>(std::move(description))) {}

result<void> cluster_state::set_node_health(node_id id, health h) {
  if (!cluster_->contains(id)) return make_error(errc::not_found, "unknown node {}", id);
  node_health_[id] = h;
  return ok();
}

result<void> cluster_state::set_device_health(device_id id, health h) {
  if (!cluster_->contains(id)) return make_error(errc::not_found, "unknown device {}", id);
  device_health_[id] = h;
  return ok();
}

result<void> cluster_state::submit(job_spec spec) {
  HETSCHED_TRY(validate(spec));
  const auto slot = jobs_.lower_bound(spec.id);
  if (slot != jobs_.end() && slot->first == spec.id) {
    return make_error(errc::already_exists, "job {} already exists", spec.id);
  }
  job_record rec;
  const std::uint32_t tasks = task_count(spec);
  rec.placement.reserve(tasks);
  for (std::uint32_t t = 0; t < tasks; ++t) {
    rec.placement.push_back(task_placement{task_id(t), node_id::invalid(), {}});
  }
  const job_id id = spec.id;
  rec.spec = std::move(spec);
  jobs_.emplace_hint(slot, id, std::move(rec));
  return ok();
}

result<void> cluster_state::forget(job_id id) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return make_error(errc::not_found, "unknown job {}", id);
  if (!is_terminal(it->second.status.state)) {
    return make_error(errc::failed_precondition,
                      "job {} is {}, only terminal jobs can be forgotten", id,
                      it->second.status.state);
  }
  jobs_.erase(it);
  return ok();
}

device_capacity cluster_state::device_free(device_id id) const noexcept {
  const device_usage& used = device_used_[id];
  return device_capacity{milli_per_gpu_unit - used.milli_gpu,
                         cluster_->device(id).memory_mib - used.gpu_memory_mib};
}

resource_vector cluster_state::node_free(node_id id) const {
  return cluster_->node(id).allocatable - node_used_[id];
}

const job_record* cluster_state::find_job(job_id id) const noexcept {
  const auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

result<job_status> cluster_state::status(job_id id) const {
  const job_record* rec = find_job(id);
  if (rec == nullptr) return make_error(errc::not_found, "unknown job {}", id);
  return rec->status;
}

result<std::span<const task_placement>> cluster_state::placement(job_id id) const {
  const job_record* rec = find_job(id);
  if (rec == nullptr) return make_error(errc::not_found, "unknown job {}", id);
  return std::span<const task_placement>(rec->placement);
}

bool operator==(const cluster_state& a, const cluster_state& b) {
  const bool same_cluster = a.cluster_ == b.cluster_ || *a.cluster_ == *b.cluster_;
  return same_cluster && a.node_health_ == b.node_health_ && a.device_health_ == b.device_health_ &&
         a.node_used_ == b.node_used_ && a.device_used_ == b.device_used_ &&
         a.total_used_ == b.total_used_ && a.jobs_ == b.jobs_;
}

namespace {

// The node-level resources of one placed task: CPU, memory and extended resources from its role,
// GPU amounts from its device shares.
resource_vector node_amount(const job_spec& spec, const task_placement& placement) {
  const auto role = role_index_of(spec, placement.task);
  HETSCHED_ASSERT(role.has_value(), "placement of an unknown task");
  const task_role& r = spec.roles[*role];
  resource_vector amount;
  amount.milli_cpu = r.milli_cpu;
  amount.memory_mib = r.memory_mib;
  for (const auto& [name, value] : r.extended) amount.set_extended(name, value);
  for (const device_share& share : placement.devices) {
    amount.milli_gpu += share.milli_gpu;
    amount.gpu_memory_mib += share.gpu_memory_mib;
  }
  return amount;
}

bool holder_less(const device_holder& h, const std::pair<job_id, task_id>& key) noexcept {
  return std::tie(h.job, h.task) < std::tie(key.first, key.second);
}

}  // namespace

void cluster_state::acquire(job_id job, const job_spec& spec, const task_placement& placement) {
  const resource_vector amount = node_amount(spec, placement);
  node_used_[placement.node] += amount;
  total_used_ += amount;
  for (const device_share& share : placement.devices) {
    device_usage& usage = device_used_[share.device];
    usage.milli_gpu += share.milli_gpu;
    usage.gpu_memory_mib += share.gpu_memory_mib;
    const auto key = std::make_pair(job, placement.task);
    const auto at = std::lower_bound(usage.holders.begin(), usage.holders.end(), key, holder_less);
    HETSCHED_ASSERT(at == usage.holders.end() || at->job != job || at->task != placement.task,
                    "task already holds this device");
    usage.holders.insert(at,
                         device_holder{job, placement.task, share.milli_gpu, share.gpu_memory_mib});
  }
}

void cluster_state::release(job_id job, const job_spec& spec, const task_placement& placement) {
  const resource_vector amount = node_amount(spec, placement);
  node_used_[placement.node] -= amount;
  total_used_ -= amount;
  for (const device_share& share : placement.devices) {
    device_usage& usage = device_used_[share.device];
    usage.milli_gpu -= share.milli_gpu;
    usage.gpu_memory_mib -= share.gpu_memory_mib;
    const auto key = std::make_pair(job, placement.task);
    const auto at = std::lower_bound(usage.holders.begin(), usage.holders.end(), key, holder_less);
    HETSCHED_ASSERT(at != usage.holders.end() && at->job == job && at->task == placement.task,
                    "task does not hold this device");
    usage.holders.erase(at);
  }
}

void cluster_state::release_held(job_id job, job_record& rec) {
  if (!holds_resources(rec.status.state)) return;
  for (const task_placement& p : rec.placement) {
    if (p.node.valid()) release(job, rec.spec, p);
  }
}

void cluster_state::clear_placement(job_record& rec) noexcept {
  for (task_placement& p : rec.placement) {
    p.node = node_id::invalid();
    p.devices.clear();
  }
}

result<void> record(cluster_state& state, job_id job, job_event event) {
  const auto it = state.jobs_.find(job);
  if (it == state.jobs_.end()) return make_error(errc::not_found, "job {}: unknown job", job);
  switch (event) {
    case job_event::schedule:
    case job_event::preempt:
    case job_event::suspend:
    case job_event::resume:
      return make_error(errc::invalid_argument,
                        "job {}: event '{}' comes from apply(), not record()", job, event);
    default: break;
  }
  job_record& rec = it->second;
  auto next = next_status(rec.status, event, rec.spec.retry_limit);
  if (!next) {
    return make_error(next.error().code, "job {}: {}", job, next.error().message);
  }
  if (event == job_event::succeed || event == job_event::fail || event == job_event::cancel) {
    state.release_held(job, rec);
    cluster_state::clear_placement(rec);
  }
  rec.status = *next;
  return ok();
}

result<void> apply(cluster_state& state, const decision& d) {
  HETSCHED_TRY(check_decision(state, d));
  // check_decision proved every transition legal and every acquisition within capacity; from
  // here on nothing can fail except allocation.
  const auto commit = [](job_record& rec, job_event event) {
    [[maybe_unused]] const auto r = transition(rec.status, event, rec.spec.retry_limit);
    HETSCHED_ASSERT(r.has_value(), "transition accepted by check_decision failed");
  };
  for (const preemption& p : d.preemptions) {
    job_record& rec = state.jobs_.at(p.job);
    state.release_held(p.job, rec);
    cluster_state::clear_placement(rec);
    commit(rec, job_event::preempt);
  }
  for (const suspension& s : d.suspensions) {
    job_record& rec = state.jobs_.at(s.job);
    state.release_held(s.job, rec);
    commit(rec, job_event::suspend);
  }
  for (const partial_release& r : d.releases) {
    job_record& rec = state.jobs_.at(r.job);
    for (const task_id t : r.tasks) {
      task_placement& p = rec.placement[t.index()];
      state.release(r.job, rec.spec, p);
      p.node = node_id::invalid();
      p.devices.clear();
    }
  }
  for (const migration& m : d.migrations) {
    job_record& rec = state.jobs_.at(m.job);
    for (const task_placement& target : m.tasks) {
      state.release(m.job, rec.spec, rec.placement[target.task.index()]);
    }
  }
  for (const migration& m : d.migrations) {
    job_record& rec = state.jobs_.at(m.job);
    for (const task_placement& target : m.tasks) {
      rec.placement[target.task.index()] = target;
      state.acquire(m.job, rec.spec, target);
    }
  }
  for (const binding& b : d.binds) {
    job_record& rec = state.jobs_.at(b.job);
    for (const task_placement& target : b.tasks) {
      rec.placement[target.task.index()] = target;
      state.acquire(b.job, rec.spec, target);
    }
    if (rec.status.state == job_state::queued) commit(rec, job_event::schedule);
  }
  for (const resumption& r : d.resumes) {
    job_record& rec = state.jobs_.at(r.job);
    for (const task_placement& p : rec.placement) {
      if (p.node.valid()) state.acquire(r.job, rec.spec, p);
    }
    commit(rec, job_event::resume);
  }
  return ok();
}

}  // namespace hetsched
