// SPDX-License-Identifier: MIT
// Built-in node templates. See templates.hpp and docs/topology.md for what each reproduces.
#include <fmt/format.h>

#include <array>
#include <string>
#include <utility>

#include <hetsched/topology/templates.hpp>

namespace hetsched {
namespace {

// Unidirectional NIC speeds in MB/s.
constexpr std::int64_t edr_mb_s = 12500;  // 100 Gb/s
constexpr std::int64_t hdr_mb_s = 25000;  // 200 Gb/s
constexpr std::int64_t ndr_mb_s = 50000;  // 400 Gb/s
// Nominal host memory per NUMA node is given in GiB of MiB units.
constexpr std::int64_t gib = 1024;
// NCCL's inter-CPU bandwidths in MB/s.
constexpr std::int64_t skylake_smp_mb_s = 10000;
constexpr std::int64_t amd_smp_mb_s = 16000;
constexpr std::int64_t sapphire_rapids_smp_mb_s = 22000;

constexpr std::size_t no_numa = static_cast<std::size_t>(-1);

std::int32_t as_index(std::size_t i) { return i == no_numa ? -1 : static_cast<std::int32_t>(i); }

// Names vertices and fills the fields the templates share.
class machine_builder {
 public:
  machine_builder(std::string name, gpu_type model, unsigned pcie_gen)
      : b_(std::move(name)), model_(model), pcie_gen_(pcie_gen) {}

  vertex_id package(std::size_t index, std::string cpuset) {
    topo_vertex v;
    v.kind = vertex_kind::package;
    v.name = fmt::format("Package{}", index);
    v.parent = b_.root();
    v.index = as_index(index);
    v.cpuset = std::move(cpuset);
    return b_.add(std::move(v), internal_link());
  }
  vertex_id numa(vertex_id package, std::size_t index, std::string cpuset,
                 std::int64_t memory_mib) {
    topo_vertex v;
    v.memory_mib = memory_mib;
    v.kind = vertex_kind::numa_node;
    v.name = fmt::format("NUMA{}", index);
    v.parent = package;
    v.index = as_index(index);
    v.cpuset = std::move(cpuset);
    return b_.add(std::move(v), internal_link());
  }
  vertex_id host_bridge(vertex_id parent) {
    return b_.add(vertex_kind::host_bridge, fmt::format("HostBridge{}", host_bridges_++), parent,
                  internal_link());
  }
  vertex_id pcie_switch(vertex_id parent, unsigned width = 16) {
    return b_.add(vertex_kind::pcie_switch, fmt::format("PCIeSwitch{}", switches_++), parent,
                  pcie_link(pcie_gen_, width));
  }
  vertex_id gpu(vertex_id parent, std::size_t index, std::size_t numa = no_numa,
                std::string cpuset = {}) {
    topo_vertex v;
    v.kind = vertex_kind::gpu;
    v.name = fmt::format("GPU{}", index);
    v.parent = parent;
    v.index = as_index(index);
    v.model = model_;
    if (auto spec = find_gpu_spec(model_)) v.memory_mib = spec->memory_mib;
    v.numa = as_index(numa);
    v.cpuset = std::move(cpuset);
    return b_.add(std::move(v), pcie_link(pcie_gen_, 16));
  }
  vertex_id nic(vertex_id parent, std::size_t index, std::string name, std::int64_t speed,
                std::size_t numa = no_numa) {
    topo_vertex v;
    v.kind = vertex_kind::nic;
    v.name = std::move(name);
    v.parent = parent;
    v.index = as_index(index);
    v.speed_mb_s = speed;
    v.numa = as_index(numa);
    return b_.add(std::move(v), pcie_link(pcie_gen_, 16));
  }
  vertex_id nvswitch(vertex_id parent, topo_link uplink) {
    return b_.add(vertex_kind::nvswitch, fmt::format("NVSwitch{}", nvswitches_++), parent, uplink);
  }
  void nvlink(vertex_id a, vertex_id b, unsigned count, unsigned generation) {
    b_.connect(a, b, nvlink_link(count, generation));
  }
  void smp(vertex_id a, vertex_id b, std::int64_t bandwidth) {
    b_.connect(a, b, topo_link{link_kind::smp, 1, 0, 0, bandwidth});
  }
  [[nodiscard]] vertex_id root() const { return b_.root(); }
  [[nodiscard]] result<node_topology> build() && { return std::move(b_).build(); }

