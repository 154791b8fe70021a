// SPDX-License-Identifier: MIT
// A small, strict XML reader for the topology importers (private; not installed).
//
// parse_xml() turns a whole document into a tree of xml_element values: element names,
// attributes (single or double quotes, the five predefined entities and numeric character
// references decoded) and children. Text content and CDATA are skipped, comments and one leading
// <?xml ...?> declaration are allowed, DOCTYPE and other processing instructions are refused.
// Every error is invalid_argument with a 1-based line number, except the documented limits
// (input size, nesting depth, number of elements plus attributes, name length), which give
// out_of_range.
// The reader is iterative, so hostile nesting cannot overflow the stack.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>

namespace hetsched::detail {

/// One attribute of an element, its value with entities decoded.
struct xml_attribute {
  std::string name;
  std::string value;

  friend bool operator==(const xml_attribute&, const xml_attribute&) = default;
};

/// One element with its attributes (in document order) and child elements.
struct xml_element {
  std::string name;
  /// 1-based line of the '<' that opens the element.
  std::size_t line = 0;
  std::vector<xml_attribute> attributes;
  std::vector<xml_element> children;

  /// Returns the value of attribute `attr_name`, or nullptr if the element has none.
  [[nodiscard]] const std::string* attribute(std::string_view attr_name) const noexcept;

  friend bool operator==(const xml_element&, const xml_element&) = default;
};

/// Limits that make hostile input fail fast with out_of_range.
struct xml_limits {
  std::size_t max_bytes = std::size_t{16} << 20;  ///< Input size (16 MiB).
  std::size_t max_depth = 64;                     ///< Element nesting depth (the root is 1).
  std::size_t max_nodes = std::size_t{1} << 20;   ///< Elements plus attributes.
  std::size_t max_name_length = 256;              ///< Element and attribute names.
};

/// Returns the root element of the XML document `text`. Errors: invalid_argument naming the line
/// for malformed XML (empty input, truncated input, unclosed or mismatched tags, duplicate
/// attributes, bad entities or characters, anything but comments after the root); out_of_range
/// when a limit of `limits` is exceeded. Complexity: O(size of text); deterministic.
[[nodiscard]] result<xml_element> parse_xml(std::string_view text, const xml_limits& limits = {});

}  // namespace hetsched::detail
