// SPDX-License-Identifier: MIT
// hived::scheduler: the extender API (schedule, add/delete allocated, delete unallocated),
// affinity groups, lazy and stateful preemption (hivedscheduler hived_algorithm.go, utils.go).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_state.hpp"

namespace hetsched::hived {

/// The scheduling logic on top of scheduler_state.
class engine {
 public:
  explicit engine(scheduler_state& s, cell_request cell = {}) : s_(s), cell_(std::move(cell)) {}

  node_set make_node_set(const node_filter& f) const {
    node_set ns;
    ns.all = f.all;
    if (!f.all) {
      ns.ids.reserve(f.nodes.size());
      for (const auto& n : f.nodes) {
        auto it = s_.node_index.find(n);
        if (it != s_.node_index.end()) ns.ids.push_back(it->second);
      }
      std::sort(ns.ids.begin(), ns.ids.end());
    }
    return ns;
  }

  result<schedule_result> schedule(const pod_request& pod, const node_filter& filter, phase ph,
                                   schedule_trace* trace) {
    auto req = validate_pod(pod);
    if (!req) return std::move(req).error();
    node_set suggested = make_node_set(filter);
    std::optional<placement> phys;
    std::optional<placement> virt;
    std::map<std::string, std::set<std::string>> victims;
    std::string reason;
    std::size_t pod_index = 0;
    if (trace != nullptr) trace->group = req->group;
    if (auto it = s_.groups.find(req->group); it != s_.groups.end()) {
      group& g = *it->second;
      if (trace != nullptr) trace->existing = g.state;
      bool bad = bad_or_non_suggested(g.physical, suggested, g.ignore_suggested);
      if (g.state == group_state::allocated) {
        phys = g.physical;
        virt = g.virt;
        auto slots = g.allocated.find(pod.leaf_cells);
        bool found = false;
        if (slots != g.allocated.end()) {
          for (std::size_t i = 0; i < slots->second.size(); ++i) {
            if (!slots->second[i].present) {
              pod_index = i;
              found = true;
              break;
            }
          }
        }
        if (!found)
          return make_error(errc::invalid_argument,
                            "Requesting more pods than the configured number for {} leaf cells "
                            "({} pods) in affinity group {}",
                            pod.leaf_cells, g.total_pods[pod.leaf_cells], g.name);
      } else if (ph == phase::preempting && bad) {
        delete_preempting(g);
      } else {
        phys = g.physical;
        virt = g.virt;
        victims = collect_victims(g.physical).first;
        if (std::find(g.preempting_pods.begin(), g.preempting_pods.end(), pod.name) ==
            g.preempting_pods.end()) {
          s_.group_changing(g);
          g.preempting_pods.push_back(pod.name);
        }
      }
    }
    if (s_.groups.find(req->group) == s_.groups.end()) {
      auto placed = schedule_new_group(pod, *req, suggested, virt, reason);
      if (!placed) return std::move(placed).error();
      phys = std::move(*placed);
      if (phys) {
        auto [vic, overlapping] = collect_victims(*phys);
        victims = std::move(vic);
        if (ph == phase::preempting) {
          for (group* o : overlapping) delete_preempting(*o);
          if (!victims.empty()) create_preempting(pod, *req, *phys, virt);
        }
      }
    }
    if (trace != nullptr) {
      trace->physical = phys;
      trace->virt = virt;
    }
    schedule_result out;
    if (!phys) {
      out.kind = outcome::wait;
      out.wait_reason = reason;
      return out;
    }
    if (!victims.empty()) {
      out.kind = outcome::preempt;
      for (auto& [node, pods] : victims)
        out.victims_by_node[node] = std::vector<std::string>(pods.begin(), pods.end());
      return out;
    }
    out.kind = outcome::bind;
    out.bind = bind_record(*phys, virt, pod.leaf_cells, pod_index, req->group);
    return out;
  }

