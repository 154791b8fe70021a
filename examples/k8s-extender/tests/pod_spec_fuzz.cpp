// SPDX-License-Identifier: MIT
// libFuzzer target for the pod-scheduling-spec annotation reader: arbitrary bytes as the
// annotation text (YAML subset or JSON). Checks that parsing never crashes, is deterministic,
// never gives an empty error message, keeps error messages valid UTF-8 for valid UTF-8 input
// (they go into JSON answers), and that an accepted spec keeps the validated invariants
// (non-empty VC, priority in [-1, 1000], positive leafCellNumber, positive member counts in the
// whole group tree, a member with the pod's leafCellNumber, no v2 field unless enabled), parsing
// each input with the v2 fields (cellType, withinOneCell, childGroups) off and on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "pod_scheduling_spec.hpp"
#include "pod_spec_yaml.hpp"

#include <nlohmann/json.hpp>

namespace {

bool valid_utf8(std::string_view s) {
  try {
    (void)nlohmann::json(std::string(s)).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// Aborts unless the members of `groups` (and their descendants) are positive; sets `own` if one
// has `leaves` leaf cells.
void check_children(const std::vector<hetsched::k8s::child_group>& groups, int leaves, bool& own,
                    int depth) {
  if (depth > hetsched::k8s::max_child_group_depth) std::abort();
  for (const auto& g : groups) {
    for (const auto& m : g.members) {
      if (m.pod_number <= 0 || m.leaf_cell_number <= 0) std::abort();
      own = own || m.leaf_cell_number == leaves;
    }
    check_children(g.child_groups, leaves, own, depth + 1);
  }
}

// Parses `text` twice with `opts` and checks determinism and the invariants; returns the result.
hetsched::result<hetsched::k8s::pod_scheduling_spec> check(std::string_view text,
                                                           hetsched::k8s::spec_options opts) {
  const auto first = hetsched::k8s::parse_pod_scheduling_spec(text, opts);
  const auto second = hetsched::k8s::parse_pod_scheduling_spec(text, opts);
  if (first.has_value() != second.has_value()) std::abort();
  if (!first) {
    if (first.error().message != second.error().message) std::abort();
    if (first.error().message.empty()) std::abort();
    if (valid_utf8(text) && !valid_utf8(first.error().message)) std::abort();
    return first;
  }
  if (!(*first == *second)) std::abort();
  const auto& s = *first;
  if (s.virtual_cluster.empty() || s.priority < -1 || s.priority > 1000 || s.leaf_cell_number <= 0)
    std::abort();
  if (!opts.cell_type_requests && !s.cell_type.empty()) std::abort();
  if (s.group) {
    bool own = false;
    for (const auto& m : s.group->members) {
      if (m.pod_number <= 0 || m.leaf_cell_number <= 0) std::abort();
      own = own || m.leaf_cell_number == s.leaf_cell_number;
    }
    if (!opts.cell_type_requests &&
        (!s.group->within_one_cell.empty() || !s.group->child_groups.empty()))
      std::abort();
    check_children(s.group->child_groups, s.leaf_cell_number, own, 1);
    if (!own || s.group->name.empty()) std::abort();
  }
  return first;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // With the v2 fields off (hivedscheduler's v1 spec) and on (options::cell_type_requests): what
  // the v1 reader accepts, the v2-aware one accepts the same way.
  const auto v1 = check(text, hetsched::k8s::spec_options{false});
  const auto v2 = check(text, hetsched::k8s::spec_options{true});
  if (v1 && (!v2 || !(*v1 == *v2))) std::abort();
  return 0;
}
