// SPDX-License-Identifier: MIT
// gandiva_time_slicing: per-server rotation of time-sliced jobs by least attained time.
//
// Jobs are classified once (contender of one server or not); each server with a suspended
// contender is then solved on a local copy of its devices' free milli-GPU and GPU memory and its
// node's free resources.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/policies/gandiva_time_slicing.hpp>

namespace hetsched {

decision to_decision(const time_slice_plan& plan) {
  decision d;
  for (const job_id j : plan.suspend) d.suspensions.push_back(suspension{j});
  for (const job_id j : plan.resume) d.resumes.push_back(resumption{j});
  return d;
}

namespace {

struct contender {
  job_id job;
  const job_record* rec = nullptr;
  bool running = false;
  bool is_protected = false;
  std::int64_t attained = 0;
  std::int64_t since = 0;
};

/// Returns the single node all placed tasks of `rec` use, or invalid if none or several.
node_id single_node(const job_record& rec) {
  node_id n = node_id::invalid();
  for (const task_placement& p : rec.placement) {
    if (!p.node.valid()) continue;
    if (n.valid() && n != p.node) return node_id::invalid();
    n = p.node;
  }
  return n;
}

resource_vector request_of(const job_spec& spec, task_id task) {
  const auto role = role_index_of(spec, task);
  return role ? task_request(spec.roles[*role]) : resource_vector{};
}

/// The free capacity of one server's devices and node while its plan is built.
struct server_room {
  std::map<device_id, device_capacity> devices;
  resource_vector node;

  device_capacity& device(const cluster_state& state, device_id d) {
    auto it = devices.find(d);
    if (it == devices.end()) it = devices.emplace(d, state.device_free(d)).first;
    return it->second;
  }
  void release(const cluster_state& state, const job_record& rec) {
    for (const task_placement& p : rec.placement) {
      if (!p.node.valid()) continue;
      node += request_of(rec.spec, p.task);
      for (const device_share& s : p.devices) {
        device_capacity& c = device(state, s.device);
        c.milli_gpu += s.milli_gpu;
        c.gpu_memory_mib += s.gpu_memory_mib;
      }
    }
  }
  /// Takes `rec`'s placement if it fits; returns whether it did.
  bool take(const cluster_state& state, const job_record& rec, bool need_healthy) {
    resource_vector need;
    std::map<device_id, device_capacity> want;
    for (const task_placement& p : rec.placement) {
      if (!p.node.valid()) continue;
      if (need_healthy && state.node_health(p.node) != health::healthy) return false;
      need += request_of(rec.spec, p.task);
      for (const device_share& s : p.devices) {
        if (need_healthy && state.device_health(s.device) != health::healthy) return false;
        device_capacity& w = want[s.device];
        w.milli_gpu += s.milli_gpu;
        w.gpu_memory_mib += s.gpu_memory_mib;
      }
    }
    if (!fits(need, node)) return false;
    for (const auto& [d, w] : want) {
      const device_capacity& c = device(state, d);
      if (w.milli_gpu > c.milli_gpu || w.gpu_memory_mib > c.gpu_memory_mib) return false;
    }
    node -= need;
    for (const auto& [d, w] : want) {
      device_capacity& c = device(state, d);
      c.milli_gpu -= w.milli_gpu;
      c.gpu_memory_mib -= w.gpu_memory_mib;
    }
    return true;
  }
};

}  // namespace

result<time_slice_plan> plan_time_slices(const cluster_state& state,
                                         std::span<const slice_account> accounts,
                                         const time_slice_params& params, std::int64_t now_s) {
  if (params.quantum_s <= 0)
    return make_error(errc::invalid_argument, "time slicing: quantum_s is {}, must be > 0",
                      params.quantum_s);
  std::map<job_id, const slice_account*> by_job;
  for (const slice_account& a : accounts) {
    if (state.find_job(a.job) == nullptr)
      return make_error(errc::not_found, "time slicing: account of unknown job {}", a.job);
    if (a.attained_s < 0)
      return make_error(errc::invalid_argument, "time slicing: job {} has attained_s {} < 0", a.job,
                        a.attained_s);
    if (a.since_s > now_s)
      return make_error(errc::invalid_argument,
                        "time slicing: job {} has since_s {} after now_s {}", a.job, a.since_s,
                        now_s);
    if (!by_job.emplace(a.job, &a).second)
      return make_error(errc::invalid_argument, "time slicing: job {} has two accounts", a.job);
  }

  std::map<node_id, std::vector<contender>> servers;
  for (const auto& [id, rec] : state.jobs()) {
    const job_state s = rec.status.state;
    const bool running = s == job_state::running && rec.spec.preemptible;
    if (!running && s != job_state::suspended) continue;
    const node_id n = single_node(rec);
    if (!n.valid()) continue;
    contender c{id, &rec, running, false, 0, 0};
    const auto it = by_job.find(id);
    if (it != by_job.end()) {
      c.attained = it->second->attained_s;
      c.since = it->second->since_s;
      if (running) {
        c.attained += now_s - c.since;
        c.is_protected = now_s - c.since < params.quantum_s;
      }
    } else {
      c.since = now_s - params.quantum_s;
    }
    servers[n].push_back(c);
  }

  time_slice_plan plan;
  for (auto& [node, list] : servers) {
    if (std::none_of(list.begin(), list.end(), [](const contender& c) { return !c.running; }))
      continue;
    server_room room{{}, state.node_free(node)};
    std::vector<contender*> order;
    for (contender& c : list) {
      if (c.running && !c.is_protected) room.release(state, *c.rec);
      if (!c.is_protected) order.push_back(&c);
    }
    std::sort(order.begin(), order.end(), [](const contender* a, const contender* b) {
      return std::tuple(a->attained, !a->running, a->job) <
             std::tuple(b->attained, !b->running, b->job);
    });
    bool waiting = false;
    std::optional<std::int64_t> review;
    const auto consider = [&](std::int64_t t) { review = review ? std::min(*review, t) : t; };
    for (const contender& c : list)
      if (c.is_protected) consider(c.since + params.quantum_s);
    for (const contender* c : order) {
      if (room.take(state, *c->rec, !c->running)) {
        if (!c->running) plan.resume.push_back(c->job);
        consider(now_s + params.quantum_s);
      } else if (c->running) {
        plan.suspend.push_back(c->job);
        waiting = true;
      } else {
        waiting = true;
      }
    }
    if (waiting && review)
      plan.next_review_s = plan.next_review_s ? std::min(*plan.next_review_s, *review) : *review;
  }
  std::sort(plan.suspend.begin(), plan.suspend.end());
  std::sort(plan.resume.begin(), plan.resume.end());
  return plan;
}

}  // namespace hetsched
