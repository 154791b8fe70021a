// SPDX-License-Identifier: MIT
// libFuzzer target: the openb pod and node list readers must return a value or an error, never
// crash; a parsed pod list must also convert to a trace or fail cleanly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <hetsched/workload/openb.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto pods = hetsched::workload::parse_openb_pods(text)) {
    (void)hetsched::workload::openb_to_trace(*pods);
  }
  (void)hetsched::workload::parse_openb_nodes(text);
  return 0;
}
