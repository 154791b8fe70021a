// SPDX-License-Identifier: MIT
// The YAML-subset and JSON readers of pod_spec_yaml.hpp.
//
// The YAML reader works on logical lines (comment stripped, indentation measured): a block is the
// run of lines at one indentation; a sequence item "- key: v" is rewritten in place into a line
// at the indentation of "key", so the item's mapping continues on the following lines at that
// indentation, as in YAML. Everything else (flow collections, quoted scalars) lives on one line.
#include "pod_spec_yaml.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace hetsched::k8s {
namespace {

constexpr int max_depth = 64;

struct line_t {
  int no = 0;
  int indent = 0;
  std::string_view content;
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

error fail(int line, std::string_view msg) {
  return error{errc::invalid_argument, fmt::format("line {}: {}", line, msg)};
}

// Returns the index just past the closing quote of the quoted scalar starting at `s[i]`, or npos.
std::size_t skip_quoted(std::string_view s, std::size_t i) {
  const char q = s[i];
  for (std::size_t j = i + 1; j < s.size(); ++j) {
    if (q == '"' && s[j] == '\\') {
      ++j;
    } else if (s[j] == q) {
      if (q == '\'' && j + 1 < s.size() && s[j + 1] == '\'') {
        ++j;
      } else {
        return j + 1;
      }
    }
  }
  return std::string_view::npos;
}

bool token_start(std::string_view s, std::size_t i) {
  return i == 0 || is_space(s[i - 1]) || s[i - 1] == '[' || s[i - 1] == '{' || s[i - 1] == ',';
}

// Removes a trailing comment: '#' at the start or after whitespace, outside quoted scalars.
std::string_view strip_comment(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((s[i] == '"' || s[i] == '\'') && token_start(s, i)) {
      const std::size_t end = skip_quoted(s, i);
      if (end == std::string_view::npos) return s;
      i = end - 1;
    } else if (s[i] == '#' && (i == 0 || is_space(s[i - 1]))) {
      return s.substr(0, i);
    }
  }
  return s;
}

bool is_seq_item(std::string_view content) {
  return content == "-" || (content.size() >= 2 && content[0] == '-' && is_space(content[1]));
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Returns `c` for printable ASCII, else "\xNN" (an error message must stay valid UTF-8).
std::string printable(char c) {
  if (c >= 0x20 && c < 0x7F) return std::string(1, c);
  return fmt::format("\\x{:02X}", static_cast<unsigned char>(c));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the quoted scalar at s[pos] (pos advances past it) into `out`.
result<void> read_quoted(std::string_view s, std::size_t& pos, int line, std::string& out) {
  const char q = s[pos];
  for (std::size_t i = pos + 1; i < s.size(); ++i) {
    const char c = s[i];
    if (c == q) {
      if (q == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
        out.push_back('\'');
        ++i;
        continue;
      }
      pos = i + 1;
      return {};
    }
    if (q == '\'' || c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i == s.size()) break;
    int digits = 0;
    switch (s[i]) {
      case '\\': out.push_back('\\'); break;
      case '"': out.push_back('"'); break;
      case '/': out.push_back('/'); break;
      case ' ': out.push_back(' '); break;
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case '0': out.push_back('\0'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'v': out.push_back('\v'); break;
      case 'e': out.push_back('\x1b'); break;
      case 'x': digits = 2; break;
      case 'u': digits = 4; break;
      case 'U': digits = 8; break;
      default:
        return fail(line,
                    fmt::format("unknown escape \\{} in a double-quoted scalar", printable(s[i])));
    }
    if (digits == 0) continue;
    std::uint32_t cp = 0;
    for (int d = 0; d < digits; ++d) {
      const int h = ++i < s.size() ? hex_digit(s[i]) : -1;
      if (h < 0) return fail(line, "bad hexadecimal escape in a double-quoted scalar");
      cp = cp * 16 + static_cast<std::uint32_t>(h);
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return fail(line, "escape is not a Unicode scalar value");
    append_utf8(out, cp);
  }
  return fail(line, "unterminated quoted scalar (quoted scalars must end on their line)");
}

// Refuses a plain scalar that starts with an indicator outside the subset.
result<void> check_plain_start(std::string_view text, int line) {
  const char c = text.front();
  if (c == '&') return fail(line, fmt::format("anchors are not supported ('{}')", excerpt(text)));
  if (c == '*') return fail(line, fmt::format("aliases are not supported ('{}')", excerpt(text)));
  if (c == '!') return fail(line, fmt::format("tags are not supported ('{}')", excerpt(text)));
  if (c == '|' || c == '>')
    return fail(line, "block scalars (| and >) are not supported: write the value on one line");
  if (c == '%' || c == '@' || c == '`' || c == '?' || c == ']' || c == '}' || c == ',')
    return fail(line, fmt::format("a plain scalar cannot start with '{}': quote it", c));
  if (is_seq_item(text)) return fail(line, "a sequence item cannot follow a key on the same line");
  return {};
}

spec_value plain_scalar(std::string_view text, int line) {
  spec_value v;
  v.line = line;
  if (text == "~" || text == "null" || text == "Null" || text == "NULL") return v;
  v.k = spec_value::kind::scalar;
  v.plain = true;
  v.text = std::string(text);
  return v;
}

// Appends a member to `map`; `seen` holds the keys so far with their lines (a long mapping stays
// O(n log n)).
result<void> add_member(spec_value& map, std::map<std::string, int>& seen, std::string key,
                        int line, spec_value value) {
  auto [it, fresh] = seen.emplace(key, line);
  if (!fresh)
    return fail(line, fmt::format("duplicate key {} (first on line {})", excerpt(key), it->second));
  map.members.push_back(spec_value::member{std::move(key), line, std::move(value)});
  return {};
}

// Single-line flow collections and scalars inside them.
class flow_reader {
 public:
  flow_reader(std::string_view s, int line) : s_(s), line_(line) {}

  result<spec_value> read_all() {
    auto v = value(0);
    if (!v) return v;
    skip();
    if (pos_ != s_.size())
      return fail(line_,
                  fmt::format("unexpected '{}' after a flow collection", printable(s_[pos_])));
    return v;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }

  result<spec_value> value(int depth) {
    if (depth > max_depth) return fail(line_, "nesting is deeper than 64 levels");
    skip();
    if (pos_ == s_.size())
      return fail(line_, "unterminated flow collection (it must fit on one line)");
    const char c = s_[pos_];
    if (c == '[') return sequence(depth);
    if (c == '{') return mapping(depth);
    if (c == '"' || c == '\'') {
      spec_value v;
      v.k = spec_value::kind::scalar;
      v.line = line_;
      auto r = read_quoted(s_, pos_, line_, v.text);
      if (!r) return r.error();
      return v;
    }
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != '[' && s_[pos_] != ']' &&
           s_[pos_] != '{' && s_[pos_] != '}' &&
           !(s_[pos_] == ':' && (pos_ + 1 == s_.size() || is_space(s_[pos_ + 1]) ||
                                 s_[pos_ + 1] == ',' || s_[pos_ + 1] == '}')))
      ++pos_;
    const std::string_view text = trim(s_.substr(start, pos_ - start));
    if (text.empty()) return fail(line_, "empty entry in a flow collection");
    auto ok = check_plain_start(text, line_);
    if (!ok) return ok.error();
    return plain_scalar(text, line_);
  }

  result<spec_value> sequence(int depth) {
    spec_value v;
    v.k = spec_value::kind::sequence;
    v.line = line_;
    ++pos_;
    skip();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      auto item = value(depth + 1);
      if (!item) return item;
      v.items.push_back(std::move(*item));
      skip();
      if (pos_ == s_.size()) break;
      if (s_[pos_] == ']') {
        ++pos_;
        return v;
      }
      if (s_[pos_] != ',') break;
      ++pos_;
    }
    return fail(line_, "unterminated flow sequence: expected ',' or ']' (it must fit on one line)");
  }

  result<spec_value> mapping(int depth) {
    spec_value v;
    v.k = spec_value::kind::mapping;
    v.line = line_;
    std::map<std::string, int> seen;
    ++pos_;
    skip();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      auto key = value(depth + 1);
      if (!key) return key;
      if (key->k != spec_value::kind::scalar)
        return fail(line_, "a flow mapping key must be a scalar");
      skip();
      if (pos_ == s_.size() || s_[pos_] != ':')
        return fail(line_,
                    fmt::format("expected ':' after key {} in a flow mapping", excerpt(key->text)));
      ++pos_;
      skip();
      spec_value val;
      val.line = line_;
      if (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != '}') {
        auto r = value(depth + 1);
        if (!r) return r;
        val = std::move(*r);
      }
      auto added = add_member(v, seen, key->text, line_, std::move(val));
      if (!added) return added.error();
      skip();
      if (pos_ == s_.size()) break;
      if (s_[pos_] == '}') {
        ++pos_;
        return v;
      }
      if (s_[pos_] != ',') break;
      ++pos_;
    }
    return fail(line_, "unterminated flow mapping: expected ',' or '}' (it must fit on one line)");
  }

  std::string_view s_;
  int line_;
  std::size_t pos_ = 0;
};

// Returns the value written after "key:" or "- " on one line.
result<spec_value> inline_value(std::string_view text, int line) {
  if (text.front() == '[' || text.front() == '{') return flow_reader(text, line).read_all();
  if (text.front() == '"' || text.front() == '\'') {
    spec_value v;
    v.k = spec_value::kind::scalar;
    v.line = line;
    std::size_t pos = 0;
    auto r = read_quoted(text, pos, line, v.text);
    if (!r) return r.error();
    if (!trim(text.substr(pos)).empty()) return fail(line, "unexpected text after a quoted scalar");
    return v;
  }
  auto ok = check_plain_start(text, line);
  if (!ok) return ok.error();
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == ':' && (i + 1 == text.size() || is_space(text[i + 1])))
      return fail(line, fmt::format("'{}' holds ': ', which starts a mapping here: quote the value",
                                    excerpt(text)));
  return plain_scalar(text, line);
}

struct key_split {
  std::string key;
  std::string_view rest;
};

// Splits "key: rest" (or "key:"); sets `found` to false when the line has no key separator.
result<key_split> split_key(std::string_view content, int line, bool& found) {
  found = false;
  key_split out;
  std::size_t colon = std::string_view::npos;
  if (content.front() == '"' || content.front() == '\'') {
    std::size_t pos = 0;
    auto r = read_quoted(content, pos, line, out.key);
    if (!r) return r.error();
    while (pos < content.size() && is_space(content[pos])) ++pos;
    if (pos < content.size() && content[pos] == ':' &&
        (pos + 1 == content.size() || is_space(content[pos + 1])))
      colon = pos;
    if (colon == std::string_view::npos) return out;
  } else {
    for (std::size_t i = 0; i < content.size(); ++i)
      if (content[i] == ':' && (i + 1 == content.size() || is_space(content[i + 1]))) {
        colon = i;
        break;
      }
    if (colon == std::string_view::npos) return out;
    const std::string_view key = trim(content.substr(0, colon));
    if (key.empty()) return fail(line, "empty key");
    if (key == "<<") return fail(line, "merge keys (<<) are not supported");
    if (key.front() == '?') return fail(line, "complex keys (?) are not supported");
    if (key.front() == '[' || key.front() == '{')
      return fail(line, "flow collections cannot be keys");
    auto ok = check_plain_start(key, line);
    if (!ok) return ok.error();
    out.key = std::string(key);
  }
  found = true;
  out.rest = trim(content.substr(colon + 1));
  return out;
}

class block_reader {
 public:
  explicit block_reader(std::vector<line_t> lines) : lines_(std::move(lines)) {}

