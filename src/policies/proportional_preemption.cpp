// SPDX-License-Identifier: MIT
// YARN's ProportionalCapacityPreemptionPolicy: validation, ideal assignment (water-filling per
// level), to-be-preempted amounts, dead zone and natural termination. The victim selection
// (FifoCandidatesSelector) is in proportional_preemption_select.cpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <hetsched/policies/proportional_preemption.hpp>

#include "proportional_preemption_detail.hpp"

namespace hetsched {
namespace detail::pcpp {

namespace {

// Returns sign(a/b - c/d) for b, d > 0, by continued fractions: no product is ever formed.
int compare_fractions(u128 a, u128 b, u128 c, u128 d) noexcept {
  for (;;) {
    const u128 qa = a / b;
    const u128 qc = c / d;
    if (qa != qc) return qa < qc ? -1 : 1;
    a -= qa * b;
    c -= qc * d;
    if (a == 0 || c == 0) {
      if (a == c) return 0;
      return a == 0 ? -1 : 1;
    }
    // a/b < c/d with both below 1 iff d/c < b/a.
    const u128 na = d;
    const u128 nb = c;
    const u128 nc = b;
    const u128 nd = a;
    a = na;
    b = nb;
    c = nc;
    d = nd;
  }
}

}  // namespace

void calculator::share_order(const pcpp_vector& a, std::array<std::uint8_t, 8>& order) const {
  for (std::size_t i = 0; i < k; ++i) order[i] = static_cast<std::uint8_t>(i);
  // Insertion sort, descending share a_i / C_i.
  for (std::size_t i = 1; i < k; ++i) {
    const std::uint8_t x = order[i];
    std::size_t j = i;
    while (j > 0) {
      const std::uint8_t y = order[j - 1];
      if (i128{a[x]} * cluster[y] <= i128{a[y]} * cluster[x]) break;
      order[j] = y;
      --j;
    }
    order[j] = x;
  }
}

int calculator::compare(const pcpp_vector& a, const pcpp_vector& b) const {
  if (k == 1) return a[0] < b[0] ? -1 : (a[0] > b[0] ? 1 : 0);
  bool same = true;
  for (std::size_t i = 0; i < k; ++i) same = same && a[i] == b[i];
  if (same) return 0;
  std::array<std::uint8_t, 8> oa{};
  std::array<std::uint8_t, 8> ob{};
  share_order(a, oa);
  share_order(b, ob);
  for (std::size_t t = 0; t < k; ++t) {
    const std::size_t i = oa[t];
    const std::size_t j = ob[t];
    const i128 lhs = i128{a[i]} * cluster[j];
    const i128 rhs = i128{b[j]} * cluster[i];
    if (lhs != rhs) return lhs < rhs ? -1 : 1;
  }
  return 0;
}

fraction calculator::dominant_ratio(const pcpp_vector& num, const pcpp_vector& den) const {
  if (k == 1) return fraction{i128{num[0]}, i128{den[0]}};
  std::array<std::uint8_t, 8> on{};
  std::array<std::uint8_t, 8> od{};
  share_order(num, on);
  share_order(den, od);
  // (num_a / C_a) / (den_b / C_b)
  return fraction{i128{num[on[0]]} * cluster[od[0]], i128{cluster[on[0]]} * den[od[0]]};
}

int compare_ratios(const fraction& x, const fraction& y) noexcept {
  const auto clamp = [](i128 v) { return v < 0 ? u128{0} : static_cast<u128>(v); };
  return compare_fractions(clamp(x.num), static_cast<u128>(x.den), clamp(y.num),
                           static_cast<u128>(y.den));
}

std::int64_t scale(std::int64_t v, i128 num, i128 den, rounding_mode mode) noexcept {
  const i128 p = i128{v} * num;
  switch (mode) {
    case rounding_mode::truncate: return static_cast<std::int64_t>(p / den);
    case rounding_mode::up: {
      i128 q = p / den;
      if (p % den != 0 && p > 0) ++q;
      return static_cast<std::int64_t>(q);
    }
    case rounding_mode::nearest: return static_cast<std::int64_t>((2 * p + den) / (2 * den));
  }
  return 0;
}

}  // namespace detail::pcpp

namespace {

using detail::pcpp::calculator;
using detail::pcpp::fraction;
using detail::pcpp::i128;
using detail::pcpp::node;
using detail::pcpp::rounding_mode;

constexpr std::int64_t max_amount = std::int64_t{1} << 40;

result<void> check_vector(const pcpp_vector& v, std::size_t k, std::string_view what,
                          std::string_view name) {
  for (std::size_t i = 0; i < pcpp_max_dimensions; ++i) {
    if (i >= k && v[i] != 0)
      return make_error(errc::invalid_argument,
                        "{} '{}': dimension {} is set but the snapshot has {}", what, name, i, k);
    if (v[i] < 0)
      return make_error(errc::invalid_argument, "{} '{}': dimension {} is negative ({})", what,
                        name, i, v[i]);
    if (v[i] > max_amount)
      return make_error(errc::out_of_range, "{} '{}': dimension {} exceeds 2^40 ({})", what, name,
                        i, v[i]);
  }
  return {};
}

result<void> check_ratio(const pcpp_ratio& r, std::string_view name) {
  if (r.den <= 0 || r.num < 0 || r.den > max_amount || r.num > max_amount)
    return make_error(errc::invalid_argument,
                      "parameter {}: {}/{} is not a ratio with 0 <= num, 0 < den <= 2^40", name,
                      r.num, r.den);
  return {};
}

// YARN's capacity invariants over the absolute amounts (maximum-capacity >= capacity; children's
// capacities are shares of their parent's, so their absolute guarantees fit in it): a queue's
// guaranteed above its maximum, or the guarantees of a parent's children (top-level queues: of
// the cluster) summing above its own guarantee, in some dimension, is an error naming the queue
// and the numbers. A sum below is allowed (rounded absolute amounts; the rest is shared by the
// water-filling as YARN does). Entries are already checked to be in 0..2^40.
result<void> check_capacities(const pcpp_snapshot& s) {
  const std::size_t k = s.dimensions;
  const std::size_t n = s.queues.size();
  std::vector<std::int64_t> children(n * k, 0);  // per parent and dimension
  pcpp_vector top{};
  for (std::size_t q = 0; q < n; ++q) {
    const pcpp_queue& queue = s.queues[q];
    for (std::size_t i = 0; i < k; ++i) {
      if (queue.guaranteed[i] > queue.maximum[i])
        return make_error(errc::invalid_argument,
                          "queue '{}': guaranteed {} exceeds its maximum {} in dimension {}",
                          queue.name, queue.guaranteed[i], queue.maximum[i], i);
      if (queue.parent == pcpp_root) {
        top[i] += queue.guaranteed[i];
      } else {
        children[queue.parent * k + i] += queue.guaranteed[i];
      }
    }
  }
  for (std::size_t i = 0; i < k; ++i)
    if (top[i] > s.cluster[i])
      return make_error(errc::invalid_argument,
                        "top-level queues: guarantees sum to {} in dimension {}, above the "
                        "cluster's {}",
                        top[i], i, s.cluster[i]);
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t i = 0; i < k; ++i)
      if (children[q * k + i] > s.queues[q].guaranteed[i])
        return make_error(errc::invalid_argument,
                          "queue '{}': its children's guarantees sum to {} in dimension {}, above "
                          "its own guarantee {}",
                          s.queues[q].name, children[q * k + i], i, s.queues[q].guaranteed[i]);
  return {};
}

result<void> validate(const pcpp_snapshot& s, const pcpp_params& p) {
  const std::size_t k = s.dimensions;
  if (k == 0 || k > pcpp_max_dimensions)
    return make_error(errc::invalid_argument, "snapshot: dimensions {} outside 1..{}", k,
                      pcpp_max_dimensions);
  HETSCHED_TRY(check_vector(s.cluster, k, "cluster", "root"));
  for (std::size_t i = 0; i < k; ++i)
    if (s.cluster[i] <= 0)
      return make_error(errc::invalid_argument, "cluster: dimension {} is {}, must be > 0", i,
                        s.cluster[i]);
  if (s.queues.size() > (std::size_t{1} << 20))
    return make_error(errc::out_of_range, "snapshot: {} queues exceed 2^20", s.queues.size());
  std::vector<bool> parent(s.queues.size(), false);
  for (std::size_t q = 0; q < s.queues.size(); ++q) {
    const pcpp_queue& queue = s.queues[q];
    if (queue.parent != pcpp_root && queue.parent >= q)
      return make_error(errc::invalid_argument,
                        "queue '{}': parent index {} is not the index of an earlier queue",
                        queue.name, queue.parent);
    if (queue.parent != pcpp_root) parent[queue.parent] = true;
    HETSCHED_TRY(check_vector(queue.guaranteed, k, "guaranteed of queue", queue.name));
    HETSCHED_TRY(check_vector(queue.maximum, k, "maximum of queue", queue.name));
    HETSCHED_TRY(check_vector(queue.pending, k, "pending of queue", queue.name));
  }
  HETSCHED_TRY(check_capacities(s));
  pcpp_vector pending_sum{};
  for (std::size_t q = 0; q < s.queues.size(); ++q) {
    for (std::size_t i = 0; i < k; ++i) {
      if (parent[q] && s.queues[q].pending[i] != 0)
        return make_error(errc::invalid_argument,
                          "queue '{}': pending is given on leaves only (parents sum children)",
                          s.queues[q].name);
      pending_sum[i] += s.queues[q].pending[i];
      if (pending_sum[i] > max_amount)
        return make_error(errc::out_of_range, "queue '{}': total pending exceeds 2^40",
                          s.queues[q].name);
    }
  }
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    const pcpp_job& job = s.jobs[j];
    if (job.queue >= s.queues.size())
      return make_error(errc::invalid_argument, "job {}: queue index {} does not exist", job.id,
                        job.queue);
    if (parent[job.queue])
      return make_error(errc::invalid_argument, "job {}: queue '{}' is not a leaf", job.id,
                        s.queues[job.queue].name);
  }
  if (s.containers.size() >= detail::pcpp::no_container)
    return make_error(errc::out_of_range, "snapshot: {} containers exceed 2^32 - 1",
                      s.containers.size());
  HETSCHED_TRY(check_ratio(p.max_ignored_over_capacity, "max_ignored_over_capacity"));
  HETSCHED_TRY(check_ratio(p.natural_termination_factor, "natural_termination_factor"));
  HETSCHED_TRY(check_ratio(p.total_preemption_per_round, "total_preemption_per_round"));
  if (p.min_runtime < 0)
    return make_error(errc::invalid_argument, "parameter min_runtime: {} is negative",
                      p.min_runtime);
  return {};
}

