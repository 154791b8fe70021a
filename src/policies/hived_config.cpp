// SPDX-License-Identifier: MIT
// HiveD configuration: cell chains, address inference, physical and virtual cells, and the
// initial VC safety check (hivedscheduler pkg/api/config.go and pkg/algorithm/config.go).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
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
};

std::string last_segment(const std::string& address) {
  auto pos = address.rfind('/');
  return pos == std::string::npos ? address : address.substr(pos + 1);
}

class builder {
 public:
  explicit builder(const config& cfg) : cfg_(cfg), s_(std::make_unique<scheduler_state>()) {}

  result<std::unique_ptr<scheduler_state>> run() {
    HETSCHED_TRY(build_types());
    HETSCHED_TRY(build_physical());
    build_chain_order();
    HETSCHED_TRY(build_virtual());
    HETSCHED_TRY(init_cell_nums());
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
    for (const auto& t : cfg_.cell_types) {
      std::set<std::string> seen;
      HETSCHED_TRY(add_element(t.name, seen));
    }
    return ok();
  }

  result<void> add_element(const std::string& type, std::set<std::string>& seen) {
    if (elements_.count(type) != 0) return ok();
    auto it = specs_.find(type);
    if (it == specs_.end()) {
      elements_[type] = chain_element{type, 1, "", 0, false, false, type, 1};
      return ok();
    }
    if (!seen.insert(type).second)
      return make_error(errc::invalid_argument, "cell type {} is its own descendant", type);
    const auto& spec = *it->second;
    HETSCHED_TRY(add_element(spec.child_type, seen));
    const auto& child = elements_.at(spec.child_type);
    elements_[type] = chain_element{type,
                                    child.level + 1,
                                    child.type,
                                    spec.child_count,
                                    child.has_node || spec.node_level,
                                    child.has_node,
                                    child.leaf_type,
                                    child.leaf_number * spec.child_count};
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

  result<void> build_physical() {
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
        s_->chains.push_back(std::move(ch));
      }
      chain_ = cit->second;
      auto root = build_cell(spec, spec.cell_type, static_cast<long long>(i), "", -1,
                             fmt::format("physical_cells[{}]", i));
      if (!root) return std::move(root).error();
      s_->free_push(*root);
      for (int n : s_->p[uz(*root)].nodes) {
        if (std::find(node_init_order_.begin(), node_init_order_.end(), n) ==
            node_init_order_.end())
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
      s_->p.push_back(std::move(c));
    }
    s_->chains[uz(chain_)].full[uz(e.level)].push_back(id);
    if (!spec.pinned_id.empty()) {
      auto [pit, fresh] = pinned_.emplace(spec.pinned_id, id);
      if (!fresh)
        return make_error(errc::invalid_argument,
                          "pinned cell id {} appears twice: cell {} and cell {} ({})",
                          spec.pinned_id, s_->p[uz(pit->second)].address, full, where);
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
      auto& c = s_->p[uz(id)];
      c.leaf_index = index;
      c.nodes = {node};
      // One GPU is one leaf cell: a (node, index) pair may appear once in the whole config, not
      // only once per chain (hivedscheduler checks neither and binds the GPU twice).
      for (int other : s_->node_leaves[uz(node)]) {
        const auto& o = s_->p[uz(other)];
        if (o.leaf_index != index) continue;
        return make_error(errc::invalid_argument,
                          "GPU {} of node {} appears twice: leaf cell {} in chain {} and leaf cell "
                          "{} ({}) in chain {}",
                          index, s_->node_names[uz(node)], o.address, s_->chains[uz(o.chain)].name,
                          full, where, s_->chains[uz(chain_)].name);
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
      s_->p[uz(*child)].parent = id;
      children.push_back(*child);
      if (e.multi_nodes) {
        for (int n : s_->p[uz(*child)].nodes) nodes.push_back(n);
      }
    }
    auto& c = s_->p[uz(id)];
    c.children = std::move(children);
    c.nodes = e.multi_nodes ? std::move(nodes) : std::vector<int>{node};
    return id;
  }

  void build_chain_order() {
    for (std::size_t c = 0; c < s_->chains.size(); ++c)
      s_->leaf_type_chains[s_->chains[c].leaf_type].push_back(static_cast<int>(c));
    for (auto& [leaf, list] : s_->leaf_type_chains) {
      auto it = cfg_.opts.chain_order.find(leaf);
      if (it != cfg_.opts.chain_order.end()) {
        std::vector<int> ordered;
        for (const auto& name : it->second) {
          auto ci = s_->chain_index.find(name);
          if (ci != s_->chain_index.end() && list_contains(list, ci->second) &&
              !list_contains(ordered, ci->second))
            ordered.push_back(ci->second);
        }
        for (int c : list)
          if (!list_contains(ordered, c)) ordered.push_back(c);
        list = std::move(ordered);
      } else {
        std::sort(list.begin(), list.end(),
                  [&](int a, int b) { return s_->chains[uz(a)].name > s_->chains[uz(b)].name; });
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
    s_->v.push_back(std::move(c));
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
      s_->v[uz(child)].parent = id;
      s_->v[uz(child)].list_index = i;
      children.push_back(child);
    }
    s_->v[uz(id)].children = std::move(children);
    return id;
  }

  result<void> build_virtual() {
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
      int num_cells = 0;
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
        const auto& ch = s_->chains[uz(ci->second)];
        auto ei = elements_.find(root_type);
        if (ei == elements_.end() || uz(ei->second.level) >= ch.level_type.size() ||
            ch.level_type[uz(ei->second.level)] != root_type)
          return make_error(errc::invalid_argument,
                            "cellType {} in VirtualCells of VC {} is not a type of chain {}",
                            root_type, spec->name, chain_name);
        if (cell.count < 0)
          return make_error(errc::invalid_argument, "VC {} has a negative cell count for {}",
                            spec->name, cell.type_path);
        auto& vch = vc_chain_of(vc, ci->second);
        vch.vc_free[uz(ei->second.level)] += cell.count;
        for (int i = 0; i < cell.count; ++i) {
          int root =
              build_virtual_cell(vc, ci->second, root_type,
                                 fmt::format("{}/{}", spec->name, num_cells), -1, true, vch.full);
          s_->v[uz(root)].list_index =
              static_cast<int>(vch.preassigned[uz(ei->second.level)].size());
          vch.preassigned[uz(ei->second.level)].push_back(root);
          vch.has_non_pinned = true;
          ++num_cells;
        }
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
        const auto& pc = s_->p[uz(pi->second)];
        auto& vch = vc_chain_of(vc, pc.chain);
        vch.vc_free[uz(pc.level)] += 1;
        pinned_info info;
        info.chain = pc.chain;
        info.pcell = pi->second;
        info.vroot =
            build_virtual_cell(vc, pc.chain, s_->chains[uz(pc.chain)].level_type[uz(pc.level)],
                               fmt::format("{}/{}", spec->name, num_cells), -1, true, info.full);
        ++num_cells;
        s_->vcs[uz(vc)].pinned.emplace(pid, std::move(info));
      }
    }
    return ok();
  }

