// SPDX-License-Identifier: MIT
// Conformance runner for the hived vector family (hived.hpp).
//
// Each scenario builds its config variant (the base config with the variant's structured patch
// applied in order, translated to hivedscheduler's config shape and read by
// hived::parse_config_json, the recorded chain search order as its chainOrder), constructs a fresh
// hived::scheduler, marks every node healthy and runs the steps in order. Every step is one case
// "<scenario>/<step>:<op>[ <pod>]" that compares every recorded field hetsched's API produces;
// a field the step does not record is not checked (a step without "expect" checks nothing but
// that the call succeeds):
// - schedule: result kind; for a bind the node and leaf order, the chain and every pod of the
//   group's placement with the preassigned cell type of each leaf (observed.chain,
//   observed.group_pod_placements); for a preemption the victims (union), the victims by node and
//   that the one node's victims upstream returned are one node's list of ours; for a wait the
//   reason text; for a user error a 4xx-class errc and the text (normalized_user_error);
//   group_after.
// - add_allocated: our bind record from the pod's schedule step must equal the recorded
//   bind_info (which is what hivedscheduler's Schedule returned), and ours is committed; a pod
//   without a schedule step replays the recorded record (a step with neither fails).
// - delete_allocated (with the committed record), delete_unallocated, set_bad_node /
//   set_healthy_node (VC cell health, priority and bound physical cell), construct (the config
//   error text).
// - check_groups: checks groups without calling the scheduler (hivedscheduler's test asserts
//   this after deletions, stateful preemption and reconfiguration). Its format, hetsched's, as
//   reference/hived.md names the op but not its fields:
//     {"op": "check_groups", "expect": {"groups": {"<group>": <group_after block>, ...}}}
//   where each block is what schedule steps record as expect.group_after (exists, state,
//   virtual_placement_dropped, physical_placement); "exists" defaults to true.
// Any other op is skipped, and so is the rest of its scenario (its state is then unknown).
// A malformed step (a required field missing, a field of the wrong type) fails that step naming
// the JSON path. The reconfig variant's prose patch is hand-translated (apply_prose_patch); any
// other prose patch makes its scenarios skipped. Each variant with recorded derived_after_init
// data is also a case "variant/<name>/init": free lists (exact order), top-level, pinned, VC
// preassigned and node-level cells, and the counters.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

#include "conform.hpp"
#include "hived_vectors.hpp"

