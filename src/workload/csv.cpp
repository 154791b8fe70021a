// SPDX-License-Identifier: MIT
// The workload readers' shared text helpers (see csv.hpp).
#include "workload/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "detail/text.hpp"

namespace hetsched::workload::detail {
namespace {

__extension__ typedef unsigned __int128 u128;

constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  out += hetsched::detail::shown(s);
  out += '\'';
  return out;
}

}  // namespace

line_cursor::line_cursor(std::string_view text) noexcept : text_(text) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

bool line_cursor::next(text_line& out) noexcept {
  while (pos_ < text_.size()) {
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    std::string_view line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++number_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    bool blank = true;
    for (const char c : line) blank = blank && (is_blank(c) || c == '\r');
    if (blank) continue;
    out = text_line{number_, line};
    unterminated_ = end == text_.size();
    return true;
  }
  return false;
}

void split_fields(std::string_view line, char delimiter, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t end = line.find(delimiter, start);
    if (end == std::string_view::npos) {
      out.push_back(trim(line.substr(start)));
      return;
    }
    out.push_back(trim(line.substr(start, end - start)));
    start = end + 1;
  }
}

error field_error(std::string_view source, std::size_t line, std::string_view field,
                  std::string_view problem) {
  std::string message(source);
  message += ':';
  message += std::to_string(line);
  message += ": field '";
  message += hetsched::detail::shown(field);
  message += "': ";
  message += problem;
  return error{errc::invalid_argument, std::move(message)};
}

error cut_line_error(std::string_view source, std::size_t line,
                     std::span<const std::string_view> fields,
                     std::span<const std::string_view> names) {
  const std::size_t last = fields.empty() ? 0 : fields.size() - 1;
  // Built by append: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "#" + to_string(...).
  std::string field = "#";
  if (last < names.size())
    field = names[last];
  else
    field += std::to_string(last + 1);
  const std::string_view text = fields.empty() ? std::string_view() : fields[last];
  return field_error(source, line, field,
                     quoted(text) +
                         " ends the text without a line break: the file looks cut inside this "
                         "line (every line of this format ends with a line break)");
}

error no_rows_error(std::string_view source, std::size_t line, std::string_view field,
                    std::string_view what) {
  return field_error(source, line, field,
                     std::string("no ") + std::string(what) +
                         " after the header (an empty table, or a file cut after its header)");
}

bool parse_int64(std::string_view s, std::int64_t& out) noexcept {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_scaled_decimal(std::string_view s, int scale_digits, std::int64_t& out) noexcept {
  constexpr int max_kept_digits = 36;
  bool negative = false;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  u128 mantissa = 0;
  int kept = 0;
  long exponent = 0;  // value = mantissa * 10^exponent
  bool any_digit = false;
  auto take = [&](char c, bool fractional) {
    any_digit = true;
    if (kept == 0 && c == '0') {
      if (fractional) --exponent;
      return;
    }
    if (kept < max_kept_digits) {
      mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      ++kept;
      if (fractional) --exponent;
    } else if (!fractional) {
      ++exponent;
    }
  };
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') take(s[i++], false);
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') take(s[i++], true);
  }
  if (!any_digit) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
    if (i == s.size()) return false;
    long e = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (e < 100'000) e = e * 10 + (s[i] - '0');
      ++i;
    }
    exponent += exp_negative ? -e : e;
  }
  if (i != s.size()) return false;
  exponent += scale_digits;
  constexpr auto limit = static_cast<u128>(std::numeric_limits<std::int64_t>::max());
  u128 value = 0;
  if (mantissa == 0) {
    value = 0;
  } else if (exponent >= 0) {
    value = mantissa;
    for (long k = 0; k < exponent; ++k) {
      if (value > limit) return false;
      value *= 10;
    }
  } else if (exponent < -38) {
    value = 0;  // mantissa < 10^36, so the quotient is below 0.01
  } else {
    u128 divisor = 1;
    for (long k = 0; k < -exponent; ++k) divisor *= 10;
    value = mantissa / divisor;
    if (2 * (mantissa % divisor) >= divisor) ++value;
  }
  if (value > limit) return false;
  const auto v = static_cast<std::int64_t>(value);
  out = negative ? -v : v;
  return true;
}

bool parse_real(std::string_view s, double& out) noexcept {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out);
}

error row_view::fail(std::size_t i, std::string_view problem) const {
  return field_error(source_, line_, i < names_.size() ? names_[i] : std::string_view("?"),
                     problem);
}

result<std::string_view> row_view::nonempty(std::size_t i) const {
  if (fields_[i].empty()) return fail(i, "is empty");
  return fields_[i];
}

