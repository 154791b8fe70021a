// SPDX-License-Identifier: MIT
// capacity_tree: validation, the static quota algebra (subtree, local, potential available),
// the dynamic algebra over a usage table (available, usage propagation). The DRS is in
// capacity_drs.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched {
namespace {

result<void> check_amount(std::string_view node, const quota_spec& q, std::string_view what,
                          std::int64_t v) {
  if (v < 0)
    return make_error(errc::invalid_argument, "node '{}': {} of {}@{} is negative ({})", node, what,
                      q.resource, q.flavor, v);
  if (v > max_quota_amount)
    return make_error(errc::out_of_range, "node '{}': {} of {}@{} is {} (above 2^40)", node, what,
                      q.resource, q.flavor, v);
  return ok();
}

result<void> check_user_limit(std::string_view node, const yarn_user_limit_spec& u) {
  if (u.minimum_user_limit_percent < 1 || u.minimum_user_limit_percent > 100)
    return make_error(errc::invalid_argument,
                      "queue '{}': minimum-user-limit-percent {} is outside 1..100", node,
                      u.minimum_user_limit_percent);
  if (!std::isfinite(u.user_limit_factor) ||
      (u.user_limit_factor <= 0 && u.user_limit_factor != -1.0))
    return make_error(errc::invalid_argument, "queue '{}': user-limit-factor {} must be > 0 or -1",
                      node, u.user_limit_factor);
  for (const auto& [user, w] : u.user_weights)
    if (!std::isfinite(w) || w <= 0)
      return make_error(errc::invalid_argument, "queue '{}': weight {} of user {} must be > 0",
                        node, w, user.value());
  return ok();
}

}  // namespace

std::optional<std::size_t> capacity_tree::find_fr(std::string_view flavor,
                                                  std::string_view resource) const {
  const auto it = std::lower_bound(frs_.begin(), frs_.end(), std::pair{flavor, resource},
                                   [](const flavor_resource& a, const auto& key) {
                                     if (a.flavor != key.first) return a.flavor < key.first;
                                     return a.resource < key.second;
                                   });
  if (it == frs_.end() || it->flavor != flavor || it->resource != resource) return std::nullopt;
  return static_cast<std::size_t>(it - frs_.begin());
}

bool capacity_tree::has_flavor(std::string_view flavor) const {
  return std::binary_search(flavors_.begin(), flavors_.end(), flavor, std::less<>{});
}

std::optional<queue_id> capacity_tree::find(std::string_view name) const {
  const auto it = by_node_name_.find(name);
  if (it == by_node_name_.end()) return std::nullopt;
  return it->second;
}

