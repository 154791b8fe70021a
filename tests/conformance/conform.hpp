// SPDX-License-Identifier: MIT
// hetsched-conform: runs recorded conformance vectors (../shared/vectors, DESIGN.md §6).
//
// Each vector family has one runner, in its own conform_<family>.cpp, that reads the parsed file
// and reports every case through the reporter: passed, failed (with what differed) or skipped
// (a kind hetsched does not support yet; never counted as passed). main.cpp detects the family,
// prints one line per case and the closing line "N passed, N failed, N skipped".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/detail/json.hpp>

namespace hetsched::conform {

/// Collects case outcomes and prints one line per case.
class reporter {
 public:
  void pass(std::string_view id, std::string_view detail = {});
  void fail(std::string_view id, std::string_view detail);
  void skip(std::string_view id, std::string_view reason);

  [[nodiscard]] std::size_t passed() const noexcept { return passed_; }
  [[nodiscard]] std::size_t failed() const noexcept { return failed_; }
  [[nodiscard]] std::size_t skipped() const noexcept { return skipped_; }

 private:
  std::size_t passed_ = 0;
  std::size_t failed_ = 0;
  std::size_t skipped_ = 0;
};

/// One element of a vector file's case list.
struct vector_case {
  const detail::json_value* json = nullptr;
  std::string name;  ///< Its "id", else "<key>[<index>]".
  std::string kind;  ///< Its "kind", else empty.
};

/// Returns the elements of doc[key] in file order; if there is no such array, reports a failure
/// named `family` and returns nothing.
[[nodiscard]] std::vector<vector_case> list_cases(const detail::json_value& doc,
                                                  std::string_view key, std::string_view family,
                                                  reporter& out);

/// The vector families of ../shared/vectors.
enum class family { gpuallocator, drf_capacity, hived, fgd, unknown };

/// Returns the family of a parsed vector file, from its "schema"/"family" tags or its shape.
[[nodiscard]] family detect_family(const detail::json_value& doc);
[[nodiscard]] std::string_view to_string(family f) noexcept;

// One runner per family (conform_<family>.cpp). Each reports every case of the file.
void run_gpuallocator(const detail::json_value& doc, reporter& out);
void run_drf_capacity(const detail::json_value& doc, reporter& out);
void run_hived(const detail::json_value& doc, reporter& out);
void run_fgd(const detail::json_value& doc, reporter& out);

// The capacity-queue kinds of the drf_capacity family, one file per reference system; each
// reports its case through `out` (pass, fail with what differed, or skip).
void run_kueue_case(const vector_case& c, reporter& out);
void run_yarn_case(const vector_case& c, reporter& out);
/// The yarn_user_limit kind (conform_yarn_user_limit.cpp), dispatched from run_yarn_case.
void run_yarn_user_limit_case(const vector_case& c, reporter& out);

}  // namespace hetsched::conform
