// SPDX-License-Identifier: MIT
// The checks add_allocated makes on a bind record before it changes anything: a record may
// commit only cells that are free for it, or the cells its own group holds (the rules are
// documented at scheduler::add_allocated in hived.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

/// "group g (pods a, b; priority 3)", "preempting group g (priority 5)", with "opportunistic" or
/// "lazily preempted" in place of the priority when the group holds no guaranteed placement.
std::string describe(const group& g) {
  std::string kind;
  if (g.priority < 0) {
    kind = "opportunistic";
  } else if (!g.virt) {
    kind = fmt::format("priority {}, lazily preempted", g.priority);
  } else {
    kind = fmt::format("priority {}", g.priority);
  }
  if (g.state == group_state::preempting)
    return fmt::format("preempting group {} ({})", g.name, kind);
  std::vector<std::string> pods;
  for (const auto& [num, slots] : g.allocated)
    for (const auto& slot : slots)
      if (slot.present) pods.push_back(slot.pod);
  std::sort(pods.begin(), pods.end());
  if (pods.empty()) return fmt::format("group {} (no pod committed; {})", g.name, kind);
  return fmt::format("group {} (pods {}; {})", g.name, fmt::join(pods, ", "), kind);
}

/// "GPU 3 of node n0".
std::string gpu_name(const scheduler_state& s, int leaf) {
  const pcell& c = s.p[uz(leaf)];
  return fmt::format("GPU {} of node {}", c.leaf_index, s.node_names[uz(c.nodes[0])]);
}

/// Who holds `leaf` ("group g (...)"), for a leaf that is not free.
std::string holder_of(const scheduler_state& s, int leaf) {
  const pcell& c = s.p[uz(leaf)];
  if (c.using_group != nullptr) return describe(*c.using_group);
  if (c.reserving_group != nullptr) return describe(*c.reserving_group);
  return "a reservation";
}

/// The record's leaves resolved to physical leaf cells (-1: not in the config), by leaf count
/// and pod; a GPU named twice is an error.
result<placement> resolve(const scheduler_state& s, const pod_request& pod,
                          const std::string& group_name, const bind_info& info) {
  int chain = -1;
  if (auto it = s.chain_index.find(info.chain); it != s.chain_index.end()) chain = it->second;
  placement out;
  std::vector<int> all;
  for (const auto& [num, pods] : info.group_placements) {
    auto& list = out[num];
    for (const auto& pp : pods) {
      auto ni = s.node_index.find(pp.node);
      std::vector<int> leaves;
      leaves.reserve(pp.leaf_cells.size());
      for (int index : pp.leaf_cells) {
        int leaf = ni == s.node_index.end() ? -1 : s.find_leaf(chain, ni->second, index);
        leaves.push_back(leaf);
        if (leaf >= 0) all.push_back(leaf);
      }
      list.push_back(std::move(leaves));
    }
  }
  std::sort(all.begin(), all.end());
  if (auto twice = std::adjacent_find(all.begin(), all.end()); twice != all.end())
    return make_error(errc::invalid_argument, "[{}]: bind info of group {} names {} twice",
                      pod.name, group_name, gpu_name(s, *twice));
  return out;
}

/// "n0 [0,1]" for the leaves of one pod (a leaf not in the config: "?").
std::string pod_leaves(const scheduler_state& s, const std::vector<int>& leaves) {
  std::string node = "?";
  std::vector<std::string> gpus;
  for (int leaf : leaves) {
    if (leaf < 0) {
      gpus.emplace_back("?");
      continue;
    }
    node = s.node_names[uz(s.p[uz(leaf)].nodes[0])];
    gpus.push_back(std::to_string(s.p[uz(leaf)].leaf_index));
  }
  return fmt::format("{} [{}]", node, fmt::join(gpus, ","));
}

