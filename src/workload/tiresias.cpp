// SPDX-License-Identifier: MIT
// parse_tiresias_jobs() and parse_tiresias_cluster_spec(): the Tiresias simulator's CSVs.
#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include <hetsched/workload/tiresias.hpp>

#include "workload/csv.hpp"

namespace hetsched::workload {

result<trace> parse_tiresias_jobs(std::string_view text, std::string_view source,
                                  const tiresias_options& options) {
  static constexpr std::array<std::string_view, 7> columns{
      "job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval"};
  auto reader = detail::csv_reader::open(text, source, columns);
  if (!reader) return std::move(reader).error();
  trace jobs;
  detail::unique_names names;
  auto done = detail::for_each_row(*reader, [&](const detail::row_view& row) -> result<void> {
    auto id = names.take(row, reader->column(0));
    if (!id) return std::move(id).error();
    auto gpus = row.integer(reader->column(1), 1, detail::max_job_gpus);
    if (!gpus) return std::move(gpus).error();
    auto submit = row.seconds_as_ms(reader->column(2), 0, detail::max_time_ms);
    if (!submit) return std::move(submit).error();
    auto iterations = row.integer(reader->column(3), 0, std::numeric_limits<std::int64_t>::max());
    if (!iterations) return std::move(iterations).error();
    auto model = row.nonempty(reader->column(4));
    if (!model) return std::move(model).error();
    auto duration = row.seconds_as_ms(reader->column(5), 1, detail::max_time_ms);
    if (!duration) return std::move(duration).error();
    HETSCHED_TRY(row.seconds_as_ms(reader->column(6), 0, detail::max_time_ms));
    jobs.push_back(
        detail::gpu_job(*id, options.tenant, *submit, *duration, *gpus, *model, *iterations));
    return ok();
  });
  if (!done) return std::move(done).error();
  if (jobs.empty()) return reader->no_rows(0, "jobs");
  detail::sort_by_submit(jobs);
  return jobs;
}

result<tiresias_cluster_spec> parse_tiresias_cluster_spec(std::string_view text,
                                                          std::string_view source) {
  static constexpr std::array<std::string_view, 5> columns{
      "num_switch", "num_node_p_switch", "num_gpu_p_node", "num_cpu_p_node", "mem_p_node"};
  // The published cluster specs end without a line break, so a cut last line is not detectable.
  auto reader = detail::csv_reader::open(text, source, columns, detail::last_line_break::optional);
  if (!reader) return std::move(reader).error();
  auto more = reader->next();
  if (!more) return std::move(more).error();
  if (!*more) return detail::field_error(source, 2, columns[0], "no data row");
  const auto row = reader->row();
  std::array<std::int64_t, 5> v{};
  for (std::size_t c = 0; c < columns.size(); ++c) {
    auto n = row.integer(reader->column(c), c == 4 ? 0 : 1, c == 4 ? 1'000'000'000 : 1'000'000);
    if (!n) return std::move(n).error();
    v[c] = *n;
  }
  more = reader->next();
  if (!more) return std::move(more).error();
  if (*more) return reader->row().fail(reader->column(0), "a cluster spec has one data row");
  return tiresias_cluster_spec{static_cast<std::uint32_t>(v[0]), static_cast<std::uint32_t>(v[1]),
                               static_cast<std::uint32_t>(v[2]), static_cast<std::uint32_t>(v[3]),
                               v[4]};
}

}  // namespace hetsched::workload
