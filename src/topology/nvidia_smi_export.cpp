// SPDX-License-Identifier: MIT
// Export of a node topology as `nvidia-smi topo -m` text.
#include <fmt/format.h>

#include <string>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched {

result<std::string> to_nvidia_smi_topo(const node_topology& topology, bool legend) {
  const auto& v = topology.views();
  const auto endpoints = v.endpoints();
  // Columns are GPU<i> and NIC<i>, as current nvidia-smi prints them; the NIC Legend gives the
  // NICs' own names.
  auto column = [&](std::size_t k) {
    return k < v.gpu_count() ? fmt::format("GPU{}", k) : fmt::format("NIC{}", k - v.gpu_count());
  };
  std::string out;
  for (std::size_t k = 0; k < endpoints.size(); ++k) {
    out += '\t';
    out += column(k);
  }
  out += "\tCPU Affinity\tNUMA Affinity\n";
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    out += column(i);
    for (std::size_t j = 0; j < endpoints.size(); ++j) {
      const auto& r = v.relation(i, j);
      if (r.nvlinks > 255 || (r.nvlinks == 0 && r.pcie == pcie_relation::unknown)) {
        return make_error(errc::failed_precondition,
                          "topology '{}': the relation of {} and {} has no nvidia-smi token",
                          topology.name(), topology.vertex(endpoints[i]).name,
                          topology.vertex(endpoints[j]).name);
      }
      out += '\t';
      out += i == j ? std::string(" X ") : r.token();
    }
    if (i < v.gpu_count()) {
      // The GPU's own CPU affinity, else its NUMA node's.
      std::string cpus = topology.vertex(endpoints[i]).cpuset;
      if (cpus.empty() && v.gpu_numa(i) >= 0) {
        for (vertex_id n : topology.vertices_of(vertex_kind::numa_node)) {
          if (topology.vertex(n).index == v.gpu_numa(i)) cpus = topology.vertex(n).cpuset;
        }
      }
      // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict) on "\t" + std::string.
      out += '\t';
      out += cpus.empty() ? std::string("N/A") : cpus;
      out += '\t';
      out += v.gpu_numa(i) < 0 ? std::string("N/A") : std::to_string(v.gpu_numa(i));
    }
    out += "\n";
  }
  if (legend) {
    out +=
        "\nLegend:\n\n"
        "  X    = Self\n"
        "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
        "(e.g., QPI/UPI)\n"
        "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
        "Bridges within a NUMA node\n"
        "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
        "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
        "Bridge)\n"
        "  PIX  = Connection traversing at most a single PCIe bridge\n"
        "  NV#  = Connection traversing a bonded set of # NVLinks\n";
    if (v.nic_count() > 0) {
      out += "\nNIC Legend:\n\n";
      for (std::size_t k = 0; k < v.nic_count(); ++k) {
        out += fmt::format("  NIC{}: {}\n", k, topology.vertex(endpoints[v.gpu_count() + k]).name);
      }
    }
  }
  return out;
}

}  // namespace hetsched