// One pass over the containers (the bulk of the input): validates them, adds them to the used
// and in-flight amounts of their leaves and links them into per-job lists. A gang with any
// in-flight container is in flight as a whole.
result<void> account_containers(const pcpp_snapshot& s, std::vector<node>& nodes,
                                detail::pcpp::job_lists& lists) {
  const std::size_t k = s.dimensions;
  const std::size_t nj = s.jobs.size();
  lists.head.assign(nj, detail::pcpp::no_container);
  lists.next.resize(s.containers.size());
  std::vector<bool> gang_in_flight(nj, false);
  pcpp_vector used_sum{};
  for (std::size_t ci = 0; ci < s.containers.size(); ++ci) {
    const pcpp_container& c = s.containers[ci];
    if (c.job >= nj)
      return make_error(errc::invalid_argument, "container {}: job index {} does not exist", c.id,
                        c.job);
    bool in_range = true;
    for (std::size_t i = 0; i < pcpp_max_dimensions; ++i)
      in_range = in_range && c.size[i] >= 0 && c.size[i] <= max_amount && (i < k || c.size[i] == 0);
    if (!in_range) {
      HETSCHED_TRY(check_vector(c.size, k, "size of container", std::to_string(c.id)));
    }
    node& n = nodes[s.jobs[c.job].queue];
    for (std::size_t i = 0; i < k; ++i) {
      used_sum[i] += c.size[i];
      n.used[i] += c.size[i];
      if (c.in_flight) n.in_flight[i] += c.size[i];
    }
    for (std::size_t i = 0; i < k; ++i)
      if (used_sum[i] > max_amount)
        return make_error(errc::out_of_range, "container {}: total used exceeds 2^40", c.id);
    if (c.in_flight && s.jobs[c.job].gang) gang_in_flight[c.job] = true;
    lists.next[ci] = lists.head[c.job];
    lists.head[c.job] = static_cast<std::uint32_t>(ci);
  }
  for (std::size_t j = 0; j < nj; ++j) {
    if (!gang_in_flight[j]) continue;
    node& n = nodes[s.jobs[j].queue];
    for (std::uint32_t ci = lists.head[j]; ci != detail::pcpp::no_container; ci = lists.next[ci]) {
      const pcpp_container& c = s.containers[ci];
      if (c.in_flight) continue;
      for (std::size_t i = 0; i < k; ++i) n.in_flight[i] += c.size[i];
    }
  }
  return {};
}

