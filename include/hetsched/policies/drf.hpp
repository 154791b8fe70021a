// SPDX-License-Identifier: MIT
// Dominant Resource Fairness: exact dominant shares, progressive filling, H-DRF and a DRF sorter.
//
// A fairness vector (drf_vector) is a small map from resource name to an int64 amount, sorted by
// name; absent means zero. Names are free-form; to_drf_vector() uses the catalogue "cpu",
// "memory", "gpu_memory", "gpu" (GPU types fungible) or "gpu/<type>" (per type), plus extended
// resources under their own name. Excluding "gpu" excludes "gpu" and every "gpu/<type>".
// Shares are exact: a share is the fraction (usage * weight.den) / (capacity * weight.num) with
// every amount <= max_resource_amount (2^40) and weights reduced to p/q with p, q <= 2^20, so
// comparisons by __int128 cross-multiplication never round. drf_fill_tasks() and
// drf_fill_divisible() are the paper's progressive filling (indivisible tasks / divisible demand);
// hdrf_fill_tasks() is H-DRF as Volcano's hdrf plugin; drf_sorter is Mesos's DRFSorter with
// O(log n) pick and update. All are deterministic; bad input is an error and changes nothing.
//
// @see DRF: Ghodsi et al., "Dominant Resource Fairness", NSDI'11.
// @see Mesos DRFSorter: apache/mesos src/master/allocator/mesos/sorter/drf/sorter.{hpp,cpp}.
// @see H-DRF: Bhattacharya et al., SoCC'13; Volcano pkg/scheduler/plugins/drf (hdrf).
#pragma once

#include <boost/container/flat_map.hpp>
#include <boost/container/flat_set.hpp>

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/resources.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// Resource name -> amount, sorted by name. Absent entries are zero.
using drf_vector = boost::container::flat_map<std::string, std::int64_t, std::less<>>;
/// Resource names excluded from fairness (Mesos fairnessExcludeResourceNames).
using drf_exclusions = boost::container::flat_set<std::string, std::less<>>;

/// How to_drf_vector() names GPU resources.
enum class gpu_grouping : unsigned char {
  fungible,  ///< Every GPU type counts as one resource "gpu".
  per_type,  ///< Each type is its own resource "gpu/<type>"; an empty type stays "gpu".
};

/// Returns the fairness resource name of GPUs of `type`: "gpu" or "gpu/<type>".
[[nodiscard]] std::string drf_gpu_resource(gpu_type type, gpu_grouping grouping);

/// Returns `v` as a fairness vector: milli_gpu under drf_gpu_resource(type, grouping), then
/// "cpu" (milli-CPU), "memory" (MiB), "gpu_memory" (MiB) and each extended resource by name.
/// Zero amounts are omitted. Deterministic; O(k log k).
[[nodiscard]] drf_vector to_drf_vector(const resource_vector& v, gpu_type type,
                                       gpu_grouping grouping);

/// Returns true if resource `name` is excluded: listed itself, or "gpu/<type>" with "gpu" listed.
[[nodiscard]] bool drf_is_excluded(const drf_exclusions& excluded, std::string_view name) noexcept;

/// A positive weight as the exact fraction num/den, both in 1..2^20 (max_drf_weight_term).
struct drf_weight {
  std::int64_t num = 1;
  std::int64_t den = 1;
  friend bool operator==(const drf_weight&, const drf_weight&) = default;
};

/// The largest numerator or denominator of a drf_weight.
inline constexpr std::int64_t max_drf_weight_term = std::int64_t{1} << 20;

/// Returns `w` as the continued-fraction convergent p/q with p, q <= 2^20 closest to `w`
/// (0.1 -> 1/10, 2.5 -> 5/2, 1/3 -> 1/3). Errors:
/// invalid_argument naming `client` for NaN, infinite, zero or negative `w`; out_of_range
/// outside [1e-6, 1e6].
[[nodiscard]] result<drf_weight> make_drf_weight(double w, std::string_view client);

/// An exact non-negative share num/den (den > 0). Ordering is by value, via 128-bit
/// cross-multiplication, so 2/4 == 1/2.
struct drf_share {
  std::int64_t num = 0;
  std::int64_t den = 1;

  /// Returns the share as a double (for display and tolerance checks only).
  [[nodiscard]] double to_double() const noexcept;
  friend bool operator==(const drf_share& a, const drf_share& b) noexcept;
  friend std::strong_ordering operator<=>(const drf_share& a, const drf_share& b) noexcept;
};

