// SPDX-License-Identifier: MIT
// What-if and status queries of capacity queues; no side effects.
#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include <hetsched/policies/capacity_preemption.hpp>

#include "capacity_internal.hpp"

namespace hetsched {
namespace {

using namespace capacity_detail;

// The usage of one tenant in w's queue per fr, as the admission cycle tracks it.
class tenant_uses {
 public:
  tenant_uses(const capacity_state& state, queue_id q) : state_(state), q_(q) {}

  std::vector<std::int64_t>& of(tenant_id t) {
    auto [it, inserted] = use_.try_emplace(t);
    if (inserted) {
      if (const auto* u = state_.tenant_usage(q_, t)) {
        it->second = *u;
      } else {
        it->second.assign(state_.tree().fr_count(), 0);
      }
    }
    return it->second;
  }

 private:
  const capacity_state& state_;
  queue_id q_;
  std::map<tenant_id, std::vector<std::int64_t>> use_;
};

// Walks the pending workloads ordered before `key` in w's strict queue as the cycle's
// nomination does, ignoring every other queue: each is admitted into `usage` (and its tenant's
// use) in its first fitting flavor when within its user limit; the first one that waits (victims
// in flight, no fit now, user limit) blocks the queue. Returns that head, if any.
std::optional<job_id> admit_ahead(const capacity_state& state, const pending_workload& w,
                                  const capacity_state::pending_key& key, capacity_usage& usage,
                                  tenant_uses& tenants, double active_weight) {
  const auto& tree = state.tree();
  const bool user_limited = tree.spec(w.queue).user_limit.has_value();
  std::optional<job_id> head;
  state.queue(w.queue).pending.for_each_while([&](const capacity_state::pending_entry& e) {
    if (!(e.key < key)) return false;
    const job_id job = e.key.job;
    if (job == w.job) return true;  // w itself, pending under another key
    if (state.victims_in_flight(job) > 0) {
      head = job;
      return false;
    }
    const auto option = std::find_if(e.uses->begin(), e.uses->end(), [&](const auto& o) {
      return fits(tree, usage, w.queue, o.second, true);
    });
    if (option == e.uses->end()) {
      head = job;
      return false;
    }
    if (user_limited) {
      auto& use = tenants.of(e.rec->w.tenant);
      if (!user_limit_violation(tree, usage, e.rec->w, option->second, use, active_weight)
               .empty()) {
        head = job;
        return false;
      }
      for (const auto& [f, amount] : option->second) use[f] += amount;
    }
    for (const auto& [f, amount] : option->second) add_usage(tree, usage, w.queue, f, amount);
    return true;
  });
  return head;
}

}  // namespace

result<what_if_answer> what_if(const capacity_state& state, const pending_workload& w,
                               const capacity_cycle_options& options) {
  HETSCHED_TRY(check_options(options));
  HETSCHED_TRY(state.validate_pending(w));
  const auto& tree = state.tree();
  const auto& spec = tree.spec(w.queue);
  what_if_answer ans;
  capacity_usage usage = state.usage();
  const bool fifo =
      spec.order == queue_order::strict_fifo || spec.order == queue_order::best_effort_fifo;
  const capacity_state::pending_key key{fifo ? 0 : -static_cast<std::int64_t>(w.priority),
                                        w.submit_time, w.job};
  ans.ahead_in_queue = state.queue(w.queue).pending.count_before(key);
  tenant_uses tenants(state, w.queue);
  const double active_weight =
      spec.user_limit ? active_user_weight(state, w.queue, *spec.user_limit, w.tenant) : 0.0;
  std::optional<job_id> head;
  if (strict_order(spec.order) && ans.ahead_in_queue > 0)
    head = admit_ahead(state, w, key, usage, tenants, active_weight);
  const assignment a = assign_flavor(tree, usage, w);
  ans.flavor = tree.flavor_name(a.flavor);
  ans.borrowing = a.borrowing;
  for (const auto& [f, amount] : a.use) add_usage(tree, usage, w.queue, f, amount);
  ans.drs_after = dominant_resource_share(tree, usage, w.queue);
  for (const auto& [f, amount] : a.use) add_usage(tree, usage, w.queue, f, -amount);
  if (head) {
    ans.reason = behind_head_message(tree, w.queue, *head);
    return ans;
  }
  if (const std::size_t n = state.victims_in_flight(w.job); n > 0) {
    ans.reason = victims_in_flight_message(n);
    return ans;
  }
  if (a.mode == fit_mode::fit) {
    if (spec.user_limit)
      ans.reason = user_limit_violation(tree, usage, w, a.use, tenants.of(w.tenant), active_weight);
    ans.admissible_now = ans.reason.empty();
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
