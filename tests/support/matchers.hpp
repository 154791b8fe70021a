// SPDX-License-Identifier: MIT
// gMock matchers for hetsched::result: IsOk() and HasErrc(errc::x).
#pragma once

#include <gmock/gmock.h>

#include <string>

#include <hetsched/model/result.hpp>

namespace hetsched::testing {

/// Matches a result that holds a value; prints the error otherwise.
MATCHER(IsOk, "is ok") {
  if (arg.has_value()) return true;
  *result_listener << "error " << to_string(arg.error().code) << ": " << arg.error().message;
  return false;
}

/// Matches a result that holds an error with code `code`.
MATCHER_P(HasErrc, code, "has error code " + std::string(to_string(code))) {
  if (arg.has_value()) {
    *result_listener << "holds a value";
    return false;
  }
  *result_listener << "error " << to_string(arg.error().code) << ": " << arg.error().message;
  return arg.error().code == code;
}

/// Matches a result holding an error whose message contains `text`.
MATCHER_P(ErrorContains, text, "error message contains \"" + std::string(text) + "\"") {
  if (arg.has_value()) {
    *result_listener << "holds a value";
    return false;
  }
  *result_listener << "error " << to_string(arg.error().code) << ": " << arg.error().message;
  return arg.error().message.find(text) != std::string::npos;
}

}  // namespace hetsched::testing