  bind_info bind_record(const placement& phys, const std::optional<placement>& virt, int leaf_num,
                        std::size_t pod_index, const std::string& group_name) {
    bind_info info;
    const group* g = nullptr;
    if (auto it = s_.groups.find(group_name); it != s_.groups.end()) g = it->second.get();
    for (const auto& [num, pods] : phys) {
      auto& list = info.group_placements[num];
      for (std::size_t pi = 0; pi < pods.size(); ++pi) {
        pod_placement pp;
        bool missing = false;
        for (std::size_t li = 0; li < pods[pi].size(); ++li) {
          int leaf = pods[pi][li];
          if (leaf < 0) {
            missing = true;
            break;
          }
          const auto& pc = s_.p[uz(leaf)];
          if (pp.node.empty()) pp.node = s_.node_names[uz(pc.nodes[0])];
          pp.leaf_cells.push_back(pc.leaf_index);
          if (virt) {
            int vleaf = virt->at(num)[pi][li];
            const auto& vc = s_.v[uz(vleaf)];
            pp.preassigned_types.push_back(
                s_.chains[uz(vc.chain)].level_type[uz(s_.v[uz(vc.preassigned)].level)]);
          } else {
            pp.preassigned_types.emplace_back();
          }
        }
        if (missing && g != nullptr) {
          auto rit = s_.records.find(g->name);
          if (rit != s_.records.end()) {
            auto mit = rit->second.group_placements.find(num);
            if (mit != rit->second.group_placements.end() && pi < mit->second.size())
              pp = mit->second[pi];
          }
        }
        list.push_back(std::move(pp));
      }
      if (num == leaf_num && pod_index < list.size()) {
        info.node = list[pod_index].node;
        info.leaf_cells = list[pod_index].leaf_cells;
        if (!pods[pod_index].empty() && pods[pod_index][0] >= 0)
          info.chain = s_.chains[uz(s_.p[uz(pods[pod_index][0])].chain)].name;
        else if (auto rit = s_.records.find(group_name); rit != s_.records.end())
          info.chain = rit->second.chain;
      }
    }
    return info;
  }

  bool bad_or_non_suggested(const placement& pl, const node_set& suggested, bool ignore) const {
    for (const auto& [num, pods] : pl)
      for (const auto& leaves : pods)
        for (int leaf : leaves) {
          if (leaf < 0) continue;
          const auto& pc = s_.p[uz(leaf)];
          if (!pc.healthy || (!ignore && !suggested.contains(pc.nodes[0]))) return true;
        }
    return false;
  }

  std::pair<std::map<std::string, std::set<std::string>>, std::vector<group*>> collect_victims(
      const placement& pl) const {
    std::map<std::string, std::set<std::string>> victims;
    std::vector<group*> overlapping;
    for (const auto& [num, pods] : pl)
      for (const auto& leaves : pods)
        for (int leaf : leaves) {
          if (leaf < 0) continue;
          const auto& pc = s_.p[uz(leaf)];
          if ((pc.state == leaf_state::used || pc.state == leaf_state::reserving) &&
              pc.using_group != nullptr) {
            for (const auto& [n, slots] : pc.using_group->allocated)
              for (const auto& slot : slots)
                if (slot.present) victims[slot.node].insert(slot.pod);
          }
          if ((pc.state == leaf_state::reserving || pc.state == leaf_state::reserved) &&
              pc.reserving_group != nullptr &&
              std::find(overlapping.begin(), overlapping.end(), pc.reserving_group) ==
                  overlapping.end())
            overlapping.push_back(pc.reserving_group);
        }
    return {std::move(victims), std::move(overlapping)};
  }

