// SPDX-License-Identifier: MIT
// HiveD configuration: cell chains, address inference, physical and virtual cells, and the
// initial VC safety check (hivedscheduler pkg/api/config.go and pkg/algorithm/config.go).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

struct chain_element {
  std::string type;
  int level = 1;
  std::string child;
  int child_count = 0;
  bool has_node = false;
  bool multi_nodes = false;
  std::string leaf_type;
  int leaf_number = 1;
  std::int64_t cells = 1;  ///< cells of a cell of this type, itself included
};

std::string last_segment(const std::string& address) {
  auto pos = address.rfind('/');
  return pos == std::string::npos ? address : address.substr(pos + 1);
}

class builder {
 public:
  builder(const config& cfg, const config_limits& limits)
      : cfg_(cfg), limits_(limits), s_(std::make_unique<scheduler_state>()) {}

  result<std::unique_ptr<scheduler_state>> run() {
    HETSCHED_TRY(build_types());
    HETSCHED_TRY(build_physical());
    build_chain_order();
    HETSCHED_TRY(count_virtual());
    HETSCHED_TRY(init_cell_nums());
    build_virtual();
    build_schedulers();
    s_->register_views();
    init_pinned();
    s_->opts = cfg_.opts;
    for (std::size_t n = 0; n < s_->node_names.size(); ++n) s_->bad_node.push_back(0);
    for (int n : node_init_order_) s_->set_node_health(n, false);
    return std::move(s_);
  }

 private:
  result<void> build_types() {
    for (std::size_t i = 0; i < cfg_.cell_types.size(); ++i) {
      const auto& t = cfg_.cell_types[i];
      if (t.name.empty())
        return make_error(errc::invalid_argument, "cell type with empty name (cell_types[{}])", i);
      if (!specs_.emplace(t.name, &t).second)
        return make_error(errc::invalid_argument, "cell type {} defined twice", t.name);
      if (t.child_type.empty() || t.child_count <= 0)
        return make_error(errc::invalid_argument,
                          "cell type {} needs a child type and a positive child count (child "
                          "type '{}', count {})",
                          t.name, t.child_type, t.child_count);
    }
    for (const auto& t : cfg_.cell_types) HETSCHED_TRY(add_element(t.name));
    return ok();
  }

  /// Builds the chain elements of `type` and of every type below it, without recursion: walks
  /// down the child types to a type already built (or the leaf type), then builds back up. Each
  /// type is walked once over all calls, so the whole pass is linear in the cell types.
  result<void> add_element(const std::string& type) {
    if (elements_.count(type) != 0) return ok();
    std::vector<const cell_type_spec*> path;  // `type` first, then its descendants
    std::unordered_set<std::string> on_path;
    const chain_element* below = nullptr;
    for (const std::string* current = &type;;) {
      if (auto e = elements_.find(*current); e != elements_.end()) {
        below = &e->second;
        break;
      }
      auto it = specs_.find(*current);
      if (it == specs_.end()) {  // never defined: the leaf type
        below =
            &elements_
                 .emplace(*current, chain_element{*current, 1, "", 0, false, false, *current, 1, 1})
                 .first->second;
        break;
      }
      if (!on_path.insert(*current).second)
        return make_error(errc::invalid_argument, "cell type {} is its own descendant", *current);
      path.push_back(it->second);
      if (path.size() >= uz(limits_.max_levels))
        return make_error(errc::out_of_range,
                          "cell type {} heads a chain of more than {} levels (limit "
                          "config_limits::max_levels)",
                          type, limits_.max_levels);
      current = &it->second->child_type;
    }
    if (uz(below->level) + path.size() > uz(limits_.max_levels))
      return make_error(errc::out_of_range,
                        "cell type {} heads a chain of more than {} levels (limit "
                        "config_limits::max_levels)",
                        type, limits_.max_levels);
    for (auto spec = path.rbegin(); spec != path.rend(); ++spec) {
      const cell_type_spec& t = **spec;
      const chain_element& child = *below;
      const std::int64_t leaves = std::int64_t{child.leaf_number} * t.child_count;
      if (leaves > limits_.max_leaf_cells)
        return make_error(errc::out_of_range,
                          "cell type {} holds {} leaf cells ({} x {}), more than the limit of {} "
                          "(config_limits::max_leaf_cells)",
                          t.name, leaves, t.child_count, child.leaf_number, limits_.max_leaf_cells);
      const std::int64_t cells = 1 + child.cells * t.child_count;
      if (cells > limits_.max_cells)
        return make_error(errc::out_of_range,
                          "cell type {} holds {} cells, more than the limit of {} "
                          "(config_limits::max_cells)",
                          t.name, cells, limits_.max_cells);
      below =
          &elements_
               .emplace(t.name, chain_element{t.name, child.level + 1, child.type, t.child_count,
                                              child.has_node || t.node_level, child.has_node,
                                              child.leaf_type, static_cast<int>(leaves), cells})
               .first->second;
    }
    return ok();
  }

