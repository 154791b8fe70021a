// SPDX-License-Identifier: MIT
// parse_trace(), parse_trace_spec() and merge_traces().
#include <algorithm>
#include <unordered_set>
#include <vector>

#include <hetsched/workload/gavel.hpp>
#include <hetsched/workload/pollux.hpp>
#include <hetsched/workload/tiresias.hpp>
#include <hetsched/workload/trace_registry.hpp>

#include "detail/text.hpp"

namespace hetsched::workload {
namespace {

const std::vector<trace_format>& builtins() {
  static const std::vector<trace_format> formats = {
      {"gavel", [](std::string_view t, std::string_view s) { return parse_gavel_trace(t, s); }},
      {"pollux",
       [](std::string_view t, std::string_view s) { return parse_pollux_workload(t, s); }},
      {"tiresias",
       [](std::string_view t, std::string_view s) { return parse_tiresias_jobs(t, s); }},
  };
  return formats;
}

}  // namespace

std::span<const trace_format> builtin_trace_formats() { return builtins(); }

result<trace> parse_trace(std::string_view format, std::string_view text, std::string_view source,
                          std::span<const trace_format> extra) {
  for (const auto& f : extra) {
    if (f.name == format && f.parse) return f.parse(text, source);
  }
  for (const auto& f : builtins()) {
    if (f.name == format) return f.parse(text, source);
  }
  std::string known;
  auto list = [&known](std::span<const trace_format> formats) {
    for (const auto& f : formats) {
      if (!known.empty()) known += ", ";
      known += f.name;
    }
  };
  list(extra);
  list(builtins());
  return make_error(errc::not_found, "{}: unknown trace format '{}' (known: {})", source,
                    hetsched::detail::shown(format), known);
}

result<trace_spec> parse_trace_spec(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == spec.size()) {
    return make_error(errc::invalid_argument, "trace '{}': expected FORMAT:PATH",
                      hetsched::detail::shown(spec));
  }
  return trace_spec{std::string(spec.substr(0, colon)), std::string(spec.substr(colon + 1))};
}

result<trace> merge_traces(std::span<const trace> traces) {
  std::size_t total = 0;
  for (const auto& t : traces) total += t.size();
  std::unordered_set<std::string_view> names;
  names.reserve(total);
  trace out;
  out.reserve(total);
  for (const auto& t : traces) {
    for (const auto& job : t) {
      if (!names.insert(job.name).second) {
        return make_error(errc::already_exists, "job name '{}' appears in two traces",
                          hetsched::detail::shown(job.name));
      }
      out.push_back(job);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const trace_job& a, const trace_job& b) {
    return a.submit_ms < b.submit_ms;
  });
  return out;
}

}  // namespace hetsched::workload