  /// scheduleNewAffinityGroup; an error for a bad request, nullopt placement for a wait.
  result<std::optional<placement>> schedule_new_group(const pod_request& pod,
                                                      const group_request& req,
                                                      const node_set& suggested,
                                                      std::optional<placement>& virt,
                                                      std::string& reason) {
    auto vi = s_.vc_index.find(pod.vc);
    if (vi == s_.vc_index.end())
      return make_error(errc::not_found, "[{}]: VC {} does not exists!", pod.name, pod.vc);
    int vc = vi->second;
    if (!pod.pinned_cell.empty()) {
      if (s_.vcs[uz(vc)].pinned.count(pod.pinned_cell) == 0)
        return make_error(errc::not_found, "[{}]: VC {} does not have pinned cell {}", pod.name,
                          pod.vc, pod.pinned_cell);
      if (pod.priority == opportunistic_priority)
        return make_error(errc::invalid_argument,
                          "[{}]: opportunistic pod not supported to use pinned cell {}", pod.name,
                          pod.pinned_cell);
      return process(pod, req, vc, -1, suggested, virt, reason);
    }
    if (!pod.leaf_type.empty()) {
      auto it = s_.leaf_type_chains.find(pod.leaf_type);
      if (it == s_.leaf_type_chains.end())
        return make_error(errc::not_found,
                          "[{}]: Pod requesting leaf cell type {} which the whole cluster does "
                          "not have",
                          pod.name, pod.leaf_type);
      if (cell_.cell_type.empty())
        return schedule_for_type(pod, req, vc, it->second, true, suggested, virt, reason);
      std::vector<int> chains;
      for (int c : it->second)
        if (uz(cell_.level) < s_.chains[uz(c)].level_type.size() &&
            s_.chains[uz(c)].level_type[uz(cell_.level)] == cell_.cell_type)
          chains.push_back(c);
      return schedule_for_type(pod, req, vc, chains, true, suggested, virt, reason);
    }
    std::string failed;
    for (const auto& [type, chains] : s_.leaf_type_chains) {
      std::string r;
      auto placed = schedule_for_type(pod, req, vc, chains, false, suggested, virt, r);
      if (!placed) return placed;
      if (*placed) return placed;
      if (!r.empty()) failed = r;
    }
    reason = failed;
    return std::optional<placement>{};
  }

  result<std::optional<placement>> schedule_for_type(const pod_request& pod,
                                                     const group_request& req, int vc,
                                                     const std::vector<int>& chains, bool specified,
                                                     const node_set& suggested,
                                                     std::optional<placement>& virt,
                                                     std::string& reason) {
    bool vc_has_type = false;
    const auto& vchains = s_.vcs[uz(vc)].chains;
    for (int chain : chains) {
      auto it = vchains.find(chain);
      if (pod.priority < 0 || (it != vchains.end() && it->second.has_non_pinned)) {
        vc_has_type = true;
        auto placed = process(pod, req, vc, chain, suggested, virt, reason);
        if (!placed || *placed) return placed;
      }
    }
    if (specified && pod.priority >= 0 && !vc_has_type)
      return make_error(errc::invalid_argument,
                        "[{}]: Pod requesting leaf cell type {} which VC {} does not have",
                        pod.name, pod.leaf_type, pod.vc);
    return std::optional<placement>{};
  }

  result<std::optional<placement>> process(const pod_request& pod, const group_request& req, int vc,
                                           int chain, const node_set& suggested,
                                           std::optional<placement>& virt, std::string& reason) {
    bool ignore = pod.ignore_suggested_nodes;
    if (cell_.constrained) return process_constrained(pod, vc, chain, suggested, virt, reason);
    if (pod.priority < 0) {
      virt.reset();
      auto pl = s_.topo_schedule(s_.opp[uz(chain)], req.pod_nums, opportunistic_priority, suggested,
                                 ignore, reason);
      if (!pl) reason += " when scheduling in physical cluster";
      return pl;
    }
    topo_scheduler* sched = nullptr;
    if (!pod.pinned_cell.empty()) {
      auto& info = s_.vcs[uz(vc)].pinned.at(pod.pinned_cell);
      sched = &info.sched;
      chain = info.chain;
    } else {
      sched = &*s_.vcs[uz(vc)].chains.at(chain).sched;
    }
    auto vp = s_.topo_schedule(*sched, req.pod_nums, pod.priority, suggested, ignore, reason);
    if (!vp) {
      reason += " when scheduling in VC " + pod.vc;
      if (s_.opts.multi_cell_pods && pod.pinned_cell.empty()) {
        placement mv;
        if (auto mp = multi_cell_placement(s_, vc, chain, req.pod_nums, suggested, ignore, mv)) {
          virt = std::move(mv);
          return std::optional<placement>{std::move(*mp)};
        }
      }
      return std::optional<placement>{};
    }
    if (auto phys = bind_virtual(*vp, chain, suggested, ignore)) {
      virt = std::move(vp);
      return std::optional<placement>{std::move(*phys)};
    }
    reason = std::string(mapping_failed_reason) +
             " (virtual placement : " + virtual_placement_json(s_, *vp) + ")";
    return std::optional<placement>{};
  }

