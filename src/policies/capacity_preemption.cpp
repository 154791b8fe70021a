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

std::vector<preemption_target> minimal_preemptions(preemption_ctx& ctx, candidate_lists& lists,
                                                   bool allow_borrowing,
                                                   std::optional<std::int32_t> threshold) {
  std::vector<std::pair<candidate, preemption_reason>> targets;
  bool ok_fit = false;
  const queue_id q = ctx.w.queue;
  // Candidates in candidate_before order: a merge of the per-queue lists (each already in that
  // order) through a heap of their fronts, popped lazily: O(queues + k log queues).
  std::vector<std::uint32_t> heap(lists.queues().begin(), lists.queues().end());
  const auto after = [&](std::uint32_t x, std::uint32_t y) {
    return candidate_before(lists.front(queue_id(y)), lists.front(queue_id(x)), q);
  };
  // Without borrowing, nothing fits while q's own usage plus the request exceeds its nominal
  // quota in some fr; only victims of q itself change that, so fits() is skipped meanwhile.
  bool own_over = !allow_borrowing && borrows_with(ctx.tree, ctx.usage, q, ctx.a.use);
  if (own_over) {
    // Exact early exit: if even without every own candidate q's usage plus the request stays
    // above nominal in some fr, own_over holds to the end and nothing fits.
    const std::size_t nf = ctx.tree.fr_count();
    std::vector<std::int64_t> left(ctx.a.use.size());
    for (std::size_t i = 0; i < ctx.a.use.size(); ++i)
      left[i] = ctx.usage[q.value() * nf + ctx.a.use[i].first] + ctx.a.use[i].second;
    lists.for_each_remaining(q, [&](const candidate& c) {
      for (const auto& [g, x] : ctx.state.slots()[c.slot].use)
        for (std::size_t i = 0; i < ctx.a.use.size(); ++i)
          if (ctx.a.use[i].first == g) left[i] -= x;
    });
    for (std::size_t i = 0; i < ctx.a.use.size(); ++i)
      if (left[i] > ctx.tree.subtree_quota(q, ctx.a.use[i].first)) return {};
    if (!threshold) {
      // Every candidate of another queue goes first and no fit is checked meanwhile; whether
      // one is skipped depends only on its own queue's usage (queue_borrowing), so each queue's
      // list is taken up to its first skip, and the victims sorted into candidate order (the
      // usage reached does not depend on the order of removal). Then only q's list is left.
      // queue_borrowing(x) reads only x's own usage: the removals are staged and its staged
      // delta added to the check, then applied at once.
      std::vector<candidate> taken;
      const auto& staged = ctx.scratch->staged;
      const auto borrowing = [&](queue_id x) {
        if (!ctx.tree.parent(x).valid()) return false;
        const std::size_t base = x.value() * nf;
        return std::any_of(ctx.frs_need.begin(), ctx.frs_need.end(), [&](std::uint32_t f) {
          const std::int64_t d = staged.empty() ? 0 : staged[base + f];
          return ctx.usage[base + f] + d > ctx.tree.subtree_quota(x, f);
        });
      };
      for (const std::uint32_t xi : lists.queues()) {
        const queue_id x(xi);
        if (x == q) continue;
        while (lists.has(x) && borrowing(x)) {
          const candidate c = lists.pop(x);
          stage_slot(ctx, c.slot, -1);
          taken.push_back(c);
        }
      }
      flush_staged(ctx);
      std::sort(taken.begin(), taken.end(),
                [&](const candidate& a, const candidate& b) { return candidate_before(a, b, q); });
      targets.reserve(taken.size());
      for (const candidate& c : taken)
        targets.emplace_back(c, preemption_reason::in_cohort_reclamation);
      heap.clear();
      if (lists.has(q)) heap.push_back(q.value());
    }
  }
  std::make_heap(heap.begin(), heap.end(), after);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const queue_id x(heap.back());
    const candidate c = lists.pop(x);
    if (lists.has(x)) {
      std::push_heap(heap.begin(), heap.end(), after);
    } else {
      heap.pop_back();
    }
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
    if (own_over && c.queue == q) own_over = borrows_with(ctx.tree, ctx.usage, q, ctx.a.use);
    if (!own_over && fits(ctx.tree, ctx.usage, q, ctx.a.use, allow_borrowing)) {
      ok_fit = true;
      break;
    }
  }
  if (!ok_fit) {
    for (const auto& t : targets) stage_slot(ctx, t.first.slot, +1);
    flush_staged(ctx);
    return {};
  }
  fill_back(ctx, targets, allow_borrowing);
  for (const auto& t : targets) stage_slot(ctx, t.first.slot, +1);
  flush_staged(ctx);
  return to_targets(targets);
}

}  // namespace

void add_ctx_usage(preemption_ctx& ctx, queue_id q, std::uint32_t fr, std::int64_t delta) {
  add_usage(ctx.tree, ctx.usage, q, fr, delta);
  if (ctx.track_versions)
    for (const queue_id x : ctx.tree.path_to_root(q))
      if (ctx.node_version[x.value()]++ == 0) ctx.scratch->versioned.push_back(x.value());
}

