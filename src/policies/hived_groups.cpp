// SPDX-License-Identifier: MIT
// The search that places constrained HiveD requests (options::cell_type_requests): whole cells
// of a requested type and hierarchical within-one-cell groups. An exhaustive, deterministic
// backtracking search over the cells of the requested levels and the nodes inside them; the
// order and the pruning are described in docs/hived.md ("Options") and hived.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

/// Upper bound on the cell and node trials of one constrained search (both passes).
constexpr long long group_search_step_limit = 1LL << 15;

/// Where a constrained search looks: the virtual cells of a VC chain or pinned cell (guaranteed)
/// or a chain's physical cells (opportunistic), with the view listing their node cells.
struct search_arena {
  bool is_virtual = true;
  int chain = 0;
  const level_lists* full = nullptr;
  const topo_scheduler* view = nullptr;
};

enum class search_outcome : unsigned char { found, none, step_limit };

/// Read access to the virtual or the physical cell arena.
struct arena_cells {
  const scheduler_state& s;
  bool is_virtual;
  [[nodiscard]] int level(int c) const { return is_virtual ? s.v[uz(c)].level : s.p[uz(c)].level; }
  [[nodiscard]] int parent(int c) const {
    return is_virtual ? s.v[uz(c)].parent : s.p[uz(c)].parent;
  }
  [[nodiscard]] const std::vector<int>& children(int c) const {
    return is_virtual ? s.v[uz(c)].children : s.p[uz(c)].children;
  }
  [[nodiscard]] int priority(int c) const {
    return is_virtual ? s.v[uz(c)].priority : s.p[uz(c)].priority;
  }
  /// The bound physical cell (the cell itself in the physical arena), -1 if unbound.
  [[nodiscard]] int physical(int c) const { return is_virtual ? s.v[uz(c)].pcell : c; }
  /// The ancestor-or-self of `c` at `level`, -1 if none.
  [[nodiscard]] int ancestor_at(int c, int at_level) const {
    while (c >= 0 && level(c) < at_level) c = parent(c);
    return c >= 0 && level(c) == at_level ? c : -1;
  }
};

/// A group of the request tree, in preorder.
struct flat_group {
  const group_node* node = nullptr;
  int parent = -1;            ///< index of the enclosing group, -1 for the root
  int end = 0;                ///< one past the last group of its subtree
  std::vector<int> children;  ///< indices of the child groups
  std::vector<int> pods;      ///< its own pods (indices into pods_), largest first
  int cell = -1;              ///< its within cell, else its enclosing group's; -1 = whole arena
  std::vector<int> nodes;     ///< node cells its own pods may use (set while packing them)
};

struct pod_item {
  int units = 0;
  int out_order = 0;  ///< position among the pods in group-tree preorder
  int node = -1;      ///< node cell it is assigned to
  int within = -1;    ///< a below-node cell it must sit in, -1 = anywhere on the node
};

class group_search {
 public:
  group_search(scheduler_state& s, const cell_request& req, const search_arena& arena,
               const node_set& suggested, bool ignore,
               const std::function<bool(const placement&)>& accept, long long& steps)
      : s_(s),
        req_(req),
        arena_(arena),
        cells_{s, arena.is_virtual},
        suggested_(suggested),
        ignore_(ignore),
        accept_(accept),
        steps_(steps) {
    add_group(req.root, -1);
    for (const auto& n : arena.view->view) {
      node_slot_.emplace(n.cell, static_cast<int>(nodes_.size()));
      nodes_.push_back(n.cell);
    }
    const auto& ch = s.chains[uz(arena.chain)];
    signature_level_ = ch.node_level;
    for (const auto& g : groups_)
      if (g.node->within_level > 0)
        signature_level_ = std::min(signature_level_, g.node->within_level);
    signature_level_ = std::max(signature_level_, req.level);
  }