// The fixpoint water-filling of one group of siblings (computeFixpointAllocation).
class water_filler {
 public:
  water_filler(const calculator& rc, std::vector<node>& nodes, rounding_mode mode)
      : rc_(rc), nodes_(nodes), mode_(mode) {}

  void fill(const std::vector<std::size_t>& group, pcpp_vector& unassigned, bool ignore_guarantee) {
    const std::size_t k = rc_.k;
    need_.clear();
    for (const std::size_t q : group) {
      node& n = nodes_[q];
      if (rc_.compare(n.used, n.guaranteed) > 0) {
        for (std::size_t i = 0; i < k; ++i)
          n.ideal[i] = std::min(n.guaranteed[i], n.used[i]) + n.untouchable[i];
      } else {
        n.ideal = n.used;
      }
      for (std::size_t i = 0; i < k; ++i) unassigned[i] -= n.ideal[i];
      if (rc_.compare(n.ideal, add(n.used, n.pending)) < 0) need_.push_back(q);
    }
    const pcpp_vector zero{};
    std::vector<std::size_t> underserved;
    while (!need_.empty() && rc_.compare(unassigned, zero) > 0) {
      // resetCapacity over every queue still in need.
      pcpp_vector active{};
      for (const std::size_t q : need_)
        for (std::size_t i = 0; i < k; ++i) active[i] += nodes_[q].guaranteed[i];
      const i128 count = static_cast<i128>(need_.size());
      pop_most_underserved(underserved);
      const pcpp_vector round_unassigned = unassigned;
      for (const std::size_t q : underserved) {
        if (!any_positive(unassigned)) break;
        node& n = nodes_[q];
        pcpp_vector avail{};
        for (std::size_t i = 0; i < k; ++i) {
          if (ignore_guarantee) {
            avail[i] = detail::pcpp::scale(round_unassigned[i], 1, count, mode_);
          } else if (active[i] != 0) {
            avail[i] = detail::pcpp::scale(round_unassigned[i], n.guaranteed[i], active[i], mode_);
          }
          avail[i] = std::min(avail[i], unassigned[i]);
        }
        const pcpp_vector accepted = offer(n, avail);
        if (rc_.compare(accepted, zero) > 0) need_.push_back(q);
        for (std::size_t i = 0; i < k; ++i)
          unassigned[i] = std::max<std::int64_t>(unassigned[i] - accepted[i], 0);
      }
    }
  }

