// SPDX-License-Identifier: MIT
// Lexical guards run on hwloc XML before hwloc sees it (part of hetsched::hwloc).
//
// hwloc 2.9.0 crashes on some malformed set attributes, and libxml2 leaks when it autodetects
// UCS-4 or EBCDIC and iconv fails; tests/fuzz/hwloc_xml_fuzz found each case. These checks refuse
// such buffers with an error and accept everything hwloc itself writes. When hwloc refuses a
// buffer anyway, locate_hwloc_xml_problem() finds the line and element to name in the error.
#include "topology/hwloc_xml_guard.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include <hetsched/topology/hwloc_import.hpp>

#include "topology/xml_reader.hpp"

namespace hetsched::detail {
namespace {

bool is_xml_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The 1-based line of byte `pos` of `xml`.
std::size_t line_of(std::string_view xml, std::size_t pos) noexcept {
  const std::string_view before = xml.substr(0, pos);
  return 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
}

// The buffer must be ASCII-compatible text: libxml2 otherwise autodetects UCS-4 or EBCDIC from
// the first bytes and switches encodings through iconv, leaking memory when that fails. Only
// encodings libxml2 decodes itself may be declared (hwloc always writes UTF-8).
result<void> check_text(std::string_view xml) {
  if (const std::size_t nul = xml.find('\0'); nul != std::string_view::npos) {
    return make_error(errc::invalid_argument,
                      "hwloc could not parse the XML buffer (NUL byte at offset {}; expected "
                      "UTF-8 text)",
                      nul);
  }
  if (xml.starts_with("\xEF\xBB\xBF")) xml.remove_prefix(3);
  if (xml.empty() || (xml.front() != '<' && !is_xml_space(xml.front()))) {
    return make_error(errc::invalid_argument,
                      "hwloc could not parse the XML buffer (it does not start with '<')");
  }
  if (!xml.starts_with("<?xml")) return ok();
  const std::string_view decl = xml.substr(0, xml.find("?>"));
  const std::size_t at = decl.find("encoding");
  if (at == std::string_view::npos) return ok();
  const std::size_t open = decl.find_first_of("\"'", at);
  if (open == std::string_view::npos) return ok();
  const std::size_t close = decl.find(decl[open], open + 1);
  if (close == std::string_view::npos) return ok();
  const std::string_view encoding = decl.substr(open + 1, close - open - 1);
  const auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; };
  for (std::string_view known : {"UTF-8", "UTF8", "US-ASCII", "ASCII", "ISO-8859-1", "LATIN1"}) {
    if (std::equal(encoding.begin(), encoding.end(), known.begin(), known.end(),
                   [&](char a, char b) { return upper(a) == b; })) {
      return ok();
    }
  }
  return make_error(errc::invalid_argument,
                    "hwloc could not parse the XML buffer (it declares encoding \"{}\"; only "
                    "UTF-8, ASCII and ISO-8859-1 are accepted)",
                    encoding);
}

bool is_name_char(char c) noexcept { return (c >= 'a' && c <= 'z') || c == '_'; }

// True if hwloc_bitmap_sscanf() would fail its assertion on `value`. It sizes the bitmap from the
// commas after the first character, then reads one word per comma-separated field, so a leading
// comma gives it one word more than it counted; it aborts when that word is read (",0x1"; found
// by fuzzing). Mirrors its loop: strtoul() words, each followed by a comma or the end.
bool bitmap_sscanf_asserts(const std::string& value) {
  if (value.empty() || value.front() != ',') return false;
  const auto counted = 1 + std::count(value.begin() + 1, value.end(), ',');
  std::ptrdiff_t words = 0;
  for (const char* current = value.c_str(); *current != '\0';) {
    if (++words > counted) return true;
    char* next = nullptr;
    static_cast<void>(std::strtoul(current, &next, 16));
    if (*next != ',') return false;
    current = next + 1;
  }
  return false;
}

// True if hwloc 2.9 reads `text` as a bitmap. hwloc_bitmap_sscanf() itself decides (so every
// form hwloc accepts is accepted): comma-separated 32-bit hex words, most significant first, as
// hwloc writes them ("0x00000303,0x03030000,,0x0": an empty word is zero, hwloc elides zero
// words between non-zero ones, so any machine with gaps in its PU numbering has them), "0x0",
// the full set "0xf...f" and the infinite prefix "0xf...f,<words>", each word read by strtoul
// (an optional "0x", sign or leading spaces). Refused: what sscanf fails on (hwloc would keep an
// empty set and, with another error in the file, crash in its error path; found by fuzzing) and
// what makes it assert.
bool is_hwloc_bitmap(std::string_view text) {
  const std::string value(text);
  if (bitmap_sscanf_asserts(value)) return false;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) return false;
  const bool parsed = hwloc_bitmap_sscanf(set, value.c_str()) == 0;
  hwloc_bitmap_free(set);
  return parsed;
}