result<std::int64_t> row_view::integer(std::size_t i, std::int64_t lo, std::int64_t hi) const {
  std::int64_t v = 0;
  if (!parse_int64(fields_[i], v)) return fail(i, quoted(fields_[i]) + " is not an integer");
  if (v < lo || v > hi) {
    return fail(i, std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
  }
  return v;
}

result<std::int64_t> row_view::seconds_as_ms(std::size_t i, std::int64_t lo,
                                             std::int64_t hi) const {
  std::int64_t v = 0;
  if (!parse_scaled_decimal(fields_[i], 3, v)) {
    return fail(i, quoted(fields_[i]) + " is not a number of seconds");
  }
  if (v < lo || v > hi) {
    return fail(i, quoted(fields_[i]) + " s is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "] ms");
  }
  return v;
}

result<double> row_view::real(std::size_t i) const {
  double v = 0;
  if (!parse_real(fields_[i], v)) return fail(i, quoted(fields_[i]) + " is not a finite number");
  return v;
}

result<std::vector<std::size_t>> find_columns(std::string_view source, const text_line& header,
                                              std::span<const std::string_view> fields,
                                              std::span<const std::string_view> required) {
  std::vector<std::size_t> at(required.size(), fields.size());
  for (std::size_t r = 0; r < required.size(); ++r) {
    for (std::size_t f = 0; f < fields.size(); ++f) {
      if (fields[f] != required[r]) continue;
      if (at[r] != fields.size()) {
        return field_error(source, header.number, required[r], "column appears twice");
      }
      at[r] = f;
    }
    if (at[r] == fields.size()) {
      return field_error(source, header.number, required[r], "column missing from the header");
    }
  }
  return at;
}

result<void> check_field_count(std::string_view source, std::size_t line,
                               std::span<const std::string_view> fields,
                               std::span<const std::string_view> names) {
  if (fields.size() < names.size()) {
    return field_error(source, line, names[fields.size()],
                       std::string("missing (the line has ") + std::to_string(fields.size()) +
                           " of " + std::to_string(names.size()) + " fields)");
  }
  if (fields.size() > names.size()) {
    return field_error(
        source, line, std::string("#") + std::to_string(names.size() + 1),
        std::string("extra field (the header has ") + std::to_string(names.size()) + " columns)");
  }
  return ok();
}

result<csv_reader> csv_reader::open(std::string_view text, std::string_view source,
                                    std::span<const std::string_view> required,
                                    last_line_break ending) {
  csv_reader reader(text, source, ending);
  text_line header;
  if (!reader.lines_.next(header)) {
    return field_error(source, 1, required.empty() ? std::string_view("header") : required[0],
                       "no header line");
  }
  split_fields(header.text, ',', reader.header_);
  if (ending == last_line_break::required && reader.lines_.at_unterminated_end()) {
    return cut_line_error(source, header.number, reader.header_, reader.header_);
  }
  auto columns = find_columns(source, header, reader.header_, required);
  if (!columns) return std::move(columns).error();
  reader.columns_ = std::move(*columns);
  reader.header_line_ = header.number;
  reader.required_ = required;
  return reader;
}

result<bool> csv_reader::next() {
  if (!lines_.next(line_)) return false;
  split_fields(line_.text, ',', fields_);
  if (ending_ == last_line_break::required && lines_.at_unterminated_end()) {
    return cut_line_error(source_, line_.number, fields_, header_);
  }
  HETSCHED_TRY(check_field_count(source_, line_.number, fields_, header_));
  return true;
}

error csv_reader::no_rows(std::size_t r, std::string_view what) const {
  return no_rows_error(source_, header_line_ + 1, r < required_.size() ? required_[r] : "row",
                       what);
}

std::optional<std::size_t> csv_reader::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

result<void> unique_names::add(const row_view& row, std::size_t field, std::string_view name) {
  const auto [it, inserted] = lines_.try_emplace(name, row.line());
  if (!inserted) {
    return row.fail(
        field, quoted(name) + " is used twice (first on line " + std::to_string(it->second) + ")");
  }
  return ok();
}

result<std::string_view> unique_names::take(const row_view& row, std::size_t field) {
  auto name = row.nonempty(field);
  if (!name) return std::move(name).error();
  HETSCHED_TRY(add(row, field, *name));
  return *name;
}

trace_job gpu_job(std::string_view name, std::string_view tenant, std::int64_t submit_ms,
                  std::int64_t duration_ms, std::int64_t gpus, std::string_view model,
                  std::int64_t work_units) {
  trace_job job;
  job.name = std::string(name);
  job.tenant = std::string(tenant);
  job.submit_ms = submit_ms;
  job.duration_ms = duration_ms;
  job.tasks = static_cast<std::uint32_t>(gpus);
  job.gpus_per_task = 1;
  job.gpu_milli_per_task = 1000;
  job.model = std::string(model);
  job.work_units = work_units;
  return job;
}

void sort_by_submit(trace& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const trace_job& a, const trace_job& b) {
    return a.submit_ms < b.submit_ms;
  });
}

std::string_view source_stem(std::string_view source) noexcept {
  const std::size_t slash = source.find_last_of("/\\");
  if (slash != std::string_view::npos) source.remove_prefix(slash + 1);
  const std::size_t dot = source.rfind('.');
  if (dot != std::string_view::npos && dot > 0) source = source.substr(0, dot);
  return source;
}

}  // namespace hetsched::workload::detail
