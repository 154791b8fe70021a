// SPDX-License-Identifier: MIT
// FIFO, SJF, Tiresias 2D-LAS and DRF job orderings.
#include <algorithm>
#include <array>
#include <limits>
#include <queue>

#include <hetsched/policies/drf.hpp>
#include <hetsched/policies/job_order.hpp>

namespace hetsched {

order_key fifo_key(const job_view& j) noexcept { return {j.submit_ms, 0, 0}; }

order_key sjf_key(const job_view& j) noexcept {
  const std::int64_t est = j.duration_estimate_ms < 0 ? std::numeric_limits<std::int64_t>::max()
                                                      : j.duration_estimate_ms;
  return {est, j.submit_ms, 0};
}

result<void> validate(const las_params& p) {
  for (std::size_t i = 0; i < p.thresholds_gpu_ms.size(); ++i) {
    if (p.thresholds_gpu_ms[i] <= 0)
      return make_error(errc::invalid_argument, "las threshold {} is {}: must be positive", i,
                        p.thresholds_gpu_ms[i]);
    if (i > 0 && p.thresholds_gpu_ms[i] <= p.thresholds_gpu_ms[i - 1])
      return make_error(errc::invalid_argument,
                        "las threshold {} ({}) is not above threshold {} ({})", i,
                        p.thresholds_gpu_ms[i], i - 1, p.thresholds_gpu_ms[i - 1]);
  }
  return {};
}

std::uint32_t las_queue(const las_params& p, std::int64_t attained_gpu_ms) noexcept {
  const auto it =
      std::upper_bound(p.thresholds_gpu_ms.begin(), p.thresholds_gpu_ms.end(), attained_gpu_ms);
  return static_cast<std::uint32_t>(it - p.thresholds_gpu_ms.begin());
}

order_key las_key(const las_params& p, const job_view& j) noexcept {
  return {static_cast<std::int64_t>(las_queue(p, j.attained_gpu_ms)), j.running ? 0 : 1,
          j.submit_ms};
}

namespace {

/// A tenant's usage in drf_order's three dimensions: milli-GPU, milli-CPU, memory MiB.
using usage3 = std::array<std::int64_t, 3>;

}  // namespace

std::vector<std::uint32_t> drf_order(std::span<const job_view> jobs, const order_context& ctx) {
  const std::size_t tenants = ctx.tenants.size();
  std::vector<std::vector<std::uint32_t>> per_tenant(tenants);
  for (std::uint32_t i = 0; i < jobs.size(); ++i) {
    HETSCHED_ASSERT(jobs[i].tenant < tenants, "job tenant out of range");
    per_tenant[jobs[i].tenant].push_back(i);
  }
  for (auto& list : per_tenant) {
    std::sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
      return key_before(fifo_key(jobs[a]), jobs[a].id, fifo_key(jobs[b]), jobs[b].id);
    });
  }
  const usage3 cap = {ctx.capacity_milli_gpu, ctx.capacity_milli_cpu, ctx.capacity_memory_mib};
  const auto share_of = [&](const usage3& use, std::uint32_t t) {
    const std::int64_t w = std::max<std::uint32_t>(1, ctx.tenants[t].weight);
    return weighted_dominant_share(use, cap, drf_weight{w, 1});
  };
  std::vector<usage3> use(tenants);
  for (std::size_t t = 0; t < tenants; ++t)
    use[t] = {ctx.tenants[t].milli_gpu, ctx.tenants[t].milli_cpu, ctx.tenants[t].memory_mib};
  // Min-heap of tenants with waiting jobs: lower share, then lower index.
  struct entry {
    drf_share share;
    std::uint32_t tenant;
  };
  const auto later = [](const entry& a, const entry& b) {
    return a.share != b.share ? a.share > b.share : a.tenant > b.tenant;
  };
  std::priority_queue<entry, std::vector<entry>, decltype(later)> heap(later);
  std::vector<std::size_t> next(tenants, 0);
  for (std::uint32_t t = 0; t < tenants; ++t)
    if (!per_tenant[t].empty()) heap.push({share_of(use[t], t), t});
  std::vector<std::uint32_t> out;
  out.reserve(jobs.size());
  while (!heap.empty()) {
    const std::uint32_t t = heap.top().tenant;
    heap.pop();
    const std::uint32_t j = per_tenant[t][next[t]++];
    out.push_back(j);
    use[t][0] += jobs[j].milli_gpu;
    use[t][1] += jobs[j].milli_cpu;
    use[t][2] += jobs[j].memory_mib;
    if (next[t] < per_tenant[t].size()) heap.push({share_of(use[t], t), t});
  }
  return out;
}

}  // namespace hetsched