 private:
  [[nodiscard]] pcpp_vector add(const pcpp_vector& a, const pcpp_vector& b) const {
    pcpp_vector r{};
    for (std::size_t i = 0; i < rc_.k; ++i) r[i] = a[i] + b[i];
    return r;
  }
  [[nodiscard]] bool any_positive(const pcpp_vector& a) const {
    for (std::size_t i = 0; i < rc_.k; ++i)
      if (a[i] > 0) return true;
    return false;
  }

  // idealAssigned / guaranteed; queues without a guarantee compare as +infinity (all equal).
  [[nodiscard]] fraction pct_of_guaranteed(const node& n) const {
    if (!n.has_guarantee) return fraction{1, 0};
    return rc_.dominant_ratio(n.ideal, n.guaranteed);
  }
  [[nodiscard]] static int compare_pct(const fraction& a, const fraction& b) {
    if (a.den == 0 || b.den == 0) return a.den == 0 ? (b.den == 0 ? 0 : 1) : -1;
    return detail::pcpp::compare_ratios(a, b);
  }

  // Moves the most underserved queues (equal pct, snapshot order) from need_ to `out`.
  void pop_most_underserved(std::vector<std::size_t>& out) {
    out.clear();
    pct_.resize(need_.size());
    for (std::size_t i = 0; i < need_.size(); ++i) pct_[i] = pct_of_guaranteed(nodes_[need_[i]]);
    std::size_t best = 0;
    for (std::size_t i = 1; i < need_.size(); ++i) {
      const int c = compare_pct(pct_[i], pct_[best]);
      if (c < 0 || (c == 0 && need_[i] < need_[best])) best = i;
    }
    const fraction best_pct = pct_[best];
    std::size_t w = 0;
    for (std::size_t i = 0; i < need_.size(); ++i) {
      if (compare_pct(pct_[i], best_pct) == 0) {
        out.push_back(need_[i]);
      } else {
        need_[w++] = need_[i];
      }
    }
    need_.resize(w);
    std::sort(out.begin(), out.end());
  }

