// SPDX-License-Identifier: MIT
// Fair-sharing preemption of capacity queues (Kueue fairPreemptions): target ordering from the
// root by DRS, strategies S2-a / S2-b at the almost-lowest-common-ancestors, fill-back.
#include <algorithm>

#include "capacity_internal.hpp"

namespace hetsched::capacity_detail {
namespace {

// Kueue's TargetClusterQueueOrdering over candidate lists grouped by queue.
class target_ordering {
 public:
  // Buckets the candidates by queue (counting sort), then orders each bucket.
  target_ordering(const preemption_ctx& ctx, const std::vector<candidate>& candidates,
                  ordering_scratch& scratch)
      : ctx_(ctx), s_(scratch), candidates_(candidates) {
    const std::size_t n = ctx.tree.size();
    s_.pruned.assign(n, 0);
    s_.on_path.assign(n, 0);
    s_.end.assign(n + 1, 0);
    s_.live.assign(n, 0);
    s_.cache_version.assign(n, ~std::uint32_t{0});
    if (s_.cache.size() != n) s_.cache.resize(n);
    for (const auto& c : candidates) ++s_.end[c.queue.value() + 1];
    for (std::size_t i = 1; i <= n; ++i) s_.end[i] += s_.end[i - 1];
    s_.cur.assign(s_.end.begin(), s_.end.end() - 1);
    s_.items.resize(candidates.size());
    for (std::uint32_t i = 0; i < candidates.size(); ++i)
      s_.items[s_.cur[candidates[i].queue.value()]++] = {i, candidates[i].queue.value()};
    for (std::size_t q = 0; q < n; ++q) {
      s_.cur[q] = s_.end[q];
      if (s_.end[q + 1] - s_.end[q] > 1)
        std::sort(s_.items.begin() + static_cast<std::ptrdiff_t>(s_.end[q]),
                  s_.items.begin() + static_cast<std::ptrdiff_t>(s_.end[q + 1]),
                  [&](const auto& x, const auto& y) {
                    return candidate_before(candidates[x.first], candidates[y.first], ctx.w.queue);
                  });
    }
    for (const queue_id x : ctx.tree.path_to_root(ctx.w.queue)) s_.on_path[x.value()] = 1;
    for (const auto& c : candidates)
      for (const queue_id x : ctx.tree.path_to_root(c.queue)) ++s_.live[x.value()];
  }

  // Returns the next target queue, or invalid when done.
  queue_id next() {
    const queue_id q = ctx_.w.queue;
    if (!ctx_.tree.parent(q).valid()) return has(q) ? q : queue_id::invalid();
    const queue_id root = ctx_.tree.path_to_root(q).back();
    while (s_.pruned[root.value()] == 0) {
      const queue_id t = next_target(root);
      if (t.valid()) return t;
    }
    return queue_id::invalid();
  }

  [[nodiscard]] bool has(queue_id q) const { return s_.cur[q.value()] < s_.end[q.value() + 1]; }
  [[nodiscard]] const candidate& front(queue_id q) const {
    return candidates_[s_.items[s_.cur[q.value()]].first];
  }
  candidate pop(queue_id q) {
    for (const queue_id x : ctx_.tree.path_to_root(q)) --s_.live[x.value()];
    return candidates_[s_.items[s_.cur[q.value()]++].first];
  }
  void drop(queue_id q) { s_.pruned[q.value()] = 1; }

  // The DRS of node n, cached until its usage changes.
  const drs_value& drs(queue_id n) {
    if (s_.cache_version[n.value()] != ctx_.node_version[n.value()]) {
      s_.cache[n.value()] = dominant_resource_share(ctx_.tree, ctx_.usage, n);
      s_.cache_version[n.value()] = ctx_.node_version[n.value()];
    }
    return s_.cache[n.value()];
  }

