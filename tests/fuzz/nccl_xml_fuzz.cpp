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

std::string endpoint_name(const node_topology& t, std::size_t k) {
  const auto& v = t.views();
  return k < v.gpu_count() ? "GPU" + std::to_string(k) : "NIC" + std::to_string(k - v.gpu_count());
}

// Prints the relation tokens of `t` as a complete matrix; empty if a token cannot be printed.
std::string as_matrix(const node_topology& t) {
  const auto& v = t.views();
  const std::size_t n = v.endpoints().size();
  std::string out;
  for (std::size_t j = 0; j < n; ++j) out += "\t" + endpoint_name(t, j);
  out += "\n";
  for (std::size_t i = 0; i < n; ++i) {
    out += endpoint_name(t, i);
    for (std::size_t j = 0; j < n; ++j) {
      const auto& r = v.relation(i, j);
      if (r.nvlinks > 255 || (r.nvlinks == 0 && r.pcie == hetsched::pcie_relation::unknown))
        return {};
      out += "\t" + r.token();
    }
    out += "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)hetsched::detect_topology_format(text);
  auto t = hetsched::import_nccl_xml(text);
  if (!t || t->views().endpoints().empty()) return 0;
  const std::string matrix = as_matrix(*t);
  if (matrix.empty() || t->views().endpoints().size() > hetsched::max_import_devices) return 0;
  auto again = hetsched::import_nvidia_smi_topo(matrix);
  if (!again) std::abort();
  const std::size_t n = t->views().endpoints().size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (again->views().relation(i, j).token() != t->views().relation(i, j).token()) std::abort();
    }
  }
  return 0;
}
