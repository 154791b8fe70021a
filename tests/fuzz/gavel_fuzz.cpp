// SPDX-License-Identifier: MIT
// libFuzzer target for parse_gavel_trace() and parse_gavel_throughputs().
//
// An accepted trace must satisfy the trace_job contract (sorted submit times, positive duration,
// at least one one-GPU task, unique names), and the same text with a zero fallback rate and a
// throughput table built from its own job types must give the same jobs apart from durations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include <hetsched/workload/gavel.hpp>

namespace {

void check_contract(const hetsched::workload::trace& jobs) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    if (j.submit_ms < 0 || j.duration_ms < 1 || j.tasks < 1 || j.gpus_per_task != 1 ||
        j.gpu_milli_per_task != 1000 || !j.work_units || *j.work_units < 1) {
      std::abort();
    }
    if (i > 0 && jobs[i - 1].submit_ms > j.submit_ms) std::abort();
    if (!names.insert(j.name).second) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hetsched::workload::parse_gavel_throughputs(text, "fuzz.json", "v100");
  auto jobs = hetsched::workload::parse_gavel_trace(text, "fuzz/vc.trace");
  if (!jobs) return 0;
  if (jobs->empty()) std::abort();  // a trace without jobs is refused
  check_contract(*jobs);
  hetsched::workload::gavel_options options;
  options.fallback_steps_per_second = 0;
  for (const auto& j : *jobs) options.throughputs.push_back({j.model, j.tasks, 1000.0});
  auto again = hetsched::workload::parse_gavel_trace(text, "fuzz/vc.trace", options);
  if (!again || again->size() != jobs->size()) std::abort();
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    auto a = (*jobs)[i];
    auto b = (*again)[i];
    // 1000 steps/s: one millisecond per step.
    if (b.duration_ms != *b.work_units) std::abort();
    a.duration_ms = b.duration_ms = 0;
    if (!(a == b)) std::abort();
  }
  return 0;
}
