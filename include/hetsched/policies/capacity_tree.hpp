// SPDX-License-Identifier: MIT
// The capacity tree of hierarchical capacity queues (capacity_queue.hpp): cohorts and queues with
// quotas per (flavor, resource), borrowing and lending limits, queue orders and preemption
// settings, YARN queue parameters converted to it, and the quota algebra over a usage vector
// (Kueue's available(), usage propagation, the dominant resource share of fair sharing).
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
#include <hetsched/policies/drf.hpp>

namespace hetsched {

/// The largest quota, limit or request amount (2^40).
inline constexpr std::int64_t max_quota_amount = std::int64_t{1} << 40;
/// The largest subtree quota of a root and the largest usage of any node (2^42).
inline constexpr std::int64_t max_tree_amount = std::int64_t{1} << 42;

/// A flavor (GPU type, node group) and a resource name.
struct flavor_resource {
  std::string flavor;
  std::string resource;
  friend auto operator<=>(const flavor_resource&, const flavor_resource&) = default;
};

/// Quota of one node for one (flavor, resource).
struct quota_spec {
  std::string flavor = "default";
  std::string resource;
  std::int64_t nominal = 0;                     ///< Guaranteed amount (0..max_quota_amount).
  std::optional<std::int64_t> borrowing_limit;  ///< Most the node may borrow; nullopt: no limit.
  std::optional<std::int64_t> lending_limit;    ///< Most it lends (<= nominal); nullopt: all.
  friend bool operator==(const quota_spec&, const quota_spec&) = default;
};

enum class capacity_node_kind : std::uint8_t { cohort, queue };

/// Kueue withinClusterQueue.
enum class within_queue_preemption : std::uint8_t {
  never,
  lower_priority,
  /// Also equal priority with a later queue-order time than the preemptor's submit time, as
  /// Kueue compares queue-order timestamps (capacity_state::queue_order_time()).
  lower_or_newer_equal_priority
};
/// Kueue reclaimWithinCohort.
enum class cohort_reclaim : std::uint8_t { never, lower_priority, any };

/// Kueue borrowWithinCohort (classic preemption only; fair sharing ignores it).
struct borrow_within_cohort {
  bool enabled = false;
  std::optional<std::int32_t> max_priority_threshold;
  friend bool operator==(const borrow_within_cohort&, const borrow_within_cohort&) = default;
};

struct queue_preemption {
  within_queue_preemption within_queue = within_queue_preemption::never;
  cohort_reclaim reclaim = cohort_reclaim::never;
  borrow_within_cohort borrow;
  friend bool operator==(const queue_preemption&, const queue_preemption&) = default;
};

/// Order of pending workloads inside a queue.
/// - strict_fifo / best_effort_fifo: submit time, then job id. Strict: a head that does not fit
///   blocks the queue; best effort: later workloads may go first.
/// - strict_priority / priority: higher priority, then submit time, then job id (Kueue's
///   StrictFIFO / BestEffortFIFO).
/// - drf: the tenant with the lowest dominant share of the queue's nominal quota (usage inside
///   this queue, admissions of the running cycle included) goes first, ties to the lower tenant
///   id; within a tenant as `priority`. Best effort.
/// - custom: capacity_cycle_options::custom_order (a strict weak order; ties then go to the
///   lower job id). Best effort.
/// In drf and custom queues the pending workloads that planned preemptions go first (in key
/// order), then the order resumes: the quota their victims free is theirs, where the order
/// could otherwise put a victim back in the queue before its preemptor and preempt forever
/// (priority and FIFO orders already put victims after their preemptor).
enum class queue_order : std::uint8_t {
  strict_fifo,
  best_effort_fifo,
  strict_priority,
  priority,
  drf,
  custom
};

/// YARN user limits of a leaf queue (UsersManager.computeUserLimit), applied per (flavor,
/// resource) against the queue's nominal quota.
struct yarn_user_limit_spec {
  std::int64_t minimum_user_limit_percent = 100;  ///< MULP, 1..100.
  double user_limit_factor = 1.0;                 ///< ULF > 0, or -1 for "max capacity".
  std::map<tenant_id, double> user_weights;       ///< Default weight 1; each > 0 and finite.
  friend bool operator==(const yarn_user_limit_spec&, const yarn_user_limit_spec&) = default;
};

/// One node of the tree as the caller describes it.
struct capacity_node_spec {
  std::string name;
  std::string parent;  ///< Empty for a root.
  capacity_node_kind kind = capacity_node_kind::queue;
  /// Quotas; for a queue, the first appearance of each flavor gives its flavor preference order.
  std::vector<quota_spec> quotas;
  /// Any finite value >= 0 (Kueue's range), taken as the decimal it prints as (decimal_weight);
  /// 0 makes any borrowing rank highest.
  double fair_weight = 1.0;
  queue_preemption preemption;                     ///< Queues only.
  queue_order order = queue_order::priority;       ///< Queues only.
  std::optional<yarn_user_limit_spec> user_limit;  ///< Queues only.
};

struct capacity_tree_spec {
  std::vector<capacity_node_spec> nodes;
};

/// A fair-sharing weight as an exact decimal, digits * 10^exponent: the shortest decimal that
/// reads back as the double it was given (Kueue's weights are decimal quantities, so 0.1 is
/// exactly 1/10 and 123456789 exactly itself). Shares divided by weights are compared exactly,
/// whatever the weights' magnitudes (multi-word integer products; capacity_drs.cpp).
struct decimal_weight {
  std::uint64_t digits = 1;   ///< 0 for a zero weight, else below 10^17 with no trailing zero.
  std::int32_t exponent = 0;  ///< Power of ten (-340..310).
  double value = 1.0;         ///< The double it was made from (display only).
  friend bool operator==(const decimal_weight&, const decimal_weight&) = default;
};

/// Returns the exact decimal of weight `w` (shortest round trip, e.g. 0.1 -> 1 * 10^-1,
/// 123456789 -> 123456789 * 10^0, 2.5e-9 -> 25 * 10^-10). Errors: invalid_argument naming `node`
/// for a negative, NaN or infinite weight.
[[nodiscard]] result<decimal_weight> make_decimal_weight(double w, std::string_view node);

/// A YARN CapacityScheduler queue: capacities in percent of the parent.
struct yarn_queue_spec {
  std::string name;
  std::string parent;  ///< Empty for the root queue.
  bool leaf = true;
  double capacity_percent = 100;         ///< 0..100 of the parent.
  double maximum_capacity_percent = -1;  ///< capacity..100 of the parent; -1 = 100.
  std::optional<yarn_user_limit_spec> user_limit;
  queue_order order = queue_order::best_effort_fifo;
};

/// Returns the Kueue-form spec of a YARN queue hierarchy over a cluster of `cluster_total`
/// (nominal amounts only). absolute(q) = product of capacity% down the path; a leaf's nominal is
/// floor(absolute * total); the root keeps the rounding remainder, other cohorts get no own
/// quota; a non-root node's borrowing limit is floor(absolute_max * total) - its subtree quota.
/// As in YARN's percentage mode, the capacities of each non-leaf queue's children must sum to
/// exactly 100 (floating-point error up to 1e-6 points forgiven): a sum above or below is an
/// error naming the parent and the sum. Errors (nothing returned): invalid_argument for a
/// capacity outside 0..100, a maximum below capacity, NaN, a children's sum other than 100 (a
/// non-leaf without children sums to 0), no or several roots, a parent cycle, children of a
/// leaf; not_found for unknown parents; plus every error of capacity_tree::build.
[[nodiscard]] result<capacity_tree_spec> capacity_spec_from_yarn(
    std::span<const yarn_queue_spec> queues, std::span<const quota_spec> cluster_total);

/// An immutable tree of cohorts and queues with its static quota algebra. Node ids are queue_id
/// values 0..size()-1 in spec order (cohorts included); flavor-resource indices are dense.
class capacity_tree {
 public:
  /// Returns the tree of `spec`. Errors (nothing is built), each naming the node: invalid_argument
  /// for an empty name, an empty flavor or resource, a negative amount, a lending limit above
  /// nominal, a negative/NaN/infinite weight, a queue with children, a parent cycle, a borrowing
  /// limit on a root, a queue-only setting on a cohort or bad YARN user limits; already_exists
  /// for a duplicate node name or (flavor, resource) within a node; not_found for an unknown
  /// parent; out_of_range for an amount above max_quota_amount or a root subtree quota (plus
  /// borrowing limits) above max_tree_amount. O(n * F + n log n).
  [[nodiscard]] static result<capacity_tree> build(const capacity_tree_spec& spec);

  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
  [[nodiscard]] std::size_t fr_count() const noexcept { return frs_.size(); }
  [[nodiscard]] const flavor_resource& fr(std::size_t i) const { return frs_[i]; }
  /// Returns the index of (flavor, resource), or nullopt if no node names it.
  [[nodiscard]] std::optional<std::size_t> find_fr(std::string_view flavor,
                                                   std::string_view resource) const;
  /// Returns true if some node has quota in `flavor`.
  [[nodiscard]] bool has_flavor(std::string_view flavor) const;
  /// Returns the node named `name`, or nullopt.
  [[nodiscard]] std::optional<queue_id> find(std::string_view name) const;

