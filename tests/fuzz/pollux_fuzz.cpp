// SPDX-License-Identifier: MIT
// libFuzzer target for parse_pollux_workload().
//
// An accepted workload must satisfy the trace_job contract, and writing it back as a Pollux CSV
// (times as exact decimal seconds, batch size 1) must read back to the same jobs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/workload/pollux.hpp>

namespace {

std::string seconds(std::int64_t ms) {
  std::string frac = std::to_string(ms % 1000);
  return std::to_string(ms / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto jobs = hetsched::workload::parse_pollux_workload(text, "fuzz.csv");
  if (!jobs) return 0;
  if (jobs->empty()) std::abort();  // a workload without jobs (or cut after its header) is refused
  std::string out = "name,time,application,num_replicas,batch_size\n";
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    const auto& j = (*jobs)[i];
    if (j.submit_ms < 0 || j.duration_ms < 1 || j.tasks < 1 || j.gpus_per_task != 1) std::abort();
    if (i > 0 && (*jobs)[i - 1].submit_ms > j.submit_ms) std::abort();
    out += j.name + "," + seconds(j.submit_ms) + "," + j.model + "," + std::to_string(j.tasks) +
           ",1\n";
  }
  auto again = hetsched::workload::parse_pollux_workload(out, "again.csv");
  if (!again || *again != *jobs) std::abort();
  return 0;
}
