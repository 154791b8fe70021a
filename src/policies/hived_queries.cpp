// SPDX-License-Identifier: MIT
// hived::scheduler health events and read-only queries (groups, VC cells, free lists, nodes).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_state.hpp"

namespace hetsched::hived {

void scheduler::set_node_bad(const std::string& node) {
  if (auto it = s_->node_index.find(node); it != s_->node_index.end())
    s_->set_node_health(it->second, false);
}

void scheduler::set_node_healthy(const std::string& node) {
  if (auto it = s_->node_index.find(node); it != s_->node_index.end())
    s_->set_node_health(it->second, true);
}

void scheduler::mark_all_nodes_healthy() {
  for (const auto& ch : s_->chains)
    for (int top : ch.full[uz(ch.top)])
      for (int n : s_->p[uz(top)].nodes) s_->set_node_health(n, true);
}

std::optional<group_status> scheduler::group(const std::string& name) const {
  auto it = s_->groups.find(name);
  if (it == s_->groups.end()) return std::nullopt;
  const auto& g = *it->second;
  group_status st;
  st.state = g.state;
  st.virtual_placement_dropped = !g.virt.has_value();
  for (const auto& [num, pods] : g.physical)
    for (const auto& leaves : pods)
      for (int pleaf : leaves) {
        if (pleaf < 0) continue;
        const auto& pc = s_->p[uz(pleaf)];
        st.physical_placement[s_->node_names[uz(pc.nodes[0])]].push_back(pc.leaf_index);
      }
  for (auto& [node, leaves] : st.physical_placement) std::sort(leaves.begin(), leaves.end());
  return st;
}

std::vector<vc_cell_status> scheduler::vc_cells(const std::string& vc, const std::string& chain,
                                                int level) const {
  std::vector<vc_cell_status> out;
  auto vi = s_->vc_index.find(vc);
  auto ci = s_->chain_index.find(chain);
  if (vi == s_->vc_index.end() || ci == s_->chain_index.end() || level < 1) return out;
  const auto& chains = s_->vcs[uz(vi->second)].chains;
  auto it = chains.find(ci->second);
  if (it == chains.end() || uz(level) >= it->second.preassigned.size()) return out;
  for (int c : it->second.preassigned[uz(level)]) {
    const auto& vc_cell = s_->v[uz(c)];
    vc_cell_status st;
    st.address = vc_cell.address;
    st.priority = vc_cell.priority;
    st.healthy = s_->cell_healthy_v(c);
    if (vc_cell.pcell >= 0) st.bound_to = s_->p[uz(vc_cell.pcell)].address;
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<vc_cell_status> scheduler::vc_cells_all(const std::string& vc) const {
  std::vector<vc_cell_status> out;
  auto vi = s_->vc_index.find(vc);
  if (vi == s_->vc_index.end()) return out;
  for (const auto& [chain, vch] : s_->vcs[uz(vi->second)].chains)
    for (std::size_t l = 1; l < vch.preassigned.size(); ++l)
      for (auto& st : vc_cells(vc, s_->chains[uz(chain)].name, static_cast<int>(l)))
        out.push_back(std::move(st));
  return out;
}

std::vector<std::string> scheduler::free_list(const std::string& chain, int level) const {
  std::vector<std::string> out;
  auto ci = s_->chain_index.find(chain);
  if (ci == s_->chain_index.end() || level < 1) return out;
  const auto& ch = s_->chains[uz(ci->second)];
  if (uz(level) >= ch.free.size()) return out;
  for (int c : ch.free[uz(level)]) out.push_back(s_->p[uz(c)].address);
  return out;
}

std::vector<std::string> scheduler::nodes() const { return s_->node_names; }

}  // namespace hetsched::hived
