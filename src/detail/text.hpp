// SPDX-License-Identifier: MIT
// Private text helpers shared by the importers (not installed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hetsched::detail {

/// Returns `s` fit for an error message: bytes outside printable ASCII as \xNN, cut after
/// `max_bytes` bytes with "..." appended.
[[nodiscard]] std::string shown(std::string_view s, std::size_t max_bytes = 64);

/// Returns the value 0-15 of hexadecimal digit `c` ([0-9a-fA-F]), or -1 for any other character.
[[nodiscard]] constexpr int hex_digit_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Appends code point `cp` (at most 0x10FFFF, not a surrogate) to `out` as UTF-8.
void append_utf8(std::string& out, std::uint32_t cp);

}  // namespace hetsched::detail
