// SPDX-License-Identifier: MIT
// The discrete-event simulator: the speed model's part (engine.hpp, "Speed"). A running job's
// rate is read from the speed model when it starts and whenever a job starts or stops on one of
// its devices; its finish (or drawn failure) moves with it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "sim/engine_impl.hpp"

namespace hetsched::sim::detail {
namespace {

// Far beyond any simulated time, small enough that t + it cannot overflow.
constexpr std::int64_t never_ms = std::numeric_limits<std::int64_t>::max() / 4;

// The job type a co-located job stands for when its trace names none: unknown to every table,
// so the model's default interference applies.
constexpr std::string_view unnamed_job_type = "?";

// Rates such as 1 / 1.08 are not exact in binary: work and wall times are rounded to whole ms
// after a relative nudge of `slack` towards the exact quotient's side, so that 1,000,000 ms of
// work at 1 / 1.08 takes 1,080,000 ms, not 1,080,001.
constexpr double slack = 1e-12;

}  // namespace

std::int64_t engine::speed_work_in(double rate, std::int64_t elapsed) {
  return static_cast<std::int64_t>(std::floor(static_cast<double>(elapsed) * rate * (1 + slack)));
}

std::int64_t engine::speed_wall_for(double rate, std::int64_t work) {
  if (!(rate > 0)) return never_ms;
  const double wall = std::ceil(static_cast<double>(work) / rate * (1 - slack));
  return wall >= static_cast<double>(never_ms) ? never_ms : static_cast<std::int64_t>(wall);
}

std::pair<double, double> engine::speed_of(std::uint32_t j) const {
  const auto placed = state_.placement(job_id(j));
  std::vector<device_id> gpus;
  if (placed)
    for (const task_placement& tp : *placed)
      for (const device_share& share : tp.devices) gpus.push_back(share.device);
  if (gpus.empty()) return {1.0, 1.0};  // CPU-only: no GPU to be slow on
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());

  // The running job of lowest index sharing one of its devices.
  std::uint32_t peer = none;
  for (const device_id d : gpus)
    for (const device_holder& h : state_.device_used(d).holders) {
      const std::uint32_t other = h.job.value();
      if (other != j && rt_[other].run_start_ms >= 0) peer = std::min(peer, other);
    }
  const workload::trace_job& tj = trace_[j];
  speed_query q;
  q.job_type = tj.model;
  if (peer != none)
    q.peer_job_type = trace_[peer].model.empty() ? unnamed_job_type : trace_[peer].model;
  q.gpu_count = static_cast<std::uint32_t>(gpus.size());
  q.reference_gpu_count = std::max<std::uint32_t>(1, tj.tasks * tj.gpus_per_task);
  // simulate() checked that the topology matches the description; a placement's devices are
  // distinct and in range, so placement_locality() cannot fail here.
  if (const auto tier = placement_locality(*p_.topology, gpus); tier) q.locality = *tier;

  // A gang moves at the pace of its slowest GPU type.
  std::vector<gpu_type> types;
  for (const device_id d : gpus) {
    const gpu_type& type = state_.cluster().device(d).type;
    if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  }
  speed_factors slowest;
  bool first = true;
  for (const gpu_type& type : types) {
    q.gpu = type;
    const speed_factors f = p_.speed.factors(q);
    if (first || f.rate() < slowest.rate()) slowest = f;
    first = false;
  }
  return {slowest.rate(), slowest.locality * slowest.colocation};
}

void engine::schedule_end(std::uint32_t j, std::int64_t t) {
  job_rt& r = rt_[j];
  if (!(r.rate > 0)) {
    push(t + 1, ev::fail, j, r.epoch);  // cannot run here at all (out of memory)
  } else if (r.fail_work >= 0) {
    push(t + std::max<std::int64_t>(1, wall_for(j, r.fail_work)), ev::fail, j, r.epoch);
  } else {
    push(t + wall_for(j, r.remaining_ms), ev::finish, j, r.epoch);
  }
}

void engine::start_speed(std::uint32_t j, std::int64_t t) {
  std::vector<std::uint32_t> sharing;
  if (const auto placed = state_.placement(job_id(j)); placed)
    for (const task_placement& tp : *placed)
      for (const device_share& share : tp.devices)
        for (const device_holder& h : state_.device_used(share.device).holders) {
          const std::uint32_t other = h.job.value();
          if (other != j && rt_[other].run_start_ms >= 0) sharing.push_back(other);
        }
  std::sort(sharing.begin(), sharing.end());
  sharing.erase(std::unique(sharing.begin(), sharing.end()), sharing.end());
  const auto [rate, placement] = speed_of(j);
  rt_[j].rate = rate;
  rt_[j].placement_factor = placement;
  if (sharing.empty()) return;
  for (const std::uint32_t other : sharing) {
    peers_[other].push_back(j);
    retime(other, t);
  }
  peers_[j] = std::move(sharing);
}

void engine::stop_speed(std::uint32_t j, std::int64_t t) {
  const auto it = peers_.find(j);
  if (it == peers_.end()) return;
  const std::vector<std::uint32_t> sharing = std::move(it->second);
  peers_.erase(it);
  for (const std::uint32_t other : sharing) {
    const auto mine = peers_.find(other);
    if (mine != peers_.end()) {
      std::erase(mine->second, j);
      if (mine->second.empty()) peers_.erase(mine);
    }
    if (rt_[other].run_start_ms >= 0) retime(other, t);
  }
}

void engine::retime(std::uint32_t j, std::int64_t t) {
  job_rt& r = rt_[j];
  const std::int64_t elapsed = t - r.run_start_ms;
  const std::int64_t work = work_in(j, elapsed);
  r.remaining_ms = std::max<std::int64_t>(0, r.remaining_ms - work);
  if (r.fail_work >= 0) r.fail_work = std::max<std::int64_t>(1, r.fail_work - work);
  r.attained_gpu_ms += elapsed * milli(j) / milli_per_gpu_unit;
  book_run(j, elapsed);
  r.run_start_ms = t;
  ++r.epoch;  // the pending finish or failure event is stale
  const auto [rate, placement] = speed_of(j);
  r.rate = rate;
  r.placement_factor = placement;
  schedule_end(j, t);
}

}  // namespace hetsched::sim::detail
