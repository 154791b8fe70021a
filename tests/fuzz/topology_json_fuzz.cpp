// SPDX-License-Identifier: MIT
// libFuzzer target for the JSON reader (src/jsonio/json.hpp) and the topology JSON importer.
//
// Any input must give a value or an error, never a crash, hang or sanitizer report. Accepted
// inputs must also round-trip: a parsed value written and re-parsed is equal, and an imported
// topology exported and re-imported is equal with equal views.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/topology/json.hpp>
#include <hetsched/topology/views.hpp>

#include "jsonio/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto value = hetsched::jsonio::parse_json(text)) {
    for (const bool pretty : {false, true}) {
      const std::string written = hetsched::jsonio::to_string(*value, pretty);
      auto again = hetsched::jsonio::parse_json(written);
      // nlohmann's == equates 1 and 1.0; writing again also pins the number types.
      if (!again || !(*again == *value) || hetsched::jsonio::to_string(*again, pretty) != written) {
        std::abort();
      }
    }
  }

  if (auto topology = hetsched::import_topology_json(text)) {
    const std::string exported = hetsched::to_json(*topology);
    auto again = hetsched::import_topology_json(exported);
    if (!again || !(*again == *topology) || !(again->views() == topology->views())) std::abort();
  }
  return 0;
}
