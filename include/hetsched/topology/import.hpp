// SPDX-License-Identifier: MIT
// Text importers for node topologies: NCCL topology XML and `nvidia-smi topo -m` output.
//
// Both importers take text the caller has read (no I/O) and return a node_topology built through
// node_topology_builder, or an error whose message names the offending line and item. NCCL XML
// (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE) carries the PCIe tree, so it maps one to one onto the
// locality tree. `nvidia-smi topo -m` carries only the pair relation matrix; the importer rebuilds
// the smallest tree whose derived relations (views.hpp) reproduce every known non-NVLink cell.
// detect_topology_format() tells the formats apart by content, and import_topology() is the one
// entry point that detects and imports any of them. Inputs larger than max_topology_text_bytes
// are refused with out_of_range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/topology/graph.hpp>

namespace hetsched {

/// The largest topology text the importers accept (16 MiB).
inline constexpr std::size_t max_topology_text_bytes = std::size_t{16} << 20;

/// The most devices (GPUs plus NICs; for NCCL XML also <cpu> elements) an imported topology may
/// have; derived views cost O(n^3) in the GPU count, so larger inputs are refused as absurd.
inline constexpr std::size_t max_import_devices = 1024;

/// A topology text format.
enum class topology_format : std::uint8_t {
  hwloc_xml,        ///< hwloc XML (`<topology>` root).
  nccl_xml,         ///< NCCL topology XML (`<system>` root).
  nvidia_smi_topo,  ///< `nvidia-smi topo -m` output.
  json,             ///< hetsched's JSON topology format.
  unknown,          ///< None of the above.
};

/// Returns the lower-case name of `format`, e.g. "nccl_xml".
[[nodiscard]] std::string_view to_string(topology_format format) noexcept;

/// Returns the format of `text` judged from its content: the root element of an XML document
/// (`<topology>` hwloc, `<system>` NCCL), a leading '{' (JSON), or a first non-comment line that
/// is a `topo -m` header naming GPU0. Leading whitespace, a UTF-8 BOM, XML declarations and
/// comments are skipped. Only looks, never validates: the importer still reports errors.
[[nodiscard]] topology_format detect_topology_format(std::string_view text) noexcept;

/// Options of import_nccl_xml().
struct nccl_import_options {
  /// Name of the topology and of its machine root vertex.
  std::string name = "nccl";
  /// Model given to every GPU (NCCL XML records only the SM version); empty leaves it unknown.
  /// Its catalogue entry, if any, also supplies device memory and, for GPUs without `sm`, the
  /// NVLink generation.
  gpu_type gpu_model;
};

/// Returns the topology described by NCCL topology XML `xml`.
///
/// Mapping: each <cpu> is a package and a NUMA node (index numaid, cpuset = affinity as given;
/// NCCL cannot tell sockets from NUMA nodes); each <pci> directly below a <cpu> gets its own host
/// bridge; class 0x0604xx (and, as in NCCL, any class not listed here) is a PCIe switch, 0x03xxxx
/// a GPU, 0x02xxxx a NIC (one per <net>, else one), 0x068000 an NVSwitch; PCIe uplinks take
/// link_speed/link_width. GPUs take <gpu dev> as index if every GPU has it, else bus-id order;
/// NICs are numbered in bus-id order. <nvlink> to a GPU becomes a GPU-GPU NVLink; to an NVSwitch
/// (any other tclass but a CPU's 0x068001) a link to the single synthetic "NVSwitch0", NCCL's
/// one-NVS model; links to GPUs absent from the file and to CPUs are ignored as NCCL does. The
/// generation comes from sm (6x:1, 7x:2, 8x:3, 9x:4, 10x and later:5). Package pairs get an SMP
/// link with NCCL's inter-CPU bandwidth. Errors (invalid_argument unless noted): malformed XML,
/// unknown elements or misplaced ones (naming element and line), missing busid/class/numaid/
/// count/tclass, bad numbers, bus ids or link speeds, duplicate bus ids or numaids
/// (already_exists), inconsistent GPU dev numbering, more than max_import_devices devices or
/// CPUs or too large input (out_of_range).
/// Deterministic.
[[nodiscard]] result<node_topology> import_nccl_xml(std::string_view xml,
                                                    const nccl_import_options& options = {});

/// Options of import_nvidia_smi_topo().
struct nvidia_smi_import_options {
  /// Name of the topology and of its machine root vertex.
  std::string name = "nvidia-smi";
  /// Model given to every GPU; empty leaves it unknown. Its catalogue entry, if any, supplies
  /// memory, the PCIe generation of the GPU uplinks and the NVLink generation.
  gpu_type gpu_model;
  /// NVLink generation of every NV# link (1-5); 0 takes it from gpu_model, else infers it from
  /// the largest NV# cell: >= 13 links gen 4, >= 7 gen 3, else gen 2. The inference cannot see
  /// NVLink 1 (P100) or 5 (B200) nor small bridges such as NV4 on A40: pass gpu_model there.
  unsigned nvlink_generation = 0;
  /// Accepts matrices with rows missing (published excerpts): cells are then taken from the
  /// other device's row, and pairs with neither row stay unknown (no NVLink, no PCIe constraint).
  bool allow_partial = false;
};

/// Returns the topology reconstructed from `nvidia-smi topo -m` output `text`.
///
/// Format: '#' lines and blank lines are ignored; the first other line is the header (device
/// columns GPU<n>, NIC<n>, mlx5_<n> or any other NIC name, then optional "CPU Affinity",
/// "NUMA Affinity" and "GPU NUMA ID"); then one row per device; everything from "Legend:" on is
/// ignored except a "NIC Legend:" block ("NIC0: mlx5_0") that renames NICs. Cells are split on
/// runs of blanks; ANSI escape sequences count as blanks.
///
/// Reconstruction: NV<n> cells become GPU-GPU NVLinks. The other known cells are grouped by nested
/// union-find (PIX, PIX|PXB, <=PHB, <=NODE); each <=NODE group of several devices is a NUMA node
/// (index = the NUMA affinity its members agree on unless another group claims it too, else a new
/// id above every reported one) inside the package of that NUMA id (one package per NUMA id:
/// topo -m cannot tell sockets from NUMA nodes); each <=PHB group a host bridge; each PIX|PXB
/// group of several devices a PCIe switch holding its PIX groups as child switches. A device SYS
/// to all others gets a host bridge under the machine root. Every reported NUMA id has a NUMA
/// vertex, and a matrix with SYS cells has at least two. GPUs keep their reported NUMA and CPU
/// affinity in topo_vertex::numa and cpuset. The derived views then reproduce every known
/// non-NVLink cell; a matrix no PCIe tree can produce is refused.
///
/// Errors (invalid_argument unless noted): no header, unknown tokens (naming token, line and
/// column), ragged rows, asymmetric cells (naming both), X off the diagonal or missing on it,
/// NV# not between two GPUs, duplicate devices or rows (already_exists), a row for a device not
/// in the header (not_found), missing rows unless allow_partial, more than
/// max_import_devices devices or too large input (out_of_range). Deterministic.
[[nodiscard]] result<node_topology> import_nvidia_smi_topo(
    std::string_view text, const nvidia_smi_import_options& options = {});

/// Returns `topology` as `nvidia-smi topo -m` text that import_nvidia_smi_topo() reads back:
/// a tab-separated header GPU0.. NIC0.. "CPU Affinity" "NUMA Affinity", one row per endpoint with
/// the relation tokens (NV# for NVLinked GPU pairs, else the PCIe level) and, on GPU rows, the
/// affinities ("N/A" when unknown); with `legend`, the legend and a "NIC Legend" naming the NICs.
/// Errors: failed_precondition if a pair's relation is unknown or has more than 255 NVLinks (no
/// topo -m token can say it).
[[nodiscard]] result<std::string> to_nvidia_smi_topo(const node_topology& topology,
                                                     bool legend = true);

/// Imports hwloc XML (hetsched::hwloc's import_hwloc_xml, hwloc_import.hpp): the text and the
/// topology name.
using hwloc_xml_importer = result<node_topology> (*)(std::string_view xml, std::string_view name);

/// Options of import_topology(); each applies to the formats that have it.
struct topology_import_options {
  /// Name of the topology and of its machine root vertex; empty: the importer's default ("nccl",
  /// "nvidia-smi", "hwloc"). JSON documents carry their own name.
  std::string name;
  gpu_type gpu_model;              ///< NCCL XML and nvidia-smi (their options' gpu_model).
  unsigned nvlink_generation = 0;  ///< nvidia-smi (nvidia_smi_import_options).
  bool allow_partial = false;      ///< nvidia-smi (nvidia_smi_import_options).
  /// The hwloc XML importer; null (the core library alone) refuses hwloc XML. Set by
  /// import_topology_with_hwloc() (hwloc_import.hpp).
  hwloc_xml_importer hwloc = nullptr;
};

/// The one entry point for topology text (the inspector hetsched-topo, the C API and Python use
/// it): detects the format (detect_topology_format()) and calls its importer with `options`.
/// Errors: those of the importer; failed_precondition for hwloc XML without options.hwloc
/// ("hwloc XML needs the hetsched::hwloc importer"); invalid_argument for text of no known format
/// ("unrecognised topology text: expected hwloc XML, NCCL topology XML, nvidia-smi topo -m output
/// or hetsched topology JSON").
[[nodiscard]] result<node_topology> import_topology(std::string_view text,
                                                    const topology_import_options& options = {});

}  // namespace hetsched
