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
  if (auto pods = hetsched::workload::parse_openb_pods(text)) {
    (void)hetsched::workload::openb_to_trace(*pods);
  }
  if (auto nodes = hetsched::workload::parse_openb_nodes(text)) {
    if (auto c = hetsched::workload::openb_cluster_topology(*nodes)) {
      if (c->nodes().size() != nodes->size()) std::abort();
    }
  }
  return 0;
}
