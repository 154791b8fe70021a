// SPDX-License-Identifier: MIT
// gandiva_reactive: Gandiva's reactive placement with incremental per-affinity server indices.
//
// Per node the policy keeps its free healthy GPUs, its suspended jobs and time-sliced GPUs and
// the jobs it hosts; per device whether it was healthy at rebuild, how many tracked tasks hold it
// and how many suspended jobs remember it (its time-slicing count). Every
// change to a node goes through unindex() / index(), which move it between the ordered sets the
// stages walk. place() reads the sets for the order and the cluster state for the devices.
#include <algorithm>
#include <limits>
#include <string>

#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/policies/gandiva.hpp>

namespace hetsched {

namespace {

constexpr std::uint32_t key_base = std::numeric_limits<std::uint32_t>::max();

}  // namespace

gandiva_reactive::gandiva_reactive(const cluster& description, gandiva_params params)
    : params_(params), scores_(description) {
  init(description);
}

gandiva_reactive::gandiva_reactive(const cluster& description, const cluster_topology& topology,
                                   gandiva_params params)
    : params_(params), scores_(description, topology) {
  init(description);
}

void gandiva_reactive::init(const cluster& description) {
  const std::size_t nodes = description.node_count();
  nodes_.assign(nodes, node_entry{});
  usable_.assign(description.device_count(), true);
  holders_.assign(description.device_count(), 0);
  sliced_.assign(description.device_count(), 0);
  for (std::size_t i = 0; i < nodes; ++i) {
    const node_info& info = description.node(node_id(static_cast<std::uint32_t>(i)));
    max_gpus_ = std::max(max_gpus_, info.device_count);
    nodes_[i].first_device = info.first_device.value();
    nodes_[i].gpus = info.device_count;
    for (std::uint32_t k = 0; k < info.device_count; ++k) {
      const device_id d(info.first_device.value() + k);
      usable_[d.index()] =
          info.health == health::healthy && description.device(d).health == health::healthy;
      if (usable_[d.index()]) ++nodes_[i].free;
    }
    index(node_id(static_cast<std::uint32_t>(i)));
  }
}

std::uint32_t gandiva_reactive::affinity(node_id n) const noexcept {
  const auto& hosted = nodes_[n.index()].hosted;
  return hosted.empty() ? 0 : hosted.begin()->second;
}

std::uint32_t gandiva_reactive::free_gpus(node_id n) const noexcept {
  return nodes_[n.index()].free;
}

std::uint32_t gandiva_reactive::time_sliced(node_id n) const noexcept {
  return nodes_[n.index()].suspended;
}

std::uint32_t gandiva_reactive::time_sliced_gpus(node_id n) const noexcept {
  return nodes_[n.index()].sliced_gpus;
}

std::uint32_t gandiva_reactive::time_sliced_on(device_id d) const noexcept {
  return sliced_[d.index()];
}

gandiva_reactive::slice_key gandiva_reactive::slice_key_of(node_id n) const noexcept {
  const node_entry& e = nodes_[n.index()];
  return slice_key{e.sliced_gpus, std::max<std::uint32_t>(e.gpus, 1), n.value()};
}

void gandiva_reactive::unindex(node_id n) {
  const node_entry& e = nodes_[n.index()];
  const std::uint32_t a = affinity(n);
  if (a == 0) {
    empty_.erase(n.value());
    return;
  }
  const load_key key{key_base - e.free, n.value()};
  auto& bucket = by_affinity_[a];
  bucket.erase(key);
  if (bucket.empty()) by_affinity_.erase(a);
  non_empty_.erase(key);
  auto& sliced = by_time_sliced_[a];
  sliced.erase(slice_key_of(n));
  if (sliced.empty()) by_time_sliced_.erase(a);
}

void gandiva_reactive::index(node_id n) {
  const node_entry& e = nodes_[n.index()];
  const std::uint32_t a = affinity(n);
  if (a == 0) {
    empty_.insert(n.value());
    return;
  }
  const load_key key{key_base - e.free, n.value()};
  by_affinity_[a].insert(key);
  non_empty_.insert(key);
  by_time_sliced_[a].insert(slice_key_of(n));
}

void gandiva_reactive::add_job(job_id job, bool suspended, std::vector<task_placement> placement) {
  job_entry entry;
  entry.suspended = suspended;
  for (task_placement& p : placement) {
    if (!p.node.valid() || p.node.index() >= nodes_.size()) continue;
    entry.tasks.push_back(std::move(p));
  }
  if (entry.tasks.empty()) return;
  // Several tasks of one job on one node count once, with their devices summed.
  std::map<node_id, std::uint32_t> per_node;
  for (const task_placement& p : entry.tasks)
    per_node[p.node] += static_cast<std::uint32_t>(p.devices.size());
  for (const auto& [node, count] : per_node) unindex(node);
  for (const auto& [node, count] : per_node) {
    node_entry& e = nodes_[node.index()];
    if (suspended) {
      ++e.suspended;
      e.sliced_gpus += count;
    } else {
      e.hosted[job] = count;
    }
  }
  if (suspended) {
    for (const task_placement& p : entry.tasks)
      for (const device_share& s : p.devices) ++sliced_[s.device.index()];
  } else {
    for (const task_placement& p : entry.tasks) {
      for (const device_share& s : p.devices) {
        if (holders_[s.device.index()]++ == 0 && usable_[s.device.index()])
          --nodes_[p.node.index()].free;
      }
    }
  }
  for (const auto& [node, count] : per_node) index(node);
  jobs_[job] = std::move(entry);
}

std::vector<task_placement> gandiva_reactive::drop_job(job_id job) {
  const auto it = jobs_.find(job);
  if (it == jobs_.end()) return {};
  job_entry entry = std::move(it->second);
  jobs_.erase(it);
  std::map<node_id, std::uint32_t> per_node;
  for (const task_placement& p : entry.tasks)
    per_node[p.node] += static_cast<std::uint32_t>(p.devices.size());
  for (const auto& [node, count] : per_node) unindex(node);
  for (const auto& [node, count] : per_node) {
    node_entry& e = nodes_[node.index()];
    if (entry.suspended) {
      --e.suspended;
      e.sliced_gpus -= count;
    } else {
      e.hosted.erase(job);
    }
  }
  if (entry.suspended) {
    for (const task_placement& p : entry.tasks)
      for (const device_share& s : p.devices) --sliced_[s.device.index()];
  } else {
    for (const task_placement& p : entry.tasks) {
      for (const device_share& s : p.devices) {
        if (--holders_[s.device.index()] == 0 && usable_[s.device.index()])
          ++nodes_[p.node.index()].free;
      }
    }
  }
  for (const auto& [node, count] : per_node) index(node);
  return std::move(entry.tasks);
}

void gandiva_reactive::release(job_id job) { static_cast<void>(drop_job(job)); }

result<void> gandiva_reactive::check_placements(const decision& d) const {
  const auto check = [&](job_id job, const task_placement& p) -> result<void> {
    if (!p.node.valid() || p.node.index() >= nodes_.size())
      return make_error(errc::invalid_argument,
                        "gandiva_reactive: job {} task {} is placed on node {}, the cluster has {} "
                        "nodes",
                        job, p.task, p.node, nodes_.size());
    const node_entry& e = nodes_[p.node.index()];
    for (std::size_t i = 0; i < p.devices.size(); ++i) {
      const device_id dev = p.devices[i].device;
      if (!dev.valid() || dev.value() < e.first_device || dev.value() - e.first_device >= e.gpus)
        return make_error(errc::invalid_argument,
                          "gandiva_reactive: job {} task {} uses device {}, which is not a device "
                          "of node {}",
                          job, p.task, dev, p.node);
      for (std::size_t k = 0; k < i; ++k)
        if (p.devices[k].device == dev)
          return make_error(errc::invalid_argument,
                            "gandiva_reactive: job {} task {} lists device {} twice", job, p.task,
                            dev);
    }
    return {};
  };
  for (const binding& b : d.binds)
    for (const task_placement& p : b.tasks)
      if (auto r = check(b.job, p); !r) return r;
  for (const migration& m : d.migrations)
    for (const task_placement& p : m.tasks)
      if (auto r = check(m.job, p); !r) return r;
  return {};
}

result<void> gandiva_reactive::commit(const decision& d) {
  if (auto r = check_placements(d); !r) return r;
  for (const preemption& p : d.preemptions) static_cast<void>(drop_job(p.job));
  for (const suspension& s : d.suspensions) {
    if (!jobs_.contains(s.job)) continue;
    add_job(s.job, true, drop_job(s.job));
  }
  for (const partial_release& r : d.releases) {
    if (!jobs_.contains(r.job)) continue;
    std::vector<task_placement> placement = drop_job(r.job);
    std::erase_if(placement, [&](const task_placement& p) {
      return std::find(r.tasks.begin(), r.tasks.end(), p.task) != r.tasks.end();
    });
    add_job(r.job, false, std::move(placement));
  }
  for (const migration& m : d.migrations) {
    if (!jobs_.contains(m.job)) continue;
    std::vector<task_placement> placement = drop_job(m.job);
    for (const task_placement& moved : m.tasks) {
      const auto it = std::find_if(placement.begin(), placement.end(),
                                   [&](const task_placement& p) { return p.task == moved.task; });
      if (it != placement.end()) *it = moved;
    }
    add_job(m.job, false, std::move(placement));
  }
  for (const binding& b : d.binds) {
    std::vector<task_placement> placement = drop_job(b.job);
    placement.insert(placement.end(), b.tasks.begin(), b.tasks.end());
    std::sort(placement.begin(), placement.end(),
              [](const task_placement& x, const task_placement& y) { return x.task < y.task; });
    add_job(b.job, false, std::move(placement));
  }
  for (const resumption& r : d.resumes) {
    if (!jobs_.contains(r.job)) continue;
    add_job(r.job, false, drop_job(r.job));
  }
  return {};
}

result<void> gandiva_reactive::rebuild(const cluster_state& state) {
  const cluster& c = state.cluster();
  if (c.node_count() != nodes_.size() || c.device_count() != usable_.size())
    return make_error(errc::invalid_argument,
                      "gandiva_reactive: the state has {} nodes and {} devices, the policy {} "
                      "and {}",
                      c.node_count(), c.device_count(), nodes_.size(), usable_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const node_info& info = c.node(node_id(static_cast<std::uint32_t>(i)));
    if (info.first_device.value() != nodes_[i].first_device || info.device_count != nodes_[i].gpus)
      return make_error(errc::invalid_argument,
                        "gandiva_reactive: node {} of the state has devices {}..{}, the policy's "
                        "{}..{}",
                        i, info.first_device.value(), info.first_device.value() + info.device_count,
                        nodes_[i].first_device, nodes_[i].first_device + nodes_[i].gpus);
  }
  jobs_.clear();
  by_affinity_.clear();
  non_empty_.clear();
  empty_.clear();
  by_time_sliced_.clear();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    nodes_[i] = node_entry{};
    nodes_[i].first_device = c.node(n).first_device.value();
    nodes_[i].gpus = c.node(n).device_count;
    const bool node_ok = state.node_health(n) == health::healthy;
    const node_info& info = c.node(n);
    for (std::uint32_t k = 0; k < info.device_count; ++k) {
      const device_id d(info.first_device.value() + k);
      usable_[d.index()] = node_ok && state.device_health(d) == health::healthy;
      holders_[d.index()] = 0;
      sliced_[d.index()] = 0;
      if (usable_[d.index()]) ++nodes_[i].free;
    }
    index(n);
  }
  for (const auto& [id, rec] : state.jobs()) {
    const job_state s = rec.status.state;
    if (s == job_state::scheduled || s == job_state::running) {
      add_job(id, false, rec.placement);
    } else if (s == job_state::suspended) {
      add_job(id, true, rec.placement);
    }
  }
  return {};
}

