// SPDX-License-Identifier: MIT
// Classic preemption of capacity queues (Kueue getTargets / minimalPreemptions), candidate
// search and plan_preemption().
#include <algorithm>

#include <hetsched/policies/capacity_preemption.hpp>

#include "capacity_internal.hpp"

namespace hetsched {

std::string_view to_string(preemption_reason r) noexcept {
  switch (r) {
    case preemption_reason::in_cluster_queue: return "InClusterQueue";
    case preemption_reason::in_cohort_reclamation: return "InCohortReclamation";
    case preemption_reason::in_cohort_fair_sharing: return "InCohortFairSharing";
    case preemption_reason::in_cohort_reclaim_while_borrowing:
      return "InCohortReclaimWhileBorrowing";
  }
  return "Unknown";
}

namespace capacity_detail {
namespace {

bool queue_borrowing(const preemption_ctx& ctx, queue_id q) {
  if (!ctx.tree.parent(q).valid()) return false;
  const std::size_t nf = ctx.tree.fr_count();
  return std::any_of(ctx.frs_need.begin(), ctx.frs_need.end(), [&](std::uint32_t f) {
    return ctx.usage[q.value() * nf + f] > ctx.tree.subtree_quota(q, f);
  });
}

bool uses_needed(const preemption_ctx& ctx, const capacity_state::admitted_rec& rec,
                 std::uint64_t need_mask) {
  if ((rec.fr_mask & need_mask) == 0) return false;
  if (ctx.tree.fr_count() <= 64) return true;
  return std::any_of(rec.use.begin(), rec.use.end(), [&](const auto& fa) {
    return std::find(ctx.frs_need.begin(), ctx.frs_need.end(), fa.first) != ctx.frs_need.end();
  });
}

std::vector<candidate> find_candidates(const preemption_ctx& ctx,
                                       const capacity_cycle_options& options,
                                       const std::vector<char>& excluded) {
  std::vector<candidate> out;
  const auto& tree = ctx.tree;
  const queue_id q = ctx.w.queue;
  const auto& policy = tree.spec(q).preemption;
  const auto& slots = ctx.state.slots();
  std::uint64_t need_mask = 0;
  for (const std::uint32_t f : ctx.frs_need)
    need_mask |= f < 64 ? std::uint64_t{1} << f : ~std::uint64_t{0};
  const auto eligible = [&](std::uint32_t slot) {
    const auto& rec = slots[slot];
    if (rec.preemptor.valid()) return false;
    if (slot < excluded.size() && excluded[slot] != 0) return false;
    return uses_needed(ctx, rec, need_mask);
  };
  if (policy.within_queue != within_queue_preemption::never) {
    const bool same_prio =
        policy.within_queue == within_queue_preemption::lower_or_newer_equal_priority;
    for (const std::uint32_t slot : ctx.state.queue(q).admitted) {
      const auto& rec = slots[slot];
      if (rec.w.priority > ctx.w.priority) continue;
      if (rec.w.priority == ctx.w.priority && !(same_prio && ctx.w.submit_time < rec.w.admitted_at))
        continue;
      if (!eligible(slot)) continue;
      out.push_back({slot, q, rec.w.priority, rec.w.admitted_at, rec.w.job});
    }
  }
  if (tree.parent(q).valid() && policy.reclaim != cohort_reclaim::never) {
    const bool only_lower = policy.reclaim != cohort_reclaim::any;
    for (const queue_id other : tree.tree_queues(tree.path_to_root(q).back())) {
      if (other == q || !queue_borrowing(ctx, other)) continue;
      for (const std::uint32_t slot : ctx.state.queue(other).admitted) {
        const auto& rec = slots[slot];
        if (only_lower && rec.w.priority >= ctx.w.priority) continue;
        if (options.min_runtime > 0 && options.now - rec.w.admitted_at < options.min_runtime)
          continue;
        if (!eligible(slot)) continue;
        out.push_back({slot, other, rec.w.priority, rec.w.admitted_at, rec.w.job});
      }
    }
  }
  return out;
}

bool under_nominal(const preemption_ctx& ctx) {
  const std::size_t nf = ctx.tree.fr_count();
  const queue_id q = ctx.w.queue;
  return std::all_of(ctx.frs_need.begin(), ctx.frs_need.end(), [&](std::uint32_t f) {
    return ctx.usage[q.value() * nf + f] < ctx.tree.nominal(q, f);
  });
}

std::vector<preemption_target> to_targets(
    const std::vector<std::pair<candidate, preemption_reason>>& t) {
  std::vector<preemption_target> out;
  out.reserve(t.size());
  for (const auto& [c, r] : t) out.push_back({c.job, c.queue, r});
  return out;
}

std::vector<preemption_target> minimal_preemptions(preemption_ctx& ctx,
                                                   const std::vector<candidate>& candidates,
                                                   bool allow_borrowing,
                                                   std::optional<std::int32_t> threshold) {
  std::vector<std::pair<candidate, preemption_reason>> targets;
  bool ok_fit = false;
  const queue_id q = ctx.w.queue;
  // Candidates in candidate_before order, popped lazily from a heap: O(n + k log n).
  std::vector<candidate> heap = candidates;
  const auto after = [&](const candidate& x, const candidate& y) {
    return candidate_before(y, x, q);
  };
  std::make_heap(heap.begin(), heap.end(), after);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const candidate c = heap.back();
    heap.pop_back();
    auto reason = preemption_reason::in_cluster_queue;
    if (c.queue != q) {
      if (!queue_borrowing(ctx, c.queue)) continue;
      reason = preemption_reason::in_cohort_reclamation;
      if (threshold) {
        if (c.priority >= *threshold) {
          allow_borrowing = false;
        } else {
          reason = preemption_reason::in_cohort_reclaim_while_borrowing;
        }
      }
    }
    apply_slot(ctx, c.slot, -1);
    targets.emplace_back(c, reason);
    if (fits(ctx.tree, ctx.usage, q, ctx.a.use, allow_borrowing)) {
      ok_fit = true;
      break;
    }
  }
  if (!ok_fit) {
    for (const auto& t : targets) apply_slot(ctx, t.first.slot, +1);
    return {};
  }
  fill_back(ctx, targets, allow_borrowing);
  for (const auto& t : targets) apply_slot(ctx, t.first.slot, +1);
  return to_targets(targets);
}

}  // namespace

bool candidate_before(const candidate& x, const candidate& y, queue_id q) {
  const bool x_own = x.queue == q;
  const bool y_own = y.queue == q;
  if (x_own != y_own) return !x_own;
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.admitted_at != y.admitted_at) return x.admitted_at > y.admitted_at;
  return x.job < y.job;
}

