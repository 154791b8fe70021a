// SPDX-License-Identifier: MIT
// A small, strict, iterative XML reader for the topology importers.
#include "topology/xml_reader.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "detail/text.hpp"

namespace hetsched::detail {

const std::string* xml_element::attribute(std::string_view attr_name) const noexcept {
  for (const auto& a : attributes) {
    if (a.name == attr_name) return &a.value;
  }
  return nullptr;
}

namespace {

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

constexpr bool is_name_start(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u == ':' || u >= 0x80;
}

constexpr bool is_name_char(char c) noexcept {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

// XML 1.0 Char production.
constexpr bool is_xml_char(std::uint32_t cp) noexcept {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}
class parser {
 public:
  parser(std::string_view text, const xml_limits& limits) : s_(text), limits_(limits) {}

  result<xml_element> run() {
    if (s_.size() > limits_.max_bytes) {
      return make_error(errc::out_of_range, "XML input is {} bytes, more than the limit of {}",
                        s_.size(), limits_.max_bytes);
    }
    for (std::size_t i = 0; i < s_.size(); ++i) {
      const auto u = static_cast<unsigned char>(s_[i]);
      if (u < 0x20 && !is_space(s_[i])) return fail(i, "invalid control character 0x{:02x}", u);
    }
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    if (at("<?xml") && pos_ + 5 < s_.size() && (is_space(s_[pos_ + 5]) || s_[pos_ + 5] == '?')) {
      const std::size_t end = s_.find("?>", pos_);
      if (end == std::string_view::npos) return fail(pos_, "unterminated XML declaration");
      pos_ = end + 2;
    }
    // Prolog: whitespace and comments up to the root element.
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) return fail(pos_, "no root element (empty document)");
      if (at("<!--")) {
        HETSCHED_TRY(skip_comment());
      } else if (at("<?")) {
        return fail(pos_, "processing instructions are only allowed as the leading <?xml ?>");
      } else if (at("<!")) {
        return fail(pos_, "DOCTYPE and other declarations are not supported");
      } else if (s_[pos_] == '<') {
        break;
      } else {
        return fail(pos_, "text before the root element");
      }
    }
    xml_element root;
    bool self_closing = false;
    HETSCHED_TRY(start_tag(root, self_closing));
    if (!self_closing) {
      std::vector<xml_element> open;
      open.push_back(std::move(root));
      HETSCHED_TRY(content(open, root));
    }
    // Epilog: only whitespace and comments.
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) break;
      if (!at("<!--")) {
        return fail(pos_, "content after the end of the root element <{}>", root.name);
      }
      HETSCHED_TRY(skip_comment());
    }
    return root;
  }

 private:
  template <typename... Args>
  error fail(std::size_t pos, fmt::format_string<Args...> format, Args&&... args) {
    return error{errc::invalid_argument,
                 fmt::format("XML line {}: {}", line_at(pos),
                             fmt::format(format, std::forward<Args>(args)...))};
  }

  // Lines are counted incrementally; positions asked for almost always move forward.
  std::size_t line_at(std::size_t pos) {
    pos = std::min(pos, s_.size());
    if (pos < line_pos_) {
      line_pos_ = 0;
      line_ = 1;
    }
    line_ +=
        static_cast<std::size_t>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(line_pos_),
                                            s_.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    line_pos_ = pos;
    return line_;
  }

  [[nodiscard]] bool at(std::string_view lit) const noexcept {
    return s_.substr(pos_, lit.size()) == lit;
  }

  void skip_space() noexcept {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }

  result<void> count_node() {
    if (++nodes_ > limits_.max_nodes) {
      return make_error(errc::out_of_range, "XML line {}: more than {} elements and attributes",
                        line_at(pos_), limits_.max_nodes);
    }
    return ok();
  }

  result<void> skip_comment() {
    const std::size_t end = s_.find("-->", pos_ + 4);
    if (end == std::string_view::npos) {
      return fail(pos_, "comment is not closed (unexpected end of input)");
    }
    pos_ = end + 3;
    return ok();
  }

  result<void> check_length(std::string_view n) {
    if (n.size() <= limits_.max_name_length) return ok();
    return make_error(errc::out_of_range, "XML line {}: a name is longer than {} characters",
                      line_at(pos_), limits_.max_name_length);
  }

  std::string_view name() noexcept {
    const std::size_t start = pos_;
    if (pos_ >= s_.size() || !is_name_start(s_[pos_])) return {};
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }

  // Parses the tag at '<' into `out` (name, line, attributes).
  result<void> start_tag(xml_element& out, bool& self_closing) {
    const std::size_t open = pos_;
    ++pos_;
    const auto element_name = name();
    if (element_name.empty()) {
      if (pos_ >= s_.size()) return fail(pos_, "unexpected end of input after '<'");
      return fail(pos_, "expected an element name after '<', found '{}'", s_[pos_]);
    }
    HETSCHED_TRY(check_length(element_name));
    out.name = std::string(element_name);
    out.line = line_at(open);
    HETSCHED_TRY(count_node());
    for (;;) {
      const std::size_t before = pos_;
      skip_space();
      if (pos_ >= s_.size()) {
        return fail(pos_, "unexpected end of input inside tag <{}> opened at line {}", out.name,
                    out.line);
      }
      const char c = s_[pos_];
      if (c == '>') {
        ++pos_;
        self_closing = false;
        break;
      }
      if (c == '/') {
        if (pos_ + 1 < s_.size() && s_[pos_ + 1] == '>') {
          pos_ += 2;
          self_closing = true;
          break;
        }
        return fail(pos_, "expected '>' after '/' in tag <{}>", out.name);
      }
      const auto attr_name = name();
      if (attr_name.empty()) {
        return fail(pos_, "unexpected character '{}' in tag <{}>", c, out.name);
      }
      HETSCHED_TRY(check_length(attr_name));
      if (pos_ - attr_name.size() == before) {
        return fail(pos_, "missing whitespace before attribute '{}' in <{}>", attr_name, out.name);
      }
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '=') {
        if (pos_ >= s_.size()) return fail(pos_, "unexpected end of input in tag <{}>", out.name);
        return fail(pos_, "expected '=' after attribute '{}' in <{}>", attr_name, out.name);
      }
      ++pos_;
      skip_space();
      if (pos_ >= s_.size()) return fail(pos_, "unexpected end of input in tag <{}>", out.name);
      const char quote = s_[pos_];
      if (quote != '"' && quote != '\'') {
        return fail(pos_, "value of attribute '{}' in <{}> must be quoted", attr_name, out.name);
      }
      const std::size_t value_start = pos_ + 1;
      const std::size_t value_end = s_.find(quote, value_start);
      if (value_end == std::string_view::npos) {
        return fail(pos_, "unterminated value of attribute '{}' in <{}>", attr_name, out.name);
      }
      xml_attribute attr;
      attr.name = std::string(attr_name);
      HETSCHED_TRY(decode(value_start, value_end, attr.value));
      HETSCHED_TRY(count_node());
      out.attributes.push_back(std::move(attr));
      pos_ = value_end + 1;
    }
    return check_duplicates(out);
  }

  result<void> check_duplicates(const xml_element& e) {
    if (e.attributes.size() < 2) return ok();
    std::vector<std::string_view> names;
    names.reserve(e.attributes.size());
    for (const auto& a : e.attributes) names.emplace_back(a.name);
    std::sort(names.begin(), names.end());
    const auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) {
      return error{
          errc::invalid_argument,
          fmt::format("XML line {}: duplicate attribute '{}' in <{}>", e.line, *dup, e.name)};
    }
    return ok();
  }

  // Decodes the attribute value s_[begin, end) into `out`.
  result<void> decode(std::size_t begin, std::size_t end, std::string& out) {
    out.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      const char c = s_[i];
      if (c == '<') return fail(i, "'<' inside an attribute value");
      if (c == '\r') {
        if (i + 1 < end && s_[i + 1] == '\n') continue;
        out.push_back(' ');
      } else if (c == '\t' || c == '\n') {
        out.push_back(' ');
      } else if (c == '&') {
        const std::size_t semi = s_.find(';', i);
        if (semi == std::string_view::npos || semi >= end || semi - i > 12) {
          return fail(i, "'&' does not start an entity reference");
        }
        const auto ref = s_.substr(i + 1, semi - i - 1);
        HETSCHED_TRY(entity(ref, i, out));
        i = semi;
      } else {
        out.push_back(c);
      }
    }
    return ok();
  }

  result<void> entity(std::string_view ref, std::size_t pos, std::string& out) {
    if (ref == "lt") {
      out.push_back('<');
    } else if (ref == "gt") {
      out.push_back('>');
    } else if (ref == "amp") {
      out.push_back('&');
    } else if (ref == "quot") {
      out.push_back('"');
    } else if (ref == "apos") {
      out.push_back('\'');
    } else if (ref.size() >= 2 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const auto digits = ref.substr(hex ? 2 : 1);
      if (digits.empty()) return fail(pos, "empty character reference '&{};'", ref);
      std::uint32_t cp = 0;
      for (const char d : digits) {
        const int v = hex_digit_value(d);
        if (v < 0 || (!hex && v > 9)) return fail(pos, "bad character reference '&{};'", ref);
        cp = cp * (hex ? 16u : 10u) + static_cast<std::uint32_t>(v);
        if (cp > 0x10FFFF) return fail(pos, "character reference '&{};' is out of range", ref);
      }
      if (!is_xml_char(cp)) {
        return fail(pos, "character reference '&{};' is not an XML character", ref);
      }
      append_utf8(out, cp);
    } else {
      return fail(pos, "unknown entity '&{};'", ref);
    }
    return ok();
  }

  // Parses element content until the stack of open elements is empty; the closed root goes to
  // `root`.
  result<void> content(std::vector<xml_element>& open, xml_element& root) {
    while (!open.empty()) {
      const std::size_t lt = s_.find('<', pos_);
      if (lt == std::string_view::npos) {
        pos_ = s_.size();
        return fail(pos_, "element <{}> opened at line {} is not closed (unexpected end of input)",
                    open.back().name, open.back().line);
      }
      pos_ = lt;
      if (at("</")) {
        const std::size_t tag = pos_;
        pos_ += 2;
        const auto end_name = name();
        HETSCHED_TRY(check_length(end_name));
        skip_space();
        if (pos_ >= s_.size()) {
          return fail(pos_, "unexpected end of input in end tag of <{}> opened at line {}",
                      open.back().name, open.back().line);
        }
        if (end_name.empty() || s_[pos_] != '>') return fail(tag, "malformed end tag");
        ++pos_;
        if (end_name != open.back().name) {
          return fail(tag, "end tag </{}> does not match <{}> opened at line {}", end_name,
                      open.back().name, open.back().line);
        }
        xml_element done = std::move(open.back());
        open.pop_back();
        if (open.empty()) {
          root = std::move(done);
        } else {
          open.back().children.push_back(std::move(done));
        }
      } else if (at("<!--")) {
        HETSCHED_TRY(skip_comment());
      } else if (at("<![CDATA[")) {
        const std::size_t end = s_.find("]]>", pos_);
        if (end == std::string_view::npos) return fail(pos_, "CDATA section is not closed");
        pos_ = end + 3;
      } else if (at("<?")) {
        return fail(pos_, "processing instructions are not supported inside elements");
      } else if (at("<!")) {
        return fail(pos_, "declarations are not supported inside elements");
      } else {
        if (open.size() >= limits_.max_depth) {
          return make_error(errc::out_of_range, "XML line {}: elements nested deeper than {}",
                            line_at(pos_), limits_.max_depth);
        }
        xml_element child;
        bool self_closing = false;
        HETSCHED_TRY(start_tag(child, self_closing));
        if (self_closing) {
          open.back().children.push_back(std::move(child));
        } else {
          open.push_back(std::move(child));
        }
      }
    }
    return ok();
  }

  std::string_view s_;
  const xml_limits& limits_;
  std::size_t pos_ = 0;
  std::size_t line_pos_ = 0;
  std::size_t line_ = 1;
  std::size_t nodes_ = 0;
};

}  // namespace

result<xml_element> parse_xml(std::string_view text, const xml_limits& limits) {
  return parser(text, limits).run();
}

}  // namespace hetsched::detail