  [[nodiscard]] const capacity_node_spec& spec(queue_id n) const { return nodes_[n.value()].spec; }
  [[nodiscard]] const std::string& name(queue_id n) const { return spec(n).name; }
  [[nodiscard]] bool is_queue(queue_id n) const {
    return spec(n).kind == capacity_node_kind::queue;
  }
  /// Returns the parent, or queue_id::invalid() for a root.
  [[nodiscard]] queue_id parent(queue_id n) const { return nodes_[n.value()].parent; }
  [[nodiscard]] std::span<const queue_id> children(queue_id n) const {
    return nodes_[n.value()].children;
  }
  /// Returns the node and its ancestors, the node first and its root last.
  [[nodiscard]] std::span<const queue_id> path_to_root(queue_id n) const {
    return nodes_[n.value()].path;
  }
  /// Returns the queues of the tree rooted at `root`, in id order (empty for a non-root).
  [[nodiscard]] std::span<const queue_id> tree_queues(queue_id root) const {
    return nodes_[root.value()].tree_queues;
  }
  /// Returns the roots in id order.
  [[nodiscard]] std::span<const queue_id> roots() const noexcept { return roots_; }
  /// Returns a queue's flavor indices in preference order (first appearance in its quotas).
  [[nodiscard]] std::span<const std::uint32_t> flavor_order(queue_id q) const {
    return nodes_[q.value()].flavor_order;
  }
  [[nodiscard]] const std::string& flavor_name(std::uint32_t f) const { return flavors_[f]; }
  /// Returns the fair-sharing weight as an exact decimal.
  [[nodiscard]] const decimal_weight& weight(queue_id n) const { return nodes_[n.value()].weight; }
  [[nodiscard]] bool zero_weight(queue_id n) const { return nodes_[n.value()].zero_weight; }

