// SPDX-License-Identifier: MIT
// node_topology storage, node_topology_builder validation, and the link helpers.
#include <algorithm>
#include <array>
#include <utility>

#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched {

struct node_topology::data {
  std::string name;
  graph_type graph;
  std::vector<std::vector<vertex_id>> children;
  std::vector<topo_link> uplinks;  // uplinks[v] joins v to its parent; unused for the root
  std::vector<link_ref> links;     // tree links in vertex order, then extra links
  std::vector<vertex_id> gpus;
  std::vector<vertex_id> nics;
  std::vector<vertex_id> nvswitches;
  std::vector<std::pair<std::string, vertex_id>> by_name;  // sorted by name
  node_views views;
};

std::string_view to_string(vertex_kind kind) noexcept {
  switch (kind) {
    case vertex_kind::machine: return "machine";
    case vertex_kind::package: return "package";
    case vertex_kind::numa_node: return "numa_node";
    case vertex_kind::host_bridge: return "host_bridge";
    case vertex_kind::pcie_switch: return "pcie_switch";
    case vertex_kind::gpu: return "gpu";
    case vertex_kind::nvswitch: return "nvswitch";
    case vertex_kind::nic: return "nic";
    case vertex_kind::node: return "node";
    case vertex_kind::rack: return "rack";
    case vertex_kind::network_tier: return "network_tier";
    case vertex_kind::nvlink_domain: return "nvlink_domain";
    case vertex_kind::cluster: return "cluster";
  }
  return "unknown";
}

std::string_view to_string(link_kind kind) noexcept {
  switch (kind) {
    case link_kind::internal: return "internal";
    case link_kind::pcie: return "pcie";
    case link_kind::nvlink: return "nvlink";
    case link_kind::smp: return "smp";
    case link_kind::infiniband: return "infiniband";
    case link_kind::ethernet: return "ethernet";
  }
  return "unknown";
}

std::int64_t pcie_bandwidth_mb_s(unsigned generation, unsigned width) noexcept {
  static constexpr std::array<std::int64_t, 7> per_lane{0, 250, 500, 985, 1969, 3938, 7563};
  if (generation >= per_lane.size()) return 0;
  return per_lane[generation] * static_cast<std::int64_t>(width);
}

topo_link pcie_link(unsigned generation, unsigned width) noexcept {
  return topo_link{link_kind::pcie, 1, static_cast<std::uint8_t>(generation),
                   static_cast<std::uint8_t>(width), pcie_bandwidth_mb_s(generation, width)};
}

topo_link nvlink_link(unsigned count, unsigned generation) noexcept {
  return topo_link{link_kind::nvlink, static_cast<std::uint16_t>(count),
                   static_cast<std::uint8_t>(generation), 0,
                   static_cast<std::int64_t>(count) * nvlink_link_bandwidth_mb_s(generation)};
}

topo_link internal_link() noexcept { return topo_link{}; }

// ---------------------------------------------------------------------------------------------
// node_topology

node_topology::node_topology() : data_(std::make_shared<const data>()) {}

const std::string& node_topology::name() const noexcept { return data_->name; }
std::size_t node_topology::vertex_count() const noexcept {
  return boost::num_vertices(data_->graph);
}
std::size_t node_topology::link_count() const noexcept { return data_->links.size(); }

const topo_vertex& node_topology::vertex(vertex_id v) const noexcept {
  HETSCHED_ASSERT(v.index() < vertex_count(), "vertex id out of range");
  return data_->graph[v.index()];
}

std::optional<vertex_id> node_topology::find(std::string_view name) const {
  const auto& index = data_->by_name;
  auto it = std::lower_bound(index.begin(), index.end(), name,
                             [](const auto& entry, std::string_view n) { return entry.first < n; });
  if (it == index.end() || it->first != name) return std::nullopt;
  return it->second;
}

std::span<const vertex_id> node_topology::gpus() const noexcept { return data_->gpus; }
std::span<const vertex_id> node_topology::nics() const noexcept { return data_->nics; }
std::span<const vertex_id> node_topology::nvswitches() const noexcept { return data_->nvswitches; }

