// SPDX-License-Identifier: MIT
// Job orderings for a scheduler's queue: FIFO, SJF, Tiresias 2D-LAS with discretised queues, and
// DRF over tenants. Pure functions of a job_view snapshot.
//
// An ordering says which waiting (or, for preemptive orderings, running) job should get GPUs
// first; placement is a separate concern (affinity_packer, gandiva_reactive). FIFO, SJF and LAS
// give each job a key (an order_key compared lexicographically, then job id); DRF interleaves
// tenants progressively, so it sorts a whole span at once. Times are milliseconds; attained
// service is GPU-milliseconds (milli-GPU x ms / 1000), as Tiresias counts it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// What an ordering knows about one job.
struct job_view {
  job_id id;
  std::uint32_t tenant = 0;  ///< Dense tenant index into order_context::tenants.
  std::int64_t submit_ms = 0;
  std::int64_t milli_gpu = 0;   ///< Whole request, all tasks.
  std::int64_t milli_cpu = 0;   ///< Whole request, all tasks.
  std::int64_t memory_mib = 0;  ///< Whole request, all tasks.
  /// Expected run time; -1 when unknown (SJF puts unknown jobs last).
  std::int64_t duration_estimate_ms = -1;
  std::int64_t attained_gpu_ms = 0;  ///< Service received so far (GPU-ms).
  bool running = false;              ///< Holds resources now.

  friend bool operator==(const job_view&, const job_view&) = default;
};

/// A tenant's current allocation and its weight (DRF).
struct tenant_usage {
  std::int64_t milli_gpu = 0;
  std::int64_t milli_cpu = 0;
  std::int64_t memory_mib = 0;
  std::uint32_t weight = 1;  ///< >= 1.

  friend bool operator==(const tenant_usage&, const tenant_usage&) = default;
};

/// The cluster-wide facts an ordering may use.
struct order_context {
  std::int64_t now_ms = 0;
  std::int64_t capacity_milli_gpu = 0;
  std::int64_t capacity_milli_cpu = 0;
  std::int64_t capacity_memory_mib = 0;
  std::span<const tenant_usage> tenants;  ///< Indexed by job_view::tenant.
};

/// A sort key, compared lexicographically; ties go to the lower job id.
using order_key = std::array<std::int64_t, 3>;

/// Returns FIFO's key {submit_ms, 0, 0}: earliest submission first, then lower job id.
[[nodiscard]] order_key fifo_key(const job_view& j) noexcept;

/// Returns SJF's key {estimate, submit_ms, 0}: shortest expected run time first (unknown, -1,
/// counts as longest), then earliest submission, then lower job id. Oracle SJF when the
/// estimate is the true duration.
[[nodiscard]] order_key sjf_key(const job_view& j) noexcept;

/// Parameters of Tiresias' discretised two-dimensional LAS.
/// @see J. Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19.
struct las_params {
  /// Ascending attained-service thresholds in GPU-ms: queue k holds jobs with attained service in
  /// [thresholds[k-1], thresholds[k]). Default: one threshold of 3,200 GPU-s (Tiresias' testbed).
  std::vector<std::int64_t> thresholds_gpu_ms{3'200'000};

  friend bool operator==(const las_params&, const las_params&) = default;
};

/// Returns ok if the thresholds are positive and strictly ascending (invalid_argument naming the
/// first bad index otherwise).
[[nodiscard]] result<void> validate(const las_params& p);

/// Returns the queue of a job with `attained_gpu_ms` of service: the number of thresholds <= it.
/// O(log thresholds).
[[nodiscard]] std::uint32_t las_queue(const las_params& p, std::int64_t attained_gpu_ms) noexcept;

/// Returns Tiresias 2D-LAS's key {queue, running ? 0 : 1, submit_ms}: lower queue first (less
/// attained service); inside a queue running jobs before waiting ones (so a job is only ever
/// displaced by one of a strictly higher-priority queue, which avoids thrashing between equals),
/// then FIFO by submission, then lower job id.
[[nodiscard]] order_key las_key(const las_params& p, const job_view& j) noexcept;

/// Returns true if a goes before b under keys ka, kb: key, then job id.
[[nodiscard]] constexpr bool key_before(const order_key& ka, job_id a, const order_key& kb,
                                        job_id b) noexcept {
  return ka != kb ? ka < kb : a < b;
}

/// Returns `jobs` in DRF order (Ghodsi et al., NSDI'11) as indices into `jobs`: repeatedly the
/// next job (FIFO: submit_ms, then id) of the tenant with the lowest weighted dominant share, where
/// a tenant's share counts its current usage (ctx.tenants) plus every job already put before in
/// this order. Dominant share = max over GPU, CPU and memory of usage / capacity (resources with
/// zero capacity are skipped), divided by the weight; compared exactly by 128-bit
/// cross-multiplication. Tie-break chain: lower share, then lower tenant index. Precondition:
/// every job's tenant < ctx.tenants.size(). O(n log n). Deterministic.
/// @see A. Ghodsi et al., "Dominant Resource Fairness", NSDI'11.
[[nodiscard]] std::vector<std::uint32_t> drf_order(std::span<const job_view> jobs,
                                                   const order_context& ctx);

}  // namespace hetsched
