// SPDX-License-Identifier: MIT
// grow_shrink: grow elastic jobs onto free GPUs round-robin, or shrink them when jobs wait.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/policies/grow_shrink.hpp>

namespace hetsched {

decision to_decision(const grow_shrink_plan& plan) {
  decision d;
  d.binds = plan.grow;
  for (const task_release& r : plan.shrink) d.releases.push_back(partial_release{r.job, r.tasks});
  return d;
}

namespace {

struct elastic_info {
  const job_record* rec = nullptr;
  std::uint32_t base = 0;
  std::uint32_t grown = 0;  // GPUs in bound optional tasks
};

std::uint32_t task_gpus(const job_spec& spec, task_id t) {
  const auto role = role_index_of(spec, t);
  return role ? spec.roles[*role].gpu.count : 0;
}

/// Free devices and node room as the grow bindings planned so far leave them.
class free_model {
 public:
  free_model(const cluster_state& state, const node_score_table& scores)
      : state_(state), c_(state.cluster()), scores_(scores) {
    free_.assign(c_.device_count(), 0);
    nfree_.assign(c_.node_count(), 0);
    for (std::size_t i = 0; i < c_.node_count(); ++i) {
      const node_id n(static_cast<std::uint32_t>(i));
      if (state.node_health(n) != health::healthy) continue;
      const node_info& info = c_.node(n);
      for (std::uint32_t k = 0; k < info.device_count; ++k) {
        const device_id d(info.first_device.value() + k);
        if (state.device_health(d) == health::healthy && state.device_used(d).holders.empty()) {
          free_[d.index()] = 1;
          ++nfree_[i];
        }
      }
      total_ += nfree_[i];
      if (nfree_[i] > 0) by_free_.insert({nfree_[i], n.value()});
    }
  }

  [[nodiscard]] std::uint32_t total() const noexcept { return total_; }

  /// Returns a placement of task `t` of `spec` on node `n`, or nothing.
  [[nodiscard]] std::optional<task_placement> fit(node_id n, const job_spec& spec, task_id t) {
    if (state_.node_health(n) != health::healthy) return std::nullopt;
    const task_role& role = spec.roles[role_index_of(spec, t).value_or(0)];
    if (nfree_[n.index()] < role.gpu.count) return std::nullopt;
    if (!fits(task_request(role), room(n))) return std::nullopt;
    const node_info& info = c_.node(n);
    std::vector<std::uint32_t> available;
    for (std::uint32_t k = 0; k < info.device_count; ++k) {
      const device_id d(info.first_device.value() + k);
      const device_info& dev = c_.device(d);
      if (free_[d.index()] == 0) continue;
      if (!role.gpu.type.empty() && dev.type != role.gpu.type) continue;
      if (dev.memory_mib < role.gpu.memory_mib) continue;
      available.push_back(k);
    }
    if (available.size() < role.gpu.count) return std::nullopt;
    task_placement p{t, n, {}};
    for (const std::uint32_t k : pick_gpus(scores_.scores(n), available, role.gpu.count))
      p.devices.push_back(device_share{device_id(info.first_device.value() + k),
                                       role.gpu.milli_per_gpu, role.gpu.memory_mib});
    return p;
  }

  void take(const job_spec& spec, const task_placement& p) {
    const std::size_t i = p.node.index();
    if (nfree_[i] > 0) by_free_.erase({nfree_[i], p.node.value()});
    for (const device_share& s : p.devices) {
      free_[s.device.index()] = 0;
      --nfree_[i];
      --total_;
    }
    if (nfree_[i] > 0) by_free_.insert({nfree_[i], p.node.value()});
    room(p.node) -= task_request(spec.roles[role_index_of(spec, p.task).value_or(0)]);
  }

  [[nodiscard]] const std::set<std::pair<std::uint32_t, std::uint32_t>>& by_free() const {
    return by_free_;
  }

 private:
  resource_vector& room(node_id n) {
    auto it = room_.find(n.value());
    if (it == room_.end()) it = room_.emplace(n.value(), state_.node_free(n)).first;
    return it->second;
  }