  /// Returns true if node `n` declares a quota for fr (a queue may only use declared frs).
  [[nodiscard]] bool declares(queue_id n, std::size_t fr) const { return declared_[at(n, fr)]; }
  [[nodiscard]] std::int64_t nominal(queue_id n, std::size_t fr) const {
    return nominal_[at(n, fr)];
  }
  [[nodiscard]] std::optional<std::int64_t> borrowing_limit(queue_id n, std::size_t fr) const {
    if (!has_borrowing_[at(n, fr)]) return std::nullopt;
    return borrowing_[at(n, fr)];
  }
  [[nodiscard]] std::optional<std::int64_t> lending_limit(queue_id n, std::size_t fr) const {
    if (!has_lending_[at(n, fr)]) return std::nullopt;
    return lending_[at(n, fr)];
  }
  /// SubtreeQuota: nominal for a queue; own nominal + sum over children of (subtree - local).
  [[nodiscard]] std::int64_t subtree_quota(queue_id n, std::size_t fr) const {
    return subtree_[at(n, fr)];
  }
  /// localQuota: max(0, subtree - lending limit) when a lending limit is set, else 0.
  [[nodiscard]] std::int64_t local_quota(queue_id n, std::size_t fr) const {
    return local_[at(n, fr)];
  }
  /// potentialAvailable: the most `n` could use of fr with every other node idle.
  [[nodiscard]] std::int64_t potential_available(queue_id n, std::size_t fr) const {
    return potential_[at(n, fr)];
  }
  /// Resource names in alphabetical order, each with its fr indices (all flavors).
  [[nodiscard]] const std::vector<std::pair<std::string, std::vector<std::uint32_t>>>&
  resources_by_name() const noexcept {
    return by_name_;
  }