  int node_id(const std::string& name) {
    auto [it, inserted] = s_->node_index.emplace(name, static_cast<int>(s_->node_names.size()));
    if (inserted) {
      s_->node_names.push_back(name);
      s_->node_leaves.emplace_back();
    }
    return it->second;
  }

  /// Checks the size of the physical cluster against the limits before any cell is built (the
  /// types' own sizes are bounded by build_types), and reserves the cell arena.
  result<void> check_physical_size() {
    std::int64_t leaves = 0;
    std::int64_t cells = 0;
    for (std::size_t i = 0; i < cfg_.physical_cells.size(); ++i) {
      auto it = elements_.find(cfg_.physical_cells[i].cell_type);
      if (it == elements_.end()) continue;  // build_physical names the unknown type
      leaves += it->second.leaf_number;
      cells += it->second.cells;
      if (leaves > limits_.max_leaf_cells)
        return make_error(errc::out_of_range,
                          "physical_cells[{}] ({}) brings the physical cluster to {} leaf cells, "
                          "more than the limit of {} (config_limits::max_leaf_cells)",
                          i, it->first, leaves, limits_.max_leaf_cells);
      if (cells > limits_.max_cells)
        return make_error(errc::out_of_range,
                          "physical_cells[{}] ({}) brings the physical cluster to {} cells, more "
                          "than the limit of {} (config_limits::max_cells)",
                          i, it->first, cells, limits_.max_cells);
    }
    s_->p.reserve(uz(static_cast<int>(cells)));
    return ok();
  }

  result<void> build_physical() {
    HETSCHED_TRY(check_physical_size());
    for (std::size_t i = 0; i < cfg_.physical_cells.size(); ++i) {
      const auto& spec = cfg_.physical_cells[i];
      auto it = elements_.find(spec.cell_type);
      if (it == elements_.end() || specs_.count(spec.cell_type) == 0)
        return make_error(errc::invalid_argument,
                          "cellType {} in PhysicalCells is not found in cell types definition "
                          "(physical_cells[{}])",
                          spec.cell_type, i);
      if (!it->second.has_node)
        return make_error(errc::invalid_argument,
                          "top cell must be node-level or above: {} (physical_cells[{}])",
                          spec.cell_type, i);
      auto [cit, inserted] =
          s_->chain_index.emplace(spec.cell_type, static_cast<int>(s_->chains.size()));
      if (inserted) {
        chain_info ch;
        ch.name = spec.cell_type;
        ch.leaf_type = it->second.leaf_type;
        ch.top = it->second.level;
        auto n = uz(ch.top + 1);
        ch.level_type.resize(n);
        ch.level_leaves.resize(n);
        ch.level_children.resize(n);
        for (const chain_element* e = &it->second;; e = &elements_.at(e->child)) {
          ch.level_type[uz(e->level)] = e->type;
          ch.level_leaves[uz(e->level)] = e->leaf_number;
          ch.level_children[uz(e->level)] = e->child_count;
          if (e->has_node && !e->multi_nodes) ch.node_level = e->level;
          if (e->level == 1) break;
        }
        ch.full.resize(n);
        ch.free.resize(n);
        ch.bad_free.resize(n);
        ch.total_left.assign(n, 0);
        ch.all_vc_free.assign(n, 0);
        ch.all_vc_doomed.assign(n, 0);
        s_->chains.raw().push_back(std::move(ch));
      }
      chain_ = cit->second;
      auto root = build_cell(spec, spec.cell_type, static_cast<long long>(i), "", -1,
                             fmt::format("physical_cells[{}]", i));
      if (!root) return std::move(root).error();
      s_->free_push(*root);
      for (int n : s_->p.raw()[uz(*root)].nodes) {
        if (node_seen_.size() <= uz(n)) node_seen_.resize(uz(n) + 1, 0);
        if (node_seen_[uz(n)] != 0) continue;
        node_seen_[uz(n)] = 1;
        node_init_order_.push_back(n);
      }
    }
    return ok();
  }