  /// Maps a virtual placement onto physical cells, lazy-preempting the groups on its bound leaves
  /// as hivedscheduler does; nullopt, with every lazy preemption reverted, if mapping fails.
  std::optional<placement> bind_virtual(const placement& vp, int chain, const node_set& suggested,
                                        bool ignore) {
    // Lazy-preempted groups in preemption order (reverted in that order if mapping fails; a map
    // keyed by pointer would make the revert order, and so the free-list order, address-based).
    std::vector<std::pair<group*, std::optional<placement>>> lazy;
    for (const auto& [num, pods] : vp)
      for (const auto& leaves : pods)
        for (int vleaf : leaves) {
          int pleaf = s_.v[uz(vleaf)].pcell;
          if (pleaf < 0) continue;
          group* user = s_.p[uz(pleaf)].using_group;
          if (s_.p[uz(pleaf)].state == leaf_state::used && user != nullptr &&
              user->lazy_preemption && std::find_if(lazy.begin(), lazy.end(), [&](const auto& l) {
                                         return l.first == user;
                                       }) == lazy.end())
            lazy.emplace_back(user, lazy_preempt(*user));
        }
    std::unordered_map<int, int> bindings;
    std::deque<binding_vertex> arena;
    std::vector<binding_vertex*> preassigned;
    std::vector<std::vector<binding_vertex*>> non_preassigned;
    binding_paths(vp, bindings, arena, preassigned, non_preassigned);
    const auto& ch = s_.chains[uz(chain)];
    level_lists free = ch.free;
    std::vector<int> free_num = ch.all_vc_free;
    if (s_.map_placement(preassigned, non_preassigned, free, free_num, suggested, ignore,
                         bindings)) {
      placement phys;
      for (const auto& [num, pods] : vp)
        for (const auto& leaves : pods) {
          std::vector<int> pl;
          for (int vleaf : leaves) pl.push_back(bindings.at(vleaf));
          phys[num].push_back(std::move(pl));
        }
      return phys;
    }
    for (auto& [g, original] : lazy) revert_lazy(*g, original);
    return std::nullopt;
  }

  /// A request with a cell type, within-one-cell types or child groups (hived_groups.cpp).
  result<std::optional<placement>> process_constrained(const pod_request& pod, int vc, int chain,
                                                       const node_set& suggested,
                                                       std::optional<placement>& virt,
                                                       std::string& reason) {
    auto bind = [&](const placement& vp, int bind_chain) {
      return bind_virtual(vp, bind_chain, suggested, pod.ignore_suggested_nodes);
    };
    return place_constrained(s_, cell_, vc, chain, suggested, bind, virt, reason);
  }

  void binding_paths(const placement& vp, std::unordered_map<int, int>& bindings,
                     std::deque<binding_vertex>& arena, std::vector<binding_vertex*>& preassigned,
                     std::vector<std::vector<binding_vertex*>>& non_preassigned) {
    std::unordered_map<int, binding_vertex*> all;
    for (const auto& [num, pods] : vp)
      for (const auto& leaves : pods)
        for (int leaf : leaves) {
          if (int pl = s_.v[uz(leaf)].pcell; pl >= 0) {
            bindings[leaf] = pl;
            continue;
          }
          std::vector<int> path;
          for (int c = leaf; c >= 0; c = s_.v[uz(c)].parent) {
            if (s_.v[uz(c)].pcell >= 0 || all.count(c) != 0) break;
            path.push_back(c);
          }
          int root = path.back();
          binding_vertex* n = &arena.emplace_back(binding_vertex{root, {}});
          all[root] = n;
          int parent = s_.v[uz(root)].parent;
          if (parent < 0) {
            preassigned.push_back(n);
          } else if (s_.v[uz(parent)].pcell >= 0) {
            bool found = false;
            for (auto& group_cells : non_preassigned) {
              if (s_.v[uz(group_cells[0]->cell)].parent == parent) {
                group_cells.push_back(n);
                found = true;
                break;
              }
            }
            if (!found) non_preassigned.push_back({n});
          } else {
            all.at(parent)->children.push_back(n);
          }
          for (std::size_t i = path.size() - 1; i-- > 0;) {
            int c = path[i];
            binding_vertex* cn = &arena.emplace_back(binding_vertex{c, {}});
            all.at(s_.v[uz(c)].parent)->children.push_back(cn);
            all[c] = cn;
          }
        }
  }

