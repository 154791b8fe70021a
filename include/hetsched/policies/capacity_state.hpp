// SPDX-License-Identifier: MIT
// capacity_state: the usage, admitted and pending workloads of hierarchical capacity queues over
// a capacity_tree (capacity_tree.hpp); the admission cycle that reads and commits it is
// capacity_queue.hpp. Also YARN's user limit.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_state_records.hpp>
#include <hetsched/policies/capacity_tree.hpp>
#include <hetsched/policies/drf.hpp>

namespace hetsched {

/// Usage, admitted and pending workloads over a capacity_tree. Every mutator validates first
/// and changes nothing on error.
class capacity_state {
 public:
  explicit capacity_state(capacity_tree tree);
  /// Copies keep their own records (the pending orders point into the copy's records).
  capacity_state(const capacity_state& other);
  capacity_state& operator=(const capacity_state& other);
  capacity_state(capacity_state&&) noexcept = default;
  capacity_state& operator=(capacity_state&&) noexcept = default;

  [[nodiscard]] const capacity_tree& tree() const noexcept { return tree_; }
  [[nodiscard]] const capacity_usage& usage() const noexcept { return usage_; }
  [[nodiscard]] std::int64_t usage(queue_id n, std::size_t fr) const {
    return usage_[n.value() * tree_.fr_count() + fr];
  }

  /// Records a workload that already holds quota (no fit check: loading a running cluster; the
  /// queue need not declare the resources, only the tree must know each (flavor, resource)).
  /// Errors: not_found (queue, or a (flavor, resource) no node declares),
  /// invalid_argument (a cohort, negative amount), already_exists (job known), out_of_range
  /// (amount above max_quota_amount or a node usage above max_tree_amount).
  /// `submit_time` is its queue-order time (Kueue's creation or last eviction time, the submit
  /// time of the pending workload it was); nullopt: admitted_at stands in.
  [[nodiscard]] result<void> add_admitted(const admitted_workload& w,
                                          std::optional<std::int64_t> submit_time = std::nullopt);
  /// Queues a workload. Errors as add_admitted, plus not_found for an allowed flavor no node
  /// has and invalid_argument when no allowed flavor of the queue declares every resource.
  [[nodiscard]] result<void> submit(const pending_workload& w);
  /// Returns ok if `w` could be submitted, ignoring its job id (what-if probes).
  [[nodiscard]] result<void> validate_pending(const pending_workload& w) const;
  /// Removes a pending or admitted workload (finished, cancelled, or a victim that terminated),
  /// freeing its quota. Errors: not_found.
  [[nodiscard]] result<void> release(job_id job);

  [[nodiscard]] bool is_pending(job_id job) const { return pending_.contains(job); }
  [[nodiscard]] bool is_admitted(job_id job) const { return admitted_index_.contains(job); }
  /// Returns the admitted workload, or nullptr.
  [[nodiscard]] const admitted_workload* admitted(job_id job) const;
  /// Returns the pending workload, or nullptr.
  [[nodiscard]] const pending_workload* pending(job_id job) const;
  /// Returns the queue-order time of an admitted workload: the submit time it was admitted with
  /// (admit_pending, or add_admitted's submit_time), else its admitted_at; nullopt if `job` is
  /// not admitted.
  [[nodiscard]] std::optional<std::int64_t> queue_order_time(job_id job) const;
  /// Returns true if `job` is admitted and marked as a victim in flight.
  [[nodiscard]] bool in_flight(job_id job) const;
  /// Returns the number of victims in flight for pending `preemptor`.
  [[nodiscard]] std::size_t victims_in_flight(job_id preemptor) const;
  [[nodiscard]] std::size_t pending_count() const noexcept { return pending_.size(); }
  [[nodiscard]] std::size_t admitted_count() const noexcept { return admitted_index_.size(); }

  // Internal records (capacity_state_records.hpp), read by the planning functions
  // (src/policies/capacity_*.cpp).
  using admitted_rec = capacity_admitted_record;
  using pending_key = capacity_pending_key;
  using flavor_uses = capacity_flavor_uses;
  using pending_rec = capacity_pending_record;
  using pending_entry = capacity_pending_entry;
  using pending_order = capacity_pending_order;
  using queue_rec = capacity_queue_record;
  [[nodiscard]] const std::vector<admitted_rec>& slots() const noexcept { return slots_; }
  [[nodiscard]] const queue_rec& queue(queue_id q) const { return queues_[q.value()]; }
  [[nodiscard]] const pending_rec& pending_record(job_id job) const { return pending_.at(job); }
  /// Returns the usage of `tenant` in queue `q` per fr (empty when none).
  [[nodiscard]] const std::vector<std::int64_t>* tenant_usage(queue_id q, tenant_id t) const;

  // Commit helpers used by apply_admission(); each assumes validated input.
  void admit_pending(job_id job, std::uint32_t flavor, std::int64_t now);
  void mark_victim(job_id victim, job_id preemptor);

 private:
  [[nodiscard]] result<std::vector<std::pair<std::uint32_t, std::int64_t>>> resolve(
      queue_id q, std::string_view flavor, const drf_vector& request, bool require_declared) const;
  void insert_admitted(admitted_workload w, std::vector<std::pair<std::uint32_t, std::int64_t>> use,
                       std::int64_t order_time);
  /// Removes pending record `it` (its queue order entries and its share of shared_uses_).
  void erase_pending(std::unordered_map<job_id, pending_rec>::iterator it);

  capacity_tree tree_;
  capacity_usage usage_;
  std::vector<admitted_rec> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::unordered_map<job_id, std::uint32_t> admitted_index_;
  std::unordered_map<job_id, pending_rec> pending_;
  std::map<flavor_uses, std::size_t> shared_uses_;  ///< Distinct uses -> records using them.
  std::vector<queue_rec> queues_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::int64_t>> tenant_usage_;
  std::unordered_map<job_id, std::size_t> in_flight_per_preemptor_;
};

/// Returns YARN's user limit as an exact fraction of the resource unit: current = capacity if
/// consumed < capacity, else consumed + minimum_allocation; limit = max(current / sum of active
/// user weights, current * MULP / 100), capped at capacity * ULF (ULF -1: at max_capacity), then
/// rounded up to a multiple of `granularity` when granularity > 0. Errors: invalid_argument for
/// a negative amount, a weight sum <= 0 or non-finite, MULP outside 1..100, a bad ULF.
[[nodiscard]] result<drf_share> yarn_user_limit(std::int64_t capacity, std::int64_t max_capacity,
                                                std::int64_t consumed,
                                                std::int64_t minimum_allocation,
                                                double active_user_weights,
                                                const yarn_user_limit_spec& spec,
                                                std::int64_t granularity = 0);

}  // namespace hetsched
