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

/// Appends code point `cp` (at most 0x10FFFF, not a surrogate) to `out` as UTF-8.
void append_utf8(std::string& out, std::uint32_t cp);

}  // namespace hetsched::detail
