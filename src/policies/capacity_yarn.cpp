// SPDX-License-Identifier: MIT
// YARN CapacityScheduler parameters over capacity queues: user limits and the conversion of a
// percent-capacity queue hierarchy into nominal quotas and borrowing limits.
#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched {
namespace {

__extension__ typedef unsigned __int128 u128;

bool less_than(std::int64_t an, std::int64_t ad, std::int64_t bn, std::int64_t bd) {
  return static_cast<u128>(an) * static_cast<u128>(bd) <
         static_cast<u128>(bn) * static_cast<u128>(ad);
}

// Tolerance of a sibling sum, in percentage points: capacities are decimal percentages held in
// doubles (33.3 + 33.3 + 33.4 is not exactly 100.0), so only floating-point error is forgiven.
constexpr double sibling_sum_tolerance = 1e-6;

// YARN percentage mode: the capacities of each parent's children sum to exactly 100%. Checked
// in spec order of the parents; the error names the parent and the sum.
result<void> check_sibling_sums(std::span<const yarn_queue_spec> queues,
                                const std::map<std::string, std::size_t, std::less<>>& index) {
  std::vector<double> sum(queues.size(), 0);
  for (const auto& q : queues)
    if (!q.parent.empty()) sum[index.find(q.parent)->second] += q.capacity_percent;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    if (queues[i].leaf || std::abs(sum[i] - 100) <= sibling_sum_tolerance) continue;
    return make_error(errc::invalid_argument,
                      "YARN queue '{}': the capacities of its children sum to {}%, not 100%",
                      queues[i].name, sum[i]);
  }
  return ok();
}

}  // namespace

result<drf_share> yarn_user_limit(std::int64_t capacity, std::int64_t max_capacity,
                                  std::int64_t consumed, std::int64_t minimum_allocation,
                                  double active_user_weights, const yarn_user_limit_spec& spec,
                                  std::int64_t granularity) {
  if (capacity < 0 || max_capacity < 0 || consumed < 0 || minimum_allocation < 0 || granularity < 0)
    return make_error(errc::invalid_argument, "user limit: negative amount");
  if (capacity > max_tree_amount || max_capacity > max_tree_amount || consumed > max_tree_amount ||
      minimum_allocation > max_quota_amount || granularity > max_quota_amount)
    return make_error(errc::out_of_range, "user limit: amount above 2^42");
  if (spec.minimum_user_limit_percent < 1 || spec.minimum_user_limit_percent > 100)
    return make_error(errc::invalid_argument, "minimum-user-limit-percent {} is outside 1..100",
                      spec.minimum_user_limit_percent);
  auto users = make_drf_weight(active_user_weights, "active users");
  if (!users) return std::move(users).error();
  const std::int64_t current = consumed < capacity ? capacity : consumed + minimum_allocation;
  // term1 = current / users = current * den / num; term2 = current * MULP / 100.
  std::int64_t num = current * users->den;
  std::int64_t den = users->num;
  const std::int64_t t2n = current * spec.minimum_user_limit_percent;
  if (less_than(num, den, t2n, 100)) {
    num = t2n;
    den = 100;
  }
  std::int64_t cap_n = max_capacity;
  std::int64_t cap_d = 1;
  if (spec.user_limit_factor != -1.0) {
    auto f = make_drf_weight(spec.user_limit_factor, "user-limit-factor");
    if (!f) return std::move(f).error();
    cap_n = capacity * f->num;
    cap_d = f->den;
  }
  if (less_than(cap_n, cap_d, num, den)) {
    num = cap_n;
    den = cap_d;
  }
  if (granularity > 0) {
    const std::int64_t units = (num + den * granularity - 1) / (den * granularity);
    return drf_share{units * granularity, 1};
  }
  return drf_share{num, den};
}