  std::optional<placement> lazy_preempt(group& victim) {
    s_.group_changing(victim);
    if (victim.virt) {
      for (const auto& [num, pods] : *victim.virt)
        for (const auto& leaves : pods)
          for (int vleaf : leaves) {
            if (vleaf < 0) continue;
            int pleaf = s_.v[uz(vleaf)].pcell;
            if (pleaf < 0) continue;
            s_.release_leaf(pleaf, victim.vc);
            s_.allocate_leaf(pleaf, -1, opportunistic_priority, victim.vc, nullptr);
          }
    }
    auto original = std::move(victim.virt);
    victim.virt.reset();
    return original;
  }

  void revert_lazy(group& g, const std::optional<placement>& virt) {
    if (!virt) return;
    s_.group_changing(g);
    binding_plan plan(s_);
    plan.add(*virt);
    for (const auto& [num, pods] : g.physical)
      for (std::size_t pi = 0; pi < pods.size(); ++pi)
        for (std::size_t li = 0; li < pods[pi].size(); ++li) {
          int pleaf = pods[pi][li];
          if (pleaf < 0) continue;
          s_.release_leaf(pleaf, g.vc);
          s_.allocate_leaf(pleaf, virt->at(num)[pi][li], g.priority, g.vc, nullptr);
        }
    g.virt = virt;
  }

  std::unique_ptr<group> new_group(const pod_request& pod, const group_request& req,
                                   group_state st) {
    auto g = std::make_unique<group>();
    g->name = req.group;
    auto vi = s_.vc_index.find(pod.vc);
    g->vc = vi == s_.vc_index.end() ? -1 : vi->second;
    g->lazy_preemption = pod.lazy_preemption;
    g->ignore_suggested = pod.ignore_suggested_nodes;
    g->priority = pod.priority;
    g->total_pods = req.pod_nums;
    g->state = st;
    g->virt.emplace();
    for (const auto& [num, pods] : req.pod_nums) {
      g->allocated[num].resize(uz(pods));
      g->physical[num].assign(uz(pods), std::vector<int>(uz(num), -1));
      (*g->virt)[num].assign(uz(pods), std::vector<int>(uz(num), -1));
    }
    return g;
  }

  void create_preempting(const pod_request& pod, const group_request& req, const placement& phys,
                         const std::optional<placement>& virt) {
    auto g = new_group(pod, req, group_state::preempting);
    g->physical = phys;
    g->virt = virt;
    binding_plan plan(s_);
    if (virt) plan.add(*virt);
    for (const auto& [num, pods] : phys)
      for (std::size_t pi = 0; pi < pods.size(); ++pi)
        for (std::size_t li = 0; li < pods[pi].size(); ++li) {
          int pleaf = pods[pi][li];
          int vleaf = virt ? virt->at(num)[pi][li] : -1;
          const pcell& pc = s_.p[uz(pleaf)];
          bool was_used = pc.state == leaf_state::used;
          if (was_used && pc.using_group != nullptr) {
            group* user = pc.using_group;
            s_.release_leaf(pleaf, user->vc);
            s_.group_changing(*user);
            user->state = group_state::being_preempted;
          }
          s_.allocate_leaf(pleaf, vleaf, pod.priority, g->vc, nullptr);
          pcell& taken = s_.p.mut(pleaf);
          taken.reserving_group = g.get();
          taken.state = was_used ? leaf_state::reserving : leaf_state::reserved;
        }
    g->preempting_pods.push_back(pod.name);
    s_.insert_group(std::move(g));
  }