std::vector<vertex_id> node_topology::vertices_of(vertex_kind kind) const {
  std::vector<vertex_id> out;
  for (std::size_t v = 0; v < vertex_count(); ++v) {
    if (data_->graph[v].kind == kind) out.emplace_back(static_cast<std::uint32_t>(v));
  }
  return out;
}

std::span<const vertex_id> node_topology::children(vertex_id v) const noexcept {
  HETSCHED_ASSERT(v.index() < vertex_count(), "vertex id out of range");
  return data_->children[v.index()];
}

std::vector<link_ref> node_topology::links() const { return data_->links; }

std::vector<link_ref> node_topology::links_of(vertex_id v) const {
  std::vector<link_ref> out;
  for (const auto& l : data_->links) {
    if (l.a == v || l.b == v) out.push_back(l);
  }
  return out;
}

const topo_link& node_topology::uplink(vertex_id v) const noexcept {
  HETSCHED_ASSERT(v.index() > 0 && v.index() < vertex_count(), "the root has no uplink");
  return data_->uplinks[v.index()];
}

const node_views& node_topology::views() const noexcept { return data_->views; }
const node_topology::graph_type& node_topology::graph() const noexcept { return data_->graph; }

bool operator==(const node_topology& a, const node_topology& b) {
  if (a.data_ == b.data_) return true;
  if (a.name() != b.name() || a.vertex_count() != b.vertex_count()) return false;
  for (std::size_t v = 0; v < a.vertex_count(); ++v) {
    if (!(a.data_->graph[v] == b.data_->graph[v])) return false;
  }
  return a.data_->links == b.data_->links;
}

// ---------------------------------------------------------------------------------------------
// node_topology_builder

node_topology_builder::node_topology_builder(std::string name) : name_(std::move(name)) {
  topo_vertex root;
  root.kind = vertex_kind::machine;
  root.name = name_;
  vertices_.push_back(std::move(root));
  uplinks_.push_back(internal_link());
}

vertex_id node_topology_builder::add(vertex_kind kind, std::string name, vertex_id parent,
                                     topo_link uplink) {
  topo_vertex v;
  v.kind = kind;
  v.name = std::move(name);
  v.parent = parent;
  return add(std::move(v), uplink);
}

vertex_id node_topology_builder::add(topo_vertex vertex, topo_link uplink) {
  HETSCHED_ASSERT(vertex.parent.valid() && vertex.parent.index() < vertices_.size(),
                  "parent must be a vertex of this builder");
  vertices_.push_back(std::move(vertex));
  uplinks_.push_back(uplink);
  return vertex_id(static_cast<std::uint32_t>(vertices_.size() - 1));
}

void node_topology_builder::connect(vertex_id a, vertex_id b, topo_link link) {
  extra_links_.push_back(pending_link{a, b, link});
}

topo_vertex& node_topology_builder::vertex(vertex_id v) noexcept {
  HETSCHED_ASSERT(v.index() < vertices_.size(), "vertex id out of range");
  return vertices_[v.index()];
}

const topo_vertex& node_topology_builder::vertex(vertex_id v) const noexcept {
  HETSCHED_ASSERT(v.index() < vertices_.size(), "vertex id out of range");
  return vertices_[v.index()];
}

std::optional<vertex_id> node_topology_builder::find(std::string_view name) const {
  for (std::size_t v = 0; v < vertices_.size(); ++v) {
    if (vertices_[v].name == name) return vertex_id(static_cast<std::uint32_t>(v));
  }
  return std::nullopt;
}

