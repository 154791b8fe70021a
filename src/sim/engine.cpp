// SPDX-License-Identifier: MIT
// The discrete-event simulator: bookkeeping, arrivals, decisions, scheduling passes, main loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/engine_impl.hpp"

namespace hetsched::sim::detail {

job_view engine::view(std::uint32_t j, std::int64_t now) const {
  const workload::trace_job& tj = trace_[j];
  const job_rt& r = rt_[j];
  job_view v;
  v.id = job_id(j);
  v.tenant = out_.jobs[j].tenant;
  v.submit_ms = tj.submit_ms;
  v.milli_gpu = out_.jobs[j].milli_gpu;
  v.milli_cpu = tj.cpu_milli_per_task * tj.tasks;
  v.memory_mib = tj.memory_mib_per_task * tj.tasks;
  v.duration_estimate_ms = tj.duration_ms;
  v.attained_gpu_ms = r.attained_gpu_ms;
  v.running = r.run_start_ms >= 0;
  if (v.running) v.attained_gpu_ms += (now - r.run_start_ms) * v.milli_gpu / milli_per_gpu_unit;
  return v;
}

void engine::sample(std::int64_t t) {
  out_.series.push_back(time_sample{t, state_.total_used().milli_gpu, running_milli_,
                                    healthy_milli_, demand_milli_, running_, waiting_count_});
  if (observer_ != nullptr) observer_->on_sample(t, state_);
}

void engine::advance(std::int64_t t) {
  if (t <= last_t_) return;
  while (next_sample_ < t) {
    sample(next_sample_);
    next_sample_ += sample_ms_;
  }
  const double dt = static_cast<double>(t - last_t_);
  out_.allocated_gpu_ms += static_cast<double>(state_.total_used().milli_gpu) * dt / 1000.0;
  out_.healthy_gpu_ms += static_cast<double>(healthy_milli_) * dt / 1000.0;
  out_.busy_gpu_ms += static_cast<double>(running_milli_) * dt / 1000.0;
  for (std::size_t k = 0; k < usage_.size(); ++k) {
    out_.tenant_usage[k].gpu_ms += static_cast<double>(usage_[k].milli_gpu) * dt / 1000.0;
    out_.tenant_usage[k].milli_cpu_ms += static_cast<double>(usage_[k].milli_cpu) * dt;
    out_.tenant_usage[k].memory_mib_ms += static_cast<double>(usage_[k].memory_mib) * dt;
  }
  last_t_ = t;
}

void engine::enqueue(std::uint32_t j, std::int64_t t) {
  job_rt& r = rt_[j];
  r.waiting = true;
  r.placed_tasks = 0;  // placed again in full
  r.pending_since = t;
  ++waiting_count_;
  if (order_.static_keys()) {
    by_shape_[r.shape].insert({r.key, j});
  } else {
    waiting_pos_[j] = static_cast<std::uint32_t>(waiting_.size());
    waiting_.push_back(j);
  }
  dirty_ = true;
}

void engine::dequeue(std::uint32_t j, std::int64_t t) {
  job_rt& r = rt_[j];
  if (!r.waiting) return;
  r.waiting = false;
  out_.jobs[j].pending_ms += t - r.pending_since;
  --waiting_count_;
  if (order_.static_keys()) {
    by_shape_[r.shape].erase({r.key, j});
  } else {
    const std::uint32_t pos = waiting_pos_[j];
    const std::uint32_t last = waiting_.back();
    waiting_[pos] = last;
    waiting_pos_[last] = pos;
    waiting_.pop_back();
    waiting_pos_[j] = none;
  }
}

void engine::run_job(std::uint32_t j, std::int64_t t) {
  job_rt& r = rt_[j];
  if (r.las_victim) {  // restarts in the pass that evicted it: the eviction is rolled back
    r.las_victim = false;
    r.extra_ms -= p_.preemption_cost_ms;
    --out_.counters.preemptions;
    --out_.jobs[j].preemptions;
    ++out_.counters.preemption_rollbacks;
  }
  r.remaining_ms += r.extra_ms;
  r.extra_ms = 0;
  r.run_start_ms = t;
  ++r.epoch;
  ++running_;
  running_pos_[j] = static_cast<std::uint32_t>(running_list_.size());
  running_list_.push_back(j);
  running_milli_ += milli(j);
  const workload::trace_job& tj = trace_[j];
  tenant_usage& u = usage_[out_.jobs[j].tenant];
  u.milli_gpu += milli(j);
  u.milli_cpu += tj.cpu_milli_per_task * tj.tasks;
  u.memory_mib += tj.memory_mib_per_task * tj.tasks;
  if (out_.jobs[j].first_start_ms < 0) out_.jobs[j].first_start_ms = t;
  r.fail_work = -1;
  if (speed_on_) start_speed(j, t);
  if (p_.job_failure_probability > 0.0 && rng_.uniform() < p_.job_failure_probability) {
    const auto at = static_cast<std::int64_t>(rng_.uniform() * static_cast<double>(r.remaining_ms));
    if (!speed_on_) {
      push(t + std::max<std::int64_t>(at, 1), ev::fail, j, r.epoch);
      return;
    }
    r.fail_work = std::max<std::int64_t>(at, 1);  // a point of its work, whatever its speed
  }
  if (speed_on_) {
    schedule_end(j, t);
  } else {
    push(t + wall_for(j, r.remaining_ms), ev::finish, j, r.epoch);
  }
}

void engine::halt(std::uint32_t j, std::int64_t t) {
  job_rt& r = rt_[j];
  const std::int64_t elapsed = t - r.run_start_ms;
  r.remaining_ms = std::max<std::int64_t>(0, r.remaining_ms - work_in(j, elapsed));
  r.attained_gpu_ms += elapsed * milli(j) / milli_per_gpu_unit;
  book_run(j, elapsed);
  r.run_start_ms = -1;
  ++r.epoch;
  const std::uint32_t pos = running_pos_[j];
  const std::uint32_t last = running_list_.back();
  running_list_[pos] = last;
  running_pos_[last] = pos;
  running_list_.pop_back();
  running_pos_[j] = none;
  running_milli_ -= milli(j);
  if (speed_on_) stop_speed(j, t);
}

void engine::drop_hold(std::uint32_t j) {
  --running_;
  const workload::trace_job& tj = trace_[j];
  tenant_usage& u = usage_[out_.jobs[j].tenant];
  u.milli_gpu -= milli(j);
  u.milli_cpu -= tj.cpu_milli_per_task * tj.tasks;
  u.memory_mib -= tj.memory_mib_per_task * tj.tasks;
}

void engine::stop_progress(std::uint32_t j, std::int64_t t) {
  if (rt_[j].run_start_ms < 0) return;
  halt(j, t);
  drop_hold(j);
}

result<void> engine::terminal(std::uint32_t j, std::int64_t t, job_state s) {
  job_outcome& o = out_.jobs[j];
  o.state = s;
  o.finish_ms = t;
  demand_milli_ -= o.milli_gpu;
  HETSCHED_TRY(state_.forget(job_id(j)));
  ++done_;
  if (observer_ != nullptr && observer_->progress_every > 0 &&
      done_ % observer_->progress_every == 0)
    observer_->on_progress(done_, trace_.size(), t);
  return {};
}

result<void> engine::arrive(std::uint32_t j, std::int64_t t) {
  const workload::trace_job& tj = trace_[j];
  job_outcome& o = out_.jobs[j];
  auto [it, inserted] = tenant_index_.try_emplace(tj.tenant, 0);
  if (inserted) {
    it->second = static_cast<std::uint32_t>(out_.tenants.size());
    out_.tenants.push_back(tj.tenant);
    tenant_usage fresh;
    fresh.weight = std::max<std::uint32_t>(1, order_.tenant_weight(tj.tenant));
    usage_.push_back(fresh);
    out_.tenant_usage.emplace_back();
  }
  o.tenant = it->second;
  o.submit_ms = tj.submit_ms;
  o.duration_ms = tj.duration_ms;
  o.milli_gpu = tj.gpu_milli_per_task * tj.tasks;
  o.active_at_submit = std::int64_t{running_} + waiting_count_ + 1;
  if (tj.gpus_per_task > max_node_gpus_ || o.milli_gpu > out_.total_milli_gpu) {
    o.rejected = true;
    o.state = job_state::cancelled;
    ++out_.counters.rejected;
    ++done_;
    return {};
  }
  job_spec spec;
  spec.id = job_id(j);
  spec.name = tj.name;
  spec.tenant = tenant_id(o.tenant);
  spec.priority = tj.priority;
  spec.preemptible = tj.preemptible;
  // Elastic jobs (grow-shrink) are non-gang: tasks may be bound and released one by one.
  spec.gang = !(p_.elastic && tj.tasks > 1 && tj.preemptible);
  spec.retry_limit = p_.retry_limit;
  spec.duration_estimate_s = (tj.duration_ms + 999) / 1000;
  task_role role;
  role.name = "task";
  role.task_count = tj.tasks;
  role.milli_cpu = tj.cpu_milli_per_task;
  role.memory_mib = tj.memory_mib_per_task;
  if (tj.gpus_per_task > 0) {
    role.gpu.count = tj.gpus_per_task;
    role.gpu.milli_per_gpu =
        static_cast<std::uint32_t>(tj.gpu_milli_per_task / std::int64_t{tj.gpus_per_task});
    if (!tj.gpu_type.empty()) role.gpu.type = gpu_type(tj.gpu_type);
  }
  spec.roles.push_back(std::move(role));
  HETSCHED_TRY(state_.submit(std::move(spec)));
  HETSCHED_TRY(record(state_, job_id(j), job_event::enqueue));
  job_rt& r = rt_[j];
  r.remaining_ms = tj.duration_ms;
  const shape_key sk{tj.tasks,
                     tj.gpus_per_task,
                     tj.gpu_milli_per_task,
                     tj.cpu_milli_per_task,
                     tj.memory_mib_per_task,
                     tj.gpu_type,
                     place_.per_tenant() ? tj.tenant : std::string()};
  auto [sit, fresh] = shape_index_.try_emplace(sk, static_cast<std::uint32_t>(by_shape_.size()));
  if (fresh) by_shape_.emplace_back();
  r.shape = sit->second;
  demand_milli_ += o.milli_gpu;
  if (order_.static_keys()) r.key = order_.key(view(j, t));
  enqueue(j, t);
  return {};
}

result<void> engine::commit(std::uint32_t j, const decision& d, std::int64_t t) {
  if (auto ok = apply(state_, d); !ok)
    return make_error(errc::internal, "the model refused the decision for job {} ({}): {}", j,
                      trace_[j].name, ok.error().message);
  return after_apply(d, t);
}

result<bool> engine::try_commit(const decision& d, std::int64_t t) {
  if (!apply(state_, d)) return false;  // state unchanged
  HETSCHED_TRY(after_apply(d, t));
  return true;
}

result<void> engine::after_apply(const decision& d, std::int64_t t) {
  place_.set_time(t);
  place_.commit(state_, d);
  for (const preemption& pr : d.preemptions) {
    const std::uint32_t v = pr.job.value();
    ++out_.counters.preemptions;
    ++out_.jobs[v].preemptions;
    if (rt_[v].suspended) {
      rt_[v].suspended = false;
      suspended_.erase(v);
      orphans_.erase(v);
      slice_pairs_.erase(v);
      --waiting_count_;
    }
    stop_progress(v, t);
    HETSCHED_TRY(requeue_preempted(v, t));
  }
  for (const suspension& s : d.suspensions) {
    const std::uint32_t v = s.job.value();
    stop_progress(v, t);
    rt_[v].suspended = true;
    suspended_.insert(v);
    ++waiting_count_;
    ++out_.counters.suspensions;
    ++out_.jobs[v].suspensions;
    if (place_.owns_suspensions()) continue;  // the placement's plan() resumes it
    for (const binding& b : d.binds) slice_pairs_[v] = b.job.value();
    if (d.binds.empty()) orphans_.insert(v);
  }
  for (const migration& m : d.migrations) {
    const std::uint32_t v = m.job.value();
    ++out_.counters.migrations;
    ++out_.jobs[v].migrations;
    stop_progress(v, t);
    rt_[v].extra_ms += p_.migration_cost_ms;
    run_job(v, t);
  }
  for (const resumption& r : d.resumes) {
    const std::uint32_t v = r.job.value();
    rt_[v].suspended = false;
    suspended_.erase(v);
    orphans_.erase(v);
    --waiting_count_;
    rt_[v].extra_ms += p_.resume_cost_ms;
    ++out_.counters.resumes;
    run_job(v, t);
  }
  for (const partial_release& pr : d.releases) {
    const std::uint32_t v = pr.job.value();
    ++out_.counters.shrinks;
    stop_progress(v, t);
    recount_tasks(v);
    run_job(v, t);
  }
  for (const binding& b : d.binds) {
    const std::uint32_t v = b.job.value();
    if (rt_[v].run_start_ms >= 0) {  // more tasks of a running job: a grow
      ++out_.counters.grows;
      stop_progress(v, t);
      recount_tasks(v);
      run_job(v, t);
      continue;
    }
    ++out_.counters.binds;
    dequeue(v, t);
    HETSCHED_TRY(record(state_, b.job, job_event::start));
    recount_tasks(v);
    run_job(v, t);
  }
  if (!d.suspensions.empty() && !slice_scheduled_ && p_.time_slice_ms > 0 &&
      !place_.owns_suspensions()) {
    slice_scheduled_ = true;
    push(t + p_.time_slice_ms, ev::slice, 0);
  }
  return {};
}

result<bool> engine::migrate(std::int64_t t) {
  place_.set_time(t);
  auto d = place_.plan_migrations(state_);
  if (!d) return std::move(d).error();
  if (d->migrations.empty()) return false;
  if (!d->binds.empty() || !d->preemptions.empty() || !d->suspensions.empty() ||
      !d->resumes.empty())
    return make_error(errc::internal,
                      "placement {} planned migrations together with other entries (binds, "
                      "preemptions, suspensions or resumes)",
                      place_.name());
  for (const migration& m : d->migrations) {
    const std::uint32_t v = m.job.value();
    if (v >= rt_.size() || rt_[v].run_start_ms < 0 || rt_[v].evicting)
      return make_error(errc::internal,
                        "placement {} planned a migration of job {}, which is not "
                        "a running job",
                        place_.name(), v);
  }
  if (auto ok = apply(state_, *d); !ok)
    return make_error(errc::internal, "the model refused the migrations planned by {}: {}",
                      place_.name(), ok.error().message);
  HETSCHED_TRY(after_apply(*d, t));
  return true;
}

void engine::recount_tasks(std::uint32_t j) {
  const auto pl = state_.placement(job_id(j));
  std::uint32_t k = 0;
  if (pl)
    for (const task_placement& p : *pl) k += p.node.valid() ? 1u : 0u;
  rt_[j].placed_tasks = k >= trace_[j].tasks ? 0 : k;
}

result<bool> engine::run_plan(std::int64_t t) {
  place_.set_time(t);
  auto d = place_.plan(state_);
  if (!d) return std::move(d).error();
  d->deferrals.clear();  // informational only
  const bool any = !d->empty();
  if (any) {
    // Entries may only name jobs the engine tracks, and never a victim in flight.
    const auto bad = [&](job_id id) {
      return id.value() >= rt_.size() || rt_[id.value()].evicting;
    };
    const auto fail = [&](job_id id) {
      return make_error(errc::internal,
                        "placement {} planned an entry for job {}, which it may "
                        "not change now (unknown or being evicted)",
                        place_.name(), id);
    };
    for (const binding& b : d->binds)
      if (bad(b.job)) return fail(b.job);
    for (const preemption& p : d->preemptions)
      if (bad(p.job)) return fail(p.job);
    for (const migration& m : d->migrations)
      if (bad(m.job)) return fail(m.job);
    for (const suspension& s : d->suspensions)
      if (bad(s.job)) return fail(s.job);
    for (const resumption& r : d->resumes)
      if (bad(r.job)) return fail(r.job);
    for (const partial_release& r : d->releases)
      if (bad(r.job)) return fail(r.job);
    if (auto ok = apply(state_, *d); !ok)
      return make_error(errc::internal, "the model refused the plan of {}: {}", place_.name(),
                        ok.error().message);
    HETSCHED_TRY(after_apply(*d, t));
  }
  const std::int64_t next = place_.next_plan_ms();
  if (next > t && (plan_at_ <= t || next < plan_at_)) {
    plan_at_ = next;
    push(next, ev::plan, 0);
  }
  return any;
}

result<bool> engine::try_place(std::uint32_t j, std::int64_t t) {
  ++out_.counters.placement_calls;
  place_.set_time(t);
  auto d = place_.place(state_, job_id(j));
  if (!d) return std::move(d).error();
  if (d->binds.empty()) {
    if (!d->preemptions.empty()) HETSCHED_TRY(start_evictions(j, *d, t));
    return false;
  }
  HETSCHED_TRY(commit(j, *d, t));
  return true;
}

result<void> engine::pass(std::int64_t t, bool preempt) {
  ++out_.counters.passes;
  dirty_ = false;
  for (const std::uint32_t s : std::vector<std::uint32_t>(orphans_.begin(), orphans_.end())) {
    if (!rt_[s].suspended || slice_pairs_.contains(s) || place_.owns_suspensions()) {
      orphans_.erase(s);
      continue;
    }
    auto ok = try_resume(s, t);
    if (!ok) return std::move(ok).error();
  }
  std::vector<std::uint32_t> admitted;
  if (preempt) {
    auto a = preempt_pass(t);
    if (!a) return std::move(a).error();
    admitted = std::move(*a);
  }
  if (place_.plans()) {
    // The placement's planners first (a quantum boundary, a shrink for the waiting jobs).
    auto planned = run_plan(t);
    if (!planned) return std::move(planned).error();
  }
  HETSCHED_TRY(place_pass(t));
  if (place_.migrates()) {
    // Migrations use what the waiting jobs left; the jobs then get another chance.
    auto moved = migrate(t);
    if (!moved) return std::move(moved).error();
    if (*moved) HETSCHED_TRY(place_pass(t));
  }
  if (place_.plans()) {
    // Then on what the waiting jobs left (a grow into idle GPUs, a packing for a job that still
    // waits); if it changed anything, the waiting jobs get another chance.
    auto planned = run_plan(t);
    if (!planned) return std::move(planned).error();
    if (*planned) HETSCHED_TRY(place_pass(t));
  }
  for (const std::uint32_t j : admitted)
    if (rt_[j].waiting) blocked_at_[j] = release_gen_;
  for (const std::uint32_t v : las_victims_) rt_[v].las_victim = false;
  las_victims_.clear();
  return {};
}

result<void> engine::place_pass(std::int64_t t) {
  // A placement that time-slices or preempts may act with too few free GPUs.
  const bool over = place_.oversubscribes() || place_.preempts();
  std::vector<bool> failed(by_shape_.size(), false);
  if (order_.static_keys()) {
    while (true) {
      if (!over && free_milli() <= 0) break;
      std::uint32_t best = none;
      for (std::uint32_t s = 0; s < by_shape_.size(); ++s) {
        if (failed[s] || by_shape_[s].empty()) continue;
        if (best == none || *by_shape_[s].begin() < *by_shape_[best].begin()) best = s;
      }
      if (best == none) break;
      const std::uint32_t j = by_shape_[best].begin()->second;
      bool placed = false;
      if (over || milli(j) <= free_milli()) {
        auto r = try_place(j, t);
        if (!r) return std::move(r).error();
        placed = *r;
      }
      if (!placed) {
        failed[best] = true;
        if (p_.blocking) break;
      }
    }
    return {};
  }
  if (waiting_.empty()) return {};
  std::vector<job_view> views;
  views.reserve(waiting_.size());
  const std::vector<std::uint32_t> ids = waiting_;
  for (const std::uint32_t j : ids) views.push_back(view(j, t));
  const order_context ctx{t, out_.total_milli_gpu, state_.cluster().total_capacity().milli_cpu,
                          state_.cluster().total_capacity().memory_mib, usage_};
  const std::vector<std::uint32_t> ord = order_.order(views, ctx);
  std::vector<bool> present(by_shape_.size(), false);
  std::size_t open = 0;
  for (const std::uint32_t j : ids) {
    if (present[rt_[j].shape]) continue;
    present[rt_[j].shape] = true;
    ++open;
  }
  for (const std::uint32_t k : ord) {
    const std::uint32_t j = ids[k];
    if (!over && free_milli() <= 0) break;
    if (open == 0) break;
    if (failed[rt_[j].shape]) continue;
    bool placed = false;
    if (over || milli(j) <= free_milli()) {
      auto r = try_place(j, t);
      if (!r) return std::move(r).error();
      placed = *r;
    }
    if (!placed) {
      failed[rt_[j].shape] = true;
      --open;
      if (p_.blocking) break;
    }
  }
  return {};
}

result<sim_result> engine::run() {
  const cluster& c = state_.cluster();
  const std::size_t n = trace_.size();
  for (std::size_t i = 0; i < n; ++i) HETSCHED_TRY(validate_trace_job(trace_[i], i));
  out_.jobs.assign(n, job_outcome{});
  rt_.assign(n, job_rt{});
  waiting_pos_.assign(n, none);
  running_pos_.assign(n, none);
  blocked_at_.assign(n, 0);
  out_.total_milli_gpu = c.total_capacity().milli_gpu;
  out_.total_milli_cpu = c.total_capacity().milli_cpu;
  out_.total_memory_mib = c.total_capacity().memory_mib;
  out_.first_submit_ms = n > 0 ? trace_[0].submit_ms : 0;
  for (const workload::trace_job& tj : trace_)
    out_.first_submit_ms = std::min(out_.first_submit_ms, tj.submit_ms);
  for (const node_info& info : c.nodes())
    max_node_gpus_ = std::max(max_node_gpus_, info.device_count);
  for (std::size_t i = 0; i < c.node_count(); ++i) {
    const node_id node(static_cast<std::uint32_t>(i));
    if (state_.node_health(node) != health::healthy) continue;
    const node_info& info = c.node(node);
    for (std::uint32_t k = 0; k < info.device_count; ++k)
      if (state_.device_health(device_id(info.first_device.value() + k)) == health::healthy)
        healthy_milli_ += milli_per_gpu_unit;
  }
  place_.rebuild(state_);

  std::vector<std::uint32_t> arrivals(n);
  for (std::uint32_t i = 0; i < n; ++i) arrivals[i] = i;
  std::stable_sort(arrivals.begin(), arrivals.end(), [&](std::uint32_t a, std::uint32_t b) {
    return trace_[a].submit_ms < trace_[b].submit_ms;
  });
  if (n == 0) return std::move(out_);
  const std::int64_t first = trace_[arrivals.front()].submit_ms;
  const std::int64_t last = trace_[arrivals.back()].submit_ms;
  sample_ms_ =
      p_.sample_ms > 0 ? p_.sample_ms : std::max<std::int64_t>(60'000, (last - first) / 500);
  last_t_ = first;
  next_sample_ = first;

  const bool preemptive = order_.preemptive();
  const std::int64_t round = p_.round_ms > 0 ? p_.round_ms : (preemptive ? 60'000 : 0);
  const bool rounds_only = p_.round_ms > 0;
  if (round > 0) push((first / round + 1) * round, ev::round, 0);
  schedule_node_failure(first);

  std::size_t cursor = 0;
  while (cursor < n || !events_.empty()) {
    std::int64_t t = std::numeric_limits<std::int64_t>::max();
    if (cursor < n) t = trace_[arrivals[cursor]].submit_ms;
    if (!events_.empty()) t = std::min(t, events_.top().t);
    advance(t);
    bool round_now = false;
    while (!events_.empty() && events_.top().t == t) {
      const event e = events_.top();
      events_.pop();
      if (e.kind != ev::round && e.kind != ev::slice && e.kind != ev::plan) --live_events_;
      switch (e.kind) {
        case ev::finish:
          if (e.epoch == rt_[e.who].epoch) HETSCHED_TRY(finish(e.who, t));
          break;
        case ev::fail:
          if (e.epoch == rt_[e.who].epoch) HETSCHED_TRY(fail(e.who, t));
          break;
        case ev::node_fail: HETSCHED_TRY(node_failure(t)); break;
        case ev::node_repair: HETSCHED_TRY(node_repair(e.who, t)); break;
        case ev::slice: HETSCHED_TRY(rotate(t)); break;
        case ev::evict:
          if (e.epoch == rt_[e.who].epoch && rt_[e.who].evicting) HETSCHED_TRY(evict(e.who, t));
          break;
        case ev::round: round_now = true; break;
        case ev::plan:
          if (e.t == plan_at_) plan_at_ = -1;
          dirty_ = true;
          break;
      }
    }
    while (cursor < n && trace_[arrivals[cursor]].submit_ms == t) {
      HETSCHED_TRY(arrive(arrivals[cursor], t));
      ++cursor;
    }
    arrived_ = cursor;
    if (round_now) {
      HETSCHED_TRY(pass(t, preemptive));
      if (cursor < n || running_ > 0 || live_events_ > 0 || !suspended_.empty())
        push(t + round, ev::round, 0);
    } else if (!rounds_only && dirty_) {
      HETSCHED_TRY(pass(t, false));
    }
    // Node failures pause while nothing runs and nothing will arrive (else a job that can never
    // be placed would keep the simulation going forever); they resume once something runs.
    if (!failure_scheduled_ && (running_ > 0 || !suspended_.empty())) schedule_node_failure(t);
    out_.end_ms = t;
  }
  // Whatever still waits can never be placed.
  for (std::uint32_t j = 0; j < n; ++j) {
    const job_rt& r = rt_[j];
    if (!r.waiting && !r.suspended) continue;
    ++out_.counters.unplaceable;
    if (r.waiting) dequeue(j, out_.end_ms);
    HETSCHED_TRY(record(state_, job_id(j), job_event::cancel));
    HETSCHED_TRY(terminal(j, out_.end_ms, job_state::cancelled));
  }
  advance(out_.end_ms);
  sample(out_.end_ms);
  return std::move(out_);
}

}  // namespace hetsched::sim::detail

namespace hetsched::sim {

result<void> validate_trace_job(const workload::trace_job& j, std::size_t index) {
  const auto bad = [&](std::string_view field, std::string_view why) {
    return make_error(errc::invalid_argument, "trace job {} ({}): field {} {}", index, j.name,
                      field, why);
  };
  if (j.submit_ms < 0) return bad("submit_ms", fmt::format("is {}, must be >= 0", j.submit_ms));
  if (j.duration_ms <= 0)
    return bad("duration_ms", fmt::format("is {}, must be > 0", j.duration_ms));
  // Larger times overflow the engine's time arithmetic (e.g. the duration in whole seconds).
  if (j.submit_ms > workload::max_trace_time_ms)
    return bad("submit_ms",
               fmt::format("is {}, at most {}", j.submit_ms, workload::max_trace_time_ms));
  if (j.duration_ms > workload::max_trace_time_ms)
    return bad("duration_ms",
               fmt::format("is {}, at most {}", j.duration_ms, workload::max_trace_time_ms));
  if (j.tasks == 0) return bad("tasks", "is 0, must be >= 1");
  if (j.tasks > max_tasks_per_job)
    return bad("tasks", fmt::format("is {}, at most {}", j.tasks, max_tasks_per_job));
  if (j.gpus_per_task > max_gpus_per_task)
    return bad("gpus_per_task",
               fmt::format("is {}, at most {}", j.gpus_per_task, max_gpus_per_task));
  const bool whole = j.gpu_milli_per_task == std::int64_t{1000} * j.gpus_per_task;
  const bool frac =
      j.gpus_per_task == 1 && j.gpu_milli_per_task >= 1 && j.gpu_milli_per_task <= 999;
  if (!whole && !frac)
    return bad("gpu_milli_per_task",
               fmt::format("is {} with gpus_per_task {} (expected 1000 x gpus_per_task, or "
                           "1..999 with gpus_per_task 1)",
                           j.gpu_milli_per_task, j.gpus_per_task));
  if (j.cpu_milli_per_task < 0 || j.cpu_milli_per_task > max_resource_amount)
    return bad("cpu_milli_per_task", fmt::format("is {}", j.cpu_milli_per_task));
  if (j.memory_mib_per_task < 0 || j.memory_mib_per_task > max_resource_amount)
    return bad("memory_mib_per_task", fmt::format("is {}", j.memory_mib_per_task));
  if (!j.gpu_type.empty() && !gpu_type::is_valid_name(j.gpu_type))
    return bad("gpu_type", fmt::format("'{}' is not a valid GPU type name", j.gpu_type));
  return {};
}

result<sim_result> simulate(std::shared_ptr<const cluster> description,
                            const workload::trace& trace, ordering_policy& order,
                            placement_policy& place, const sim_params& params,
                            sim_observer* observer) {
  if (description == nullptr)
    return make_error(errc::invalid_argument, "simulate: no cluster description");
  if (params.round_ms < 0 || params.preemption_cost_ms < 0 || params.preemption_delay_ms < 0 ||
      params.migration_cost_ms < 0 || params.resume_cost_ms < 0 || params.time_slice_ms < 0 ||
      params.node_repair_ms < 1 || params.sample_ms < 0)
    return make_error(errc::invalid_argument,
                      "simulate: negative period, cost or delay (round_ms, *_cost_ms, "
                      "preemption_delay_ms, time_slice_ms, sample_ms), or node_repair_ms < 1");
  if (!(params.job_failure_probability >= 0.0 && params.job_failure_probability < 1.0))
    return make_error(errc::invalid_argument,
                      "simulate: job_failure_probability {} is not in [0, 1)",
                      params.job_failure_probability);
  if (!(params.node_mtbf_hours >= 0.0) || !std::isfinite(params.node_mtbf_hours))
    return make_error(errc::invalid_argument, "simulate: node_mtbf_hours {} must be >= 0",
                      params.node_mtbf_hours);
  if (params.speed.enabled()) {
    if (auto ok = validate(params.speed.params()); !ok)
      return make_error(errc::invalid_argument, "simulate: speed model: {}", ok.error().message);
    const cluster_topology* topo = params.topology.get();
    if (topo == nullptr)
      return make_error(errc::invalid_argument,
                        "simulate: the speed model is enabled but sim_params::topology is empty");
    if (topo->node_count() != description->node_count() ||
        topo->gpu_count() != description->device_count())
      return make_error(errc::invalid_argument,
                        "simulate: the speed model's topology has {} nodes and {} GPUs, the "
                        "cluster {} nodes and {} GPUs",
                        topo->node_count(), topo->gpu_count(), description->node_count(),
                        description->device_count());
  }
  detail::engine e(std::move(description), trace, order, place, params, observer);
  return e.run();
}

}  // namespace hetsched::sim
