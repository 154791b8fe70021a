// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as hwloc XML into import_hwloc_xml. Any result is fine; a
// crash, sanitizer report or hang is a bug. Seed the corpus with data/topologies/hwloc/*.xml and
// run with UBSAN_OPTIONS=halt_on_error=1 (UBSan only prints otherwise). hwloc 2.9.0 leaks the
// object being imported when an <info> element is malformed; those leaks are hwloc's own, so run
// with LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp (scripts/fuzz.sh does).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <hetsched/topology/hwloc_import.hpp>
#include <hetsched/topology/views.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  const auto topology = hetsched::import_hwloc_xml(xml);
  if (topology) {
    // Touch the derived views so that what the importer builds is also exercised downstream.
    const hetsched::node_views& views = topology->views();
    for (std::size_t i = 0; i < views.endpoints().size(); ++i) {
      static_cast<void>(views.relation(i, 0).token());
    }
  }
  return 0;
}
