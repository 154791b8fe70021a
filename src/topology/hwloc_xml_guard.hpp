// SPDX-License-Identifier: MIT
// Lexical guards run on hwloc XML before hwloc parses it (private to hetsched::hwloc).
#pragma once

#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>

namespace hetsched::detail {

/// Returns ok if `xml` is safe to hand to hwloc 2.9 / libxml2: ASCII-compatible text without NUL
/// bytes, a declared encoding libxml2 decodes itself, and <object> tags whose cpuset/nodeset
/// attributes are plain name="value" pairs holding bitmaps hwloc_bitmap_sscanf() reads without
/// failing or aborting (every form hwloc writes, including elided zero words "0x3,,0x1" and the
/// infinite prefix "0xf...f,"), with their complete_ partners.
/// Errors: invalid_argument naming the line and the offending object or attribute.
[[nodiscard]] result<void> check_hwloc_xml_text(std::string_view xml);

/// Returns where and why hwloc refused `xml`, for the importer's error message: the project's XML
/// reader (topology/xml_reader.hpp; a leading DOCTYPE, which hwloc files carry, is blanked out
/// first) names the line of a well-formedness error (truncation, unclosed or mismatched tags, bad
/// attributes), then the hwloc structure is checked as hwloc 2.x checks it: the root is
/// <topology>, its first child an <object>, every <object> type is one hwloc_type_sscanf knows
/// (or a v1 name), and objects have only <object>, <page_type>, <info>, <userdata> or <distances>
/// children. Each finding starts "XML line N: " and names the element. Returns "" when none of
/// these finds the problem. Called only after hwloc failed, so valid files pay nothing for it.
[[nodiscard]] std::string locate_hwloc_xml_problem(std::string_view xml);

}  // namespace hetsched::detail
