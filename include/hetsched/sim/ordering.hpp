// SPDX-License-Identifier: MIT
// The simulator's ordering plug-in: which waiting (or running) job gets GPUs first.
//
// Compile time: the job_ordering concept (any type with name/static_keys/preemptive/key/order);
// the built-in fifo_order, sjf_order, las_order (Tiresias 2D-LAS) and drf_job_order satisfy it and
// call the pure functions of policies/job_order.hpp. Run time: the small virtual base `ordering`,
// ordering_adapter<O> wrapping any job_ordering, and make_ordering(name, params), the factory the
// simulator's --policy option uses. Orderings written later (capacity queues) plug in by adding a
// type and a branch to the factory.
//
// Tenant weights: an ordering may have a member tenant_weight(std::string_view tenant) returning
// the tenant's weight (>= 1; drf_job_order's `weights=` parameter). The engine asks once per
// tenant, when the tenant's first job arrives, and puts the answer in order_context::tenants
// (tenant_usage::weight); ordering_adapter answers 1 for an ordering without the member.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/job_order.hpp>

namespace hetsched::sim {

/// Plug-in parameters as "key=value" pairs, sorted by key.
using plugin_params = std::map<std::string, std::string, std::less<>>;

/// A type that orders jobs. static_keys(): a waiting job's key() never changes (the engine keeps
/// waiting jobs sorted incrementally and never calls order()); otherwise the engine calls order()
/// on every scheduling pass. preemptive(): running jobs take part in order() and the engine may,
/// at round boundaries, preempt a running job that the order puts after waiting ones (engine.hpp:
/// within one tenant and priority under a per-tenant placement; rolled back when the victim
/// restarts in the same pass).
template <typename O>
concept job_ordering = requires(const O& o, const job_view& j, std::span<const job_view> jobs,
                                const order_context& ctx) {
  { o.name() } -> std::convertible_to<std::string_view>;
  { o.static_keys() } -> std::convertible_to<bool>;
  { o.preemptive() } -> std::convertible_to<bool>;
  { o.key(j) } -> std::same_as<order_key>;
  { o.order(jobs, ctx) } -> std::same_as<std::vector<std::uint32_t>>;
};

/// A job_ordering that weighs tenants: tenant_weight(name) is the weight (>= 1) of the tenant of
/// that trace name.
template <typename O>
concept weighted_job_ordering = job_ordering<O> && requires(const O& o, std::string_view tenant) {
  { o.tenant_weight(tenant) } -> std::same_as<std::uint32_t>;
};

/// The runtime ordering interface (see job_ordering for the contract of each member).
class ordering {
 public:
  virtual ~ordering() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual bool static_keys() const noexcept = 0;
  [[nodiscard]] virtual bool preemptive() const noexcept = 0;
  /// Returns the key of `j` (meaningful when static_keys()).
  [[nodiscard]] virtual order_key key(const job_view& j) const = 0;
  /// Returns the indices of `jobs` in scheduling order (a permutation).
  [[nodiscard]] virtual std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                         const order_context& ctx) const = 0;
  /// Returns the weight (>= 1) of the tenant named `tenant` (its trace name); the engine puts it
  /// in order_context::tenants[...].weight. Only DRF uses weights.
  [[nodiscard]] virtual std::uint32_t tenant_weight(std::string_view tenant) const = 0;
};

/// Wraps a job_ordering as an ordering.
template <job_ordering O>
class ordering_adapter final : public ordering {
 public:
  explicit ordering_adapter(O inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return inner_.name(); }
  [[nodiscard]] bool static_keys() const noexcept override { return inner_.static_keys(); }
  [[nodiscard]] bool preemptive() const noexcept override { return inner_.preemptive(); }
  [[nodiscard]] order_key key(const job_view& j) const override { return inner_.key(j); }
  [[nodiscard]] std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                 const order_context& ctx) const override {
    return inner_.order(jobs, ctx);
  }
  /// The inner ordering's tenant_weight() when it has one (weighted_job_ordering), else 1.
  [[nodiscard]] std::uint32_t tenant_weight(std::string_view tenant) const override {
    if constexpr (weighted_job_ordering<O>) {
      return inner_.tenant_weight(tenant);
    } else {
      static_cast<void>(tenant);
      return 1;
    }
  }
  [[nodiscard]] const O& inner() const noexcept { return inner_; }

 private:
  O inner_;
};

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

/// Returns the names make_ordering() accepts: fifo, sjf, tiresias (alias las), drf.
[[nodiscard]] std::span<const std::string_view> ordering_names() noexcept;

/// Returns the ordering named `name` with `params`. Parameters: tiresias takes
/// `thresholds=<GPU-seconds>/<GPU-seconds>/...` (ascending, e.g. "3200/36000"); drf takes
/// `weights=<tenant>=<weight>/<tenant>=<weight>/...` (e.g. "vc1=2/vc2=3"; tenants by trace name,
/// each listed once; weights integers in [1, max_tenant_weight]; the entry `*=<weight>`, or 1
/// without it, weighs every tenant not listed; a tenant whose name holds '/', '=', ',' or '+'
/// cannot be named); fifo and sjf take none. `weights=quota` is a
/// request to the caller (hetsched-sim fills in the --vc-quota table's GPUs) and an error here.
/// Errors: not_found naming the ordering and the valid names; invalid_argument naming an unknown
/// parameter or the bad entry (tenant and value).
[[nodiscard]] result<std::unique_ptr<ordering>> make_ordering(std::string_view name,
                                                              const plugin_params& params);

}  // namespace hetsched::sim