  result<spec_value> document() {
    if (lines_.empty()) return spec_value{};
    auto root = node(lines_[0].indent, 0);
    if (!root) return root;
    if (pos_ < lines_.size())
      return fail(lines_[pos_].no, "unexpected indentation (it matches no open block)");
    return root;
  }

 private:
  result<spec_value> node(int indent, int depth) {
    if (depth > max_depth) return fail(lines_[pos_].no, "nesting is deeper than 64 levels");
    if (is_seq_item(lines_[pos_].content)) return sequence(indent, depth);
    const char first = lines_[pos_].content.front();
    bool found = false;
    if (first == '[' || first == '{') {
      const line_t& l = lines_[pos_++];
      return inline_value(l.content, l.no);
    }
    auto kv = split_key(lines_[pos_].content, lines_[pos_].no, found);
    if (!kv) return kv.error();
    if (found) return mapping(indent, depth);
    // a lone scalar: only valid as a whole document or as a sequence item's value
    const line_t& l = lines_[pos_++];
    return inline_value(l.content, l.no);
  }

  result<spec_value> mapping(int indent, int depth) {
    spec_value v;
    v.k = spec_value::kind::mapping;
    v.line = lines_[pos_].no;
    std::map<std::string, int> seen;
    while (pos_ < lines_.size()) {
      const line_t l = lines_[pos_];
      if (l.indent < indent) break;
      if (l.indent > indent)
        return fail(l.no, fmt::format("unexpected indentation: {} spaces where the keys of this "
                                      "mapping have {} (multi-line scalars are not supported)",
                                      l.indent, indent));
      if (is_seq_item(l.content))
        return fail(l.no, "a sequence item where a key was expected (check the indentation)");
      bool found = false;
      auto kv = split_key(l.content, l.no, found);
      if (!kv) return kv.error();
      if (!found)
        return fail(l.no, fmt::format("expected 'key: value', got '{}'", excerpt(l.content)));
      ++pos_;
      spec_value val;
      val.line = l.no;
      if (!kv->rest.empty()) {
        auto r = inline_value(kv->rest, l.no);
        if (!r) return fail_key(r.error(), kv->key);
        val = std::move(*r);
      } else if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
        auto r = node(lines_[pos_].indent, depth + 1);
        if (!r) return r;
        val = std::move(*r);
      } else if (pos_ < lines_.size() && lines_[pos_].indent == indent &&
                 is_seq_item(lines_[pos_].content)) {
        auto r = sequence(indent, depth + 1);
        if (!r) return r;
        val = std::move(*r);
      }
      auto added = add_member(v, seen, kv->key, l.no, std::move(val));
      if (!added) return added.error();
    }
    return v;
  }