 private:
  node_topology_builder b_;
  gpu_type model_;
  unsigned pcie_gen_;
  unsigned host_bridges_ = 0;
  unsigned switches_ = 0;
  unsigned nvswitches_ = 0;
};

result<node_topology> make_dgx1_v100() {
  machine_builder m("dgx1-v100", gpu_type("V100-SXM2-16GB"), 3);
  const std::array<std::string, 2> cpus{"0-11,24-35", "12-23,36-47"};
  std::array<vertex_id, 8> gpu{};
  std::array<vertex_id, 2> pkg{};
  // Switch k holds GPUs 2k and 2k+1 and one NIC; mlx5_0 sits with GPUs 2 and 3 as in the
  // published matrix.
  constexpr std::array<std::size_t, 4> nic_of_switch{1, 0, 2, 3};
  for (std::size_t p = 0; p < 2; ++p) {
    pkg[p] = m.package(p, cpus[p]);
    const vertex_id numa = m.numa(pkg[p], p, cpus[p], 256 * gib);
    for (std::size_t s = 2 * p; s < 2 * p + 2; ++s) {
      const vertex_id sw = m.pcie_switch(m.host_bridge(numa));
      gpu[2 * s] = m.gpu(sw, 2 * s);
      gpu[2 * s + 1] = m.gpu(sw, 2 * s + 1);
      m.nic(sw, nic_of_switch[s], fmt::format("mlx5_{}", nic_of_switch[s]), edr_mb_s);
    }
  }
  m.smp(pkg[0], pkg[1], skylake_smp_mb_s);
  // Hybrid cube-mesh: 6 NVLink2 ports per GPU.
  constexpr std::array<std::array<std::size_t, 3>, 16> wiring{{{0, 1, 1},
                                                               {0, 2, 1},
                                                               {0, 3, 2},
                                                               {0, 4, 2},
                                                               {1, 2, 2},
                                                               {1, 3, 1},
                                                               {1, 5, 2},
                                                               {2, 3, 2},
                                                               {2, 6, 1},
                                                               {3, 7, 1},
                                                               {4, 5, 1},
                                                               {4, 6, 1},
                                                               {4, 7, 2},
                                                               {5, 6, 2},
                                                               {5, 7, 1},
                                                               {6, 7, 2}}};
  for (const auto& [a, b, n] : wiring) m.nvlink(gpu[a], gpu[b], static_cast<unsigned>(n), 2);
  return std::move(m).build();
}

result<node_topology> make_dgx2() {
  machine_builder m("dgx2", gpu_type("V100-SXM3-32GB"), 3);
  const std::array<std::string, 2> cpus{"0-23,48-71", "24-47,72-95"};
  std::array<vertex_id, 2> pkg{};
  std::array<vertex_id, 2> numa{};
  std::array<vertex_id, 16> gpu{};
  std::array<vertex_id, 12> nvs{};
  std::size_t nic = 0;
  for (std::size_t p = 0; p < 2; ++p) {
    pkg[p] = m.package(p, cpus[p]);
    numa[p] = m.numa(pkg[p], p, cpus[p], 768 * gib);
    // Two host bridges per socket, each with a top switch over two leaf switches of 2 GPUs and
    // 1 NIC; the NVSwitch baseboard hangs off one top switch per socket (the second on socket 0,
    // the first on socket 1, as in hwloc's nvidiaDGX2.xml).
    for (std::size_t h = 0; h < 2; ++h) {
      const vertex_id top = m.pcie_switch(m.host_bridge(numa[p]));
      for (std::size_t leaf = 0; leaf < 2; ++leaf) {
        const vertex_id sw = m.pcie_switch(top);
        const std::size_t first = 8 * p + 4 * h + 2 * leaf;
        gpu[first] = m.gpu(sw, first);
        gpu[first + 1] = m.gpu(sw, first + 1);
        m.nic(sw, nic, fmt::format("mlx5_{}", nic), edr_mb_s);
        ++nic;
      }
      if (h == 1 - p) {
        const vertex_id branch = m.pcie_switch(top, 4);
        for (std::size_t k = 0; k < 6; ++k) nvs[6 * p + k] = m.nvswitch(branch, pcie_link(3, 1));
      }
    }
  }
  // Two more ports (in-band management / storage) on socket 1.
  const vertex_id extra = m.host_bridge(numa[1]);
  m.nic(extra, nic, fmt::format("mlx5_{}", nic), edr_mb_s);
  ++nic;
  m.nic(extra, nic, fmt::format("mlx5_{}", nic), edr_mb_s);
  m.smp(pkg[0], pkg[1], skylake_smp_mb_s);
  // Each GPU has one NVLink2 to each of the 6 NVSwitches of its baseboard; the baseboards are
  // trunked, so all 12 form one fabric.
  for (std::size_t g = 0; g < 16; ++g) {
    for (std::size_t k = 0; k < 6; ++k) m.nvlink(gpu[g], nvs[6 * (g / 8) + k], 1, 2);
  }
  return std::move(m).build();
}

result<node_topology> make_dgx_a100() {
  machine_builder m("dgx-a100", gpu_type("A100-SXM4-80GB"), 4);
  std::array<vertex_id, 2> pkg{};
  std::array<vertex_id, 8> numa{};
  auto numa_cpus = [](std::size_t k) {
    return fmt::format("{}-{},{}-{}", 16 * k, 16 * k + 15, 128 + 16 * k, 128 + 16 * k + 15);
  };
  for (std::size_t p = 0; p < 2; ++p) {
    pkg[p] = m.package(
        p, fmt::format("{}-{},{}-{}", 64 * p, 64 * p + 63, 128 + 64 * p, 128 + 64 * p + 63));
    for (std::size_t k = 4 * p; k < 4 * p + 4; ++k) {
      numa[k] = m.numa(pkg[p], k, numa_cpus(k), 256 * gib);
    }
  }
  // GPU pair i (GPUs 2i, 2i+1) and compute NICs 2i, 2i+1 share a switch tree on NUMA node
  // numa_of_pair[i]: the GPUs sit on the top switch, the NICs on a leaf switch (GPU-NIC PXB).
  constexpr std::array<std::size_t, 4> numa_of_pair{3, 1, 7, 5};
  std::array<vertex_id, 8> gpu{};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t n = numa_of_pair[i];
    const vertex_id top = m.pcie_switch(m.host_bridge(numa[n]));
    gpu[2 * i] = m.gpu(top, 2 * i, n, numa_cpus(n));
    gpu[2 * i + 1] = m.gpu(top, 2 * i + 1, n, numa_cpus(n));
    const vertex_id leaf = m.pcie_switch(top);
    m.nic(leaf, 2 * i, fmt::format("mlx5_{}", 2 * i), hdr_mb_s, n);
    m.nic(leaf, 2 * i + 1, fmt::format("mlx5_{}", 2 * i + 1), hdr_mb_s, n);
  }
  // Storage NICs on NUMA 2 and 6 (SYS to every GPU, as published).
  m.nic(m.host_bridge(numa[2]), 8, "mlx5_8", hdr_mb_s, 2);
  m.nic(m.host_bridge(numa[6]), 9, "mlx5_9", hdr_mb_s, 6);
  m.smp(pkg[0], pkg[1], amd_smp_mb_s);
  // 6 NVSwitches (NVLink3); each GPU has 2 links to each.
  for (std::size_t k = 0; k < 6; ++k) {
    const vertex_id s = m.nvswitch(m.root(), internal_link());
    for (std::size_t g = 0; g < 8; ++g) m.nvlink(gpu[g], s, 2, 3);
  }
  return std::move(m).build();
}

result<node_topology> make_hgx_h100() {
  machine_builder m("hgx-h100", gpu_type("H100-SXM5-80GB"), 5);
  const std::array<std::string, 2> cpus{"0-55,112-167", "56-111,168-223"};
  std::array<vertex_id, 2> pkg{};
  for (std::size_t p = 0; p < 2; ++p) {
    pkg[p] = m.package(p, cpus[p]);
    m.numa(pkg[p], p, cpus[p], 1024 * gib);
  }
  // nvidia-smi reports SYS between devices behind different switches even within a socket, so
  // each switch hangs off its own host bridge below the machine; GPUs keep their NUMA affinity.
  constexpr std::array<std::size_t, 8> nic_of_gpu{0, 1, 2, 5, 6, 7, 8, 9};
  std::array<vertex_id, 8> gpu{};
  for (std::size_t g = 0; g < 8; ++g) {
    const std::size_t n = g < 4 ? 0 : 1;
    const vertex_id sw = m.pcie_switch(m.host_bridge(m.root()));
    gpu[g] = m.gpu(sw, g, n, cpus[n]);
    m.nic(sw, nic_of_gpu[g], fmt::format("mlx5_{}", nic_of_gpu[g]), ndr_mb_s, n);
  }
  for (std::size_t k : {3u, 4u})
    m.nic(m.host_bridge(m.root()), k, fmt::format("mlx5_{}", k), ndr_mb_s);
  m.smp(pkg[0], pkg[1], sapphire_rapids_smp_mb_s);
  // 4 NVSwitches (NVLink4); each GPU has 5, 4, 4 and 5 links to them: 18 in all.
  constexpr std::array<unsigned, 4> links{5, 4, 4, 5};
  for (unsigned count : links) {
    const vertex_id s = m.nvswitch(m.root(), internal_link());
    for (std::size_t g = 0; g < 8; ++g) m.nvlink(gpu[g], s, count, 4);
  }
  return std::move(m).build();
}

result<node_topology> make_pcie_8gpu() {
  machine_builder m("pcie-8gpu", gpu_type("RTX-4090"), 4);
  const std::array<std::string, 2> cpus{"0-55,112-167", "56-111,168-223"};
  std::array<vertex_id, 2> pkg{};
  for (std::size_t p = 0; p < 2; ++p) {
    pkg[p] = m.package(p, cpus[p]);
    m.numa(pkg[p], p, cpus[p], 256 * gib);
  }
  for (std::size_t g = 0; g < 8; ++g) {
    const std::size_t n = g < 4 ? 0 : 1;
    const vertex_id hb = m.host_bridge(m.root());
    m.gpu(hb, g, n, cpus[n]);
    if (g == 6) {
      const vertex_id sw = m.pcie_switch(hb);
      m.nic(sw, 0, "NIC0", edr_mb_s, n);
      m.nic(sw, 1, "NIC1", edr_mb_s, n);
    }
  }
  m.smp(pkg[0], pkg[1], sapphire_rapids_smp_mb_s);
  return std::move(m).build();
}

result<node_topology> make_workstation_4gpu() {
  machine_builder m("workstation-4gpu", gpu_type("RTX-8000"), 3);
  const std::array<std::string, 2> cpus{"0-15,32-47", "16-31,48-63"};
  std::array<vertex_id, 2> pkg{};
  std::array<vertex_id, 4> gpu{};
  for (std::size_t p = 0; p < 2; ++p) {
    pkg[p] = m.package(p, cpus[p]);
    const vertex_id numa = m.numa(pkg[p], p, cpus[p], 128 * gib);
    gpu[2 * p] = m.gpu(m.host_bridge(numa), 2 * p);
    gpu[2 * p + 1] = m.gpu(m.host_bridge(numa), 2 * p + 1);
  }
  m.smp(pkg[0], pkg[1], skylake_smp_mb_s);
  m.nvlink(gpu[0], gpu[3], 2, 2);
  m.nvlink(gpu[1], gpu[2], 2, 2);
  return std::move(m).build();
}

constexpr std::array<node_template, 6> templates{
    node_template::dgx1_v100, node_template::dgx2,      node_template::dgx_a100,
    node_template::hgx_h100,  node_template::pcie_8gpu, node_template::workstation_4gpu};

}  // namespace

