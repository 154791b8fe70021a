// SPDX-License-Identifier: MIT
// capacity_placement with preemption=proportional: YARN's ProportionalCapacityPreemptionPolicy
// rounds over the simulated state (the snapshot and the victim pool: quota_placement.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include <hetsched/model/job.hpp>
#include <hetsched/policies/capacity_placement.hpp>

namespace hetsched {

result<void> capacity_placement::plan_round(const cluster_state& state) {
  const std::int64_t now = now_ms_;
  next_round_ms_ = now > std::numeric_limits<std::int64_t>::max() -
                               std::max<std::int64_t>(params_.monitoring_interval_ms, 1)
                       ? std::numeric_limits<std::int64_t>::max()
                       : now + std::max<std::int64_t>(params_.monitoring_interval_ms, 1);
  pool_.clear();

  // Tenants: the quota table's, and every tenant with a held or queued job.
  std::uint32_t tenants = static_cast<std::uint32_t>(params_.quota.size());
  std::vector<std::int64_t> pending;
  for (const auto& [id, rec] : state.jobs()) {
    if (rec.status.state != job_state::queued) continue;
    const std::int64_t m = total_milli_gpu(rec.spec);
    if (m == 0) continue;
    const std::uint32_t t = rec.spec.tenant.value();
    if (pending.size() <= t) pending.resize(t + 1, 0);
    pending[t] += m;
  }
  tenants = std::max(tenants, static_cast<std::uint32_t>(pending.size()));
  for (const auto& [j, h] : held_) tenants = std::max(tenants, h.tenant + 1);
  pending.resize(tenants, 0);

  pcpp_snapshot snap;
  snap.dimensions = 1;
  snap.cluster[0] = std::max<std::int64_t>(
      {state.cluster().total_capacity().milli_gpu, total_nominal_, std::int64_t{1}});
  const std::int64_t cluster = snap.cluster[0];
  for (std::uint32_t t = 0; t < tenants; ++t) {
    pcpp_queue q;
    q.name = fmt::format("t{}", t);
    q.guaranteed[0] = nominal(t);
    std::int64_t max = cluster;
    if (!params_.borrow) {
      max = nominal(t);
    } else if (params_.borrow_limit >= 0) {
      max = std::min(cluster, nominal(t) + params_.borrow_limit * 1000);
    }
    q.maximum[0] = std::max(max, nominal(t));
    q.pending[0] = pending[t];
    snap.queues.push_back(std::move(q));
  }
  // Running GPU jobs (held_, ascending id): one gang job each, one container per task.
  const std::int64_t protected_start = now + 1;  // after `now`: younger than any minimum
  for (const auto& [j, h] : held_) {
    const job_record* rec = state.find_job(job_id(j));
    if (rec == nullptr) continue;
    const bool in_flight = h.marked.valid() && h.marked != job_id(j);
    const bool pinned = h.marked == job_id(j);  // not preemptible
    pcpp_job pj;
    pj.id = j;
    pj.queue = h.tenant;
    pj.priority = h.priority;
    pj.submit_time = j;
    pj.gang = true;
    const std::size_t ji = snap.jobs.size();
    snap.jobs.push_back(pj);
    std::uint32_t task = 0;
    for (const task_role& r : rec->spec.roles) {
      for (std::uint32_t k = 0; k < r.task_count; ++k, ++task) {
        if (r.gpu.total_milli_gpu() == 0) continue;
        pcpp_container c;
        c.id = std::uint64_t{j} * (std::uint64_t{1} << 20) + task;
        c.job = ji;
        c.priority = h.priority;
        c.start_time = pinned ? protected_start : h.admitted_at / stamps_per_ms;
        c.size[0] = r.gpu.total_milli_gpu();
        c.in_flight = in_flight;
        snap.containers.push_back(c);
      }
    }
  }
  pcpp_params pp;
  pp.max_ignored_over_capacity = params_.max_ignored_over_capacity;
  pp.natural_termination_factor = params_.natural_termination_factor;
  pp.total_preemption_per_round = params_.total_preemption_per_round;
  pp.min_runtime = params_.min_runtime_s * 1000 + 1;
  pp.now = now + 1;
  pp.rounding = pcpp_rounding::nearest;
  auto plan = plan_proportional_preemption(snap, pp);
  if (!plan)
    return make_error(plan.error().code, "capacity: proportional preemption at {} ms: {}", now,
                      plan.error().message);
  ideal_.assign(tenants, 0);
  for (std::uint32_t t = 0; t < tenants; ++t) ideal_[t] = plan->queues[t].ideal[0];
  for (const pcpp_victim& v : plan->victims) {
    const std::uint32_t j = static_cast<std::uint32_t>(snap.jobs[v.job].id);
    const bool seen =
        std::any_of(pool_.begin(), pool_.end(), [&](const auto& e) { return e.first == j; });
    if (!seen) pool_.emplace_back(j, static_cast<std::uint32_t>(v.queue));
  }
  return {};
}

result<decision> capacity_placement::proportional_or_wait(const cluster_state& state, decision wait,
                                                          const job_record& rec,
                                                          std::int64_t need) {
  if (now_ms_ >= next_round_ms_) HETSCHED_TRY(plan_round(state));
  const std::uint32_t t = rec.spec.tenant.value();
  const std::uint32_t id = rec.spec.id.value();
  std::int64_t want = need;
  if (reserved_.contains(id)) {
    const auto it = issued_.find(id);
    want = need - (it != issued_.end() ? it->second : 0);
  } else if (t >= ideal_.size() || ideal_[t] < usage(t) + need) {
    return wait;  // its tenant is not owed the job's GPUs
  }
  std::int64_t got = 0;
  for (const auto& [v, vt] : pool_) {
    if (got >= want) break;
    const auto it = held_.find(v);
    if (it == held_.end() || it->second.marked.valid()) continue;
    got += it->second.milli;
    wait.preemptions.push_back(preemption{
        job_id(v), fmt::format("proportional: tenant {} above its ideal {} milli-GPU, by job {}",
                               vt, vt < ideal_.size() ? ideal_[vt] : 0, id)});
  }
  return wait;
}

}  // namespace hetsched
