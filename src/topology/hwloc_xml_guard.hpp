// SPDX-License-Identifier: MIT
// Lexical guards run on hwloc XML before hwloc parses it (private to hetsched::hwloc).
#pragma once

#include <string_view>

#include <hetsched/model/result.hpp>

namespace hetsched::detail {

/// Returns ok if `xml` is safe to hand to hwloc 2.9 / libxml2: ASCII-compatible text without NUL
/// bytes, a declared encoding libxml2 decodes itself, and <object> tags whose cpuset/nodeset
/// attributes are plain name="value" pairs with valid hex bitmaps and their complete_ partners.
/// Errors: invalid_argument naming the offset or the offending attribute.
[[nodiscard]] result<void> check_hwloc_xml_text(std::string_view xml);

}  // namespace hetsched::detail