void apply_slot(preemption_ctx& ctx, std::uint32_t slot, std::int64_t sign) {
  const auto& rec = ctx.state.slots()[slot];
  for (const auto& [f, a] : rec.use) add_ctx_usage(ctx, rec.w.queue, f, sign * a);
}

void flush_staged(preemption_ctx& ctx) {
  auto& s = *ctx.scratch;
  const std::size_t nf = ctx.tree.fr_count();
  for (const std::uint32_t x : s.staged_queues) {
    s.staged_listed[x] = 0;
    for (std::size_t f = 0; f < nf; ++f)
      if (std::int64_t& d = s.staged[x * nf + f]; d != 0) {
        add_ctx_usage(ctx, queue_id(x), static_cast<std::uint32_t>(f), d);
        d = 0;
      }
  }
  s.staged_queues.clear();
}

void fill_back(preemption_ctx& ctx, std::vector<std::pair<candidate, preemption_reason>>& targets,
               bool allow_borrowing) {
  if (targets.size() < 2) return;
  const queue_id q = ctx.w.queue;
  const auto& use = ctx.a.use;
  const std::size_t nf = ctx.tree.fr_count();
  // lb[k]: a lower bound of available(q, use[k].first) in the current state, which fits. Adding
  // usage d to another queue lowers available(q) by at most d and leaves q's own usage alone,
  // so a victim of another queue whose use keeps lb - use >= request in every fr fits when
  // re-added: the exact check is skipped and lb lowered by its use.
  std::vector<std::int64_t> lb(use.size());
  std::vector<std::int64_t> now(use.size());
  for (std::size_t k = 0; k < use.size(); ++k)
    lb[k] = quota_available(ctx.tree, ctx.usage, q, use[k].first);
  const auto amount = [&](std::uint32_t slot, std::uint32_t f) {
    std::int64_t v = 0;
    for (const auto& [g, x] : ctx.state.slots()[slot].use)
      if (g == f) v += x;
    return v;
  };
  for (std::size_t i = targets.size() - 1; i-- > 0;) {
    const std::uint32_t slot = targets[i].first.slot;
    if (targets[i].first.queue != q) {
      bool sure = true;
      for (std::size_t k = 0; k < use.size() && sure; ++k)
        sure = lb[k] - amount(slot, use[k].first) >= use[k].second;
      if (sure) {
        for (std::size_t k = 0; k < use.size(); ++k) lb[k] -= amount(slot, use[k].first);
        stage_slot(ctx, slot, +1);  // applied before the next exact check
        targets[i] = targets.back();
        targets.pop_back();
        continue;
      }
    }
    flush_staged(ctx);
    apply_slot(ctx, slot, +1);
    bool ok = true;
    for (std::size_t k = 0; k < use.size(); ++k) {
      const auto [f, a] = use[k];
      now[k] = quota_available(ctx.tree, ctx.usage, q, f);
      if (!allow_borrowing && ctx.usage[q.value() * nf + f] + a > ctx.tree.subtree_quota(q, f))
        ok = false;
      if (a > now[k]) ok = false;
    }
    if (ok) {
      lb = now;
      targets[i] = targets.back();
      targets.pop_back();
    } else {
      apply_slot(ctx, slot, -1);
    }
  }
  flush_staged(ctx);
}