result<capacity_tree_spec> capacity_spec_from_yarn(std::span<const yarn_queue_spec> queues,
                                                   std::span<const quota_spec> cluster_total) {
  std::map<std::string, std::size_t, std::less<>> index;
  std::size_t roots = 0;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const auto& q = queues[i];
    if (!index.emplace(q.name, i).second)
      return make_error(errc::already_exists, "YARN queue '{}' is defined twice", q.name);
    if (std::isnan(q.capacity_percent) || q.capacity_percent < 0 || q.capacity_percent > 100)
      return make_error(errc::invalid_argument, "YARN queue '{}': capacity {} is outside 0..100",
                        q.name, q.capacity_percent);
    const double mx = q.maximum_capacity_percent == -1 ? 100 : q.maximum_capacity_percent;
    if (std::isnan(mx) || mx < q.capacity_percent || mx > 100)
      return make_error(errc::invalid_argument,
                        "YARN queue '{}': maximum capacity {} is outside capacity..100", q.name,
                        q.maximum_capacity_percent);
    if (q.parent.empty()) ++roots;
  }
  if (roots != 1)
    return make_error(errc::invalid_argument, "a YARN hierarchy needs exactly one root, got {}",
                      roots);
  // Absolute capacities (fractions of the cluster), parents first via memoised recursion.
  std::vector<double> abs_cap(queues.size(), -1);
  std::vector<double> abs_max(queues.size(), -1);
  for (std::size_t i = 0; i < queues.size(); ++i) {
    std::vector<std::size_t> chain;
    std::size_t cur = i;
    while (abs_cap[cur] < 0) {
      chain.push_back(cur);
      if (chain.size() > queues.size())
        return make_error(errc::invalid_argument, "YARN queue '{}' is on a parent cycle",
                          queues[i].name);
      if (queues[cur].parent.empty()) break;
      const auto it = index.find(queues[cur].parent);
      if (it == index.end())
        return make_error(errc::not_found, "YARN queue '{}': parent '{}' is not defined",
                          queues[cur].name, queues[cur].parent);
      if (queues[it->second].leaf)
        return make_error(errc::invalid_argument, "YARN queue '{}': parent '{}' is a leaf",
                          queues[cur].name, queues[cur].parent);
      cur = it->second;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const auto& q = queues[*it];
      const double mx = q.maximum_capacity_percent == -1 ? 100 : q.maximum_capacity_percent;
      if (q.parent.empty()) {
        abs_cap[*it] = 1;
        abs_max[*it] = 1;
      } else {
        const std::size_t p = index.find(q.parent)->second;
        abs_cap[*it] = abs_cap[p] * q.capacity_percent / 100;
        abs_max[*it] = abs_max[p] * mx / 100;
      }
    }
  }
  HETSCHED_TRY(check_sibling_sums(queues, index));
  capacity_tree_spec spec;
  const auto amount = [](double frac, std::int64_t total) {
    return static_cast<std::int64_t>(std::floor(frac * static_cast<double>(total) + 1e-9));
  };
  std::vector<std::int64_t> leaf_sum(cluster_total.size(), 0);
  std::vector<std::vector<std::int64_t>> subtree(queues.size(),
                                                 std::vector<std::int64_t>(cluster_total.size()));
  for (std::size_t i = 0; i < queues.size(); ++i) {
    if (!queues[i].leaf) continue;
    for (std::size_t r = 0; r < cluster_total.size(); ++r) {
      const std::int64_t v = amount(abs_cap[i], cluster_total[r].nominal);
      leaf_sum[r] += v;
      for (std::size_t cur = i;;) {
        subtree[cur][r] += v;
        if (queues[cur].parent.empty()) break;
        cur = index.find(queues[cur].parent)->second;
      }
    }
  }
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const auto& q = queues[i];
    capacity_node_spec n;
    n.name = q.name;
    n.parent = q.parent;
    n.kind = q.leaf ? capacity_node_kind::queue : capacity_node_kind::cohort;
    if (q.leaf) {
      n.order = q.order;
      n.user_limit = q.user_limit;
    }
    for (std::size_t r = 0; r < cluster_total.size(); ++r) {
      quota_spec qs;
      qs.flavor = cluster_total[r].flavor;
      qs.resource = cluster_total[r].resource;
      if (q.leaf) qs.nominal = amount(abs_cap[i], cluster_total[r].nominal);
      if (q.parent.empty()) {
        qs.nominal = std::max<std::int64_t>(0, cluster_total[r].nominal - leaf_sum[r]) +
                     (q.leaf ? qs.nominal : 0);
      } else {
        qs.borrowing_limit =
            std::max<std::int64_t>(0, amount(abs_max[i], cluster_total[r].nominal) - subtree[i][r]);
      }
      n.quotas.push_back(std::move(qs));
    }
    spec.nodes.push_back(std::move(n));
  }
  auto check = capacity_tree::build(spec);
  if (!check) return std::move(check).error();
  return spec;
}

}  // namespace hetsched
