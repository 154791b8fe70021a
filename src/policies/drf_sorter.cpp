// SPDX-License-Identifier: MIT
// drf_sorter: Mesos DRFSorter semantics with exact shares and per-node ordered child sets.
//
// Each internal node keeps two ordered sets of child keys (share, count, path): children with an
// active leaf below them, and the others. A node's key lives in its parent's set only, so every
// change to a node is detach (erase its key), modify, attach (insert the new key). A client that
// is also a parent path is a virtual leaf "<path>/." (Mesos's "." node) under the internal node:
// index_ maps the path to the internal node, whose `self` names the virtual leaf.
#include <utility>

#include <hetsched/policies/drf.hpp>

namespace hetsched {
namespace {

result<void> check_amounts(const drf_vector& v, std::string_view kind, std::string_view who) {
  for (const auto& [name, amount] : v) {
    if (amount < 0)
      return make_error(errc::invalid_argument, "{} '{}': negative amount {} of '{}'", kind, who,
                        amount, name);
    if (amount > max_resource_amount)
      return make_error(errc::out_of_range, "{} '{}': amount {} of '{}' exceeds {}", kind, who,
                        amount, name, max_resource_amount);
  }
  return ok();
}

std::int64_t amount_in(const drf_vector& v, std::string_view name) {
  const auto it = v.find(name);
  return it == v.end() ? 0 : it->second;
}

}  // namespace

bool drf_sorter::key_less::operator()(const key& a, const key& b) const noexcept {
  if (const auto c = a.share <=> b.share; c != 0) return c < 0;
  if (a.count != b.count) return a.count < b.count;
  return a.path < b.path;
}

drf_sorter::drf_sorter(drf_exclusions excluded) : excluded_(std::move(excluded)) {
  nodes_.push_back(node{});
  nodes_[0].path = "";
}

result<std::uint32_t> drf_sorter::live_client(drf_client_id client) const {
  if (!client.valid() || client.index() >= nodes_.size() || !nodes_[client.index()].live ||
      !nodes_[client.index()].leaf || client.index() == 0)
    return make_error(errc::not_found, "no drf_sorter client with id {}", client);
  return client.value();
}

drf_share drf_sorter::compute_share(const node& n) const {
  drf_share best;

  for (const auto& [name, amount] : n.alloc) {
    if (amount == 0) continue;
    const std::int64_t total = amount_in(total_, name);
    if (total <= 0 || drf_is_excluded(excluded_, name)) continue;
    drf_weight w = n.weight;
    if (n.resource_weights != nullptr) {
      const auto it = n.resource_weights->per_resource.find(name);
      if (it != n.resource_weights->per_resource.end()) w = it->second;
    }
    const drf_share s{amount * w.den, total * w.num};
    if (s > best) best = s;
  }
  return best;
}

// Reuses the set node through extract()/insert(node_type), so an update allocates nothing.
drf_sorter::handle drf_sorter::detach(std::uint32_t n) {
  node& c = nodes_[n];
  node& p = nodes_[c.parent];
  handle h = p.active_children.extract(c.k);
  if (h.empty()) h = p.idle_children.extract(c.k);
  return h;
}

void drf_sorter::attach(std::uint32_t n, handle h) {
  node& c = nodes_[n];
  c.k.share = compute_share(c);
  node& p = nodes_[c.parent];
  auto& target = c.active_leaves > 0 ? p.active_children : p.idle_children;
  if (h.empty()) {
    target.insert(c.k);
  } else {
    h.value() = c.k;
    target.insert(std::move(h));
  }
}

result<void> drf_sorter::set_total(const drf_vector& total) {
  HETSCHED_TRY(check_amounts(total, "drf_sorter", "total"));
  total_ = total;
  rebuild();
  return ok();
}

void drf_sorter::rebuild() {
  for (auto& n : nodes_) {
    n.active_children.clear();
    n.idle_children.clear();
  }
  for (std::uint32_t i = 1; i < nodes_.size(); ++i)
    if (nodes_[i].live) attach(i, {});
}

result<drf_client_id> drf_sorter::add(std::string_view path, bool active) {
  // Validate the whole path before creating anything.
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    const std::string_view segment = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment.empty())
      return make_error(errc::invalid_argument, "drf_sorter: '{}' has an empty segment", path);
    if (segment == ".")
      return make_error(errc::invalid_argument, "drf_sorter: '{}': the segment '.' is reserved",
                        path);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (const auto it = index_.find(path); it != index_.end()) {
    const std::uint32_t existing = it->second;
    if (nodes_[existing].leaf || nodes_[existing].self != 0)
      return make_error(errc::already_exists, "drf_sorter: '{}' already exists", path);
    // A parent path becomes a client too: Mesos's virtual leaf "<path>/.".
    std::string key_path(path);
    key_path += "/.";
    const std::uint32_t id = add_node(std::string(path), std::move(key_path), existing, true);
    nodes_[existing].self = id;
    ++clients_;
    if (active) set_active(id, true);
    return drf_client_id(id);
  }
  std::uint32_t parent = 0;
  start = 0;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    const std::string_view prefix = path.substr(0, slash);
    if (const auto it = index_.find(prefix); it != index_.end()) {
      parent = it->second;
      if (slash != std::string_view::npos && nodes_[parent].leaf) parent = split_leaf(parent);
    } else {
      parent = add_node(std::string(prefix), std::string(prefix), parent,
                        slash == std::string_view::npos);
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  ++clients_;
  if (active) set_active(parent, true);
  return drf_client_id(parent);
}

std::uint32_t drf_sorter::add_node(std::string path, std::string key_path, std::uint32_t parent,
                                   bool leaf) {
  node n;
  n.parent = parent;
  n.leaf = leaf;
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  // A virtual leaf has no weight of its own (weights are set by path; its path is "<path>/.").
  if (key_path == path) {
    if (const auto w = weights_.find(path); w != weights_.end()) {
      n.weight = w->second.scalar;
      if (!w->second.per_resource.empty()) n.resource_weights = &w->second;
    }
    index_.emplace(path, id);
  }
  n.path = std::move(path);
  n.k.path = std::move(key_path);
  n.k.node = id;
  nodes_.push_back(std::move(n));
  ++nodes_[parent].children;
  attach(id, {});
  return id;
}

std::uint32_t drf_sorter::split_leaf(std::uint32_t leaf) {
  handle h = detach(leaf);
  node in;
  {
    const node& x = nodes_[leaf];
    in.path = x.path;
    in.parent = x.parent;
    in.leaf = false;
    in.active_leaves = x.active_leaves;
    in.children = 1;
    in.self = leaf;
    in.weight = x.weight;
    in.resource_weights = x.resource_weights;
    in.alloc = x.alloc;
    in.k = x.k;  // share and allocation count carry over, as Mesos copies the allocation
  }
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  in.k.node = id;
  nodes_.push_back(std::move(in));
  index_.insert_or_assign(nodes_[id].path, id);
  node& x = nodes_[leaf];
  x.parent = id;
  x.weight = {};
  x.resource_weights = nullptr;
  x.k.path = x.path;
  x.k.path += "/.";
  attach(id, std::move(h));
  attach(leaf, {});
  return id;
}

void drf_sorter::set_active(std::uint32_t leaf, bool active) {
  if (nodes_[leaf].active == active) return;
  const std::int64_t delta = active ? 1 : -1;
  for (std::uint32_t n = leaf; n != 0; n = nodes_[n].parent) {
    handle h = detach(n);
    nodes_[n].active_leaves += delta;
    if (n == leaf) nodes_[n].active = active;
    attach(n, std::move(h));
  }
  nodes_[0].active_leaves += delta;
}

result<void> drf_sorter::activate(drf_client_id client) {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  set_active(*n, true);
  return ok();
}

result<void> drf_sorter::deactivate(drf_client_id client) {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  set_active(*n, false);
  return ok();
}

result<void> drf_sorter::remove(drf_client_id client) {
  auto found = live_client(client);
  if (!found) return std::move(found).error();
  const std::uint32_t leaf = *found;
  set_active(leaf, false);
  const drf_vector alloc = nodes_[leaf].alloc;
  apply_delta(leaf, alloc, {}, false);
  std::uint32_t n = leaf;
  while (n != 0 && (nodes_[n].leaf || nodes_[n].children == 0)) {
    const std::uint32_t parent = nodes_[n].parent;
    static_cast<void>(detach(n));
    if (const auto it = index_.find(nodes_[n].path); it != index_.end() && it->second == n)
      index_.erase(it);
    if (nodes_[parent].self == n) nodes_[parent].self = 0;
    node& dead = nodes_[n];
    dead.live = false;
    dead.alloc.clear();
    dead.path.clear();
    dead.k.path.clear();
    --nodes_[parent].children;
    n = parent;
  }
  --clients_;
  return ok();
}

result<void> drf_sorter::set_weight(std::string_view path, double weight) {
  auto w = make_drf_weight(weight, path);
  if (!w) return std::move(w).error();
  apply_weight(path, drf_client_weight{*w, {}});
  return ok();
}

result<void> drf_sorter::set_weight(std::string_view path, const drf_client_weight& weight) {
  const auto valid = [](const drf_weight& w) {
    return w.num >= 1 && w.den >= 1 && w.num <= max_drf_weight_term && w.den <= max_drf_weight_term;
  };
  if (!valid(weight.scalar))
    return make_error(errc::invalid_argument, "drf_sorter: weight {}/{} of '{}' is outside 1..2^20",
                      weight.scalar.num, weight.scalar.den, path);
  for (const auto& [name, w] : weight.per_resource)
    if (!valid(w))
      return make_error(errc::invalid_argument,
                        "drf_sorter: weight {}/{} of '{}' for '{}' is outside 1..2^20", w.num,
                        w.den, path, name);
  apply_weight(path, weight);
  return ok();
}

void drf_sorter::apply_weight(std::string_view path, const drf_client_weight& weight) {
  const auto entry = weights_.insert_or_assign(std::string(path), weight).first;
  if (const auto it = index_.find(path); it != index_.end()) {
    const std::uint32_t n = it->second;
    handle h = detach(n);
    nodes_[n].weight = weight.scalar;
    nodes_[n].resource_weights = weight.per_resource.empty() ? nullptr : &entry->second;
    attach(n, std::move(h));
  }
}

result<void> drf_sorter::check_delta(std::uint32_t leaf, const drf_vector& minus,
                                     const drf_vector& plus) const {
  const std::string& who = nodes_[leaf].path;
  HETSCHED_TRY(check_amounts(minus, "client", who));
  HETSCHED_TRY(check_amounts(plus, "client", who));
  for (std::uint32_t n = leaf; n != 0; n = nodes_[n].parent) {
    for (const auto& [name, amount] : minus)
      if (amount_in(nodes_[n].alloc, name) < amount)
        return make_error(errc::failed_precondition,
                          "client '{}': cannot release {} of '{}' from '{}', which holds {}", who,
                          amount, name, nodes_[n].path, amount_in(nodes_[n].alloc, name));
    for (const auto& [name, amount] : plus) {
      const std::int64_t after = amount_in(nodes_[n].alloc, name) - amount_in(minus, name) + amount;
      if (after > max_resource_amount)
        return make_error(errc::out_of_range, "client '{}': allocation of '{}' to '{}' exceeds {}",
                          who, name, nodes_[n].path, max_resource_amount);
    }
  }
  return ok();
}

void drf_sorter::apply_delta(std::uint32_t leaf, const drf_vector& minus, const drf_vector& plus,
                             bool count) {
  for (std::uint32_t n = leaf; n != 0; n = nodes_[n].parent) {
    handle h = detach(n);
    node& x = nodes_[n];
    for (const auto& [name, amount] : minus) {
      const auto it = x.alloc.find(name);
      if (it == x.alloc.end()) continue;
      it->second -= amount;
      if (it->second == 0) x.alloc.erase(it);
    }
    for (const auto& [name, amount] : plus) {
      if (amount == 0) continue;
      x.alloc[name] += amount;
    }
    if (count) ++x.k.count;
    attach(n, std::move(h));
  }
}

result<void> drf_sorter::allocated(drf_client_id client, const drf_vector& resources) {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  HETSCHED_TRY(check_delta(*n, {}, resources));
  apply_delta(*n, {}, resources, true);
  return ok();
}

result<void> drf_sorter::unallocated(drf_client_id client, const drf_vector& resources) {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  HETSCHED_TRY(check_delta(*n, resources, {}));
  apply_delta(*n, resources, {}, false);
  return ok();
}

result<void> drf_sorter::update(drf_client_id client, const drf_vector& from,
                                const drf_vector& to) {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  HETSCHED_TRY(check_delta(*n, from, to));
  apply_delta(*n, from, to, false);
  return ok();
}

result<drf_client_id> drf_sorter::find(std::string_view path) const {
  if (const auto it = index_.find(path); it != index_.end()) {
    const node& n = nodes_[it->second];
    if (n.leaf) return drf_client_id(it->second);
    if (n.self != 0) return drf_client_id(n.self);
  }
  return make_error(errc::not_found, "drf_sorter: no client '{}'", path);
}

const std::string& drf_sorter::path(drf_client_id client) const {
  HETSCHED_ASSERT(live_client(client).has_value(), "drf_sorter: dead client id");
  return nodes_[client.index()].path;
}

result<drf_share> drf_sorter::share(drf_client_id client) const {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  return nodes_[*n].k.share;
}

result<std::int64_t> drf_sorter::allocation_count(drf_client_id client) const {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  return nodes_[*n].k.count;
}

result<drf_vector> drf_sorter::allocation(drf_client_id client) const {
  auto n = live_client(client);
  if (!n) return std::move(n).error();
  return nodes_[*n].alloc;
}

std::optional<drf_client_id> drf_sorter::pick_next() const {
  std::uint32_t n = 0;
  while (!nodes_[n].leaf) {
    if (nodes_[n].active_children.empty()) return std::nullopt;
    n = nodes_[n].active_children.begin()->node;
  }
  return drf_client_id(n);
}

std::vector<drf_client_id> drf_sorter::sort() const {
  std::vector<drf_client_id> out;
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t n = stack.back();
    stack.pop_back();
    if (nodes_[n].leaf) {
      out.push_back(drf_client_id(n));
      continue;
    }
    const auto& children = nodes_[n].active_children;
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(it->node);
  }
  return out;
}

}  // namespace hetsched