  void delete_preempting(group& g) {
    // The groups being preempted get their leaves back with their virtual cells.
    binding_plan plan(s_);
    std::vector<const group*> planned;
    for (const auto& [num, pods] : g.physical)
      for (const auto& leaves : pods)
        for (int pleaf : leaves) {
          const group* being = pleaf < 0 ? nullptr : s_.p[uz(pleaf)].using_group;
          if (being == nullptr || being == &g || !being->virt ||
              std::find(planned.begin(), planned.end(), being) != planned.end())
            continue;
          planned.push_back(being);
          plan.add(*being->virt);
        }
    for (const auto& [num, pods] : g.physical)
      for (const auto& leaves : pods)
        for (int pleaf : leaves) {
          if (pleaf < 0) continue;
          s_.release_leaf(pleaf, g.vc);
          pcell& pc = s_.p.mut(pleaf);
          pc.reserving_group = nullptr;
          if (pc.state == leaf_state::reserving) {
            pc.state = leaf_state::used;
            group* being = pc.using_group;
            int vleaf = -1;
            if (being != nullptr && being->virt) vleaf = retrieve_virtual(*being, pleaf);
            if (being != nullptr)
              s_.allocate_leaf(pleaf, vleaf, being->priority, being->vc, nullptr);
          } else {
            pc.state = leaf_state::free;
          }
        }
    s_.erase_group(g.name);
  }

  static int retrieve_virtual(const group& g, int pleaf) {
    for (const auto& [num, pods] : g.physical)
      for (std::size_t pi = 0; pi < pods.size(); ++pi)
        for (std::size_t li = 0; li < pods[pi].size(); ++li)
          if (pods[pi][li] == pleaf) return g.virt->at(num)[pi][li];
    return -1;
  }

  static int lowest_priority_virtual(const scheduler_state& s, const std::vector<int>& cells,
                                     int prio) {
    int lowest = max_guaranteed_priority;
    int out = -1;
    for (int c : cells) {
      int q = s.v[uz(c)].priority;
      if (q == free_priority) {
        if (s.v[uz(c)].pcell < 0) return c;
        continue;
      }
      if (q < prio && q < lowest) {
        lowest = q;
        out = c;
      }
    }
    return out;
  }

  int physical_to_virtual(int c, const level_lists& lists, int level, int prio) const {
    if (s_.p[uz(c)].vcell >= 0) return s_.p[uz(c)].vcell;
    if (s_.p[uz(c)].level == level) {
      if (uz(level) >= lists.size()) return -1;
      return lowest_priority_virtual(s_, lists[uz(level)], prio);
    }
    if (s_.p[uz(c)].parent < 0) return -1;
    int pv = physical_to_virtual(s_.p[uz(c)].parent, lists, level, prio);
    if (pv < 0) return -1;
    return lowest_priority_virtual(s_, s_.v[uz(pv)].children, prio);
  }

