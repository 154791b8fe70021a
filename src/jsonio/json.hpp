// SPDX-License-Identifier: MIT
// The library's one JSON stack: nlohmann::ordered_json read strictly, written deterministically.
//
// Internal (under src/, never installed). parse_json() runs nlohmann's SAX parser with a handler
// that builds the value itself and adds the rules the importers rely on: duplicate keys are an
// error naming the key, nesting and input size are bounded by json_parse_limits, integers that fit
// in int64 stay exact (larger ones become doubles), members keep document order, a byte order mark
// is rejected, and every error reads "line L, column C: ...". to_string() writes deterministic
// output (nlohmann escapes the strings). The expect_* / get_* helpers and json_object_reader read
// typed members and name the JSON path ("vertices[3].uplink.kind: ...") in their errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>

#include <nlohmann/json.hpp>

namespace hetsched::jsonio {

/// A JSON value whose object members keep insertion (document) order.
using json = nlohmann::ordered_json;
/// One object member: the key and its value.
using json_member = json::object_t::value_type;

/// Limits that parse_json() enforces; exceeding one is errc::out_of_range.
struct json_parse_limits {
  /// Deepest nesting of arrays and objects; the top-level container is depth 1.
  std::size_t max_depth = 256;
  /// Largest accepted input in bytes.
  std::size_t max_size = std::size_t{64} << 20;
};

/// Returns the value of the JSON text `text`. Errors: invalid_argument "line L, column C: what"
/// (1-based, columns in bytes) for anything outside RFC 8259, including empty input, a byte order
/// mark, trailing characters, invalid UTF-8, lone surrogates and duplicate keys; out_of_range for
/// input beyond `limits` or a number outside the double range. Integers in int64 range are held
/// as number_integer, others as number_float. Linear time; no recursion.
[[nodiscard]] result<json> parse_json(std::string_view text, json_parse_limits limits = {});

/// Returns `value` as JSON text. Compact (no whitespace) unless `pretty`: then two-space
/// indentation, arrays of scalars on one line, objects of scalars on one line if short.
/// Deterministic; integers exact, doubles in shortest round-trip form with a ".0" or exponent so
/// they read back as doubles, non-finite doubles as null, invalid UTF-8 replaced by U+FFFD.
/// Recurses once per nesting level.
[[nodiscard]] std::string to_string(const json& value, bool pretty = false);

/// Appends `text` to `out` as a quoted, escaped JSON string (the escaping of to_string()).
void append_json_string(std::string& out, std::string_view text);

/// Returns member `key` of `value`, or a null value if there is none or `value` is not an object.
/// Unlike nlohmann's const operator[], never asserts; the null is one static constant.
[[nodiscard]] const json& member(const json& value, std::string_view key) noexcept;

/// Appends member `key` to object `object` and returns its value, in O(1): no search, so the
/// caller guarantees the key is new (checked only by HETSCHED_ASSERT). Precondition:
/// object.is_object().
json& add_member(json& object, std::string key, json value);

/// Returns the elements of `value`. Precondition: value.is_array().
[[nodiscard]] inline const json::array_t& as_array(const json& value) {
  return value.get_ref<const json::array_t&>();
}
[[nodiscard]] inline json::array_t& as_array(json& value) {
  return value.get_ref<json::array_t&>();
}
/// Returns the members of `value` in order, as the vector an ordered_json object is (indexable,
/// unlike ordered_map's own key-based operator[]). Precondition: value.is_object().
[[nodiscard]] inline const std::vector<json_member>& as_object(const json& value) {
  return value.get_ref<const json::object_t&>();
}
[[nodiscard]] inline std::vector<json_member>& as_object(json& value) {
  return value.get_ref<json::object_t&>();
}

/// Returns "an integer", "a string", ...: how error messages describe the type of `value`.
[[nodiscard]] std::string_view describe(const json& value) noexcept;

/// Returns "context.key", or "key" when `context` is empty: the JSON path of a member.
[[nodiscard]] std::string json_path(std::string_view context, std::string_view key);
/// Returns "context[index]": the JSON path of an array element.
[[nodiscard]] std::string json_path(std::string_view context, std::size_t index);

/// Returns `value` as a bool, or invalid_argument "path: expected a boolean, got T".
[[nodiscard]] result<bool> expect_bool(const json& value, std::string_view path);
/// Returns `value` as an integer in [min, max]. Errors: invalid_argument if it is not an integer
/// (1.0 and 1e3 are doubles), out_of_range "path: N is below the minimum M" (or above).
[[nodiscard]] result<std::int64_t> expect_int(
    const json& value, std::string_view path,
    std::int64_t min = std::numeric_limits<std::int64_t>::min(),
    std::int64_t max = std::numeric_limits<std::int64_t>::max());
/// Returns `value` (integer or double) as a double, or invalid_argument naming `path`.
[[nodiscard]] result<double> expect_number(const json& value, std::string_view path);
/// Returns `value` as a string view into `value`, or invalid_argument naming `path`.
[[nodiscard]] result<std::string_view> expect_string(const json& value, std::string_view path);
/// Returns `value`'s elements, or invalid_argument naming `path`.
[[nodiscard]] result<std::span<const json>> expect_array(const json& value, std::string_view path);
/// Returns `value`'s members in order, or invalid_argument naming `path`.
[[nodiscard]] result<std::span<const json_member>> expect_object(const json& value,
                                                                 std::string_view path);

/// Returns member `key` of object `obj`. Errors (invalid_argument): `context` is not an object,
/// or "context.key: missing required member".
[[nodiscard]] result<const json*> get_member(const json& obj, std::string_view key,
                                             std::string_view context);
/// Returns the required bool member `key` of `obj`; errors name "context.key".
[[nodiscard]] result<bool> get_bool(const json& obj, std::string_view key,
                                    std::string_view context);
/// Returns the required integer member `key` of `obj`, within [min, max]; errors name
/// "context.key".
[[nodiscard]] result<std::int64_t> get_int(
    const json& obj, std::string_view key, std::string_view context,
    std::int64_t min = std::numeric_limits<std::int64_t>::min(),
    std::int64_t max = std::numeric_limits<std::int64_t>::max());
/// Returns the required number member `key` of `obj` as a double; errors name "context.key".
[[nodiscard]] result<double> get_number(const json& obj, std::string_view key,
                                        std::string_view context);
/// Returns the required string member `key` of `obj`; errors name "context.key".
[[nodiscard]] result<std::string_view> get_string(const json& obj, std::string_view key,
                                                  std::string_view context);
/// Returns the elements of the required array member `key` of `obj`; errors name "context.key".
[[nodiscard]] result<std::span<const json>> get_array(const json& obj, std::string_view key,
                                                      std::string_view context);

/// Reads one object strictly: every member read through it is marked, and finish() rejects the
/// first member that was not ("path.key: unknown member"). Holds references: `value` must
/// outlive the reader.
class json_object_reader {
 public:
  /// Returns a reader over `value` at JSON path `path` ("" for the document root), or
  /// invalid_argument "path: expected an object, got T".
  [[nodiscard]] static result<json_object_reader> make(const json& value, std::string path);