/// A pod of an existing group: its slot must be free, the record's placement of the pod must be
/// the group's, and a preempting group's victims must be gone.
result<void> check_existing(const scheduler_state& s, const pod_request& pod, const group& g,
                            const placement& resolved, std::size_t index) {
  auto slots = g.allocated.find(pod.leaf_cells);
  auto placed = g.physical.find(pod.leaf_cells);
  if (slots == g.allocated.end() || index >= slots->second.size() || placed == g.physical.end() ||
      index >= placed->second.size())
    return make_error(errc::not_found,
                      "[{}]: Pod placement not found in group {}: the group has no pod {} of {} "
                      "leaf cells",
                      pod.name, g.name, index, pod.leaf_cells);
  const pod_slot& slot = slots->second[index];
  const std::vector<int>& mine = resolved.at(pod.leaf_cells)[index];
  if (slot.present)
    return make_error(errc::already_exists,
                      "[{}]: placement {} of group {} is already committed by pod {}", pod.name,
                      pod_leaves(s, mine), g.name, slot.pod);
  const std::vector<int>& theirs = placed->second[index];
  if (mine != theirs)
    return make_error(errc::invalid_argument,
                      "[{}]: bind info does not match group {}: its pod {} of {} leaf cells is "
                      "on {}, the bind info names {}",
                      pod.name, g.name, index, pod.leaf_cells, pod_leaves(s, theirs),
                      pod_leaves(s, mine));
  if (g.state != group_state::preempting) return ok();
  for (const auto& [num, pods] : g.physical)
    for (const auto& leaves : pods)
      for (int leaf : leaves) {
        if (leaf < 0) continue;
        const pcell& c = s.p[uz(leaf)];
        if (c.state == leaf_state::reserved && c.reserving_group == &g) continue;
        return make_error(errc::failed_precondition,
                          "[{}]: group {} is still preempting: {} is held by {}", pod.name, g.name,
                          gpu_name(s, leaf), holder_of(s, leaf));
      }
  return ok();
}

/// A new group: every leaf must be free, or reserved by a preemption of lower priority (which
/// add_allocated cancels first).
result<std::vector<group*>> check_new(const scheduler_state& s, const pod_request& pod,
                                      const placement& resolved) {
  std::vector<group*> cancel;
  for (const auto& [num, pods] : resolved)
    for (const auto& leaves : pods)
      for (int leaf : leaves) {
        if (leaf < 0) continue;
        const pcell& c = s.p[uz(leaf)];
        if (c.state == leaf_state::free && c.using_group == nullptr && c.reserving_group == nullptr)
          continue;
        group* reserving = c.reserving_group;
        if (c.state == leaf_state::reserved && c.using_group == nullptr && reserving != nullptr &&
            reserving->state == group_state::preempting && reserving->priority < pod.priority) {
          if (std::find(cancel.begin(), cancel.end(), reserving) == cancel.end())
            cancel.push_back(reserving);
          continue;
        }
        return make_error(errc::failed_precondition,
                          "[{}]: {} is held by {}; a bind record may only name free cells "
                          "(schedule the pod again)",
                          pod.name, gpu_name(s, leaf), holder_of(s, leaf));
      }
  return cancel;
}

}  // namespace

result<commit_plan> check_commit(const scheduler_state& s, const pod_request& pod,
                                 const group_request& req, const bind_info& info) {
  if (auto it = s.committed_pods.find(pod.name); it != s.committed_pods.end())
    return make_error(errc::already_exists, "[{}]: pod is already committed (group {})", pod.name,
                      it->second);
  for (const auto& [num, pods] : info.group_placements) {
    auto members = req.pod_nums.find(num);
    if (members == req.pod_nums.end() || uz(members->second) != pods.size())
      return make_error(errc::invalid_argument,
                        "[{}]: bind info of group {} does not match its members", pod.name,
                        req.group);
    for (std::size_t i = 0; i < pods.size(); ++i)
      if (pods[i].leaf_cells.size() != uz(num))
        return make_error(errc::invalid_argument,
                          "[{}]: bind info of group {} lists {} leaf cells for pod {} of {} leaf "
                          "cells",
                          pod.name, req.group, pods[i].leaf_cells.size(), i, num);
  }
  commit_plan plan;
  bool found = false;
  if (auto own = info.group_placements.find(pod.leaf_cells); own != info.group_placements.end()) {
    for (std::size_t i = 0; i < own->second.size() && !found; ++i) {
      if (own->second[i].node == info.node && own->second[i].leaf_cells == info.leaf_cells) {
        plan.index = i;
        found = true;
      }
    }
  }
  if (!found)
    return make_error(errc::not_found,
                      "[{}]: Pod placement not found in group {}: node {}, leaf cells {}", pod.name,
                      req.group, info.node, fmt::join(info.leaf_cells, ","));
  auto resolved = resolve(s, pod, req.group, info);
  if (!resolved) return std::move(resolved).error();
  if (auto it = s.groups.find(req.group); it != s.groups.end()) {
    HETSCHED_TRY(check_existing(s, pod, *it->second, *resolved, plan.index));
    return plan;
  }
  auto cancel = check_new(s, pod, *resolved);
  if (!cancel) return std::move(cancel).error();
  plan.cancel = std::move(*cancel);
  return plan;
}

}  // namespace hetsched::hived
