// SPDX-License-Identifier: MIT
// What-if and status queries of capacity queues; no side effects.
#include <algorithm>

#include <hetsched/policies/capacity_preemption.hpp>

#include "capacity_internal.hpp"

namespace hetsched {

result<what_if_answer> what_if(const capacity_state& state, const pending_workload& w,
                               const capacity_cycle_options& options) {
  using namespace capacity_detail;
  HETSCHED_TRY(check_options(options));
  HETSCHED_TRY(state.validate_pending(w));
  const auto& tree = state.tree();
  what_if_answer ans;
  capacity_usage usage = state.usage();
  const assignment a = assign_flavor(tree, usage, w);
  ans.flavor = tree.flavor_name(a.flavor);
  ans.borrowing = a.borrowing;
  for (const auto& [f, amount] : a.use) add_usage(tree, usage, w.queue, f, amount);
  ans.drs_after = dominant_resource_share(tree, usage, w.queue);
  for (const auto& [f, amount] : a.use) add_usage(tree, usage, w.queue, f, -amount);
  const auto& order = state.queue(w.queue).pending;
  const bool fifo = tree.spec(w.queue).order == queue_order::strict_fifo ||
                    tree.spec(w.queue).order == queue_order::best_effort_fifo;
  const capacity_state::pending_key key{fifo ? 0 : -static_cast<std::int64_t>(w.priority),
                                        w.submit_time, w.job};
  ans.ahead_in_queue = order.count_before(key);
  if (a.mode == fit_mode::fit) {
    ans.admissible_now = true;
    return ans;
  }
  if (a.mode == fit_mode::preempt && options.preemption) {
    ans.victims = find_victims(state, usage, w, a, options, {});
    ans.needs_preemption = !ans.victims.empty();
  }
  if (!ans.needs_preemption) ans.reason = explain_no_fit(tree, usage, w, a);
  return ans;
}

result<queue_report> queue_status(const capacity_state& state, queue_id n) {
  const auto& tree = state.tree();
  if (!n.valid() || n.value() >= tree.size())
    return make_error(errc::not_found, "node {} does not exist", n.value());
  queue_report r;
  r.node = n;
  r.drs = dominant_resource_share(tree, state.usage(), n);
  for (std::size_t f = 0; f < tree.fr_count(); ++f) {
    const std::int64_t u = state.usage(n, f);
    if (!tree.declares(n, f) && u == 0 && tree.subtree_quota(n, f) == 0) continue;
    const auto& fr = tree.fr(f);
    r.lines.push_back(
        quota_line{fr.flavor, fr.resource, tree.nominal(n, f), tree.subtree_quota(n, f), u,
                   quota_available(tree, state.usage(), n, f), tree.potential_available(n, f),
                   std::max<std::int64_t>(0, u - tree.subtree_quota(n, f))});
  }
  return r;
}

}  // namespace hetsched
