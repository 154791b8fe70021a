// SPDX-License-Identifier: MIT
// libFuzzer target: a vector file through hetsched-conform's parse-and-run (run_vector_text, every
// family's runner), with a quiet reporter. A malformed file must fail its cases, never crash or
// throw anything but the runner's own vector_error (which run_vector_text turns into a failure).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "conform.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  hetsched::conform::reporter out(false);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static_cast<void>(hetsched::conform::run_vector_text(text, "fuzz", out));
  return 0;
}
