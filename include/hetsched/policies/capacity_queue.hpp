// SPDX-License-Identifier: MIT
// Hierarchical capacity queues (virtual clusters): Kueue's quota algebra, fair sharing and
// admission, with YARN CapacityScheduler queue parameters and user limits.
//
// A capacity_tree is an immutable forest of cohorts (inner nodes) and queues (leaves, Kueue's
// ClusterQueues). Quotas are per (flavor, resource): a flavor models a GPU type or node group, so
// a queue's quota is a virtual view not bound to machines; a placement policy binds what is
// admitted. A capacity_state holds the usage of admitted workloads and the pending workloads.
// plan_admission() is pure: it returns what to admit (in which flavor), whom to preempt and why
// the rest waits; apply_admission() commits a plan. Victims are only marked (in flight) until the
// platform reports them gone with release(); their quota is freed then, and a preemptor with
// victims in flight never plans new ones. what_if() answers "would the next cycle admit this
// job" exactly, without side effects. Preemption lives in capacity_preemption.hpp.
//
// @see Kueue: kubernetes-sigs/kueue pkg/cache/scheduler (resource_node.go, fair_sharing.go),
//      pkg/scheduler (fair_sharing_iterator.go), site/.../concepts/{cluster_queue,fair_sharing}.md.
// @see YARN CapacityScheduler: UsersManager.computeUserLimit, CapacityScheduler.md.
// @see DRF: Ghodsi et al., "Dominant Resource Fairness", NSDI'11.
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
#include <vector>

#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/job.hpp>
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

/// A workload waiting for admission. It is admitted whole (a gang is all or nothing), in one
/// flavor for all its resources.
struct pending_workload {
  job_id job;
  queue_id queue;
  tenant_id tenant;  ///< The user (YARN user limits, DRF order).
  std::int32_t priority = 0;
  std::int64_t submit_time = 0;
  drf_vector request;                ///< Resource name -> total amount of the whole gang.
  std::vector<std::string> flavors;  ///< Allowed flavors; empty: any flavor of the queue.
};

/// A workload holding quota.
struct admitted_workload {
  job_id job;
  queue_id queue;
  tenant_id tenant;
  std::int32_t priority = 0;
  std::int64_t admitted_at = 0;
  std::string flavor = "default";
  drf_vector request;
};

/// Returns the pending workload of `spec`: request "cpu" (milli-CPU), "memory" (MiB), "gpu"
/// (milli-GPU), "gpu_memory" (MiB) and extended resources, summed over all tasks; the allowed
/// flavor is the GPU type when every GPU role names the same type. Errors: those of
/// validate(job_spec); invalid_argument when GPU roles name different types.
[[nodiscard]] result<pending_workload> workload_of(const job_spec& spec, std::int64_t submit_time);

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

  // Internal records, read by the planning functions (src/policies/capacity_*.cpp).
  struct admitted_rec {
    admitted_workload w;
    std::vector<std::pair<std::uint32_t, std::int64_t>> use;  ///< (fr, amount), amount > 0.
    job_id preemptor = job_id::invalid();                     ///< Valid while a victim in flight.
    std::uint64_t fr_mask = 0;    ///< Bit f set when it uses fr f (f >= 64 sets all bits).
    std::int64_t order_time = 0;  ///< Queue-order time (queue_order_time()).
    std::size_t pos_in_queue = 0;
    bool live = false;
  };
  struct pending_key {
    std::int64_t k1 = 0;  ///< 0 for FIFO orders, -priority otherwise.
    std::int64_t submit = 0;
    job_id job;
    friend auto operator<=>(const pending_key&, const pending_key&) = default;
  };
  /// (flavor, (fr, amount) list) for each allowed flavor declaring every resource, in the
  /// queue's flavor order.
  using flavor_uses =
      std::vector<std::pair<std::uint32_t, std::vector<std::pair<std::uint32_t, std::int64_t>>>>;
  struct pending_rec {
    pending_workload w;
    pending_key key;
    bool preemptor = false;  ///< Planned preemptions for it (Kueue's preemptor-in-progress).
    /// Resolved once at submit and shared by every pending workload with the same value (few
    /// distinct request shapes: the admission walk reads them for every pending workload).
    const flavor_uses* uses = nullptr;
  };
  /// A pending workload in its queue's order; rec is nullptr once it left (a tombstone). It
  /// repeats what the admission walk reads for every pending workload (job id in the key, the
  /// shared uses), so a workload that does not fit costs no visit to its record.
  struct pending_entry {
    pending_key key;
    const pending_rec* rec = nullptr;
    const flavor_uses* uses = nullptr;
  };
  /// The pending workloads of one queue in key order, stored flat so that an admission cycle
  /// walks them sequentially (no tree nodes, no hash lookups): a sorted main run with tombstones
  /// and a sorted run of recent insertions, merged into the main run once it holds more than
  /// max(64, 2 * sqrt(main)) entries (O(sqrt(n)) amortised per insertion; removal O(log n) plus
  /// a compaction when tombstones outnumber live entries). Read both runs with for_each() or a
  /// two-way merge of main() and recent() that skips tombstones.
  class pending_order {
   public:
    void insert(const pending_entry& entry);
    void erase(const pending_key& key);
    [[nodiscard]] std::size_t size() const noexcept { return live_; }
    [[nodiscard]] bool empty() const noexcept { return live_ == 0; }
    /// The sorted main run; entries with rec == nullptr are tombstones.
    [[nodiscard]] std::span<const pending_entry> main() const noexcept { return main_; }
    /// The sorted run of recent insertions (no tombstones).
    [[nodiscard]] std::span<const pending_entry> recent() const noexcept { return recent_; }
    /// Returns the number of entries whose key is below `key`.
    [[nodiscard]] std::size_t count_before(const pending_key& key) const;
    /// Calls fn(entry) for the entries in key order while it returns true.
    template <typename Fn>
    void for_each_while(Fn fn) const {
      auto a = main_.begin();
      auto b = recent_.begin();
      for (;;) {
        while (a != main_.end() && a->rec == nullptr) ++a;
        if (a == main_.end() && b == recent_.end()) return;
        if (b == recent_.end() || (a != main_.end() && a->key < b->key)) {
          if (!fn(*a++)) return;
        } else {
          if (!fn(*b++)) return;
        }
      }
    }
    /// Calls fn(entry) for every entry in key order.
    template <typename Fn>
    void for_each(Fn fn) const {
      for_each_while([&](const pending_entry& e) {
        fn(e);
        return true;
      });
    }

   private:
    friend class capacity_state;  // re-points the entries of a copy
    std::vector<pending_entry> main_, recent_;
    std::size_t live_ = 0;  ///< Entries that are not tombstones.
    std::size_t dead_ = 0;  ///< Tombstones in main_.
  };
  struct queue_rec {
    std::vector<std::uint32_t> admitted;  ///< Slots of admitted workloads.
    pending_order pending;
    std::map<tenant_id, std::set<pending_key>> by_tenant;  ///< drf queues only.
    std::set<pending_key> preemptors;  ///< Pending workloads that planned preemptions.
  };
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