result<capacity_tree> capacity_tree::build(const capacity_tree_spec& spec) {
  capacity_tree t;
  const std::size_t n = spec.nodes.size();
  if (n > (std::size_t{1} << 24))
    return make_error(errc::out_of_range, "{} nodes (at most 2^24)", n);
  std::set<flavor_resource> fr_set;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = spec.nodes[i];
    if (s.name.empty()) return make_error(errc::invalid_argument, "node {} has an empty name", i);
    if (!t.by_node_name_.emplace(s.name, queue_id(static_cast<std::uint32_t>(i))).second)
      return make_error(errc::already_exists, "node '{}' is defined twice", s.name);
    HETSCHED_TRY(make_decimal_weight(s.fair_weight, s.name));
    if (s.kind == capacity_node_kind::cohort &&
        (s.user_limit || s.preemption != queue_preemption{} || s.order != queue_order::priority))
      return make_error(errc::invalid_argument,
                        "cohort '{}': preemption, order and user limits are queue settings",
                        s.name);
    if (s.user_limit) HETSCHED_TRY(check_user_limit(s.name, *s.user_limit));
    std::set<flavor_resource> seen;
    for (const auto& q : s.quotas) {
      if (q.flavor.empty() || q.resource.empty())
        return make_error(errc::invalid_argument, "node '{}': a quota has an empty {}", s.name,
                          q.flavor.empty() ? "flavor" : "resource");
      if (!seen.insert({q.flavor, q.resource}).second)
        return make_error(errc::already_exists, "node '{}': quota {}@{} is given twice", s.name,
                          q.resource, q.flavor);
      HETSCHED_TRY(check_amount(s.name, q, "nominal quota", q.nominal));
      if (q.borrowing_limit) {
        HETSCHED_TRY(check_amount(s.name, q, "borrowing limit", *q.borrowing_limit));
        if (s.parent.empty())
          return make_error(errc::invalid_argument,
                            "node '{}': borrowing limit of {}@{} on a root (nothing to borrow)",
                            s.name, q.resource, q.flavor);
      }
      if (q.lending_limit) {
        HETSCHED_TRY(check_amount(s.name, q, "lending limit", *q.lending_limit));
        if (s.kind == capacity_node_kind::queue && *q.lending_limit > q.nominal)
          return make_error(errc::invalid_argument,
                            "queue '{}': lending limit {} of {}@{} is above its nominal quota {}",
                            s.name, *q.lending_limit, q.resource, q.flavor, q.nominal);
      }
      fr_set.insert({q.flavor, q.resource});
    }
  }
  // Parents, kinds and cycles.
  t.nodes_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = spec.nodes[i];
    auto& nd = t.nodes_[i];
    nd.spec = s;
    auto w = make_decimal_weight(s.fair_weight, s.name);
    if (!w) return std::move(w).error();
    nd.weight = *w;
    nd.zero_weight = w->digits == 0;
    if (s.parent.empty()) {
      t.roots_.push_back(queue_id(static_cast<std::uint32_t>(i)));
      continue;
    }
    const auto p = t.find(s.parent);
    if (!p)
      return make_error(errc::not_found, "node '{}': parent '{}' is not defined", s.name, s.parent);
    if (spec.nodes[p->value()].kind == capacity_node_kind::queue)
      return make_error(errc::invalid_argument,
                        "node '{}': parent '{}' is a queue (only cohorts have children)", s.name,
                        s.parent);
    nd.parent = *p;
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto& nd = t.nodes_[i];
    queue_id cur(static_cast<std::uint32_t>(i));
    while (cur.valid()) {
      nd.path.push_back(cur);
      if (nd.path.size() > n)
        return make_error(errc::invalid_argument, "node '{}' is on a parent cycle",
                          spec.nodes[i].name);
      cur = t.nodes_[cur.value()].parent;
    }
    if (nd.parent.valid())
      t.nodes_[nd.parent.value()].children.push_back(queue_id(static_cast<std::uint32_t>(i)));
  }
  // Queues of each root's tree, in id order.
  for (std::uint32_t i = 0; i < n; ++i)
    if (spec.nodes[i].kind == capacity_node_kind::queue)
      t.nodes_[t.nodes_[i].path.back().value()].tree_queues.push_back(queue_id(i));
  // Flavor-resource tables.
  t.frs_.assign(fr_set.begin(), fr_set.end());
  for (const auto& fr : t.frs_)
    if (t.flavors_.empty() || t.flavors_.back() != fr.flavor) t.flavors_.push_back(fr.flavor);
  {
    std::map<std::string, std::vector<std::uint32_t>> names;
    for (std::uint32_t f = 0; f < t.frs_.size(); ++f) names[t.frs_[f].resource].push_back(f);
    t.by_name_.assign(names.begin(), names.end());
  }
  const std::size_t cells = n * t.frs_.size();
  t.nominal_.assign(cells, 0);
  t.borrowing_.assign(cells, 0);
  t.lending_.assign(cells, 0);
  t.subtree_.assign(cells, 0);
  t.local_.assign(cells, 0);
  t.potential_.assign(cells, 0);
  t.declared_.assign(cells, false);
  t.has_borrowing_.assign(cells, false);
  t.has_lending_.assign(cells, false);
  for (std::size_t i = 0; i < n; ++i) {
    auto& nd = t.nodes_[i];
    const queue_id id(static_cast<std::uint32_t>(i));
    for (const auto& q : nd.spec.quotas) {
      const auto f = *t.find_fr(q.flavor, q.resource);
      const std::size_t c = t.at(id, f);
      t.declared_[c] = true;
      t.nominal_[c] = q.nominal;
      if (q.borrowing_limit) {
        t.has_borrowing_[c] = true;
        t.borrowing_[c] = *q.borrowing_limit;
      }
      if (q.lending_limit) {
        t.has_lending_[c] = true;
        t.lending_[c] = *q.lending_limit;
      }
      const auto fl = static_cast<std::uint32_t>(
          std::lower_bound(t.flavors_.begin(), t.flavors_.end(), q.flavor) - t.flavors_.begin());
      if (std::find(nd.flavor_order.begin(), nd.flavor_order.end(), fl) == nd.flavor_order.end())
        nd.flavor_order.push_back(fl);
    }
  }
  // Subtree and local quotas, deepest nodes first.
  std::vector<std::uint32_t> by_depth(n);
  for (std::uint32_t i = 0; i < n; ++i) by_depth[i] = i;
  std::stable_sort(by_depth.begin(), by_depth.end(), [&](std::uint32_t a, std::uint32_t b) {
    return t.nodes_[a].path.size() > t.nodes_[b].path.size();
  });
  const std::size_t nf = t.frs_.size();
  for (const std::uint32_t i : by_depth) {
    const queue_id id(i);
    for (std::size_t f = 0; f < nf; ++f) {
      const std::size_t c = t.at(id, f);
      std::int64_t sub = t.nominal_[c];
      for (const queue_id ch : t.nodes_[i].children) {
        sub += t.subtree_[t.at(ch, f)] - t.local_[t.at(ch, f)];
        if (sub > max_tree_amount)
          return make_error(errc::out_of_range, "node '{}': subtree quota of {}@{} exceeds 2^42",
                            t.nodes_[i].spec.name, t.frs_[f].resource, t.frs_[f].flavor);
      }
      t.subtree_[c] = sub;
      if (t.has_lending_[c]) {
        if (t.lending_[c] > sub)
          return make_error(errc::invalid_argument,
                            "cohort '{}': lending limit {} of {}@{} is above its subtree quota {}",
                            t.nodes_[i].spec.name, t.lending_[c], t.frs_[f].resource,
                            t.frs_[f].flavor, sub);
        t.local_[c] = std::max<std::int64_t>(0, sub - t.lending_[c]);
      }
    }
  }
  // Potential available, roots first.
  for (auto it = by_depth.rbegin(); it != by_depth.rend(); ++it) {
    const queue_id id(*it);
    const queue_id p = t.nodes_[*it].parent;
    for (std::size_t f = 0; f < nf; ++f) {
      const std::size_t c = t.at(id, f);
      if (!p.valid()) {
        t.potential_[c] = t.subtree_[c];
        continue;
      }
      std::int64_t v = t.local_[c] + t.potential_[t.at(p, f)];
      if (t.has_borrowing_[c]) v = std::min(v, t.subtree_[c] + t.borrowing_[c]);
      t.potential_[c] = v;
    }
  }
  return t;
}

