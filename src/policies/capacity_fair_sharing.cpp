// SPDX-License-Identifier: MIT
// Fair-sharing preemption of capacity queues (Kueue fairPreemptions): target ordering from the
// root by DRS, strategies S2-a / S2-b at the almost-lowest-common-ancestors, fill-back.
#include <algorithm>

#include "capacity_internal.hpp"

namespace hetsched::capacity_detail {
namespace {

// drs_value's operator<=>, with its common cases inlined: a side not borrowing, or both finite
// with equal weights (one cross-multiplication).
inline std::strong_ordering compare_drs(const drs_value& a, const drs_value& b) {
  if (!a.infinite && !b.infinite) {
    if (a.borrowed == 0 || b.borrowed == 0) return (a.borrowed > 0) <=> (b.borrowed > 0);
    if (a.weight.digits == b.weight.digits && a.weight.exponent == b.weight.exponent) {
      __extension__ typedef unsigned __int128 u128;
      const u128 l = static_cast<u128>(a.borrowed) * static_cast<u128>(b.lendable);
      const u128 r = static_cast<u128>(b.borrowed) * static_cast<u128>(a.lendable);
      return l <=> r;
    }
  }
  return a <=> b;
}

// Kueue's TargetClusterQueueOrdering over candidate lists grouped by queue.
class target_ordering {
 public:
  // Live counts (queues with candidates below each node) over the lists' queues. Per-node state
  // is keyed by the lists' stamp, so nothing is cleared.
  target_ordering(const preemption_ctx& ctx, candidate_lists& lists, ordering_scratch& scratch)
      : ctx_(ctx), s_(scratch), lists_(lists), st_(lists.stamp()) {
    for (const queue_id x : ctx.tree.path_to_root(ctx.w.queue)) s_.on_path[x.value()] = st_;
    for (const std::uint32_t q : lists.queues())
      for (const queue_id x : ctx.tree.path_to_root(queue_id(q))) {
        if (s_.live_stamp[x.value()] != st_) {
          s_.live_stamp[x.value()] = st_;
          s_.live[x.value()] = 0;
        }
        ++s_.live[x.value()];
      }
  }

  // Returns the next target queue, or invalid when done.
  queue_id next() {
    const queue_id q = ctx_.w.queue;
    if (!ctx_.tree.parent(q).valid()) return has(q) ? q : queue_id::invalid();
    const queue_id root = ctx_.tree.path_to_root(q).back();
    while (!pruned(root)) {
      const queue_id t = next_target(root);
      if (t.valid()) return t;
    }
    return queue_id::invalid();
  }

  [[nodiscard]] bool has(queue_id q) const { return lists_.has(q); }
  /// The number of queues below n (n included) that still have candidates.
  [[nodiscard]] std::uint32_t live(queue_id n) const {
    return s_.live_stamp[n.value()] == st_ ? s_.live[n.value()] : 0;
  }
  [[nodiscard]] const candidate& front(queue_id q) const { return lists_.front(q); }
  candidate pop(queue_id q) {
    invalidate_parent(q);  // its front changed
    const candidate c = lists_.pop(q);
    if (!lists_.has(q))
      for (const queue_id x : ctx_.tree.path_to_root(q))
        if (--s_.live[x.value()] == 0) invalidate_parent(x);
    return c;
  }
  // Moves to `out` every candidate the walk would visit below n (chosen by the walk, off the
  // preemptor's path) and drops n: queues and cohorts not borrowing are pruned as in
  // next_target. Exact in place of visiting those targets one by one while no usage changes.
  void drain(queue_id n, std::vector<candidate>& out) {
    if (ctx_.tree.is_queue(n)) {
      if (has(n)) {  // pop() of every candidate, with its invalidations done once
        invalidate_parent(n);
        while (lists_.has(n)) out.push_back(lists_.pop(n));
        for (const queue_id x : ctx_.tree.path_to_root(n))
          if (--s_.live[x.value()] == 0) invalidate_parent(x);
      }
    } else {
      for (const queue_id ch : ctx_.tree.children(n))
        if (!pruned(ch) && live(ch) > 0 && drs(ch).borrowing()) drain(ch, out);
    }
    drop(n);
  }
  void drop(queue_id q) {
    s_.pruned[q.value()] = st_;
    invalidate_parent(q);
  }

