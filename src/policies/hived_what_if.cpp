// SPDX-License-Identifier: MIT
// hived::scheduler::what_if: schedule() run on the allocator state under its undo journal
// (state_journal), then rolled back. schedule() itself may lazily preempt groups, record or
// cancel preemption state, and reorder free lists, cell children (upstream sorts candidate
// slices in place) and cluster views; the rollback undoes all of it, so the answer is by
// construction the one schedule() gives next and the state is left as it was. The cost is that
// of what schedule() wrote, not of the state. what_if_on_copy() runs the same on a clone, for
// const (concurrent) readers; scheduler::trial opens the journal for any sequence of calls.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/assert.hpp>
#include <hetsched/policies/hived.hpp>

#include "hived_state.hpp"

namespace hetsched::hived {

std::unique_ptr<scheduler_state> scheduler_state::clone() const {
  auto copy = std::make_unique<scheduler_state>(*this);
  std::unordered_map<const group*, group*> moved;
  moved.reserve(groups.size());
  auto to = copy->groups.begin();
  for (const auto& [name, g] : groups) {
    moved.emplace(g.get(), to->second.get());
    ++to;
  }
  auto remap = [&](group*& g) {
    if (g == nullptr) return;
    auto it = moved.find(g);
    HETSCHED_ASSERT(it != moved.end(), "hived clone: a cell points at a group that is gone");
    g = it == moved.end() ? nullptr : it->second;
  };
  for (pcell& c : copy->p.raw()) {
    remap(c.using_group);
    remap(c.reserving_group);
  }
  copy->views.clear();
  copy->for_each_view([&](topo_scheduler& t) { copy->views.push_back(&t); });
  return copy;
}

namespace {

/// The leaf of GPU `index` on node `node` in any chain (`chain` first), -1 if none.
int leaf_on_node(const scheduler_state& s, const std::string& chain, const std::string& node,
                 int index) {
  auto ni = s.node_index.find(node);
  if (ni == s.node_index.end()) return -1;
  if (auto ci = s.chain_index.find(chain); ci != s.chain_index.end())
    if (int c = s.find_leaf_in_chain(ci->second, ni->second, index); c >= 0) return c;
  for (std::size_t c = 0; c < s.chains.size(); ++c)
    if (int leaf = s.find_leaf_in_chain(static_cast<int>(c), ni->second, index); leaf >= 0)
      return leaf;
  return -1;
}

/// Rows of every pod of the placement. A pod with a leaf the state does not know (a group rebuilt
/// from bind records) takes its node, GPUs and types from the group's first bind record, as
/// schedule()'s bind record does.
std::vector<what_if_pod> pod_rows(const scheduler_state& s, const placement& phys,
                                  const std::optional<placement>& virt, const bind_info* record) {
  std::vector<what_if_pod> rows;
  for (const auto& [num, pods] : phys) {
    for (std::size_t pi = 0; pi < pods.size(); ++pi) {
      what_if_pod row;
      row.leaf_cells = num;
      row.index = static_cast<int>(pi);
      const bool missing =
          std::any_of(pods[pi].begin(), pods[pi].end(), [](int c) { return c < 0; });
      if (missing) {
        if (record != nullptr) {
          auto it = record->group_placements.find(num);
          if (it != record->group_placements.end() && pi < it->second.size()) {
            const pod_placement& pp = it->second[pi];
            row.node = pp.node;
            row.leaf_indices = pp.leaf_cells;
            row.preassigned_types = pp.preassigned_types;
            for (int index : pp.leaf_cells) {
              int leaf = leaf_on_node(s, record->chain, pp.node, index);
              row.physical_cells.push_back(leaf < 0 ? std::string() : s.p[uz(leaf)].address);
              row.virtual_cells.emplace_back();
            }
          }
        }
        rows.push_back(std::move(row));
        continue;
      }
      for (std::size_t li = 0; li < pods[pi].size(); ++li) {
        const pcell& pc = s.p[uz(pods[pi][li])];
        if (row.node.empty()) row.node = s.node_names[uz(pc.nodes[0])];
        row.leaf_indices.push_back(pc.leaf_index);
        row.physical_cells.push_back(pc.address);
        const int vleaf = virt ? virt->at(num)[pi][li] : -1;
        if (vleaf < 0) {
          row.virtual_cells.emplace_back();
          row.preassigned_types.emplace_back();
        } else {
          const vcell& vc = s.v[uz(vleaf)];
          row.virtual_cells.push_back(vc.address);
          row.preassigned_types.push_back(
              s.chains[uz(vc.chain)].level_type[uz(s.v[uz(vc.preassigned)].level)]);
        }
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

/// The chain of the placement: its first known leaf's, else the bind record's.
std::string chain_of(const scheduler_state& s, const placement& phys, const bind_info* record) {
  for (const auto& [num, pods] : phys)
    for (const auto& leaves : pods)
      for (int leaf : leaves)
        if (leaf >= 0) return s.chains[uz(s.p[uz(leaf)].chain)].name;
  return record != nullptr ? record->chain : std::string();
}

/// The victims of `by_node` with their groups as they stand in `s`.
std::vector<what_if_victim> victim_rows(
    const scheduler_state& s, const std::map<std::string, std::vector<std::string>>& by_node) {
  std::vector<what_if_victim> rows;
  for (const auto& [node, pods] : by_node) {
    for (const std::string& pod : pods) {
      what_if_victim v;
      v.pod = pod;
      v.node = node;
      // Victims are committed pods: committed_pods names their group (O(log) per victim, not a
      // walk over every group).
      const auto owner = s.committed_pods.find(pod);
      const auto it =
          owner == s.committed_pods.end() ? s.groups.end() : s.groups.find(owner->second);
      if (it != s.groups.end()) {
        const group& g = *it->second;
        v.group = g.name;
        v.vc = g.vc >= 0 ? s.vcs[uz(g.vc)].name : std::string();
        v.priority = g.priority;
        v.guaranteed_placement = g.priority >= 0 && g.virt.has_value();
      }
      rows.push_back(std::move(v));
    }
  }
  return rows;
}

}  // namespace

scheduler scheduler::copy() const { return scheduler(s_->clone()); }

scheduler::trial::trial(scheduler& s) : s_(s.s_.get()) { s_->open_journal(); }
scheduler::trial::~trial() { s_->rollback(); }

result<what_if_answer> scheduler::what_if_on_copy(const pod_request& pod, const node_filter& nodes,
                                                  phase ph) const {
  scheduler trial_copy(s_->clone());
  return trial_copy.what_if(pod, nodes, ph);
}

result<what_if_answer> scheduler::what_if(const pod_request& pod, const node_filter& nodes,
                                          phase ph) {
  // Inside a trial the journal is taken: answer on a copy of the trial's state.
  if (s_->journaling()) return what_if_on_copy(pod, nodes, ph);
  scheduler_state& s = *s_;
  s.open_journal();
  schedule_trace trace;
  auto decided = schedule_in(s, pod, nodes, ph, &trace);
  // What schedule() did to the groups, read from the journal before the rollback: the groups
  // it deleted (cancelled preemptions), the ones it left without their virtual placement (lazy
  // preemptions), and whether the pod's group is preempting now.
  what_if_answer a;
  const state_journal& j = *s.journal.get();
  std::set<std::string> created;
  for (const auto& op : j.groups)
    if (op.what == state_journal::group_op::kind::inserted) created.insert(op.name);
  for (const auto& op : j.groups) {
    const std::string& name =
        op.what == state_journal::group_op::kind::changed ? op.object->name : op.name;
    if (created.contains(name)) continue;
    auto now = s.groups.find(name);
    if (now == s.groups.end()) {
      a.cancelled_preemptions.push_back(name);
    } else if (op.what == state_journal::group_op::kind::changed && op.before->virt.has_value() &&
               !now->second->virt.has_value()) {
      a.lazy_preempted_groups.push_back(name);
    }
  }
  auto mine = s.groups.find(trace.group);
  const bool preempting_now =
      mine != s.groups.end() && mine->second->state == group_state::preempting;
  s.rollback();
  if (!decided) return std::move(decided).error();
  for (auto* names : {&a.cancelled_preemptions, &a.lazy_preempted_groups}) {
    std::sort(names->begin(), names->end());
    names->erase(std::unique(names->begin(), names->end()), names->end());
  }
  a.decision = std::move(*decided);
  a.group = trace.group;
  a.existing_group = trace.existing;
  if (trace.physical) {
    const bind_info* record = nullptr;
    if (auto it = s.records.find(trace.group); it != s.records.end()) record = &it->second;
    a.chain = chain_of(s, *trace.physical, record);
    a.pods = pod_rows(s, *trace.physical, trace.virt, record);
  }
  a.victims = victim_rows(s, a.decision.victims_by_node);
  const bool own_cancelled = std::binary_search(a.cancelled_preemptions.begin(),
                                                a.cancelled_preemptions.end(), trace.group);
  a.starts_preemption = preempting_now && (!trace.existing || own_cancelled);
  return a;
}

}  // namespace hetsched::hived
