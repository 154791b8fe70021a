// SPDX-License-Identifier: MIT
// Conformance runner for the hived vector family (hived.hpp).
//
// Each scenario builds its config variant (the base config with the variant's structured patch
// applied in order, translated to hivedscheduler's config shape and read by
// hived::parse_config_json, the recorded chain search order as its chainOrder), constructs a fresh
// hived::scheduler, marks every node healthy and runs the steps in order. Every step is one case
// "<scenario>/<step>" that compares every recorded field hetsched's API produces:
// - schedule: result kind; for a bind the node and leaf order, the chain and every pod of the
//   group's placement with the preassigned cell type of each leaf (observed.chain,
//   observed.group_pod_placements); for a preemption the victims (union), the victims by node and
//   that the one node's victims upstream returned are one node's list of ours; for a wait the
//   reason text; for a user error a 4xx-class errc and the text (normalized_user_error);
//   group_after.
// - add_allocated: our bind record from the pod's schedule step must equal the recorded
//   bind_info (which is what hivedscheduler's Schedule returned), and ours is committed; a pod
//   without a schedule step replays the recorded record.
// - delete_allocated (with the committed record), delete_unallocated, set_bad_node /
//   set_healthy_node (VC cell health, priority and bound physical cell), construct (the config
//   error text).
// The reconfig variant's prose patch is hand-translated (apply_prose_patch); any other prose patch
// makes its scenarios skipped. Each variant with recorded derived_after_init data is also a case
// "variant/<name>/init": free lists (exact order), top-level, pinned, VC preassigned and node-level
// cells, and the counters.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

#include "conform.hpp"
#include "hived_vectors.hpp"

