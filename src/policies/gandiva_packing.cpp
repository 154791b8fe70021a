// SPDX-License-Identifier: MIT
// gandiva_packing: greedy packing proposals from profiles and the exact keep-or-undo verdict.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/policies/gandiva_packing.hpp>

namespace hetsched {

namespace {

__extension__ typedef __int128 i128;

result<std::map<job_id, const job_profile*>> index_profiles(const cluster_state& state,
                                                            std::span<const job_profile> profiles) {
  std::map<job_id, const job_profile*> out;
  for (const job_profile& p : profiles) {
    if (state.find_job(p.job) == nullptr)
      return make_error(errc::not_found, "packing: profile of unknown job {}", p.job);
    if (p.gpu_util_milli > 1000)
      return make_error(errc::invalid_argument, "packing: job {} has gpu_util_milli {} > 1000",
                        p.job, p.gpu_util_milli);
    if (p.memory_mib < 0)
      return make_error(errc::invalid_argument, "packing: job {} has memory_mib {} < 0", p.job,
                        p.memory_mib);
    if (p.rate < 1 || p.rate > max_packing_rate)
      return make_error(errc::invalid_argument, "packing: job {} has rate {} outside 1..{}", p.job,
                        p.rate, max_packing_rate);
    if (!out.emplace(p.job, &p).second)
      return make_error(errc::invalid_argument, "packing: job {} has two profiles", p.job);
  }
  return out;
}

bool asks_gpus(const job_spec& spec) {
  return std::any_of(spec.roles.begin(), spec.roles.end(),
                     [](const task_role& r) { return r.gpu.count > 0; });
}

/// A device that may receive a job, with its holders' profiled sums.
struct device_entry {
  std::int64_t util = 0;
  device_id device;
  std::int64_t memory = 0;
  std::vector<job_id> holders;
};

}  // namespace

result<packing_proposal> propose_packing(const cluster_state& state,
                                         std::span<const job_profile> profiles,
                                         std::span<const rejected_pack> rejected,
                                         const packing_params& params) {
  if (params.max_trials == 0)
    return make_error(errc::invalid_argument, "packing: max_trials must be >= 1");
  auto indexed = index_profiles(state, profiles);
  if (!indexed) return std::move(indexed).error();
  const std::map<job_id, const job_profile*>& by_job = *indexed;
  packing_proposal out;
  if (params.only_under_overload) {
    bool overloaded = false;
    for (const auto& [id, rec] : state.jobs()) {
      const job_state s = rec.status.state;
      if ((s == job_state::queued || s == job_state::suspended) && asks_gpus(rec.spec)) {
        overloaded = true;
        break;
      }
    }
    if (!overloaded) return out;
  }
  const cluster& c = state.cluster();
  // Candidate jobs by (utilization, id), with their current device (invalid when queued).
  std::vector<std::tuple<std::uint32_t, job_id, device_id>> jobs;
  for (const auto& [id, p] : by_job) {
    const job_record& rec = *state.find_job(id);
    if (task_count(rec.spec) != 1 || !rec.spec.roles.front().gpu.is_fractional()) continue;
    const job_state s = rec.status.state;
    if (s == job_state::queued) {
      jobs.emplace_back(p->gpu_util_milli, id, device_id::invalid());
    } else if ((s == job_state::scheduled || s == job_state::running) &&
               rec.placement.size() == 1 && rec.placement.front().devices.size() == 1) {
      const device_id d = rec.placement.front().devices.front().device;
      if (state.device_used(d).holders.size() == 1) jobs.emplace_back(p->gpu_util_milli, id, d);
    }
  }
  std::sort(jobs.begin(), jobs.end());
  // Candidate devices by (utilization, id).
  std::vector<device_entry> devices;
  for (std::size_t i = 0; i < c.device_count(); ++i) {
    const device_id d(static_cast<std::uint32_t>(i));
    const device_usage& used = state.device_used(d);
    if (used.holders.empty() || state.device_health(d) != health::healthy ||
        state.node_health(c.device(d).node) != health::healthy)
      continue;
    device_entry e{0, d, 0, {}};
    bool profiled = true;
    for (const device_holder& h : used.holders) {
      const auto it = by_job.find(h.job);
      if (it == by_job.end()) {
        profiled = false;
        break;
      }
      if (e.holders.empty() || e.holders.back() != h.job) {
        e.holders.push_back(h.job);
        e.util += it->second->gpu_util_milli;
        e.memory += it->second->memory_mib;
      }
    }
    if (profiled) devices.push_back(std::move(e));
  }
  std::sort(devices.begin(), devices.end(), [](const device_entry& a, const device_entry& b) {
    return std::pair(a.util, a.device) < std::pair(b.util, b.device);
  });
  const std::set<std::pair<job_id, device_id>> skip = [&] {
    std::set<std::pair<job_id, device_id>> s;
    for (const rejected_pack& r : rejected) s.emplace(r.job, r.device);
    return s;
  }();
  std::set<device_id> used_devices;
  std::set<job_id> partners;
  for (const auto& [util, id, own] : jobs) {
    if (out.trials.size() >= params.max_trials) break;
    if (partners.contains(id) || (own.valid() && used_devices.contains(own))) continue;
    const job_record& rec = *state.find_job(id);
    const task_role& role = rec.spec.roles.front();
    const job_profile& prof = *by_job.at(id);
    const resource_vector need = task_request(role);
    for (const device_entry& e : devices) {
      if (e.device == own || used_devices.contains(e.device) || skip.contains({id, e.device}))
        continue;
      const device_info& dev = c.device(e.device);
      if (!role.gpu.type.empty() && dev.type != role.gpu.type) continue;
      const device_capacity free = state.device_free(e.device);
      if (free.milli_gpu < role.gpu.milli_per_gpu || free.gpu_memory_mib < role.gpu.memory_mib)
        continue;
      if (e.memory + prof.memory_mib > dev.memory_mib) continue;
      resource_vector room = state.node_free(dev.node);
      if (own.valid() && rec.placement.front().node == dev.node) room += need;
      if (!fits(need, room)) continue;
      packing_trial t;
      t.job = id;
      t.device = e.device;
      if (own.valid()) t.previous = rec.placement;
      t.partners = e.holders;
      t.util_milli = e.util + prof.gpu_util_milli;
      t.profiled_memory_mib = e.memory + prof.memory_mib;
      task_placement p{task_id(0),
                       dev.node,
                       {device_share{e.device, role.gpu.milli_per_gpu, role.gpu.memory_mib}}};
      if (own.valid()) {
        out.start.migrations.push_back(migration{id, {std::move(p)}});
        used_devices.insert(own);
      } else {
        out.start.binds.push_back(binding{id, {std::move(p)}});
      }
      used_devices.insert(e.device);
      partners.insert(e.holders.begin(), e.holders.end());
      out.trials.push_back(std::move(t));
      break;
    }
  }
  return out;
}

result<packing_verdict> judge_packing(const cluster_state& state, const packing_trial& trial,
                                      std::span<const job_profile> profiles,
                                      std::span<const packed_rate> measured) {
  auto indexed = index_profiles(state, profiles);
  if (!indexed) return std::move(indexed).error();
  const std::map<job_id, const job_profile*>& by_job = *indexed;
  const job_record* rec = state.find_job(trial.job);
  const auto holds = [&](job_id j) {
    for (const device_holder& h : state.device_used(trial.device).holders)
      if (h.job == j) return true;
    return false;
  };
  if (rec == nullptr || !state.cluster().contains(trial.device) ||
      rec->status.state != job_state::running || !holds(trial.job))
    return make_error(errc::not_found, "packing: job {} does not run on device {}", trial.job,
                      trial.device);
  std::vector<job_id> group{trial.job};
  for (const job_id p : trial.partners)
    if (p != trial.job && holds(p)) group.push_back(p);
  if (group.size() > max_packed_jobs)
    return make_error(errc::invalid_argument, "packing: device {} holds {} judged jobs, at most {}",
                      trial.device, group.size(), max_packed_jobs);
  std::map<job_id, std::int64_t> rates;
  for (const packed_rate& m : measured) {
    if (m.rate < 0 || m.rate > max_packing_rate)
      return make_error(errc::invalid_argument,
                        "packing: job {} has measured rate {} outside 0..{}", m.job, m.rate,
                        max_packing_rate);
    rates[m.job] = m.rate;
  }
  // sum(m_i / r_i) as num / den, exact: with at most 4 jobs and rates <= 2^24, den <= 2^96 and
  // num < 2^123 at every step.
  i128 num = 0;
  i128 den = 1;
  for (const job_id j : group) {
    const auto p = by_job.find(j);
    const auto m = rates.find(j);
    if (p == by_job.end() || m == rates.end())
      return make_error(errc::not_found, "packing: job {} on device {} lacks a {}", j, trial.device,
                        p == by_job.end() ? "profile" : "measured rate");
    num = num * p->second->rate + i128{m->second} * den;
    den *= p->second->rate;
  }
  packing_verdict v;
  v.keep = num > den;
  v.packed_throughput_milli = static_cast<std::int64_t>(num / den * 1000 + num % den * 1000 / den);
  if (v.keep) return v;
  bool back = !trial.previous.empty();
  const node_id now_on = state.cluster().device(trial.device).node;
  for (const task_placement& p : trial.previous) {
    if (!p.node.valid() || state.node_health(p.node) != health::healthy) {
      back = false;
      continue;
    }
    const auto role = role_index_of(rec->spec, p.task);
    if (!role) {
      back = false;
      continue;
    }
    if (p.node != now_on && !fits(task_request(rec->spec.roles[*role]), state.node_free(p.node)))
      back = false;
    for (const device_share& s : p.devices) {
      const device_capacity free = state.device_free(s.device);
      back = back && state.device_health(s.device) == health::healthy &&
             free.milli_gpu >= s.milli_gpu && free.gpu_memory_mib >= s.gpu_memory_mib;
    }
  }
  if (back) {
    v.undo.migrations.push_back(migration{trial.job, trial.previous});
  } else if (rec->spec.preemptible) {
    v.undo.preemptions.push_back(
        preemption{trial.job, "packing trial undone: packed throughput below time-slicing"});
  } else {
    v.undo.suspensions.push_back(suspension{trial.job});
  }
  return v;
}

}  // namespace hetsched
