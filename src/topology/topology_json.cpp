// SPDX-License-Identifier: MIT
// to_json(node_topology) and import_topology_json: the versioned topology document.
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <hetsched/topology/json.hpp>
#include <hetsched/topology/views.hpp>

#include "jsonio/json.hpp"

namespace hetsched {

namespace {

using jsonio::json;
using jsonio::json_object_reader;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();

// ---------------------------------------------------------------------------------------------
// Export

json link_fields(const topo_link& link) {
  json out = json::object();
  jsonio::add_member(out, "kind", to_string(link.kind));
  jsonio::add_member(out, "count", link.count);
  jsonio::add_member(out, "generation", link.generation);
  jsonio::add_member(out, "width", link.width);
  jsonio::add_member(out, "bandwidth_mb_s", link.bandwidth_mb_s);
  return out;
}

json vertex_json(const node_topology& topology, std::size_t i) {
  const vertex_id id(static_cast<std::uint32_t>(i));
  const topo_vertex& v = topology.vertex(id);
  json out = json::object();
  jsonio::add_member(out, "id", i);
  jsonio::add_member(out, "kind", to_string(v.kind));
  jsonio::add_member(out, "name", v.name);
  jsonio::add_member(out, "parent", v.parent.valid() ? json(v.parent.value()) : json());
  jsonio::add_member(out, "index", v.index);
  if (!v.pci_bus_id.empty()) jsonio::add_member(out, "pci_bus_id", v.pci_bus_id);
  if (!v.model.empty()) jsonio::add_member(out, "model", v.model.name());
  if (v.memory_mib != 0) jsonio::add_member(out, "memory_mib", v.memory_mib);
  if (v.numa != -1) jsonio::add_member(out, "numa", v.numa);
  if (!v.cpuset.empty()) jsonio::add_member(out, "cpuset", v.cpuset);
  if (v.speed_mb_s != 0) jsonio::add_member(out, "speed_mb_s", v.speed_mb_s);
  if (v.fabric != 0) jsonio::add_member(out, "fabric", v.fabric);
  if (i != 0) jsonio::add_member(out, "uplink", link_fields(topology.uplink(id)));
  return out;
}

template <typename F>
json square_matrix(std::size_t n, F&& cell) {
  json rows = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    json row = json::array();
    jsonio::as_array(row).reserve(n);
    for (std::size_t j = 0; j < n; ++j) row.push_back(cell(i, j));
    rows.push_back(std::move(row));
  }
  return rows;
}

json views_json(const node_topology& topology) {
  const node_views& views = topology.views();
  const std::size_t gpus = views.gpu_count();
  const std::size_t endpoints = views.endpoints().size();
  json out = json::object();
  auto names = [&](std::span<const vertex_id> ids) {
    json list = json::array();
    for (const vertex_id v : ids) list.push_back(topology.vertex(v).name);
    return list;
  };
  jsonio::add_member(out, "gpus", names(topology.gpus()));
  jsonio::add_member(out, "nics", names(topology.nics()));
  jsonio::add_member(out, "relation", square_matrix(endpoints, [&](std::size_t i, std::size_t j) {
                       return json(views.relation(i, j).token());
                     }));
  jsonio::add_member(out, "bandwidth_mb_s", square_matrix(gpus, [&](std::size_t i, std::size_t j) {
                       return json(views.bandwidth_mb_s(i, j));
                     }));
  jsonio::add_member(out, "nccl_path", square_matrix(gpus, [&](std::size_t i, std::size_t j) {
                       return json(to_string(views.path_type(i, j)));
                     }));
  jsonio::add_member(out, "nccl_bandwidth_mb_s",
                     square_matrix(gpus, [&](std::size_t i, std::size_t j) {
                       return json(views.nccl_bandwidth_mb_s(i, j));
                     }));
  json numa = json::array();
  json socket = json::array();
  for (std::size_t g = 0; g < gpus; ++g) {
    numa.push_back(views.gpu_numa(g));
    socket.push_back(views.gpu_socket(g));
  }
  jsonio::add_member(out, "gpu_numa", std::move(numa));
  jsonio::add_member(out, "gpu_socket", std::move(socket));
  json groups = json::array();
  for (const affinity_group& group : views.affinity_groups()) {
    json g = json::object();
    jsonio::add_member(g, "level", to_string(group.level));
    jsonio::add_member(g, "parent", group.parent);
    jsonio::add_member(g, "vertex", group.vertex.valid() ? json(group.vertex.value()) : json());
    json members = json::array();
    for (const std::uint32_t gpu : group.gpus) members.push_back(gpu);
    jsonio::add_member(g, "gpus", std::move(members));
    groups.push_back(std::move(g));
  }
  jsonio::add_member(out, "affinity_groups", std::move(groups));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Import

std::optional<vertex_kind> parse_vertex_kind(std::string_view name) {
  for (auto k = static_cast<unsigned>(vertex_kind::machine);
       k <= static_cast<unsigned>(vertex_kind::cluster); ++k) {
    const auto kind = static_cast<vertex_kind>(k);
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

std::optional<link_kind> parse_link_kind(std::string_view name) {
  for (auto k = static_cast<unsigned>(link_kind::internal);
       k <= static_cast<unsigned>(link_kind::ethernet); ++k) {
    const auto kind = static_cast<link_kind>(k);
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

// Reads the link members ("kind", "count", "generation", "width", "bandwidth_mb_s") of `r`.
// Only "kind" is required; the others default to topo_link's defaults.
result<topo_link> read_link_fields(json_object_reader& r) {
  auto kind_name = r.get_string("kind");
  if (!kind_name) return std::move(kind_name).error();
  const auto kind = parse_link_kind(*kind_name);
  if (!kind) {
    return make_error(errc::invalid_argument, "{}: unknown link kind '{}'", r.path_of("kind"),
                      *kind_name);
  }
  auto count = r.get_int_or("count", 1, 1, std::numeric_limits<std::uint16_t>::max());
  if (!count) return std::move(count).error();
  auto generation = r.get_int_or("generation", 0, 0, std::numeric_limits<std::uint8_t>::max());
  if (!generation) return std::move(generation).error();
  auto width = r.get_int_or("width", 0, 0, std::numeric_limits<std::uint8_t>::max());
  if (!width) return std::move(width).error();
  auto bandwidth = r.get_int_or("bandwidth_mb_s", 0, 0, int64_max);
  if (!bandwidth) return std::move(bandwidth).error();
  topo_link link;
  link.kind = *kind;
  link.count = static_cast<std::uint16_t>(*count);
  link.generation = static_cast<std::uint8_t>(*generation);
  link.width = static_cast<std::uint8_t>(*width);
  link.bandwidth_mb_s = *bandwidth;
  return link;
}

// One vertex read from the document, with the uplink to its parent (unused for the root).
struct vertex_entry {
  topo_vertex vertex;
  topo_link uplink;
};

result<vertex_entry> read_vertex(const json& value, std::size_t i) {
  auto reader = json_object_reader::make(value, jsonio::json_path("vertices", i));
  if (!reader) return std::move(reader).error();
  json_object_reader& r = *reader;

  auto id = r.get_int("id");
  if (!id) return std::move(id).error();
  if (*id != static_cast<std::int64_t>(i)) {
    return make_error(errc::invalid_argument, "{}: is {}, but ids must equal positions ({})",
                      r.path_of("id"), *id, i);
  }
  vertex_entry entry;
  topo_vertex& v = entry.vertex;
  auto kind_name = r.get_string("kind");
  if (!kind_name) return std::move(kind_name).error();
  const auto kind = parse_vertex_kind(*kind_name);
  if (!kind) {
    return make_error(errc::invalid_argument, "{}: unknown vertex kind '{}'", r.path_of("kind"),
                      *kind_name);
  }
  if ((i == 0) != (*kind == vertex_kind::machine)) {
    return make_error(errc::invalid_argument, "{}: {}", r.path_of("kind"),
                      i == 0 ? "the root (vertex 0) must be a machine"
                             : "only the root (vertex 0) may be a machine");
  }
  v.kind = *kind;
  auto name = r.get_string("name");
  if (!name) return std::move(name).error();
  v.name = std::string(*name);

  auto parent = r.get("parent");
  if (!parent) return std::move(parent).error();
  if ((*parent)->is_null()) {
    if (i != 0) {
      return make_error(errc::invalid_argument,
                        "{}: is null, but only the root (vertex 0) has no parent",
                        r.path_of("parent"));
    }
  } else {
    if (i == 0) {
      return make_error(errc::invalid_argument, "{}: the root (vertex 0) must have a null parent",
                        r.path_of("parent"));
    }
    auto p = jsonio::expect_int(**parent, r.path_of("parent"), 0);
    if (!p) return std::move(p).error();
    if (*p >= static_cast<std::int64_t>(i)) {
      return make_error(errc::invalid_argument, "{}: parent {} must precede vertex {}",
                        r.path_of("parent"), *p, i);
    }
    v.parent = vertex_id(static_cast<std::uint32_t>(*p));
  }

  auto index = r.get_int("index", -1, int32_max);
  if (!index) return std::move(index).error();
  v.index = static_cast<std::int32_t>(*index);
  auto pci = r.get_string("pci_bus_id", "");
  if (!pci) return std::move(pci).error();
  v.pci_bus_id = std::string(*pci);
  auto model = r.get_string("model", "");
  if (!model) return std::move(model).error();
  if (!model->empty()) {
    auto type = gpu_type::parse(*model);
    if (!type) {
      return make_error(type.error().code, "{}: {}", r.path_of("model"), type.error().message);
    }
    v.model = *type;
  }
  auto memory = r.get_int_or("memory_mib", 0, 0, int64_max);
  if (!memory) return std::move(memory).error();
  v.memory_mib = *memory;
  auto numa = r.get_int_or("numa", -1, -1, int32_max);
  if (!numa) return std::move(numa).error();
  v.numa = static_cast<std::int32_t>(*numa);
  auto cpuset = r.get_string("cpuset", "");
  if (!cpuset) return std::move(cpuset).error();
  v.cpuset = std::string(*cpuset);
  auto speed = r.get_int_or("speed_mb_s", 0, 0, int64_max);
  if (!speed) return std::move(speed).error();
  v.speed_mb_s = *speed;
  auto fabric = r.get_int_or("fabric", 0, 0, std::numeric_limits<std::uint32_t>::max());
  if (!fabric) return std::move(fabric).error();
  v.fabric = static_cast<std::uint32_t>(*fabric);

  if (i == 0) {
    if (r.contains("uplink")) {
      return make_error(errc::invalid_argument, "{}: the root (vertex 0) has no uplink",
                        r.path_of("uplink"));
    }
  } else {
    auto uplink = r.get_object("uplink");
    if (!uplink) return std::move(uplink).error();
    auto link = read_link_fields(*uplink);
    if (!link) return std::move(link).error();
    HETSCHED_TRY(uplink->finish());
    entry.uplink = *link;
  }
  HETSCHED_TRY(r.finish());
  return entry;
}

result<link_ref> read_link(const json& value, std::size_t i, std::size_t vertex_count) {
  auto reader = json_object_reader::make(value, jsonio::json_path("links", i));
  if (!reader) return std::move(reader).error();
  json_object_reader& r = *reader;
  link_ref out;
  for (const std::string_view end : {std::string_view("a"), std::string_view("b")}) {
    auto id = r.get_int(end, 0);
    if (!id) return std::move(id).error();
    if (static_cast<std::uint64_t>(*id) >= vertex_count) {
      return make_error(errc::not_found, "{}: vertex {} does not exist", r.path_of(end), *id);
    }
    (end == "a" ? out.a : out.b) = vertex_id(static_cast<std::uint32_t>(*id));
  }
  auto link = read_link_fields(r);
  if (!link) return std::move(link).error();
  out.link = *link;
  HETSCHED_TRY(r.finish());
  return out;
}

}  // namespace

std::string to_json(const node_topology& topology, const topology_json_options& options) {
  json doc = json::object();
  jsonio::add_member(doc, "format", topology_json_format);
  jsonio::add_member(doc, "version", topology_json_version);
  jsonio::add_member(doc, "name", topology.name());
  json vertices = json::array();
  jsonio::as_array(vertices).reserve(topology.vertex_count());
  for (std::size_t i = 0; i < topology.vertex_count(); ++i) {
    vertices.push_back(vertex_json(topology, i));
  }
  jsonio::add_member(doc, "vertices", std::move(vertices));
  // links() lists the tree links (one per non-root vertex) first, then the extra links.
  const std::vector<link_ref> all = topology.links();
  const std::size_t tree_links = topology.vertex_count() > 0 ? topology.vertex_count() - 1 : 0;
  json links = json::array();
  for (std::size_t i = tree_links; i < all.size(); ++i) {
    json l = json::object();
    jsonio::add_member(l, "a", all[i].a.value());
    jsonio::add_member(l, "b", all[i].b.value());
    json fields = link_fields(all[i].link);
    for (auto& member : jsonio::as_object(fields)) {
      jsonio::add_member(l, std::move(member.first), std::move(member.second));
    }
    links.push_back(std::move(l));
  }
  jsonio::add_member(doc, "links", std::move(links));
  if (options.include_views && topology.vertex_count() > 0) {
    jsonio::add_member(doc, "views", views_json(topology));
  }
  std::string out = jsonio::to_string(doc, options.pretty);
  if (options.pretty) out.push_back('\n');
  return out;
}

result<node_topology> import_topology_json(std::string_view text) {
  auto doc = jsonio::parse_json(text);
  if (!doc) return std::move(doc).error();
  auto reader = json_object_reader::make(*doc, "");
  if (!reader) return std::move(reader).error();
  json_object_reader& r = *reader;

  auto format = r.get_string("format");
  if (!format) return std::move(format).error();
  if (*format != topology_json_format) {
    return make_error(errc::invalid_argument, "format: expected \"{}\", got \"{}\"",
                      topology_json_format, *format);
  }
  auto version = r.get_int("version");
  if (!version) return std::move(version).error();
  if (*version != topology_json_version) {
    return make_error(errc::invalid_argument, "version: unsupported version {}; expected {}",
                      *version, topology_json_version);
  }
  auto name = r.get_string("name");
  if (!name) return std::move(name).error();
  auto vertices = r.get_array("vertices");
  if (!vertices) return std::move(vertices).error();
  if (vertices->empty()) {
    return make_error(errc::invalid_argument, "vertices: needs at least the machine root");
  }
  if (vertices->size() > node_topology_builder::max_vertices) {
    return make_error(errc::out_of_range, "vertices: {} vertices, more than the limit {}",
                      vertices->size(), node_topology_builder::max_vertices);
  }
  auto links = r.get_optional_array("links");
  if (!links) return std::move(links).error();
  // "views" is written for readers; the import recomputes the views, so it is only type-checked.
  if (auto views = r.get_optional_members("views"); !views) return std::move(views).error();
  HETSCHED_TRY(r.finish());

  node_topology_builder builder{std::string(*name)};
  for (std::size_t i = 0; i < vertices->size(); ++i) {
    auto entry = read_vertex((*vertices)[i], i);
    if (!entry) return std::move(entry).error();
    if (i == 0) {
      builder.vertex(builder.root()) = std::move(entry->vertex);
    } else {
      builder.add(std::move(entry->vertex), entry->uplink);
    }
  }
  for (std::size_t i = 0; i < links->size(); ++i) {
    auto link = read_link((*links)[i], i, vertices->size());
    if (!link) return std::move(link).error();
    builder.connect(link->a, link->b, link->link);
  }
  return std::move(builder).build();
}

}  // namespace hetsched
