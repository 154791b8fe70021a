// SPDX-License-Identifier: MIT
// JSON paths, member lookup and the typed readers (expect_*, get_*, json_object_reader) over parsed
// values.
#include <fmt/format.h>

#include <algorithm>

#include "jsonio/json.hpp"

namespace hetsched::jsonio {

namespace {

std::string_view shown(std::string_view path) noexcept { return path.empty() ? "(root)" : path; }

error type_error(std::string_view path, std::string_view expected, const json& got) {
  return make_error(errc::invalid_argument, "{}: expected {}, got {}", shown(path), expected,
                    describe(got));
}

}  // namespace

std::string json_path(std::string_view context, std::string_view key) {
  if (context.empty()) return std::string(key);
  std::string path;
  path.reserve(context.size() + 1 + key.size());
  path.append(context).push_back('.');
  path.append(key);
  return path;
}

std::string json_path(std::string_view context, std::size_t index) {
  return fmt::format("{}[{}]", context, index);
}

// ---------------------------------------------------------------------------------------------
// Typed readers

result<bool> expect_bool(const json& value, std::string_view path) {
  if (!value.is_boolean()) return type_error(path, "a boolean", value);
  return value.get<bool>();
}

result<std::int64_t> expect_int(const json& value, std::string_view path, std::int64_t min,
                                std::int64_t max) {
  if (!value.is_number_integer()) return type_error(path, "an integer", value);
  if (value.is_number_unsigned() &&
      (max < 0 || value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))) {
    return make_error(errc::out_of_range, "{}: {} is above the maximum {}", shown(path),
                      value.get<std::uint64_t>(), max);
  }
  const auto n = value.get<std::int64_t>();
  if (n < min) {
    return make_error(errc::out_of_range, "{}: {} is below the minimum {}", shown(path), n, min);
  }
  if (n > max) {
    return make_error(errc::out_of_range, "{}: {} is above the maximum {}", shown(path), n, max);
  }
  return n;
}

result<double> expect_number(const json& value, std::string_view path) {
  if (!value.is_number()) return type_error(path, "a number", value);
  return value.get<double>();
}

result<std::string_view> expect_string(const json& value, std::string_view path) {
  if (!value.is_string()) return type_error(path, "a string", value);
  return std::string_view(value.get_ref<const std::string&>());
}

result<std::span<const json>> expect_array(const json& value, std::string_view path) {
  if (!value.is_array()) return type_error(path, "an array", value);
  return std::span<const json>(value.get_ref<const json::array_t&>());
}

result<std::span<const json_member>> expect_object(const json& value, std::string_view path) {
  if (!value.is_object()) return type_error(path, "an object", value);
  return std::span<const json_member>(value.get_ref<const json::object_t&>());
}

result<const json*> get_member(const json& obj, std::string_view key, std::string_view context) {
  if (!obj.is_object()) return type_error(context, "an object", obj);
  if (!obj.contains(key)) {
    return make_error(errc::invalid_argument, "{}: missing required member",
                      json_path(context, key));
  }
  return &member(obj, key);
}

namespace {

template <typename F>
auto read_member(const json& obj, std::string_view key, std::string_view context, F&& f)
    -> decltype(f(obj, std::string_view{})) {
  auto member = get_member(obj, key, context);
  if (!member) return std::move(member).error();
  return f(**member, json_path(context, key));
}

}  // namespace

result<bool> get_bool(const json& obj, std::string_view key, std::string_view context) {
  return read_member(obj, key, context,
                     [](const json& v, std::string_view p) { return expect_bool(v, p); });
}

result<std::int64_t> get_int(const json& obj, std::string_view key, std::string_view context,
                             std::int64_t min, std::int64_t max) {
  return read_member(obj, key, context,
                     [&](const json& v, std::string_view p) { return expect_int(v, p, min, max); });
}

result<double> get_number(const json& obj, std::string_view key, std::string_view context) {
  return read_member(obj, key, context,
                     [](const json& v, std::string_view p) { return expect_number(v, p); });
}

result<std::string_view> get_string(const json& obj, std::string_view key,
                                    std::string_view context) {
  return read_member(obj, key, context,
                     [](const json& v, std::string_view p) { return expect_string(v, p); });
}

