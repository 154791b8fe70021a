// SPDX-License-Identifier: MIT
// vector_value: how the conformance runners read a parsed vector file without being able to
// crash on it.
//
// A vector_value is a JSON value plus its path in the file ("scenarios[2].steps[5].expect").
// Looking up a member never fails: an absent member reads as null (present() is false), so an
// optional field is read as `step["expect"]["group_after"]` and a missing one means "nothing to
// check" (items() and members() of an absent value are empty; the *_or reads give the fallback).
// A required read of a missing field (string(), integer(), ...) or any read of a field of the
// wrong type throws vector_error naming the path ("scenarios[0].steps[3].expect.result: expected
// a string, got null"); the runner reports it as the failure of the case being run
// (conform.hpp, run_guarded), never as a crash and never as a pass.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jsonio/json.hpp"

namespace hetsched::conform {

/// A malformed vector file: a required field is missing or a field has the wrong type. what()
/// is "<path>: <problem>".
class vector_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value of a parsed vector file and its JSON path. Holds a reference: the parsed document must
/// outlive it. Cheap to copy (one pointer and the path).
class vector_value {
 public:
  /// A view of `json` at `path` ("" for the document root).
  vector_value(const jsonio::json& json, std::string path) : json_(&json), path_(std::move(path)) {}

  /// Returns the JSON path of the value ("(root)" for the document).
  [[nodiscard]] std::string path() const { return path_.empty() ? "(root)" : path_; }
  /// Returns the underlying JSON value (null when absent).
  [[nodiscard]] const jsonio::json& json() const noexcept { return *json_; }
  /// Returns true unless the value is null or an absent member.
  [[nodiscard]] bool present() const noexcept { return !json_->is_null(); }
  /// Returns true if this is an object whose member `key` is present (not null).
  [[nodiscard]] bool has(std::string_view key) const noexcept {
    return !jsonio::member(*json_, key).is_null();
  }

  /// Returns member `key`: null when this value is absent or has no such member. Throws
  /// vector_error when this value is present and not an object.
  [[nodiscard]] vector_value operator[](std::string_view key) const;
  /// Returns the elements in order; none when absent. Throws when present and not an array.
  [[nodiscard]] std::vector<vector_value> items() const;
  /// Returns the members in document order; none when absent. Throws when present and not an
  /// object.
  [[nodiscard]] std::vector<std::pair<std::string, vector_value>> members() const;

  /// Required reads: throw vector_error when the value is absent, null or of another type, or
  /// (integer) outside [min, max].
  [[nodiscard]] std::string string() const;
  [[nodiscard]] std::int64_t integer(
      std::int64_t min = std::numeric_limits<std::int64_t>::min(),
      std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  /// Returns an integer or a double as a double.
  [[nodiscard]] double number() const;
  [[nodiscard]] bool boolean() const;

  /// Optional reads: `fallback` when the value is absent or null; throw when it has another type.
  [[nodiscard]] std::string string_or(std::string_view fallback) const;
  [[nodiscard]] std::int64_t integer_or(
      std::int64_t fallback, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
      std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  [[nodiscard]] double number_or(double fallback) const;
  [[nodiscard]] bool boolean_or(bool fallback) const;
  /// Returns the elements as strings (integers); none when absent. Throws on another type.
  [[nodiscard]] std::vector<std::string> strings() const;
  [[nodiscard]] std::vector<std::int64_t> integers() const;

  /// Throws vector_error "<path>: <problem>".
  [[noreturn]] void fail(std::string_view problem) const;

 private:
  const jsonio::json* json_;  // never null: an absent member is json's shared null
  std::string path_;
};

namespace vector_value_detail {

// Returns the value of `r`, or throws vector_error with its message (which names the path).
template <typename T>
inline T value_or_throw(result<T> r) {
  if (!r) throw vector_error(r.error().message);
  return std::move(*r);
}

}  // namespace vector_value_detail

inline void vector_value::fail(std::string_view problem) const {
  throw vector_error(fmt::format("{}: {}", path(), problem));
}

inline vector_value vector_value::operator[](std::string_view key) const {
  if (present() && !json_->is_object()) {
    fail(fmt::format("expected an object (to read its member \"{}\"), got {}", key,
                     json_->type_name()));
  }
  return vector_value(jsonio::member(*json_, key), jsonio::json_path(path_, key));
}

inline std::vector<vector_value> vector_value::items() const {
  std::vector<vector_value> out;
  if (!present()) return out;
  const auto elements = vector_value_detail::value_or_throw(jsonio::expect_array(*json_, path()));
  out.reserve(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) {
    out.emplace_back(elements[i], jsonio::json_path(path_, i));
  }
  return out;
}

inline std::vector<std::pair<std::string, vector_value>> vector_value::members() const {
  std::vector<std::pair<std::string, vector_value>> out;
  if (!present()) return out;
  const auto object = vector_value_detail::value_or_throw(jsonio::expect_object(*json_, path()));
  out.reserve(object.size());
  for (const auto& [key, value] : object) {
    out.emplace_back(key, vector_value(value, jsonio::json_path(path_, key)));
  }
  return out;
}

inline std::string vector_value::string() const {
  if (!present()) fail("missing (a string is required)");
  return std::string(vector_value_detail::value_or_throw(jsonio::expect_string(*json_, path())));
}

inline std::int64_t vector_value::integer(std::int64_t min, std::int64_t max) const {
  if (!present()) fail("missing (an integer is required)");
  return vector_value_detail::value_or_throw(jsonio::expect_int(*json_, path(), min, max));
}

inline double vector_value::number() const {
  if (!present()) fail("missing (a number is required)");
  return vector_value_detail::value_or_throw(jsonio::expect_number(*json_, path()));
}

inline bool vector_value::boolean() const {
  if (!present()) fail("missing (a boolean is required)");
  return vector_value_detail::value_or_throw(jsonio::expect_bool(*json_, path()));
}

inline std::string vector_value::string_or(std::string_view fallback) const {
  return present() ? string() : std::string(fallback);
}

inline std::int64_t vector_value::integer_or(std::int64_t fallback, std::int64_t min,
                                             std::int64_t max) const {
  return present() ? integer(min, max) : fallback;
}

inline double vector_value::number_or(double fallback) const {
  return present() ? number() : fallback;
}

inline bool vector_value::boolean_or(bool fallback) const {
  return present() ? boolean() : fallback;
}

inline std::vector<std::string> vector_value::strings() const {
  std::vector<std::string> out;
  for (const vector_value& v : items()) out.push_back(v.string());
  return out;
}

inline std::vector<std::int64_t> vector_value::integers() const {
  std::vector<std::int64_t> out;
  for (const vector_value& v : items()) out.push_back(v.integer());
  return out;
}

}  // namespace hetsched::conform