  /// createAllocatedAffinityGroup.
  void create_allocated(const pod_request& pod, const group_request& req, const bind_info& info) {
    auto g = new_group(pod, req, group_state::allocated);
    bool should_lazy = false;
    int chain = -1;
    if (auto it = s_.chain_index.find(info.chain); it != s_.chain_index.end()) chain = it->second;
    for (const auto& [num, pods] : info.group_placements) {
      for (std::size_t pi = 0; pi < pods.size(); ++pi) {
        const auto& pp = pods[pi];
        auto ni = s_.node_index.find(pp.node);
        for (std::size_t li = 0; li < pp.leaf_cells.size(); ++li) {
          int pleaf =
              ni == s_.node_index.end() ? -1 : s_.find_leaf(chain, ni->second, pp.leaf_cells[li]);
          if (pleaf < 0) continue;
          // lazy: 0 = false, 1 = true, 2 = nil (opportunistic)
          int vleaf = -1;
          int lazy = 0;
          if (pp.preassigned_types.size() != pp.leaf_cells.size()) {
            lazy = 1;
          } else if (g->virt && !should_lazy) {
            const std::string& type = pp.preassigned_types[li];
            if (type.empty()) {
              lazy = 2;
            } else {
              const auto& ch = s_.chains[uz(s_.p[uz(pleaf)].chain)];
              int level = -1;
              for (int l = 1; l <= ch.top; ++l)
                if (ch.level_type[uz(l)] == type) level = l;
              const level_lists* lists = nullptr;
              if (level >= 0 && g->vc >= 0) {
                auto& vcinfo = s_.vcs[uz(g->vc)];
                if (!pod.pinned_cell.empty()) {
                  if (auto it = vcinfo.pinned.find(pod.pinned_cell); it != vcinfo.pinned.end())
                    lists = &it->second.full;
                } else if (auto it = vcinfo.chains.find(s_.p[uz(pleaf)].chain);
                           it != vcinfo.chains.end() && it->second.has_non_pinned) {
                  lists = &it->second.preassigned;
                }
              }
              if (lists != nullptr) vleaf = physical_to_virtual(pleaf, *lists, level, pod.priority);
              lazy = vleaf < 0 ? 1 : 0;
            }
          }
          if (num < 1 || g->physical.count(num) == 0 || pi >= g->physical[num].size() ||
              li >= g->physical[num][pi].size())
            continue;
          g->physical[num][pi][li] = pleaf;
          if (lazy == 2) {
            g->virt.reset();
          } else if (vleaf >= 0) {
            if (g->virt) (*g->virt)[num][pi][li] = vleaf;
            int bound = s_.v[uz(vleaf)].pcell;
            if (bound >= 0 && s_.p[uz(bound)].using_group != nullptr)
              lazy_preempt(*s_.p[uz(bound)].using_group);
          } else {
            should_lazy = should_lazy || lazy == 1;
          }
          bool safe = s_.allocate_leaf(pleaf, vleaf, pod.priority, g->vc, nullptr);
          pcell& used = s_.p.mut(pleaf);
          used.using_group = g.get();
          used.state = leaf_state::used;
          if (!safe) should_lazy = true;
        }
      }
    }
    if (should_lazy) lazy_preempt(*g);
    s_.record_changing(g->name);
    s_.records[g->name] = info;
    s_.insert_group(std::move(g));
  }

  static long long allocated_pod_index(const bind_info& info, int leaf_num) {
    if (info.leaf_cells.empty()) return -1;
    auto it = info.group_placements.find(leaf_num);
    if (it == info.group_placements.end()) return -1;
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const auto& pl = it->second[i];
      if (pl.node == info.node && std::find(pl.leaf_cells.begin(), pl.leaf_cells.end(),
                                            info.leaf_cells[0]) != pl.leaf_cells.end())
        return static_cast<long long>(i);
    }
    return -1;
  }

  result<void> add_allocated(const pod_request& pod, const bind_info& info) {
    auto req = validate_pod(pod);
    if (!req) return std::move(req).error();
    // Every check first (hived_commit.cpp): a refused record changes nothing.
    auto plan = check_commit(s_, pod, *req, info);
    if (!plan) return std::move(plan).error();
    if (auto it = s_.groups.find(req->group); it != s_.groups.end()) {
      group& g = *it->second;
      if (g.state == group_state::preempting) {
        for (const auto& [num, pods] : g.physical)
          for (const auto& leaves : pods)
            for (int pleaf : leaves) {
              if (pleaf < 0) continue;
              pcell& pc = s_.p.mut(pleaf);
              pc.reserving_group = nullptr;
              pc.using_group = &g;
              pc.state = leaf_state::used;
            }
        s_.group_changing(g);
        g.state = group_state::allocated;
        g.preempting_pods.clear();
      }
      if (s_.records.count(g.name) == 0) {
        s_.record_changing(g.name);
        s_.records[g.name] = info;
      }
    } else {
      for (group* preemptor : plan->cancel) delete_preempting(*preemptor);
      create_allocated(pod, *req, info);
    }
    group& mine = *s_.groups.at(req->group);
    s_.group_changing(mine);
    mine.allocated.at(pod.leaf_cells)[plan->index] = pod_slot{true, pod.name, info.node};
    s_.committed_changing(pod.name);
    s_.committed_pods.emplace(pod.name, req->group);
    return ok();
  }

