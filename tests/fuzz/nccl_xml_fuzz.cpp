// SPDX-License-Identifier: MIT
// libFuzzer target for import_nccl_xml() (and through it the private XML reader).
//
// An accepted topology's relation matrix, printed as `nvidia-smi topo -m` text, must import back
// to the same tokens: a cross-check of both importers and the derived views.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/views.hpp>

namespace {

using hetsched::node_topology;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hetsched::detect_topology_format(text);
  auto t = hetsched::import_nccl_xml(text);
  if (!t || t->views().endpoints().empty()) return 0;
  auto matrix = hetsched::to_nvidia_smi_topo(*t, false);
  if (!matrix || t->views().endpoints().size() > hetsched::max_import_devices) return 0;
  auto again = hetsched::import_nvidia_smi_topo(*matrix);
  if (!again) std::abort();
  const std::size_t n = t->views().endpoints().size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (again->views().relation(i, j).token() != t->views().relation(i, j).token()) std::abort();
    }
  }
  return 0;
}