  // The DRS of node n, cached until its usage changes; at version 0 (usage as on entry) the
  // value is shared by every search using this scratch.
  const drs_value& drs(queue_id n) {
    const std::uint32_t i = n.value();
    const std::uint32_t v = ctx_.node_version[i];
    if (v == 0) {
      if (s_.base_ready[i] == 0) {
        s_.base[i] = dominant_resource_share(ctx_.tree, ctx_.usage, n);
        s_.base_ready[i] = 1;
      }
      return s_.base[i];
    }
    if (s_.cache_stamp[i] != st_ || s_.cache_version[i] != v) {
      s_.cache[i] = dominant_resource_share(ctx_.tree, ctx_.usage, n);
      s_.cache_stamp[i] = st_;
      s_.cache_version[i] = v;
    }
    return s_.cache[i];
  }

 private:
  // A cohort's scan result stays valid until a child changes: its usage (the cohort's version
  // moves with it), pruning, its live count reaching 0, or the front of a child queue.
  void invalidate_parent(queue_id x) {
    const queue_id p = ctx_.tree.parent(x);
    if (p.valid()) s_.scan_stamp[p.value()] = 0;
  }

  queue_id next_target(queue_id cohort) {
    const auto& tree = ctx_.tree;
    const std::uint32_t ci = cohort.value();
    if (s_.scan_stamp[ci] != st_ || s_.scan_version[ci] != ctx_.node_version[ci]) {
      queue_id best_q = queue_id::invalid();
      drs_value best_q_drs;
      queue_id best_c = queue_id::invalid();
      drs_value best_c_drs;
      for (const queue_id ch : tree.children(cohort)) {
        if (pruned(ch)) continue;
        if (live(ch) == 0 && ch != ctx_.w.queue) {
          drop(ch);  // no candidate left below
          continue;
        }
        const drs_value& drs = this->drs(ch);
        if (tree.is_queue(ch)) {
          if ((!drs.borrowing() && ch != ctx_.w.queue) || !has(ch)) {
            drop(ch);
          } else if (!best_q.valid() || compare_drs(drs, best_q_drs) > 0) {
            best_q = ch;
            best_q_drs = drs;
          } else if (compare_drs(drs, best_q_drs) == 0 &&
                     candidate_before(front(ch), front(best_q), ctx_.w.queue)) {
            best_q = ch;
          }
        } else {
          if (!drs.borrowing() && s_.on_path[ch.value()] != st_) {
            drop(ch);
          } else if (!best_c.valid() || compare_drs(drs, best_c_drs) >= 0) {
            best_c = ch;
            best_c_drs = drs;
          }
        }
      }
      s_.scan_stamp[ci] = st_;
      s_.scan_version[ci] = ctx_.node_version[ci];
      s_.scan_q[ci] = best_q;
      s_.scan_c[ci] = best_c;
      s_.scan_c_first[ci] =
          best_c.valid() && (!best_q.valid() || compare_drs(best_c_drs, best_q_drs) >= 0);
    }
    const queue_id best_q = s_.scan_q[ci];
    const queue_id best_c = s_.scan_c[ci];
    if (!best_q.valid() && !best_c.valid()) {
      drop(cohort);
      return queue_id::invalid();
    }
    if (s_.scan_c_first[ci] != 0) return next_target(best_c);
    return best_q;
  }

  [[nodiscard]] bool pruned(queue_id n) const { return s_.pruned[n.value()] == st_; }