namespace hetsched::conform {
namespace {

using jsonio::json;
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

// Throws vector_error naming `path` unless the cells the two known texts edit exist.
void check_prose_patch_cells(const hived::config& cfg, const std::string& path) {
  const auto& cells = cfg.physical_cells;
  const auto grandchildren = [&](std::size_t c) {
    if (cells.size() <= c || cells[c].children.size() < 2) return false;
    return cells[c].children[0].children.size() >= 2 && cells[c].children[1].children.size() >= 2;
  };
  if (!grandchildren(7) || !grandchildren(8)) {
    throw vector_error(
        fmt::format("prose patch '{}': the config has no physical_cells[7] and [8] "
                    "with 2 x 2 grandchildren to edit",
                    path));
  }
}

void apply_prose_patch(hived::config& cfg, const std::string& path) {
  check_prose_patch_cells(cfg, path);
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

/// Returns the variant's config, or nullopt with `why`: a skip (a prose patch hetsched cannot
/// translate), or a failure (`failed` set) when parse_config_json rejects the translated
/// document. Throws vector_error for a variant the file does not define or a malformed patch.
std::optional<hived::config> read_config(const vector_value& doc, const std::string& variant,
                                         std::string& why, bool& failed) {
  failed = false;
  std::vector<std::string> prose;
  auto document = variant_document(doc, variant, is_known_prose_patch, prose, why);
  if (!document) return std::nullopt;
  auto parsed = hived::parse_config_json(jsonio::to_string(*document));
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

/// Compares a group_after block ({exists, state, virtual_placement_dropped, physical_placement},
/// each optional; exists defaults to true); returns what differs (empty = equal).
std::string check_group(const hived::scheduler& s, const std::string& group,
                        const vector_value& expect) {
  auto g = s.group(group);
  if (!expect["exists"].boolean_or(true))
    return g ? fmt::format("group {} exists, expected none; ", group) : "";
  if (!g) return fmt::format("group {} does not exist; ", group);
  std::string diff;
  if (auto st = expect["state"].string_or(""); !st.empty() && st != state_name(g->state))
    diff += fmt::format("group {} state {} != {}; ", group, state_name(g->state), st);
  if (const vector_value d = expect["virtual_placement_dropped"];
      d.present() && d.boolean() != g->virtual_placement_dropped)
    diff +=
        fmt::format("group {} virtual_placement_dropped {}; ", group, g->virtual_placement_dropped);
  if (const vector_value pp = expect["physical_placement"]; pp.present()) {
    std::map<std::string, std::vector<int>> want;
    for (const auto& [node, leaves] : pp.members()) {
      auto l = ints(leaves);
      std::sort(l.begin(), l.end());
      want[node] = l;
    }
    if (want != g->physical_placement)
      diff += fmt::format("group {} placement {} != {}; ", group, g->physical_placement, want);
  }
  return diff;
}

/// Compares the expect.vc_cells_chain_<chain>_level_<level> blocks: per VC, each listed cell's
/// priority and health.
std::string check_vc_cells(const hived::scheduler& s, const vector_value& expect) {
  std::string diff;
  for (const auto& [key, value] : expect.members()) {
    const std::string prefix = "vc_cells_chain_";
    if (key.rfind(prefix, 0) != 0) continue;
    const auto level_pos = key.rfind("_level_");
    const auto level = level_pos == std::string::npos || level_pos < prefix.size()
                           ? std::nullopt
                           : parse_int(std::string_view(key).substr(level_pos + 7));
    if (!level) value.fail("the key is not vc_cells_chain_<chain>_level_<level>");
    const std::string chain = key.substr(prefix.size(), level_pos - prefix.size());
    for (const auto& [vc, cells] : value.members()) {
      auto got = s.vc_cells(vc, chain, *level);
      for (const vector_value& cell : cells.items()) {
        const std::string addr = cell["address"].string();
        auto it =
            std::find_if(got.begin(), got.end(), [&](const auto& c) { return c.address == addr; });
        if (it == got.end()) {
          diff += fmt::format("missing VC cell {}; ", addr);
          continue;
        }
        const std::string health = cell["health"].string_or("");
        const auto prio = cell["priority"].integer_or(it->priority);
        const bool healthy = health.empty() ? it->healthy : health == "Healthy";
        if (it->priority != prio || it->healthy != healthy)
          diff += fmt::format("{}: priority {} health {} (want {} {}); ", addr, it->priority,
                              it->healthy ? "Healthy" : "Bad", prio, health);
      }
    }
  }
  return diff;
}

/// Compares observed bound_to_physical (recorded with VCs in ascending name order).
std::string check_bound_to(const hived::scheduler& s, const vector_value& observed) {
  std::string diff;
  for (const auto& [key, value] : observed.members()) {
    if (key.rfind("bound_to_physical", 0) != 0) continue;
    for (const auto& [vc, cells] : value.members()) {
      for (const auto& [addr, bound] : cells.members()) {
        std::string got;
        bool found = false;
        for (const auto& chain_level : s.vc_cells_all(vc)) {
          if (chain_level.address == addr) {
            got = chain_level.bound_to;
            found = true;
          }
        }
        const std::string want = bound.string_or("");
        if (!found || got != want)
          diff += fmt::format("{} bound to '{}' (want '{}'); ", addr, got, want);
      }
    }
  }
  return diff;
}

/// Compares the free lists after construction with derived_after_init.free_lists_after_init.
std::string check_free_lists(const hived::scheduler& s, const vector_value& derived) {
  std::string diff;
  for (const auto& [chain, levels] : derived["free_lists_after_init"].members()) {
    for (int level = 1; level <= 16; ++level) {
      auto got = s.free_list(chain, level);
      const std::vector<std::string> want = levels[std::to_string(level)].strings();
      if (got != want) diff += fmt::format("{} level {}: {} != {}; ", chain, level, got, want);
    }
  }
  return diff;
}

std::string cell_key(const std::string& chain, const std::string& address, const std::string& type,
                     std::int64_t level, const std::vector<std::string>& nodes) {
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
std::string check_derived(const hived::scheduler& s, const vector_value& derived) {
  std::string diff;
  auto physical = [&](const char* key, const std::vector<hived::cell_info>& cells) {
    const vector_value list = derived[key];
    if (!list.present()) return;
    std::vector<std::string> got;
    std::vector<std::string> want;
    for (const auto& c : cells)
      got.push_back(cell_key(c.chain, c.address, c.type, c.level, c.nodes));
    for (const vector_value& c : list.items())
      want.push_back(cell_key(c["chain"].string_or(""), c["address"].string_or(""),
                              c["type"].string_or(""), c["level"].integer_or(0),
                              c["nodes"].strings()));
    diff += compare_sets(key, got, want);
  };
  physical("top_level_cells", s.top_level_cells());
  physical("pinned_physical_cells", s.pinned_physical_cells());
  if (const vector_value list = derived["vc_preassigned_cells"]; list.present()) {
    std::vector<std::string> got;
    std::vector<std::string> want;
    for (const auto& c : s.vc_preassigned_cells())
      got.push_back(fmt::format("{}|{}|{}|{}|{}", c.vc, c.address, c.chain, c.level,
                                c.pinned_id.empty() ? "type=" + c.type : "pin=" + c.pinned_id));
    for (const vector_value& c : list.items()) {
      const std::string pin = c["pinned_id"].string_or("");
      want.push_back(fmt::format("{}|{}|{}|{}|{}", c["vc"].string_or(""),
                                 c["address"].string_or(""), c["chain"].string_or(""),
                                 c["level"].integer_or(0),
                                 pin.empty() ? "type=" + c["type"].string_or("") : "pin=" + pin));
    }
    diff += compare_sets("vc_preassigned_cells", got, want);
  }
  if (const vector_value list = derived["node_level_cells"]; list.present()) {
    std::vector<std::string> got;
    std::vector<std::string> want;
    for (const auto& c : s.node_level_cells())
      got.push_back(fmt::format("{}|{}|{}|{}|{}", c.chain, c.nodes.empty() ? "" : c.nodes[0],
                                c.address, c.type, c.leaf_indices));
    for (const vector_value& c : list.items())
      want.push_back(fmt::format("{}|{}|{}|{}|{}", c["chain"].string_or(""),
                                 c["node"].string_or(""), c["node_cell_address"].string_or(""),
                                 c["node_cell_type"].string_or(""),
                                 ints(c["leaf_indices_in_tree_order"])));
    diff += compare_sets("node_level_cells", got, want);
  }
  auto counters = [&](const char* key, bool all_levels_listed, auto query) {
    for (const auto& [chain, levels] : derived[key].members()) {
      std::vector<int> got = query(chain);
      if (got.empty()) {
        diff += fmt::format("{}: unknown chain {}; ", key, chain);
        continue;
      }
      for (std::size_t l = 1; l < got.size(); ++l) {
        const vector_value want = levels[std::to_string(l)];
        if (!want.present() && all_levels_listed) {
          diff += fmt::format("{} {}: level {} not recorded; ", key, chain, l);
        } else if (want.integer_or(0) != got[l]) {
          diff +=
              fmt::format("{} {} level {}: {} != {}; ", key, chain, l, got[l], want.integer_or(0));
        }
      }
      for (const auto& [level, value] : levels.members()) {
        const auto n = parse_int(level);
        if (!n || *n < 1) value.fail("the key is not a cell level");
        if (static_cast<std::size_t>(*n) >= got.size())
          diff += fmt::format("{} {}: no level {}; ", key, chain, level);
      }
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

/// Compares a schedule() answer with the step's expect and observed blocks (either may be
/// absent: nothing to check). `pending` receives a bind record for the add_allocated step that
/// commits it.
std::string check_schedule(const result<hived::schedule_result>& r, const vector_value& step,
                           const std::string& pod_name, hived::bind_info& pending,
                           bool& has_pending) {
  const vector_value expect = step["expect"];
  const vector_value observed = step["observed"];
  const std::string want = expect["result"].string_or("");
  if (r && r->kind == hived::outcome::bind) {
    pending = r->bind;
    has_pending = true;
  }
  std::string diff;
  if (!r) {
    if (want.empty()) return {};
    if (want != "user_error") return fmt::format("user error: {}; ", r.error().message);
    if (!is_user_error(r.error().code))
      diff += fmt::format("error code {} is not a user error; ", to_string(r.error().code));
    if (const vector_value e = observed["error"]; e.present()) {
      const std::string recorded = e.string();
      std::string text = normalized_user_error(recorded, pod_name);
      if (text.empty()) {
        diff += fmt::format("recorded error is not a 4xx user error: {}; ", recorded);
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
    hived::bind_info expected;
    expected.node = expect["node"].string_or(r->bind.node);
    expected.leaf_cells =
        expect.has("leaf_cells") ? ints(expect["leaf_cells"]) : r->bind.leaf_cells;
    expected.chain = observed["chain"].string_or(r->bind.chain);
    if (const vector_value g = observed["group_pod_placements"]; g.present()) {
      json holder = json::object();
      jsonio::add_member(holder, "group_pod_placements", g.json());
      expected.group_placements = read_bind(vector_value(holder, observed.path())).group_placements;
    } else {
      expected.group_placements = r->bind.group_placements;
    }
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
    if (const vector_value v = expect["victims"]; v.present()) {
      std::vector<std::string> victims = v.strings();
      std::sort(victims.begin(), victims.end());
      if (got != victims) diff += fmt::format("victims {} != {}; ", got, victims);
    }
    if (const vector_value by_node = observed["victims_by_node"]; by_node.present()) {
      std::map<std::string, std::vector<std::string>> want_by_node;
      for (const auto& [node, pods] : by_node.members()) {
        auto list = pods.strings();
        std::sort(list.begin(), list.end());
        want_by_node[node] = list;
      }
      auto ours = r->victims_by_node;
      for (auto& [node, pods] : ours) std::sort(pods.begin(), pods.end());
      if (ours != want_by_node)
        diff += fmt::format("victims by node {} != {}; ", ours, want_by_node);
    }
    // hivedscheduler returns one random node's victims: they must be one node's list of ours.
    if (const vector_value one = observed["victims_returned_for_one_random_node"]; one.present()) {
      auto list = one.strings();
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
    if (const vector_value reason = observed["wait_reason"];
        reason.present() && r->wait_reason != reason.string())
      diff += fmt::format("wait reason '{}' != '{}'; ", r->wait_reason, reason.string());
  } else if (!want.empty()) {
    expect["result"].fail(
        fmt::format("unknown result '{}' (expected bind, preempt, wait or user_error)", want));
  }
  return diff;
}

/// Bind records of one scenario: the last one schedule() returned per pod (committed by the
/// pod's add_allocated step) and the committed one per pod (for delete_allocated).
struct bind_log {
  std::map<std::string, hived::bind_info> pending;
  std::map<std::string, hived::bind_info> committed;
};

/// The ops run_step() knows.
bool is_known_op(std::string_view op) {
  for (std::string_view known :
       {"schedule", "add_allocated", "delete_allocated", "delete_unallocated", "set_bad_node",
        "set_healthy_node", "check_groups"}) {
    if (op == known) return true;
  }
  return false;
}

/// Runs one step of a known op and returns what differs from its record (empty = passed).
std::string run_step(hived::scheduler& s, const vector_value& doc, const vector_value& step,
                     const std::vector<std::string>& all_nodes, bind_log& binds) {
  const std::string op = step["op"].string();
  const vector_value expect = step["expect"];
  const std::string pod_name = step["pod"].string_or("");
  const auto pod = read_pod(doc["pod_specs"], pod_name);
  const std::string group = pod.group.empty() ? pod.name : pod.group;
  std::string diff;
  if (op == "schedule") {
    const std::string phase_name = step["phase"].string_or("Preempting");
    if (phase_name != "Filtering" && phase_name != "Preempting")
      step["phase"].fail("expected Filtering or Preempting");
    const auto ph = phase_name == "Filtering" ? hived::phase::filtering : hived::phase::preempting;
    auto r = s.schedule(pod, read_nodes(step["suggested_nodes"], all_nodes), ph);
    hived::bind_info pending;
    bool has_pending = false;
    diff += check_schedule(r, step, pod_name, pending, has_pending);
    if (has_pending) binds.pending[pod_name] = std::move(pending);
  } else if (op == "add_allocated") {
    // The recorded bind_info is what hivedscheduler's Schedule returned for this pod; ours (from
    // the pod's schedule step) must equal it, and ours is what gets committed. Without a
    // schedule step of ours for the pod, the recorded record is replayed (recovery).
    const vector_value recorded_json = step["bind_info"];
    auto it = binds.pending.find(pod_name);
    if (!recorded_json.present() && it == binds.pending.end())
      recorded_json.fail("missing, and no schedule step of this scenario bound the pod");
    hived::bind_info info;
    if (recorded_json.present()) info = read_bind(recorded_json);
    if (it != binds.pending.end()) {
      if (recorded_json.present()) diff += compare_bind(it->second, info);
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
    s.set_node_bad(step["node"].string());
  } else if (op == "set_healthy_node") {
    s.set_node_healthy(step["node"].string());
  } else if (op == "check_groups") {
    for (const auto& [name, block] : expect["groups"].members())
      diff += check_group(s, name, block);
  }
  if (const vector_value ga = expect["group_after"]; ga.present() && !pod_name.empty())
    diff += check_group(s, group, ga);
  diff += check_vc_cells(s, expect);
  diff += check_bound_to(s, step["observed"]);
  return diff;
}

/// The "<scenario>/<step>:<op>[ <pod>]" name of a step (the step's "step" number, else its
/// 1-based position); tolerant of a malformed step, which its run then reports.
std::string step_id(const std::string& scenario, const vector_value& step, std::size_t position) {
  const auto& j = step.json();
  const auto& number = jsonio::member(j, "step");
  const auto& op = jsonio::member(j, "op");
  const auto& pod = jsonio::member(j, "pod");
  return fmt::format(
      "{}/{}:{}{}", scenario,
      number.is_number_integer() ? number.get<std::int64_t>() : static_cast<std::int64_t>(position),
      op.is_string() ? op.get_ref<const std::string&>() : "?",
      pod.is_string() ? " " + pod.get_ref<const std::string&>() : std::string());
}

/// Runs the "variant/<name>/init" cases.
void run_variant_inits(const vector_value& doc, reporter& out) {
  // Every config variant with a structured patch: construct, mark all nodes healthy, compare the
  // free lists with derived_after_init (covers variants no scenario of the file uses).
  for (const auto& [vname, var] : doc["config_variants"].members()) {
    const std::string id = fmt::format("variant/{}/init", vname);
    run_guarded(out, id, [&, &vname = vname, &var = var] {
      const vector_value derived = var["derived_after_init"];
      if (!derived["free_lists_after_init"].present()) return;
      std::string why;
      bool failed = false;
      auto cfg = read_config(doc, vname, why, failed);
      if (!cfg) {
        if (failed) {
          out.fail(id, why);
        } else {
          out.skip(id, why);
        }
        return;
      }
      auto created = hived::scheduler::create(*cfg);
      if (!created) {
        out.fail(id, created.error().message);
        return;
      }
      created->mark_all_nodes_healthy();
      std::string diff = check_free_lists(*created, derived) + check_derived(*created, derived);
      if (diff.empty()) {
        out.pass(id);
      } else {
        out.fail(id, diff);
      }
    });
  }
}

/// Runs one scenario: its construct step (if first), its /init check and every other step.
void run_scenario(const vector_value& doc, const vector_case& c, reporter& out) {
  const vector_value sc = c.json;
  const auto& name_json = jsonio::member(sc.json(), "name");
  const std::string name = name_json.is_string() ? name_json.get_ref<const std::string&>() : c.name;
  std::vector<vector_value> steps;
  std::optional<hived::config> cfg;
  const bool ready = run_guarded(out, name, [&] {
    steps = sc["steps"].items();
    std::string why;
    bool failed = false;
    const std::string variant = sc["config_variant"].string();
    cfg = read_config(doc, variant, why, failed);
    if (failed) {
      out.fail(name, why);
    } else if (!cfg) {
      out.skip(name, why);
    } else if (steps.empty()) {
      out.skip(name, "no steps");
      cfg.reset();
    }
  });
  if (!ready || !cfg) return;
  auto created = hived::scheduler::create(*cfg);
  std::size_t first = 0;
  if (jsonio::member(steps[0].json(), "op").is_string() &&
      jsonio::member(steps[0].json(), "op").get_ref<const std::string&>() == "construct") {
    first = 1;
    const auto& number = jsonio::member(steps[0].json(), "step");
    const std::string id = fmt::format(
        "{}/{}", name, number.is_number_integer() ? number.get<std::int64_t>() : std::int64_t{1});
    bool config_error = false;
    run_guarded(out, id, [&] {
      const vector_value expect = steps[0]["expect"];
      if (expect["result"].string_or("") != "config_error") {
        if (created) out.pass(id);
        return;
      }
      config_error = true;
      const std::string msg = expect["observed_message"].string_or("");
      if (created) {
        out.fail(id, "constructed, expected a config error");
      } else if (!msg.empty() && created.error().message != msg) {
        out.fail(id, fmt::format("{} != {}", created.error().message, msg));
      } else {
        out.pass(id);
      }
    });
    if (config_error) return;
  }
  if (!created) {
    out.fail(name, fmt::format("construction failed: {}", created.error().message));
    return;
  }
  hived::scheduler& s = *created;
  s.mark_all_nodes_healthy();
  run_guarded(out, name + "/init", [&] {
    const vector_value derived =
        doc["config_variants"][sc["config_variant"].string()]["derived_after_init"];
    if (!derived.present()) return;
    std::string diff = check_free_lists(s, derived);
    if (diff.empty()) {
      out.pass(name + "/init");
    } else {
      out.fail(name + "/init", diff);
    }
  });
  const auto all_nodes = s.nodes();
  bind_log binds;
  std::string unsupported;  // the first op the runner does not know: the rest is skipped
  for (std::size_t i = first; i < steps.size(); ++i) {
    const std::string id = step_id(name, steps[i], i + 1);
    if (!unsupported.empty()) {
      out.skip(id, fmt::format("follows the unsupported {}", unsupported));
      continue;
    }
    const auto& op = jsonio::member(steps[i].json(), "op");
    if (op.is_string() && !is_known_op(op.get_ref<const std::string&>())) {
      unsupported = fmt::format("op '{}' of step {}", op.get_ref<const std::string&>(), id);
      out.skip(id, fmt::format("op '{}' is not supported", op.get_ref<const std::string&>()));
      continue;
    }
    run_guarded(out, id, [&] {
      const std::string diff = run_step(s, doc, steps[i], all_nodes, binds);
      if (diff.empty()) {
        out.pass(id);
      } else {
        out.fail(id, diff);
      }
    });
  }
}

}  // namespace

void run_hived(const vector_value& doc, reporter& out) {
  run_variant_inits(doc, out);
  for (const auto& c : list_cases(doc, "scenarios", "hived", out)) run_scenario(doc, c, out);
}

}  // namespace hetsched::conform
