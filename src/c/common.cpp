// SPDX-License-Identifier: MIT
// C API: status names, the thread-local last error and the version.
#include <string>
#include <utility>

#include <hetsched/c/common.h>
#include <hetsched/version.hpp>

#include "c_internal.hpp"

namespace hetsched::capi {
namespace {

std::string& last_error() noexcept {
  thread_local std::string message;
  return message;
}

const char*& current_function() noexcept {
  thread_local const char* function = "hs_api";
  return function;
}

}  // namespace

hs_status fail(hs_status status, std::string message) {
  last_error() = std::move(message);
  return status;
}

void clear_error() noexcept { last_error().clear(); }

const char* last_error_c_str() noexcept { return last_error().c_str(); }

hs_status fail(const error& e, hs_status invalid_as) {
  hs_status status = HS_INTERNAL;
  switch (e.code) {
    case errc::invalid_argument: status = invalid_as; break;
    case errc::not_found: status = HS_NOT_FOUND; break;
    case errc::already_exists: status = HS_ALREADY_EXISTS; break;
    case errc::failed_precondition: status = HS_FAILED_PRECONDITION; break;
    case errc::out_of_range: status = HS_OUT_OF_RANGE; break;
    case errc::internal: status = HS_INTERNAL; break;
  }
  return fail(status, e.message);
}

void set_function(const char* function) noexcept { current_function() = function; }

const char* current_function_name() noexcept { return current_function(); }

hs_status null_argument(const char* name) {
  std::string message(current_function());
  message += ": argument '";
  message += name;
  message += "' is NULL";
  return fail(HS_INVALID_ARGUMENT, std::move(message));
}

}  // namespace hetsched::capi

extern "C" {

HS_API const char* hs_status_name(hs_status status) {
  switch (status) {
    case HS_OK: return "HS_OK";
    case HS_INVALID_ARGUMENT: return "HS_INVALID_ARGUMENT";
    case HS_NOT_FOUND: return "HS_NOT_FOUND";
    case HS_ALREADY_EXISTS: return "HS_ALREADY_EXISTS";
    case HS_FAILED_PRECONDITION: return "HS_FAILED_PRECONDITION";
    case HS_OUT_OF_RANGE: return "HS_OUT_OF_RANGE";
    case HS_PARSE_ERROR: return "HS_PARSE_ERROR";
    case HS_CONFLICT: return "HS_CONFLICT";
    case HS_UNSUPPORTED: return "HS_UNSUPPORTED";
    case HS_OUT_OF_MEMORY: return "HS_OUT_OF_MEMORY";
    case HS_INTERNAL: return "HS_INTERNAL";
    case HS_INVALID_HANDLE: return "HS_INVALID_HANDLE";
  }
  return "HS_UNKNOWN";
}

HS_API const char* hs_last_error(void) { return hetsched::capi::last_error_c_str(); }

HS_API const char* hs_version(void) { return hetsched::version(); }

HS_API int32_t hs_api_version(void) { return HS_API_VERSION; }

}  // extern "C"
