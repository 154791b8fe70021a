// SPDX-License-Identifier: MIT
// libFuzzer target for import_nvidia_smi_topo() and detect_topology_format().
//
// Every input is imported with allow_partial off and on. An accepted matrix must round-trip: the
// relation tokens of the built views, printed back as a complete `nvidia-smi topo -m` matrix and
// imported again, must give the same tokens (the reconstruction is exact on any tree's matrix).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/views.hpp>

namespace {

using hetsched::node_topology;

void check_round_trip(const node_topology& t) {
  if (t.views().endpoints().empty()) return;
  auto matrix = hetsched::to_nvidia_smi_topo(t, false);
  if (!matrix) return;
  auto again = hetsched::import_nvidia_smi_topo(*matrix);
  if (!again) std::abort();
  const std::size_t n = t.views().endpoints().size();
  if (again->views().endpoints().size() != n) std::abort();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (again->views().relation(i, j).token() != t.views().relation(i, j).token()) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hetsched::detect_topology_format(text);
  hetsched::nvidia_smi_import_options options;
  for (const bool partial : {false, true}) {
    options.allow_partial = partial;
    auto t = hetsched::import_nvidia_smi_topo(text, options);
    if (t) check_round_trip(*t);
  }
  return 0;
}