result<std::span<const json>> get_array(const json& obj, std::string_view key,
                                        std::string_view context) {
  return read_member(obj, key, context,
                     [](const json& v, std::string_view p) { return expect_array(v, p); });
}

// ---------------------------------------------------------------------------------------------
// json_object_reader

result<json_object_reader> json_object_reader::make(const json& value, std::string path) {
  if (!value.is_object()) return type_error(path, "an object", value);
  return json_object_reader(value.get_ref<const json::object_t&>(), std::move(path));
}

bool json_object_reader::contains(std::string_view key) const noexcept {
  return std::any_of(members_->begin(), members_->end(),
                     [&](const auto& m) { return m.first == key; });
}

const json* json_object_reader::take(std::string_view key) {
  for (std::size_t i = 0; i < members_->size(); ++i) {
    if ((*members_)[i].first == key) {
      read_[i] = true;
      return &(*members_)[i].second;
    }
  }
  return nullptr;
}

result<const json*> json_object_reader::get(std::string_view key) {
  const json* v = take(key);
  if (v == nullptr) {
    return make_error(errc::invalid_argument, "{}: missing required member", path_of(key));
  }
  return v;
}

result<bool> json_object_reader::get_bool(std::string_view key) {
  auto v = get(key);
  if (!v) return std::move(v).error();
  return expect_bool(**v, path_of(key));
}

result<bool> json_object_reader::get_bool(std::string_view key, bool fallback) {
  const json* v = take(key);
  if (v == nullptr) return fallback;
  return expect_bool(*v, path_of(key));
}

result<std::int64_t> json_object_reader::get_int(std::string_view key, std::int64_t min,
                                                 std::int64_t max) {
  auto v = get(key);
  if (!v) return std::move(v).error();
  return expect_int(**v, path_of(key), min, max);
}

result<std::int64_t> json_object_reader::get_int_or(std::string_view key, std::int64_t fallback,
                                                    std::int64_t min, std::int64_t max) {
  const json* v = take(key);
  if (v == nullptr) return fallback;
  return expect_int(*v, path_of(key), min, max);
}

result<double> json_object_reader::get_number(std::string_view key) {
  auto v = get(key);
  if (!v) return std::move(v).error();
  return expect_number(**v, path_of(key));
}

result<std::string_view> json_object_reader::get_string(std::string_view key) {
  auto v = get(key);
  if (!v) return std::move(v).error();
  return expect_string(**v, path_of(key));
}

result<std::string_view> json_object_reader::get_string(std::string_view key,
                                                        std::string_view fallback) {
  const json* v = take(key);
  if (v == nullptr) return fallback;
  return expect_string(*v, path_of(key));
}

result<std::span<const json>> json_object_reader::get_array(std::string_view key) {
  auto v = get(key);
  if (!v) return std::move(v).error();
  return expect_array(**v, path_of(key));
}

result<std::span<const json>> json_object_reader::get_optional_array(std::string_view key) {
  const json* v = take(key);
  if (v == nullptr) return std::span<const json>{};
  return expect_array(*v, path_of(key));
}

result<std::span<const json_member>> json_object_reader::get_optional_members(
    std::string_view key) {
  const json* v = take(key);
  if (v == nullptr) return std::span<const json_member>{};
  return expect_object(*v, path_of(key));
}

result<json_object_reader> json_object_reader::get_object(std::string_view key) {
  auto v = get(key);
  if (!v) return std::move(v).error();
  return make(**v, path_of(key));
}

result<std::optional<json_object_reader>> json_object_reader::get_optional_object(
    std::string_view key) {
  const json* v = take(key);
  if (v == nullptr) return std::optional<json_object_reader>{};
  auto reader = make(*v, path_of(key));
  if (!reader) return std::move(reader).error();
  return std::optional<json_object_reader>(std::move(*reader));
}

result<void> json_object_reader::finish() const {
  for (std::size_t i = 0; i < members_->size(); ++i) {
    if (!read_[i]) {
      return make_error(errc::invalid_argument, "{}: unknown member",
                        path_of((*members_)[i].first));
    }
  }
  return ok();
}

}  // namespace hetsched::jsonio