  result<int> build_cell(const physical_cell_spec& spec, const std::string& type,
                         long long default_index, const std::string& parent_address, int node,
                         const std::string& where) {
    const auto& e = elements_.at(type);
    std::string own = spec.address.empty() ? std::to_string(default_index) : spec.address;
    std::string full =
        parent_address.empty() || spec.absolute_address ? own : parent_address + "/" + own;
    if (e.has_node && !e.multi_nodes) node = node_id(last_segment(full));
    int id = static_cast<int>(s_->p.size());
    {
      pcell c;
      c.chain = chain_;
      c.level = e.level;
      c.address = full;
      c.at_or_above_node = e.has_node;
      c.total_leaves = e.leaf_number;
      c.pinned = !spec.pinned_id.empty();
      s_->p.raw().push_back(std::move(c));
    }
    s_->chains.raw()[uz(chain_)].full[uz(e.level)].push_back(id);
    if (!spec.pinned_id.empty()) {
      auto [pit, fresh] = pinned_.emplace(spec.pinned_id, id);
      if (!fresh)
        return make_error(errc::invalid_argument,
                          "pinned cell id {} appears twice: cell {} and cell {} ({})",
                          spec.pinned_id, s_->p.raw()[uz(pit->second)].address, full, where);
    }
    if (e.level == 1) {
      std::string seg = last_segment(full);
      int index = 0;
      auto [ptr, ec] = std::from_chars(seg.data(), seg.data() + seg.size(), index);
      if (ec != std::errc() || ptr != seg.data() + seg.size())
        return make_error(errc::invalid_argument, "leaf cell address {} ({}) is not an integer",
                          full, where);
      if (node < 0)
        return make_error(errc::invalid_argument, "leaf cell {} ({}) is not under a node", full,
                          where);
      auto& c = s_->p.raw()[uz(id)];
      c.leaf_index = index;
      c.nodes = {node};
      // One GPU is one leaf cell: a (node, index) pair may appear once in the whole config, not
      // only once per chain (hivedscheduler checks neither and binds the GPU twice).
      const std::uint64_t gpu = (std::uint64_t{static_cast<std::uint32_t>(node)} << 32) |
                                static_cast<std::uint32_t>(index);
      if (auto [known, fresh] = gpu_leaf_.emplace(gpu, id); !fresh) {
        const auto& o = s_->p.raw()[uz(known->second)];
        return make_error(errc::invalid_argument,
                          "GPU {} of node {} appears twice: leaf cell {} in chain {} and leaf cell "
                          "{} ({}) in chain {}",
                          index, s_->node_names[uz(node)], o.address,
                          s_->chains.raw()[uz(o.chain)].name, full, where,
                          s_->chains.raw()[uz(chain_)].name);
      }
      s_->node_leaves[uz(node)].push_back(id);
      return id;
    }
    static const physical_cell_spec empty{};
    if (!spec.children.empty() && spec.children.size() != uz(e.child_count))
      return make_error(errc::invalid_argument, "cell {} ({}) has {} children, type {} needs {}",
                        full, where, spec.children.size(), type, e.child_count);
    long long base = (e.has_node && !e.multi_nodes) ? 0 : default_index;
    std::vector<int> children;
    std::vector<int> nodes;
    for (int i = 0; i < e.child_count; ++i) {
      const auto& cs = spec.children.empty() ? empty : spec.children[uz(i)];
      auto child = build_cell(cs, e.child, base * e.child_count + i, full, node,
                              fmt::format("{}.children[{}]", where, i));
      if (!child) return child;
      s_->p.raw()[uz(*child)].parent = id;
      children.push_back(*child);
      if (e.multi_nodes) {
        for (int n : s_->p.raw()[uz(*child)].nodes) nodes.push_back(n);
      }
    }
    auto& c = s_->p.raw()[uz(id)];
    c.children = std::move(children);
    c.nodes = e.multi_nodes ? std::move(nodes) : std::vector<int>{node};
    return id;
  }