/// Why a workload is preempted (Kueue's reasons).
enum class preemption_reason : std::uint8_t {
  in_cluster_queue,                   ///< Lower priority in the preemptor's own queue.
  in_cohort_reclamation,              ///< The preemptor reclaims quota within its nominal.
  in_cohort_fair_sharing,             ///< Fair sharing: the victim's side has a higher DRS.
  in_cohort_reclaim_while_borrowing,  ///< borrowWithinCohort below the priority threshold.
};
/// Returns Kueue's name of `r`, e.g. "InCohortFairSharing".
[[nodiscard]] std::string_view to_string(preemption_reason r) noexcept;

/// Kueue's fair-sharing preemption strategies: S2-a (preemptor share with the workload <= the
/// target's share after removing the victim) and S2-b (preemptor share < target's share before).
enum class fair_strategy : std::uint8_t {
  less_than_or_equal_to_final_share,
  less_than_initial_share
};

/// Options of an admission cycle, a preemption plan or a what-if.
struct capacity_cycle_options {
  std::int64_t now = 0;       ///< Admission time of what is admitted; minimum-runtime clock.
  bool fair_sharing = false;  ///< Kueue fair sharing (DRS tournament, fair preemption).
  /// Valid lists: {S2-a}, {S2-b}, {S2-a, S2-b} (the default).
  std::vector<fair_strategy> strategies = {fair_strategy::less_than_or_equal_to_final_share,
                                           fair_strategy::less_than_initial_share};
  bool preemption = true;  ///< Plan preemptions for heads that do not fit.
  /// A workload of another queue admitted less than this long ago is never a victim.
  std::int64_t min_runtime = 0;
  /// Order of queue_order::custom queues: true if a goes before b.
  std::function<bool(const pending_workload&, const pending_workload&)> custom_order;
  bool explain = true;  ///< Fill deferral messages (false: reasons only, faster).
};

/// A workload admitted in a flavor.
struct flavor_admission {
  job_id job;
  queue_id queue;
  std::string flavor;
  bool borrowing = false;  ///< Above the queue's nominal quota in some resource.
  friend bool operator==(const flavor_admission&, const flavor_admission&) = default;
};

struct preemption_target {
  job_id victim;
  queue_id queue;
  preemption_reason reason = preemption_reason::in_cluster_queue;
  friend bool operator==(const preemption_target&, const preemption_target&) = default;
};

/// The victims one preemptor needs, all or nothing.
struct preemption_plan {
  job_id preemptor;
  queue_id queue;
  std::string flavor;
  std::vector<preemption_target> victims;
};

/// The outcome of one admission cycle.
struct admission_plan {
  std::vector<flavor_admission> admitted;  ///< In admission order.
  std::vector<preemption_plan> preemptions;
  /// preemptions: one entry per victim (reason "<Reason> by job <id>"); deferrals: every pending
  /// workload not admitted, quota_exceeded with a message saying why it waits.
  hetsched::decision decision;
  std::int64_t now = 0;
};