std::optional<task_placement> gandiva_reactive::try_node(const cluster_state& state, node_id n,
                                                         const job_spec& spec) const {
  if (state.node_health(n) != health::healthy) return std::nullopt;
  const task_role& role = spec.roles.front();
  if (!fits(task_request(role), state.node_free(n))) return std::nullopt;
  const cluster& c = state.cluster();
  const node_info& info = c.node(n);
  std::vector<std::uint32_t> available;
  for (std::uint32_t k = 0; k < info.device_count; ++k) {
    const device_id d(info.first_device.value() + k);
    const device_info& dev = c.device(d);
    if (state.device_health(d) != health::healthy) continue;
    if (!role.gpu.type.empty() && dev.type != role.gpu.type) continue;
    const device_capacity free = state.device_free(d);
    if (free.milli_gpu != 1000 || free.gpu_memory_mib < role.gpu.memory_mib) continue;
    available.push_back(k);
  }
  if (available.size() < role.gpu.count) return std::nullopt;
  const std::vector<std::uint32_t> chosen = pick_gpus(scores_.scores(n), available, role.gpu.count);
  task_placement p{task_id(0), n, {}};
  for (std::uint32_t k : chosen)
    p.devices.push_back(
        device_share{device_id(info.first_device.value() + k), 1000, role.gpu.memory_mib});
  return p;
}