std::int64_t quota_available(const capacity_tree& tree, const capacity_usage& usage, queue_id n,
                             std::size_t fr) {
  const auto path = tree.path_to_root(n);
  const std::size_t nf = tree.fr_count();
  // Walk from the root down to n.
  std::int64_t avail = 0;
  for (std::size_t k = path.size(); k-- > 0;) {
    const queue_id x = path[k];
    const std::size_t c = x.value() * nf + fr;
    const std::int64_t sub = tree.subtree_quota(x, fr);
    const std::int64_t u = usage[c];
    if (k + 1 == path.size()) {
      avail = sub - u;
      continue;
    }
    const std::int64_t local = tree.local_quota(x, fr);
    const std::int64_t local_avail = std::max<std::int64_t>(0, local - u);
    std::int64_t parent_avail = avail;
    if (const auto bl = tree.borrowing_limit(x, fr))
      parent_avail =
          std::min(parent_avail, sub - local - std::max<std::int64_t>(0, u - local) + *bl);
    avail = local_avail + parent_avail;
  }
  return avail;
}

void add_usage(const capacity_tree& tree, capacity_usage& usage, queue_id q, std::size_t fr,
               std::int64_t delta) {
  const std::size_t nf = tree.fr_count();
  for (const queue_id x : tree.path_to_root(q)) {
    if (delta == 0) return;
    std::int64_t& u = usage[x.value() * nf + fr];
    const std::int64_t local = tree.local_quota(x, fr);
    const std::int64_t before = std::max<std::int64_t>(0, u - local);
    u += delta;
    delta = std::max<std::int64_t>(0, u - local) - before;
  }
}

}  // namespace hetsched