 private:
  struct node {
    capacity_node_spec spec;
    queue_id parent = queue_id::invalid();
    std::vector<queue_id> children;
    std::vector<queue_id> path;
    std::vector<std::uint32_t> flavor_order;
    std::vector<queue_id> tree_queues;  ///< Roots only.
    decimal_weight weight;
    bool zero_weight = false;
  };
  [[nodiscard]] std::size_t at(queue_id n, std::size_t fr) const {
    return n.value() * frs_.size() + fr;
  }

  std::vector<node> nodes_;
  std::vector<queue_id> roots_;
  std::vector<flavor_resource> frs_;
  std::vector<std::string> flavors_;
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> by_name_;
  std::map<std::string, queue_id, std::less<>> by_node_name_;
  std::vector<std::int64_t> nominal_, borrowing_, lending_, subtree_, local_, potential_;
  std::vector<bool> declared_, has_borrowing_, has_lending_;
};

/// Usage per (node, fr), indexed node * fr_count() + fr.
using capacity_usage = std::vector<std::int64_t>;

/// available(n, fr) of Kueue: for a root, subtree - usage (negative after a quota cut);
/// otherwise max(0, local - usage) + min(available(parent), subtree - local - max(0, usage -
/// local) + borrowing limit), the second term of the min only with a borrowing limit.
/// O(depth).
[[nodiscard]] std::int64_t quota_available(const capacity_tree& tree, const capacity_usage& usage,
                                           queue_id n, std::size_t fr);

/// Adds `delta` (may be negative) to the usage of queue `q` for fr and propagates it up:
/// usage(cohort) = sum over children of max(0, usage(child) - local(child)). O(depth).
void add_usage(const capacity_tree& tree, capacity_usage& usage, queue_id q, std::size_t fr,
               std::int64_t delta);

/// A Dominant Resource Share: max over resource names r of borrowed_r * 1000 / lendable_r,
/// divided by the weight. borrowed_r = sum over flavors of max(0, usage - subtree quota);
/// lendable_r = sum over flavors of potential_available(parent). Resources with lendable 0 are
/// skipped; the dominant resource is the first (alphabetical) attaining the max. Exact: the
/// value is borrowed * 1000 / (lendable * digits * 10^exponent) of the node's decimal_weight,
/// compared without rounding for any weights (equal weights: one 128-bit cross-multiplication).
/// With a zero weight and borrowing the value is +Inf: zero-weight borrowers rank above all
/// others and among themselves by the unweighted ratio.
struct drs_value {
  bool infinite = false;
  std::int64_t borrowed = 0;  ///< Of the dominant resource; 0 when not borrowing.
  std::int64_t lendable = 1;  ///< Of the dominant resource.
  decimal_weight weight;      ///< The node's (1 when not borrowing).
  std::string_view dominant;  ///< Empty when not borrowing.

  [[nodiscard]] bool borrowing() const noexcept { return borrowed > 0; }
  /// Returns ceil(value), Kueue's rounded DRS; INT64_MAX when infinite.
  [[nodiscard]] std::int64_t rounded() const noexcept;
  /// Returns the value as a double (+Inf when infinite), for display only.
  [[nodiscard]] double to_double() const noexcept;
  friend std::strong_ordering operator<=>(const drs_value& a, const drs_value& b) noexcept;
  friend bool operator==(const drs_value& a, const drs_value& b) noexcept { return (a <=> b) == 0; }
};

/// Returns the DRS of node `n` under `usage`; 0 (not borrowing) for a root. O(F).
[[nodiscard]] drs_value dominant_resource_share(const capacity_tree& tree,
                                                const capacity_usage& usage, queue_id n);

}  // namespace hetsched
