// SPDX-License-Identifier: MIT
// parse_cluster_summaries(): Helios and Acme per-cluster summary tables.
#include <algorithm>
#include <array>
#include <utility>

#include <hetsched/workload/cluster_summary.hpp>

#include "workload/csv.hpp"

namespace hetsched::workload {

result<std::vector<cluster_summary>> parse_cluster_summaries(std::string_view text,
                                                             std::string_view source) {
  static constexpr std::array<std::string_view, 1> required{"id"};
  using member = std::optional<double> cluster_summary::*;
  static constexpr std::array<std::pair<std::string_view, member>, 14> optional_columns{{
      {"gpu_num", &cluster_summary::gpus},
      {"job_num", &cluster_summary::jobs},
      {"gpu_job_num", &cluster_summary::gpu_jobs},
      {"avg_run_time_gpu", &cluster_summary::avg_gpu_run_s},
      {"avg_que_time_gpu", &cluster_summary::avg_gpu_queue_s},
      {"avg_gpu_num", &cluster_summary::avg_gpus_per_job},
      {"med_run_time_gpu", &cluster_summary::median_gpu_run_s},
      {"med_que_time_gpu", &cluster_summary::median_gpu_queue_s},
      {"med_gpu_num", &cluster_summary::median_gpus_per_job},
      {"max_run_time_gpu", &cluster_summary::max_gpu_run_s},
      {"max_gpu", &cluster_summary::max_gpus_per_job},
      {"complete_rate_gpu", &cluster_summary::gpu_complete_rate},
      {"cancel_rate_gpu", &cluster_summary::gpu_cancel_rate},
      {"fail_rate_gpu", &cluster_summary::gpu_fail_rate},
  }};
  auto reader = detail::csv_reader::open(text, source, required);
  if (!reader) return std::move(reader).error();
  std::vector<std::pair<std::size_t, member>> present;
  for (const auto& [name, field] : optional_columns) {
    if (const auto at = reader->find(name)) present.emplace_back(*at, field);
  }
  std::vector<cluster_summary> rows;
  detail::unique_names ids;
  auto done = detail::for_each_row(*reader, [&](const detail::row_view& row) -> result<void> {
    auto id = ids.take(row, reader->column(0));
    if (!id) return std::move(id).error();
    cluster_summary s;
    s.cluster = std::string(*id);
    for (const auto& [at, field] : present) {
      if (row.text(at).empty()) continue;
      auto v = row.real(at);
      if (!v) return std::move(v).error();
      if (*v < 0) return row.fail(at, "must not be negative");
      s.*field = *v;
    }
    rows.push_back(std::move(s));
    return ok();
  });
  if (!done) return std::move(done).error();
  if (rows.empty()) return reader->no_rows(0, "clusters");
  return rows;
}

const cluster_summary* find_cluster(const std::vector<cluster_summary>& rows,
                                    std::string_view cluster) noexcept {
  const auto it = std::find_if(rows.begin(), rows.end(),
                               [&](const cluster_summary& s) { return s.cluster == cluster; });
  return it == rows.end() ? nullptr : &*it;
}

}  // namespace hetsched::workload
