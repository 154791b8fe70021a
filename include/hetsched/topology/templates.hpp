// SPDX-License-Identifier: MIT
// Built-in node templates that reproduce real machines (../shared/data/topologies).
//
// Each template is built with node_topology_builder from the machine's published description: the
// NVLink wiring, PCIe switch tree, NUMA layout and NICs. GPU index sets are never hard-coded in
// policies: they read relations from the views. What each template reproduces, and which parts were
// inferred because the published data does not show them, is written next to its enumerator and
// in docs/topology.md.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include <hetsched/model/result.hpp>
#include <hetsched/topology/graph.hpp>

namespace hetsched {

/// The built-in node templates.
enum class node_template : unsigned char {
  /// DGX-1 with 8x V100-SXM2-16GB, hybrid cube-mesh NVLink (the DLPerf/go-gpuallocator wiring),
  /// 2 Skylake sockets, 4 PCIe switches with 2 GPUs and 1 NIC each (mlx5_0 with GPUs 2 and 3).
  dgx1_v100,
  /// DGX-2(H) with 16x V100-SXM3-32GB and 12 NVSwitches (NV6 for every pair, 150 GB/s), the PCIe
  /// tree of hwloc's nvidiaDGX2.xml (PIX pairs, PXB quads, NODE per socket) and 10 mlx5 NICs.
  dgx2,
  /// DGX A100 with 8x A100-SXM4-80GB, 6 NVSwitches (NV12), 2 AMD Rome sockets in NPS4 (8 NUMA
  /// nodes; GPUs on NUMA 3,3,1,1,7,7,5,5), 4 PCIe switch trees of 2 GPUs + 2 NICs, 2 storage NICs.
  dgx_a100,
  /// DGX/HGX H100 with 8x H100-SXM5-80GB, 4 NVSwitches (NV18), 2 Sapphire Rapids sockets, one NIC
  /// per GPU behind the same PCIe switch (PIX), 2 more NICs; devices on different switches are SYS
  /// as nvidia-smi reports them on this machine, GPUs 0-3 local to NUMA 0.
  hgx_h100,
  /// PCIe-only 8-GPU two-socket server (8x RTX 4090, 2x 56 cores): every GPU pair SYS as reported,
  /// NUMA affinity 0-3 / 4-7, 2 NIC ports behind GPU 6's host bridge.
  pcie_8gpu,
  /// 4-GPU PCIe workstation (4x Quadro RTX 8000, two sockets, NVLink bridges NV2 on GPU pairs
  /// (0,3) and (1,2)), as go-gpuallocator's New4xRTX8000Node fixture.
  workstation_4gpu,
};

/// Returns every template, in declaration order.
[[nodiscard]] std::span<const node_template> all_node_templates() noexcept;

/// Returns the template's name: "dgx1-v100", "dgx2", "dgx-a100", "hgx-h100", "pcie-8gpu",
/// "workstation-4gpu".
[[nodiscard]] std::string_view to_string(node_template t) noexcept;

/// Returns the template named `name` (to_string names; "dgx-h100" is accepted for hgx-h100), or
/// nullopt.
[[nodiscard]] std::optional<node_template> parse_node_template(std::string_view name) noexcept;

/// Returns the topology of template `t`. Deterministic; cheap enough to call per cluster (the
/// cluster builder calls it once per distinct template and shares the result between nodes).
[[nodiscard]] result<node_topology> make_node_template(node_template t);

}  // namespace hetsched