  result<spec_value> sequence(int indent, int depth) {
    spec_value v;
    v.k = spec_value::kind::sequence;
    v.line = lines_[pos_].no;
    while (pos_ < lines_.size()) {
      line_t& l = lines_[pos_];
      if (l.indent < indent || !is_seq_item(l.content)) break;
      if (l.indent > indent) return fail(l.no, "unexpected indentation in a sequence");
      std::size_t off = 1;
      while (off < l.content.size() && is_space(l.content[off])) {
        if (l.content[off] == '\t') return fail(l.no, "tab in indentation after '-'");
        ++off;
      }
      if (off == l.content.size()) {
        const int no = l.no;
        ++pos_;
        if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
          auto r = node(lines_[pos_].indent, depth + 1);
          if (!r) return r;
          v.items.push_back(std::move(*r));
        } else {
          spec_value null_item;
          null_item.line = no;
          v.items.push_back(std::move(null_item));
        }
        continue;
      }
      // "- rest": rest continues as a node at the indentation of its first character
      l.indent += static_cast<int>(off);
      l.content.remove_prefix(off);
      auto r = node(l.indent, depth + 1);
      if (!r) return r;
      v.items.push_back(std::move(*r));
    }
    return v;
  }

  static error fail_key(error e, std::string_view key) {
    e.message.append(" (key ").append(excerpt(key)).append(")");
    return e;
  }

  std::vector<line_t> lines_;
  std::size_t pos_ = 0;
};