 private:
  queue_id next_target(queue_id cohort) {
    const auto& tree = ctx_.tree;
    queue_id best_q = queue_id::invalid();
    drs_value best_q_drs;
    queue_id best_c = queue_id::invalid();
    drs_value best_c_drs;
    for (const queue_id ch : tree.children(cohort)) {
      if (s_.pruned[ch.value()] != 0) continue;
      if (s_.live[ch.value()] == 0 && ch != ctx_.w.queue) {
        s_.pruned[ch.value()] = 1;  // no candidate left below
        continue;
      }
      const drs_value& drs = this->drs(ch);
      if (tree.is_queue(ch)) {
        if ((!drs.borrowing() && ch != ctx_.w.queue) || !has(ch)) {
          s_.pruned[ch.value()] = 1;
        } else if (!best_q.valid() || drs > best_q_drs) {
          best_q = ch;
          best_q_drs = drs;
        } else if (drs == best_q_drs && candidate_before(front(ch), front(best_q), ctx_.w.queue)) {
          best_q = ch;
        }
      } else {
        if (!drs.borrowing() && s_.on_path[ch.value()] == 0) {
          s_.pruned[ch.value()] = 1;
        } else if (!best_c.valid() || drs >= best_c_drs) {
          best_c = ch;
          best_c_drs = drs;
        }
      }
    }
    if (!best_q.valid() && !best_c.valid()) {
      s_.pruned[cohort.value()] = 1;
      return queue_id::invalid();
    }
    if (best_c.valid() && (!best_q.valid() || best_c_drs >= best_q_drs)) return next_target(best_c);
    return best_q;
  }

  const preemption_ctx& ctx_;
  ordering_scratch& s_;
  const std::vector<candidate>& candidates_;
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

std::vector<preemption_target> fair_preemptions(preemption_ctx& ctx,
                                                const std::vector<candidate>& candidates,
                                                const capacity_cycle_options& options) {
  const auto& tree = ctx.tree;
  const queue_id q = ctx.w.queue;
  const std::size_t nf = tree.fr_count();
  ordering_scratch local;
  ordering_scratch& scratch = ctx.scratch != nullptr ? *ctx.scratch : local;
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
  const auto shares = [&](queue_id t) {
    const auto [pa, ta] = almost_lcas(tree, q, t);
    return std::pair{dominant_resource_share(tree, ctx.usage, pa),
                     dominant_resource_share(tree, ctx.usage, ta)};
  };
  {
    target_ordering order(ctx, candidates, scratch);
    for (queue_id t = order.next(); t.valid() && !fit; t = order.next()) {
      if (t == q) {
        fit = take(order.pop(t), preemption_reason::in_cluster_queue);
        continue;
      }
      if (within_nominal) {
        fit = take(order.pop(t), preemption_reason::in_cohort_reclamation);
        continue;
      }
      const auto [preemptor_new, target_old] = shares(t);
      if (target_old < preemptor_new) {
        // Neither strategy can hold for any candidate of t (removing only lowers its share).
        while (order.has(t)) retry.push_back(order.pop(t));
        continue;
      }
      while (order.has(t)) {
        const candidate c = order.pop(t);
        apply_slot(ctx, c.slot, -1);
        const drs_value target_new =
            dominant_resource_share(tree, ctx.usage, almost_lcas(tree, q, t).second);
        apply_slot(ctx, c.slot, +1);
        if (strategy_holds(options.strategies.front(), preemptor_new, target_old, target_new)) {
          fit = take(c, preemption_reason::in_cohort_fair_sharing);
          break;
        }
        retry.push_back(c);
      }
    }
  }
  if (!fit && options.strategies.size() > 1 && !retry.empty()) {
    target_ordering order(ctx, retry, scratch);
    for (queue_id t = order.next(); t.valid() && !fit; t = order.next()) {
      const auto [preemptor_new, target_old] = shares(t);
      if (preemptor_new < target_old)
        fit = take(order.pop(t), preemption_reason::in_cohort_fair_sharing);
      order.drop(t);
    }
  }
  for (const auto& [f, a] : ctx.a.use) add_ctx_usage(ctx, q, f, -a);
  if (!fit) {
    for (const auto& t : targets) apply_slot(ctx, t.first.slot, +1);
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
  for (const auto& t : targets) apply_slot(ctx, t.first.slot, +1);
  if (cycle) return {};
  std::vector<preemption_target> out;
  for (const auto& [c, r] : targets) out.push_back({c.job, c.queue, r});
  return out;
}

}  // namespace hetsched::capacity_detail
