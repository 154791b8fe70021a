// SPDX-License-Identifier: MIT
// hived::scheduler request checks and answer texts: hivedscheduler's pod scheduling spec
// validation (internal.ExtractPodSchedulingSpec) and the virtual placement in its wait reason.
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "hived_state.hpp"

namespace hetsched::hived {
namespace {

/// Appends `text` as a JSON string the way Go's encoding/json writes it (HTML-safe: <, > and &
/// as \u003c, \u003e, \u0026; \n, \r, \t short; other control characters and U+2028/U+2029 as
/// \u escapes).
void append_go_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out += fmt::format("\\u{:04x}", c);
    } else if (c == 0xE2 && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace

/// ExtractPodSchedulingSpec's checks with hivedscheduler's texts (after "[pod]: ", where it
/// prints its annotation prefix).
result<group_request> validate_pod(const pod_request& pod) {
  if (pod.vc.empty())
    return make_error(errc::invalid_argument, "[{}]: VirtualCluster is empty", pod.name);
  if (pod.priority < opportunistic_priority)
    return make_error(errc::out_of_range, "[{}]: Priority is less than {}", pod.name,
                      opportunistic_priority);
  if (pod.priority > max_guaranteed_priority)
    return make_error(errc::out_of_range, "[{}]: Priority is greater than {}", pod.name,
                      max_guaranteed_priority);
  if (pod.leaf_cells <= 0)
    return make_error(errc::invalid_argument, "[{}]: LeafCellNumber is non-positive", pod.name);
  group_request r;
  r.group = pod.group.empty() ? pod.name : pod.group;
  std::vector<member_spec> members = pod.members;
  if (members.empty()) members.push_back(member_spec{1, pod.leaf_cells});
  bool found = false;
  for (const auto& m : members) {
    if (m.pods <= 0)
      return make_error(errc::invalid_argument,
                        "[{}]: AffinityGroup.Members has non-positive PodNumber", pod.name);
    if (m.leaf_cells <= 0)
      return make_error(errc::invalid_argument,
                        "[{}]: AffinityGroup.Members has non-positive LeafCellNumber", pod.name);
    found = found || m.leaf_cells == pod.leaf_cells;
    r.pod_nums[m.leaf_cells] += m.pods;
  }
  if (!found)
    return make_error(errc::invalid_argument,
                      "[{}]: AffinityGroup.Members does not contains current Pod", pod.name);
  return r;
}

/// hivedscheduler's groupVirtualPlacement.String(): JSON of preassigned cell address -> virtual
/// leaf addresses (keys sorted, as Go's encoder writes maps; leaves in placement order with
/// leaf-cell numbers ascending).
std::string virtual_placement_json(const scheduler_state& s, const placement& vp) {
  std::map<std::string, std::vector<std::string>> by_preassigned;
  for (const auto& [num, pods] : vp)
    for (const auto& leaves : pods)
      for (int leaf : leaves) {
        if (leaf < 0) continue;
        const auto& vc = s.v[uz(leaf)];
        by_preassigned[s.v[uz(vc.preassigned)].address].push_back(vc.address);
      }
  std::string out = "{";
  for (const auto& [cell, leaves] : by_preassigned) {
    if (out.size() > 1) out += ',';
    append_go_json_string(out, cell);
    out += ":[";
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      if (i > 0) out += ',';
      append_go_json_string(out, leaves[i]);
    }
    out += ']';
  }
  out += '}';
  return out;
}

}  // namespace hetsched::hived
