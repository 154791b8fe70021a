// SPDX-License-Identifier: MIT
// hetsched-conform: runs recorded conformance vectors (../shared/vectors, DESIGN.md §6).
//
// Each vector family has one runner, in its own conform_<family>.cpp, that reads the parsed file
// and reports every case through the reporter: passed, failed (with what differed) or skipped
// (a kind hetsched does not support yet; never counted as passed). main.cpp detects the family,
// prints one line per case and the closing line "N passed, N failed, N skipped".
//
// Runners read the file through vector_value (vector_value.hpp): a missing optional field means
// nothing to check, a missing required field or a field of the wrong type fails the case naming
// its JSON path, an unknown op or kind is reported as SKIP or FAIL naming it; the runner never
// crashes on a well-formed JSON file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "jsonio/json.hpp"
#include "vector_value.hpp"

namespace hetsched::conform {

/// Collects case outcomes and prints one line per case (unless constructed quiet).
class reporter {
 public:
  explicit reporter(bool print = true) noexcept : print_(print) {}

  void pass(std::string_view id, std::string_view detail = {});
  void fail(std::string_view id, std::string_view detail);
  void skip(std::string_view id, std::string_view reason);
  /// Prints "# <text>" (a comment line, not a case).
  void note(std::string_view text) const;

  [[nodiscard]] std::size_t passed() const noexcept { return passed_; }
  [[nodiscard]] std::size_t failed() const noexcept { return failed_; }
  [[nodiscard]] std::size_t skipped() const noexcept { return skipped_; }

 private:
  bool print_ = true;
  std::size_t passed_ = 0;
  std::size_t failed_ = 0;
  std::size_t skipped_ = 0;
};

/// One element of a vector file's case list.
struct vector_case {
  vector_value json;  ///< The case, at its path ("cases[3]").
  std::string name;   ///< Its "id", else "<key>[<index>]".
  std::string kind;   ///< Its "kind", else empty.
};

/// Returns the elements of doc[key] in file order; if there is no such array, reports a failure
/// named `family` and returns nothing.
[[nodiscard]] std::vector<vector_case> list_cases(const vector_value& doc, std::string_view key,
                                                  std::string_view family, reporter& out);

/// Calls `run()`. A vector_error it throws (a required field missing, a field of the wrong type)
/// becomes the failure of case `id` with the error's path and problem; returns false then.
template <typename F>
bool run_guarded(reporter& out, std::string_view id, F&& run) {
  try {
    run();
    return true;
  } catch (const vector_error& e) {
    out.fail(id, e.what());
    return false;
  }
}

/// The vector families of ../shared/vectors.
enum class family { gpuallocator, drf_capacity, hived, fgd, unknown };

/// Returns the family of a parsed vector file, from its "schema"/"family" tags or its shape.
[[nodiscard]] family detect_family(const jsonio::json& doc);
[[nodiscard]] std::string_view to_string(family f) noexcept;

/// Parses the vector file text `text`, detects its family, notes "<name> (<family>)" and runs
/// every case of it through `out`. Returns the family, or invalid_argument when the text is not
/// JSON ("line L, column C: ...") or its family is unknown. Cases of a malformed file fail
/// (naming the JSON path); a vector_error that escapes a runner fails the pseudo-case named after
/// the family.
[[nodiscard]] result<family> run_vector_text(std::string_view text, std::string_view name,
                                             reporter& out);

// One runner per family (conform_<family>.cpp). Each reports every case of the file.
// A malformed case is reported as failed (run_guarded).
void run_gpuallocator(const vector_value& doc, reporter& out);
void run_drf_capacity(const vector_value& doc, reporter& out);
void run_hived(const vector_value& doc, reporter& out);
void run_fgd(const vector_value& doc, reporter& out);

// The capacity-queue kinds of the drf_capacity family, one file per reference system; each
// reports its case through `out` (pass, fail with what differed, or skip).
void run_kueue_case(const vector_case& c, reporter& out);
void run_yarn_case(const vector_case& c, reporter& out);
/// The yarn_user_limit kind (conform_yarn_user_limit.cpp), dispatched from run_yarn_case.
void run_yarn_user_limit_case(const vector_case& c, reporter& out);

}  // namespace hetsched::conform