result<std::vector<line_t>> split_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<line_t> out;
  bool started = false;
  bool ended = false;
  int no = 0;
  while (!text.empty() || no == 0) {
    ++no;
    const std::size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::size_t indent = 0;
    while (indent < raw.size() && raw[indent] == ' ') ++indent;
    std::size_t lead = indent;
    while (lead < raw.size() && is_space(raw[lead])) ++lead;
    const std::string_view content = trim(strip_comment(raw.substr(lead)));
    if (content.empty()) {
      if (text.empty()) break;
      continue;
    }
    if (lead != indent) return fail(no, "tab in indentation (YAML forbids tabs there)");
    if (ended) return fail(no, "content after the document end marker (...)");
    if (indent == 0 && (content == "---" || content.substr(0, 4) == "--- ")) {
      if (started) return fail(no, "a second document (---) is not supported");
      if (content != "---") return fail(no, "content after --- is not supported: start a line");
      started = true;
      continue;
    }
    if (indent == 0 && content == "...") {
      ended = true;
      continue;
    }
    if (indent == 0 && content.front() == '%') return fail(no, "directives (%) are not supported");
    started = true;
    out.push_back(line_t{no, static_cast<int>(indent), content});
    if (text.empty()) break;
  }
  return out;
}

result<spec_value> from_json(const nlohmann::json& j, int depth) {
  if (depth > max_depth)
    return make_error(errc::invalid_argument, "nesting is deeper than 64 levels");
  spec_value v;
  switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded: return v;
    case nlohmann::json::value_t::string:
      v.k = spec_value::kind::scalar;
      v.text = j.get<std::string>();
      return v;
    case nlohmann::json::value_t::object:
      v.k = spec_value::kind::mapping;
      for (const auto& [key, val] : j.items()) {
        auto r = from_json(val, depth + 1);
        if (!r) return r;
        v.members.push_back(spec_value::member{key, 0, std::move(*r)});
      }
      return v;
    case nlohmann::json::value_t::array:
      v.k = spec_value::kind::sequence;
      for (const auto& item : j) {
        auto r = from_json(item, depth + 1);
        if (!r) return r;
        v.items.push_back(std::move(*r));
      }
      return v;
    default:
      v.k = spec_value::kind::scalar;
      v.plain = true;
      v.text = j.dump();
      return v;
  }
}

}  // namespace