  const preemption_ctx& ctx_;
  ordering_scratch& s_;
  candidate_lists& lists_;
  std::uint32_t st_ = 0;
};

// The almost-LCAs of the preemptor queue and target queue t: the children of their lowest
// common ancestor on each path (the queues themselves when they have no common ancestor).
std::pair<queue_id, queue_id> almost_lcas(const capacity_tree& tree, queue_id p, queue_id t) {
  const auto pp = tree.path_to_root(p);
  const auto tp = tree.path_to_root(t);
  std::size_t i = pp.size();
  std::size_t j = tp.size();
  if (pp.back() != tp.back()) return {p, t};
  while (i > 0 && j > 0 && pp[i - 1] == tp[j - 1]) {
    --i;
    --j;
  }
  if (i == 0 || j == 0) return {p, t};
  return {pp[i - 1], tp[j - 1]};
}

bool fits_fair(preemption_ctx& ctx) {
  for (const auto& [f, a] : ctx.a.use) add_usage(ctx.tree, ctx.usage, ctx.w.queue, f, -a);
  const bool ok_fit = fits(ctx.tree, ctx.usage, ctx.w.queue, ctx.a.use, true);
  for (const auto& [f, a] : ctx.a.use) add_usage(ctx.tree, ctx.usage, ctx.w.queue, f, a);
  return ok_fit;
}

bool strategy_holds(fair_strategy s, const drs_value& preemptor_new, const drs_value& target_old,
                    const drs_value& target_new) {
  if (s == fair_strategy::less_than_or_equal_to_final_share) return preemptor_new <= target_new;
  return preemptor_new < target_old;
}

// True if victim v (running again in its queue B) could preempt the incoming workload w right
// back under the same rules, in the state where the plan is applied (ctx.usage holds it: the
// victims removed and w added). Checks B's reclaim policy and priority rule, that w's queue A
// borrows in a resource v uses, then reclamation (B within nominal with v), S2-a and S2-b.
bool could_preempt_back(preemption_ctx& ctx, const candidate& v) {
  const auto& tree = ctx.tree;
  const queue_id a = ctx.w.queue;
  const queue_id b = v.queue;
  const auto& policy = tree.spec(b).preemption;
  if (policy.reclaim == cohort_reclaim::never) return false;
  if (policy.reclaim == cohort_reclaim::lower_priority && ctx.w.priority >= v.priority)
    return false;
  const std::size_t nf = tree.fr_count();
  const auto& use = ctx.state.slots()[v.slot].use;
  const bool a_borrows = std::any_of(use.begin(), use.end(), [&](const auto& fa) {
    return ctx.usage[a.value() * nf + fa.first] > tree.subtree_quota(a, fa.first);
  });
  if (!a_borrows) return false;
  apply_slot(ctx, v.slot, +1);
  const bool within = std::all_of(use.begin(), use.end(), [&](const auto& fa) {
    return ctx.usage[b.value() * nf + fa.first] <= tree.nominal(b, fa.first);
  });
  const auto [side_b, side_a] = almost_lcas(tree, b, a);
  const drs_value preemptor_new = dominant_resource_share(tree, ctx.usage, side_b);
  const drs_value target_old = dominant_resource_share(tree, ctx.usage, side_a);
  for (const auto& [f, x] : ctx.a.use) add_ctx_usage(ctx, a, f, -x);
  const drs_value target_new = dominant_resource_share(tree, ctx.usage, side_a);
  for (const auto& [f, x] : ctx.a.use) add_ctx_usage(ctx, a, f, x);
  apply_slot(ctx, v.slot, -1);
  return within || preemptor_new <= target_new || preemptor_new < target_old;
}

}  // namespace

std::vector<preemption_target> fair_preemptions(preemption_ctx& ctx, candidate_lists& candidates,
                                                const capacity_cycle_options& options) {
  const auto& tree = ctx.tree;
  const queue_id q = ctx.w.queue;
  const std::size_t nf = tree.fr_count();
  ordering_scratch& scratch = *ctx.scratch;
  for (const auto& [f, a] : ctx.a.use) add_ctx_usage(ctx, q, f, a);
  const bool within_nominal = std::all_of(
      ctx.frs_need.begin(), ctx.frs_need.end(),
      [&](std::uint32_t f) { return ctx.usage[q.value() * nf + f] <= tree.nominal(q, f); });
  std::vector<std::pair<candidate, preemption_reason>> targets;
  std::vector<candidate> retry;
  bool fit = false;
  const auto take = [&](const candidate& c, preemption_reason r) {
    apply_slot(ctx, c.slot, -1);
    targets.emplace_back(c, r);
    return fits_fair(ctx);
  };
  // DRS of both almost-LCAs under the current usage, through the ordering's version-keyed cache.
  const auto shares = [&](target_ordering& order, queue_id t) {
    const auto [pa, ta] = almost_lcas(tree, q, t);
    return std::pair{order.drs(pa), order.drs(ta)};
  };
  bool hopeless = false;
  {
    target_ordering order(ctx, candidates, scratch);
    // Exact shortcut: before any victim is taken the usage is the one on entry, and a target t
    // can only give a victim (S2-a: preemptor_new <= target_new <= target_old; S2-b:
    // preemptor_new < target_old) if target_old >= preemptor_new. When no candidate queue
    // qualifies and neither the own queue nor reclamation applies, pass 1 only moves every
    // candidate to the retry list and pass 2 takes nothing: there is no plan.
    if (!within_nominal && !candidates.has(q)) {
      // A target t's almost-LCAs are (path[k], ch) for the child ch != path[k] of its lowest
      // common ancestor path[k + 1] with q, so one check per such child with candidates below.
      hopeless = true;
      const auto path = tree.path_to_root(q);
      for (std::size_t k = 0; k + 1 < path.size() && hopeless; ++k) {
        const drs_value preemptor_new = order.drs(path[k]);
        for (const queue_id ch : tree.children(path[k + 1]))
          if (ch != path[k] && order.live(ch) > 0 &&
              compare_drs(order.drs(ch), preemptor_new) >= 0) {
            hopeless = false;
            break;
          }
      }
    }
    for (queue_id t = hopeless ? queue_id::invalid() : order.next(); t.valid() && !fit;
         t = order.next()) {
      if (t == q) {
        fit = take(order.pop(t), preemption_reason::in_cluster_queue);
        continue;
      }
      if (within_nominal) {
        fit = take(order.pop(t), preemption_reason::in_cohort_reclamation);
        continue;
      }
      const auto [preemptor_new, target_old] = shares(order, t);
      if (target_old < preemptor_new) {
        // Neither strategy can hold for any candidate of t (removing only lowers its share).
        // Every target below t's almost-LCA shares both almost-LCAs with t, and the walk stays
        // below it until it is exhausted: all of them go to retry unchanged.
        order.drain(almost_lcas(tree, q, t).second, retry);
        continue;
      }
      const queue_id target_side = almost_lcas(tree, q, t).second;
      while (order.has(t)) {
        const candidate c = order.pop(t);
        apply_slot(ctx, c.slot, -1);
        const drs_value target_new = dominant_resource_share(tree, ctx.usage, target_side);
        apply_slot(ctx, c.slot, +1);
        if (strategy_holds(options.strategies.front(), preemptor_new, target_old, target_new)) {
          fit = take(c, preemption_reason::in_cohort_fair_sharing);
          break;
        }
        retry.push_back(c);
      }
    }
  }
  if (!fit && !hopeless && options.strategies.size() > 1 && !retry.empty()) {
    candidate_lists retry_lists(scratch, retry);
    target_ordering order(ctx, retry_lists, scratch);
    for (queue_id t = order.next(); t.valid() && !fit; t = order.next()) {
      const auto [preemptor_new, target_old] = shares(order, t);
      if (preemptor_new < target_old) {
        fit = take(order.pop(t), preemption_reason::in_cohort_fair_sharing);
        order.drop(t);
      } else {
        order.drop(almost_lcas(tree, q, t).second);  // no target below it can qualify either
      }
    }
  }
  for (const auto& [f, a] : ctx.a.use) add_ctx_usage(ctx, q, f, -a);
  if (!fit) {
    for (const auto& t : targets) stage_slot(ctx, t.first.slot, +1);
    flush_staged(ctx);
    return {};
  }
  fill_back(ctx, targets, true);
  // Anti-cycle guard (beyond Kueue): drop the plan if a victim of another queue could preempt
  // the incoming workload right back.
  for (const auto& [f, x] : ctx.a.use) add_ctx_usage(ctx, q, f, x);
  const bool cycle = std::any_of(targets.begin(), targets.end(), [&](const auto& t) {
    return t.first.queue != q && could_preempt_back(ctx, t.first);
  });
  for (const auto& [f, x] : ctx.a.use) add_ctx_usage(ctx, q, f, -x);
  for (const auto& t : targets) stage_slot(ctx, t.first.slot, +1);
  flush_staged(ctx);
  if (cycle) return {};
  std::vector<preemption_target> out;
  for (const auto& [c, r] : targets) out.push_back({c.job, c.queue, r});
  return out;
}

}  // namespace hetsched::capacity_detail