/// Returns the weighted dominant share max_r usage[r] * weight.den / (capacity[r] * weight.num)
/// over the dimensions with capacity > 0 (0 when there is none; the first dimension attaining
/// the max wins ties): the one dominant-share computation of DRF, used by dominant_share() and by
/// the DRF job ordering (drf_order, job_order.hpp). Preconditions: usage.size() ==
/// capacity.size(); amounts >= 0; weight terms >= 1; usage * weight.den and capacity *
/// weight.num fit in 64 bits (amounts up to 2^42 with terms up to max_drf_weight_term do). O(k).
[[nodiscard]] drf_share weighted_dominant_share(std::span<const std::int64_t> usage,
                                                std::span<const std::int64_t> capacity,
                                                drf_weight weight) noexcept;

/// An exact rational result of divisible filling, reduced, den > 0.
struct drf_rational {
  std::int64_t num = 0;
  std::int64_t den = 1;
  [[nodiscard]] double to_double() const noexcept;
  friend bool operator==(const drf_rational&, const drf_rational&) = default;
};

/// Per-client weights: a scalar for every resource, overridden per resource (the paper's general
/// form). The weighted share of resource r is usage_r / (w_r * capacity_r).
struct drf_client_weight {
  drf_weight scalar;
  boost::container::flat_map<std::string, drf_weight, std::less<>> per_resource;
};

/// A dominant share and the resource that attains it (empty when the share is 0).
struct drf_dominant {
  drf_share share;
  std::string resource;
};

/// Returns the weighted dominant share max_r usage_r / (w_r * capacity_r) over resources that
/// are not excluded and have capacity > 0; ties between resources go to the smaller name.
/// Errors: invalid_argument for a negative amount, out_of_range above max_resource_amount.
[[nodiscard]] result<drf_dominant> dominant_share(const drf_vector& usage,
                                                  const drf_vector& capacity,
                                                  const drf_client_weight& weight = {},
                                                  const drf_exclusions& excluded = {});

/// A client of progressive filling: identical tasks of `task_demand`, at most `max_tasks`.
struct drf_user {
  std::string name;
  drf_vector task_demand;
  double weight = 1.0;  ///< Scalar weight; must be positive and finite.
  /// Per-resource weights overriding `weight` (each positive and finite).
  boost::container::flat_map<std::string, double, std::less<>> resource_weights;
  std::optional<std::int64_t> max_tasks;  ///< nullopt: unbounded demand.
};

/// Options of the filling algorithms.
struct drf_fill_options {
  drf_exclusions excluded;  ///< Resources ignored by shares (still consumed by tasks).
};

/// The outcome of task-by-task filling; vectors are indexed like the input users.
struct drf_task_allocation {
  std::vector<std::int64_t> tasks;
  std::vector<drf_vector> allocation;
  std::vector<drf_dominant> dominant;  ///< Weighted dominant share and resource per user.
  std::vector<std::size_t> order;      ///< User index of every task, in allocation order.
};

/// Returns the DRF allocation of indivisible tasks: repeatedly give one task to the user with
/// the lowest weighted dominant share whose next task fits; a user whose task does not fit, or
/// who reached max_tasks, stops. Tie-break chain: lower weighted dominant share, then fewer
/// tasks so far, then lower input index. Errors (invalid_argument, naming the user): duplicate
/// name, negative demand, bad weight, negative max_tasks, an all-zero demand without max_tasks;
/// out_of_range: amounts or max_tasks above max_resource_amount. O(T (log n + k)) for T tasks.
[[nodiscard]] result<drf_task_allocation> drf_fill_tasks(const drf_vector& capacity,
                                                         std::span<const drf_user> users,
                                                         const drf_fill_options& options = {});

/// The outcome of divisible filling, indexed like the input users.
struct drf_divisible_allocation {
  std::vector<drf_rational> tasks;           ///< Possibly fractional number of tasks.
  std::vector<drf_rational> dominant_share;  ///< Weighted dominant share.
};

/// Returns the divisible DRF allocation: raise every unfrozen user's weighted dominant share at
/// the same rate; freeze a user at max_tasks or when a resource it demands is exhausted; repeat
/// to the fixpoint. Exact rationals. Errors as drf_fill_tasks(), plus invalid_argument for a user
/// that demands no fairness resource, and out_of_range if a fraction outgrows 64 bits.
/// O(n^2 k) worst case.
[[nodiscard]] result<drf_divisible_allocation> drf_fill_divisible(
    const drf_vector& capacity, std::span<const drf_user> users,
    const drf_fill_options& options = {});