std::vector<preemption_target> find_victims(const capacity_state& state, capacity_usage& usage,
                                            const pending_workload& w, const assignment& a,
                                            const capacity_cycle_options& options,
                                            const std::vector<char>& excluded,
                                            ordering_scratch* scratch) {
  if (a.mode != fit_mode::preempt) return {};
  ordering_scratch local;
  ordering_scratch& s = scratch != nullptr ? *scratch : local;
  preemption_ctx ctx{state, state.tree(), usage, w, a, {}, {}};
  ctx.scratch = &s;
  const auto& tree = ctx.tree;
  const queue_id q = w.queue;
  for (const auto& [f, amount] : a.use)
    if (amount > quota_available(tree, usage, q, f)) ctx.frs_need.push_back(f);
  if (ctx.frs_need.empty()) return {};
  s.prepare(tree, state.slots().size());
  const auto& policy = tree.spec(q).preemption;
  eligibility e;
  e.own = q;
  e.priority = w.priority;
  e.submit = w.submit_time;
  e.own_same_prio = policy.within_queue == within_queue_preemption::lower_or_newer_equal_priority;
  e.only_lower = policy.reclaim != cohort_reclaim::any;
  e.min_runtime = options.min_runtime;
  e.now = options.now;
  for (const std::uint32_t f : ctx.frs_need)
    e.need_mask |= f < 64 ? std::uint64_t{1} << f : ~std::uint64_t{0};
  e.frs_need = &ctx.frs_need;
  e.excluded = &excluded;

  // The queues that may hold candidates: the own queue, and with reclaim every other queue of
  // the tree borrowing a contested fr (at the starting usage: the masks are shared per scratch).
  auto& queues = s.search_queues;
  queues.clear();
  borrowers_entry* other_queues = nullptr;  // the other queues when nf <= 64
  if (policy.within_queue != within_queue_preemption::never) queues.push_back(q);
  if (tree.parent(q).valid() && policy.reclaim != cohort_reclaim::never) {
    const queue_id root = tree.path_to_root(q).back();
    const std::size_t nf = tree.fr_count();
    if (nf <= 64) {
      if (!s.masks_ready) {
        s.borrow_mask.assign(tree.size(), 0);
        s.borrowers.clear();
        s.borrowers_by_need.clear();
        for (std::uint32_t i = 0; i < tree.size(); ++i) {
          const queue_id x(i);
          if (!tree.is_queue(x) || !tree.parent(x).valid()) continue;
          for (std::size_t f = 0; f < nf; ++f)
            if (usage[i * nf + f] > tree.subtree_quota(x, f))
              s.borrow_mask[i] |= std::uint64_t{1} << f;
          if (s.borrow_mask[i] != 0) s.borrowers.push_back(x);
        }
        s.masks_ready = true;
      }
      // The borrowers of the root in a contested fr, cached per (root, contested mask): the
      // masks are those of the starting usage, fixed for the scratch's lifetime.
      for (auto& entry : s.borrowers_by_need)
        if (entry.root == root && entry.need_mask == e.need_mask) other_queues = &entry;
      if (other_queues == nullptr) {
        auto& entry = s.borrowers_by_need.emplace_back();
        entry.root = root;
        entry.need_mask = e.need_mask;
        for (const queue_id x : s.borrowers)
          if ((s.borrow_mask[x.value()] & e.need_mask) != 0 && tree.path_to_root(x).back() == root)
            entry.queues.push_back(x);
        other_queues = &entry;
      }
    } else {
      for (const queue_id x : tree.tree_queues(root))
        if (x != q && queue_borrowing(ctx, x)) queues.push_back(x);
    }
  }
  candidate_lists all(s, state, e, queues, other_queues);

  // Necessary condition: removing every candidate frees at most their usage. Own candidates are
  // summed from the list; another queue's from the index's per-level sums (a slot using a
  // contested fr is a candidate if its priority qualifies, it is old enough and not excluded).
  const auto& ix = s.index;
  const std::size_t nf = tree.fr_count();
  for (const std::uint32_t f : ctx.frs_need) {
    std::int64_t freeable = quota_available(tree, usage, q, f);
    for (const std::uint32_t x : all.queues()) {
      if (queue_id(x) == q) {
        for (std::uint32_t i = ix.begin[x]; i < ix.end[x]; ++i)
          if (all.eligible(ix.items[i]))
            for (const auto& [g, amount] : state.slots()[ix.items[i].slot].use)
              if (g == f) freeable += amount;
        continue;
      }
      std::uint32_t level = ix.level_end[x];
      if (e.only_lower)
        while (level > ix.level_begin[x] && ix.level_prio[level - 1] >= e.priority) --level;
      if (level > ix.level_begin[x]) freeable += ix.level_cum[(level - 1) * nf + f];
    }
    const auto need =
        std::find_if(a.use.begin(), a.use.end(), [&](const auto& fa) { return fa.first == f; });
    if (freeable < need->second) return {};
  }
  if (options.fair_sharing) {
    // Borrow the scratch's all-zero version vector; reset only the entries this search bumped.
    if (s.node_version.size() != tree.size()) s.node_version.assign(tree.size(), 0);
    ctx.node_version.swap(s.node_version);
    auto victims = fair_preemptions(ctx, all, options);
    for (const std::uint32_t x : s.versioned) ctx.node_version[x] = 0;
    s.versioned.clear();
    ctx.node_version.swap(s.node_version);
    return victims;
  }
  ctx.track_versions = false;

  const bool others = std::any_of(all.queues().begin(), all.queues().end(),
                                  [&](std::uint32_t x) { return queue_id(x) != q; });
  if (!others) return minimal_preemptions(ctx, all, true, {});
  const auto& bwc = tree.spec(q).preemption.borrow;
  if (bwc.enabled) {
    std::int32_t threshold = w.priority;
    if (bwc.max_priority_threshold && *bwc.max_priority_threshold < threshold)
      threshold = *bwc.max_priority_threshold + 1;
    eligibility allowed_e = e;
    if (!under_nominal(ctx)) allowed_e.other_below = threshold;
    candidate_lists allowed(s, state, allowed_e, queues, other_queues);
    return minimal_preemptions(ctx, allowed, true, threshold);
  }
  if (under_nominal(ctx)) {
    auto t = minimal_preemptions(ctx, all, false, {});
    if (!t.empty()) return t;
  }
  std::vector<queue_id> own;
  if (policy.within_queue != within_queue_preemption::never) own.push_back(q);
  candidate_lists same(s, state, e, own);
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