namespace {

bool is_server_kind(vertex_kind k) {
  return k == vertex_kind::machine || k == vertex_kind::package || k == vertex_kind::numa_node ||
         k == vertex_kind::host_bridge || k == vertex_kind::pcie_switch || k == vertex_kind::gpu ||
         k == vertex_kind::nvswitch || k == vertex_kind::nic;
}

bool is_device_kind(vertex_kind k) {
  return k == vertex_kind::gpu || k == vertex_kind::nvswitch || k == vertex_kind::nic;
}

// Which parent kinds each server vertex kind may hang below.
bool allowed_parent(vertex_kind child, vertex_kind parent) {
  switch (child) {
    case vertex_kind::package: return parent == vertex_kind::machine;
    case vertex_kind::numa_node:
      return parent == vertex_kind::machine || parent == vertex_kind::package;
    case vertex_kind::host_bridge:
      return parent == vertex_kind::machine || parent == vertex_kind::package ||
             parent == vertex_kind::numa_node;
    case vertex_kind::pcie_switch:
      return parent == vertex_kind::host_bridge || parent == vertex_kind::pcie_switch;
    case vertex_kind::gpu:
    case vertex_kind::nvswitch:
    case vertex_kind::nic: return !is_device_kind(parent);
    default: return false;
  }
}

// Checks that indices of `ids` (GPUs or NICs) are 0..n-1 without repeats, or all unset (-1), in
// which case they are numbered in vertex order. Returns the ids ordered by index.
result<std::vector<vertex_id>> order_by_index(std::vector<topo_vertex>& vertices,
                                              const std::vector<vertex_id>& ids,
                                              std::string_view what) {
  const bool none_set = std::all_of(ids.begin(), ids.end(),
                                    [&](vertex_id v) { return vertices[v.index()].index < 0; });
  std::vector<vertex_id> ordered(ids.size(), vertex_id::invalid());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto& v = vertices[ids[i].index()];
    if (none_set) v.index = static_cast<std::int32_t>(i);
    if (v.index < 0 || static_cast<std::size_t>(v.index) >= ids.size()) {
      return make_error(errc::invalid_argument,
                        "{} '{}' has index {}; {} indices must be 0..{} without gaps", what, v.name,
                        v.index, what, ids.size() - 1);
    }
    auto& slot = ordered[static_cast<std::size_t>(v.index)];
    if (slot.valid()) {
      return make_error(errc::already_exists, "{} index {} is used by both '{}' and '{}'", what,
                        v.index, vertices[slot.index()].name, v.name);
    }
    slot = ids[i];
  }
  return ordered;
}

result<void> check_link(const std::vector<topo_vertex>& vertices, vertex_id a, vertex_id b,
                        const topo_link& link) {
  if (!a.valid() || !b.valid() || a.index() >= vertices.size() || b.index() >= vertices.size()) {
    return make_error(errc::not_found, "link between unknown vertices {} and {}", a, b);
  }
  const auto& va = vertices[a.index()];
  const auto& vb = vertices[b.index()];
  if (a == b) return make_error(errc::invalid_argument, "link from '{}' to itself", va.name);
  if (link.count == 0) {
    return make_error(errc::invalid_argument, "{} link '{}'-'{}' has a count of 0",
                      to_string(link.kind), va.name, vb.name);
  }
  if (link.bandwidth_mb_s < 0) {
    return make_error(errc::invalid_argument, "{} link '{}'-'{}' has negative bandwidth {}",
                      to_string(link.kind), va.name, vb.name, link.bandwidth_mb_s);
  }
  if (link.kind == link_kind::nvlink) {
    auto nv_end = [](vertex_kind k) { return k == vertex_kind::gpu || k == vertex_kind::nvswitch; };
    if (!nv_end(va.kind) || !nv_end(vb.kind)) {
      return make_error(errc::invalid_argument,
                        "NVLink '{}'-'{}' must join GPUs and NVSwitches, not {} and {}", va.name,
                        vb.name, to_string(va.kind), to_string(vb.kind));
    }
  }
  if (link.kind == link_kind::infiniband || link.kind == link_kind::ethernet) {
    return make_error(errc::invalid_argument,
                      "network link '{}'-'{}' inside one server; network links belong to the "
                      "cluster topology",
                      va.name, vb.name);
  }
  return ok();
}

}  // namespace

