// SPDX-License-Identifier: MIT
// A small strict JSON value, parser and writer shared by the importers, inspector and tests.
//
// parse_json() accepts exactly RFC 8259 (no comments, trailing commas, NaN or duplicate keys),
// keeps integers that fit in int64 exact, keeps object members in document order and reports
// errors as "line L, column C: ...". It never recurses: nesting costs heap, bounded by
// json_parse_limits. to_string() writes deterministic output that parse_json() reads back to an
// equal value. The get_* helpers and json_object_reader read typed members and name the JSON path
// ("vertices[3].uplink.kind: ...") in their errors. Not part of the stable API.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <hetsched/detail/assert.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched::detail {

/// The type of a JSON value.
enum class json_type : std::uint8_t { null, boolean, number, string, array, object };

/// Returns the lower-case name of `type`, e.g. "object".
[[nodiscard]] std::string_view to_string(json_type type) noexcept;

/// A JSON value: null, bool, number (int64 when integral and in range, else double), string,
/// array or object (members in insertion order, keys unique).
class json_value {
 public:
  using array_type = std::vector<json_value>;
  using member_type = std::pair<std::string, json_value>;
  using object_type = std::vector<member_type>;

  /// Makes null. Every constructor is implicit so that values read naturally:
  /// `obj.insert("count", 3)`, `arr.push_back("GPU0")`.
  json_value() noexcept = default;
  /// Makes null.
  json_value(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor)
  /// Makes a boolean.
  json_value(bool b) noexcept : v_(b) {}  // NOLINT(google-explicit-constructor)
  /// Makes an integer; unsigned values above INT64_MAX become doubles.
  template <std::integral T>
  requires(!std::same_as<T, bool>) json_value(T n)
  noexcept {  // NOLINT(google-explicit-constructor)
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      if (n > static_cast<T>(std::numeric_limits<std::int64_t>::max())) {
        v_ = static_cast<double>(n);
        return;
      }
    }
    v_ = static_cast<std::int64_t>(n);
  }
  /// Makes a double (written with a ".0" or an exponent so it reads back as a double).
  json_value(double d) noexcept : v_(d) {}  // NOLINT(google-explicit-constructor)
  /// Makes a string (UTF-8 expected; the writer replaces invalid bytes by U+FFFD).
  json_value(std::string s) noexcept : v_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  json_value(std::string_view s) : v_(std::string(s)) {}    // NOLINT(google-explicit-constructor)
  json_value(const char* s) : v_(std::string(s)) {}         // NOLINT(google-explicit-constructor)
  /// Makes an array or an object from its elements or members.
  json_value(array_type a) noexcept : v_(std::move(a)) {}   // NOLINT(google-explicit-constructor)
  json_value(object_type o) noexcept : v_(std::move(o)) {}  // NOLINT(google-explicit-constructor)

  /// Returns an empty array.
  [[nodiscard]] static json_value array() { return json_value(array_type{}); }
  /// Returns an empty object.
  [[nodiscard]] static json_value object() { return json_value(object_type{}); }

  /// Returns the type of the value.
  [[nodiscard]] json_type type() const noexcept;
  /// Returns true if the value is null; the is_* below test the other types likewise.
  [[nodiscard]] bool is_null() const noexcept { return v_.index() == 0; }
  [[nodiscard]] bool is_bool() const noexcept { return v_.index() == 1; }
  /// Returns true for integers and doubles.
  [[nodiscard]] bool is_number() const noexcept { return v_.index() == 2 || v_.index() == 3; }
  /// Returns true if the number is held exactly as an int64 (an integer literal that fits).
  [[nodiscard]] bool is_integer() const noexcept { return v_.index() == 2; }
  /// Returns true if the number is held as a double (a fraction, an exponent or a huge integer).
  [[nodiscard]] bool is_double() const noexcept { return v_.index() == 3; }
  [[nodiscard]] bool is_string() const noexcept { return v_.index() == 4; }
  [[nodiscard]] bool is_array() const noexcept { return v_.index() == 5; }
  [[nodiscard]] bool is_object() const noexcept { return v_.index() == 6; }

  /// Returns the boolean. Precondition: is_bool().
  [[nodiscard]] bool as_bool() const noexcept { return get<bool>(); }
  /// Returns the integer. Precondition: is_integer().
  [[nodiscard]] std::int64_t as_int64() const noexcept { return get<std::int64_t>(); }
  /// Returns the number as a double (integers converted). Precondition: is_number().
  [[nodiscard]] double as_double() const noexcept;
  /// Returns the string. Precondition: is_string().
  [[nodiscard]] const std::string& as_string() const noexcept { return get<std::string>(); }
  /// Returns the elements. Precondition: is_array().
  [[nodiscard]] const array_type& as_array() const noexcept { return get<array_type>(); }
  [[nodiscard]] array_type& as_array() noexcept { return get<array_type>(); }
  /// Returns the members in insertion order. Precondition: is_object().
  [[nodiscard]] const object_type& as_object() const noexcept { return get<object_type>(); }
  [[nodiscard]] object_type& as_object() noexcept { return get<object_type>(); }

  /// Returns the member named `key`, or a null value if there is none or this is not an object.
  /// Lookups therefore chain without a check in between (`doc["a"]["b"]` is null when either is
  /// missing) and there is no pointer to forget to test; an absent member and an explicit null
  /// read alike, contains() tells them apart. The null for a missing member is one static
  /// constant, valid for the whole program. O(size).
  [[nodiscard]] const json_value& operator[](std::string_view key) const noexcept;
  /// Returns true if this is an object with a member named `key`. O(size).
  [[nodiscard]] bool contains(std::string_view key) const noexcept;
  /// Appends `value` to an array and returns it. Precondition: is_array().
  json_value& push_back(json_value value);
  /// Appends member `key` to an object and returns its value. Precondition: is_object() and no
  /// member named `key` yet (checked only by HETSCHED_ASSERT).
  json_value& insert(std::string key, json_value value);

  /// Structural equality; an integer never equals a double, and member order matters.
  friend bool operator==(const json_value& a, const json_value& b);

 private:
  using storage_type = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string,
                                    array_type, object_type>;

  template <typename T>
  [[nodiscard]] const T& get() const noexcept {
    HETSCHED_ASSERT(std::holds_alternative<T>(v_), "json_value holds another type");
    return *std::get_if<T>(&v_);
  }
  template <typename T>
  [[nodiscard]] T& get() noexcept {
    HETSCHED_ASSERT(std::holds_alternative<T>(v_), "json_value holds another type");
    return *std::get_if<T>(&v_);
  }

  storage_type v_;
};

