// SPDX-License-Identifier: MIT
// hetsched's native CSV trace format (hetsched-sim --trace csv:PATH, hetsched.load_trace): a
// pure reader over text, like the other trace readers (trace_registry.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload {

/// A trace and, per job, the line it came from (for error messages).
struct loaded_trace {
  trace jobs;
  std::vector<std::size_t> lines;
};

/// Returns the native CSV `text` of file `path` parsed: a header naming columns (any order) from
/// name, tenant, submit_ms, duration_ms, tasks, gpus_per_task, gpu_milli_per_task,
/// cpu_milli_per_task, memory_mib_per_task, gpu_type, priority, preemptible; name, submit_ms,
/// duration_ms and gpus_per_task are required. Lines starting with '#' and blank lines are
/// skipped. Errors name "path:line: field '<name>': ...": an unknown or repeated column, a field
/// that is not an integer of its type, submit_ms outside 0..10^13 or duration_ms outside
/// 1..10^13 (workload::max_trace_time_ms), an empty or repeated job name (with the line of its
/// first use), what sim::validate_trace_job refuses, a last line without a line break (every
/// line of the format ends with one, so the file was cut inside it) and no job at all (an empty
/// trace or a file cut after its header). A file cut at any other line boundary is not
/// detectable (the format has no count or end marker).
[[nodiscard]] result<loaded_trace> parse_native_csv(std::string_view text, std::string_view path);

}  // namespace hetsched::workload