  search_outcome run(int at) {
    at_ = at;
    avail_.clear();
    used_.clear();
    failed_.clear();
    limit_ = false;
    total_avail_ = 0;
    total_used_ = 0;
    for (int n : nodes_) total_avail_ += avail(n);
    if (place_group(0, [this] { return complete(); })) return search_outcome::found;
    return limit_ ? search_outcome::step_limit : search_outcome::none;
  }

 private:
  void add_group(const group_node& g, int parent) {
    const int index = static_cast<int>(groups_.size());
    groups_.emplace_back();
    groups_.back().node = &g;
    groups_.back().parent = parent;
    if (parent >= 0) groups_[uz(parent)].children.push_back(index);
    std::vector<int> own;
    for (const auto& m : g.members)
      for (int i = 0; i < m.pods; ++i) {
        own.push_back(static_cast<int>(pods_.size()));
        pods_.push_back(pod_item{m.leaf_cells, static_cast<int>(pods_.size()), -1, -1});
      }
    std::stable_sort(own.begin(), own.end(),
                     [&](int a, int b) { return pods_[uz(a)].units > pods_[uz(b)].units; });
    groups_[uz(index)].pods = std::move(own);
    for (const auto& c : g.children) add_group(c, index);
    groups_[uz(index)].end = static_cast<int>(groups_.size());
  }

  /// The node cell at or above `c`, -1 if `c` is above the node cells.
  [[nodiscard]] int node_of(int c) const {
    for (; c >= 0; c = cells_.parent(c))
      if (node_slot_.count(c) != 0) return c;
    return -1;
  }

  [[nodiscard]] bool node_usable(int node) const {
    const int pc = cells_.physical(node);
    if (pc < 0) return true;
    const auto& cell = s_.p[uz(pc)];
    return cell.healthy && (ignore_ || suggested_.contains(cell.nodes[0]));
  }

  /// Whether every leaf under `c` is free (`free_only`) or usable at the pass priority.
  [[nodiscard]] bool leaves_below(int c, bool free_only) const {
    if (cells_.level(c) == 1) {
      const int q = cells_.priority(c);
      return free_only ? q == free_priority : q < at_;
    }
    for (int child : cells_.children(c))
      if (!leaves_below(child, free_only)) return false;
    return true;
  }

  /// Units (cells of the unit level whose leaves are all usable) under `c` on usable nodes.
  int avail(int c) {
    if (auto it = avail_.find(c); it != avail_.end()) return it->second;
    int n = 0;
    const int level = cells_.level(c);
    if (level == req_.level) {
      const int node = node_of(c);
      n = node >= 0 && node_usable(node) && leaves_below(c, false) ? 1 : 0;
    } else if (level > req_.level) {
      for (int child : cells_.children(c)) n += avail(child);
    }
    avail_.emplace(c, n);
    return n;
  }

  int remaining(int c) {
    auto it = used_.find(c);
    return avail(c) - (it == used_.end() ? 0 : it->second);
  }

  void reserve(int from, int units) {
    for (int c = from; c >= 0; c = cells_.parent(c)) used_[c] += units;
    total_used_ += units;
  }

  /// Canonical shape of the remaining units under `c` down to signature_level_ (children sorted)
  /// plus the binding state of node cells: equal signatures are interchangeable.
  void signature(int c, std::vector<int>& out) {
    out.push_back(cells_.level(c));
    out.push_back(remaining(c));
    if (node_slot_.count(c) != 0) out.push_back(cells_.physical(c) >= 0 ? 1 : 0);
    if (cells_.level(c) <= signature_level_) return;
    std::vector<std::vector<int>> parts;
    for (int child : cells_.children(c)) {
      parts.emplace_back();
      signature(child, parts.back());
    }
    std::sort(parts.begin(), parts.end());
    for (const auto& part : parts) {
      out.push_back(static_cast<int>(part.size()));
      out.insert(out.end(), part.begin(), part.end());
    }
  }