/// A queue of H-DRF: a '/'-separated path ("root/eng/dev") and its weight. Missing ancestors
/// are created with weight 1.
struct hdrf_queue {
  std::string path;
  double weight = 1.0;
};

/// A job of H-DRF: identical tasks in queue `queue`; nullopt tasks = unbounded backlog.
struct hdrf_job {
  std::string name;
  std::string queue;
  drf_vector task_demand;
  std::optional<std::int64_t> tasks;
};

/// The outcome of H-DRF, indexed like the input jobs.
struct hdrf_allocation {
  std::vector<std::int64_t> tasks;
  std::vector<drf_vector> allocation;
};

/// Returns the H-DRF allocation (Volcano hdrf): one task at a time, descend from the root
/// choosing the child with the lowest share / weight, skipping saturated children. A job is a
/// leaf of weight 1, saturated when it has all its tasks or its next task does not fit. A queue's
/// vector is the sum of its non-saturated, non-empty children rescaled so that each child's
/// weighted share equals the minimum M among them (alloc * M * w / share), plus its saturated
/// children unscaled; it is saturated when all children are. Tie-break: share/weight, then
/// queues before jobs, then name. A job's queue need not be listed (it is created with weight
/// 1). Errors: invalid_argument for duplicate queue paths or job names, empty path segments,
/// bad weights, negative amounts or tasks; out_of_range if a fraction outgrows 128 bits.
/// O(T * N * k) for T tasks and N tree nodes.
[[nodiscard]] result<hdrf_allocation> hdrf_fill_tasks(const drf_vector& capacity,
                                                      std::span<const hdrf_queue> queues,
                                                      std::span<const hdrf_job> jobs,
                                                      const drf_fill_options& options = {});

/// Tag of drf_client_id.
struct drf_client_tag {};
/// A client (or internal role) of a drf_sorter. Ids are never reused.
using drf_client_id = strong_id<drf_client_tag>;

/// Mesos DRFSorter: clients are '/'-separated role paths forming a tree; each node's share is
/// max_r subtree_allocation_r / (w_r * total_r), where w is the weight set for its path: a scalar
/// (default 1) or, in the paper's general weighted DRF, a weight per resource over the scalar.
///
/// Tie-break chain among siblings, in order: (1) lower weighted dominant share, exact;
/// (2) fewer allocations, where every allocated() call increments the count of the client and
/// each ancestor, never reset by unallocated(), update(), deactivate() or activate();
/// (3) smaller node path (byte-wise). pick_next() descends from the root taking the first child
/// with an active leaf below it; sort() lists active leaves in that pre-order. Inactive clients
/// are skipped but their allocation still counts for their ancestors.
/// A client may also be a parent path (Mesos: role "a" holds allocations while "a/b" exists):
/// as in Mesos, the client then lives in a virtual leaf "a/." under the internal node "a". The
/// virtual leaf keeps the client's id, competes with a's other children under node path "a/."
/// (so it sorts before "a/b") and has weight 1 (weights are set by path; "a"'s weight applies to
/// the subtree, as in Mesos); path() still returns "a". (Mesos names a leaf that turns virtual
/// "<grandparent path>/." instead, which only matters for ties with siblings whose names sort
/// below "."; hetsched uses "<path>/." in both cases.) When a's last other child is removed the
/// virtual leaf stays (Mesos folds it back into a leaf; the order is the same either way). The
/// segment "." is reserved. Resources that are excluded or have total <= 0 do not count. Every
/// subtree allocation must stay <= max_resource_amount. Each mutation is O(depth * (log n + k));
/// set_total() and set_weight() of an internal path are O(n log n). Errors change nothing.
class drf_sorter {
 public:
  /// Makes an empty sorter ignoring `excluded` resources.
  explicit drf_sorter(drf_exclusions excluded = {});