  // TempQueuePerPartition.offer: returns the accepted amount and adds it to the ideal.
  pcpp_vector offer(node& n, const pcpp_vector& avail) const {
    const std::size_t k = rc_.k;
    pcpp_vector max_delta{};
    pcpp_vector demand{};
    for (std::size_t i = 0; i < k; ++i) {
      max_delta[i] = std::max<std::int64_t>(n.maximum[i] - n.ideal[i], 0);
      demand[i] = n.used[i] + n.pending[i] - n.ideal[i];
    }
    const pcpp_vector inner = rc_.min(avail, demand);
    pcpp_vector accepted{};
    for (std::size_t i = 0; i < k; ++i) accepted[i] = std::min(max_delta[i], inner[i]);
    if (n.leaf) {
      const pcpp_vector top = rc_.max(n.used, n.guaranteed);
      pcpp_vector room{};
      for (std::size_t i = 0; i < k; ++i) room[i] = top[i] - n.ideal[i];
      const pcpp_vector zero{};
      const pcpp_vector bounded = rc_.max(room, zero);
      accepted = rc_.min(accepted, bounded);
    }
    for (std::size_t i = 0; i < k; ++i) n.ideal[i] += accepted[i];
    return accepted;
  }

  const calculator& rc_;
  std::vector<node>& nodes_;
  rounding_mode mode_;
  std::vector<std::size_t> need_;
  std::vector<fraction> pct_;
};

}  // namespace