  const cluster_state& state_;
  const cluster& c_;
  const node_score_table& scores_;
  std::vector<std::uint8_t> free_;
  std::vector<std::uint32_t> nfree_;
  std::map<std::uint32_t, resource_vector> room_;
  std::set<std::pair<std::uint32_t, std::uint32_t>> by_free_;
  std::uint32_t total_ = 0;
};

}  // namespace

grow_shrink_planner::grow_shrink_planner(const cluster& description)
    : scores_(description), devices_(description.device_count()) {}

grow_shrink_planner::grow_shrink_planner(const cluster& description,
                                         const cluster_topology& topology)
    : scores_(description, topology), devices_(description.device_count()) {}

result<grow_shrink_plan> grow_shrink_planner::plan(const cluster_state& state,
                                                   std::span<const elastic_job> elastic,
                                                   const grow_shrink_params& params) const {
  const cluster& c = state.cluster();
  if (c.node_count() != scores_.size() || c.device_count() != devices_)
    return make_error(errc::invalid_argument,
                      "grow_shrink: the state has {} nodes and {} devices, the planner {} and {}",
                      c.node_count(), c.device_count(), scores_.size(), devices_);
  std::map<job_id, elastic_info> jobs;
  for (const elastic_job& e : elastic) {
    const job_record* rec = state.find_job(e.job);
    if (rec == nullptr) return make_error(errc::not_found, "grow_shrink: unknown job {}", e.job);
    if (rec->spec.gang || !rec->spec.preemptible)
      return make_error(errc::invalid_argument,
                        "grow_shrink: job {} must be non-gang and preemptible to be elastic",
                        e.job);
    if (e.base_tasks == 0 || e.base_tasks > task_count(rec->spec))
      return make_error(errc::invalid_argument,
                        "grow_shrink: job {} has base_tasks {}, must be in 1..{}", e.job,
                        e.base_tasks, task_count(rec->spec));
    if (!jobs.emplace(e.job, elastic_info{rec, e.base_tasks, 0}).second)
      return make_error(errc::invalid_argument, "grow_shrink: job {} is listed twice", e.job);
  }
  for (auto& [id, info] : jobs) {
    const job_state s = info.rec->status.state;
    if (s != job_state::scheduled && s != job_state::running) continue;
    for (const task_placement& p : info.rec->placement)
      if (p.node.valid() && p.task.value() >= info.base)
        info.grown += static_cast<std::uint32_t>(p.devices.size());
  }

  grow_shrink_plan out;
  for (const auto& [id, rec] : state.jobs()) {
    const job_state s = rec.status.state;
    if (s != job_state::queued && s != job_state::suspended) continue;
    for (const task_role& role : rec.spec.roles)
      out.waiting_gpus += role.gpu.count * role.task_count;
  }
  free_model model(state, scores_);
  out.free_gpus = model.total();

  if (out.waiting_gpus > 0) {
    // Shrink: most grown GPUs first, then higher job id.
    std::vector<std::pair<std::uint32_t, job_id>> order;
    for (const auto& [id, info] : jobs)
      if (info.grown > 0) order.emplace_back(info.grown, id);
    std::sort(order.begin(), order.end(), std::greater<>());
    for (const auto& [grown, id] : order) {
      if (out.free_gpus + out.reclaimed_gpus >= out.waiting_gpus) break;
      const elastic_info& info = jobs.at(id);
      task_release r{id, {}, 0};
      // The job keeps at least one placed task (a partial release never empties a job).
      const auto placed = static_cast<std::size_t>(
          std::count_if(info.rec->placement.begin(), info.rec->placement.end(),
                        [](const task_placement& p) { return p.node.valid(); }));
      for (auto it = info.rec->placement.rbegin(); it != info.rec->placement.rend(); ++it) {
        if (out.free_gpus + out.reclaimed_gpus >= out.waiting_gpus) break;
        if (r.tasks.size() + 1 >= placed) break;
        if (!it->node.valid() || it->task.value() < info.base || it->devices.empty()) continue;
        r.tasks.push_back(it->task);
        r.gpus += static_cast<std::uint32_t>(it->devices.size());
        out.reclaimed_gpus += static_cast<std::uint32_t>(it->devices.size());
      }
      if (!r.tasks.empty()) out.shrink.push_back(std::move(r));
    }
    return out;
  }

  // Grow: fewest grown GPUs first, then lower job id; one task per turn.
  std::set<std::tuple<std::uint32_t, job_id>> turn;
  std::map<job_id, std::uint32_t> next_task;
  for (const auto& [id, info] : jobs) {
    const job_state s = info.rec->status.state;
    if (s != job_state::scheduled && s != job_state::running) continue;
    turn.insert({info.grown, id});
    next_task[id] = info.base;
  }
  std::map<job_id, std::size_t> grow_entry;
  std::uint32_t bound = 0;
  while (!turn.empty() && model.total() > params.reserve_gpus) {
    if (params.max_grow_tasks != 0 && bound >= params.max_grow_tasks) break;
    const auto [grown, id] = *turn.begin();
    turn.erase(turn.begin());
    const elastic_info& info = jobs.at(id);
    const job_spec& spec = info.rec->spec;
    std::uint32_t& t = next_task[id];
    const std::uint32_t count = task_count(spec);
    while (t < count && info.rec->placement[t].node.valid()) ++t;
    if (t >= count) continue;
    const task_id task(t);
    const std::uint32_t k = task_gpus(spec, task);
    if (k == 0 || model.total() < params.reserve_gpus + k) continue;
    // Own servers: most of the job's GPUs first, then lower id (planned grows included).
    std::map<std::uint32_t, std::uint32_t> held;
    for (const task_placement& p : info.rec->placement)
      if (p.node.valid()) held[p.node.value()] += static_cast<std::uint32_t>(p.devices.size());
    if (const auto it = grow_entry.find(id); it != grow_entry.end())
      for (const task_placement& p : out.grow[it->second].tasks)
        held[p.node.value()] += static_cast<std::uint32_t>(p.devices.size());
    std::vector<std::pair<std::uint32_t, std::uint32_t>> own;
    for (const auto& [n, g] : held)
      own.emplace_back(std::numeric_limits<std::uint32_t>::max() - g, n);
    std::sort(own.begin(), own.end());
    std::optional<task_placement> placed;
    for (const auto& [key, n] : own)
      if ((placed = model.fit(node_id(n), spec, task))) break;
    if (!placed) {
      for (auto it = model.by_free().lower_bound({k, 0}); it != model.by_free().end(); ++it) {
        if (held.contains(it->second)) continue;
        if ((placed = model.fit(node_id(it->second), spec, task))) break;
      }
    }
    if (!placed) continue;
    model.take(spec, *placed);
    out.offered_gpus += k;
    ++bound;
    const auto [entry, fresh] = grow_entry.emplace(id, out.grow.size());
    if (fresh) out.grow.push_back(binding{id, {}});
    out.grow[entry->second].tasks.push_back(std::move(*placed));
    ++t;
    turn.insert({grown + k, id});
  }
  return out;
}

}  // namespace hetsched
