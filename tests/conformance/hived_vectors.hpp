// SPDX-License-Identifier: MIT
// Reading the hived vector file (../shared/vectors/hived/hived_master.json): its config keys and
// a config variant's structured patch translated to hivedscheduler's config document (the shape
// hived::parse_config_json reads), pod specs, bind records and suggested-node lists. Shared by
// the conformance runner (conform_hived.cpp) and the unit tests that replay hivedscheduler's
// tests on the recorded config (tests/policies/hived_*_test.cpp).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/detail/json.hpp>
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

namespace hetsched::conform::hived_vectors {

using detail::json_value;

inline std::string str(const json_value* v) {
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}
inline int integer(const json_value* v, int fallback = 0) {
  return v != nullptr && v->is_integer() ? static_cast<int>(v->as_int64()) : fallback;
}

inline std::vector<int> ints(const json_value* v) {
  std::vector<int> out;
  if (v != nullptr && v->is_array())
    for (const auto& x : v->as_array()) out.push_back(integer(&x));
  return out;
}

/// Applies one structured patch path ("a.b[2].c") to `doc`; false if the path is not one.
inline bool apply_patch(json_value& doc, const std::string& path, const json_value& value) {
  json_value* cur = &doc;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    auto dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    std::optional<std::size_t> index;
    if (auto br = part.find('['); br != std::string::npos) {
      auto close = part.find(']', br);
      if (close == std::string::npos) return false;
      index = std::stoul(part.substr(br + 1, close - br - 1));
      part = part.substr(0, br);
    }
    if (!cur->is_object()) return false;
    json_value* next = nullptr;
    for (auto& [k, v] : cur->as_object())
      if (k == part) next = &v;
    if (next == nullptr) return false;
    if (index) {
      if (!next->is_array() || *index >= next->as_array().size()) return false;
      next = &next->as_array()[*index];
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
inline json_value rename_keys(const json_value& v,
                              std::initializer_list<std::pair<const char*, const char*>> names) {
  json_value out = json_value::object();
  for (const auto& [key, value] : v.as_object()) {
    const auto& name = key;  // clang 14 cannot capture a structured binding
    const auto it =
        std::find_if(names.begin(), names.end(), [&](const auto& n) { return name == n.first; });
    if (it == names.end()) {
      out.insert(key, value);
    } else if (it->second != nullptr) {
      out.insert(it->second, value);
    }
  }
  return out;
}

/// The vector's physical cell ({type, address, pinned_id, children, index}) in hivedscheduler's
/// shape; "index" (the inferred default index, recorded for reference) is dropped.
inline json_value physical_cell_json(const json_value& j) {
  if (!j.is_object()) return j;
  json_value out = rename_keys(j, {{"type", "cellType"},
                                   {"address", "cellAddress"},
                                   {"pinned_id", "pinnedCellId"},
                                   {"children", "cellChildren"},
                                   {"index", nullptr}});
  for (auto& [key, value] : out.as_object()) {
    if (key != "cellChildren" || !value.is_array()) continue;
    for (auto& child : value.as_array()) child = physical_cell_json(child);
  }
  return out;
}

/// The vector's config keys (cell_types, physical_cells, virtual_clusters, after the variant's
/// structured patch) as the hivedscheduler config document parse_config_json reads, with the
/// recorded chain search order as the "hetsched" extension's chainOrder.
inline json_value hived_config_document(const json_value& cfg, const json_value* chain_order) {
  json_value types = json_value::object();
  if (const auto* t = cfg.find("cell_types"); t != nullptr && t->is_object())
    for (const auto& [name, spec] : t->as_object())
      types.insert(name, spec.is_object() ? rename_keys(spec, {{"child", "childCellType"},
                                                               {"child_count", "childCellNumber"},
                                                               {"node_level", "isNodeLevel"}})
                                          : spec);
  json_value cells = json_value::array();
  if (const auto* c = cfg.find("physical_cells"); c != nullptr && c->is_array())
    for (const auto& cell : c->as_array()) cells.push_back(physical_cell_json(cell));
  json_value cluster = json_value::object();
  cluster.insert("cellTypes", std::move(types));
  cluster.insert("physicalCells", std::move(cells));
  json_value vcs = json_value::object();
  if (const auto* v = cfg.find("virtual_clusters"); v != nullptr && v->is_object()) {
    for (const auto& [name, vc] : v->as_object()) {
      if (!vc.is_object()) {
        vcs.insert(name, vc);
        continue;
      }
      json_value out =
          rename_keys(vc, {{"virtual_cells", "virtualCells"}, {"pinned_cells", "pinnedCells"}});
      for (auto& [key, value] : out.as_object()) {
        if (!value.is_array()) continue;
        for (auto& x : value.as_array()) {
          if (key == "virtualCells" && x.is_object()) {
            x = rename_keys(x, {{"type_path", "cellType"}, {"count", "cellNumber"}});
          } else if (key == "pinnedCells") {
            json_value pin = json_value::object();
            pin.insert("pinnedCellId", x);
            x = std::move(pin);
          }
        }
      }
      vcs.insert(name, std::move(out));
    }
  }
  json_value doc = json_value::object();
  doc.insert("physicalCluster", std::move(cluster));
  doc.insert("virtualClusters", std::move(vcs));
  if (chain_order != nullptr) {
    json_value ext = json_value::object();
    ext.insert("chainOrder", *chain_order);
    doc.insert("hetsched", std::move(ext));
  }
  return doc;
}

inline std::vector<std::string> strings(const json_value* v) {
  std::vector<std::string> out;
  if (v != nullptr && v->is_array())
    for (const auto& x : v->as_array()) out.push_back(str(&x));
  return out;
}

inline hived::pod_request read_pod(const json_value& specs, const std::string& name) {
  hived::pod_request p;
  p.name = name;
  const auto* j = specs.find(name);
  if (j == nullptr) return p;
  p.vc = str(j->find("vc"));
  p.priority = integer(j->find("priority"));
  p.pinned_cell = str(j->find("pinned_cell"));
  p.leaf_type = str(j->find("leaf_cell_type"));
  p.leaf_cells = integer(j->find("leaf_cells"), 1);
  p.group = str(j->find("group"));
  if (const auto* lp = j->find("lazy_preemption"); lp != nullptr && lp->is_bool())
    p.lazy_preemption = lp->as_bool();
  if (const auto* ig = j->find("ignore_k8s_suggested_nodes"); ig != nullptr && ig->is_bool())
    p.ignore_suggested_nodes = ig->as_bool();
  if (const auto* m = j->find("group_members"); m != nullptr && m->is_array())
    for (const auto& x : m->as_array())
      p.members.push_back(
          hived::member_spec{integer(x.find("pods")), integer(x.find("leaf_cells_per_pod"))});
  return p;
}

inline hived::bind_info read_bind(const json_value& j) {
  hived::bind_info b;
  b.node = str(j.find("node"));
  b.leaf_cells = ints(j.find("leaf_cells"));
  b.chain = str(j.find("chain"));
  if (const auto* g = j.find("group_pod_placements"); g != nullptr && g->is_object()) {
    for (const auto& [num, pods] : g->as_object()) {
      auto& list = b.group_placements[std::stoi(num)];
      for (const auto& pod : pods.as_array()) {
        hived::pod_placement pp;
        pp.node = str(pod.find("node"));
        pp.leaf_cells = ints(pod.find("leaf_cells"));
        std::string type = str(pod.find("preassigned_cell_type"));
        pp.preassigned_types.assign(pp.leaf_cells.size(), type);
        list.push_back(std::move(pp));
      }
    }
  }
  return b;
}

inline hived::node_filter read_nodes(const json_value* j, const std::vector<std::string>& all) {
  hived::node_filter f;
  if (j == nullptr || j->is_string()) return f;
  f.all = false;
  if (j->is_array()) {
    for (const auto& n : j->as_array()) f.nodes.push_back(n.as_string());
  } else if (const auto* ex = j->find("all_except"); ex != nullptr) {
    std::vector<std::string> skip;
    for (const auto& n : ex->as_array()) skip.push_back(n.as_string());
    for (const auto& n : all)
      if (std::find(skip.begin(), skip.end(), n) == skip.end()) f.nodes.push_back(n);
  }
  return f;
}

/// A config variant as hivedscheduler's config document: the vector's config keys with the
/// variant's structured patch applied in order and its recorded chain search order as the
/// "hetsched" extension's chainOrder. Patch paths for which `is_prose(path)` holds are not
/// applied but returned in `prose` (the caller translates them by hand). nullopt with `why` for
/// an unknown variant or a patch path that is neither structured nor known prose.
template <class IsProse>
std::optional<json_value> variant_document(const json_value& doc, const std::string& variant,
                                           IsProse is_prose, std::vector<std::string>& prose,
                                           std::string& why) {
  json_value cfg = json_value::object();
  for (const char* key : {"cell_types", "physical_cells", "virtual_clusters"}) {
    if (const auto* v = doc.find(key)) cfg.insert(key, *v);
  }
  const auto* variants = doc.find("config_variants");
  const auto* var = variants != nullptr ? variants->find(variant) : nullptr;
  if (var == nullptr) {
    why = fmt::format("unknown config variant {}", variant);
    return std::nullopt;
  }
  if (const auto* patch = var->find("patch"); patch != nullptr && patch->is_array()) {
    for (const auto& p : patch->as_array()) {
      const auto* value = p.find("value");
      std::string path = str(p.find("path"));
      if (is_prose(path)) {
        prose.push_back(path);
        continue;
      }
      if (value == nullptr || !apply_patch(cfg, path, *value)) {
        why = fmt::format("variant {} has an unknown prose patch: {}", variant, path);
        return std::nullopt;
      }
    }
  }
  const json_value* chain_order = nullptr;
  if (const auto* derived = var->find("derived_after_init"))
    chain_order = derived->find("chain_search_order_per_leaf_type");
  return hived_config_document(cfg, chain_order);
}

/// The config of a variant without prose patches (base, backtrack, bad_nodes, safe_relaxed,
/// invalid_initial), read by hived::parse_config_json; an error names the problem.
inline result<hived::config> variant_config(const json_value& doc, const std::string& variant) {
  std::vector<std::string> prose;
  std::string why;
  auto d = variant_document(
      doc, variant, [](const std::string&) { return false; }, prose, why);
  if (!d) return make_error(errc::invalid_argument, "{}", why);
  return hived::parse_config_json(detail::to_string(*d));
}

}  // namespace hetsched::conform::hived_vectors
