// SPDX-License-Identifier: MIT
// parse_gavel_trace() and parse_gavel_throughputs(): Gavel's job traces and throughput tables.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include <hetsched/workload/gavel.hpp>

#include "detail/text.hpp"
#include "jsonio/json.hpp"
#include "workload/csv.hpp"

namespace hetsched::workload {
namespace {

using detail::row_view;

// Field positions of one layout; `none` marks a field the layout lacks.
constexpr std::size_t none = 99;
struct layout {
  std::array<std::string_view, 10> names;
  std::size_t count;
  std::size_t job_type, num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor;
  std::size_t priority_weight, slo;
};

constexpr layout msr_layout{{"job_type", "command", "num_steps_arg", "needs_data_dir",
                             "total_steps", "arrival_time", "scale_factor"},
                            7,
                            0,
                            2,
                            3,
                            4,
                            5,
                            6,
                            none,
                            none};
constexpr layout nine_layout{
    {"job_type", "command", "num_steps_arg", "needs_data_dir", "total_steps", "scale_factor",
     "priority_weight", "SLO", "arrival_time"},
    9,
    0,
    2,
    3,
    4,
    8,
    5,
    6,
    7};
constexpr layout ten_layout{
    {"job_type", "command", "working_directory", "num_steps_arg", "needs_data_dir", "total_steps",
     "scale_factor", "priority_weight", "SLO", "arrival_time"},
    10,
    0,
    3,
    4,
    5,
    9,
    6,
    7,
    8};

using rate_map = std::map<std::pair<std::string_view, std::uint32_t>, double>;

result<trace_job> read_job(const row_view& row, const layout& l, std::string_view tenant,
                           std::size_t index, const rate_map& rates, double fallback) {
  auto type = row.nonempty(l.job_type);
  if (!type) return std::move(type).error();
  HETSCHED_TRY(row.nonempty(l.num_steps_arg));
  HETSCHED_TRY(row.integer(l.needs_data_dir, 0, 1));
  auto steps = row.integer(l.total_steps, 1, std::numeric_limits<std::int64_t>::max());
  if (!steps) return std::move(steps).error();
  auto arrival = row.seconds_as_ms(l.arrival_time, 0, detail::max_time_ms);
  if (!arrival) return std::move(arrival).error();
  auto scale = row.integer(l.scale_factor, 1, detail::max_job_gpus);
  if (!scale) return std::move(scale).error();
  if (l.priority_weight != none) {
    auto weight = row.real(l.priority_weight);
    if (!weight) return std::move(weight).error();
    if (*weight <= 0) return row.fail(l.priority_weight, "must be positive");
    HETSCHED_TRY(row.real(l.slo));
  }
  const auto gpus = static_cast<std::uint32_t>(*scale);
  double rate = fallback;
  if (const auto it = rates.find({*type, gpus}); it != rates.end()) rate = it->second;
  if (rate <= 0) {
    return row.fail(l.job_type, std::string("no throughput for ('") +
                                    hetsched::detail::shown(*type) + "', " + std::to_string(gpus) +
                                    ") and no fallback rate");
  }
  const double ms = std::ceil(static_cast<double>(*steps) * 1000.0 / rate);
  if (!(ms <= static_cast<double>(detail::max_time_ms))) {
    return row.fail(l.total_steps, "the duration it implies exceeds " +
                                       std::to_string(detail::max_time_ms) + " ms");
  }
  const std::string name =
      tenant.empty() ? std::to_string(index) : std::string(tenant) + "-" + std::to_string(index);
  return detail::gpu_job(name, tenant, *arrival,
                         std::max<std::int64_t>(1, static_cast<std::int64_t>(ms)), gpus, *type,
                         *steps);
}

}  // namespace

result<trace> parse_gavel_trace(std::string_view text, std::string_view source,
                                const gavel_options& options) {
  if (!(options.fallback_steps_per_second >= 0) ||
      !std::isfinite(options.fallback_steps_per_second)) {
    return detail::field_error(source, 0, "fallback_steps_per_second",
                               "must be a finite number >= 0");
  }
  rate_map rates;
  for (const auto& t : options.throughputs) {
    if (!(t.steps_per_second > 0) || !std::isfinite(t.steps_per_second)) {
      return detail::field_error(source, 0, "throughputs",
                                 std::string("the rate of ('") +
                                     hetsched::detail::shown(t.job_type) + "', " +
                                     std::to_string(t.scale_factor) + ") is not positive");
    }
    rates.emplace(std::pair<std::string_view, std::uint32_t>{t.job_type, t.scale_factor},
                  t.steps_per_second);
  }
  const std::string_view tenant =
      options.tenant.empty() ? detail::source_stem(source) : std::string_view(options.tenant);
  trace jobs;
  detail::line_cursor lines(text);
  detail::text_line line;
  std::vector<std::string_view> fields;
  while (lines.next(line)) {
    detail::split_fields(line.text, '\t', fields);
    if (lines.at_unterminated_end()) {
      const layout& names = fields.size() <= 7   ? msr_layout
                            : fields.size() <= 9 ? nine_layout
                                                 : ten_layout;
      return detail::cut_line_error(source, line.number, fields,
                                    std::span(names.names.data(), names.count));
    }
    const layout* l = nullptr;
    if (fields.size() == 7) l = &msr_layout;
    if (fields.size() == 9) l = &nine_layout;
    if (fields.size() == 10) l = &ten_layout;
    if (l == nullptr) {
      const std::string problem = "a Gavel trace line has 7, 9 or 10 tab-separated fields, not " +
                                  std::to_string(fields.size());
      if (fields.size() < 7) {
        return detail::field_error(source, line.number, msr_layout.names[fields.size()], problem);
      }
      if (fields.size() == 8) {
        return detail::field_error(source, line.number, nine_layout.names[8], problem);
      }
      return detail::field_error(source, line.number, "#11", problem);
    }
    const row_view row(source, line.number, fields, std::span(l->names.data(), l->count));
    auto job = read_job(row, *l, tenant, jobs.size(), rates, options.fallback_steps_per_second);
    if (!job) return std::move(job).error();
    jobs.push_back(std::move(*job));
  }
  if (jobs.empty()) {
    return detail::field_error(source, 1, msr_layout.names[0],
                               "no jobs (the text has no non-blank line)");
  }
  detail::sort_by_submit(jobs);
  return jobs;
}

namespace {

// Parses "('<job_type>', <scale_factor>)".
bool parse_job_key(std::string_view key, std::string& type, std::uint32_t& scale) {
  constexpr std::string_view open = "('";
  if (key.substr(0, open.size()) != open || key.empty() || key.back() != ')') return false;
  key.remove_prefix(open.size());
  key.remove_suffix(1);
  const std::size_t sep = key.rfind("', ");
  if (sep == std::string_view::npos || sep == 0) return false;
  std::int64_t n = 0;
  if (!detail::parse_int64(key.substr(sep + 3), n) || n < 1 || n > detail::max_job_gpus) {
    return false;
  }
  type = std::string(key.substr(0, sep));
  scale = static_cast<std::uint32_t>(n);
  return true;
}

}  // namespace

result<std::vector<gavel_throughput>> parse_gavel_throughputs(std::string_view json_text,
                                                              std::string_view source,
                                                              std::string_view worker_type) {
  auto prefixed = [&](std::string message) {
    return error{errc::invalid_argument, std::string(source) + ": " + std::move(message)};
  };
  auto doc = hetsched::jsonio::parse_json(json_text);
  if (!doc) return prefixed(doc.error().message);
  if (!doc->is_object()) return prefixed("expected an object of worker types");
  if (!doc->contains(worker_type)) {
    return make_error(errc::not_found, "{}: no worker type '{}'", source,
                      hetsched::detail::shown(worker_type));
  }
  const auto& worker = hetsched::jsonio::member(*doc, worker_type);
  if (!worker.is_object()) {
    return prefixed(hetsched::detail::shown(worker_type) + ": expected an object of job types");
  }
  std::vector<gavel_throughput> out;
  for (const auto& [key, value] : hetsched::jsonio::as_object(worker)) {
    const std::string path = hetsched::jsonio::json_path(worker_type, key);
    gavel_throughput t;
    if (!parse_job_key(key, t.job_type, t.scale_factor)) {
      return prefixed(hetsched::detail::shown(path) +
                      ": key is not \"('<job type>', <scale factor>)\"");
    }
    const auto& alone = hetsched::jsonio::member(value, "null");
    if (!alone.is_number()) {
      return prefixed(hetsched::detail::shown(path) + ".null: missing or not a number");
    }
    t.steps_per_second = alone.get<double>();
    if (t.steps_per_second == 0) continue;  // the job type cannot run on this worker type
    if (!(t.steps_per_second > 0) || !std::isfinite(t.steps_per_second)) {
      return prefixed(hetsched::detail::shown(path) + ".null: the rate must not be negative");
    }
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const gavel_throughput& a, const gavel_throughput& b) {
    return std::tie(a.job_type, a.scale_factor) < std::tie(b.job_type, b.scale_factor);
  });
  return out;
}

}  // namespace hetsched::workload
