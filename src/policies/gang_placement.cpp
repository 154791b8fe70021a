// SPDX-License-Identifier: MIT
// Gang placement across nodes (gang_placement.hpp).
//
// Groups of the cluster tree are stored children before parents (the root, index 0, last in
// that order), so every aggregate is one pass over the groups. A node's leaf group is
// cluster_node::group. The consolidate fill walks the chosen group top-down with an explicit
// stack of (group, tasks) pairs.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/gang_placement.hpp>

namespace hetsched {

gang_placer gang_placer::make(cluster_topology cluster, const pair_terms& terms) {
  gang_placer p;
  p.cluster_ = std::move(cluster);
  for (const node_topology& t : p.cluster_.templates()) {
    p.scores_.push_back(pair_score_matrix::from_views(t.views(), terms));
  }
  const auto groups = p.cluster_.groups();
  p.height_.assign(groups.size(), 0);
  for (std::size_t g = 1; g < groups.size(); ++g) {
    for (const std::uint32_t c : groups[g].children) {
      p.height_[g] = std::max(p.height_[g], p.height_[c] + 1);
    }
  }
  for (const std::uint32_t c : groups[0].children) {
    p.height_[0] = std::max(p.height_[0], p.height_[c] + 1);
  }
  return p;
}

result<gang_placer::tally> gang_placer::count(std::span<const std::vector<std::uint32_t>> free_gpus,
                                              const gang_request& request) const {
  const auto nodes = cluster_.nodes();
  const auto groups = cluster_.groups();
  if (free_gpus.size() != nodes.size()) {
    return make_error(errc::invalid_argument, "free_gpus has {} lists, the cluster has {} nodes",
                      free_gpus.size(), nodes.size());
  }
  if (request.tasks == 0 || request.gpus_per_task == 0) {
    return make_error(errc::invalid_argument, "gang of {} tasks of {} GPUs is empty", request.tasks,
                      request.gpus_per_task);
  }
  tally t;
  if (request.max_level == affinity_level::cluster) {
    t.limit_height = height_[0];
  } else {
    bool found = false;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const bool match =
          groups[g].level == request.max_level &&
          (request.max_level != affinity_level::network_tier || groups[g].tier == request.max_tier);
      if (match && (!found || height_[g] < t.limit_height)) {
        t.limit_height = height_[g];
        found = true;
      }
    }
    if (!found) {
      return make_error(errc::invalid_argument, "cluster '{}' has no level {}{}", cluster_.name(),
                        to_string(request.max_level),
                        request.max_level == affinity_level::network_tier
                            ? fmt::format(" of tier {}", request.max_tier)
                            : std::string());
    }
  }
  t.capacity.assign(groups.size(), 0);
  t.free.assign(groups.size(), 0);
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const auto& list = free_gpus[n];
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i] >= nodes[n].gpu_count || (i > 0 && list[i] <= list[i - 1])) {
        return make_error(errc::invalid_argument,
                          "free GPUs of node '{}' are not strictly ascending GPUs below {} at "
                          "position {} ({})",
                          nodes[n].name, nodes[n].gpu_count, i, list[i]);
      }
    }
    const std::uint32_t g = nodes[n].group;
    t.free[g] = list.size();
    t.capacity[g] = list.size() / request.gpus_per_task;
  }
  for (std::size_t g = 1; g < groups.size(); ++g) {
    if (groups[g].level == affinity_level::node) continue;
    for (const std::uint32_t c : groups[g].children) {
      t.capacity[g] += t.capacity[c];
      t.free[g] += t.free[c];
    }
  }
  for (const std::uint32_t c : groups[0].children) {
    t.capacity[0] += t.capacity[c];
    t.free[0] += t.free[c];
  }
  return t;
}

