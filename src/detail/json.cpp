// SPDX-License-Identifier: MIT
// The strict JSON parser (iterative, RFC 8259), the deterministic writer and the typed readers.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <system_error>
#include <unordered_set>

#include <hetsched/detail/json.hpp>

#include "detail/text.hpp"

namespace hetsched::detail {

std::string_view to_string(json_type type) noexcept {
  switch (type) {
    case json_type::null: return "null";
    case json_type::boolean: return "boolean";
    case json_type::number: return "number";
    case json_type::string: return "string";
    case json_type::array: return "array";
    case json_type::object: return "object";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// json_value

json_type json_value::type() const noexcept {
  switch (v_.index()) {
    case 0: return json_type::null;
    case 1: return json_type::boolean;
    case 2:
    case 3: return json_type::number;
    case 4: return json_type::string;
    case 5: return json_type::array;
    default: return json_type::object;
  }
}

double json_value::as_double() const noexcept {
  HETSCHED_ASSERT(is_number(), "json_value is not a number");
  if (const auto* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
  return *std::get_if<double>(&v_);
}

namespace {

// What operator[] returns for a member that is not there: one immutable null shared by all.
const json_value missing_member{};

}  // namespace

const json_value& json_value::operator[](std::string_view key) const noexcept {
  const auto* members = std::get_if<object_type>(&v_);
  if (members == nullptr) return missing_member;
  for (const auto& [k, v] : *members) {
    if (k == key) return v;
  }
  return missing_member;
}

bool json_value::contains(std::string_view key) const noexcept {
  const auto* members = std::get_if<object_type>(&v_);
  if (members == nullptr) return false;
  return std::any_of(members->begin(), members->end(),
                     [&](const member_type& m) { return m.first == key; });
}

json_value& json_value::push_back(json_value value) {
  auto& elements = get<array_type>();
  elements.push_back(std::move(value));
  return elements.back();
}

json_value& json_value::insert(std::string key, json_value value) {
  HETSCHED_ASSERT(!contains(key), "duplicate key in json object");
  auto& members = get<object_type>();
  members.emplace_back(std::move(key), std::move(value));
  return members.back().second;
}

bool operator==(const json_value& a, const json_value& b) { return a.v_ == b.v_; }

// ---------------------------------------------------------------------------------------------
// UTF-8

namespace {

// Returns the length of the well-formed UTF-8 sequence starting at s[pos] (1 to 4), or 0 if it is
// ill-formed (overlong, surrogate, above U+10FFFF, truncated).
std::size_t utf8_sequence_length(std::string_view s, std::size_t pos) noexcept {
  const auto byte = [&](std::size_t i) -> unsigned {
    return pos + i < s.size() ? static_cast<unsigned char>(s[pos + i]) : 0x100u;
  };
  const unsigned b0 = byte(0);
  if (b0 < 0x80) return 1;
  unsigned lo = 0x80;
  unsigned hi = 0xBF;
  std::size_t len = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < len; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return len;
}
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Returns true if a grammatically valid number literal that from_chars found out of range is too
// large (overflow) rather than too small (underflow): the decimal order of its first significant
// digit plus its exponent is positive.
bool literal_overflows(std::string_view lit) noexcept {
  std::size_t i = (!lit.empty() && lit[0] == '-') ? 1 : 0;
  const std::size_t int_start = i;
  while (i < lit.size() && is_digit(lit[i])) ++i;
  const std::size_t int_len = i - int_start;
  std::int64_t order = 0;
  bool found = false;
  for (std::size_t k = int_start; k < int_start + int_len; ++k) {
    if (lit[k] != '0') {
      order = static_cast<std::int64_t>(int_len - (k - int_start)) - 1;
      found = true;
      break;
    }
  }
  if (i < lit.size() && lit[i] == '.') {
    ++i;
    const std::size_t frac_start = i;
    while (i < lit.size() && is_digit(lit[i])) {
      if (!found && lit[i] != '0') {
        order = -static_cast<std::int64_t>(i - frac_start) - 1;
        found = true;
      }
      ++i;
    }
  }
  std::int64_t exponent = 0;
  if (i < lit.size() && (lit[i] == 'e' || lit[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < lit.size() && (lit[i] == '+' || lit[i] == '-')) negative = lit[i++] == '-';
    for (; i < lit.size() && is_digit(lit[i]); ++i) {
      exponent = std::min<std::int64_t>(exponent * 10 + (lit[i] - '0'), 1'000'000'000);
    }
    if (negative) exponent = -exponent;
  }
  return order + exponent > 0;
}

// ---------------------------------------------------------------------------------------------
// Parser: an explicit stack of open containers instead of recursion.

class parser {
 public:
  parser(std::string_view text, json_parse_limits limits) : text_(text), limits_(limits) {}

  result<json_value> run() {
    if (text_.size() > limits_.max_size) {
      return make_error(errc::out_of_range, "input of {} bytes exceeds the limit of {} bytes",
                        text_.size(), limits_.max_size);
    }
    skip_ws();
    if (at_end()) return fail(pos_, "empty input; expected a JSON value");
    std::vector<frame> stack;
    json_value current;
    for (;;) {
      // Read the start of a value: open a container or read a scalar into `current`.
      skip_ws();
      if (at_end()) return fail(pos_, "unexpected end of input; expected a value");
      const char c = text_[pos_];
      if (c == '[' || c == '{') {
        if (stack.size() >= limits_.max_depth) {
          return fail(pos_, errc::out_of_range, "nesting deeper than the limit of {}",
                      limits_.max_depth);
        }
        ++pos_;
        const bool is_object = c == '{';
        stack.push_back(frame{is_object ? json_value::object() : json_value::array(), {}, {}});
        skip_ws();
        if (!at_end() && text_[pos_] == (is_object ? '}' : ']')) {
          ++pos_;
          current = std::move(stack.back().value);
          stack.pop_back();
        } else {
          if (is_object) HETSCHED_TRY(parse_key(stack.back(), false));
          continue;
        }
      } else {
        HETSCHED_TRY(parse_scalar(current));
      }
      // Attach `current` to its container and close containers until one wants another value.
      for (;;) {
        if (stack.empty()) {
          skip_ws();
          if (!at_end()) return fail(pos_, "unexpected characters after the JSON value");
          return current;
        }
        frame& top = stack.back();
        const bool is_object = top.value.is_object();
        if (is_object) {
          top.value.as_object().emplace_back(std::move(top.key), std::move(current));
        } else {
          top.value.as_array().push_back(std::move(current));
        }
        skip_ws();
        const char close = is_object ? '}' : ']';
        if (!at_end() && text_[pos_] == ',') {
          ++pos_;
          if (is_object) {
            skip_ws();
            HETSCHED_TRY(parse_key(top, true));
          }
          break;
        }
        if (!at_end() && text_[pos_] == close) {
          ++pos_;
          current = std::move(top.value);
          stack.pop_back();
          continue;
        }
        if (at_end()) {
          return fail(pos_, "unexpected end of input; expected ',' or '{}' in {}", close,
                      is_object ? "object" : "array");
        }
        return fail(pos_, "expected ',' or '{}' in {}", close, is_object ? "object" : "array");
      }
    }
  }

 private:
  struct frame {
    json_value value;
    std::string key;                       // the key whose value is being read (objects)
    std::unordered_set<std::string> keys;  // filled once an object grows past linear_keys
  };
  static constexpr std::size_t linear_keys = 16;

  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }

  void skip_ws() noexcept {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  template <typename... Args>
  [[nodiscard]] error fail(std::size_t at, errc code, fmt::format_string<Args...> format,
                           Args&&... args) const {
    at = std::min(at, text_.size());
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at; ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    return error{code, fmt::format("line {}, column {}: {}", line, at - line_start + 1,
                                   fmt::format(format, std::forward<Args>(args)...))};
  }
  template <typename... Args>
  [[nodiscard]] error fail(std::size_t at, fmt::format_string<Args...> format,
                           Args&&... args) const {
    return fail(at, errc::invalid_argument, format, std::forward<Args>(args)...);
  }

  // Describes the byte at `at` for messages: 'x' if printable ASCII, else 0xNN.
  [[nodiscard]] std::string describe_char(std::size_t at) const {
    const auto b = static_cast<unsigned char>(text_[at]);
    if (b >= 0x20 && b < 0x7F) return fmt::format("'{}'", static_cast<char>(b));
    return fmt::format("byte 0x{:02X}", static_cast<unsigned>(b));
  }

  // Reads `"key"` and the ':' after it into `top.key`, rejecting duplicates.
  result<void> parse_key(frame& top, bool after_comma) {
    if (at_end()) return fail(pos_, "unexpected end of input; expected a string key in object");
    if (text_[pos_] != '"') {
      if (after_comma && text_[pos_] == '}') {
        return fail(pos_, "expected a string key after ','; trailing commas are not allowed");
      }
      return fail(pos_, "expected a string key in object, got {}", describe_char(pos_));
    }
    const std::size_t key_pos = pos_;
    top.key.clear();
    HETSCHED_TRY(parse_string(top.key));
    auto& members = top.value.as_object();
    bool duplicate = false;
    if (members.size() < linear_keys) {
      duplicate = std::any_of(members.begin(), members.end(),
                              [&](const auto& m) { return m.first == top.key; });
    } else {
      if (top.keys.empty()) {
        for (const auto& m : members) top.keys.insert(m.first);
      }
      duplicate = !top.keys.insert(top.key).second;
    }
    if (duplicate) return fail(key_pos, "duplicate key \"{}\" in object", top.key);
    skip_ws();
    if (at_end() || text_[pos_] != ':') return fail(pos_, "expected ':' after object key");
    ++pos_;
    return ok();
  }

  result<void> parse_scalar(json_value& out) {
    const char c = text_[pos_];
    if (c == '"') {
      std::string s;
      HETSCHED_TRY(parse_string(s));
      out = json_value(std::move(s));
      return ok();
    }
    if (c == '-' || is_digit(c)) return parse_number(out);
    const auto literal = [&](std::string_view word) {
      return text_.substr(pos_, word.size()) == word;
    };
    if (literal("true")) {
      pos_ += 4;
      out = json_value(true);
    } else if (literal("false")) {
      pos_ += 5;
      out = json_value(false);
    } else if (literal("null")) {
      pos_ += 4;
      out = json_value();
    } else {
      return fail(pos_, "unexpected {}; expected a value", describe_char(pos_));
    }
    return ok();
  }

  result<std::uint32_t> parse_hex4(std::size_t at) const {
    std::uint32_t cp = 0;
    for (std::size_t i = at; i < at + 4; ++i) {
      if (i >= text_.size()) return fail(i, "\\u escape needs 4 hex digits, got end of input");
      const char h = text_[i];
      const int d = hex_digit_value(h);
      if (d < 0) return fail(i, "\\u escape needs 4 hex digits, got {}", describe_char(i));
      cp = cp * 16 + static_cast<std::uint32_t>(d);
    }
    return cp;
  }

  // Reads a string starting at the opening quote into `out` (appending), decoding escapes.
  result<void> parse_string(std::string& out) {
    const std::size_t open = pos_++;
    for (;;) {
      const std::size_t start = pos_;
      while (pos_ < text_.size()) {
        const auto b = static_cast<unsigned char>(text_[pos_]);
        if (b == '"' || b == '\\' || b < 0x20 || b >= 0x80) break;
        ++pos_;
      }
      out.append(text_.data() + start, pos_ - start);
      if (at_end()) return fail(open, "unterminated string");
      const auto b = static_cast<unsigned char>(text_[pos_]);
      if (b == '"') {
        ++pos_;
        return ok();
      }
      if (b < 0x20) {
        return fail(pos_, "control character U+{:04X} in string must be escaped",
                    static_cast<unsigned>(b));
      }
      if (b >= 0x80) {
        const std::size_t len = utf8_sequence_length(text_, pos_);
        if (len == 0) return fail(pos_, "invalid UTF-8 in string");
        out.append(text_.data() + pos_, len);
        pos_ += len;
        continue;
      }
      // A backslash escape.
      const std::size_t esc = pos_++;
      if (at_end()) return fail(open, "unterminated string");
      switch (text_[pos_++]) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          auto cp = parse_hex4(pos_);
          if (!cp) return std::move(cp).error();
          pos_ += 4;
          std::uint32_t code = *cp;
          if (code >= 0xDC00 && code <= 0xDFFF) {
            return fail(esc, "lone low surrogate \\u{:04X} in string", code);
          }
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") {
              return fail(esc, "high surrogate \\u{:04X} is not followed by a low surrogate", code);
            }
            auto low = parse_hex4(pos_ + 2);
            if (!low) return std::move(low).error();
            if (*low < 0xDC00 || *low > 0xDFFF) {
              return fail(esc, "high surrogate \\u{:04X} is not followed by a low surrogate", code);
            }
            pos_ += 6;
            code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default:
          return fail(esc, "invalid escape: {} after '\\' in string", describe_char(pos_ - 1));
      }
    }
  }

  result<void> parse_number(json_value& out) {
    const std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    if (at_end() || !is_digit(text_[pos_])) {
      return fail(pos_, "invalid number: expected a digit after '-'");
    }
    if (text_[pos_] == '0') {
      ++pos_;
      if (!at_end() && is_digit(text_[pos_])) {
        return fail(start, "invalid number: leading zeros are not allowed");
      }
    } else {
      while (!at_end() && is_digit(text_[pos_])) ++pos_;
    }
    bool integral = true;
    if (!at_end() && text_[pos_] == '.') {
      ++pos_;
      if (at_end() || !is_digit(text_[pos_])) {
        return fail(pos_, "invalid number: expected a digit after '.'");
      }
      while (!at_end() && is_digit(text_[pos_])) ++pos_;
      integral = false;
    }
    if (!at_end() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (!at_end() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (at_end() || !is_digit(text_[pos_])) {
        return fail(pos_, "invalid number: expected a digit in the exponent");
      }
      while (!at_end() && is_digit(text_[pos_])) ++pos_;
      integral = false;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integral) {
      std::int64_t n = 0;
      const auto [ptr, ec] = std::from_chars(first, last, n);
      if (ec == std::errc() && ptr == last) {
        out = json_value(n);
        return ok();
      }
    }
    double d = 0;
    const auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec == std::errc::result_out_of_range) {
      const std::string_view literal(first, pos_ - start);
      if (literal_overflows(literal)) {
        return fail(start, errc::out_of_range, "number {} is outside the range of a double",
                    literal);
      }
      d = text_[start] == '-' ? -0.0 : 0.0;
    } else if (ec != std::errc() || ptr != last) {
      return fail(start, "invalid number");
    }
    out = json_value(d);
    return ok();
  }

  std::string_view text_;
  json_parse_limits limits_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Writer

bool is_scalar(const json_value& v) noexcept { return !v.is_array() && !v.is_object(); }

void append_number(std::string& out, const json_value& v) {
  if (v.is_integer()) {
    fmt::format_to(std::back_inserter(out), "{}", v.as_int64());
    return;
  }
  const double d = v.as_double();
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  const std::size_t start = out.size();
  fmt::format_to(std::back_inserter(out), "{}", d);
  if (out.find_first_of(".eE", start) == std::string::npos) out += ".0";
}

class writer {
 public:
  writer(std::string& out, bool pretty) : out_(out), pretty_(pretty) {}

  void write(const json_value& v, std::size_t indent) {
    switch (v.type()) {
      case json_type::null: out_ += "null"; return;
      case json_type::boolean: out_ += v.as_bool() ? "true" : "false"; return;
      case json_type::number: append_number(out_, v); return;
      case json_type::string: append_json_string(out_, v.as_string()); return;
      case json_type::array: write_array(v.as_array(), indent); return;
      case json_type::object: write_object(v.as_object(), indent); return;
    }
  }

 private:
  static constexpr std::size_t max_inline_width = 100;

  void newline(std::size_t indent) {
    out_.push_back('\n');
    out_.append(indent, ' ');
  }

  void write_array(const json_value::array_type& elements, std::size_t indent) {
    out_.push_back('[');
    const bool inline_all = !pretty_ || std::all_of(elements.begin(), elements.end(),
                                                    [](const auto& e) { return is_scalar(e); });
    for (std::size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) out_ += (pretty_ && inline_all) ? ", " : ",";
      if (!inline_all) newline(indent + 2);
      write(elements[i], indent + 2);
    }
    if (!inline_all && !elements.empty()) newline(indent);
    out_.push_back(']');
  }

  void write_object(const json_value::object_type& members, std::size_t indent) {
    if (members.empty()) {
      out_ += "{}";
      return;
    }
    const std::size_t start = out_.size();
    const bool scalars = std::all_of(members.begin(), members.end(),
                                     [](const auto& m) { return is_scalar(m.second); });
    if (!pretty_ || scalars) {
      out_.push_back('{');
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (i > 0) out_ += pretty_ ? ", " : ",";
        append_json_string(out_, members[i].first);
        out_ += pretty_ ? ": " : ":";
        write(members[i].second, indent + 2);
      }
      out_.push_back('}');
      if (!pretty_ || indent + (out_.size() - start) <= max_inline_width) return;
      out_.resize(start);
    }
    out_.push_back('{');
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out_.push_back(',');
      newline(indent + 2);
      append_json_string(out_, members[i].first);
      out_ += ": ";
      write(members[i].second, indent + 2);
    }
    newline(indent);
    out_.push_back('}');
  }

  std::string& out_;
  bool pretty_;
};

}  // namespace

result<json_value> parse_json(std::string_view text, json_parse_limits limits) {
  return parser(text, limits).run();
}

std::string to_string(const json_value& value, bool pretty) {
  std::string out;
  writer(out, pretty).write(value, 0);
  return out;
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b >= 0x80) {
      const std::size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        ++i;
      } else {
        out.append(text.data() + i, len);
        i += len;
      }
      continue;
    }
    switch (b) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (b < 0x20) {
          out += "\\u00";
          out.push_back(hex[b >> 4]);
          out.push_back(hex[b & 0xF]);
        } else {
          out.push_back(static_cast<char>(b));
        }
    }
    ++i;
  }
  out.push_back('"');
}

}  // namespace hetsched::detail
