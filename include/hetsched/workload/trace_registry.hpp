// SPDX-License-Identifier: MIT
// Trace readers by format name, so that a tool can say `--trace FORMAT:PATH`.
//
// parse_trace("gavel" | "pollux" | "tiresias", text, source) calls the reader of that format with
// its default options; callers can add further formats (e.g. the Alibaba openb reader) through
// the `extra` table. parse_trace_spec() splits "FORMAT:PATH". merge_traces() interleaves several
// traces by submit time (e.g. Gavel's per-VC files into one multi-tenant trace).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::workload {

/// A named trace reader: a function from text plus source name to a trace. It may carry bound
/// options, e.g. `[&](auto text, auto src) { return parse_gavel_trace(text, src, opts); }`.
struct trace_format {
  std::string name;
  std::function<result<trace>(std::string_view text, std::string_view source)> parse;
};

/// Returns the built-in formats, sorted by name: gavel (parse_gavel_trace), pollux
/// (parse_pollux_workload), tiresias (parse_tiresias_jobs), each with default options.
[[nodiscard]] std::span<const trace_format> builtin_trace_formats();

/// Returns the trace of `text` in format `format`, looked up first in `extra` then among the
/// built-in formats. Errors: whatever the reader reports; not_found naming the format and listing
/// the known names if no reader has that name.
[[nodiscard]] result<trace> parse_trace(std::string_view format, std::string_view text,
                                        std::string_view source,
                                        std::span<const trace_format> extra = {});

/// A "FORMAT:PATH" command-line trace argument.
struct trace_spec {
  std::string format;
  std::string path;

  friend bool operator==(const trace_spec&, const trace_spec&) = default;
};

/// Splits `spec` at its first ':' into format and path. Errors: invalid_argument if there is no
/// ':', or the format or the path is empty.
[[nodiscard]] result<trace_spec> parse_trace_spec(std::string_view spec);

/// Returns the jobs of all `traces` ordered by submit time; ties keep the order of `traces`, then
/// each trace's own order. Errors: already_exists naming a job name used in two traces.
[[nodiscard]] result<trace> merge_traces(std::span<const trace> traces);

}  // namespace hetsched::workload