result<gang_placement> gang_placer::place(std::span<const std::vector<std::uint32_t>> free_gpus,
                                          const gang_request& request) const {
  auto counted = count(free_gpus, request);
  if (!counted) return std::move(counted).error();
  const tally& t = *counted;
  const auto groups = cluster_.groups();
  const auto nodes = cluster_.nodes();
  const std::uint64_t tasks = request.tasks;
  const std::uint64_t per = request.gpus_per_task;
  gang_placement out;
  if (t.free[0] < tasks * per) {
    out.deferred = defer_reason::insufficient_capacity;
    return out;
  }
  if (t.capacity[0] < tasks) {
    out.deferred = defer_reason::fragmented;
    return out;
  }
  const bool spread = request.locality == locality_sensitivity::spread;
  // The group: consolidate takes the lowest feasible height, spread the limit's height.
  constexpr auto none = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t best = none;
  for (std::uint32_t g = 0; g < groups.size(); ++g) {
    if (t.capacity[g] < tasks || height_[g] > t.limit_height) continue;
    if (spread && height_[g] != t.limit_height) continue;
    if (best == none || height_[g] < height_[best] ||
        (height_[g] == height_[best] && t.free[g] < t.free[best])) {
      best = g;
    }
  }
  if (best == none) {
    out.deferred = defer_reason::topology_unsatisfiable;
    return out;
  }
  // Tasks per node.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> share;  // (node index, tasks)
  if (spread) {
    const auto& grp = groups[best];
    std::vector<std::uint32_t> order;
    for (std::uint32_t n = grp.first_node.value(); n < grp.first_node.value() + grp.node_count;
         ++n) {
      if (t.capacity[nodes[n].group] > 0) order.push_back(n);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return free_gpus[a].size() < free_gpus[b].size();
    });
    std::uint64_t left = tasks;
    for (const std::uint32_t n : order) {
      if (left == 0) break;
      const std::uint64_t take = std::min(left, t.capacity[nodes[n].group]);
      share.emplace_back(n, take);
      left -= take;
    }
  } else {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> stack{{best, tasks}};
    while (!stack.empty()) {
      auto [g, want] = stack.back();
      stack.pop_back();
      if (groups[g].level == affinity_level::node) {
        share.emplace_back(groups[g].first_node.value(), want);
        continue;
      }
      const auto& children = groups[g].children;
      std::vector<bool> used(children.size(), false);
      while (want > 0) {
        // A child that holds the rest: best fit. Else the child holding the most.
        std::size_t fit = children.size();
        std::size_t most = children.size();
        for (std::size_t i = 0; i < children.size(); ++i) {
          const std::uint32_t c = children[i];
          if (used[i] || t.capacity[c] == 0) continue;
          if (t.capacity[c] >= want &&
              (fit == children.size() || t.free[c] < t.free[children[fit]])) {
            fit = i;
          }
          if (most == children.size() || t.capacity[c] > t.capacity[children[most]] ||
              (t.capacity[c] == t.capacity[children[most]] && t.free[c] < t.free[children[most]])) {
            most = i;
          }
        }
        const std::size_t pick = fit != children.size() ? fit : most;
        const std::uint64_t take = std::min(want, t.capacity[children[pick]]);
        used[pick] = true;
        stack.emplace_back(children[pick], take);
        want -= take;
      }
    }
    std::sort(share.begin(), share.end());
  }
  if (spread) std::sort(share.begin(), share.end());
  // GPUs inside each node.
  placement_preferences prefs;
  prefs.locality = request.locality;
  for (const auto& [n, count_here] : share) {
    const cluster_node& node = nodes[n];
    const pair_score_matrix& scores = scores_[node.template_index];
    std::vector<std::uint32_t> left = free_gpus[n];
    for (std::uint64_t k = 0; k < count_here; ++k) {
      gang_task task;
      task.node = node_id(n);
      if (left.size() <= max_packer_gpus && scores.size() == node.gpu_count) {
        auto answer = allocate_with(scores, left, {}, request.gpus_per_task, prefs);
        if (!answer) return std::move(answer).error();
        if (answer->status != packer_status::allocated) {
          return make_error(errc::internal, "the packer refused a task on node '{}'", node.name);
        }
        task.gpus = std::move(answer->gpus);
      } else {
        task.gpus.assign(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(per));
      }
      std::vector<std::uint32_t> rest;
      rest.reserve(left.size());
      std::set_difference(left.begin(), left.end(), task.gpus.begin(), task.gpus.end(),
                          std::back_inserter(rest));
      left = std::move(rest);
      for (const std::uint32_t g : task.gpus) {
        task.devices.emplace_back(node.first_gpu.value() + g);
      }
      out.tasks.push_back(std::move(task));
    }
  }
  // The lowest common group of the nodes used.
  out.nodes_used = static_cast<std::uint32_t>(share.size());
  std::uint32_t common = nodes[share.front().first].group;
  for (const auto& [n, count_here] : share) {
    const auto& grp = cluster_.common_group(groups[common].first_node, node_id(n));
    common = static_cast<std::uint32_t>(&grp - groups.data());
  }
  out.group = common;
  out.level = groups[common].level;
  return out;
}

