// SPDX-License-Identifier: MIT
// A strict YAML subset (and JSON) reader for small annotation documents such as hivedscheduler's
// pod-scheduling-spec, producing one document tree with source lines.
//
// hivedscheduler writes and reads the annotation with Go's gopkg.in/yaml.v2, so a real
// annotation is block YAML (`key: value`, nested mappings, `- ` sequences), and JSON (which is
// YAML) is accepted too. The subset: block mappings and sequences (a sequence may sit at its key's
// indentation, an item's mapping continues at the indentation of its first key), plain, single-
// and double-quoted one-line scalars, single-line flow sequences and mappings ([a, b], {k: v}),
// `#` comments, a leading `---` and a trailing `...`. Refused, with the line named: tabs in
// indentation, inconsistent indentation, anchors (&), aliases (*), tags (!), block scalars (|, >),
// multi-line scalars, merge keys (<<), complex keys (?), directives (%), duplicate keys, several
// documents. Scalars keep their text; the consumer resolves them per field as yaml.v2 does
// (spec_value::plain says whether a scalar was unquoted).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/model/result.hpp>

namespace hetsched::k8s {

/// A node of the document tree: null, scalar, mapping (keys in source order, unique) or sequence.
struct spec_value {
  enum class kind : unsigned char { null, scalar, mapping, sequence };
  struct member;
  kind k = kind::null;
  /// Scalar text, unquoted and unescaped.
  std::string text;
  /// True for a plain (unquoted) scalar, whose type yaml.v2 resolves from the text; false for
  /// quoted scalars and JSON strings, which are always strings.
  bool plain = false;
  /// 1-based source line of the value (YAML); 0 when read from JSON.
  int line = 0;
  std::vector<member> members;
  std::vector<spec_value> items;
  friend bool operator==(const spec_value&, const spec_value&) = default;
};

/// One `key: value` of a mapping, with the key's source line (0 for JSON).
struct spec_value::member {
  std::string key;
  int line = 0;
  spec_value value;
  friend bool operator==(const member&, const member&) = default;
};

/// Returns the tree of a YAML document in the subset above. Errors: invalid_argument
/// "line N: ..." naming the construct (and the key, where there is one). An empty document (only
/// comments) is a null value. Linear in the text size; nesting is limited to 64 levels.
[[nodiscard]] result<spec_value> parse_yaml_subset(std::string_view text);

/// Returns the tree of a JSON document: strings are quoted scalars, numbers and booleans plain
/// scalars with their JSON text, as yaml.v2 reads JSON. Errors: invalid_argument with the JSON
/// parser's message, or "duplicate key K" (JSON parsers keep the last; YAML refuses).
[[nodiscard]] result<spec_value> parse_json_tree(std::string_view text);

/// Returns `s` for an error message: at most 60 bytes, cut at a UTF-8 character boundary and
/// followed by "..." when cut.
[[nodiscard]] std::string excerpt(std::string_view s);

/// Returns `s` with every non-ASCII byte replaced by '?': parser messages quote the bytes they
/// stopped at, which may be part of a UTF-8 character, and a JSON answer must stay valid UTF-8.
[[nodiscard]] std::string ascii_only(std::string_view s);

/// Returns parse_json_tree(text) when the first non-space character is '{', else
/// parse_yaml_subset(text).
[[nodiscard]] result<spec_value> parse_spec_document(std::string_view text);

}  // namespace hetsched::k8s