std::optional<decision> gandiva_reactive::try_oversubscribe(const cluster_state& state, node_id n,
                                                            const job_spec& spec) const {
  if (state.node_health(n) != health::healthy) return std::nullopt;
  const task_role& role = spec.roles.front();
  const cluster& c = state.cluster();
  std::optional<decision> best;
  std::uint32_t best_count = params_.max_time_sliced_jobs_per_gpu_set;
  for (const auto& [victim, gpus] : nodes_[n.index()].hosted) {
    if (gpus != role.gpu.count) continue;
    const job_record* rec = state.find_job(victim);
    if (rec == nullptr || rec->status.state != job_state::running || !rec->spec.preemptible ||
        rec->placement.size() != 1 || rec->placement.front().node != n ||
        rec->placement.front().devices.size() != role.gpu.count)
      continue;
    const task_placement& vp = rec->placement.front();
    std::uint32_t set_count = 0;
    for (const device_share& s : vp.devices)
      set_count = std::max(set_count, sliced_[s.device.index()]);
    // Hosted jobs go in id order: a later one must have a strictly lower count.
    if (set_count >= best_count) continue;
    bool ok = true;
    for (const device_share& s : vp.devices) {
      const device_info& dev = c.device(s.device);
      const device_usage& used = state.device_used(s.device);
      ok = ok && s.milli_gpu == 1000 && used.holders.size() == 1 &&
           state.device_health(s.device) == health::healthy &&
           (role.gpu.type.empty() || dev.type == role.gpu.type) &&
           dev.memory_mib >= role.gpu.memory_mib;
    }
    if (!ok) continue;
    const auto victim_role = role_index_of(rec->spec, vp.task);
    if (!victim_role) continue;
    const resource_vector room = state.node_free(n) + task_request(rec->spec.roles[*victim_role]);
    if (!fits(task_request(role), room)) continue;
    decision d;
    d.suspensions.push_back(suspension{victim});
    task_placement p{task_id(0), n, {}};
    for (const device_share& s : vp.devices)
      p.devices.push_back(device_share{s.device, 1000, role.gpu.memory_mib});
    d.binds.push_back(binding{spec.id, {std::move(p)}});
    best = std::move(d);
    best_count = set_count;
    if (set_count == 0) break;
  }
  return best;
}