namespace hetsched::conform {
namespace {

using detail::json_value;
using namespace hived_vectors;

// The reconfig variant's physical-cell changes are prose (hivedscheduler's reconfiguration test
// edits its parsed, address-inferred config in code). Hand translation of the two known texts:
// - "physical_cells[7] ... node 0.0.3.0 renamed": the first node of the first 4-DGX2-V100-NODE
//   cell gets the full address "0.0.3.100" (not appended to its parent's address);
// - "physical_cells[8] ... split": cell 8's four nodes become top-level DGX2-V100-NODE cells
//   (position 8 and appended, keeping their inferred full addresses 8/16/0.0.4.0 ... 8/17/0.0.4.3),
//   then the original cell is appended with its inferred address "8" and its nodes renamed to
//   the full addresses 0.0.4.100 ... 0.0.4.103.
constexpr const char* prose_rename_prefix = "physical_cells[7] (first 4-DGX2-V100-NODE)";
constexpr const char* prose_split_prefix = "physical_cells[8] (second 4-DGX2-V100-NODE) split";

bool is_known_prose_patch(const std::string& path) {
  return path.rfind(prose_rename_prefix, 0) == 0 || path.rfind(prose_split_prefix, 0) == 0;
}

void apply_prose_patch(hived::config& cfg, const std::string& path) {
  auto& cells = cfg.physical_cells;
  if (path.rfind(prose_rename_prefix, 0) == 0) {
    auto& node = cells.at(7).children.at(0).children.at(0);
    node.address = "0.0.3.100";
    node.absolute_address = true;
    return;
  }
  hived::physical_cell_spec original = cells.at(8);
  original.address = "8";  // its inferred address, kept when it is appended at the end
  std::vector<hived::physical_cell_spec> nodes;
  int k = 0;
  for (int half = 0; half < 2; ++half) {
    // Children of cell 8 have the inferred addresses 8 * 2 + half = 16, 17.
    std::string half_address = fmt::format("8/{}", 16 + half);
    for (int i = 0; i < 2; ++i, ++k) {
      hived::physical_cell_spec node = original.children.at(static_cast<std::size_t>(half))
                                           .children.at(static_cast<std::size_t>(i));
      node.cell_type = "DGX2-V100-NODE";
      node.address = half_address;
      node.address += "/";
      node.address += original.children[static_cast<std::size_t>(half)]
                          .children[static_cast<std::size_t>(i)]
                          .address;
      nodes.push_back(std::move(node));
      auto& renamed =
          original.children[static_cast<std::size_t>(half)].children[static_cast<std::size_t>(i)];
      renamed.address = fmt::format("0.0.4.{}", 100 + k);
      renamed.absolute_address = true;
    }
  }
  cells[8] = nodes[0];
  for (std::size_t i = 1; i < nodes.size(); ++i) cells.push_back(nodes[i]);
  cells.push_back(std::move(original));
}

/// Returns the variant's config, or nullopt with `why`: a skip (unknown variant or prose patch),
/// or a failure (`failed` set) when parse_config_json rejects the translated document.
std::optional<hived::config> read_config(const json_value& doc, const std::string& variant,
                                         std::string& why, bool& failed) {
  failed = false;
  std::vector<std::string> prose;
  auto document = variant_document(doc, variant, is_known_prose_patch, prose, why);
  if (!document) return std::nullopt;
  auto parsed = hived::parse_config_json(detail::to_string(*document));
  if (!parsed) {
    why = fmt::format("variant {}: {}", variant, parsed.error().message);
    failed = true;
    return std::nullopt;
  }
  hived::config out = std::move(*parsed);
  for (const auto& path : prose) apply_prose_patch(out, path);
  return out;
}

std::string state_name(hived::group_state s) {
  switch (s) {
    case hived::group_state::allocated: return "Allocated";
    case hived::group_state::preempting: return "Preempting";
    case hived::group_state::being_preempted: return "BeingPreempted";
  }
  return "?";
}

/// Compares a group_after block; returns what differs (empty = equal).
std::string check_group(const hived::scheduler& s, const std::string& group,
                        const json_value& expect) {
  auto g = s.group(group);
  bool exists = expect.find("exists")->as_bool();
  if (!exists) return g ? fmt::format("group {} exists, expected none", group) : "";
  if (!g) return fmt::format("group {} does not exist", group);
  std::string diff;
  if (auto st = str(expect.find("state")); !st.empty() && st != state_name(g->state))
    diff += fmt::format("state {} != {}; ", state_name(g->state), st);
  if (const auto* d = expect.find("virtual_placement_dropped");
      d != nullptr && d->as_bool() != g->virtual_placement_dropped)
    diff += fmt::format("virtual_placement_dropped {}; ", g->virtual_placement_dropped);
  if (const auto* pp = expect.find("physical_placement"); pp != nullptr) {
    std::map<std::string, std::vector<int>> want;
    for (const auto& [node, leaves] : pp->as_object()) {
      auto l = ints(&leaves);
      std::sort(l.begin(), l.end());
      want[node] = l;
    }
    if (want != g->physical_placement)
      diff += fmt::format("placement {} != {}; ", g->physical_placement, want);
  }
  return diff;
}

std::string check_vc_cells(const hived::scheduler& s, const json_value& step) {
  std::string diff;
  for (const auto& [key, value] : step.find("expect")->as_object()) {
    const std::string prefix = "vc_cells_chain_";
    if (key.rfind(prefix, 0) != 0) continue;
    auto level_pos = key.rfind("_level_");
    std::string chain = key.substr(prefix.size(), level_pos - prefix.size());
    int level = std::stoi(key.substr(level_pos + 7));
    for (const auto& [vc, cells] : value.as_object()) {
      auto got = s.vc_cells(vc, chain, level);
      for (const auto& cell : cells.as_array()) {
        std::string addr = str(cell.find("address"));
        auto it =
            std::find_if(got.begin(), got.end(), [&](const auto& c) { return c.address == addr; });
        if (it == got.end()) {
          diff += fmt::format("missing VC cell {}; ", addr);
          continue;
        }
        int prio = integer(cell.find("priority"));
        bool healthy = str(cell.find("health")) == "Healthy";
        if (it->priority != prio || it->healthy != healthy)
          diff += fmt::format("{}: priority {} health {} (want {} {}); ", addr, it->priority,
                              it->healthy ? "Healthy" : "Bad", prio, str(cell.find("health")));
      }
    }
  }
  return diff;
}

/// Compares observed bound_to_physical (recorded with VCs in ascending name order).
std::string check_bound_to(const hived::scheduler& s, const json_value& step) {
  const auto* observed = step.find("observed");
  if (observed == nullptr || !observed->is_object()) return {};
  std::string diff;
  for (const auto& [key, value] : observed->as_object()) {
    if (key.rfind("bound_to_physical", 0) != 0) continue;
    for (const auto& [vc, cells] : value.as_object()) {
      for (const auto& [addr, bound] : cells.as_object()) {
        std::string got;
        bool found = false;
        for (const auto& chain_level : s.vc_cells_all(vc)) {
          if (chain_level.address == addr) {
            got = chain_level.bound_to;
            found = true;
          }
        }
        std::string want = bound.is_string() ? bound.as_string() : std::string();
        if (!found || got != want)
          diff += fmt::format("{} bound to '{}' (want '{}'); ", addr, got, want);
      }
    }
  }
  return diff;
}

/// Compares the free lists after construction with derived_after_init.free_lists_after_init.
std::string check_free_lists(const hived::scheduler& s, const json_value& derived) {
  const auto* lists = derived.find("free_lists_after_init");
  if (lists == nullptr) return {};
  std::string diff;
  for (const auto& [chain, levels] : lists->as_object()) {
    for (int level = 1; level <= 16; ++level) {
      auto got = s.free_list(chain, level);
      std::vector<std::string> want;
      if (const auto* l = levels.find(std::to_string(level)); l != nullptr)
        for (const auto& c : l->as_array()) want.push_back(c.as_string());
      if (got != want) diff += fmt::format("{} level {}: {} != {}; ", chain, level, got, want);
    }
  }
  return diff;
}

std::string cell_key(const std::string& chain, const std::string& address, const std::string& type,
                     int level, const std::vector<std::string>& nodes) {
  return fmt::format("{}|{}|{}|{}|{}", chain, address, type, level, nodes);
}

/// Compares two key lists as sets (the recorded order of these lists is Go map order).
std::string compare_sets(const char* what, std::vector<std::string> got,
                         std::vector<std::string> want) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  if (got == want) return {};
  return fmt::format("{}: {} != {}; ", what, got, want);
}

/// Compares everything else derived_after_init records: top-level cells, pinned physical cells,
/// VC preassigned cells, node-level cells (leaf order exact), totalLeft and allVCFree counters.
/// chain_search_order_per_leaf_type is the order the runner passes in options::chain_order.
std::string check_derived(const hived::scheduler& s, const json_value& derived) {
  std::string diff;
  auto physical = [&](const char* key, const std::vector<hived::cell_info>& cells) {
    const auto* list = derived.find(key);
    if (list == nullptr) return;
    std::vector<std::string> got;
    std::vector<std::string> want;
    for (const auto& c : cells)
      got.push_back(cell_key(c.chain, c.address, c.type, c.level, c.nodes));
    for (const auto& c : list->as_array())
      want.push_back(cell_key(str(c.find("chain")), str(c.find("address")), str(c.find("type")),
                              integer(c.find("level")), strings(c.find("nodes"))));
    diff += compare_sets(key, got, want);
  };
  physical("top_level_cells", s.top_level_cells());
  physical("pinned_physical_cells", s.pinned_physical_cells());
  if (const auto* list = derived.find("vc_preassigned_cells")) {
    std::vector<std::string> got;
    std::vector<std::string> want;
    for (const auto& c : s.vc_preassigned_cells())
      got.push_back(fmt::format("{}|{}|{}|{}|{}", c.vc, c.address, c.chain, c.level,
                                c.pinned_id.empty() ? "type=" + c.type : "pin=" + c.pinned_id));
    for (const auto& c : list->as_array()) {
      std::string pin = str(c.find("pinned_id"));
      want.push_back(fmt::format("{}|{}|{}|{}|{}", str(c.find("vc")), str(c.find("address")),
                                 str(c.find("chain")), integer(c.find("level")),
                                 pin.empty() ? "type=" + str(c.find("type")) : "pin=" + pin));
    }
    diff += compare_sets("vc_preassigned_cells", got, want);
  }
  if (const auto* list = derived.find("node_level_cells")) {
    std::vector<std::string> got;
    std::vector<std::string> want;
    for (const auto& c : s.node_level_cells())
      got.push_back(fmt::format("{}|{}|{}|{}|{}", c.chain, c.nodes.empty() ? "" : c.nodes[0],
                                c.address, c.type, c.leaf_indices));
    for (const auto& c : list->as_array())
      want.push_back(fmt::format("{}|{}|{}|{}|{}", str(c.find("chain")), str(c.find("node")),
                                 str(c.find("node_cell_address")), str(c.find("node_cell_type")),
                                 ints(c.find("leaf_indices_in_tree_order"))));
    diff += compare_sets("node_level_cells", got, want);
  }
  auto counters = [&](const char* key, bool all_levels_listed, auto query) {
    const auto* chains = derived.find(key);
    if (chains == nullptr) return;
    for (const auto& [chain, levels] : chains->as_object()) {
      std::vector<int> got = query(chain);
      if (got.empty()) {
        diff += fmt::format("{}: unknown chain {}; ", key, chain);
        continue;
      }
      for (std::size_t l = 1; l < got.size(); ++l) {
        const auto* want = levels.find(std::to_string(l));
        if (want == nullptr && all_levels_listed) {
          diff += fmt::format("{} {}: level {} not recorded; ", key, chain, l);
        } else if (integer(want) != got[l]) {
          diff += fmt::format("{} {} level {}: {} != {}; ", key, chain, l, got[l], integer(want));
        }
      }
      for (const auto& [level, value] : levels.as_object())
        if (static_cast<std::size_t>(std::stoi(level)) >= got.size())
          diff += fmt::format("{} {}: no level {}; ", key, chain, level);
    }
  };
  counters("total_left_cell_num_after_init", true,
           [&](const std::string& c) { return s.total_left_cells(c); });
  counters("all_vc_free_cell_num_after_init", false,
           [&](const std::string& c) { return s.all_vc_free_cells(c); });
  return diff;
}

/// One pod placement as text: node, leaves, preassigned type per leaf ("-" = opportunistic).
std::string describe(const hived::pod_placement& p) {
  std::vector<std::string> types;
  for (const auto& t : p.preassigned_types) types.push_back(t.empty() ? "-" : t);
  return fmt::format("{}{}{}", p.node, p.leaf_cells, types);
}

std::string describe(const std::map<int, std::vector<hived::pod_placement>>& group) {
  std::vector<std::string> parts;
  for (const auto& [num, pods] : group) {
    std::vector<std::string> list;
    for (const auto& p : pods) list.push_back(describe(p));
    parts.push_back(fmt::format("{}: [{}]", num, fmt::join(list, ", ")));
  }
  return fmt::format("{{{}}}", fmt::join(parts, "; "));
}

/// Compares our bind record with hivedscheduler's (node, leaf order, chain, and every pod of
/// the group with the preassigned cell type of each leaf); returns what differs.
std::string compare_bind(const hived::bind_info& ours, const hived::bind_info& recorded) {
  std::string diff;
  if (ours.node != recorded.node || ours.leaf_cells != recorded.leaf_cells)
    diff += fmt::format("bind {} {} != {} {}; ", ours.node, ours.leaf_cells, recorded.node,
                        recorded.leaf_cells);
  if (ours.chain != recorded.chain)
    diff += fmt::format("chain {} != {}; ", ours.chain, recorded.chain);
  if (ours.group_placements != recorded.group_placements)
    diff += fmt::format("group placements {} != {}; ", describe(ours.group_placements),
                        describe(recorded.group_placements));
  return diff;
}

/// hivedscheduler's user error text in hetsched's form: without the HTTP wrapper ("Code: 400,
/// Message: "), and with the pod named "[name]: " where upstream prints "[name(ns/name)]: "
/// (algorithm errors) or the annotation prefix (spec validation errors): pod_request has no
/// namespace and no annotation. Empty if the text is not a 4xx error.
std::string normalized_user_error(const std::string& recorded, const std::string& pod) {
  const std::string http = "Code: 4";
  if (recorded.rfind(http, 0) != 0) return {};
  const std::string message = "Message: ";
  auto at = recorded.find(message);
  if (at == std::string::npos) return {};
  std::string text = recorded.substr(at + message.size());
  const std::string annotation =
      "Pod annotation hivedscheduler.microsoft.com/pod-scheduling-spec: ";
  if (text.rfind(annotation, 0) == 0)
    return fmt::format("[{}]: {}", pod, text.substr(annotation.size()));
  if (text.rfind("[" + pod + "(", 0) == 0) {
    auto close = text.find(")]: ");
    if (close != std::string::npos) return fmt::format("[{}]: {}", pod, text.substr(close + 4));
  }
  return text;
}

bool is_user_error(errc code) {
  return code == errc::invalid_argument || code == errc::not_found || code == errc::out_of_range;
}

/// Compares a schedule() answer with the step's expect and observed blocks. `pending` receives
/// a bind record for the add_allocated step that commits it.
std::string check_schedule(const result<hived::schedule_result>& r, const json_value& step,
                           const std::string& pod_name, hived::bind_info& pending,
                           bool& has_pending) {
  const json_value& expect = *step.find("expect");
  const json_value* observed = step.find("observed");
  auto recorded = [&](const char* key) -> const json_value* {
    if (observed == nullptr || !observed->is_object()) return nullptr;
    const auto* v = observed->find(key);
    return v != nullptr && !v->is_null() ? v : nullptr;
  };
  std::string want = str(expect.find("result"));
  std::string diff;
  if (!r) {
    if (want != "user_error") return fmt::format("user error: {}; ", r.error().message);
    if (!is_user_error(r.error().code))
      diff += fmt::format("error code {} is not a user error; ", to_string(r.error().code));
    if (const auto* e = recorded("error")) {
      std::string text = normalized_user_error(str(e), pod_name);
      if (text.empty()) {
        diff += fmt::format("recorded error is not a 4xx user error: {}; ", str(e));
      } else if (r.error().message != text) {
        diff += fmt::format("error '{}' != '{}'; ", r.error().message, text);
      }
    }
    return diff;
  }
  if (want == "user_error") return "expected a user error; ";
  if (want == "bind") {
    if (r->kind != hived::outcome::bind)
      return fmt::format("not a bind (wait: {}); ", r->wait_reason);
    pending = r->bind;
    has_pending = true;
    hived::bind_info expected;
    expected.node = str(expect.find("node"));
    expected.leaf_cells = ints(expect.find("leaf_cells"));
    expected.chain = str(recorded("chain"));
    if (const auto* g = recorded("group_pod_placements")) {
      json_value holder = json_value::object();
      holder.insert("group_pod_placements", *g);
      expected.group_placements = read_bind(holder).group_placements;
    } else {
      expected.group_placements = r->bind.group_placements;
    }
    if (recorded("chain") == nullptr) expected.chain = r->bind.chain;
    diff += compare_bind(r->bind, expected);
  } else if (want == "preempt") {
    if (r->kind != hived::outcome::preempt)
      return fmt::format("not a preemption (kind {}, wait: {}); ", static_cast<int>(r->kind),
                         r->wait_reason);
    std::vector<std::string> got;
    for (const auto& [node, pods] : r->victims_by_node)
      got.insert(got.end(), pods.begin(), pods.end());
    std::sort(got.begin(), got.end());
    got.erase(std::unique(got.begin(), got.end()), got.end());
    std::vector<std::string> victims = strings(expect.find("victims"));
    std::sort(victims.begin(), victims.end());
    if (got != victims) diff += fmt::format("victims {} != {}; ", got, victims);
    if (const auto* by_node = recorded("victims_by_node")) {
      std::map<std::string, std::vector<std::string>> want_by_node;
      for (const auto& [node, pods] : by_node->as_object()) {
        auto list = strings(&pods);
        std::sort(list.begin(), list.end());
        want_by_node[node] = list;
      }
      auto ours = r->victims_by_node;
      for (auto& [node, pods] : ours) std::sort(pods.begin(), pods.end());
      if (ours != want_by_node)
        diff += fmt::format("victims by node {} != {}; ", ours, want_by_node);
    }
    // hivedscheduler returns one random node's victims: they must be one node's list of ours.
    if (const auto* one = recorded("victims_returned_for_one_random_node")) {
      auto list = strings(one);
      std::sort(list.begin(), list.end());
      bool found = false;
      for (const auto& [node, pods] : r->victims_by_node) {
        auto sorted = pods;
        std::sort(sorted.begin(), sorted.end());
        found = found || sorted == list;
      }
      if (!found) diff += fmt::format("no node has exactly the victims {}; ", list);
    }
  } else if (want == "wait") {
    if (r->kind != hived::outcome::wait) return "not a wait; ";
    if (const auto* reason = recorded("wait_reason");
        reason != nullptr && r->wait_reason != str(reason))
      diff += fmt::format("wait reason '{}' != '{}'; ", r->wait_reason, str(reason));
  }
  return diff;
}

/// Bind records of one scenario: the last one schedule() returned per pod (committed by the
/// pod's add_allocated step) and the committed one per pod (for delete_allocated).
struct bind_log {
  std::map<std::string, hived::bind_info> pending;
  std::map<std::string, hived::bind_info> committed;
};

std::string run_step(hived::scheduler& s, const json_value& doc, const json_value& step,
                     const std::vector<std::string>& all_nodes, bind_log& binds) {
  const auto& specs = *doc.find("pod_specs");
  std::string op = str(step.find("op"));
  const json_value& expect = *step.find("expect");
  std::string pod_name = str(step.find("pod"));
  auto pod = read_pod(specs, pod_name);
  std::string group = pod.group.empty() ? pod.name : pod.group;
  std::string diff;
  if (op == "schedule") {
    auto ph =
        str(step.find("phase")) == "Filtering" ? hived::phase::filtering : hived::phase::preempting;
    auto r = s.schedule(pod, read_nodes(step.find("suggested_nodes"), all_nodes), ph);
    hived::bind_info pending;
    bool has_pending = false;
    diff += check_schedule(r, step, pod_name, pending, has_pending);
    if (has_pending) binds.pending[pod_name] = std::move(pending);
  } else if (op == "add_allocated") {
    // The recorded bind_info is what hivedscheduler's Schedule returned for this pod; ours (from
    // the pod's schedule step) must equal it, and ours is what gets committed. Without a
    // schedule step of ours for the pod, the recorded record is replayed (recovery).
    auto recorded = read_bind(*step.find("bind_info"));
    hived::bind_info info = recorded;
    if (auto it = binds.pending.find(pod_name); it != binds.pending.end()) {
      diff += compare_bind(it->second, recorded);
      info = it->second;
      binds.pending.erase(it);
    }
    if (auto r = s.add_allocated(pod, info); !r)
      diff += fmt::format("add failed: {}; ", r.error().message);
    binds.committed[pod_name] = std::move(info);
  } else if (op == "delete_allocated") {
    auto it = binds.committed.find(pod_name);
    hived::bind_info info = it != binds.committed.end() ? it->second : hived::bind_info{};
    if (auto r = s.delete_allocated(pod, info); !r)
      diff += fmt::format("delete failed: {}; ", r.error().message);
  } else if (op == "delete_unallocated") {
    s.delete_unallocated(pod);
  } else if (op == "set_bad_node") {
    s.set_node_bad(str(step.find("node")));
  } else if (op == "set_healthy_node") {
    s.set_node_healthy(str(step.find("node")));
  } else {
    return fmt::format("unsupported op {}", op);
  }
  if (const auto* ga = expect.find("group_after"); ga != nullptr && !pod_name.empty())
    diff += check_group(s, group, *ga);
  diff += check_vc_cells(s, step);
  diff += check_bound_to(s, step);
  return diff;
}

}  // namespace

