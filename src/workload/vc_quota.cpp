// SPDX-License-Identifier: MIT
// VC quota tables: parse_vc_node_table(), parse_vc_gpu_history() and their accessors.
#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <utility>

#include <hetsched/workload/vc_quota.hpp>

#include "detail/text.hpp"
#include "workload/csv.hpp"

namespace hetsched::workload {
namespace {

constexpr std::int64_t max_count = 1'000'000;

}  // namespace

std::uint64_t vc_quota_table::total_gpus() const noexcept {
  std::uint64_t total = 0;
  for (const auto& v : vcs) total += v.gpus;
  return total;
}

const vc_quota* vc_quota_table::find(std::string_view vc) const noexcept {
  const auto it =
      std::find_if(vcs.begin(), vcs.end(), [&](const vc_quota& v) { return v.vc == vc; });
  return it == vcs.end() ? nullptr : &*it;
}

result<vc_quota_table> parse_vc_node_table(std::string_view text, std::string_view source,
                                           const vc_node_options& options) {
  if (options.gpus_per_node < 1 || options.gpus_per_node > 1024) {
    return detail::field_error(source, 0, "gpus_per_node", "must be in [1, 1024]");
  }
  detail::line_cursor lines(text);
  detail::text_line line;
  std::vector<std::string_view> header;
  std::vector<std::string_view> fields;
  if (!lines.next(line)) return detail::field_error(source, 1, "vc", "no header line");
  detail::split_fields(line.text, ',', header);
  if (lines.at_unterminated_end()) {
    return detail::cut_line_error(source, line.number, header, header);
  }
  if (header.size() != 2) {
    return detail::field_error(source, line.number, "header",
                               std::string("a VC table has two columns (VC, node count), not ") +
                                   std::to_string(header.size()));
  }
  // Column names for messages: the header's own, or positional names when a header cell is empty.
  const std::array<std::string_view, 2> names{header[0].empty() ? "vc" : header[0],
                                              header[1].empty() ? "nodes" : header[1]};
  vc_quota_table table;
  table.gpus_per_node = options.gpus_per_node;
  table.gpu_type = options.gpu_type;
  detail::unique_names seen;
  const std::size_t header_line = line.number;
  while (lines.next(line)) {
    detail::split_fields(line.text, ',', fields);
    if (lines.at_unterminated_end()) {
      return detail::cut_line_error(source, line.number, fields, names);
    }
    HETSCHED_TRY(detail::check_field_count(source, line.number, fields, names));
    const detail::row_view row(source, line.number, fields, names);
    auto vc = row.nonempty(0);
    if (!vc) return std::move(vc).error();
    HETSCHED_TRY(seen.add(row, 0, *vc));
    auto nodes = row.integer(1, 0, max_count);
    if (!nodes) return std::move(nodes).error();
    const std::int64_t gpus = *nodes * options.gpus_per_node;
    if (gpus > std::numeric_limits<std::uint32_t>::max()) return row.fail(1, "too many GPUs");
    table.vcs.push_back(vc_quota{std::string(*vc), static_cast<std::uint32_t>(gpus),
                                 static_cast<std::uint32_t>(*nodes)});
  }
  if (table.vcs.empty()) return detail::no_rows_error(source, header_line + 1, names[0], "VCs");
  return table;
}

result<vc_quota_table> vc_gpu_history::quota_on(std::string_view date) const {
  const auto day =
      std::find_if(days.begin(), days.end(), [&](const vc_gpu_day& d) { return d.date == date; });
  if (day == days.end()) {
    return make_error(errc::not_found, "no quota for date '{}'", hetsched::detail::shown(date));
  }
  vc_quota_table table;
  for (std::size_t i = 0; i < vcs.size(); ++i) {
    table.vcs.push_back(vc_quota{vcs[i], day->gpus[i], std::nullopt});
  }
  return table;
}

result<vc_quota_table> vc_gpu_history::latest() const {
  if (days.empty()) return make_error(errc::invalid_argument, "the VC GPU history has no days");
  return quota_on(days.back().date);
}

result<vc_quota_table> vc_gpu_history::select(const vc_day_selector& day) const {
  switch (day.which) {
    case vc_day_selector::kind::latest: return latest();
    case vc_day_selector::kind::date: return quota_on(day.date);
    case vc_day_selector::kind::max:
    case vc_day_selector::kind::mean: break;
  }
  if (days.empty()) return make_error(errc::invalid_argument, "the VC GPU history has no days");
  vc_quota_table table;
  const auto n = static_cast<std::uint64_t>(days.size());
  for (std::size_t i = 0; i < vcs.size(); ++i) {
    std::uint64_t sum = 0;
    std::uint32_t most = 0;
    for (const vc_gpu_day& d : days) {
      sum += d.gpus[i];
      most = std::max(most, d.gpus[i]);
    }
    const std::uint32_t gpus = day.which == vc_day_selector::kind::max
                                   ? most
                                   : static_cast<std::uint32_t>((2 * sum + n) / (2 * n));
    table.vcs.push_back(vc_quota{vcs[i], gpus, std::nullopt});
  }
  return table;
}

result<vc_day_selector> parse_vc_day_selector(std::string_view text) {
  if (text.empty())
    return make_error(errc::invalid_argument,
                      "VC quota day: empty (expected latest, max, mean or a date)");
  vc_day_selector s;
  if (text == "latest") {
    s.which = vc_day_selector::kind::latest;
  } else if (text == "max") {
    s.which = vc_day_selector::kind::max;
  } else if (text == "mean") {
    s.which = vc_day_selector::kind::mean;
  } else {
    s.which = vc_day_selector::kind::date;
    s.date = std::string(text);
  }
  return s;
}

result<vc_quota_table> parse_vc_quota_file(std::string_view text, std::string_view source,
                                           const vc_day_selector& day,
                                           const vc_node_options& nodes) {
  const std::string_view first = text.substr(0, std::min(text.find_first_of(",\r\n"), text.size()));
  if (first != "date") return parse_vc_node_table(text, source, nodes);
  auto history = parse_vc_gpu_history(text, source);
  if (!history) return std::move(history).error();
  auto table = history->select(day);
  if (!table) return make_error(table.error().code, "{}: {}", source, table.error().message);
  return table;
}

result<vc_gpu_history> parse_vc_gpu_history(std::string_view text, std::string_view source) {
  detail::line_cursor lines(text);
  detail::text_line line;
  std::vector<std::string_view> header;
  std::vector<std::string_view> fields;
  if (!lines.next(line)) return detail::field_error(source, 1, "date", "no header line");
  detail::split_fields(line.text, ',', header);
  if (lines.at_unterminated_end()) {
    return detail::cut_line_error(source, line.number, header, header);
  }
  if (header[0] != "date") {
    return detail::field_error(source, line.number, header[0],
                               "the first column must be named 'date'");
  }
  const bool has_total = header.size() > 1 && header.back() == "total";
  const std::size_t vc_end = header.size() - (has_total ? 1 : 0);
  vc_gpu_history history;
  {
    const detail::row_view row(source, line.number, header, header);
    detail::unique_names vc_names;
    for (std::size_t c = 1; c < vc_end; ++c) {
      if (header[c].empty()) {
        return detail::field_error(source, line.number, std::string("#") + std::to_string(c + 1),
                                   "empty VC name");
      }
      HETSCHED_TRY(vc_names.add(row, c, header[c]));
      history.vcs.emplace_back(header[c]);
    }
  }
  detail::unique_names dates;
  const std::size_t header_line = line.number;
  while (lines.next(line)) {
    detail::split_fields(line.text, ',', fields);
    if (lines.at_unterminated_end()) {
      return detail::cut_line_error(source, line.number, fields, header);
    }
    HETSCHED_TRY(detail::check_field_count(source, line.number, fields, header));
    const detail::row_view row(source, line.number, fields, header);
    auto date = row.nonempty(0);
    if (!date) return std::move(date).error();
    HETSCHED_TRY(dates.add(row, 0, *date));
    vc_gpu_day day;
    day.date = std::string(*date);
    std::int64_t sum = 0;
    for (std::size_t c = 1; c < vc_end; ++c) {
      auto gpus = row.integer(c, 0, max_count);
      if (!gpus) return std::move(gpus).error();
      sum += *gpus;
      day.gpus.push_back(static_cast<std::uint32_t>(*gpus));
    }
    if (has_total) {
      auto total = row.integer(vc_end, 0, std::numeric_limits<std::int64_t>::max());
      if (!total) return std::move(total).error();
      if (*total != sum) {
        return row.fail(vc_end, std::to_string(*total) + " differs from the sum of the VCs, " +
                                    std::to_string(sum));
      }
    }
    history.days.push_back(std::move(day));
  }
  if (history.days.empty()) return detail::no_rows_error(source, header_line + 1, "date", "days");
  return history;
}

}  // namespace hetsched::workload
