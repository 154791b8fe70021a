// SPDX-License-Identifier: MIT
// libFuzzer target for parse_tiresias_jobs() and parse_tiresias_cluster_spec().
//
// An accepted job CSV must satisfy the trace_job contract, and writing it back (times as exact
// decimal seconds) must read back to the same jobs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/workload/tiresias.hpp>

namespace {

std::string seconds(std::int64_t ms) {
  std::string frac = std::to_string(ms % 1000);
  return std::to_string(ms / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto spec = hetsched::workload::parse_tiresias_cluster_spec(text, "fuzz.csv")) {
    if (spec->switches < 1 || spec->nodes_per_switch < 1 || spec->gpus_per_node < 1) std::abort();
  }
  auto jobs = hetsched::workload::parse_tiresias_jobs(text, "fuzz.csv");
  if (!jobs) return 0;
  if (jobs->empty()) std::abort();  // a trace without jobs (or cut after its header) is refused
  std::string out = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\r\n";
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    const auto& j = (*jobs)[i];
    if (j.submit_ms < 0 || j.duration_ms < 1 || j.tasks < 1 || !j.work_units) std::abort();
    if (i > 0 && (*jobs)[i - 1].submit_ms > j.submit_ms) std::abort();
    out += j.name + "," + std::to_string(j.tasks) + "," + seconds(j.submit_ms) + "," +
           std::to_string(*j.work_units) + "," + j.model + "," + seconds(j.duration_ms) + ",0\r\n";
  }
  auto again = hetsched::workload::parse_tiresias_jobs(out, "again.csv");
  if (!again || *again != *jobs) std::abort();
  return 0;
}