  /// Sets the cluster total. Errors: invalid_argument for negative amounts, out_of_range above
  /// max_resource_amount.
  result<void> set_total(const drf_vector& total);
  /// Adds client `path` ("a", "b/c") and returns its id; ancestors are created as needed.
  /// Errors: invalid_argument for an empty segment, already_exists, failed_precondition when
  /// `path` is an ancestor or descendant of an existing client.
  result<drf_client_id> add(std::string_view path, bool active = true);
  /// Removes a client, its allocation from its ancestors and ancestors left empty.
  result<void> remove(drf_client_id client);
  /// Makes a client eligible for pick_next()/sort(); no-op if active.
  result<void> activate(drf_client_id client);
  /// Makes a client ineligible for pick_next()/sort(); no-op if inactive.
  result<void> deactivate(drf_client_id client);
  /// Sets the scalar weight of `path` (dropping per-resource weights), which need not exist yet.
  /// Errors: invalid_argument / out_of_range naming it (see make_drf_weight()).
  result<void> set_weight(std::string_view path, double weight);
  /// Sets the weights of `path`: share of r = usage_r / (w_r * total_r), w_r from per_resource,
  /// else the scalar. Errors: invalid_argument naming `path` and the resource for a term outside
  /// 1..max_drf_weight_term.
  result<void> set_weight(std::string_view path, const drf_client_weight& weight);
  /// Adds `resources` to a client's allocation and counts one allocation on its path.
  result<void> allocated(drf_client_id client, const drf_vector& resources);
  /// Subtracts `resources`; failed_precondition if the allocation would go negative.
  result<void> unallocated(drf_client_id client, const drf_vector& resources);
  /// Replaces `from` by `to` within the allocation without counting an allocation.
  result<void> update(drf_client_id client, const drf_vector& from, const drf_vector& to);

  /// Returns the id of client `path`, or not_found.
  [[nodiscard]] result<drf_client_id> find(std::string_view path) const;
  /// Returns the path of a client. Precondition: `client` is live.
  [[nodiscard]] const std::string& path(drf_client_id client) const;
  /// Returns the weighted dominant share of a client, or not_found.
  [[nodiscard]] result<drf_share> share(drf_client_id client) const;
  /// Returns the allocation count of a client, or not_found.
  [[nodiscard]] result<std::int64_t> allocation_count(drf_client_id client) const;
  /// Returns the allocation of a client, or not_found.
  [[nodiscard]] result<drf_vector> allocation(drf_client_id client) const;
  /// Returns the next client to serve, nullopt when no client is active. O(depth * log n).
  [[nodiscard]] std::optional<drf_client_id> pick_next() const;
  /// Returns the active clients, first to serve first. O(n).
  [[nodiscard]] std::vector<drf_client_id> sort() const;
  /// Returns the number of clients.
  [[nodiscard]] std::size_t size() const noexcept { return clients_; }

 private:
  struct key {
    drf_share share;
    std::int64_t count = 0;
    std::string path;
    std::uint32_t node = 0;
  };
  struct key_less {
    bool operator()(const key& a, const key& b) const noexcept;
  };
  struct node {
    std::string path;
    std::uint32_t parent = 0;
    bool live = true;
    bool leaf = false;
    bool active = false;
    std::int64_t active_leaves = 0;  ///< Active leaves in the subtree, self included.
    std::int64_t children = 0;
    std::uint32_t self = 0;  ///< An internal node's virtual leaf "<path>/." (0: none).
    drf_weight weight;       ///< The scalar weight of its path.
    /// The weights entry of its path when it has per-resource weights (std::map entries are
    /// stable and never erased), else nullptr; kept out of line so nodes stay small.
    const drf_client_weight* resource_weights = nullptr;
    drf_vector alloc;
    key k;
    std::set<key, key_less> active_children;
    std::set<key, key_less> idle_children;
  };

  [[nodiscard]] result<std::uint32_t> live_client(drf_client_id client) const;
  [[nodiscard]] drf_share compute_share(const node& n) const;
  [[nodiscard]] result<void> check_delta(std::uint32_t leaf, const drf_vector& minus,
                                         const drf_vector& plus) const;
  using handle = std::set<key, key_less>::node_type;
  // Moves node n's key out of its parent's set (reusing the set node avoids an allocation).
  [[nodiscard]] handle detach(std::uint32_t n);
  // Recomputes node n's share and puts its key back into the right set of its parent.
  void attach(std::uint32_t n, handle h);
  void apply_delta(std::uint32_t leaf, const drf_vector& minus, const drf_vector& plus, bool count);
  void set_active(std::uint32_t leaf, bool active);
  // Turns client `leaf` into the virtual leaf of a new internal node at its place; returns it.
  std::uint32_t split_leaf(std::uint32_t leaf);
  // Adds a node under `parent`; `leaf` nodes start inactive.
  std::uint32_t add_node(std::string path, std::string key_path, std::uint32_t parent, bool leaf);
  void apply_weight(std::string_view path, const drf_client_weight& weight);
  void rebuild();

  drf_exclusions excluded_;
  drf_vector total_;
  std::map<std::string, drf_client_weight, std::less<>> weights_;
  std::vector<node> nodes_;
  std::map<std::string, std::uint32_t, std::less<>> index_;
  std::size_t clients_ = 0;
};

}  // namespace hetsched
