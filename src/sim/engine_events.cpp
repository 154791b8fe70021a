// SPDX-License-Identifier: MIT
// The discrete-event simulator: completions, failures, preemption requeues, a placement's
// evictions (two-phase preemption), Tiresias preemption rounds, time-slice rotation, node
// failures and repairs.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "sim/engine_impl.hpp"

namespace hetsched::sim::detail {

result<void> engine::requeue_preempted(std::uint32_t j, std::int64_t t) {
  HETSCHED_TRY(record(state_, job_id(j), job_event::requeue));
  place_.release(state_, job_id(j));
  rt_[j].extra_ms += p_.preemption_cost_ms;
  if (order_.static_keys()) rt_[j].key = order_.key(view(j, t));
  enqueue(j, t);
  return wake_waiters_of(j, t);
}

result<void> engine::start_evictions(std::uint32_t j, const decision& d, std::int64_t t) {
  if (rt_[j].in_flight > 0) return {};  // its victims are still terminating: no new ones
  decision mine;
  for (const preemption& pr : d.preemptions) {
    const std::uint32_t v = pr.job.value();
    if (v >= rt_.size() || v == j)
      return make_error(errc::internal, "placement {} asked to preempt unknown job {} for job {}",
                        place_.name(), v, j);
    const job_rt& r = rt_[v];
    if (r.evicting) continue;  // already in flight for another job
    if (r.run_start_ms < 0 || !trace_[v].preemptible)
      return make_error(errc::internal,
                        "placement {} asked to preempt job {} ({}) for job {} ({}), which is not a "
                        "running preemptible job",
                        place_.name(), v, trace_[v].name, j, trace_[j].name);
    const bool twice = std::any_of(mine.preemptions.begin(), mine.preemptions.end(),
                                   [&](const preemption& m) { return m.job == pr.job; });
    if (!twice) mine.preemptions.push_back(pr);
  }
  if (mine.preemptions.empty()) return {};
  mine.deferrals = d.deferrals;
  if (mine.deferrals.empty())
    mine.deferrals.push_back(
        {job_id(j), defer_reason::insufficient_capacity, "waits for its preemption victims"});
  place_.set_time(t);
  place_.commit(state_, mine);
  for (const preemption& pr : mine.preemptions) {
    const std::uint32_t v = pr.job.value();
    halt(v, t);
    job_rt& r = rt_[v];
    r.evicting = true;
    r.preemptor = j;
    ++rt_[j].in_flight;
    ++out_.counters.preemptions;
    ++out_.jobs[v].preemptions;
    push(t + p_.preemption_delay_ms, ev::evict, v, r.epoch);
  }
  return {};
}

void engine::end_eviction(std::uint32_t v) {
  job_rt& r = rt_[v];
  r.evicting = false;
  ++r.epoch;
  drop_hold(v);
  if (r.preemptor != none) --rt_[r.preemptor].in_flight;
  r.preemptor = none;
}

result<void> engine::evict(std::uint32_t v, std::int64_t t) {
  end_eviction(v);
  decision d;
  d.preemptions.push_back(preemption{job_id(v), "terminated for a waiting job"});
  if (auto ok = apply(state_, d); !ok)
    return make_error(errc::internal, "the model refused to preempt job {} ({}): {}", v,
                      trace_[v].name, ok.error().message);
  dirty_ = true;
  ++release_gen_;
  return requeue_preempted(v, t);
}

result<bool> engine::try_resume(std::uint32_t w, std::int64_t t) {
  decision d;
  d.resumes.push_back(resumption{job_id(w)});
  return try_commit(d, t);
}

result<void> engine::wake_waiters_of(std::uint32_t runner, std::int64_t t) {
  for (auto it = slice_pairs_.begin(); it != slice_pairs_.end();) {
    if (it->second != runner) {
      ++it;
      continue;
    }
    const std::uint32_t w = it->first;
    it = slice_pairs_.erase(it);
    if (rt_[w].suspended) {
      auto ok = try_resume(w, t);
      if (!ok) return std::move(ok).error();
      if (!*ok) orphans_.insert(w);
    }
  }
  return {};
}

result<void> engine::finish(std::uint32_t j, std::int64_t t) {
  stop_progress(j, t);
  HETSCHED_TRY(record(state_, job_id(j), job_event::succeed));
  place_.release(state_, job_id(j));
  dirty_ = true;
  ++release_gen_;
  HETSCHED_TRY(terminal(j, t, job_state::succeeded));
  return wake_waiters_of(j, t);
}

result<void> engine::fail(std::uint32_t j, std::int64_t t) {
  job_rt& r = rt_[j];
  if (r.evicting) end_eviction(j);  // killed by a failure before its preemption completed
  if (r.suspended) {
    r.suspended = false;
    suspended_.erase(j);
    orphans_.erase(j);
    --waiting_count_;
    slice_pairs_.erase(j);
  }
  stop_progress(j, t);
  HETSCHED_TRY(record(state_, job_id(j), job_event::fail));
  place_.release(state_, job_id(j));
  dirty_ = true;
  ++out_.counters.failures;
  ++release_gen_;
  ++out_.jobs[j].failures;
  auto st = state_.status(job_id(j));
  if (!st) return std::move(st).error();
  if (st->state == job_state::queued) {
    ++out_.counters.retries;
    r.remaining_ms = trace_[j].duration_ms;  // no checkpoint: the attempt's progress is lost
    r.extra_ms = 0;
    if (order_.static_keys()) r.key = order_.key(view(j, t));
    enqueue(j, t);
  } else {
    HETSCHED_TRY(terminal(j, t, job_state::failed));
  }
  return wake_waiters_of(j, t);
}

result<void> engine::rotate(std::int64_t t) {
  slice_scheduled_ = false;
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs(slice_pairs_.begin(),
                                                                   slice_pairs_.end());
  std::int64_t spare = free_milli();
  for (const auto& [w, r] : pairs) {
    if (!rt_[w].suspended || slice_pairs_.find(w) == slice_pairs_.end()) continue;
    if (spare >= milli(w) && trace_[w].preemptible) {
      // Enough GPUs are free now: take the job out of time-slicing (preempt and requeue it) so
      // that the next pass places it on free GPUs, as Gandiva's migration would.
      spare -= milli(w);
      decision d;
      d.preemptions.push_back(preemption{job_id(w), "unslice"});
      HETSCHED_TRY(commit(w, d, t));
      continue;
    }
    if (rt_[r].run_start_ms < 0) {
      slice_pairs_.erase(w);
      auto ok = try_resume(w, t);
      if (!ok) return std::move(ok).error();
      if (!*ok) orphans_.insert(w);
      continue;
    }
    decision d;
    d.suspensions.push_back(suspension{job_id(r)});
    d.resumes.push_back(resumption{job_id(w)});
    auto swapped = try_commit(d, t);
    if (!swapped) return std::move(swapped).error();
    if (!*swapped) continue;
    slice_pairs_.erase(w);
    slice_pairs_[r] = w;
  }
  if (!slice_pairs_.empty() && !slice_scheduled_) {
    slice_scheduled_ = true;
    push(t + p_.time_slice_ms, ev::slice, 0);
  }
  return {};
}

result<void> engine::node_failure(std::int64_t t) {
  const cluster& c = state_.cluster();
  const std::size_t n = c.node_count();
  std::uint32_t pick = static_cast<std::uint32_t>(rng_.below(n));
  std::size_t tries = 0;
  while (state_.node_health(node_id(pick)) != health::healthy && tries < n) {
    pick = static_cast<std::uint32_t>((pick + 1) % n);
    ++tries;
  }
  if (tries < n) {
    const node_id node(pick);
    ++out_.counters.node_failures;
    std::set<std::uint32_t> victims;
    const node_info& info = c.node(node);
    for (std::uint32_t i = 0; i < info.device_count; ++i) {
      const device_id d(info.first_device.value() + i);
      for (const device_holder& h : state_.device_used(d).holders) victims.insert(h.job.value());
      if (state_.device_health(d) == health::healthy) healthy_milli_ -= milli_per_gpu_unit;
    }
    for (const std::uint32_t s : suspended_) {
      auto pl = state_.placement(job_id(s));
      if (!pl) continue;
      for (const task_placement& tp : *pl)
        if (tp.node == node) victims.insert(s);
    }
    HETSCHED_TRY(state_.set_node_health(node, health::unhealthy));
    for (const std::uint32_t v : victims) HETSCHED_TRY(fail(v, t));
    place_.rebuild(state_);
    push(t + p_.node_repair_ms, ev::node_repair, pick);
  }
  failure_scheduled_ = false;
  if (running_ > 0 || !suspended_.empty() || arrived_ < out_.jobs.size()) schedule_node_failure(t);
  return {};
}

void engine::schedule_node_failure(std::int64_t t) {
  const std::size_t n = state_.cluster().node_count();
  if (!(p_.node_mtbf_hours > 0.0) || n == 0) return;
  const double mean_ms = p_.node_mtbf_hours * 3'600'000.0 / static_cast<double>(n);
  push(t + std::max<std::int64_t>(1, std::llround(rng_.exponential(mean_ms))), ev::node_fail, 0);
  failure_scheduled_ = true;
}

result<void> engine::node_repair(std::uint32_t n, std::int64_t) {
  const node_id node(n);
  HETSCHED_TRY(state_.set_node_health(node, health::healthy));
  const node_info& info = state_.cluster().node(node);
  for (std::uint32_t i = 0; i < info.device_count; ++i)
    if (state_.device_health(device_id(info.first_device.value() + i)) == health::healthy)
      healthy_milli_ += milli_per_gpu_unit;
  place_.rebuild(state_);
  dirty_ = true;
  return {};
}

result<std::vector<std::uint32_t>> engine::preempt_pass(std::int64_t t) {
  std::vector<std::uint32_t> admitted;
  if (waiting_.empty()) return admitted;
  // Candidates: waiting jobs not blocked since the last release, and preemptible running jobs.
  // Under a per-tenant placement (quotas: capacity, hived) each (tenant, priority) is a separate
  // group: a waiting job displaces only running jobs of its own tenant and priority (the
  // placement's own preemption handles what crosses tenants or priorities); otherwise all jobs
  // form one group. Groups are visited by tenant index, then priority from high to low.
  struct group {
    std::vector<std::uint32_t> members;
    std::int64_t held = 0;  // milli-GPU of its preemptible running jobs
  };
  const bool per_tenant = place_.per_tenant();
  std::map<std::pair<std::uint32_t, std::int64_t>, group> groups;
  const auto key_of = [&](std::uint32_t j) {
    return per_tenant ? std::pair{out_.jobs[j].tenant, -std::int64_t{trace_[j].priority}}
                      : std::pair{std::uint32_t{0}, std::int64_t{0}};
  };
  for (const std::uint32_t j : waiting_)
    if (blocked_at_[j] != release_gen_) groups[key_of(j)].members.push_back(j);
  std::int64_t pool = healthy_milli_;  // one group: healthy minus non-preemptible running
  for (const std::uint32_t j : running_list_) {
    if (!trace_[j].preemptible) {
      pool -= milli(j);
      continue;
    }
    const auto it = groups.find(key_of(j));
    if (it == groups.end()) continue;
    it->second.members.push_back(j);
    it->second.held += milli(j);
  }
  // Per tenant: a group may use the free GPUs left by the groups before it plus what its own
  // preemptible running jobs hold.
  if (per_tenant) pool = std::max<std::int64_t>(0, free_milli());
  const order_context ctx{t, out_.total_milli_gpu, state_.cluster().total_capacity().milli_cpu,
                          state_.cluster().total_capacity().memory_mib, usage_};
  std::vector<std::uint32_t> victims;
  for (const auto& [key, g] : groups) {
    std::vector<job_view> views;
    views.reserve(g.members.size());
    for (const std::uint32_t j : g.members) views.push_back(view(j, t));
    std::int64_t budget = per_tenant ? pool + g.held : pool;
    const std::vector<std::uint32_t> ord = order_.order(views, ctx);
    std::vector<std::uint32_t> in;
    std::vector<std::uint32_t> out;
    for (const std::uint32_t k : ord) {
      const std::uint32_t j = g.members[k];
      if (milli(j) <= budget) {
        budget -= milli(j);
        if (!views[k].running) in.push_back(j);
      } else if (views[k].running) {
        out.push_back(j);
      }
    }
    if (per_tenant) pool = budget;
    if (in.empty() || out.empty()) continue;
    admitted.insert(admitted.end(), in.begin(), in.end());
    victims.insert(victims.end(), out.begin(), out.end());
  }
  if (victims.empty() || admitted.empty()) return std::vector<std::uint32_t>{};
  std::sort(victims.begin(), victims.end());
  decision d;
  for (const std::uint32_t v : victims) d.preemptions.push_back(preemption{job_id(v), "las"});
  HETSCHED_TRY(commit(victims.front(), d, t));
  for (const std::uint32_t v : victims) rt_[v].las_victim = true;
  las_victims_ = std::move(victims);
  return admitted;
}

}  // namespace hetsched::sim::detail
