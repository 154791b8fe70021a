// SPDX-License-Identifier: MIT
// The built-in orderings (policy.hpp's job_ordering role): fifo_order, sjf_order, las_order
// (Tiresias 2D-LAS) and drf_job_order; each calls the pure key and order functions of
// job_order.hpp. make_fifo_ordering() and friends are their registry factories (registry.hpp).
//
// Tenant weights: an ordering may have a member tenant_weight(std::string_view tenant) returning
// the tenant's weight (>= 1; drf_job_order's `weights=` parameter). The engine asks once per
// tenant, when the tenant's first job arrives, and puts the answer in order_context::tenants
// (tenant_usage::weight); ordering_adapter answers 1 for an ordering without the member.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/job_order.hpp>
#include <hetsched/policies/policy.hpp>

namespace hetsched {

/// Returns the indices of `jobs` sorted by (key, id) of `o`. O(n log n).
template <typename KeyFn>
[[nodiscard]] std::vector<std::uint32_t> order_by_key(std::span<const job_view> jobs, KeyFn key) {
  std::vector<std::uint32_t> idx(jobs.size());
  for (std::uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::vector<order_key> keys(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) keys[i] = key(jobs[i]);
  std::sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) {
    return key_before(keys[a], jobs[a].id, keys[b], jobs[b].id);
  });
  return idx;
}

/// FIFO: fifo_key (submission time, then job id). Static, not preemptive.
struct fifo_order {
  [[nodiscard]] std::string_view name() const noexcept { return "fifo"; }
  [[nodiscard]] bool static_keys() const noexcept { return true; }
  [[nodiscard]] bool preemptive() const noexcept { return false; }
  [[nodiscard]] order_key key(const job_view& j) const noexcept { return fifo_key(j); }
  [[nodiscard]] std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                 const order_context&) const {
    return order_by_key(jobs, [](const job_view& j) { return fifo_key(j); });
  }
};

/// SJF: sjf_key (expected duration, submission, id). Static, not preemptive.
struct sjf_order {
  [[nodiscard]] std::string_view name() const noexcept { return "sjf"; }
  [[nodiscard]] bool static_keys() const noexcept { return true; }
  [[nodiscard]] bool preemptive() const noexcept { return false; }
  [[nodiscard]] order_key key(const job_view& j) const noexcept { return sjf_key(j); }
  [[nodiscard]] std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                 const order_context&) const {
    return order_by_key(jobs, [](const job_view& j) { return sjf_key(j); });
  }
};

/// Tiresias 2D-LAS with discretised queues: las_key. Dynamic (attained service grows) and
/// preemptive. @see J. Gu et al., "Tiresias", NSDI'19.
struct las_order {
  las_params params;
  [[nodiscard]] std::string_view name() const noexcept { return "tiresias"; }
  [[nodiscard]] bool static_keys() const noexcept { return false; }
  [[nodiscard]] bool preemptive() const noexcept { return true; }
  [[nodiscard]] order_key key(const job_view& j) const noexcept { return las_key(params, j); }
  [[nodiscard]] std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                 const order_context&) const {
    return order_by_key(jobs, [this](const job_view& j) { return las_key(params, j); });
  }
};

/// Largest DRF tenant weight make_ordering() accepts.
inline constexpr std::uint32_t max_tenant_weight = 1'000'000;

/// Weighted DRF across tenants (drf_order); FIFO within a tenant. Dynamic, not preemptive. A
/// tenant's dominant share is divided by its weight: with weights 2 and 1 the first tenant gets
/// twice the dominant share of the second before they tie.
/// @see A. Ghodsi et al., "Dominant Resource Fairness", NSDI'11.
/// One DRF: the weighted dominant share is computed only by `weighted_dominant_share` (drf.hpp),
/// which `drf_order` and `drf_sorter` both call. `drf_order` is not built on `drf_sorter` on
/// purpose: the sorter is Mesos's hierarchical role sorter (its vectors pin Mesos's tie-break
/// chain, share then allocation count then role path, over string-keyed resource maps), while
/// this ordering serves a flat list of tenants over three fixed dimensions (milli-GPU, milli-CPU,
/// MiB) with the tie-break chain lower share, then lower tenant index, then FIFO within a tenant;
/// moving it onto the sorter would change the pinned drf figures and cost a string-keyed map per
/// update on every scheduling pass.
struct drf_job_order {
  /// Weight of each tenant by trace name, each in [1, max_tenant_weight].
  std::map<std::string, std::uint32_t, std::less<>> weights;
  std::uint32_t default_weight = 1;  ///< Weight of a tenant not in `weights`.

  [[nodiscard]] std::string_view name() const noexcept { return "drf"; }
  [[nodiscard]] std::uint32_t tenant_weight(std::string_view tenant) const {
    const auto it = weights.find(tenant);
    return it != weights.end() ? it->second : default_weight;
  }
  [[nodiscard]] bool static_keys() const noexcept { return false; }
  [[nodiscard]] bool preemptive() const noexcept { return false; }
  [[nodiscard]] order_key key(const job_view& j) const noexcept { return fifo_key(j); }
  [[nodiscard]] std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                 const order_context& ctx) const {
    return drf_order(jobs, ctx);
  }
};

/// Registry factories (registry.hpp). fifo and sjf take no parameters; tiresias takes
/// `thresholds=<GPU-seconds>/<GPU-seconds>/...` (ascending, e.g. "3200/36000"); drf takes
/// `weights=<tenant>=<weight>/<tenant>=<weight>/...` (e.g. "vc1=2/vc2=3"; tenants by trace name,
/// each listed once; weights integers in [1, max_tenant_weight]; the entry `*=<weight>`, or 1
/// without it, weighs every tenant not listed; a tenant whose name holds '/', '=', ',' or '+'
/// cannot be named). `weights=quota` is a request to the caller (hetsched-sim fills in the
/// --vc-quota table's GPUs) and an error here. Errors: invalid_argument naming an unknown
/// parameter or the bad entry (tenant and value).
[[nodiscard]] result<std::unique_ptr<ordering_policy>> make_fifo_ordering(
    const policy_params& params);
[[nodiscard]] result<std::unique_ptr<ordering_policy>> make_sjf_ordering(
    const policy_params& params);
[[nodiscard]] result<std::unique_ptr<ordering_policy>> make_las_ordering(
    const policy_params& params);
[[nodiscard]] result<std::unique_ptr<ordering_policy>> make_drf_ordering(
    const policy_params& params);

}  // namespace hetsched
