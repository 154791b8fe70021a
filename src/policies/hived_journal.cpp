// SPDX-License-Identifier: MIT
// The undo journal of hived's scheduler_state (state_journal in hived_state.hpp): what-if queries
// run schedule() on the state itself and roll it back, at the cost of what schedule() wrote
// instead of a copy of the whole state.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include <hetsched/model/assert.hpp>

#include "hived_state.hpp"

namespace hetsched::hived {

void scheduler_state::open_journal() {
  HETSCHED_ASSERT(!journaling(), "hived journal: already open");
  state_journal& j = journal.make();
  j.p.open(p.size());
  j.p_children.open(p.size());
  j.v.open(v.size());
  j.chains.open(chains.size());
  j.vc_chains.clear();
  j.views.clear();
  j.groups.clear();
  j.records.clear();
  j.committed.clear();
  j.bad_node.clear();
  p.attach(&j.p);
  v.attach(&j.v);
  chains.attach(&j.chains);
  j.open = true;
}

void scheduler_state::rollback() {
  state_journal* j = journal.get();
  HETSCHED_ASSERT(j != nullptr && j->open, "hived journal: rollback without open_journal");
  if (j == nullptr || !j->open) return;
  p.attach(nullptr);
  v.attach(nullptr);
  chains.attach(nullptr);
  j->open = false;
  // Groups first, backwards: a group erased and re-created, or changed and then erased, comes
  // back as the same object with its first contents (cells point at it by address).
  for (auto it = j->groups.rbegin(); it != j->groups.rend(); ++it) {
    switch (it->what) {
      case state_journal::group_op::kind::inserted: groups.erase(it->name); break;
      case state_journal::group_op::kind::erased:
        groups.emplace(it->name, std::move(it->removed));
        break;
      case state_journal::group_op::kind::changed: *it->object = std::move(*it->before); break;
    }
  }
  j->groups.clear();
  for (auto it = j->records.rbegin(); it != j->records.rend(); ++it) {
    if (it->second) {
      records.insert_or_assign(it->first, std::move(*it->second));
    } else {
      records.erase(it->first);
    }
  }
  j->records.clear();
  for (auto it = j->committed.rbegin(); it != j->committed.rend(); ++it) {
    if (it->second) {
      committed_pods.insert_or_assign(it->first, std::move(*it->second));
    } else {
      committed_pods.erase(it->first);
    }
  }
  j->committed.clear();
  for (auto it = j->bad_node.rbegin(); it != j->bad_node.rend(); ++it)
    bad_node[uz(it->first)] = it->second;
  j->bad_node.clear();
  j->p.restore(p.raw());
  j->p_children.restore(p.raw());
  j->v.restore(v.raw());
  j->chains.restore(chains.raw());
  for (auto it = j->vc_chains.rbegin(); it != j->vc_chains.rend(); ++it) {
    auto& map = vcs[uz(it->vc)].chains;
    if (!it->existed) {
      map.erase(it->chain);
      continue;
    }
    vc_chain& vch = map.at(it->chain);
    static_cast<vc_chain_live&>(vch) = std::move(it->live);
    vch.full.resize(it->full);
    vch.preassigned.resize(it->preassigned);
  }
  j->vc_chains.clear();
  for (auto& [t, live] : j->views) static_cast<view_live&>(*t) = std::move(live);
  j->views.clear();
}

std::vector<int>& scheduler_state::children_mut(int c) {
  if (state_journal* j = journal.get(); j != nullptr && j->open) j->p_children.save(c, p[uz(c)]);
  return p.raw()[uz(c)].children;
}

vc_chain& scheduler_state::vc_chain_mut(int vc, int chain) {
  auto& map = vcs[uz(vc)].chains;
  state_journal* j = journal.get();
  if (j == nullptr || !j->open) return map[chain];
  const bool seen = std::any_of(j->vc_chains.begin(), j->vc_chains.end(),
                                [&](const auto& s) { return s.vc == vc && s.chain == chain; });
  auto it = map.find(chain);
  if (!seen) {
    state_journal::vc_chain_save save;
    save.vc = vc;
    save.chain = chain;
    save.existed = it != map.end();
    if (save.existed) {
      save.live = static_cast<const vc_chain_live&>(it->second);
      save.full = it->second.full.size();
      save.preassigned = it->second.preassigned.size();
    }
    j->vc_chains.push_back(std::move(save));
  }
  return it != map.end() ? it->second : map[chain];
}

topo_scheduler& scheduler_state::view_mut(topo_scheduler& t) {
  state_journal* j = journal.get();
  if (j == nullptr || !j->open) return t;
  const bool seen =
      std::any_of(j->views.begin(), j->views.end(), [&](const auto& s) { return s.first == &t; });
  if (!seen) j->views.emplace_back(&t, static_cast<const view_live&>(t));
  return t;
}

void scheduler_state::group_changing(group& g) {
  state_journal* j = journal.get();
  if (j == nullptr || !j->open) return;
  for (const auto& op : j->groups)
    if (op.what == state_journal::group_op::kind::changed && op.object == &g) return;
  state_journal::group_op op;
  op.what = state_journal::group_op::kind::changed;
  op.object = &g;
  op.before = g;
  j->groups.push_back(std::move(op));
}

group& scheduler_state::insert_group(std::unique_ptr<group> g) {
  const std::string name = g->name;
  auto [it, inserted] = groups.insert_or_assign(name, std::move(g));
  HETSCHED_ASSERT(inserted, "hived: a group replaced another of the same name");
  if (state_journal* j = journal.get(); j != nullptr && j->open) {
    state_journal::group_op op;
    op.what = state_journal::group_op::kind::inserted;
    op.name = name;
    j->groups.push_back(std::move(op));
  }
  return *it->second;
}

void scheduler_state::erase_group(const std::string& name) {
  auto it = groups.find(name);
  if (it == groups.end()) return;
  if (state_journal* j = journal.get(); j != nullptr && j->open) {
    state_journal::group_op op;
    op.what = state_journal::group_op::kind::erased;
    op.name = name;
    op.removed = std::move(it->second);
    j->groups.push_back(std::move(op));
  }
  groups.erase(it);
}

void scheduler_state::record_changing(const std::string& name) {
  state_journal* j = journal.get();
  if (j == nullptr || !j->open) return;
  auto it = records.find(name);
  j->records.emplace_back(
      name, it == records.end() ? std::nullopt : std::optional<bind_info>(it->second));
}

void scheduler_state::committed_changing(const std::string& name) {
  state_journal* j = journal.get();
  if (j == nullptr || !j->open) return;
  auto it = committed_pods.find(name);
  j->committed.emplace_back(
      name, it == committed_pods.end() ? std::nullopt : std::optional<std::string>(it->second));
}

}  // namespace hetsched::hived