result<node_topology> node_topology_builder::build() && {
  if (vertices_.size() > max_vertices) {
    return make_error(errc::out_of_range, "topology '{}' has {} vertices, more than the limit {}",
                      name_, vertices_.size(), max_vertices);
  }
  std::vector<vertex_id> gpus;
  std::vector<vertex_id> nics;
  std::vector<vertex_id> nvswitches;
  std::vector<std::pair<std::string, vertex_id>> by_name;
  by_name.reserve(vertices_.size());
  for (std::size_t i = 0; i < vertices_.size(); ++i) {
    const vertex_id id(static_cast<std::uint32_t>(i));
    const auto& v = vertices_[i];
    if (v.name.empty()) {
      return make_error(errc::invalid_argument, "vertex {} ({}) has no name", i, to_string(v.kind));
    }
    if (!is_server_kind(v.kind)) {
      return make_error(errc::invalid_argument,
                        "vertex '{}' is a {}, which belongs to a cluster, not a server", v.name,
                        to_string(v.kind));
    }
    if (i == 0) {
      if (v.kind != vertex_kind::machine) {
        return make_error(errc::invalid_argument, "the root '{}' must be a machine", v.name);
      }
    } else {
      if (v.kind == vertex_kind::machine) {
        return make_error(errc::invalid_argument, "'{}': only the root may be a machine", v.name);
      }
      const auto& parent = vertices_[v.parent.index()];
      if (!allowed_parent(v.kind, parent.kind)) {
        return make_error(errc::invalid_argument, "{} '{}' cannot sit below {} '{}'",
                          to_string(v.kind), v.name, to_string(parent.kind), parent.name);
      }
      HETSCHED_TRY(check_link(vertices_, v.parent, id, uplinks_[i]));
    }
    if (v.memory_mib < 0 || v.speed_mb_s < 0) {
      return make_error(errc::invalid_argument, "vertex '{}' has a negative memory or speed",
                        v.name);
    }
    if (v.kind == vertex_kind::gpu) gpus.push_back(id);
    if (v.kind == vertex_kind::nic) nics.push_back(id);
    if (v.kind == vertex_kind::nvswitch) nvswitches.push_back(id);
    by_name.emplace_back(v.name, id);
  }
  std::sort(by_name.begin(), by_name.end());
  for (std::size_t i = 1; i < by_name.size(); ++i) {
    if (by_name[i].first == by_name[i - 1].first) {
      return make_error(errc::already_exists, "vertex name '{}' is used twice in topology '{}'",
                        by_name[i].first, name_);
    }
  }
  for (const auto& l : extra_links_) HETSCHED_TRY(check_link(vertices_, l.a, l.b, l.link));

  auto gpu_order = order_by_index(vertices_, gpus, "GPU");
  if (!gpu_order) return std::move(gpu_order).error();
  auto nic_order = order_by_index(vertices_, nics, "NIC");
  if (!nic_order) return std::move(nic_order).error();

  auto d = std::make_shared<node_topology::data>();
  d->name = name_;
  d->graph = node_topology::graph_type(vertices_.size());
  d->children.resize(vertices_.size());
  d->uplinks = uplinks_;
  for (std::size_t i = 0; i < vertices_.size(); ++i) {
    d->graph[i] = vertices_[i];
    if (i == 0) continue;
    const auto parent = vertices_[i].parent;
    d->children[parent.index()].emplace_back(static_cast<std::uint32_t>(i));
    boost::add_edge(parent.index(), i, uplinks_[i], d->graph);
    d->links.push_back(link_ref{parent, vertex_id(static_cast<std::uint32_t>(i)), uplinks_[i]});
  }
  for (const auto& l : extra_links_) {
    boost::add_edge(l.a.index(), l.b.index(), l.link, d->graph);
    d->links.push_back(link_ref{l.a, l.b, l.link});
  }
  d->gpus = std::move(*gpu_order);
  d->nics = std::move(*nic_order);
  d->nvswitches = std::move(nvswitches);
  d->by_name = std::move(by_name);

  node_topology topo;
  topo.data_ = d;
  d->views = node_views(topo);  // views read the graph through `topo`, which shares `d`
  return topo;
}

}  // namespace hetsched
