// SPDX-License-Identifier: MIT
// hetsched-sim's readers of published trace formats (gavel, openb, pollux, tiresias): --trace
// FORMAT:PATH for every format other than the native csv.
#pragma once

#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>

#include "trace_csv.hpp"

namespace hetsched::simcli {

/// Returns the published formats --trace accepts besides csv, sorted and comma-separated:
/// gavel, openb, pollux, tiresias.
[[nodiscard]] std::string published_trace_formats();

/// True if `format` is one of published_trace_formats().
[[nodiscard]] bool is_published_format(std::string_view format);

/// Returns the trace in file `path` read by the reader of `format` (workload::parse_trace; openb:
/// parse_openb_pods + openb_to_trace). If `path` is a directory, every regular file in it (sorted
/// by name; for gavel only *.trace, for the others only *.csv) is read and the traces are merged
/// by submit time (workload::merge_traces); Gavel's per-VC files then become one multi-tenant
/// trace with each file's stem as its tenant. Errors name the file, and the line and field the
/// reader reports.
[[nodiscard]] result<loaded_trace> load_published_trace(std::string_view format,
                                                        const std::string& path);

}  // namespace hetsched::simcli