result<decision> gandiva_reactive::place(const cluster_state& state, job_id job) const {
  if (state.cluster().node_count() != nodes_.size() ||
      state.cluster().device_count() != usable_.size())
    return make_error(errc::invalid_argument,
                      "gandiva_reactive: the state has {} nodes and {} devices, the policy {} "
                      "and {}",
                      state.cluster().node_count(), state.cluster().device_count(), nodes_.size(),
                      usable_.size());
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "gandiva_reactive: unknown job {}", job);
  if (rec->status.state != job_state::queued)
    return make_error(errc::failed_precondition, "gandiva_reactive: job {} is {}, not queued", job,
                      to_string(rec->status.state));
  const job_spec& spec = rec->spec;
  decision out;
  const auto defer = [&](defer_reason reason, std::string message) {
    out.deferrals.push_back(deferral{job, reason, std::move(message)});
    return out;
  };
  if (task_count(spec) != 1)
    return defer(defer_reason::topology_unsatisfiable,
                 fmt::format("gandiva_reactive places single-task jobs; job {} has {} tasks", job,
                             task_count(spec)));
  const gpu_request& gpu = spec.roles.front().gpu;
  if (gpu.count == 0 || gpu.milli_per_gpu != 1000)
    return defer(defer_reason::topology_unsatisfiable,
                 fmt::format("gandiva_reactive places whole-GPU jobs; job {} asks for {} x {} "
                             "milli-GPU",
                             job, gpu.count, gpu.milli_per_gpu));
  const std::uint32_t k = gpu.count;
  if (k > max_gpus_)
    return defer(defer_reason::topology_unsatisfiable,
                 fmt::format("job {} asks for {} GPUs on one server; the largest server has {}",
                             job, k, max_gpus_));
  const auto bind = [&](task_placement p) {
    out.binds.push_back(binding{job, {std::move(p)}});
    return out;
  };
  // (1) Same affinity, most free first.
  if (const auto it = by_affinity_.find(k); it != by_affinity_.end()) {
    for (const load_key& key : it->second) {
      if (key_base - key.first < k) break;
      if (auto p = try_node(state, node_id(key.second), spec)) return bind(std::move(*p));
    }
  }
  // (2) Empty servers, lowest id first.
  for (const std::uint32_t n : empty_) {
    if (nodes_[n].free < k) continue;
    if (auto p = try_node(state, node_id(n), spec)) return bind(std::move(*p));
  }
  // (3) Other affinities, most free first.
  for (const load_key& key : non_empty_) {
    if (key_base - key.first < k) break;
    if (affinity(node_id(key.second)) == k) continue;
    if (auto p = try_node(state, node_id(key.second), spec)) return bind(std::move(*p));
  }
  // (4) Oversubscription: lowest time-slicing load (suspended jobs per GPU) first.
  if (params_.allow_oversubscription) {
    if (const auto it = by_time_sliced_.find(k); it != by_time_sliced_.end()) {
      const std::uint64_t limit = params_.max_time_sliced_jobs_per_gpu_set;
      for (const slice_key& key : it->second) {
        if (key.sliced_gpus >= limit * key.gpus) break;
        if (auto d = try_oversubscribe(state, node_id(key.node), spec)) return std::move(*d);
      }
    }
  }
  // (5) Wait.
  return defer(
      defer_reason::insufficient_capacity,
      fmt::format("no server has {} free GPUs for job {} and none can be time-sliced", k, job));
}

}  // namespace hetsched
