// SPDX-License-Identifier: MIT
// What-if and status queries of capacity queues; no side effects.
#include <algorithm>
#include <vector>

#include <hetsched/policies/capacity_preemption.hpp>

#include "capacity_internal.hpp"

namespace hetsched {

using namespace capacity_detail;

result<what_if_answer> what_if(const capacity_state& state, const pending_workload& w,
                               const capacity_cycle_options& options) {
  HETSCHED_TRY(check_options(options));
  HETSCHED_TRY(state.validate_pending(w));
  if (!w.job.valid()) return make_error(errc::invalid_argument, "what-if workload has no job id");
  if (state.is_admitted(w.job))
    return make_error(errc::failed_precondition, "job {} is admitted, not pending", w.job.value());
  const auto& tree = state.tree();
  const auto order = tree.spec(w.queue).order;
  const bool fifo = order == queue_order::strict_fifo || order == queue_order::best_effort_fifo;
  const capacity_state::pending_key key{fifo ? 0 : -static_cast<std::int64_t>(w.priority),
                                        w.submit_time, w.job};
  what_if_answer ans;
  ans.ahead_in_queue = state.queue(w.queue).pending.count_before(key);
  if (const auto* old = state.pending(w.job);
      old != nullptr && old->queue == w.queue && state.pending_record(w.job).key < key)
    --ans.ahead_in_queue;  // the workload it replaces
  auto out = probe_cycle(state, w, options);
  if (!out) return std::move(out).error();
  ans.admissible_now = out->admitted;
  ans.flavor = tree.flavor_name(out->flavor);
  ans.borrowing = out->borrowing;
  ans.drs_after = out->drs_after;
  ans.needs_preemption = !out->victims.empty();
  ans.victims = std::move(out->victims);
  if (!ans.admissible_now && !ans.needs_preemption) ans.reason = std::move(out->message);
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