/// Limits that parse_json() enforces; exceeding one is errc::out_of_range.
struct json_parse_limits {
  /// Deepest nesting of arrays and objects; the top-level container is depth 1. Destroying a
  /// value recurses once per level, so keep this in the thousands at most.
  std::size_t max_depth = 256;
  /// Largest accepted input in bytes.
  std::size_t max_size = std::size_t{64} << 20;
};

/// Returns the value of the JSON text `text`. Errors: invalid_argument "line L, column C: what"
/// (1-based, columns in bytes) for anything outside RFC 8259, including empty input, trailing
/// characters, invalid UTF-8, lone surrogates and duplicate keys; out_of_range for input beyond
/// `limits` or a number outside the double range. Linear time; no recursion.
[[nodiscard]] result<json_value> parse_json(std::string_view text, json_parse_limits limits = {});

/// Returns `value` as JSON text. Compact (no whitespace) unless `pretty`: then two-space
/// indentation, arrays of scalars on one line, objects of scalars on one line if short.
/// Deterministic; integers exact, doubles in shortest round-trip form with a ".0" or exponent so
/// they read back as doubles, non-finite doubles as null, control characters escaped, invalid
/// UTF-8 replaced by U+FFFD. Recurses once per nesting level.
[[nodiscard]] std::string to_string(const json_value& value, bool pretty = false);

/// Appends `text` to `out` as a quoted, escaped JSON string (the escaping of to_string()).
void append_json_string(std::string& out, std::string_view text);

/// Returns "context.key", or "key" when `context` is empty: the JSON path of a member.
[[nodiscard]] std::string json_path(std::string_view context, std::string_view key);
/// Returns "context[index]": the JSON path of an array element.
[[nodiscard]] std::string json_path(std::string_view context, std::size_t index);

/// Returns `value` as a bool, or invalid_argument "path: expected a boolean, got T".
[[nodiscard]] result<bool> expect_bool(const json_value& value, std::string_view path);
/// Returns `value` as an integer in [min, max]. Errors: invalid_argument if it is not an integer
/// (1.0 and 1e3 are doubles), out_of_range "path: N is outside min..max".
[[nodiscard]] result<std::int64_t> expect_int(
    const json_value& value, std::string_view path,
    std::int64_t min = std::numeric_limits<std::int64_t>::min(),
    std::int64_t max = std::numeric_limits<std::int64_t>::max());
