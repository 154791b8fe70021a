// SPDX-License-Identifier: MIT
// Reading the hived vector file (../shared/vectors/hived/hived_master.json): its config keys and
// a config variant's structured patch translated to hivedscheduler's config document (the shape
// hived::parse_config_json reads), pod specs, bind records and suggested-node lists. Shared by
// the conformance runner (conform_hived.cpp) and the unit tests that replay hivedscheduler's
// tests on the recorded config (tests/policies/hived_*_test.cpp).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

#include "jsonio/json.hpp"
#include "vector_value.hpp"

namespace hetsched::conform::hived_vectors {

using jsonio::json;

/// Returns the elements of `v` as ints (none when absent); throws vector_error on another type.
inline std::vector<int> ints(const vector_value& v) {
  std::vector<int> out;
  for (const vector_value& x : v.items()) {
    out.push_back(static_cast<int>(
        x.integer(std::numeric_limits<int>::min(), std::numeric_limits<int>::max())));
  }
  return out;
}

/// Returns the decimal number `text` as an int, or nullopt if it is not one.
inline std::optional<int> parse_int(std::string_view text) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

/// Applies one structured patch path ("a.b[2].c") to `doc`; false if the path is not one.
inline bool apply_patch(json& doc, const std::string& path, const json& value) {
  json* cur = &doc;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    auto dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    std::optional<std::size_t> index;
    if (auto br = part.find('['); br != std::string::npos) {
      auto close = part.find(']', br);
      if (close == std::string::npos) return false;
      const auto i = parse_int(std::string_view(part).substr(br + 1, close - br - 1));
      if (!i || *i < 0) return false;
      index = static_cast<std::size_t>(*i);
      part = part.substr(0, br);
    }
    if (!cur->is_object()) return false;
    json* next = nullptr;
    for (auto& [k, v] : jsonio::as_object(*cur))
      if (k == part) next = &v;
    if (next == nullptr) return false;
    if (index) {
      if (!next->is_array() || *index >= jsonio::as_array(*next).size()) return false;
      next = &jsonio::as_array(*next)[*index];
    }
    cur = next;
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  *cur = value;
  return true;
}

/// Returns `v` with its object keys renamed by `names` (a key mapped to nullptr is dropped);
/// other keys are kept, so parse_config_json rejects them by their path.
inline json rename_keys(const json& v,
                        std::initializer_list<std::pair<const char*, const char*>> names) {
  json out = json::object();
  for (const auto& [key, value] : jsonio::as_object(v)) {
    const auto& name = key;  // clang 14 cannot capture a structured binding
    const auto it =
        std::find_if(names.begin(), names.end(), [&](const auto& n) { return name == n.first; });
    if (it == names.end()) {
      jsonio::add_member(out, key, value);
    } else if (it->second != nullptr) {
      jsonio::add_member(out, it->second, value);
    }
  }
  return out;
}

/// The vector's physical cell ({type, address, pinned_id, children, index}) in hivedscheduler's
/// shape; "index" (the inferred default index, recorded for reference) is dropped.
inline json physical_cell_json(const json& j) {
  if (!j.is_object()) return j;
  json out = rename_keys(j, {{"type", "cellType"},
                             {"address", "cellAddress"},
                             {"pinned_id", "pinnedCellId"},
                             {"children", "cellChildren"},
                             {"index", nullptr}});
  for (auto& [key, value] : jsonio::as_object(out)) {
    if (key != "cellChildren" || !value.is_array()) continue;
    for (auto& child : jsonio::as_array(value)) child = physical_cell_json(child);
  }
  return out;
}

/// The vector's config keys (cell_types, physical_cells, virtual_clusters, after the variant's
/// structured patch) as the hivedscheduler config document parse_config_json reads, with the
/// recorded chain search order (null = none) as the "hetsched" extension's chainOrder. Values of
/// an unexpected shape are passed on as they are, so that parse_config_json names them.
inline json hived_config_document(const json& cfg, const json& chain_order) {
  json types = json::object();
  if (const auto& t = jsonio::member(cfg, "cell_types"); t.is_object())
    for (const auto& [name, spec] : jsonio::as_object(t))
      jsonio::add_member(types, name,
                         spec.is_object() ? rename_keys(spec, {{"child", "childCellType"},
                                                               {"child_count", "childCellNumber"},
                                                               {"node_level", "isNodeLevel"}})
                                          : spec);
  json cells = json::array();
  if (const auto& c = jsonio::member(cfg, "physical_cells"); c.is_array())
    for (const auto& cell : jsonio::as_array(c)) cells.push_back(physical_cell_json(cell));
  json cluster = json::object();
  jsonio::add_member(cluster, "cellTypes", std::move(types));
  jsonio::add_member(cluster, "physicalCells", std::move(cells));
  json vcs = json::object();
  if (const auto& v = jsonio::member(cfg, "virtual_clusters"); v.is_object()) {
    for (const auto& [name, vc] : jsonio::as_object(v)) {
      if (!vc.is_object()) {
        jsonio::add_member(vcs, name, vc);
        continue;
      }
      json out =
          rename_keys(vc, {{"virtual_cells", "virtualCells"}, {"pinned_cells", "pinnedCells"}});
      for (auto& [key, value] : jsonio::as_object(out)) {
        if (!value.is_array()) continue;
        for (auto& x : jsonio::as_array(value)) {
          if (key == "virtualCells" && x.is_object()) {
            x = rename_keys(x, {{"type_path", "cellType"}, {"count", "cellNumber"}});
          } else if (key == "pinnedCells") {
            json pin = json::object();
            jsonio::add_member(pin, "pinnedCellId", x);
            x = std::move(pin);
          }
        }
      }
      jsonio::add_member(vcs, name, std::move(out));
    }
  }
  json doc = json::object();
  jsonio::add_member(doc, "physicalCluster", std::move(cluster));
  jsonio::add_member(doc, "virtualClusters", std::move(vcs));
  if (!chain_order.is_null()) {
    json ext = json::object();
    jsonio::add_member(ext, "chainOrder", chain_order);
    jsonio::add_member(doc, "hetsched", std::move(ext));
  }
  return doc;
}

/// The recorded pod spec `name` of `specs` (the file's pod_specs): vc, priority, pinned_cell,
/// leaf_cell_type (null = any), leaf_cells (default 1), group, lazy_preemption,
/// ignore_k8s_suggested_nodes and group_members, each optional. A pod without a spec is a request
/// named `name` with the defaults. Throws vector_error naming the path of a field of the wrong
/// type.
inline hived::pod_request read_pod(const vector_value& specs, const std::string& name) {
  hived::pod_request p;
  p.name = name;
  const vector_value j = specs[name];
  constexpr auto int_min = std::numeric_limits<int>::min();
  constexpr auto int_max = std::numeric_limits<int>::max();
  p.vc = j["vc"].string_or("");
  p.priority = static_cast<int>(j["priority"].integer_or(0, int_min, int_max));
  p.pinned_cell = j["pinned_cell"].string_or("");
  p.leaf_type = j["leaf_cell_type"].string_or("");
  p.leaf_cells = static_cast<int>(j["leaf_cells"].integer_or(1, int_min, int_max));
  p.group = j["group"].string_or("");
  p.lazy_preemption = j["lazy_preemption"].boolean_or(p.lazy_preemption);
  p.ignore_suggested_nodes = j["ignore_k8s_suggested_nodes"].boolean_or(p.ignore_suggested_nodes);
  for (const vector_value& m : j["group_members"].items()) {
    p.members.push_back(
        hived::member_spec{static_cast<int>(m["pods"].integer(int_min, int_max)),
                           static_cast<int>(m["leaf_cells_per_pod"].integer(int_min, int_max))});
  }
  return p;
}

/// read_pod() over the parsed pod_specs object (for the unit tests' fixture).
inline hived::pod_request read_pod(const json& specs, const std::string& name) {
  return read_pod(vector_value(specs, "pod_specs"), name);
}

/// A recorded bind record {node, leaf_cells, chain, group_pod_placements: {"<leaf cells>": [{node,
/// leaf_cells, preassigned_cell_type}]}}. Throws vector_error naming a malformed field.
inline hived::bind_info read_bind(const vector_value& j) {
  hived::bind_info b;
  b.node = j["node"].string_or("");
  b.leaf_cells = ints(j["leaf_cells"]);
  b.chain = j["chain"].string_or("");
  for (const auto& [num, pods] : j["group_pod_placements"].members()) {
    const auto leaf_count = parse_int(num);
    if (!leaf_count) pods.fail("the key is not a number of leaf cells");
    auto& list = b.group_placements[*leaf_count];
    for (const vector_value& pod : pods.items()) {
      hived::pod_placement pp;
      pp.node = pod["node"].string_or("");
      pp.leaf_cells = ints(pod["leaf_cells"]);
      const std::string type = pod["preassigned_cell_type"].string_or("");
      pp.preassigned_types.assign(pp.leaf_cells.size(), type);
      list.push_back(std::move(pp));
    }
  }
  return b;
}

/// Suggested nodes: absent or "ALL" = every node; a list = exactly those; {"all_except": [...]} =
/// all of `all` but those. Throws vector_error on another shape.
inline hived::node_filter read_nodes(const vector_value& j, const std::vector<std::string>& all) {
  hived::node_filter f;
  if (!j.present()) return f;
  if (j.json().is_string()) {
    if (j.string() != "ALL") j.fail("a string of suggested nodes must be \"ALL\"");
    return f;
  }
  f.all = false;
  if (j.json().is_array()) {
    f.nodes = j.strings();
    return f;
  }
  if (!j.has("all_except")) j.fail("expected \"ALL\", a list of nodes or {\"all_except\": [...]}");
  const std::vector<std::string> skip = j["all_except"].strings();
  for (const auto& n : all)
    if (std::find(skip.begin(), skip.end(), n) == skip.end()) f.nodes.push_back(n);
  return f;
}

/// A config variant as hivedscheduler's config document: the vector's config keys with the
/// variant's structured patch applied in order and its recorded chain search order as the
/// "hetsched" extension's chainOrder. Patch paths for which `is_prose(path)` holds are not
/// applied but returned in `prose` (the caller translates them by hand). nullopt with `why` for
/// a patch path that is neither structured nor known prose (hetsched cannot apply it). Throws
/// vector_error for a variant the file does not define or a malformed patch entry.
template <class IsProse>
std::optional<json> variant_document(const vector_value& doc, const std::string& variant,
                                     IsProse is_prose, std::vector<std::string>& prose,
                                     std::string& why) {
  json cfg = json::object();
  for (const char* key : {"cell_types", "physical_cells", "virtual_clusters"}) {
    if (doc.json().contains(key)) jsonio::add_member(cfg, key, jsonio::member(doc.json(), key));
  }
  const vector_value var = doc["config_variants"][variant];
  if (!var.present()) var.fail(fmt::format("the file defines no config variant '{}'", variant));
  for (const vector_value& p : var["patch"].items()) {
    std::string path = p["path"].string();
    if (is_prose(path)) {
      prose.push_back(path);
      continue;
    }
    if (!p.json().contains("value") || !apply_patch(cfg, path, jsonio::member(p.json(), "value"))) {
      why = fmt::format("variant {} has an unknown prose patch: {}", variant, path);
      return std::nullopt;
    }
  }
  return hived_config_document(
      cfg, var["derived_after_init"]["chain_search_order_per_leaf_type"].json());
}

/// The config of a variant without prose patches (base, backtrack, bad_nodes, safe_relaxed,
/// invalid_initial), read by hived::parse_config_json; an error names the problem.
inline result<hived::config> variant_config(const json& doc, const std::string& variant) {
  std::vector<std::string> prose;
  std::string why;
  std::optional<json> d;
  try {
    d = variant_document(
        vector_value(doc, ""), variant, [](const std::string&) { return false; }, prose, why);
  } catch (const vector_error& e) {
    return make_error(errc::invalid_argument, "{}", e.what());
  }
  if (!d) return make_error(errc::invalid_argument, "{}", why);
  return hived::parse_config_json(jsonio::to_string(*d));
}

}  // namespace hetsched::conform::hived_vectors
