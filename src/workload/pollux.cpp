// SPDX-License-Identifier: MIT
// parse_pollux_workload(): Pollux simulator workloads to trace_jobs.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <utility>

#include <hetsched/workload/pollux.hpp>

#include "detail/text.hpp"
#include "workload/csv.hpp"

namespace hetsched::workload {

std::vector<pollux_application> pollux_default_applications() {
  constexpr std::int64_t s = 1000;
  return {
      {"bert", 2, 11'384 * s},         {"cifar10", 100, 1'800 * s}, {"deepspeech2", 80, 11'384 * s},
      {"imagenet", 90, 1'138'420 * s}, {"ncf", 10, 1'800 * s},      {"yolov3", 50, 113'842 * s},
  };
}

result<trace> parse_pollux_workload(std::string_view text, std::string_view source,
                                    const pollux_options& options) {
  const std::vector<pollux_application> defaults = options.applications.empty()
                                                       ? pollux_default_applications()
                                                       : std::vector<pollux_application>{};
  const auto& table = options.applications.empty() ? defaults : options.applications;
  std::map<std::string_view, const pollux_application*> apps;
  for (const auto& a : table) {
    if (a.name.empty() || a.epochs < 1 || a.gpu_ms < 1 || a.gpu_ms > detail::max_time_ms ||
        !apps.emplace(a.name, &a).second) {
      return detail::field_error(
          source, 0, "applications",
          std::string("entry '") + hetsched::detail::shown(a.name) +
              "' needs a unique non-empty name, epochs >= 1 and gpu_ms in [1, " +
              std::to_string(detail::max_time_ms) + "]");
    }
  }
  static constexpr std::array<std::string_view, 5> columns{"name", "time", "application",
                                                           "num_replicas", "batch_size"};
  auto reader = detail::csv_reader::open(text, source, columns);
  if (!reader) return std::move(reader).error();
  trace jobs;
  detail::unique_names names;
  auto done = detail::for_each_row(*reader, [&](const detail::row_view& row) -> result<void> {
    auto name = names.take(row, reader->column(0));
    if (!name) return std::move(name).error();
    auto time = row.seconds_as_ms(reader->column(1), 0, detail::max_time_ms);
    if (!time) return std::move(time).error();
    auto app_name = row.nonempty(reader->column(2));
    if (!app_name) return std::move(app_name).error();
    const auto app = apps.find(*app_name);
    if (app == apps.end()) {
      std::string known;
      for (const auto& entry : apps) {
        if (!known.empty()) known += ", ";
        known += entry.first;
      }
      return row.fail(reader->column(2), std::string("unknown application '") +
                                             hetsched::detail::shown(*app_name) +
                                             "' (known: " + known + ")");
    }
    auto replicas = row.integer(reader->column(3), 1, detail::max_job_gpus);
    if (!replicas) return std::move(replicas).error();
    HETSCHED_TRY(row.integer(reader->column(4), 1, std::numeric_limits<std::int64_t>::max()));
    // ceil(gpu_ms / replicas) without overflow; gpu_ms <= max_time_ms, so the duration is too.
    const std::int64_t gpu_ms = app->second->gpu_ms;
    const std::int64_t duration = gpu_ms / *replicas + (gpu_ms % *replicas != 0 ? 1 : 0);
    jobs.push_back(detail::gpu_job(*name, options.tenant, *time, duration, *replicas, *app_name,
                                   app->second->epochs));
    return ok();
  });
  if (!done) return std::move(done).error();
  if (jobs.empty()) return reader->no_rows(0, "jobs");
  detail::sort_by_submit(jobs);
  return jobs;
}

}  // namespace hetsched::workload