/// Returns `value` (integer or double) as a double, or invalid_argument naming `path`.
[[nodiscard]] result<double> expect_number(const json_value& value, std::string_view path);
/// Returns `value` as a string view into `value`, or invalid_argument naming `path`.
[[nodiscard]] result<std::string_view> expect_string(const json_value& value,
                                                     std::string_view path);
/// Returns `value`'s elements, or invalid_argument naming `path`.
[[nodiscard]] result<std::span<const json_value>> expect_array(const json_value& value,
                                                               std::string_view path);
/// Returns `value`'s members, or invalid_argument naming `path`.
[[nodiscard]] result<std::span<const json_value::member_type>> expect_object(
    const json_value& value, std::string_view path);

/// Returns member `key` of object `obj`. Errors (invalid_argument): `context` is not an object,
/// or "context.key: missing required member".
[[nodiscard]] result<const json_value*> get_member(const json_value& obj, std::string_view key,
                                                   std::string_view context);
/// Returns the required bool member `key` of `obj`; errors name "context.key".
[[nodiscard]] result<bool> get_bool(const json_value& obj, std::string_view key,
                                    std::string_view context);
/// Returns the required integer member `key` of `obj`, within [min, max]; errors name
/// "context.key".
[[nodiscard]] result<std::int64_t> get_int(
    const json_value& obj, std::string_view key, std::string_view context,
    std::int64_t min = std::numeric_limits<std::int64_t>::min(),
    std::int64_t max = std::numeric_limits<std::int64_t>::max());
/// Returns the required number member `key` of `obj` as a double; errors name "context.key".
[[nodiscard]] result<double> get_number(const json_value& obj, std::string_view key,
                                        std::string_view context);
/// Returns the required string member `key` of `obj`; errors name "context.key".
[[nodiscard]] result<std::string_view> get_string(const json_value& obj, std::string_view key,
                                                  std::string_view context);
/// Returns the elements of the required array member `key` of `obj`; errors name "context.key".
[[nodiscard]] result<std::span<const json_value>> get_array(const json_value& obj,
                                                            std::string_view key,
                                                            std::string_view context);

/// Reads one object strictly: every member read through it is marked, and finish() rejects the
/// first member that was not ("path.key: unknown member"). Holds references: `value` must
/// outlive the reader.
class json_object_reader {
 public:
  /// Returns a reader over `value` at JSON path `path` ("" for the document root), or
  /// invalid_argument "path: expected an object, got T".
  [[nodiscard]] static result<json_object_reader> make(const json_value& value, std::string path);

  /// Returns the path of the object ("" for the root).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Returns the path of member `key`.
  [[nodiscard]] std::string path_of(std::string_view key) const { return json_path(path_, key); }
  /// Returns true if the object has member `key` (does not mark it).
  [[nodiscard]] bool contains(std::string_view key) const noexcept;

  /// Returns member `key` (never null), or invalid_argument "path.key: missing required member".
  [[nodiscard]] result<const json_value*> get(std::string_view key);

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
  [[nodiscard]] result<std::span<const json_value>> get_array(std::string_view key);
  /// Returns the elements of the optional array member `key`; none when it is absent.
  [[nodiscard]] result<std::span<const json_value>> get_optional_array(std::string_view key);
  /// Returns the members of the optional object member `key`; none when it is absent.
  [[nodiscard]] result<std::span<const json_value::member_type>> get_optional_members(
      std::string_view key);
  /// Returns a reader over the required object member `key`.
  [[nodiscard]] result<json_object_reader> get_object(std::string_view key);
  /// Returns a reader over the optional object member `key`, or nullopt when it is absent.
  [[nodiscard]] result<std::optional<json_object_reader>> get_optional_object(std::string_view key);

  /// Returns ok() if every member was read, else invalid_argument "path.key: unknown member".
  [[nodiscard]] result<void> finish() const;

 private:
  json_object_reader(const json_value::object_type& members, std::string path)
      : members_(&members), path_(std::move(path)), read_(members.size(), false) {}

  /// Returns member `key` and marks it read, or nullptr if absent (private: the public lookups
  /// return result<> or fall back, so no caller holds an untested pointer).
  [[nodiscard]] const json_value* take(std::string_view key);

  const json_value::object_type* members_;
  std::string path_;
  std::vector<bool> read_;
};

}  // namespace hetsched::detail
