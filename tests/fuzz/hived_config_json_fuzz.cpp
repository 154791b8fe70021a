// SPDX-License-Identifier: MIT
// libFuzzer target for the HiveD config JSON importer (hived_config_json.hpp).
//
// Any input must give a config or an error, never a crash, hang or sanitizer report. Accepted
// inputs must round-trip: a parsed config written by to_json and parsed again is equal, and
// writing it again gives the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/policies/hived_config_json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto cfg = hetsched::hived::parse_config_json(text)) {
    const std::string written = hetsched::hived::to_json(*cfg);
    auto again = hetsched::hived::parse_config_json(written);
    if (!again || !(*again == *cfg) || hetsched::hived::to_json(*again) != written) std::abort();
  }
  return 0;
}
