// SPDX-License-Identifier: MIT
// The harness of the concurrent-reader tests (tests/concurrency): ask one shared object the same
// const questions from several threads at once and expect every answer to equal the
// single-threaded one. DESIGN.md §2: "const methods are safe to call concurrently"; the tests run
// under ThreadSanitizer in CI (scripts/test.sh, step tsan), which reports any data race a const
// method has (a lazily filled cache, a shared scratch buffer) even when the answers agree.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <latch>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <hetsched/model/result.hpp>

namespace hetsched::testing {

/// Threads asking at once, and rounds each: enough for TSan to see every const path overlap,
/// small enough for the TSan step's budget (each question runs 1 + threads * rounds times).
inline constexpr int reader_threads = 4;
inline constexpr int reader_rounds = 3;

/// Returns the value of `r`, or nullopt for an error (an answer that compares unequal to any
/// successful reference).
template <typename T>
[[nodiscard]] std::optional<T> value_of(result<T> r) {
  if (!r) return std::nullopt;
  return std::move(*r);
}

/// Returns ask()'s answer on this thread after calling ask() reader_rounds times on each of
/// reader_threads threads, released together, and expecting each of their answers to equal it.
/// `ask` must only read the shared object (its const API) and return a value with operator==.
template <typename Ask>
[[nodiscard]] auto same_answers_concurrently(const Ask& ask) -> decltype(ask()) {
  const auto reference = ask();
  std::latch start(reader_threads);
  std::vector<int> mismatches(reader_threads, 0);
  std::vector<std::thread> threads;
  threads.reserve(reader_threads);
  for (int t = 0; t < reader_threads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int round = 0; round < reader_rounds; ++round) {
        if (!(ask() == reference)) ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < reader_threads; ++t) {
    EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0)
        << "thread " << t << " got answers that differ from the single-threaded one";
  }
  return reference;
}

}  // namespace hetsched::testing
