// SPDX-License-Identifier: MIT
// Private helpers shared by the workload readers (not installed): line iteration, field
// splitting, header lookup, number parsing and "<source>:<line>: field '<name>': <problem>" errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload::detail {

/// Largest GPU count one trace job may ask for; larger values are rejected as out of range.
inline constexpr std::int64_t max_job_gpus = 100'000;
/// Largest time a reader accepts, in milliseconds (about 317 years).
inline constexpr std::int64_t max_time_ms = max_trace_time_ms;

/// Whether the lines of a format end with a line break, the last one included. When they do, a
/// text whose last line has none was cut inside that line, and the readers say so.
enum class last_line_break : std::uint8_t {
  required,  ///< Every published file ends its last line with one (all traces and tables).
  optional,  ///< Published files end without one (the Tiresias cluster specs): not checked.
};

/// One non-blank line: its 1-based number and its text without the line break or a trailing '\r'.
struct text_line {
  std::size_t number = 0;
  std::string_view text;
};

/// Iterates the non-blank lines of a text. A UTF-8 byte-order mark at the start is skipped.
class line_cursor {
 public:
  explicit line_cursor(std::string_view text) noexcept;
  /// Stores the next non-blank line in `out`; returns false at the end of the text.
  bool next(text_line& out) noexcept;
  /// Returns true if the line next() returned last ends the text without a line break.
  [[nodiscard]] bool at_unterminated_end() const noexcept { return unterminated_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t number_ = 0;
  bool unterminated_ = false;
};

/// Splits `line` at every `delimiter` into `out` (cleared first), trimming spaces around fields.
/// Quoting is not supported: none of the trace formats quote.
void split_fields(std::string_view line, char delimiter, std::vector<std::string_view>& out);

/// Returns the error "<source>:<line>: field '<field>': <problem>" (invalid_argument).
[[nodiscard]] error field_error(std::string_view source, std::size_t line, std::string_view field,
                                std::string_view problem);

/// Returns the error for a last line without a line break in a format whose lines all end with
/// one: "<source>:<line>: field '<last field>': '<its text>' ends the text without a line break:
/// the file looks cut inside this line". `names` name the fields by position ("#N" beyond).
[[nodiscard]] error cut_line_error(std::string_view source, std::size_t line,
                                   std::span<const std::string_view> fields,
                                   std::span<const std::string_view> names);

/// Returns the error for a table or trace without data rows, at the line after the header:
/// "<source>:<line>: field '<field>': no <what> after the header (an empty table, or a file cut
/// after its header)".
[[nodiscard]] error no_rows_error(std::string_view source, std::size_t line, std::string_view field,
                                  std::string_view what);

/// Parses a base-10 integer ([+-]digits). Returns false if `s` is not one or does not fit.
[[nodiscard]] bool parse_int64(std::string_view s, std::int64_t& out) noexcept;

/// Parses a decimal number ([+-]digits[.digits][e[+-]digits], or .digits) and returns it times
/// 10^scale_digits rounded half away from zero, exactly. Returns false if `s` is not such a number
/// or the result does not fit in int64. Digits beyond the 36th significant one are ignored.
[[nodiscard]] bool parse_scaled_decimal(std::string_view s, int scale_digits,
                                        std::int64_t& out) noexcept;

/// Parses a finite floating-point number. Returns false otherwise.
[[nodiscard]] bool parse_real(std::string_view s, double& out) noexcept;

/// The fields of one row plus what an error message needs (source, line, column names).
class row_view {
 public:
  row_view(std::string_view source, std::size_t line, std::span<const std::string_view> fields,
           std::span<const std::string_view> names) noexcept
      : source_(source), line_(line), fields_(fields), names_(names) {}

  [[nodiscard]] std::size_t line() const noexcept { return line_; }
  /// Returns field `i` (trimmed text).
  [[nodiscard]] std::string_view text(std::size_t i) const noexcept { return fields_[i]; }
  /// Returns an error about field `i`.
  [[nodiscard]] error fail(std::size_t i, std::string_view problem) const;
  /// Returns field `i` as a non-empty string.
  [[nodiscard]] result<std::string_view> nonempty(std::size_t i) const;
  /// Returns field `i` as an integer in [lo, hi].
  [[nodiscard]] result<std::int64_t> integer(std::size_t i, std::int64_t lo, std::int64_t hi) const;
  /// Returns field `i`, a decimal number of seconds, as milliseconds in [lo, hi].
  [[nodiscard]] result<std::int64_t> seconds_as_ms(std::size_t i, std::int64_t lo,
                                                   std::int64_t hi) const;
  /// Returns field `i` as a finite real number.
  [[nodiscard]] result<double> real(std::size_t i) const;

