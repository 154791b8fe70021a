// SPDX-License-Identifier: MIT
// libFuzzer target for parse_cluster_summaries(): accepted rows have unique non-empty ids and
// only finite, non-negative values, and find_cluster() finds every row.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <hetsched/workload/cluster_summary.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rows = hetsched::workload::parse_cluster_summaries(text, "fuzz.csv");
  if (!rows) return 0;
  if (rows->empty()) std::abort();  // an empty table (or one cut after its header) is refused
  for (const auto& r : *rows) {
    if (r.cluster.empty() || hetsched::workload::find_cluster(*rows, r.cluster) != &r) std::abort();
    for (const auto& v :
         {r.gpus, r.jobs, r.avg_gpu_run_s, r.median_gpus_per_job, r.gpu_fail_rate}) {
      if (v && (!std::isfinite(*v) || *v < 0)) std::abort();
    }
  }
  return 0;
}
