// SPDX-License-Identifier: MIT
// Run metrics.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include <hetsched/metrics/metrics.hpp>

namespace hetsched::metrics {

double percentile_sorted(std::span<const double> values, double q) noexcept {
  if (values.empty()) return 0;
  // rank = ceil(q/100 x n) in integers, q in thousandths of a percent: in floating point
  // 99.9 / 100 x 2000 is 1998.0000000000002 and would take rank 1999.
  const auto q_milli = static_cast<std::uint64_t>(std::llround(std::clamp(q, 0.0, 100.0) * 1000));
  const auto n = static_cast<std::uint64_t>(values.size());
  const std::uint64_t rank = (q_milli * n + 99'999) / 100'000;
  return values[std::clamp<std::uint64_t>(rank, 1, n) - 1];
}

distribution describe(std::vector<double> values) {
  distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = values.size();
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  d.median = percentile_sorted(values, 50);
  d.p95 = percentile_sorted(values, 95);
  d.p99 = percentile_sorted(values, 99);
  d.p999 = percentile_sorted(values, 99.9);
  d.max = values.back();
  return d;
}

double jain_index(std::span<const double> x) noexcept {
  double sum = 0;
  double sq = 0;
  for (const double v : x) {
    sum += v;
    sq += v * v;
  }
  if (x.empty() || sq == 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * sq);
}

run_summary summarize(const run_record& r) {
  run_summary s;
  s.jobs = r.jobs.size();
  std::vector<double> jct;
  std::vector<double> queue;
  double pending = 0;
  std::int64_t last_finish = r.first_submit_ms;
  const std::size_t nt = r.tenants.size();
  s.tenants.resize(nt);
  std::vector<double> t_queue(nt, 0), t_jct(nt, 0), t_run(nt, 0), t_life(nt, 0);
  std::vector<std::size_t> t_started(nt, 0);
  double ftf_sum = 0;
  std::size_t unfair = 0;
  double run = 0;
  double ideal_run = 0;
  for (std::size_t i = 0; i < nt; ++i) s.tenants[i].name = r.tenants[i];
  for (const job_outcome& o : r.jobs) {
    if (o.rejected) {
      ++s.rejected;
      continue;
    }
    tenant_summary& t = s.tenants[o.tenant];
    ++t.jobs;
    pending += static_cast<double>(o.pending_ms) / 1000.0;
    run += static_cast<double>(o.run_ms);
    ideal_run += o.ideal_run_ms;
    if (o.first_start_ms >= 0) {
      const double q = static_cast<double>(o.first_start_ms - o.submit_ms) / 1000.0;
      queue.push_back(q);
      t_queue[o.tenant] += q;
      ++t_started[o.tenant];
    }
    if (o.state == job_state::failed) ++s.failed;
    if (o.state == job_state::cancelled) ++s.unplaceable;
    if (o.state != job_state::succeeded) continue;
    ++s.succeeded;
    ++t.succeeded;
    last_finish = std::max(last_finish, o.finish_ms);
    const double j = static_cast<double>(o.finish_ms - o.submit_ms) / 1000.0;
    jct.push_back(j);
    t_jct[o.tenant] += j;
    const double gpus = static_cast<double>(o.milli_gpu) / 1000.0;
    t_run[o.tenant] += static_cast<double>(o.duration_ms) / 1000.0 * gpus;
    t_life[o.tenant] += j * gpus;
    const double share = static_cast<double>(o.milli_gpu) *
                         static_cast<double>(std::max<std::int64_t>(1, o.active_at_submit)) /
                         static_cast<double>(std::max<std::int64_t>(1, r.total_milli_gpu));
    const double iso = static_cast<double>(o.duration_ms) / 1000.0 * std::max(1.0, share);
    const double rho = iso > 0 ? j / iso : 1.0;
    ftf_sum += rho;
    s.ftf_max = std::max(s.ftf_max, rho);
    if (rho > 1.0 + 1e-12) ++unfair;
  }
  s.jct_s = describe(std::move(jct));
  s.queue_s = describe(std::move(queue));
  const std::size_t counted = s.jobs - s.rejected;
  s.mean_pending_s = counted > 0 ? pending / static_cast<double>(counted) : 0;
  s.makespan_s = static_cast<double>(last_finish - r.first_submit_ms) / 1000.0;
  const double makespan_ms = s.makespan_s * 1000.0;
  const double gpus = static_cast<double>(r.total_milli_gpu) / 1000.0;
  if (s.makespan_s > 0) {
    s.throughput_per_h = static_cast<double>(s.succeeded) / (s.makespan_s / 3600.0);
    if (gpus > 0) {
      s.utilisation = r.busy_gpu_ms / (gpus * makespan_ms);
      s.allocation_ratio = r.allocated_gpu_ms / (gpus * makespan_ms);
    }
  }
  if (s.succeeded > 0) {
    s.ftf_mean = ftf_sum / static_cast<double>(s.succeeded);
    s.ftf_unfair_fraction = static_cast<double>(unfair) / static_cast<double>(s.succeeded);
  }
  if (ideal_run > 0) s.placement_slowdown = run / ideal_run;
  std::vector<double> ratios;
  double dmin = std::numeric_limits<double>::max();
  double dmax = 0;
  for (std::size_t i = 0; i < nt; ++i) {
    tenant_summary& t = s.tenants[i];
    if (t_started[i] > 0) t.mean_queue_s = t_queue[i] / static_cast<double>(t_started[i]);
    if (t.succeeded > 0) t.mean_jct_s = t_jct[i] / static_cast<double>(t.succeeded);
    if (t_life[i] > 0) {
      t.service_ratio = t_run[i] / t_life[i];
      ratios.push_back(t.service_ratio);
    }
    if (makespan_ms > 0 && i < r.tenant_usage.size()) {
      const tenant_integral& u = r.tenant_usage[i];
      double d = 0;
      if (r.total_milli_gpu > 0) d = std::max(d, u.gpu_ms / (gpus * makespan_ms));
      if (r.total_milli_cpu > 0)
        d = std::max(d, u.milli_cpu_ms / (static_cast<double>(r.total_milli_cpu) * makespan_ms));
      if (r.total_memory_mib > 0)
        d = std::max(d, u.memory_mib_ms / (static_cast<double>(r.total_memory_mib) * makespan_ms));
      t.dominant_share = d;
    }
    dmin = std::min(dmin, t.dominant_share);
    dmax = std::max(dmax, t.dominant_share);
  }
  s.jain = jain_index(ratios);
  s.dominant_share_spread = nt > 0 ? dmax - dmin : 0;
  s.preemptions = r.counters.preemptions;
  s.migrations = r.counters.migrations;
  s.retries = r.counters.retries;
  s.suspensions = r.counters.suspensions;
  s.node_failures = r.counters.node_failures;
  return s;
}

std::vector<std::int64_t> arrived_demand_milli(const run_record& r) {
  std::vector<std::pair<std::int64_t, std::int64_t>> arrivals;  // (submit, milli)
  arrivals.reserve(r.jobs.size());
  for (const job_outcome& o : r.jobs) arrivals.emplace_back(o.submit_ms, o.milli_gpu);
  std::sort(arrivals.begin(), arrivals.end());
  std::vector<std::int64_t> out;
  out.reserve(r.series.size());
  std::size_t k = 0;
  std::int64_t arrived = 0;
  for (const time_sample& t : r.series) {
    while (k < arrivals.size() && arrivals[k].first <= t.time_ms) arrived += arrivals[k++].second;
    out.push_back(arrived);
  }
  return out;
}

std::vector<vc_anomaly> sharing_anomaly(const run_summary& shared,
                                        std::span<const run_summary> private_runs) {
  std::vector<vc_anomaly> out;
  for (const tenant_summary& t : shared.tenants) {
    for (const run_summary& p : private_runs) {
      const auto it = std::find_if(p.tenants.begin(), p.tenants.end(),
                                   [&](const tenant_summary& x) { return x.name == t.name; });
      if (it == p.tenants.end()) continue;
      out.push_back(
          vc_anomaly{t.name, t.mean_queue_s, it->mean_queue_s, t.mean_queue_s - it->mean_queue_s});
      break;
    }
  }
  return out;
}

}  // namespace hetsched::metrics