  void build_chain_order() {
    for (std::size_t c = 0; c < s_->chains.size(); ++c)
      s_->leaf_type_chains[s_->chains.raw()[c].leaf_type].push_back(static_cast<int>(c));
    for (auto& [leaf, list] : s_->leaf_type_chains) {
      auto it = cfg_.opts.chain_order.find(leaf);
      if (it != cfg_.opts.chain_order.end()) {
        // 0 = not a chain of this leaf type, 1 = one of them, 2 = already ordered.
        std::vector<char> mark(s_->chains.size(), 0);
        for (int c : list) mark[uz(c)] = 1;
        std::vector<int> ordered;
        for (const auto& name : it->second) {
          auto ci = s_->chain_index.find(name);
          if (ci == s_->chain_index.end() || mark[uz(ci->second)] != 1) continue;
          mark[uz(ci->second)] = 2;
          ordered.push_back(ci->second);
        }
        for (int c : list)
          if (mark[uz(c)] == 1) ordered.push_back(c);
        list = std::move(ordered);
      } else {
        std::sort(list.begin(), list.end(), [&](int a, int b) {
          return s_->chains.raw()[uz(a)].name > s_->chains.raw()[uz(b)].name;
        });
      }
    }
  }

  int build_virtual_cell(int vc, int chain, const std::string& type, const std::string& address,
                         int root, bool preassigned_level, level_lists& full) {
    const auto& e = elements_.at(type);
    int id = static_cast<int>(s_->v.size());
    vcell c;
    c.vc = vc;
    c.chain = chain;
    c.level = e.level;
    c.address = address;
    c.preassigned = root < 0 ? id : root;
    c.at_or_above_node = e.has_node;
    c.total_leaves = e.leaf_number;
    s_->v.raw().push_back(std::move(c));
    if (full.size() <= uz(e.level)) full.resize(uz(e.level + 1));
    full[uz(e.level)].push_back(id);
    if (e.level == 1) return id;
    long long offset = 0;
    if (!preassigned_level) {
      std::string seg = last_segment(address);
      long long last = 0;
      std::from_chars(seg.data(), seg.data() + seg.size(), last);
      offset = last * e.child_count;
    }
    std::vector<int> children;
    for (int i = 0; i < e.child_count; ++i) {
      int child = build_virtual_cell(vc, chain, e.child, fmt::format("{}/{}", address, offset + i),
                                     root < 0 ? id : root, false, full);
      s_->v.raw()[uz(child)].parent = id;
      s_->v.raw()[uz(child)].list_index = i;
      children.push_back(child);
    }
    s_->v.raw()[uz(id)].children = std::move(children);
    return id;
  }

  /// A VC's demand: preassigned cells at a level of a chain (pinned cells included), counted
  /// before any virtual cell is built.
  struct vc_demand {
    int vc = 0;
    int chain = 0;
    int level = 1;
    std::string root_type;
    std::int64_t count = 0;
    std::string pinned_id;  ///< non-empty for a pinned cell
    int pinned_cell = -1;
  };