  static std::string last_segment_dot(const std::string& path) {
    auto pos = path.rfind('.');
    return pos == std::string::npos ? path : path.substr(pos + 1);
  }

  vc_chain& vc_chain_of(int vc, int chain) {
    auto [it, inserted] = s_->vcs[uz(vc)].chains.try_emplace(chain);
    if (inserted) {
      auto n = uz(s_->chains[uz(chain)].top + 1);
      it->second.vc_free.assign(n, 0);
      it->second.full.resize(n);
      it->second.preassigned.resize(n);
      it->second.doomed.resize(n);
      it->second.first_unbound.assign(n, 0);
    }
    return it->second;
  }

  result<void> init_cell_nums() {
    for (const auto& vc : s_->vcs)
      for (const auto& [chain, vch] : vc.chains)
        for (std::size_t l = 1; l < vch.vc_free.size(); ++l)
          s_->chains[uz(chain)].all_vc_free[l] += vch.vc_free[l];
    for (auto& ch : s_->chains) {
      int top = ch.top;
      int available = static_cast<int>(ch.full[uz(top)].size());
      ch.total_left[uz(top)] = available;
      for (int l = top; l >= 1; --l) {
        int left = available - ch.all_vc_free[uz(l)];
        if (left < 0)
          return make_error(errc::failed_precondition,
                            "Illegal initial VC assignment: Insufficient physical cells at chain "
                            "{} level {}: {} needed, {} available",
                            ch.name, l, ch.all_vc_free[uz(l)], available);
        if (l > 1) {
          available = left * ch.level_children[uz(l)];
          ch.total_left[uz(l - 1)] = ch.total_left[uz(l)] * ch.level_children[uz(l)];
        }
      }
    }
    return ok();
  }

  void build_schedulers() {
    for (std::size_t c = 0; c < s_->chains.size(); ++c) {
      topo_scheduler t;
      t.is_virtual = false;
      t.cross_priority_pack = false;
      t.chain = static_cast<int>(c);
      s_->build_view(t, s_->chains[c].full);
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
  std::unique_ptr<scheduler_state> s_;
  std::unordered_map<std::string, const cell_type_spec*> specs_;
  std::unordered_map<std::string, chain_element> elements_;
  std::unordered_map<std::string, int> pinned_;
  std::vector<int> node_init_order_;
  int chain_ = 0;
};

}  // namespace

result<std::unique_ptr<scheduler_state>> build_state(const config& cfg) {
  return builder(cfg).run();
}

}  // namespace hetsched::hived