result<pcpp_plan> plan_proportional_preemption(const pcpp_snapshot& snapshot,
                                               const pcpp_params& params) {
  HETSCHED_TRY(validate(snapshot, params));
  const std::size_t k = snapshot.dimensions;
  const std::size_t nq = snapshot.queues.size();
  const calculator rc{k, snapshot.cluster};
  const rounding_mode mode =
      params.rounding == pcpp_rounding::up ? rounding_mode::up : rounding_mode::nearest;

  // Build the tree: used from containers, parents sum their children.
  std::vector<node> nodes(nq);
  std::vector<std::size_t> top;
  for (std::size_t q = 0; q < nq; ++q) {
    const pcpp_queue& src = snapshot.queues[q];
    node& n = nodes[q];
    n.guaranteed = src.guaranteed;
    n.maximum = src.maximum;
    n.pending = src.pending;
    n.has_guarantee = rc.compare(src.guaranteed, pcpp_vector{}) > 0;
    if (src.parent == pcpp_root) {
      top.push_back(q);
      n.disabled = src.preemption == pcpp_preemption::inherit
                       ? snapshot.root_preemption == pcpp_preemption::disabled
                       : src.preemption == pcpp_preemption::disabled;
    } else {
      nodes[src.parent].children.push_back(q);
      n.disabled = src.preemption == pcpp_preemption::inherit
                       ? nodes[src.parent].disabled
                       : src.preemption == pcpp_preemption::disabled;
    }
  }
  detail::pcpp::job_lists lists;
  HETSCHED_TRY(account_containers(snapshot, nodes, lists));
  for (std::size_t q = nq; q-- > 0;) {
    node& n = nodes[q];
    n.leaf = n.children.empty();
    const std::size_t p = snapshot.queues[q].parent;
    if (p != pcpp_root) {
      for (std::size_t i = 0; i < k; ++i) {
        nodes[p].used[i] += n.used[i];
        nodes[p].pending[i] += n.pending[i];
        nodes[p].in_flight[i] += n.in_flight[i];
      }
    }
  }

  // updatePreemptableExtras, bottom-up.
  const pcpp_vector zero{};
  for (std::size_t q = nq; q-- > 0;) {
    node& n = nodes[q];
    pcpp_vector extra{};
    for (std::size_t i = 0; i < k; ++i) extra[i] = n.used[i] - n.guaranteed[i];
    if (rc.compare(extra, zero) < 0) extra = zero;
    if (n.leaf) {
      (n.disabled ? n.untouchable : n.preemptable) = extra;
      continue;
    }
    pcpp_vector children{};
    for (const std::size_t c : n.children)
      for (std::size_t i = 0; i < k; ++i) children[i] += nodes[c].preemptable[i];
    if (rc.compare(children, extra) < 0)
      for (std::size_t i = 0; i < k; ++i) n.untouchable[i] = extra[i] - children[i];
    n.preemptable = rc.min(children, extra);
  }

  pcpp_plan plan;
  plan.root_ideal = snapshot.cluster;
  for (std::size_t i = 0; i < k; ++i)
    plan.preemption_allowed[i] =
        detail::pcpp::scale(snapshot.cluster[i], params.total_preemption_per_round.num,
                            params.total_preemption_per_round.den, rounding_mode::truncate);

  // Ideal assignment, top-down (recursivelyComputeIdealAssignment): parents precede children.
  water_filler filler(rc, nodes, mode);
  std::vector<std::size_t> with_guarantee;
  std::vector<std::size_t> without_guarantee;
  const auto distribute = [&](const std::vector<std::size_t>& group, const pcpp_vector& total) {
    with_guarantee.clear();
    without_guarantee.clear();
    for (const std::size_t q : group)
      (nodes[q].has_guarantee ? with_guarantee : without_guarantee).push_back(q);
    pcpp_vector unassigned = total;
    filler.fill(with_guarantee, unassigned, false);
    if (!without_guarantee.empty() && rc.compare(unassigned, zero) > 0)
      filler.fill(without_guarantee, unassigned, true);
    // Per-round cap, scaled per sibling group as YARN does.
    pcpp_vector needed{};
    for (const std::size_t q : group) {
      const node& n = nodes[q];
      if (rc.compare(n.used, n.ideal) > 0)
        for (std::size_t i = 0; i < k; ++i) needed[i] += n.used[i] - n.ideal[i];
    }
    fraction factor{1, 1};
    if (rc.compare(needed, plan.preemption_allowed) > 0)
      factor = rc.dominant_ratio(plan.preemption_allowed, needed);
    for (const std::size_t q : group) {  // assignPreemption
      node& n = nodes[q];
      pcpp_vector kept_used{};
      pcpp_vector total_demand{};
      for (std::size_t i = 0; i < k; ++i) {
        kept_used[i] = n.used[i] - n.in_flight[i];
        total_demand[i] = n.used[i] + n.pending[i];
      }
      const pcpp_vector minimum = rc.max(rc.min(total_demand, n.guaranteed), n.ideal);
      n.to_be_preempted = zero;
      if (rc.compare(kept_used, minimum) > 0)
        for (std::size_t i = 0; i < k; ++i)
          n.to_be_preempted[i] = detail::pcpp::scale(kept_used[i] - minimum[i], factor.num,
                                                     factor.den, rounding_mode::truncate);
    }
  };
  distribute(top, snapshot.cluster);
  for (std::size_t q = 0; q < nq; ++q)
    if (!nodes[q].children.empty()) distribute(nodes[q].children, nodes[q].ideal);

  // Dead zone and natural termination (calculateResToObtainByPartitionForLeafQueues).
  for (std::size_t q = 0; q < nq; ++q) {
    node& n = nodes[q];
    if (!n.leaf || n.disabled) continue;
    const pcpp_ratio dz = params.max_ignored_over_capacity;
    pcpp_vector threshold{};
    for (std::size_t i = 0; i < k; ++i)
      threshold[i] = detail::pcpp::scale(n.guaranteed[i], i128{dz.num} + dz.den, dz.den,
                                         rounding_mode::truncate);
    if (rc.compare(n.used, threshold) <= 0) continue;
    n.to_obtain = n.to_be_preempted;
    if (rc.compare(n.to_obtain, zero) > 0) {
      const pcpp_ratio ntf = params.natural_termination_factor;
      for (std::size_t i = 0; i < k; ++i)
        n.to_obtain[i] = detail::pcpp::scale(n.to_be_preempted[i], ntf.num, ntf.den, mode);
    }
  }

  detail::pcpp::select_victims(snapshot, params, rc, lists, nodes, plan);

  plan.queues.resize(nq);
  for (std::size_t q = 0; q < nq; ++q) {
    const node& n = nodes[q];
    pcpp_queue_plan& out = plan.queues[q];
    out.used = n.used;
    out.pending = n.pending;
    out.in_flight = n.in_flight;
    out.ideal = n.ideal;
    out.to_be_preempted = n.to_be_preempted;
    out.to_obtain = n.to_obtain;
    out.selected = n.selected;
    out.preemption_disabled = n.disabled;
    out.leaf = n.leaf;
  }
  return plan;
}

}  // namespace hetsched