  /// The lowest within level above `level` among groups from `first` on (not yet placed), or 0.
  [[nodiscard]] int pending_level_above(int first, int level) const {
    int out = 0;
    for (std::size_t i = uz(first); i < groups_.size(); ++i) {
      const int w = groups_[i].node->within_level;
      if (w > level && (out == 0 || w < out)) out = w;
    }
    return out;
  }

  /// The interchangeability key of candidate cell `c` when groups from `first` on are pending.
  std::vector<int> symmetry_key(int c, int first) {
    std::vector<int> key;
    const int above = pending_level_above(first, cells_.level(c));
    key.push_back(above == 0 ? -1 : cells_.ancestor_at(c, above));
    // a cell below the node level shares its node with the rest of that node
    const int node = node_of(c);
    key.push_back(node == c ? -1 : node);
    signature(c, key);
    return key;
  }

  bool step() {
    if (++steps_ > group_search_step_limit) limit_ = true;
    return !limit_;
  }

  bool place_group(int gi, const std::function<bool()>& next) {
    flat_group& g = groups_[uz(gi)];
    const int region = g.parent < 0 ? -1 : groups_[uz(g.parent)].cell;
    const int w = g.node->within_level;
    if (w == 0 || (region >= 0 && cells_.level(region) == w)) {
      g.cell = region;
      return place_children(gi, 0, next);
    }
    std::vector<std::pair<int, int>> candidates;  // (remaining, cell), in level-list order
    if (uz(w) < arena_.full->size()) {
      const auto& level_cells = (*arena_.full)[uz(w)];
      for (std::size_t i = 0; i < level_cells.size(); ++i) {
        const int c = level_cells[i];
        if (region >= 0 && cells_.ancestor_at(c, cells_.level(region)) != region) continue;
        const int left = remaining(c);
        if (left >= g.node->units) candidates.emplace_back(left, c);
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::set<std::vector<int>> tried;
    for (const auto& [left, c] : candidates) {
      if (!tried.insert(symmetry_key(c, groups_[uz(gi)].end)).second) continue;
      if (!step()) return false;
      groups_[uz(gi)].cell = c;
      if (place_children(gi, 0, next)) return true;
      if (limit_) return false;
    }
    return false;
  }

  bool place_children(int gi, std::size_t k, const std::function<bool()>& next) {
    if (k == groups_[uz(gi)].children.size()) {
      set_nodes(gi);
      return pack(gi, 0, next);
    }
    const int child = groups_[uz(gi)].children[k];
    return place_group(child, [&, gi, k] { return place_children(gi, k + 1, next); });
  }

  /// The node cells the group's own pods may use (its cell's nodes, or the node holding it).
  void set_nodes(int gi) {
    flat_group& g = groups_[uz(gi)];
    g.nodes.clear();
    if (g.cell < 0) {
      g.nodes = nodes_;
      return;
    }
    if (int n = node_of(g.cell); n >= 0) {
      g.nodes.push_back(n);
      return;
    }
    std::vector<int> stack{g.cell};
    while (!stack.empty()) {
      const int c = stack.back();
      stack.pop_back();
      if (node_slot_.count(c) != 0) {
        g.nodes.push_back(c);
        continue;
      }
      const auto& kids = cells_.children(c);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
    }
    std::sort(g.nodes.begin(), g.nodes.end(),
              [&](int a, int b) { return node_slot_.at(a) < node_slot_.at(b); });
  }

  /// The search state that decides the rest of the search: position, chosen cells, usage.
  std::vector<int> state_key(int gi, std::size_t j) const {
    std::vector<int> key{gi, static_cast<int>(j)};
    for (int i = 0; i <= gi; ++i) key.push_back(groups_[uz(i)].cell);
    std::vector<std::pair<int, int>> used;
    for (const auto& [c, n] : used_)
      if (n != 0) used.emplace_back(c, n);
    std::sort(used.begin(), used.end());
    for (const auto& [c, n] : used) {
      key.push_back(c);
      key.push_back(n);
    }
    return key;
  }

  bool pack(int gi, std::size_t j, const std::function<bool()>& next) {
    const flat_group& g = groups_[uz(gi)];
    if (j == g.pods.size()) return next();
    long long left = 0;
    for (std::size_t k = j; k < g.pods.size(); ++k) left += pods_[uz(g.pods[k])].units;
    if (left > (g.cell < 0 ? total_avail_ - total_used_ : remaining(g.cell))) return false;
    pod_item& pod = pods_[uz(g.pods[j])];
    // a cell below the node level binds the pod to leaves inside it
    const int inside =
        g.cell >= 0 && node_of(g.cell) != g.cell && node_of(g.cell) >= 0 ? g.cell : -1;
    std::vector<std::pair<int, int>> candidates;  // (remaining, node), in node order
    for (int n : g.nodes) {
      const int node_left = remaining(n);
      if (node_left < pod.units) continue;
      bool fits = true;
      for (int c = inside; c >= 0 && c != n; c = cells_.parent(c))
        fits = fits && remaining(c) >= pod.units;
      if (fits) candidates.emplace_back(node_left, n);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::set<std::vector<int>> tried;
    for (const auto& [node_left, n] : candidates) {
      if (inside < 0 && !tried.insert(symmetry_key(n, g.end)).second) continue;
      if (!step()) return false;
      reserve(inside >= 0 ? inside : n, pod.units);
      pod.node = n;
      pod.within = inside;
      std::vector<int> key = state_key(gi, j + 1);
      bool done = false;
      if (failed_.count(key) == 0) {
        done = pack(gi, j + 1, next);
        if (!done && !limit_) failed_.insert(std::move(key));
      }
      if (done) return true;
      reserve(inside >= 0 ? inside : n, -pod.units);
      pod.node = -1;
      pod.within = -1;
      if (limit_) return false;
    }
    return false;
  }

  /// Units under `c` usable for a pod: free ones first, then the others, each in tree order.
  void collect_units(int c, std::vector<int>& free, std::vector<int>& others) const {
    if (cells_.level(c) == req_.level) {
      if (taken_.count(c) != 0 || !leaves_below(c, false)) return;
      (leaves_below(c, true) ? free : others).push_back(c);
      return;
    }
    for (int child : cells_.children(c)) collect_units(child, free, others);
  }

  void leaves_of(int c, std::vector<int>& out) const {
    if (cells_.level(c) == 1) {
      out.push_back(c);
      return;
    }
    for (int child : cells_.children(c)) leaves_of(child, out);
  }

  /// Picks every pod's units (pods bound to a below-node cell first, deepest first; then the
  /// others, each by the lowest common ancestor) and offers the layout to `accept`.
  bool complete() {
    const auto& ch = s_.chains[uz(arena_.chain)];
    std::vector<int> order(pods_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    auto depth = [&](const pod_item& p) {
      return p.within >= 0 ? cells_.level(p.within) : ch.top + 1;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return depth(pods_[uz(a)]) < depth(pods_[uz(b)]); });
    taken_.clear();
    std::vector<std::vector<int>> leaves(pods_.size());
    for (int i : order) {
      const pod_item& p = pods_[uz(i)];
      std::vector<int> available;
      std::vector<int> others;
      collect_units(p.within >= 0 ? p.within : p.node, available, others);
      available.insert(available.end(), others.begin(), others.end());
      const int leaf_count = p.units * req_.leaves;
      int optimal = ch.top;
      for (int l = req_.level; l <= ch.top; ++l)
        if (ch.level_leaves[uz(l)] >= leaf_count) {
          optimal = l;
          break;
        }
      for (int unit : s_.lowest_lca_cells(arena_.is_virtual, available, p.units, optimal)) {
        taken_.insert(unit);
        leaves_of(unit, leaves[uz(p.out_order)]);
      }
    }
    placement out;
    for (std::size_t i = 0; i < pods_.size(); ++i)
      out[pods_[i].units * req_.leaves].push_back(std::move(leaves[i]));
    return accept_(out);
  }

  scheduler_state& s_;
  const cell_request& req_;
  const search_arena& arena_;
  arena_cells cells_;
  const node_set& suggested_;
  bool ignore_;
  const std::function<bool(const placement&)>& accept_;
  long long& steps_;
  std::vector<flat_group> groups_;
  std::vector<pod_item> pods_;
  std::vector<int> nodes_;  ///< node cells in view order
  std::unordered_map<int, int> node_slot_;
  int signature_level_ = 1;
  int at_ = opportunistic_priority;
  std::unordered_map<int, int> avail_;
  std::unordered_map<int, int> used_;
  long long total_avail_ = 0;
  long long total_used_ = 0;
  std::set<std::vector<int>> failed_;
  std::set<int> taken_;
  bool limit_ = false;
};

/// Searches layouts of `req`'s group in `arena`, first with free units only, then (for a
/// guaranteed priority) with units used below `prio`, and calls `accept` with each complete
/// layout (arena leaf cells by leaf count, pods in group-tree preorder) until it returns true.
search_outcome search_group_placement(scheduler_state& s, const cell_request& req,
                                      const search_arena& arena, int prio,
                                      const node_set& suggested, bool ignore_suggested,
                                      const std::function<bool(const placement&)>& accept) {
  long long steps = 0;
  group_search search(s, req, arena, suggested, ignore_suggested, accept, steps);
  search_outcome out = search.run(opportunistic_priority);
  if (out == search_outcome::none && prio > opportunistic_priority) out = search.run(prio);
  return out;
}

}  // namespace

std::optional<placement> place_constrained(scheduler_state& s, const cell_request& req, int vc,
                                           int chain, const node_set& suggested,
                                           const bind_function& bind,
                                           std::optional<placement>& virt, std::string& reason) {
  const pod_request& pod = req.pod;
  search_arena arena;
  std::string where = " when scheduling in VC " + pod.vc;
  if (pod.priority < 0) {
    virt.reset();
    arena = {false, chain, &s.chains[uz(chain)].full, &s.opp[uz(chain)]};
    where = " when scheduling in physical cluster";
  } else if (!pod.pinned_cell.empty()) {
    const auto& info = s.vcs[uz(vc)].pinned.at(pod.pinned_cell);
    arena = {true, info.chain, &info.full, &info.sched};
  } else {
    const auto& vch = s.vcs[uz(vc)].chains.at(chain);
    arena = {true, chain, &vch.full, &*vch.sched};
  }
  std::optional<placement> phys;
  std::optional<placement> vplace;
  bool unmapped = false;
  std::function<bool(const placement&)> accept = [&](const placement& pl) {
    if (!arena.is_virtual) {
      phys = pl;
      return true;
    }
    auto mapped = bind(pl, arena.chain);
    if (!mapped) {
      unmapped = true;
      return false;
    }
    phys = std::move(mapped);
    vplace = pl;
    return true;
  };
  const search_outcome out = search_group_placement(s, req, arena, pod.priority, suggested,
                                                    pod.ignore_suggested_nodes, accept);
  if (phys) {
    if (arena.is_virtual) virt = std::move(vplace);
    return phys;
  }
  if (out == search_outcome::step_limit) {
    reason = fmt::format("the group search stopped after {} steps", group_search_step_limit);
  } else if (unmapped) {
    reason = mapping_failed_reason;
  } else if (!req.root.within.empty()) {
    reason = "no cell of type " + req.root.within + " has room for the group";
  } else if (req.root.children.empty()) {
    reason = "insufficient whole cells of type " + req.cell_type;
  } else {
    reason = "no placement meets the group's within-one-cell types";
  }
  reason += where;
  return std::nullopt;
}

}  // namespace hetsched::hived
