// SPDX-License-Identifier: MIT
// hetsched::result<T> and hetsched::error: how every fallible call reports bad input.
//
// A result<T> holds either a T or an error{code, message}. Its API is a strict subset of
// std::expected<T, error> (has_value, operator bool, *, ->, value, error) so that under C++23 it
// can become an alias. Bad input leaves every object unchanged; "cannot place now" is never an
// error but a deferral inside a decision.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace hetsched {

/// Canonical error codes. Choose:
/// - invalid_argument: the input is malformed or inconsistent on its own (bad number, cycle,
///   negative quota, ragged matrix, truncated XML).
/// - not_found: an id or name refers to nothing that exists.
/// - already_exists: an id or name is defined twice.
/// - failed_precondition: the input is well formed but the current state forbids it (illegal
///   lifecycle transition, device already full, node unhealthy).
/// - out_of_range: a value lies outside a documented limit (absurd sizes, > 1000 milli-GPU).
/// - internal: an invariant of hetsched itself broke; report it as a bug.
enum class errc : unsigned char {
  invalid_argument,
  not_found,
  already_exists,
  failed_precondition,
  out_of_range,
  internal,
};

/// Returns the lower-case name of `code`, e.g. "invalid_argument".
[[nodiscard]] constexpr std::string_view to_string(errc code) noexcept {
  switch (code) {
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::already_exists: return "already_exists";
    case errc::failed_precondition: return "failed_precondition";
    case errc::out_of_range: return "out_of_range";
    case errc::internal: return "internal";
  }
  return "unknown";
}

/// An error: a canonical code plus a message that names the offending item.
struct error {
  errc code = errc::internal;
  std::string message;

  friend bool operator==(const error&, const error&) = default;
};

/// Builds an error whose message is formatted with {fmt}.
template <typename... Args>
[[nodiscard]] error make_error(errc code, fmt::format_string<Args...> format, Args&&... args) {
  return error{code, fmt::format(format, std::forward<Args>(args)...)};
}

/// Thrown only by result<T>::value() when the result holds an error.
class bad_result_access : public std::exception {
 public:
  explicit bad_result_access(hetsched::error e)
      : error_(std::move(e)),
        what_(fmt::format("{}: {}", to_string(error_.code), error_.message)) {}
  [[nodiscard]] const char* what() const noexcept override { return what_.c_str(); }
  [[nodiscard]] const hetsched::error& error() const noexcept { return error_; }

 private:
  hetsched::error error_;
  std::string what_;
};

/// Tag type to construct a failed result: `return unexpected(make_error(...));` also works by
/// returning the error directly, since result<T> converts from error.
template <typename T>
class [[nodiscard]] result {
 public:
  using value_type = T;

  result(T value)
      : storage_(std::in_place_index<0>, std::move(value)) {
  }  // NOLINT(google-explicit-constructor)
  result(hetsched::error e)
      : storage_(std::in_place_index<1>, std::move(e)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  [[nodiscard]] T& operator*() & noexcept { return *std::get_if<0>(&storage_); }
  [[nodiscard]] const T& operator*() const& noexcept { return *std::get_if<0>(&storage_); }
  [[nodiscard]] T&& operator*() && noexcept { return std::move(*std::get_if<0>(&storage_)); }
  [[nodiscard]] T* operator->() noexcept { return std::get_if<0>(&storage_); }
  [[nodiscard]] const T* operator->() const noexcept { return std::get_if<0>(&storage_); }

  [[nodiscard]] T& value() & {
    check();
    return **this;
  }
  [[nodiscard]] const T& value() const& {
    check();
    return **this;
  }
  [[nodiscard]] T&& value() && {
    check();
    return std::move(**this);
  }

  [[nodiscard]] const hetsched::error& error() const& noexcept {
    return *std::get_if<1>(&storage_);
  }
  [[nodiscard]] hetsched::error&& error() && noexcept {
    return std::move(*std::get_if<1>(&storage_));
  }

 private:
  void check() const {
    if (!has_value()) throw bad_result_access(*std::get_if<1>(&storage_));
  }
  std::variant<T, hetsched::error> storage_;
};

/// result<void>: success carries nothing.
template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;

  result() = default;
  result(hetsched::error e)
      : error_(std::move(e)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  void operator*() const noexcept {}
  void value() const {
    if (!ok_) throw bad_result_access(error_);
  }
  [[nodiscard]] const hetsched::error& error() const& noexcept { return error_; }
  [[nodiscard]] hetsched::error&& error() && noexcept { return std::move(error_); }

 private:
  hetsched::error error_;
  bool ok_ = true;
};

/// The successful result<void>.
[[nodiscard]] inline result<void> ok() { return {}; }

}  // namespace hetsched

/// Propagates the error of a result-valued expression out of the enclosing function.
#define HETSCHED_TRY(expr)                               \
  do {                                                   \
    if (auto hetsched_try_r_ = (expr); !hetsched_try_r_) \
      return std::move(hetsched_try_r_).error();         \
  } while (false)
