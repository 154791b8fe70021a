// SPDX-License-Identifier: MIT
// Import of hwloc topologies (an hwloc 2.x XML buffer, or live discovery) into node_topology.
//
// Part of the separate target hetsched::hwloc (the only code that includes <hwloc.h>); the core
// never does I/O. The importer loads the topology with hwloc (I/O filter KEEP_ALL, so PCI
// devices, bridges, OS devices and the NVLinkBandwidth matrix survive) and maps it to the typed
// graph of graph.hpp: machine > packages > NUMA nodes > host bridges > PCIe switches > GPUs,
// NVSwitches and NICs, plus SMP links between packages and NVLinks from NVLinkBandwidth. The
// mapping rules below are part of the contract: views.hpp derives PIX/PXB/PHB/NODE/SYS from the
// tree they produce. Not included in hetsched/hetsched.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/import.hpp>

namespace hetsched {

/// Options of the hwloc importers.
struct hwloc_import_options {
  /// Name of the topology and of its machine root vertex.
  std::string name = "hwloc";
};

/// The largest XML buffer import_hwloc_xml accepts, in bytes (the XML of a large real server is
/// well under 10 MB).
inline constexpr std::size_t max_hwloc_xml_bytes = std::size_t{64} << 20;

/// The most packages (sockets) an imported machine may have; every pair gets an SMP link.
inline constexpr std::size_t max_hwloc_packages = 256;

/// Returns the node topology described by the hwloc 2.x XML document `xml` (as written by
/// `lstopo foo.xml` or hwloc_topology_export_xml). Never reads files or the local machine.
/// Deterministic: the same buffer gives an equal topology.
///
/// Mapping (see reference/topology_and_packing.md §2 and §4):
/// - Packages become package vertices named "Package<os_index>" (index = OS index, cpuset as a
///   list string such as "0-27,56-83"). NUMA nodes become numa_node vertices "NUMA<os_index>"
///   (memory_mib = local memory) below their enclosing package, or below the machine when no
///   package encloses them. Containment edges are internal links.
/// - Every pair of packages gets an SMP link whose bandwidth follows NCCL's inter-CPU figures from
///   the CPUVendor/CPUFamilyNumber/CPUModelNumber infos: Intel Broadwell and older 6000 MB/s,
///   Skylake (model >= 0x55) 10000, Sapphire Rapids (>= 0x8F) 22000, Emerald Rapids (>= 0xCF)
///   40000, AMD/Hygon 16000, Zhaoxin 6000 (Yongfeng 9000), POWER 32000, ARM 6000; 0 if unknown.
/// - An I/O subtree hangs below the NUMA node local to its non-I/O hwloc parent when exactly one
///   NUMA node is (its nodeset has weight 1), else below the enclosing package, else the machine.
/// - PCIe: the top bridge of each I/O subtree becomes a host_bridge vertex ("HostBridge<k>", in
///   tree order). Below it, a bridge at an odd distance from the host bridge (a root port, or a
///   switch's downstream port) is merged into the vertex above it; a bridge at an even distance
///   >= 2 (a switch's upstream port) becomes a pcie_switch vertex ("PCIeSwitch<k>", pci_bus_id of
///   the upstream port). So devices behind the downstream ports of one switch are direct
///   children of that switch (PIX), nested switches give PXB, and devices under root ports of
///   one host bridge give PHB. The distance is counted in the tree, not read from the XML's
///   `depth` attribute. Host bridges and switches with no kept device below them are dropped.
/// - PCIe edges carry pcie_link(gen, width) when hwloc's link speed (GB/s) matches a
///   generation/width pair (the widest width wins: 15.75 GB/s is gen3 x16), else a PCIe link with
///   only the bandwidth, and an unknown-speed PCIe link when hwloc reports 0.
/// - GPUs: PCI devices with a compute OS device below them (name cuda*, nvml*, opencl*, rsmi*,
///   ze*, or subtype/Backend CUDA, NVML, OpenCL, RSMI, LevelZero; OS device type GPU or COPROC;
///   an OpenCL device whose OpenCLDeviceType is not GPU does not count), or 3D controllers
///   (class 0x0302) with a DRM OS device (card*, renderD*). One vertex per PCI device however
///   many OS devices it has. Display-class devices with only DRM or no OS device (BMC VGA chips,
///   the display devices of the 24em64t file) are not GPUs. GPU index: GPUs with an nvml number
///   (else a cuda number) first, by that number, then by PCI bus id; names "GPU<i>"; model =
///   normalize_gpu_model(GPUModel); memory from find_gpu_spec, else CUDAGlobalMemorySize or
///   OpenCLGlobalMemorySize; numa = the single NUMA node local to it, else -1.
/// - NVSwitches: PCI devices with subtype "NVSwitch" or NVIDIA class 0x0680, named
///   "NVSwitch<k>" in bus id order, fabric 0. NICs: PCI devices with an OpenFabrics or network OS
///   device (not already a GPU or NVSwitch), named after the OpenFabrics device (mlx5_0; also
///   recognised by name on old files that type it as network), else the first network device
///   (eth0); NIC index in bus id order. Other PCI devices are dropped.
/// - NVLinks come from the "NVLinkBandwidth" distances (unidirectional MB/s, 0 = no link,
///   diagonal ignored, the larger of the two directions used). A GPU-NVSwitch or GPU-GPU entry
///   becomes nvlink_link(value / per-link rate, generation) with the rate and generation from
///   the GPU's gpu_spec, else 25000 MB/s (generation 2), or 20000 (generation 1) when the value
///   is a multiple of 20000 but not of 25000. Entries touching other objects (NVSwitch trunks,
///   POWER CPUs) are ignored. The views then count GPU pairs through the NVSwitch fabric.
///
/// Inputs that crash or leak inside hwloc 2.9.0 or libxml2 are refused before hwloc sees them:
/// NUL bytes or a first byte other than '<' or blank (UCS-4/EBCDIC autodetection), a declared
/// encoding other than UTF-8/ASCII/ISO-8859-1, an <object> tag not written as name="value"
/// attributes of [a-z_], a cpuset/nodeset attribute that is not an hwloc hex bitmap, or a
/// cpuset (nodeset) without its complete_cpuset (complete_nodeset) or the reverse. hwloc itself
/// may still print a warning on stderr for some bad input; the result carries the error.
///
/// Errors: invalid_argument for an empty buffer, the refusals above, XML hwloc cannot parse, or a
/// document it rejects (the message says which and quotes hwloc's errno); out_of_range for a buffer
/// over max_hwloc_xml_bytes, more than max_hwloc_packages packages, an NVLink entry of more than 64
/// links, or a topology over node_topology_builder::max_vertices; otherwise the builder's error.
[[nodiscard]] result<node_topology> import_hwloc_xml(std::string_view xml,
                                                     const hwloc_import_options& options = {});

/// Returns the node topology of the machine this process runs on, discovered live by hwloc with
/// the same mapping as import_hwloc_xml. Reads /sys and /proc through hwloc (and whatever hwloc
/// plugins are installed: CUDA, NVML, OpenCL, RSMI); hwloc environment variables such as
/// HWLOC_XMLFILE apply. On Linux the libpciaccess "pci" component is disabled: the linux backend
/// reads the same PCI tree from sysfs, and the component leaks memory on every load. Errors:
/// failed_precondition if hwloc cannot discover the machine; otherwise as import_hwloc_xml.
[[nodiscard]] result<node_topology> discover_local_topology(
    const hwloc_import_options& options = {});

/// Returns import_topology(text, options) with hwloc XML read by import_hwloc_xml (the
/// topology named options.name, or "hwloc" when it is empty).
[[nodiscard]] result<node_topology> import_topology_with_hwloc(
    std::string_view text, topology_import_options options = {});

}  // namespace hetsched