 private:
  std::string_view source_;
  std::size_t line_;
  std::span<const std::string_view> fields_;
  std::span<const std::string_view> names_;
};

/// Maps required column names to their positions in a header row. Names are compared exactly;
/// extra columns are ignored. Errors name the missing or duplicated column.
[[nodiscard]] result<std::vector<std::size_t>> find_columns(
    std::string_view source, const text_line& header, std::span<const std::string_view> fields,
    std::span<const std::string_view> required);

/// Checks that a data row has exactly `expected` fields (the header's count); the error names the
/// first missing column or the first extra field ("#N").
[[nodiscard]] result<void> check_field_count(std::string_view source, std::size_t line,
                                             std::span<const std::string_view> fields,
                                             std::span<const std::string_view> names);

/// Reads a comma-separated table with a header row: the header is matched against required
/// column names (in any order, extra columns ignored) and every data row must have exactly the
/// header's field count.
class csv_reader {
 public:
  /// Reads the header line of `text`; `text` and `required` must outlive the reader. Errors: no
  /// header (reported at line 1 for the first required column), a missing or duplicated
  /// required column, and with `ending` required a header that ends the text without a line
  /// break (a file cut inside its header).
  [[nodiscard]] static result<csv_reader> open(std::string_view text, std::string_view source,
                                               std::span<const std::string_view> required,
                                               last_line_break ending = last_line_break::required);
  /// Moves to the next data row: true if there is one, false at the end, or an error when the row
  /// has too few or too many fields or (last_line_break::required) is the last line of the text
  /// and has no line break (cut_line_error).
  [[nodiscard]] result<bool> next();
  /// Returns the number of the header line.
  [[nodiscard]] std::size_t header_line() const noexcept { return header_line_; }
  /// Returns no_rows_error() for this table at the line after the header, naming required column
  /// `r` (call it when next() found no data row).
  [[nodiscard]] error no_rows(std::size_t r, std::string_view what) const;
  /// Returns the current row (valid until the next call to next()).
  [[nodiscard]] row_view row() const noexcept {
    return row_view(source_, line_.number, fields_, header_);
  }
  /// Returns the position of required column `r` in the rows.
  [[nodiscard]] std::size_t column(std::size_t r) const noexcept { return columns_[r]; }
  [[nodiscard]] std::string_view source() const noexcept { return source_; }
  /// Returns the position of the column named `name`, or nullopt if the header lacks it.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept;

 private:
  csv_reader(std::string_view text, std::string_view source, last_line_break ending) noexcept
      : source_(source), lines_(text), ending_(ending) {}
  std::string_view source_;
  line_cursor lines_;
  last_line_break ending_;
  std::size_t header_line_ = 0;
  std::span<const std::string_view> required_;
  text_line line_;
  std::vector<std::string_view> header_;
  std::vector<std::string_view> fields_;
  std::vector<std::size_t> columns_;
};

/// Calls `f(row)`, which returns result<void>, for each data row of `reader`; stops at the first
/// error, the reader's or `f`'s.
template <typename F>
[[nodiscard]] result<void> for_each_row(csv_reader& reader, F&& f) {
  while (true) {
    auto more = reader.next();
    if (!more) return std::move(more).error();
    if (!*more) return ok();
    HETSCHED_TRY(f(reader.row()));
  }
}

/// Remembers job names and reports the second use of one.
class unique_names {
 public:
  /// Records `name` seen on `line`; on a repeat returns an error naming both lines.
  [[nodiscard]] result<void> add(const row_view& row, std::size_t field, std::string_view name);
  /// Returns field `field` of `row`, which must be non-empty and not seen before, and records it.
  [[nodiscard]] result<std::string_view> take(const row_view& row, std::size_t field);

 private:
  std::unordered_map<std::string_view, std::size_t> lines_;
};

/// Returns a job of `gpus` one-GPU tasks, the mapping every reader uses for a job of N GPUs.
[[nodiscard]] trace_job gpu_job(std::string_view name, std::string_view tenant,
                                std::int64_t submit_ms, std::int64_t duration_ms, std::int64_t gpus,
                                std::string_view model, std::int64_t work_units);

/// Sorts `jobs` by submit time, keeping source order for ties.
void sort_by_submit(trace& jobs);

/// Returns the final path component of `source` without its extension ("a/b/0e4a51.trace" ->
/// "0e4a51"); empty if nothing remains.
[[nodiscard]] std::string_view source_stem(std::string_view source) noexcept;

}  // namespace hetsched::workload::detail