  /// Checks every VC spec (names, chains, types, counts, pinned ids) and records its demands;
  /// builds no virtual cell, so init_cell_nums() refuses an infeasible assignment first (a VC
  /// asking for 2^31-1 cells never allocates them).
  result<void> count_virtual() {
    std::vector<const virtual_cluster_spec*> specs;
    for (const auto& vc : cfg_.virtual_clusters) specs.push_back(&vc);
    std::sort(specs.begin(), specs.end(),
              [](const auto* a, const auto* b) { return a->name < b->name; });
    std::map<std::string, std::string> pin_owner;  // pinned id -> VC
    for (const auto* spec : specs) {
      if (spec->name.empty()) return make_error(errc::invalid_argument, "VC with empty name");
      if (!s_->vc_index.emplace(spec->name, static_cast<int>(s_->vcs.size())).second)
        return make_error(errc::invalid_argument, "VC {} defined twice", spec->name);
      int vc = static_cast<int>(s_->vcs.size());
      s_->vcs.push_back(vc_info{spec->name, {}, {}});
      for (const auto& cell : spec->virtual_cells) {
        auto first_dot = cell.type_path.find('.');
        std::string chain_name = cell.type_path.substr(0, first_dot);
        std::string root_type = last_segment_dot(cell.type_path);
        auto ci = s_->chain_index.find(chain_name);
        if (ci == s_->chain_index.end())
          return make_error(
              errc::failed_precondition,
              "Illegal initial VC assignment: Chain {} does not exists in physical cluster",
              chain_name);
        const auto& ch = s_->chains.raw()[uz(ci->second)];
        auto ei = elements_.find(root_type);
        if (ei == elements_.end() || uz(ei->second.level) >= ch.level_type.size() ||
            ch.level_type[uz(ei->second.level)] != root_type)
          return make_error(errc::invalid_argument,
                            "cellType {} in VirtualCells of VC {} is not a type of chain {}",
                            root_type, spec->name, chain_name);
        if (cell.count < 0)
          return make_error(errc::invalid_argument, "VC {} has a negative cell count for {}",
                            spec->name, cell.type_path);
        vc_chain_of(vc, ci->second);
        demands_.push_back(
            vc_demand{vc, ci->second, ei->second.level, std::move(root_type), cell.count, {}, -1});
      }
      for (const auto& pid : spec->pinned_cells) {
        auto pi = pinned_.find(pid);
        if (pi == pinned_.end())
          return make_error(errc::invalid_argument,
                            "pinned cell not found in physicalCells: VC: {}, ID: {}", spec->name,
                            pid);
        auto [owner, fresh] = pin_owner.emplace(pid, spec->name);
        if (!fresh)
          return make_error(errc::invalid_argument,
                            "pinned cell {} is assigned twice: to VC {} and to VC {}", pid,
                            owner->second, spec->name);
        const auto& pc = s_->p.raw()[uz(pi->second)];
        vc_chain_of(vc, pc.chain);
        demands_.push_back(vc_demand{vc, pc.chain, pc.level,
                                     s_->chains.raw()[uz(pc.chain)].level_type[uz(pc.level)], 1,
                                     pid, pi->second});
      }
    }
    return ok();
  }

  /// Builds every VC's virtual cells from the demands count_virtual() checked: non-pinned cells
  /// in spec order, then pinned cells (virtual addresses VC/0, VC/1, ... in that order).
  void build_virtual() {
    std::vector<int> num_cells(s_->vcs.size(), 0);
    for (const auto& d : demands_) {
      auto& vch = vc_chain_of(d.vc, d.chain);
      vch.vc_free[uz(d.level)] += static_cast<int>(d.count);
      const std::string& vc_name = s_->vcs[uz(d.vc)].name;
      int& numbered = num_cells[uz(d.vc)];
      if (d.pinned_cell < 0) {
        for (std::int64_t i = 0; i < d.count; ++i) {
          int root =
              build_virtual_cell(d.vc, d.chain, d.root_type,
                                 fmt::format("{}/{}", vc_name, numbered), -1, true, vch.full);
          s_->v.raw()[uz(root)].list_index = static_cast<int>(vch.preassigned[uz(d.level)].size());
          vch.preassigned[uz(d.level)].push_back(root);
          vch.has_non_pinned = true;
          ++numbered;
        }
        continue;
      }
      pinned_info info;
      info.chain = d.chain;
      info.pcell = d.pinned_cell;
      info.vroot = build_virtual_cell(d.vc, d.chain, d.root_type,
                                      fmt::format("{}/{}", vc_name, numbered), -1, true, info.full);
      ++numbered;
      s_->vcs[uz(d.vc)].pinned.emplace(d.pinned_id, std::move(info));
    }
  }

  static std::string last_segment_dot(const std::string& path) {
    auto pos = path.rfind('.');
    return pos == std::string::npos ? path : path.substr(pos + 1);
  }