/// Plans one admission cycle; pure (the state is not changed). Each queue nominates its head
/// (queue_order); per root, a tournament admits the best nominee and the winner's queue
/// nominates again, until no nominee fits. Gangs are admitted whole, in the first flavor of the
/// queue's preference order where every resource fits (Kueue whenCanBorrow=Borrow). Then each
/// queue whose first non-fitting workload is not waiting for victims plans a preemption
/// (capacity_preemption.hpp); victims of this cycle are not reused.
/// Tie-break chain at every cohort, between the best nominees of two children:
///   1. a preemptor whose victims were planned earlier first;
///   2. a workload that keeps its queue within nominal quota first;
///   3. (fair sharing) lower DRS of the child node with the workload admitted;
///   4. higher priority; 5. earlier submit time; 6. lower job id.
/// Heads needing preemption are served by (priority desc, submit time, job id).
/// Errors: invalid_argument for a bad strategy list or a custom queue without custom_order.
/// O(P log + A * depth * (siblings + F)) for P pending and A admitted workloads.
[[nodiscard]] result<admission_plan> plan_admission(const capacity_state& state,
                                                    const capacity_cycle_options& options);

/// Commits `plan`: admits its workloads (admitted_at = plan.now) and marks its victims in flight.
/// Errors (nothing changed): failed_precondition if a workload is no longer pending, a victim is
/// no longer admitted or already in flight, or an admission no longer fits.
[[nodiscard]] result<void> apply_admission(capacity_state& state, const admission_plan& plan);

/// Quota view of one node for one (flavor, resource).
struct quota_line {
  std::string flavor;
  std::string resource;
  std::int64_t nominal = 0;
  std::int64_t subtree_quota = 0;
  std::int64_t usage = 0;
  std::int64_t available = 0;  ///< Headroom now (may be negative at a root after a quota cut).
  std::int64_t potential_available = 0;
  std::int64_t borrowed = 0;  ///< max(0, usage - subtree quota).
};

/// A node's shares and headroom.
struct queue_report {
  queue_id node;
  drs_value drs;
  std::vector<quota_line> lines;  ///< Declared or used (flavor, resource) pairs, sorted.
};

/// Returns node `n`'s quota lines and DRS. Errors: not_found.
[[nodiscard]] result<queue_report> queue_status(const capacity_state& state, queue_id n);

/// The answer of what_if().
struct what_if_answer {
  bool admissible_now = false;  ///< The next cycle admits it without preemption (what_if()).
  std::string flavor;           ///< The flavor it would get (or need preemption in).
  bool borrowing = false;
  drs_value drs_after;                     ///< Its queue's DRS with it admitted (in `flavor`).
  std::vector<preemption_target> victims;  ///< When it fits only by preempting these.
  bool needs_preemption = false;           ///< victims is non-empty.
  std::size_t ahead_in_queue = 0;          ///< Pending workloads ordered before it.
  std::string reason;                      ///< Why it cannot be admitted, else empty.
};

/// Answers "would `w` be admitted by the next admission cycle, in which flavor, whom would it
/// preempt, and if not, why" with no side effects: exactly the decision plan_admission() with the
/// same options would make for `w` were it submitted now (replacing the pending workload with
/// its job id, if any). Everything the cycle does counts: other queues' pending workloads
/// winning the tournament first, workloads ahead in strict and best-effort queues, YARN user
/// limits, victims in flight, and the victims the preemption heads ordered before `w` claim.
///  - admissible_now: the cycle admits `w`; flavor, borrowing and drs_after as admitted;
///  - needs_preemption: the cycle defers `w` and plans these victims for it (flavor: the plan's);
///  - otherwise `reason` is the cycle's deferral message for `w` ("behind head job N of strict
///    queue 'Q'", "waiting for quota in queue 'Q'; available now: ...", "user limit of tenant
///    T ...", "waiting for N preempted workload(s) to terminate", "asks ... more than queue 'Q'
///    can ever get") and flavor the one it would take at that point of the cycle.
/// ahead_in_queue counts the pending workloads before `w` in its queue's key order (priority or
/// FIFO; the workload it replaces excluded). Cost: the cycle of w's root only (other roots share
/// no quota), with the usage copied once and the pending workloads walked in place (no copy of
/// the state), no message built but w's; it stops once w's decision is known: at once when w's
/// queue defers it at the start (except when a preemption plan follows), when it is admitted, at
/// worst after the root's admission phase and the victim searches of the heads before it
/// (docs/capacity_queues.md, "What-if", gives figures). Errors: those of capacity_state::submit
/// for `w` except that its job may be pending; failed_precondition if its job is admitted;
/// invalid_argument as plan_admission().
[[nodiscard]] result<what_if_answer> what_if(const capacity_state& state, const pending_workload& w,
                                             const capacity_cycle_options& options);

}  // namespace hetsched