// An <object> with a cpuset (nodeset) but no complete_cpuset (complete_nodeset), or the reverse,
// makes hwloc_topology_load dereference a null bitmap, and so does a set value that is not a
// bitmap when the import fails later. hwloc 2.x writes these sets in pairs, as name="value"
// attributes with names of [a-z_]. Object tags must keep to that form: hwloc's own minimal parser
// (used without libxml2) silently stops reading attributes at anything else, which could drop one
// set of a pair after this check saw both.
result<void> check_object_sets(std::string_view xml) {
  std::size_t objects = 0;
  std::size_t pos = 0;
  // Comments and CDATA sections are not skipped: "<!--" or "<![CDATA[" may sit inside an
  // attribute value, where hwloc's minimal parser reads on, so skipping to "-->" (or to the end
  // when there is none) let malformed objects through to hwloc (found by fuzzing). hwloc never
  // writes either, so an <object tag inside one is checked like any other.
  while ((pos = xml.find('<', pos)) != std::string_view::npos) {
    const std::string_view rest = xml.substr(pos);
    const std::size_t tag = pos;
    pos += 1;
    if (!rest.starts_with("<object") ||
        (rest.size() > 7 && ((rest[7] >= '0' && rest[7] <= '9') || is_name_char(rest[7])))) {
      continue;
    }
    ++objects;
    pos += 6;
    bool cpuset = false;
    bool complete_cpuset = false;
    bool nodeset = false;
    bool complete_nodeset = false;
    std::string_view type;
    while (true) {
      const std::size_t name_start = pos;
      while (pos < xml.size() && is_xml_space(xml[pos])) ++pos;
      if (pos < xml.size() && (xml[pos] == '>' || xml[pos] == '/')) break;
      const bool separated = pos > name_start;
      const std::size_t name_begin = pos;
      while (pos < xml.size() && is_name_char(xml[pos])) ++pos;
      const std::string_view name = xml.substr(name_begin, pos - name_begin);
      const std::size_t value_end = name.empty() || !separated || xml.substr(pos, 2) != "=\""
                                        ? std::string_view::npos
                                        : xml.find('"', pos + 2);
      if (pos >= xml.size() || (value_end == std::string_view::npos && separated && !name.empty() &&
                                xml.substr(pos, 2) == "=\"")) {
        return ok();  // truncated: hwloc refuses an unterminated tag
      }
      if (value_end == std::string_view::npos) {
        return make_error(errc::invalid_argument,
                          "hwloc could not parse the XML buffer (XML line {}: <object> #{} has a "
                          "malformed attribute at offset {}, expected name=\"value\")",
                          line_of(xml, name_begin), objects, name_begin);
      }
      const std::string_view value = xml.substr(pos + 2, value_end - pos - 2);
      if (name == "type") type = value;
      if (name.ends_with("cpuset") || name.ends_with("nodeset")) {
        if (!is_hwloc_bitmap(value)) {
          return make_error(errc::invalid_argument,
                            "hwloc could not parse the XML buffer (XML line {}: <object> #{}: "
                            "{}=\"{}\" is not an hwloc bitmap)",
                            line_of(xml, name_begin), objects, name, value.substr(0, 40));
        }
      }
      cpuset = cpuset || name == "cpuset";
      complete_cpuset = complete_cpuset || name == "complete_cpuset";
      nodeset = nodeset || name == "nodeset";
      complete_nodeset = complete_nodeset || name == "complete_nodeset";
      pos = value_end + 1;
    }
    if (cpuset != complete_cpuset || nodeset != complete_nodeset) {
      return make_error(errc::invalid_argument,
                        "hwloc could not parse the XML buffer (XML line {}: <object> #{} of type "
                        "\"{}\" has {} without {}, on which hwloc 2.9 crashes)",
                        line_of(xml, tag), objects, type,
                        cpuset != complete_cpuset ? "cpuset" : "nodeset",
                        cpuset != complete_cpuset ? "complete_cpuset" : "complete_nodeset");
    }
  }
  return ok();
}

// A copy of `xml` with a DOCTYPE declaration before the root element blanked out (newlines kept,
// so line numbers stay): hwloc files carry <!DOCTYPE topology SYSTEM "hwloc2.dtd">, which the
// project's XML reader refuses. Sets `unclosed_line` to the declaration's line (and leaves the
// text as is) when it never ends.
std::string without_doctype(std::string_view xml, std::size_t& unclosed_line) {
  std::string text(xml);
  unclosed_line = 0;
  const std::size_t at = text.find("<!DOCTYPE");
  if (at == std::string::npos) return text;
  for (std::size_t p = text.find('<'); p < at; p = text.find('<', p + 1)) {
    const char next = p + 1 < text.size() ? text[p + 1] : '\0';
    if (next != '?' && next != '!') return text;  // after the root: the reader reports it
  }
  std::size_t end = at;
  int brackets = 0;  // an internal subset [ ... ] may contain '>'
  for (; end < text.size(); ++end) {
    if (text[end] == '[') ++brackets;
    if (text[end] == ']') --brackets;
    if (text[end] == '>' && brackets <= 0) break;
  }
  if (end == text.size()) {
    unclosed_line = line_of(xml, at);
    return text;
  }
  for (std::size_t p = at; p <= end; ++p)
    if (text[p] != '\n') text[p] = ' ';
  return text;
}

