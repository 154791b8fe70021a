/* SPDX-License-Identifier: MIT */
/* A tiny assertion kit for the C API tests: CHECK(cond), CHECK_OK(call), CHECK_STATUS(s, call),
 * CHECK_STR(a, b), CHECK_CONTAINS(haystack, needle), and TEST_MAIN's failure count. */
#ifndef HETSCHED_TESTS_C_TEST_H
#define HETSCHED_TESTS_C_TEST_H

#include <stdio.h>
#include <string.h>

#include <hetsched/c/hetsched.h>

static int c_test_failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++c_test_failures;                                                       \
    }                                                                          \
  } while (0)

#define CHECK_STATUS(expected, call)                                                          \
  do {                                                                                        \
    hs_status c_test_s_ = (call);                                                             \
    if (c_test_s_ != (expected)) {                                                            \
      fprintf(stderr, "%s:%d: %s returned %s (%s), expected %s\n", __FILE__, __LINE__, #call, \
              hs_status_name(c_test_s_), hs_last_error(), #expected);                         \
      ++c_test_failures;                                                                      \
    }                                                                                         \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(HS_OK, call)

#define CHECK_STR(a, b)                                                                \
  do {                                                                                 \
    const char* c_test_a_ = (a);                                                       \
    const char* c_test_b_ = (b);                                                       \
    if (c_test_a_ == NULL || c_test_b_ == NULL || strcmp(c_test_a_, c_test_b_) != 0) { \
      fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__,                 \
              c_test_a_ ? c_test_a_ : "(null)", c_test_b_ ? c_test_b_ : "(null)");     \
      ++c_test_failures;                                                               \
    }                                                                                  \
  } while (0)

#define CHECK_CONTAINS(haystack, needle)                                             \
  do {                                                                               \
    const char* c_test_h_ = (haystack);                                              \
    if (c_test_h_ == NULL || strstr(c_test_h_, (needle)) == NULL) {                  \
      fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
              c_test_h_ ? c_test_h_ : "(null)", (needle));                           \
      ++c_test_failures;                                                             \
    }                                                                                \
  } while (0)

/* Runs one test function and reports it. */
#define RUN(test)                                                                           \
  do {                                                                                      \
    int c_test_before_ = c_test_failures;                                                   \
    test();                                                                                 \
    fprintf(stderr, "%s %s\n", c_test_failures == c_test_before_ ? "PASS" : "FAIL", #test); \
  } while (0)

/* Ends main(): non-zero exit on any failure. */
#define TEST_RESULT() (c_test_failures == 0 ? 0 : 1)

#endif /* HETSCHED_TESTS_C_TEST_H */
