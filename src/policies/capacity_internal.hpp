// SPDX-License-Identifier: MIT
// Private helpers shared by the capacity_*.cpp files: flavor assignment, fit checks and the
// victim search used by admission cycles, preemption plans and what-if.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched::capacity_detail {

using use_list = std::vector<std::pair<std::uint32_t, std::int64_t>>;

enum class fit_mode : std::uint8_t { fit, preempt, never };

/// A flavor choice for a pending workload.
struct assignment {
  fit_mode mode = fit_mode::never;
  std::uint32_t flavor = 0;
  use_list use;
  bool borrowing = false;  ///< Admitting it puts its queue above nominal in some fr.
};

/// Returns the (fr, amount) list of `request` in `flavor` for queue q, or nullopt when the queue
/// does not declare some requested resource in that flavor.
[[nodiscard]] std::optional<use_list> resolve_use(const capacity_tree& tree, queue_id q,
                                                  std::uint32_t flavor, const drf_vector& request);

/// Returns true if `use` fits queue q under `usage`; without borrowing, also within nominal.
[[nodiscard]] bool fits(const capacity_tree& tree, const capacity_usage& usage, queue_id q,
                        const use_list& use, bool allow_borrowing);

/// Returns true if usage(q) + use exceeds q's nominal quota in some fr.
[[nodiscard]] bool borrows_with(const capacity_tree& tree, const capacity_usage& usage, queue_id q,
                                const use_list& use);

/// Chooses a flavor: the first allowed flavor (queue preference order) where `w` fits; else the
/// first where every amount is within potential_available (mode preempt); else never (flavor
/// = the first flavor declaring every resource).
[[nodiscard]] assignment assign_flavor(const capacity_tree& tree, const capacity_usage& usage,
                                       const pending_workload& w);

/// Returns a message saying why `w` does not fit with `a` (no fit now, or never).
[[nodiscard]] std::string explain_no_fit(const capacity_tree& tree, const capacity_usage& usage,
                                         const pending_workload& w, const assignment& a);

/// Finds the victims that let `w` (assigned `a`, mode preempt) fit in its queue, all or nothing:
/// classic or fair-sharing preemption per options. `usage` is a scratch copy (restored on
/// return); slots with excluded[slot] != 0 or in flight are never victims. Returns the victims
/// (empty when preemption cannot help).
struct ordering_scratch;
[[nodiscard]] std::vector<preemption_target> find_victims(
    const capacity_state& state, capacity_usage& usage, const pending_workload& w,
    const assignment& a, const capacity_cycle_options& options, const std::vector<char>& excluded,
    ordering_scratch* scratch = nullptr);

/// Reusable buffers of the fair-sharing target ordering (sized to the tree on use).
struct ordering_scratch {
  std::vector<char> pruned, on_path;
  std::vector<std::uint32_t> cur, end, live, cache_version;
  std::vector<drs_value> cache;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> items;  ///< (candidate index, queue)
};

/// A preemption candidate: an admitted workload slot.
struct candidate {
  std::uint32_t slot = 0;
  queue_id queue;
  std::int32_t priority = 0;
  std::int64_t admitted_at = 0;
  job_id job;
};

/// The shared context of one victim search.
struct preemption_ctx {
  const capacity_state& state;
  const capacity_tree& tree;
  capacity_usage& usage;
  const pending_workload& w;
  const assignment& a;
  std::vector<std::uint32_t> frs_need;  ///< Contested frs (request above available).
  /// Per node, bumped whenever the node's usage changes (DRS caches compare against it).
  std::vector<std::uint32_t> node_version = std::vector<std::uint32_t>(tree.size(), 0);
  ordering_scratch* scratch = nullptr;  ///< Optional buffers reused across plans.
};

/// Adds `delta` to queue q's usage of fr in ctx.usage and bumps the versions on its path.
void add_ctx_usage(preemption_ctx& ctx, queue_id q, std::uint32_t fr, std::int64_t delta);

/// Kueue's CandidatesOrdering: true if x goes before y for preemptor queue q.
[[nodiscard]] bool candidate_before(const candidate& x, const candidate& y, queue_id q);

/// Removes (sign -1) or restores (+1) the usage of an admitted slot in the scratch usage.
void apply_slot(preemption_ctx& ctx, std::uint32_t slot, std::int64_t sign);

/// Kueue's fairPreemptions over sorted candidates; returns the victims or nothing.
[[nodiscard]] std::vector<preemption_target> fair_preemptions(
    preemption_ctx& ctx, const std::vector<candidate>& candidates,
    const capacity_cycle_options& options);

/// Kueue's fillBackWorkloads: re-adds victims (last one excepted) in reverse order while the
/// workload still fits; `targets` have their usage removed from ctx.usage on entry and exit.
void fill_back(preemption_ctx& ctx, std::vector<std::pair<candidate, preemption_reason>>& targets,
               bool allow_borrowing);

/// Returns ok if the strategy list is one of {S2-a}, {S2-b}, {S2-a, S2-b}.
[[nodiscard]] result<void> check_options(const capacity_cycle_options& options);

}  // namespace hetsched::capacity_detail
