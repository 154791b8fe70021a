// SPDX-License-Identifier: MIT
// File reading for the executables and the Python module (target hetsched_cli_files, not
// installed: the library itself does no I/O). Traces given as "FORMAT:PATH" (the native csv,
// workload/native_csv.hpp, and the published formats gavel, openb, pollux, tiresias read by the
// library's readers) and VC quota files. hetsched-sim and hetsched.simulate() share it, so the
// same arguments give the same figures.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/policies/throughput_table.hpp>
#include <hetsched/workload/native_csv.hpp>
#include <hetsched/workload/vc_quota.hpp>

namespace hetsched::cli {

/// Returns the published formats --trace accepts besides csv, sorted and comma-separated:
/// gavel, openb, pollux, tiresias.
[[nodiscard]] std::string published_trace_formats();

/// True if `format` is one of published_trace_formats().
[[nodiscard]] bool is_published_format(std::string_view format);

/// Returns every format --trace accepts, comma-separated: csv, then published_trace_formats().
[[nodiscard]] std::string trace_formats();

/// Returns the trace in file `path` read by the reader of `format` (workload::parse_trace; openb:
/// parse_openb_pods + openb_to_trace). If `path` is a directory, every regular file in it (sorted
/// by name; for gavel only *.trace, for the others only *.csv) is read and the traces are merged
/// by submit time (workload::merge_traces); Gavel's per-VC files then become one multi-tenant
/// trace with each file's stem as its tenant. Errors name the file, and the line and field the
/// reader reports.
[[nodiscard]] result<workload::loaded_trace> load_published_trace(std::string_view format,
                                                                  const std::string& path);

/// Returns the trace of "FORMAT:PATH" (reads the file; csv: workload::parse_native_csv). Errors
/// name the file, line and field; invalid_argument without a ':'; not_found for an unknown
/// format or a file that cannot be opened.
[[nodiscard]] result<workload::loaded_trace> load_trace(std::string_view spec);

/// Returns the VC quota table in file `path` (a Philly or Venus VC -> node table, 8 GPUs per
/// node, or a Helios Earth daily VC -> GPU table with `day` choosing the day or the per-VC max or
/// mean; workload::parse_vc_quota_file), or nullopt when `path` is empty. Errors: the file cannot
/// be read; those of the readers (file:line: field).
[[nodiscard]] result<std::optional<workload::vc_quota_table>> load_vc_quota(
    const std::string& path, const workload::vc_day_selector& day);

/// Returns the throughput table of "FORMAT:PATH" (policies/throughput_table.hpp): format gavel
/// (Gavel's simulation_throughputs.json layout) or hetsched (the simpler format of
/// docs/speed_model.md §5). Errors: invalid_argument without a ':', not_found for an unknown
/// format or a file that cannot be opened; the reader's errors prefixed with the path.
[[nodiscard]] result<throughput_table> load_throughput_table(std::string_view spec);

/// Gives the capacity specs their queue trees (capacity_tree_json.hpp) as document text: a
/// `tree=PATH` of a spec is replaced by the file's text (a value starting with '{' is a document
/// already), and a capacity spec without tree= gets the tree in file `path` when it is not empty
/// (hetsched-sim's --queue-tree). Errors (no spec changed): a file cannot be read (not_found); a
/// document's errors prefixed with its path.
[[nodiscard]] result<void> resolve_queue_trees(std::vector<policy_spec>& specs,
                                               const std::string& path);

}  // namespace hetsched::cli
