// SPDX-License-Identifier: MIT
// libFuzzer target for workload::parse_native_csv().
//
// An accepted trace must hold at least one job, one line number per job (ascending), jobs that
// satisfy the trace_job contract (sim::validate_trace_job), and writing it back with every column
// (submit_ms first, so no line starts with '#') must read back to the same jobs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/sim/engine.hpp>
#include <hetsched/workload/native_csv.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto t = hetsched::workload::parse_native_csv(text, "fuzz.csv");
  if (!t) return 0;
  if (t->jobs.empty() || t->lines.size() != t->jobs.size()) std::abort();
  std::string out =
      "submit_ms,name,tenant,duration_ms,tasks,gpus_per_task,gpu_milli_per_task,"
      "cpu_milli_per_task,memory_mib_per_task,gpu_type,priority,preemptible\n";
  for (std::size_t i = 0; i < t->jobs.size(); ++i) {
    const auto& j = t->jobs[i];
    if (i > 0 && t->lines[i - 1] >= t->lines[i]) std::abort();
    if (!hetsched::sim::validate_trace_job(j, i)) std::abort();
    out += std::to_string(j.submit_ms) + "," + j.name + "," + j.tenant + "," +
           std::to_string(j.duration_ms) + "," + std::to_string(j.tasks) + "," +
           std::to_string(j.gpus_per_task) + "," + std::to_string(j.gpu_milli_per_task) + "," +
           std::to_string(j.cpu_milli_per_task) + "," + std::to_string(j.memory_mib_per_task) +
           "," + j.gpu_type + "," + std::to_string(j.priority) + "," + (j.preemptible ? "1" : "0") +
           "\n";
  }
  auto again = hetsched::workload::parse_native_csv(out, "again.csv");
  if (!again || again->jobs != t->jobs) std::abort();
  return 0;
}
