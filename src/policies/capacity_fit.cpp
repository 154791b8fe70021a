// SPDX-License-Identifier: MIT
// Flavor assignment, fit checks and the waiting rules (strict heads, YARN user limits) shared
// by the admission cycle and what-if.
#include <fmt/format.h>

#include <algorithm>

#include "capacity_internal.hpp"

namespace hetsched::capacity_detail {

std::optional<use_list> resolve_use(const capacity_tree& tree, queue_id q, std::uint32_t flavor,
                                    const drf_vector& request) {
  use_list use;
  use.reserve(request.size());
  const std::string& fname = tree.flavor_name(flavor);
  for (const auto& [resource, amount] : request) {
    if (amount == 0) continue;
    const auto f = tree.find_fr(fname, resource);
    if (!f || !tree.declares(q, *f)) return std::nullopt;
    use.emplace_back(static_cast<std::uint32_t>(*f), amount);
  }
  return use;
}

bool fits(const capacity_tree& tree, const capacity_usage& usage, queue_id q, const use_list& use,
          bool allow_borrowing) {
  const std::size_t nf = tree.fr_count();
  for (const auto& [f, a] : use) {
    if (!allow_borrowing && usage[q.value() * nf + f] + a > tree.subtree_quota(q, f)) return false;
    if (a > quota_available(tree, usage, q, f)) return false;
  }
  return true;
}

bool borrows_with(const capacity_tree& tree, const capacity_usage& usage, queue_id q,
                  const use_list& use) {
  const std::size_t nf = tree.fr_count();
  return std::any_of(use.begin(), use.end(), [&](const auto& fa) {
    return usage[q.value() * nf + fa.first] + fa.second > tree.subtree_quota(q, fa.first);
  });
}

assignment assign_flavor(const capacity_tree& tree, const capacity_usage& usage,
                         const pending_workload& w) {
  assignment preempt;
  assignment never;
  bool have_never = false;
  for (const std::uint32_t fl : tree.flavor_order(w.queue)) {
    if (!w.flavors.empty() &&
        std::find(w.flavors.begin(), w.flavors.end(), tree.flavor_name(fl)) == w.flavors.end())
      continue;
    auto use = resolve_use(tree, w.queue, fl, w.request);
    if (!use) continue;
    if (fits(tree, usage, w.queue, *use, true)) {
      assignment a{fit_mode::fit, fl, std::move(*use), false};
      a.borrowing = borrows_with(tree, usage, w.queue, a.use);
      return a;
    }
    const bool possible = std::all_of(use->begin(), use->end(), [&](const auto& fa) {
      return fa.second <= tree.potential_available(w.queue, fa.first);
    });
    if (possible && preempt.mode == fit_mode::never) {
      preempt = assignment{fit_mode::preempt, fl, std::move(*use), false};
    } else if (!have_never) {
      never = assignment{fit_mode::never, fl, std::move(*use), false};
      have_never = true;
    }
  }
  if (preempt.mode == fit_mode::preempt) {
    preempt.borrowing = borrows_with(tree, usage, w.queue, preempt.use);
    return preempt;
  }
  return never;
}

std::string explain_no_fit(const capacity_tree& tree, const capacity_usage& usage,
                           const pending_workload& w, const assignment& a) {
  std::string out;
  for (const auto& [f, amount] : a.use) {
    const auto& fr = tree.fr(f);
    if (a.mode == fit_mode::never) {
      const std::int64_t most = tree.potential_available(w.queue, f);
      if (amount > most) {
        out = fmt::format("asks {} of {}@{}, more than queue '{}' can ever get ({})", amount,
                          fr.resource, fr.flavor, tree.name(w.queue), most);
        return out;
      }
    } else {
      const std::int64_t avail = quota_available(tree, usage, w.queue, f);
      if (amount > avail) {
        out = fmt::format("waiting for quota in queue '{}': {}@{} needs {}, available {}",
                          tree.name(w.queue), fr.resource, fr.flavor, amount, avail);
        return out;
      }
    }
  }
  return fmt::format("queue '{}' has no allowed flavor for the request", tree.name(w.queue));
}

std::string behind_head_message(const capacity_tree& tree, queue_id q, job_id head) {
  return fmt::format("behind head job {} of strict queue '{}'", head.value(), tree.name(q));
}

std::string victims_in_flight_message(std::size_t n) {
  return fmt::format("waiting for {} preempted workload(s) to terminate", n);
}

double user_weight(const yarn_user_limit_spec& ul, tenant_id u) {
  const auto it = ul.user_weights.find(u);
  return it == ul.user_weights.end() ? 1.0 : it->second;
}

std::string user_limit_violation(const capacity_tree& tree, const capacity_usage& usage,
                                 const pending_workload& w, const use_list& use,
                                 const std::vector<std::int64_t>& tenant_use,
                                 double active_weight) {
  __extension__ typedef unsigned __int128 u128;
  const auto& ul = tree.spec(w.queue).user_limit;
  if (!ul) return {};
  const std::size_t nf = tree.fr_count();
  const double weight = user_weight(*ul, w.tenant);
  const auto wq = make_drf_weight(weight, "user");
  const double active = std::max(active_weight, weight);
  for (const auto& [f, amount] : use) {
    const auto limit =
        yarn_user_limit(tree.nominal(w.queue, f), tree.potential_available(w.queue, f),
                        usage[w.queue.value() * nf + f], 0, active, *ul);
    if (!limit || !wq) continue;
    const std::int64_t used = tenant_use.empty() ? 0 : tenant_use[f];
    // (used + amount) <= limit * weight  <=>  (used + amount) * den * wden <= num * wnum
    const u128 lhs = static_cast<u128>(used + amount) * static_cast<u128>(limit->den) *
                     static_cast<u128>(wq->den);
    const u128 rhs = static_cast<u128>(limit->num) * static_cast<u128>(wq->num);
    if (lhs > rhs) {
      const auto& fr = tree.fr(f);
      return fmt::format("user limit of tenant {} in queue '{}' reached for {}@{} ({} + {} > {})",
                         w.tenant.value(), tree.name(w.queue), fr.resource, fr.flavor, used, amount,
                         limit->to_double() * weight);
    }
  }
  return {};
}

result<void> check_options(const capacity_cycle_options& options) {
  using fs = fair_strategy;
  const auto& s = options.strategies;
  const bool valid =
      (s.size() == 1) || (s.size() == 2 && s[0] == fs::less_than_or_equal_to_final_share &&
                          s[1] == fs::less_than_initial_share);
  if (!valid)
    return make_error(errc::invalid_argument,
                      "fair-sharing strategies must be [S2-a], [S2-b] or [S2-a, S2-b]");
  if (options.min_runtime < 0)
    return make_error(errc::invalid_argument, "minimum runtime {} is negative",
                      options.min_runtime);
  return ok();
}

}  // namespace hetsched::capacity_detail
