// SPDX-License-Identifier: MIT
// libFuzzer target: the openb pod and node list readers must return a value or an error, never
// crash; a parsed pod list must also convert to a trace, and a parsed node list to a cluster
// (openb_cluster_topology), or fail cleanly. A cluster built has one node per listed node.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <hetsched/workload/openb.hpp>
#include <hetsched/workload/openb_cluster.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Accepted lists are complete (issue 17): at least one row, the text ends with a line break.
  const bool complete = !text.empty() && text.back() == '\n';
  if (auto pods = hetsched::workload::parse_openb_pods(text, "fuzz.csv")) {
    if (pods->empty() || !complete) std::abort();
    for (const auto& p : *pods) {
      if (p.line < 2 || (p.creation_time && p.deletion_time && *p.deletion_time < *p.creation_time))
        std::abort();
    }
    if (auto t = hetsched::workload::openb_to_trace(*pods, "fuzz.csv")) {
      for (const auto& j : *t) {
        if (j.submit_ms < 0 || j.submit_ms > hetsched::workload::max_trace_time_ms ||
            j.duration_ms < 1 || j.duration_ms > hetsched::workload::max_trace_time_ms)
          std::abort();
      }
    }
  }
  if (auto nodes = hetsched::workload::parse_openb_nodes(text, "fuzz.csv")) {
    if (nodes->empty() || !complete) std::abort();
    if (auto c = hetsched::workload::openb_cluster_topology(*nodes)) {
      if (c->nodes().size() != nodes->size()) std::abort();
    }
  }
  return 0;
}