  /// Returns the path of the object ("" for the root).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Returns the path of member `key`.
  [[nodiscard]] std::string path_of(std::string_view key) const { return json_path(path_, key); }
  /// Returns true if the object has member `key` (does not mark it).
  [[nodiscard]] bool contains(std::string_view key) const noexcept;

  /// Returns member `key` (never null), or invalid_argument "path.key: missing required member".
  [[nodiscard]] result<const json*> get(std::string_view key);

  /// Returns the required bool member `key`.
  [[nodiscard]] result<bool> get_bool(std::string_view key);
  /// Returns the bool member `key`, or `fallback` if absent.
  [[nodiscard]] result<bool> get_bool(std::string_view key, bool fallback);
  /// Returns the required integer member `key` within [min, max].
  [[nodiscard]] result<std::int64_t> get_int(
      std::string_view key, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
      std::int64_t max = std::numeric_limits<std::int64_t>::max());
  /// Returns the integer member `key` within [min, max], or `fallback` if absent.
  [[nodiscard]] result<std::int64_t> get_int_or(std::string_view key, std::int64_t fallback,
                                                std::int64_t min, std::int64_t max);
  /// Returns the required number member `key` as a double.
  [[nodiscard]] result<double> get_number(std::string_view key);
  /// Returns the required string member `key`.
  [[nodiscard]] result<std::string_view> get_string(std::string_view key);
  /// Returns the string member `key`, or `fallback` if absent.
  [[nodiscard]] result<std::string_view> get_string(std::string_view key,
                                                    std::string_view fallback);
  /// Returns the elements of the required array member `key`.
  [[nodiscard]] result<std::span<const json>> get_array(std::string_view key);
  /// Returns the elements of the optional array member `key`; none when it is absent.
  [[nodiscard]] result<std::span<const json>> get_optional_array(std::string_view key);
  /// Returns the members of the optional object member `key`; none when it is absent.
  [[nodiscard]] result<std::span<const json_member>> get_optional_members(std::string_view key);
  /// Returns a reader over the required object member `key`.
  [[nodiscard]] result<json_object_reader> get_object(std::string_view key);
  /// Returns a reader over the optional object member `key`, or nullopt when it is absent.
  [[nodiscard]] result<std::optional<json_object_reader>> get_optional_object(std::string_view key);

  /// Returns ok() if every member was read, else invalid_argument "path.key: unknown member".
  [[nodiscard]] result<void> finish() const;

 private:
  json_object_reader(const std::vector<json_member>& members, std::string path)
      : members_(&members), path_(std::move(path)), read_(members.size(), false) {}

  /// Returns member `key` and marks it read, or nullptr if absent (private: the public lookups
  /// return result<> or fall back, so no caller holds an untested pointer).
  [[nodiscard]] const json* take(std::string_view key);

  const std::vector<json_member>* members_;  // the object_t, indexable through its base
  std::string path_;
  std::vector<bool> read_;
};

}  // namespace hetsched::jsonio
