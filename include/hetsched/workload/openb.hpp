// SPDX-License-Identifier: MIT
// openb: readers of the Alibaba cluster-trace-gpu-v2023 ("openb", the FGD trace) CSV files.
//
// Pod lists (openb_pod_list_*.csv) have the columns name, cpu_milli, memory_mib, num_gpu,
// gpu_milli and, except in the multigpu variants, gpu_spec, qos, pod_phase, creation_time,
// deletion_time, scheduled_time (seconds; scheduled_time empty for a pod never scheduled). Node
// lists (openb_node_list_*.csv) have sn, cpu_milli, memory_mib, gpu, model. Columns are found by
// their header name, in any order; unknown columns are ignored. The readers take the text the
// caller read and return plain structs, or an error naming the line (1-based) and the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload {

/// One row of an openb pod list. gpu_milli is per GPU (1..1000 when num_gpu is 1, 1000 when
/// num_gpu > 1, 0 when num_gpu is 0); gpu_spec lists allowed GPU models separated by '|'.
struct openb_pod {
  std::string name;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::uint32_t num_gpu = 0;
  std::int64_t gpu_milli = 0;
  std::string gpu_spec;
  std::string qos;
  std::string pod_phase;
  std::optional<std::int64_t> creation_time;   ///< Seconds; absent when the column is.
  std::optional<std::int64_t> deletion_time;   ///< Seconds; absent when the column is.
  std::optional<std::int64_t> scheduled_time;  ///< Seconds; absent when empty or no column.
  std::size_t line = 0;  ///< Line of the pod list it was read from; 0 when built in code.

  friend bool operator==(const openb_pod&, const openb_pod&) = default;
};

/// One row of an openb node list (model "" for a CPU-only node).
struct openb_node {
  std::string name;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::uint32_t gpus = 0;
  std::string model;

  friend bool operator==(const openb_node&, const openb_node&) = default;
};

/// Returns the pods of an openb pod list, in file order. Every line must end with a line break
/// (the published lists do; a last line without one is reported as a cut file); CRLF line ends
/// are accepted; blank lines are not. Errors (errc::invalid_argument unless said): a missing
/// required column, a row with the wrong number of fields, a quoted field, a non-integer or
/// negative number, a time above 10^10 s (max_trace_time_ms in seconds) or num_gpu > 64 or a
/// gpu_milli that breaks the rule above (out_of_range), a deletion_time before the
/// creation_time, a duplicate pod name (already_exists), no pod at all (an empty list or a file
/// cut after its header). Each message names `source` (the caller's file name), the line and
/// the field, e.g. "pods.csv:7: field 'gpu_milli': '12x' is not an integer" ("line 7: ..." when
/// `source` is empty).
[[nodiscard]] result<std::vector<openb_pod>> parse_openb_pods(std::string_view csv,
                                                              std::string_view source = {});

/// Returns the nodes of an openb node list, in file order; same rules (required columns sn,
/// cpu_milli, memory_mib, gpu, model; a GPU node needs a model).
[[nodiscard]] result<std::vector<openb_node>> parse_openb_nodes(std::string_view csv,
                                                                std::string_view source = {});

/// Returns the pods as trace jobs, one task each: submit = creation_time, duration =
/// deletion_time - creation_time (a pod deleted the second it was created lasts 1 ms),
/// gpu_type = gpu_spec as written, tenant = qos, priority 1 for LS/Guaranteed else 0. Errors:
/// a pod without creation or deletion time (the multigpu variants have none), or with times
/// outside 0..10^10 s or a deletion before its creation (pods built in code), named by
/// "<source>:<line>: field '<name>'" (the pod's line; its name when it has none).
[[nodiscard]] result<trace> openb_to_trace(std::span<const openb_pod> pods,
                                           std::string_view source = {});

}  // namespace hetsched::workload
