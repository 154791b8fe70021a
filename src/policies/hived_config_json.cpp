// SPDX-License-Identifier: MIT
// parse_config_json and to_json(hived::config): hivedscheduler's config shape as JSON text.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <hetsched/policies/hived_config_json.hpp>

#include "jsonio/json.hpp"

namespace hetsched::hived {

namespace {

using jsonio::json;
using jsonio::json_object_reader;
using jsonio::json_path;

constexpr std::int64_t count_max = std::numeric_limits<int>::max();
constexpr std::string_view extension_key = "hetsched";

// ---------------------------------------------------------------------------------------------
// Import

/// Reads an optional bool member into `out` (left unchanged when absent).
result<void> read_bool(json_object_reader& r, std::string_view key, bool& out) {
  auto v = r.get_bool(key, out);
  if (!v) return std::move(v).error();
  out = *v;
  return ok();
}

/// Reads an optional string member into `out` (left unchanged when absent).
result<void> read_string(json_object_reader& r, std::string_view key, std::string& out) {
  auto v = r.get_string(key, out);
  if (!v) return std::move(v).error();
  out = std::string(*v);
  return ok();
}

/// Reads a required count member (0..INT_MAX).
result<int> read_count(json_object_reader& r, std::string_view key) {
  auto v = r.get_int(key, 0, count_max);
  if (!v) return std::move(v).error();
  return static_cast<int>(*v);
}

/// Returns the elements of an optional array member (empty when absent).
result<std::span<const json>> optional_array(json_object_reader& r, std::string_view key) {
  if (!r.contains(key)) return std::span<const json>{};
  return r.get_array(key);
}

result<void> read_cell_types(json_object_reader& cluster, config& out) {
  auto members = cluster.get_optional_members("cellTypes");
  if (!members) return std::move(members).error();
  const std::string path = cluster.path_of("cellTypes");
  for (const auto& [name, value] : *members) {
    auto r = json_object_reader::make(value, json_path(path, name));
    if (!r) return std::move(r).error();
    cell_type_spec t;
    t.name = name;
    auto child = r->get_string("childCellType");
    if (!child) return std::move(child).error();
    t.child_type = std::string(*child);
    auto count = read_count(*r, "childCellNumber");
    if (!count) return std::move(count).error();
    t.child_count = *count;
    HETSCHED_TRY(read_bool(*r, "isNodeLevel", t.node_level));
    HETSCHED_TRY(r->finish());
    out.cell_types.push_back(std::move(t));
  }
  return ok();
}

/// Reads one physical cell and its children. Recursion depth is bounded by the JSON parser's
/// nesting limit (two levels per cell).
result<physical_cell_spec> read_physical_cell(const json& value, const std::string& path) {
  auto r = json_object_reader::make(value, path);
  if (!r) return std::move(r).error();
  physical_cell_spec c;
  HETSCHED_TRY(read_string(*r, "cellType", c.cell_type));
  HETSCHED_TRY(read_string(*r, "cellAddress", c.address));
  HETSCHED_TRY(read_string(*r, "pinnedCellId", c.pinned_id));
  auto children = optional_array(*r, "cellChildren");
  if (!children) return std::move(children).error();
  const std::string children_path = r->path_of("cellChildren");
  c.children.reserve(children->size());
  for (std::size_t i = 0; i < children->size(); ++i) {
    auto child = read_physical_cell((*children)[i], json_path(children_path, i));
    if (!child) return std::move(child).error();
    c.children.push_back(std::move(*child));
  }
  auto e = r->get_optional_object(extension_key);
  if (!e) return std::move(e).error();
  if (*e) {
    HETSCHED_TRY(read_bool(**e, "absoluteAddress", c.absolute_address));
    HETSCHED_TRY((*e)->finish());
  }
  HETSCHED_TRY(r->finish());
  return c;
}

result<void> read_physical_cluster(json_object_reader& root, config& out) {
  auto cluster = root.get_object("physicalCluster");
  if (!cluster) return std::move(cluster).error();
  HETSCHED_TRY(read_cell_types(*cluster, out));
  auto cells = optional_array(*cluster, "physicalCells");
  if (!cells) return std::move(cells).error();
  const std::string path = cluster->path_of("physicalCells");
  out.physical_cells.reserve(cells->size());
  for (std::size_t i = 0; i < cells->size(); ++i) {
    auto cell = read_physical_cell((*cells)[i], json_path(path, i));
    if (!cell) return std::move(cell).error();
    out.physical_cells.push_back(std::move(*cell));
  }
  return cluster->finish();
}

result<virtual_cluster_spec> read_virtual_cluster(const std::string& name, const json& value,
                                                  const std::string& path) {
  auto r = json_object_reader::make(value, path);
  if (!r) return std::move(r).error();
  virtual_cluster_spec vc;
  vc.name = name;
  auto cells = optional_array(*r, "virtualCells");
  if (!cells) return std::move(cells).error();
  const std::string cells_path = r->path_of("virtualCells");
  for (std::size_t i = 0; i < cells->size(); ++i) {
    auto c = json_object_reader::make((*cells)[i], json_path(cells_path, i));
    if (!c) return std::move(c).error();
    auto type = c->get_string("cellType");
    if (!type) return std::move(type).error();
    auto count = read_count(*c, "cellNumber");
    if (!count) return std::move(count).error();
    HETSCHED_TRY(c->finish());
    vc.virtual_cells.push_back(virtual_cell_spec{std::string(*type), *count});
  }
  auto pins = optional_array(*r, "pinnedCells");
  if (!pins) return std::move(pins).error();
  const std::string pins_path = r->path_of("pinnedCells");
  for (std::size_t i = 0; i < pins->size(); ++i) {
    auto p = json_object_reader::make((*pins)[i], json_path(pins_path, i));
    if (!p) return std::move(p).error();
    auto id = p->get_string("pinnedCellId");
    if (!id) return std::move(id).error();
    HETSCHED_TRY(p->finish());
    vc.pinned_cells.emplace_back(*id);
  }
  HETSCHED_TRY(r->finish());
  return vc;
}

result<void> read_virtual_clusters(json_object_reader& root, config& out) {
  auto members = root.get_optional_members("virtualClusters");
  if (!members) return std::move(members).error();
  const std::string path = root.path_of("virtualClusters");
  for (const auto& [name, value] : *members) {
    auto vc = read_virtual_cluster(name, value, json_path(path, name));
    if (!vc) return std::move(vc).error();
    out.virtual_clusters.push_back(std::move(*vc));
  }
  return ok();
}

result<void> read_options(json_object_reader& root, options& out) {
  auto ext = root.get_optional_object(extension_key);
  if (!ext) return std::move(ext).error();
  if (!*ext) return ok();
  json_object_reader* r = &**ext;
  auto members = r->get_optional_members("chainOrder");
  if (!members) return std::move(members).error();
  const std::string path = r->path_of("chainOrder");
  for (const auto& [leaf, chains] : *members) {
    const std::string leaf_path = json_path(path, leaf);
    auto list = jsonio::expect_array(chains, leaf_path);
    if (!list) return std::move(list).error();
    std::vector<std::string> names;
    names.reserve(list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
      auto chain = jsonio::expect_string((*list)[i], json_path(leaf_path, i));
      if (!chain) return std::move(chain).error();
      names.emplace_back(*chain);
    }
    out.chain_order[leaf] = std::move(names);
  }
  HETSCHED_TRY(read_bool(*r, "multiCellPods", out.multi_cell_pods));
  HETSCHED_TRY(read_bool(*r, "cellTypeRequests", out.cell_type_requests));
  return r->finish();
}

// ---------------------------------------------------------------------------------------------
// Export

json physical_cell_json(const physical_cell_spec& c) {
  json out = json::object();
  if (!c.cell_type.empty()) jsonio::add_member(out, "cellType", c.cell_type);
  if (!c.address.empty()) jsonio::add_member(out, "cellAddress", c.address);
  if (!c.pinned_id.empty()) jsonio::add_member(out, "pinnedCellId", c.pinned_id);
  if (!c.children.empty()) {
    json children = json::array();
    for (const auto& child : c.children) children.push_back(physical_cell_json(child));
    jsonio::add_member(out, "cellChildren", std::move(children));
  }
  if (c.absolute_address) {
    json ext = json::object();
    jsonio::add_member(ext, "absoluteAddress", true);
    jsonio::add_member(out, std::string(extension_key), std::move(ext));
  }
  return out;
}

json virtual_cluster_json(const virtual_cluster_spec& vc) {
  json out = json::object();
  json cells = json::array();
  for (const auto& c : vc.virtual_cells) {
    json cell = json::object();
    jsonio::add_member(cell, "cellType", c.type_path);
    jsonio::add_member(cell, "cellNumber", c.count);
    cells.push_back(std::move(cell));
  }
  jsonio::add_member(out, "virtualCells", std::move(cells));
  if (!vc.pinned_cells.empty()) {
    json pins = json::array();
    for (const auto& id : vc.pinned_cells) {
      json pin = json::object();
      jsonio::add_member(pin, "pinnedCellId", id);
      pins.push_back(std::move(pin));
    }
    jsonio::add_member(out, "pinnedCells", std::move(pins));
  }
  return out;
}

}  // namespace

result<config> parse_config_json(std::string_view text) {
  auto doc = jsonio::parse_json(text);
  if (!doc) return std::move(doc).error();
  auto root = json_object_reader::make(*doc, "");
  if (!root) return std::move(root).error();
  config out;
  HETSCHED_TRY(read_physical_cluster(*root, out));
  HETSCHED_TRY(read_virtual_clusters(*root, out));
  HETSCHED_TRY(read_options(*root, out.opts));
  HETSCHED_TRY(root->finish());
  return out;
}

std::string to_json(const config& cfg) {
  // Members are appended directly, a name set skipping duplicates (which create() rejects):
  // json::contains/insert scan the object, quadratic in 30,000 cell types.
  std::unordered_set<std::string_view> seen;
  json types = json::object();
  for (const auto& t : cfg.cell_types) {
    if (!seen.insert(t.name).second) continue;
    json type = json::object();
    jsonio::add_member(type, "childCellType", t.child_type);
    jsonio::add_member(type, "childCellNumber", t.child_count);
    jsonio::add_member(type, "isNodeLevel", t.node_level);
    jsonio::as_object(types).emplace_back(t.name, std::move(type));
  }
  json cells = json::array();
  for (const auto& c : cfg.physical_cells) cells.push_back(physical_cell_json(c));
  json cluster = json::object();
  jsonio::add_member(cluster, "cellTypes", std::move(types));
  jsonio::add_member(cluster, "physicalCells", std::move(cells));

  seen.clear();
  json vcs = json::object();
  for (const auto& vc : cfg.virtual_clusters)
    if (seen.insert(vc.name).second)
      jsonio::as_object(vcs).emplace_back(vc.name, virtual_cluster_json(vc));

  json doc = json::object();
  jsonio::add_member(doc, "physicalCluster", std::move(cluster));
  jsonio::add_member(doc, "virtualClusters", std::move(vcs));
  const options& o = cfg.opts;
  if (!o.chain_order.empty() || o.multi_cell_pods || o.cell_type_requests) {
    json ext = json::object();
    if (!o.chain_order.empty()) {
      json order = json::object();
      for (const auto& [leaf, chains] : o.chain_order) {
        json list = json::array();
        for (const auto& c : chains) list.push_back(c);
        jsonio::as_object(order).emplace_back(leaf, std::move(list));  // map keys: unique
      }
      jsonio::add_member(ext, "chainOrder", std::move(order));
    }
    if (o.multi_cell_pods) jsonio::add_member(ext, "multiCellPods", true);
    if (o.cell_type_requests) jsonio::add_member(ext, "cellTypeRequests", true);
    jsonio::add_member(doc, std::string(extension_key), std::move(ext));
  }
  return jsonio::to_string(doc, true);
}

}  // namespace hetsched::hived