namespace {

/// Returns the highest set score of any `k` of the GPUs of `scores` (depth-first over the
/// combinations with incremental sums; k <= scores.size() <= max_packer_gpus).
std::int64_t best_block_score(const pair_score_matrix& scores, std::size_t k) {
  const std::size_t n = scores.size();
  std::vector<std::uint32_t> members;
  std::int64_t best = 0;
  const auto walk = [&](const auto& self, std::size_t next, std::int64_t sum) -> void {
    if (members.size() == k) {
      best = std::max(best, sum);
      return;
    }
    for (std::size_t i = next; i + (k - members.size()) <= n; ++i) {
      std::int64_t add = 0;
      for (const std::uint32_t m : members) add += scores.score(m, i);
      members.push_back(static_cast<std::uint32_t>(i));
      self(self, i + 1, sum + add);
      members.pop_back();
    }
  };
  walk(walk, 0, 0);
  return best;
}

}  // namespace

result<std::vector<std::int64_t>> gang_placer::node_scores(
    std::span<const std::vector<std::uint32_t>> free_gpus, const gang_request& request) const {
  auto counted = count(free_gpus, request);
  if (!counted) return std::move(counted).error();
  const tally& t = *counted;
  const auto groups = cluster_.groups();
  const auto nodes = cluster_.nodes();
  std::vector<std::int64_t> out(nodes.size(), 0);
  const std::int64_t levels = std::int64_t{height_[0]} + 1;
  const std::size_t k = request.gpus_per_task;
  // Per template: the best set score of k GPUs (-1 = not computed yet); per (template, free
  // list): the permille quality of the packer's pick, so nodes with equal free GPUs share one
  // packer call.
  std::vector<std::int64_t> best_block(scores_.size(), -1);
  std::map<std::pair<std::uint32_t, std::vector<std::uint32_t>>, std::int64_t> quality;
  const auto quality_permille =
      [&](const cluster_node& node,
          const std::vector<std::uint32_t>& free) -> result<std::int64_t> {
    const pair_score_matrix& scores = scores_[node.template_index];
    if (k < 2 || free.size() > max_packer_gpus || scores.size() != node.gpu_count) return 1000;
    const auto key = std::make_pair(node.template_index, free);
    if (const auto it = quality.find(key); it != quality.end()) return it->second;
    std::int64_t& best = best_block[node.template_index];
    if (best < 0) best = best_block_score(scores, k);
    std::int64_t permille = 1000;
    if (best > 0) {
      auto pick = allocate(scores, free, {}, k, packer_mode::lexmax);
      if (!pick) return std::move(pick).error();
      permille = pick->block_score * 1000 / best;
    }
    quality.emplace(key, permille);
    return permille;
  };
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::uint32_t g = nodes[n].group;
    if (t.capacity[g] == 0) continue;
    // The lowest group holding the node that can hold the gang, within the limit.
    while (t.capacity[g] < request.tasks && g != 0) g = groups[g].parent;
    if (t.capacity[g] < request.tasks || height_[g] > t.limit_height) continue;
    const std::int64_t gpus = nodes[n].gpu_count;
    const auto used_after = gpus - static_cast<std::int64_t>(free_gpus[n].size()) +
                            static_cast<std::int64_t>(request.gpus_per_task);
    if (request.locality == locality_sensitivity::spread) {
      out[n] = 100 * used_after / gpus;
      continue;
    }
    // consolidate: floor(100 * (T + (q + f) / 2) / levels) with T = H - h, q = permille / 1000,
    // f = used_after / gpus, in integers.
    auto q = quality_permille(nodes[n], free_gpus[n]);
    if (!q) return std::move(q).error();
    const std::int64_t tier = levels - 1 - std::int64_t{height_[g]};
    out[n] = 100 * (2000 * tier * gpus + *q * gpus + 1000 * used_after) / (levels * 2000 * gpus);
  }
  return out;
}

}  // namespace hetsched