std::string ascii_only(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if ((static_cast<unsigned char>(c) & 0x80U) != 0) c = '?';
  return out;
}

std::string excerpt(std::string_view s) {
  constexpr std::size_t limit = 60;
  if (s.size() <= limit) return std::string(s);
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0U) == 0x80U) --cut;
  return std::string(s.substr(0, cut)).append("...");
}

result<spec_value> parse_yaml_subset(std::string_view text) {
  auto lines = split_lines(text);
  if (!lines) return lines.error();
  return block_reader(std::move(*lines)).document();
}

result<spec_value> parse_json_tree(std::string_view text) {
  // nlohmann keeps the last of duplicate keys; the callback sees every key of every object.
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  auto cb = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using ev_t = nlohmann::json::parse_event_t;
    if (ev == ev_t::object_start) open.emplace_back();
    if (ev == ev_t::object_end && !open.empty()) open.pop_back();
    if (ev == ev_t::key && !open.empty() && parsed.is_string() &&
        !open.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, cb);
  } catch (const nlohmann::json::exception& e) {
    return make_error(errc::invalid_argument, "malformed JSON: {}", ascii_only(e.what()));
  }
  if (!duplicate.empty())
    return make_error(errc::invalid_argument, "duplicate key {}", excerpt(duplicate));
  return from_json(j, 0);
}

result<spec_value> parse_spec_document(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '{') return parse_json_tree(text);
    break;
  }
  return parse_yaml_subset(text);
}

}  // namespace hetsched::k8s