  result<void> delete_allocated(const pod_request& pod, const bind_info& info) {
    auto req = validate_pod(pod);
    if (!req) return std::move(req).error();
    auto it = s_.groups.find(req->group);
    if (it == s_.groups.end())
      return make_error(errc::not_found, "[{}]: Group {} not found when deleting pod", pod.name,
                        req->group);
    group& g = *it->second;
    long long index = allocated_pod_index(info, pod.leaf_cells);
    auto slots = g.allocated.find(pod.leaf_cells);
    if (index < 0 || slots == g.allocated.end() ||
        static_cast<std::size_t>(index) >= slots->second.size())
      return make_error(errc::not_found,
                        "[{}]: Pod placement not found in group {}: node {}, leaf cells {}",
                        pod.name, g.name, info.node, fmt::join(info.leaf_cells, ","));
    pod_slot& mine = slots->second[static_cast<std::size_t>(index)];
    if (!mine.present || mine.pod != pod.name)
      return make_error(errc::not_found,
                        "[{}]: pod is not committed at node {} leaf cells {} of group {}{}",
                        pod.name, info.node, fmt::join(info.leaf_cells, ","), g.name,
                        mine.present ? fmt::format(" (pod {} is)", mine.pod) : std::string());
    s_.group_changing(g);
    mine = pod_slot{};
    s_.committed_changing(pod.name);
    s_.committed_pods.erase(pod.name);
    for (const auto& [num, list] : g.allocated)
      for (const auto& slot : list)
        if (slot.present) return ok();
    for (const auto& [num, pods] : g.physical)
      for (const auto& leaves : pods)
        for (int pleaf : leaves) {
          if (pleaf < 0) continue;
          pcell& pc = s_.p.mut(pleaf);
          pc.using_group = nullptr;
          if (pc.state == leaf_state::used) {
            s_.release_leaf(pleaf, g.vc);
            pc.state = leaf_state::free;
          } else {
            pc.state = leaf_state::reserved;
          }
        }
    s_.record_changing(g.name);
    s_.records.erase(g.name);
    s_.erase_group(g.name);
    return ok();
  }

  void delete_unallocated(const pod_request& pod) {
    auto req = validate_pod(pod);
    if (!req) return;
    auto it = s_.groups.find(req->group);
    if (it == s_.groups.end() || it->second->state != group_state::preempting) return;
    s_.group_changing(*it->second);
    auto& pods = it->second->preempting_pods;
    pods.erase(std::remove(pods.begin(), pods.end(), pod.name), pods.end());
    if (pods.empty()) delete_preempting(*it->second);
  }

 private:
  scheduler_state& s_;
  cell_request cell_;
};

scheduler::scheduler(std::unique_ptr<scheduler_state> s) : s_(std::move(s)) {}
scheduler::scheduler(scheduler&&) noexcept = default;
scheduler& scheduler::operator=(scheduler&&) noexcept = default;
scheduler::~scheduler() = default;

result<scheduler> scheduler::create(const config& cfg, const config_limits& limits) {
  auto s = build_state(cfg, limits);
  if (!s) return std::move(s).error();
  return scheduler(std::move(*s));
}

result<schedule_result> schedule_in(scheduler_state& s, const pod_request& pod,
                                    const node_filter& nodes, phase ph, schedule_trace* trace) {
  auto cell = translate_cell_type(s, pod);
  if (!cell) return std::move(cell).error();
  pod_request leaf_pod = cell->pod;
  return engine(s, std::move(*cell)).schedule(leaf_pod, nodes, ph, trace);
}

result<schedule_result> scheduler::schedule(const pod_request& pod, const node_filter& nodes,
                                            phase ph) {
  return schedule_in(*s_, pod, nodes, ph, nullptr);
}

result<void> scheduler::add_allocated(const pod_request& pod, const bind_info& info) {
  auto cell = translate_cell_type(*s_, pod);
  if (!cell) return std::move(cell).error();
  return engine(*s_).add_allocated(cell->pod, info);
}

result<void> scheduler::delete_allocated(const pod_request& pod, const bind_info& info) {
  auto cell = translate_cell_type(*s_, pod);
  if (!cell) return std::move(cell).error();
  return engine(*s_).delete_allocated(cell->pod, info);
}

void scheduler::delete_unallocated(const pod_request& pod) {
  auto cell = translate_cell_type(*s_, pod);
  if (cell) engine(*s_).delete_unallocated(cell->pod);
}

}  // namespace hetsched::hived
