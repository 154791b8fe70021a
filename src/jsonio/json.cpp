// SPDX-License-Identifier: MIT
// parse_json(): nlohmann's SAX parser with a value-building handler that enforces the library's
// rules (duplicate keys, depth and size limits, exact int64, "line L, column C" errors); the
// deterministic writer; member() and describe().
#include "jsonio/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_set>
#include <utility>

#include <hetsched/model/assert.hpp>

namespace hetsched::jsonio {

namespace {

// What member() returns for a member that is not there: one immutable null shared by all.
const json missing_member{};

// A const char* that records, in *furthest, the furthest position nlohmann's lexer has read: the
// SAX events carry no position, and the lexer reads the input strictly in order, one byte ahead
// at most while it scans a number (which it then "ungets" without reading again).
struct tracking_iterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  const char* at = nullptr;
  const char** furthest = nullptr;

  reference operator*() const noexcept { return *at; }
  tracking_iterator& operator++() noexcept {
    ++at;
    *furthest = at;
    return *this;
  }
  tracking_iterator operator++(int) noexcept {
    tracking_iterator before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const tracking_iterator& a, const tracking_iterator& b) noexcept {
    return a.at == b.at;
  }
};

// Returns the error "line L, column C: message" for byte offset `at` of `text` (1-based line and
// column, columns in bytes; `at` may be text.size() for the end of input).
error located(std::string_view text, std::size_t at, errc code, std::string_view message) {
  at = std::min(at, text.size());
  const std::string_view before = text.substr(0, at);
  const std::size_t line =
      1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t last_newline = before.rfind('\n');
  const std::size_t column = last_newline == std::string_view::npos ? at + 1 : at - last_newline;
  return error{code, fmt::format("line {}, column {}: {}", line, column, message)};
}

// The SAX handler: builds the value with an explicit stack of open containers and stops at the
// first violation of the rules nlohmann does not check itself.
class builder {
 public:
  builder(std::string_view text, json_parse_limits limits, const char* const& furthest)
      : text_(text), limits_(limits), furthest_(furthest) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool b) { return add(json(b)); }
  bool number_integer(std::int64_t n) { return add(json(n)); }
  bool number_unsigned(std::uint64_t n) {
    if (n <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return add(json(static_cast<std::int64_t>(n)));
    }
    return add(json(static_cast<double>(n)));
  }
  bool number_float(double d, const std::string& /*literal*/) { return add(json(d)); }
  bool string(std::string& s) { return add(json(std::move(s))); }
  bool binary(json::binary_t& /*bytes*/) { return add(json(nullptr)); }  // not in JSON text