std::span<const node_template> all_node_templates() noexcept { return templates; }

std::string_view to_string(node_template t) noexcept {
  switch (t) {
    case node_template::dgx1_v100: return "dgx1-v100";
    case node_template::dgx2: return "dgx2";
    case node_template::dgx_a100: return "dgx-a100";
    case node_template::hgx_h100: return "hgx-h100";
    case node_template::pcie_8gpu: return "pcie-8gpu";
    case node_template::workstation_4gpu: return "workstation-4gpu";
  }
  return "unknown";
}

std::optional<node_template> parse_node_template(std::string_view name) noexcept {
  for (node_template t : templates) {
    if (to_string(t) == name) return t;
  }
  if (name == "dgx-h100") return node_template::hgx_h100;
  return std::nullopt;
}

result<node_topology> make_node_template(node_template t) {
  switch (t) {
    case node_template::dgx1_v100: return make_dgx1_v100();
    case node_template::dgx2: return make_dgx2();
    case node_template::dgx_a100: return make_dgx_a100();
    case node_template::hgx_h100: return make_hgx_h100();
    case node_template::pcie_8gpu: return make_pcie_8gpu();
    case node_template::workstation_4gpu: return make_workstation_4gpu();
  }
  return make_error(errc::invalid_argument, "unknown node template {}", static_cast<int>(t));
}

}  // namespace hetsched