  vc_chain& vc_chain_of(int vc, int chain) {
    auto [it, inserted] = s_->vcs[uz(vc)].chains.try_emplace(chain);
    if (inserted) {
      auto n = uz(s_->chains.raw()[uz(chain)].top + 1);
      it->second.vc_free.assign(n, 0);
      it->second.full.resize(n);
      it->second.preassigned.resize(n);
      it->second.doomed.resize(n);
      it->second.first_unbound.assign(n, 0);
    }
    return it->second;
  }

  /// hivedscheduler's initCellNums: the initial VC assignment must fit each chain, level by
  /// level from the top. Counts are 64-bit: VC counts are up to INT_MAX each.
  result<void> init_cell_nums() {
    std::vector<std::vector<std::int64_t>> demand(s_->chains.size());
    for (std::size_t c = 0; c < s_->chains.size(); ++c)
      demand[c].assign(uz(s_->chains.raw()[c].top + 1), 0);
    for (const auto& d : demands_) demand[uz(d.chain)][uz(d.level)] += d.count;
    for (std::size_t c = 0; c < s_->chains.size(); ++c) {
      auto& ch = s_->chains.raw()[c];
      int top = ch.top;
      std::int64_t available = static_cast<std::int64_t>(ch.full[uz(top)].size());
      ch.total_left[uz(top)] = static_cast<int>(available);
      for (int l = top; l >= 1; --l) {
        std::int64_t left = available - demand[c][uz(l)];
        if (left < 0)
          return make_error(errc::failed_precondition,
                            "Illegal initial VC assignment: Insufficient physical cells at chain "
                            "{} level {}: {} needed, {} available",
                            ch.name, l, demand[c][uz(l)], available);
        if (l > 1) {
          available = left * ch.level_children[uz(l)];
          ch.total_left[uz(l - 1)] = ch.total_left[uz(l)] * ch.level_children[uz(l)];
        }
      }
      // Every level fits, so each sum is at most the chain's cells at that level (an int).
      for (int l = 1; l <= top; ++l) ch.all_vc_free[uz(l)] = static_cast<int>(demand[c][uz(l)]);
    }
    return ok();
  }

  void build_schedulers() {
    for (std::size_t c = 0; c < s_->chains.size(); ++c) {
      topo_scheduler t;
      t.is_virtual = false;
      t.cross_priority_pack = false;
      t.chain = static_cast<int>(c);
      s_->build_view(t, s_->chains.raw()[c].full);
      s_->opp.push_back(std::move(t));
    }
    for (auto& vc : s_->vcs) {
      for (auto& [chain, vch] : vc.chains) {
        if (!vch.has_non_pinned) continue;
        topo_scheduler t;
        t.chain = chain;
        s_->build_view(t, vch.full);
        vch.sched = std::move(t);
      }
      for (auto& [pid, info] : vc.pinned) {
        info.sched.chain = info.chain;
        s_->build_view(info.sched, info.full);
      }
    }
  }

  void init_pinned() {
    for (std::size_t vc = 0; vc < s_->vcs.size(); ++vc) {
      for (auto& [pid, info] : s_->vcs[vc].pinned) {
        s_->allocate_preassigned(info.pcell, static_cast<int>(vc), nullptr, false);
        s_->bind_cell(info.pcell, info.vroot);
      }
    }
  }

  const config& cfg_;
  const config_limits& limits_;
  std::unique_ptr<scheduler_state> s_;
  std::unordered_map<std::string, const cell_type_spec*> specs_;
  std::unordered_map<std::string, chain_element> elements_;
  std::unordered_map<std::string, int> pinned_;
  std::vector<vc_demand> demands_;  ///< VCs ascending, each VC's cells then its pinned cells
  std::vector<int> node_init_order_;
  std::vector<char> node_seen_;  ///< by node id: listed in node_init_order_
  /// (node << 32 | GPU index) -> its leaf cell: one GPU, one leaf cell (O(1) per leaf).
  std::unordered_map<std::uint64_t, int> gpu_leaf_;
  int chain_ = 0;
};

}  // namespace

result<std::unique_ptr<scheduler_state>> build_state(const config& cfg,
                                                     const config_limits& limits) {
  return builder(cfg, limits).run();
}

}  // namespace hetsched::hived
