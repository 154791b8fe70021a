/* SPDX-License-Identifier: MIT */
/* hetsched C API: status codes, errors, version and the export macro shared by every header.
 *
 * Every fallible function returns hs_status. HS_OK means success; any other code means the call
 * failed and changed no object, and hs_last_error() returns a message (thread-local) that names
 * the offending argument or item. No C++ exception ever crosses the C boundary. Plain C11; safe
 * to include from C++. See docs/c_api.md for the lifetime and ABI rules.
 *
 * Handles are checked on entry against a registry of live handles: a freed handle, a handle of
 * another type or a pointer the library never returned gives HS_INVALID_HANDLE (never undefined
 * behaviour, never a read of freed memory); hs_*_free of such a pointer does nothing and sets
 * hs_last_error(). Functions returning counts return 0 for it. See docs/c_api.md "Handle safety"
 * for the limits (an address reused by a new handle of the same type long after the free). */
#ifndef HETSCHED_C_COMMON_H
#define HETSCHED_C_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The API version: bumped when functions or struct fields are added (never removed). */
#define HS_API_VERSION 4

#if defined(_WIN32)
#  if defined(HETSCHED_C_BUILDING)
#    define HS_API __declspec(dllexport)
#  else
#    define HS_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define HS_API __attribute__((visibility("default")))
#else
#  define HS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Result of every fallible call. Values are stable; new codes may be added at the end. */
typedef enum hs_status {
  HS_OK = 0,
  HS_INVALID_ARGUMENT = 1,    /* NULL pointer, bad value, malformed request or spec */
  HS_NOT_FOUND = 2,           /* a name or id refers to nothing (unknown VC, queue, node, job) */
  HS_ALREADY_EXISTS = 3,      /* a name or id is defined twice */
  HS_FAILED_PRECONDITION = 4, /* well formed, but the current state forbids it */
  HS_OUT_OF_RANGE = 5,        /* a value outside a documented limit, or an index past the end */
  HS_PARSE_ERROR = 6,         /* topology or configuration text could not be parsed */
  HS_CONFLICT = 7,            /* a decision is stale: its resources are no longer free */
  HS_UNSUPPORTED = 8,         /* recognised but not supported by this build (hwloc XML) */
  HS_OUT_OF_MEMORY = 9,       /* allocation failed */
  HS_INTERNAL = 10,           /* a bug in hetsched; please report the message */
  HS_INVALID_HANDLE = 11      /* a handle that is freed, of another type, or not from hetsched */
} hs_status;

/* Returns the upper-case name of `status`, e.g. "HS_NOT_FOUND"; never NULL. */
HS_API const char* hs_status_name(hs_status status);

/* Returns the message of the last failed call on this thread, or "" if the last call succeeded.
 * The string is owned by the library and valid until the next hs_* call on this thread. */
HS_API const char* hs_last_error(void);

/* Returns the library version, e.g. "0.1.0". Static storage. */
HS_API const char* hs_version(void);

/* Returns the HS_API_VERSION the library was built with. */
HS_API int32_t hs_api_version(void);

#ifdef __cplusplus
}
#endif

#endif /* HETSCHED_C_COMMON_H */
