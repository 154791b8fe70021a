// SPDX-License-Identifier: MIT
// libFuzzer target for the pod-scheduling-spec annotation reader: arbitrary bytes as the
// annotation text (YAML subset or JSON). Checks that parsing never crashes, is deterministic,
// never gives an empty error message, keeps error messages valid UTF-8 for valid UTF-8 input
// (they go into JSON answers), and that an accepted spec keeps the validated invariants
// (non-empty VC, priority in [-1, 1000], positive leafCellNumber, positive member counts, a
// member with the pod's leafCellNumber).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto first = hetsched::k8s::parse_pod_scheduling_spec(text);
  const auto second = hetsched::k8s::parse_pod_scheduling_spec(text);
  if (first.has_value() != second.has_value()) std::abort();
  if (!first) {
    if (first.error().message != second.error().message) std::abort();
    if (first.error().message.empty()) std::abort();
    if (valid_utf8(text) && !valid_utf8(first.error().message)) std::abort();
    return 0;
  }
  if (!(*first == *second)) std::abort();
  const auto& s = *first;
  if (s.virtual_cluster.empty() || s.priority < -1 || s.priority > 1000 || s.leaf_cell_number <= 0)
    std::abort();
  if (s.group) {
    bool own = false;
    for (const auto& m : s.group->members) {
      if (m.pod_number <= 0 || m.leaf_cell_number <= 0) std::abort();
      own = own || m.leaf_cell_number == s.leaf_cell_number;
    }
    if (!own || s.group->name.empty()) std::abort();
  }
  return 0;
}
