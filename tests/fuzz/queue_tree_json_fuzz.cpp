// SPDX-License-Identifier: MIT
// libFuzzer target for parse_queue_tree_json() (capacity_tree_json.hpp).
//
// An accepted document must build its tree, and every tenant it lists must map to a queue of
// that tree (so a queue placement made from it with those tenants cannot fail on them).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <hetsched/policies/capacity_tree_json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = hetsched::parse_queue_tree_json(text);
  if (!doc) return 0;
  auto tree = hetsched::capacity_tree::build(doc->tree);
  if (!tree) std::abort();
  for (const auto& [tenant, queue] : doc->tenant_queue) {
    const auto q = tree->find(queue);
    if (!q || !tree->is_queue(*q)) std::abort();
  }
  for (const auto& [queue, weights] : doc->user_weight_names) {
    const auto q = tree->find(queue);
    if (!q || !tree->is_queue(*q) || weights.empty()) std::abort();
  }
  return 0;
}