void add_ctx_usage(preemption_ctx& ctx, queue_id q, std::uint32_t fr, std::int64_t delta) {
  add_usage(ctx.tree, ctx.usage, q, fr, delta);
  for (const queue_id x : ctx.tree.path_to_root(q)) ++ctx.node_version[x.value()];
}

void apply_slot(preemption_ctx& ctx, std::uint32_t slot, std::int64_t sign) {
  const auto& rec = ctx.state.slots()[slot];
  for (const auto& [f, a] : rec.use) add_ctx_usage(ctx, rec.w.queue, f, sign * a);
}

void fill_back(preemption_ctx& ctx, std::vector<std::pair<candidate, preemption_reason>>& targets,
               bool allow_borrowing) {
  if (targets.size() < 2) return;
  for (std::size_t i = targets.size() - 1; i-- > 0;) {
    apply_slot(ctx, targets[i].first.slot, +1);
    if (fits(ctx.tree, ctx.usage, ctx.w.queue, ctx.a.use, allow_borrowing)) {
      targets[i] = targets.back();
      targets.pop_back();
    } else {
      apply_slot(ctx, targets[i].first.slot, -1);
    }
  }
}

std::vector<preemption_target> find_victims(const capacity_state& state, capacity_usage& usage,
                                            const pending_workload& w, const assignment& a,
                                            const capacity_cycle_options& options,
                                            const std::vector<char>& excluded,
                                            ordering_scratch* scratch) {
  if (a.mode != fit_mode::preempt) return {};
  preemption_ctx ctx{state, state.tree(), usage, w, a, {}};
  ctx.scratch = scratch;
  for (const auto& [f, amount] : a.use)
    if (amount > quota_available(ctx.tree, usage, w.queue, f)) ctx.frs_need.push_back(f);
  if (ctx.frs_need.empty()) return {};
  const auto candidates = find_candidates(ctx, options, excluded);
  if (candidates.empty()) return {};
  // Necessary condition: removing every candidate frees at most their usage.
  for (const std::uint32_t f : ctx.frs_need) {
    std::int64_t freeable = quota_available(ctx.tree, usage, w.queue, f);
    for (const auto& c : candidates)
      for (const auto& [g, x] : state.slots()[c.slot].use)
        if (g == f) freeable += x;
    const auto need =
        std::find_if(a.use.begin(), a.use.end(), [&](const auto& fa) { return fa.first == f; });
    if (freeable < need->second) return {};
  }
  if (options.fair_sharing) return fair_preemptions(ctx, candidates, options);

  const queue_id q = w.queue;
  std::vector<candidate> same;
  for (const auto& c : candidates)
    if (c.queue == q) same.push_back(c);
  if (same.size() == candidates.size()) return minimal_preemptions(ctx, candidates, true, {});
  const auto& bwc = ctx.tree.spec(q).preemption.borrow;
  if (bwc.enabled) {
    std::int32_t threshold = w.priority;
    if (bwc.max_priority_threshold && *bwc.max_priority_threshold < threshold)
      threshold = *bwc.max_priority_threshold + 1;
    std::vector<candidate> allowed = candidates;
    if (!under_nominal(ctx)) {
      std::erase_if(allowed,
                    [&](const candidate& c) { return c.queue != q && c.priority >= threshold; });
    }
    return minimal_preemptions(ctx, allowed, true, threshold);
  }
  if (under_nominal(ctx)) {
    auto t = minimal_preemptions(ctx, candidates, false, {});
    if (!t.empty()) return t;
  }
  return minimal_preemptions(ctx, same, true, {});
}

}  // namespace capacity_detail

result<preemption_plan> plan_preemption(const capacity_state& state, const pending_workload& w,
                                        const capacity_cycle_options& options) {
  HETSCHED_TRY(capacity_detail::check_options(options));
  HETSCHED_TRY(state.validate_pending(w));
  capacity_usage usage = state.usage();
  const auto a = capacity_detail::assign_flavor(state.tree(), usage, w);
  preemption_plan plan{w.job, w.queue, state.tree().flavor_name(a.flavor), {}};
  plan.victims = capacity_detail::find_victims(state, usage, w, a, options, {});
  return plan;
}

}  // namespace hetsched