// hwloc 2.x's XML import accepts these children of <object> (hwloc2.dtd plus the v1 <distances>);
// anything else fails hwloc_topology_load ("invalid special object child").
constexpr std::array<std::string_view, 5> object_children{"object", "page_type", "info", "userdata",
                                                          "distances"};

// Object type names hwloc 1.x wrote, which hwloc 2.x still imports, beyond hwloc_type_sscanf's.
constexpr std::array<std::string_view, 4> legacy_types{"Cache", "System", "Socket", "Node"};

bool is_hwloc_type(const std::string& type) {
  hwloc_obj_type_t parsed{};
  if (hwloc_type_sscanf(type.c_str(), &parsed, nullptr, 0) == 0) return true;
  return std::find(legacy_types.begin(), legacy_types.end(), type) != legacy_types.end();
}

}  // namespace

result<void> check_hwloc_xml_text(std::string_view xml) {
  HETSCHED_TRY(check_text(xml));
  HETSCHED_TRY(check_object_sets(xml));
  // The document must be well-formed before hwloc sees it: hwloc 2.9 dereferences a null
  // attribute value (strspn in hwloc_topology_load) on a <topology> tag cut inside its attributes
  // (`<topology version="2.0 version="1c.`; found by tests/fuzz/hwloc_xml_fuzz).
  std::size_t unclosed_doctype = 0;
  const std::string text = without_doctype(xml, unclosed_doctype);
  if (unclosed_doctype != 0) {
    return make_error(errc::invalid_argument,
                      "XML line {}: <!DOCTYPE is not closed (unexpected end of input)",
                      unclosed_doctype);
  }
  xml_limits limits;
  limits.max_bytes = max_hwloc_xml_bytes;
  limits.max_depth = 1024;
  limits.max_nodes = max_hwloc_xml_bytes;
  if (auto root = parse_xml(text, limits); !root)
    return make_error(errc::invalid_argument, "{}", root.error().message);
  return {};
}

std::string locate_hwloc_xml_problem(std::string_view xml) {
  std::size_t unclosed_doctype = 0;
  const std::string text = without_doctype(xml, unclosed_doctype);
  if (unclosed_doctype != 0) {
    return fmt::format("XML line {}: <!DOCTYPE is not closed (unexpected end of input)",
                       unclosed_doctype);
  }
  xml_limits limits;
  limits.max_bytes = max_hwloc_xml_bytes;
  limits.max_depth = 1024;
  limits.max_nodes = max_hwloc_xml_bytes;
  const auto root = parse_xml(text, limits);
  if (!root) return root.error().message;
  if (root->name != "topology") {
    return fmt::format("XML line {}: the root element is <{}>, not hwloc's <topology>", root->line,
                       root->name);
  }
  if (root->children.empty() || root->children.front().name != "object") {
    return root->children.empty()
               ? fmt::format(
                     "XML line {}: <topology> has no <object> (hwloc needs the root Machine)",
                     root->line)
               : fmt::format("XML line {}: <{}> comes before the root <object> of <topology>",
                             root->children.front().line, root->children.front().name);
  }
  // Depth-first over the objects, in document order. hwloc accepts an <object> without a type
  // attribute (it ignores unknown attributes), so only a type it cannot parse is reported.
  std::vector<const xml_element*> stack{&root->children.front()};
  while (!stack.empty()) {
    const xml_element& object = *stack.back();
    stack.pop_back();
    const std::string* type_attribute = object.attribute("type");
    const std::string type = type_attribute != nullptr ? type_attribute->substr(0, 40) : "";
    if (type_attribute != nullptr && !is_hwloc_type(*type_attribute)) {
      return fmt::format("XML line {}: <object type=\"{}\"> is not an hwloc object type",
                         object.line, type);
    }
    for (const xml_element& child : object.children) {
      if (std::find(object_children.begin(), object_children.end(), child.name) ==
          object_children.end()) {
        return fmt::format("XML line {}: <{}> is not allowed inside <object type=\"{}\"> (line {})",
                           child.line, child.name, type, object.line);
      }
    }
    for (auto child = object.children.rbegin(); child != object.children.rend(); ++child)
      if (child->name == "object") stack.push_back(&*child);
  }
  return {};
}

}  // namespace hetsched::detail