void run_hived(const detail::json_value& doc, reporter& out) {
  // Every config variant with a structured patch: construct, mark all nodes healthy, compare the
  // free lists with derived_after_init (covers variants no scenario of the file uses).
  if (const auto* variants = doc.find("config_variants");
      variants != nullptr && variants->is_object()) {
    for (const auto& [vname, var] : variants->as_object()) {
      const auto* derived = var.find("derived_after_init");
      if (derived == nullptr || derived->find("free_lists_after_init") == nullptr) continue;
      std::string id = fmt::format("variant/{}/init", vname);
      std::string why;
      bool failed = false;
      auto cfg = read_config(doc, vname, why, failed);
      if (!cfg) {
        if (failed) {
          out.fail(id, why);
        } else {
          out.skip(id, why);
        }
        continue;
      }
      auto created = hived::scheduler::create(*cfg);
      if (!created) {
        out.fail(id, created.error().message);
        continue;
      }
      created->mark_all_nodes_healthy();
      std::string diff = check_free_lists(*created, *derived) + check_derived(*created, *derived);
      if (diff.empty()) {
        out.pass(id);
      } else {
        out.fail(id, diff);
      }
    }
  }
  for (const auto& c : list_cases(doc, "scenarios", "hived", out)) {
    const auto& sc = *c.json;
    std::string name = str(sc.find("name"));
    const auto* steps = sc.find("steps");
    std::string why;
    bool failed = false;
    auto cfg = read_config(doc, str(sc.find("config_variant")), why, failed);
    if (failed) {
      out.fail(name, why);
      continue;
    }
    if (!cfg || steps == nullptr || !steps->is_array()) {
      out.skip(name, why.empty() ? "no steps" : why);
      continue;
    }
    auto created = hived::scheduler::create(*cfg);
    const auto& step_list = steps->as_array();
    std::size_t first = 0;
    if (!step_list.empty() && str(step_list[0].find("op")) == "construct") {
      const auto& expect = *step_list[0].find("expect");
      std::string id = fmt::format("{}/{}", name, integer(step_list[0].find("step"), 1));
      if (str(expect.find("result")) == "config_error") {
        std::string msg = str(expect.find("observed_message"));
        if (created) {
          out.fail(id, "constructed, expected a config error");
        } else if (created.error().message != msg) {
          out.fail(id, fmt::format("{} != {}", created.error().message, msg));
        } else {
          out.pass(id);
        }
        continue;
      }
      first = 1;
      if (created) out.pass(id);
    }
    if (!created) {
      out.fail(name, fmt::format("construction failed: {}", created.error().message));
      continue;
    }
    hived::scheduler& s = *created;
    s.mark_all_nodes_healthy();
    const auto* variants = doc.find("config_variants");
    const auto* var = variants->find(str(sc.find("config_variant")));
    if (const auto* derived = var->find("derived_after_init")) {
      std::string diff = check_free_lists(s, *derived);
      if (diff.empty()) {
        out.pass(fmt::format("{}/init", name));
      } else {
        out.fail(fmt::format("{}/init", name), diff);
      }
    }
    auto all_nodes = s.nodes();
    bind_log binds;
    for (std::size_t i = first; i < step_list.size(); ++i) {
      const auto& step = step_list[i];
      std::string id =
          fmt::format("{}/{}:{}{}", name, integer(step.find("step")), str(step.find("op")),
                      step.find("pod") != nullptr ? fmt::format(" {}", str(step.find("pod"))) : "");
      std::string diff = run_step(s, doc, step, all_nodes, binds);
      if (diff.empty()) {
        out.pass(id);
      } else {
        out.fail(id, diff);
      }
    }
  }
}

}  // namespace hetsched::conform
