// SPDX-License-Identifier: MIT
// HETSCHED_ASSERT: checks programming errors (bad ids, broken preconditions) in debug builds.
//
// Active unless NDEBUG is defined. A failure calls std::abort() from assert_fail, whose
// arguments (file, line, condition, message) a debugger or core dump shows; the core does no I/O,
// so nothing is printed. Bad user input never reaches an assertion: it gets a result<T> error.
#pragma once

#include <cstdlib>

namespace hetsched {

[[noreturn]] inline void assert_fail(const char* file, int line, const char* cond,
                                     const char* msg) noexcept {
  // Kept in volatile locals so that they survive optimisation and show up in a core dump.
  const char* volatile where = file;
  volatile int at = line;
  const char* volatile what = cond;
  const char* volatile why = msg;
  static_cast<void>(where);
  static_cast<void>(at);
  static_cast<void>(what);
  static_cast<void>(why);
  std::abort();
}

}  // namespace hetsched

#ifdef NDEBUG
#  define HETSCHED_ASSERT(cond, msg) static_cast<void>(0)
#else
#  define HETSCHED_ASSERT(cond, msg) \
    ((cond) ? static_cast<void>(0) : ::hetsched::assert_fail(__FILE__, __LINE__, #cond, msg))
#endif