  bool start_object(std::size_t /*size*/) { return open(json::object()); }
  bool start_array(std::size_t /*size*/) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    frame& top = stack_.back();
    auto& members = top.value->get_ref<json::object_t&>();
    bool duplicate = false;
    if (members.size() < linear_keys) {
      duplicate = std::any_of(members.begin(), members.end(),
                              [&](const json_member& m) { return m.first == k; });
    } else {
      if (top.keys.empty()) {
        for (const auto& m : members) top.keys.insert(m.first);
      }
      duplicate = !top.keys.insert(k).second;
    }
    if (duplicate) {
      error_ = located(text_, key_start(), errc::invalid_argument,
                       fmt::format("duplicate key \"{}\" in object", k));
      return false;
    }
    top.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) {
    // nlohmann counts `position` in bytes read; the offending byte is the last one read.
    const std::size_t at = position > 0 ? position - 1 : 0;
    if (ex.id == 406) {  // out_of_range: a number literal beyond the double range
      const std::size_t start = position >= last_token.size() ? position - last_token.size() : 0;
      error_ = located(text_, start, errc::out_of_range,
                       fmt::format("number {} is outside the range of a double", last_token));
      return false;
    }
    // what() reads "[json.exception.parse_error.101] parse error at line 1, column 2: why";
    // keep the why, the position is ours.
    std::string_view why(ex.what());
    if (const std::size_t colon = why.find(": "); colon != std::string_view::npos) {
      why.remove_prefix(colon + 2);
    }
    // "last read: '...'" quotes raw input; keep the message printable ASCII.
    std::string message;
    for (const char c : why) {
      const auto b = static_cast<unsigned char>(c);
      if (b >= 0x20 && b < 0x7F) {
        message.push_back(c);
      } else {
        message += fmt::format("\\x{:02X}", static_cast<unsigned>(b));
      }
    }
    error_ = located(text_, at, errc::invalid_argument, message);
    return false;
  }

  [[nodiscard]] result<json> take() && {
    if (error_) return std::move(*error_);
    return std::move(root_);
  }
  [[nodiscard]] bool failed() const noexcept { return error_.has_value(); }

 private:
  struct frame {
    json* value;
    std::string key;                       // the key whose value comes next (objects)
    std::unordered_set<std::string> keys;  // filled once an object grows past linear_keys
  };
  static constexpr std::size_t linear_keys = 16;

  [[nodiscard]] std::size_t consumed() const noexcept {
    return static_cast<std::size_t>(furthest_ - text_.data());
  }

  // The offset of the opening quote of the key just read: the lexer stopped at its closing
  // quote, and inside a valid string every '"' is escaped by an odd run of backslashes.
  [[nodiscard]] std::size_t key_start() const noexcept {
    std::size_t i = consumed() - 1;
    while (i > 0) {
      --i;
      if (text_[i] != '"') continue;
      std::size_t backslashes = 0;
      while (backslashes < i && text_[i - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) return i;
    }
    return 0;
  }

  // Places `value` in the open container (or as the root); returns where it now lives.
  json* place(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    frame& top = stack_.back();
    if (top.value->is_array()) {
      auto& elements = top.value->get_ref<json::array_t&>();
      elements.push_back(std::move(value));
      return &elements.back();
    }
    // The object's own vector: emplace_back skips ordered_map's linear key search (key() has
    // already ruled out a duplicate), so building an object stays linear.
    auto& members = top.value->get_ref<json::object_t&>();
    if (!top.keys.empty()) top.keys.insert(top.key);
    members.emplace_back(std::move(top.key), std::move(value));
    return &members.back().second;
  }

  bool add(json value) {
    place(std::move(value));
    return true;
  }

  bool open(json container) {
    if (stack_.size() >= limits_.max_depth) {
      error_ = located(text_, consumed() - 1, errc::out_of_range,
                       fmt::format("nesting deeper than the limit of {}", limits_.max_depth));
      return false;
    }
    json* placed = place(std::move(container));
    stack_.push_back(frame{placed, {}, {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  std::string_view text_;
  json_parse_limits limits_;
  const char* const& furthest_;
  std::vector<frame> stack_;
  json root_;
  std::optional<error> error_;
};

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

const json& member(const json& value, std::string_view key) noexcept {
  if (!value.is_object()) return missing_member;
  for (const auto& [k, v] : value.get_ref<const json::object_t&>()) {
    if (k == key) return v;
  }
  return missing_member;
}

json& add_member(json& object, std::string key, json value) {
  HETSCHED_ASSERT(!object.contains(key), "duplicate key in json object");
  auto& members = as_object(object);
  members.emplace_back(std::move(key), std::move(value));
  return members.back().second;
}

std::string_view describe(const json& value) noexcept {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a non-integral number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::binary: return "binary data";
    case json::value_t::discarded: return "a discarded value";
  }
  return "unknown";
}

result<json> parse_json(std::string_view text, json_parse_limits limits) {
  if (text.size() > limits.max_size) {
    return make_error(errc::out_of_range, "input of {} bytes exceeds the limit of {} bytes",
                      text.size(), limits.max_size);
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    return located(text, 0, errc::invalid_argument, "a byte order mark is not allowed");
  }
  if (std::all_of(text.begin(), text.end(), is_space)) {
    return located(text, text.size(), errc::invalid_argument, "empty input; expected a JSON value");
  }
  const char* furthest = text.data();
  builder handler(text, limits, furthest);
  const tracking_iterator first{text.data(), &furthest};
  const tracking_iterator last{text.data() + text.size(), &furthest};
  const bool parsed = json::sax_parse(first, last, &handler, nlohmann::json::input_format_t::json,
                                      /*strict=*/true, /*ignore_comments=*/false);
  if (!parsed && !handler.failed()) {
    return located(text, static_cast<std::size_t>(furthest - text.data()), errc::invalid_argument,
                   "invalid JSON");
  }
  return std::move(handler).take();
}

// ---------------------------------------------------------------------------------------------
// Writer

namespace {

bool is_scalar(const json& v) noexcept { return !v.is_array() && !v.is_object(); }

// Numbers go through fmt, not nlohmann's dump(): fmt's shortest round-trip form is what the
// pinned outputs hold (nlohmann switches to an exponent from 1e15 on, fmt from 1e16).
void append_number(std::string& out, const json& v) {
  if (v.is_number_unsigned()) {
    fmt::format_to(std::back_inserter(out), "{}", v.get<std::uint64_t>());
    return;
  }
  if (v.is_number_integer()) {
    fmt::format_to(std::back_inserter(out), "{}", v.get<std::int64_t>());
    return;
  }
  const double d = v.get<double>();
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

  void write(const json& v, std::size_t indent) {
    switch (v.type()) {
      case json::value_t::boolean: out_ += v.get<bool>() ? "true" : "false"; return;
      case json::value_t::number_integer:
      case json::value_t::number_unsigned:
      case json::value_t::number_float: append_number(out_, v); return;
      case json::value_t::string: append_json_string(out_, v.get_ref<const std::string&>()); return;
      case json::value_t::array: write_array(v.get_ref<const json::array_t&>(), indent); return;
      case json::value_t::object: write_object(v.get_ref<const json::object_t&>(), indent); return;
      case json::value_t::null:
      case json::value_t::binary:
      case json::value_t::discarded: out_ += "null"; return;
    }
  }

 private:
  static constexpr std::size_t max_inline_width = 100;

  void newline(std::size_t indent) {
    out_.push_back('\n');
    out_.append(indent, ' ');
  }

  void write_array(const json::array_t& elements, std::size_t indent) {
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

  void write_object(const std::vector<json_member>& members, std::size_t indent) {
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

std::string to_string(const json& value, bool pretty) {
  std::string out;
  writer(out, pretty).write(value, 0);
  return out;
}

void append_json_string(std::string& out, std::string_view text) {
  out += json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace hetsched::jsonio
