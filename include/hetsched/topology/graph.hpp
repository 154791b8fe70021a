// SPDX-License-Identifier: MIT
// The typed topology graph of one server (node_topology) and the builder that makes one.
//
// A node_topology is an immutable Boost.Graph of typed vertices (machine, package, NUMA node,
// host bridge, PCIe switch, GPU, NVSwitch, NIC) and typed links (PCIe, NVLink, SMP, network,
// internal containment) with bandwidth. Every vertex except the machine root has a locality
// parent; the parent edges form the locality tree (machine > package > NUMA node > host bridge >
// PCIe switches > devices) from which pair relations are derived. NVLink and SMP links are extra
// edges. Templates, importers and the cluster builder all produce node_topology values through
// node_topology_builder; build() validates and computes the derived views once (views.hpp).
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// What a topology vertex is. The first group lives inside a server; the second inside a
/// cluster (cluster_topology).
enum class vertex_kind : std::uint8_t {
  machine,        ///< The root of one server's hardware tree (hwloc's Machine).
  package,        ///< A CPU socket.
  numa_node,      ///< A NUMA domain; I/O attaches to the NUMA node it is local to.
  host_bridge,    ///< A PCIe host bridge / root complex (with its root ports).
  pcie_switch,    ///< A PCIe switch (upstream port plus its downstream ports).
  gpu,            ///< A GPU.
  nvswitch,       ///< An NVSwitch chip.
  nic,            ///< A network adapter (InfiniBand HCA, RoCE or Ethernet NIC).
  node,           ///< A server as a member of a cluster.
  rack,           ///< A rack of nodes (top-of-rack switch).
  network_tier,   ///< A network aggregation level above racks (pod, spine, core).
  nvlink_domain,  ///< A multi-node NVLink domain (NVL72-style clique).
  cluster,        ///< The root of a cluster.
};

/// Returns the lower-case name of `kind`, e.g. "pcie_switch".
[[nodiscard]] std::string_view to_string(vertex_kind kind) noexcept;

/// What a link is.
enum class link_kind : std::uint8_t {
  internal,    ///< Containment without a data path of its own (machine-package, package-NUMA).
  pcie,        ///< A PCIe link (generation and width).
  nvlink,      ///< A bonded set of `count` NVLinks of one generation.
  smp,         ///< The inter-socket interconnect (QPI/UPI, Infinity Fabric, X-Bus).
  infiniband,  ///< An InfiniBand network link.
  ethernet,    ///< An Ethernet (or RoCE) network link.
};

/// Returns the lower-case name of `kind`, e.g. "nvlink".
[[nodiscard]] std::string_view to_string(link_kind kind) noexcept;

/// Unidirectional bandwidth of a PCIe link in MB/s: per-lane payload rate times width
/// (gen1 250, gen2 500, gen3 985, gen4 1969, gen5 3938, gen6 7563 MB/s per lane); 0 if unknown.
[[nodiscard]] std::int64_t pcie_bandwidth_mb_s(unsigned generation, unsigned width) noexcept;

/// Properties of one vertex.
struct topo_vertex {
  vertex_kind kind = vertex_kind::machine;
  /// Unique within the topology: "GPU3", "NVSwitch0", "mlx5_0", "Package1", "NUMA3".
  std::string name;
  /// Locality parent; invalid() for the root.
  vertex_id parent = vertex_id::invalid();
  /// GPU index (0..n-1 as nvidia-smi numbers them), NIC index, or OS index of a package or NUMA
  /// node; -1 if not applicable.
  std::int32_t index = -1;
  /// PCI address "dddd:bb:dd.f" if known.
  std::string pci_bus_id;
  /// GPU model (GPUs only; empty if unknown).
  gpu_type model;
  /// GPU device memory or NUMA local memory in MiB; 0 if unknown.
  std::int64_t memory_mib = 0;
  /// NUMA affinity (OS index) of a GPU or NIC as the platform reports it; -1 if unknown. Usually
  /// equal to the NUMA ancestor in the tree, but kept separately because some machines report
  /// every GPU pair as SYS while the affinity columns still show the socket split.
  std::int32_t numa = -1;
  /// CPU affinity list as reported, e.g. "0-55,112-167"; empty if unknown.
  std::string cpuset;
  /// NIC port speed in MB/s; 0 if unknown or not a NIC.
  std::int64_t speed_mb_s = 0;
  /// NVSwitch fabric this switch belongs to (NVSwitches of one fabric connect every GPU attached
  /// to any of them); 0 by default. Only meaningful for vertex_kind::nvswitch.
  std::uint32_t fabric = 0;

  friend bool operator==(const topo_vertex&, const topo_vertex&) = default;
};

/// Properties of one link.
struct topo_link {
  link_kind kind = link_kind::internal;
  /// Number of bonded sub-links (NVLinks); 1 for other kinds.
  std::uint16_t count = 1;
  /// NVLink generation (1-5) or PCIe generation (1-6); 0 if unknown.
  std::uint8_t generation = 0;
  /// PCIe lanes; 0 if unknown or not PCIe.
  std::uint8_t width = 0;
  /// Unidirectional bandwidth of the whole link (all sub-links) in MB/s; 0 if unknown.
  std::int64_t bandwidth_mb_s = 0;

  friend bool operator==(const topo_link&, const topo_link&) = default;
};

/// Makes a PCIe link of `generation` and `width` with its bandwidth filled in.
[[nodiscard]] topo_link pcie_link(unsigned generation, unsigned width) noexcept;
/// Makes a bonded NVLink link of `count` links of `generation` with its bandwidth filled in.
[[nodiscard]] topo_link nvlink_link(unsigned count, unsigned generation) noexcept;
/// Makes an internal containment link.
[[nodiscard]] topo_link internal_link() noexcept;

/// One link as seen from outside the graph.
struct link_ref {
  vertex_id a;
  vertex_id b;
  topo_link link;

  friend bool operator==(const link_ref&, const link_ref&) = default;
};

class node_views;

/// The immutable topology of one server. Cheap to copy (shared state); safe to read
/// concurrently.
class node_topology {
 public:
  using graph_type =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, topo_vertex, topo_link>;

  /// An empty topology (no vertices); only useful as a placeholder before assignment.
  node_topology();

  /// Returns the topology's name (template name or the name given to the importer).
  [[nodiscard]] const std::string& name() const noexcept;
  /// Returns the number of vertices.
  [[nodiscard]] std::size_t vertex_count() const noexcept;
  /// Returns the number of links (tree and extra links).
  [[nodiscard]] std::size_t link_count() const noexcept;
  /// Returns the machine root (vertex 0).
  [[nodiscard]] vertex_id root() const noexcept { return vertex_id(0); }
  /// Returns the properties of `v`. Precondition: v < vertex_count().
  [[nodiscard]] const topo_vertex& vertex(vertex_id v) const noexcept;
  /// Returns the vertex named `name`, or nullopt.
  [[nodiscard]] std::optional<vertex_id> find(std::string_view name) const;
  /// Returns the GPUs ordered by GPU index (index i holds the vertex of GPU i).
  [[nodiscard]] std::span<const vertex_id> gpus() const noexcept;
  /// Returns the NICs ordered by NIC index.
  [[nodiscard]] std::span<const vertex_id> nics() const noexcept;
  /// Returns the NVSwitches in vertex order.
  [[nodiscard]] std::span<const vertex_id> nvswitches() const noexcept;
  /// Returns the vertices of `kind` in vertex order.
  [[nodiscard]] std::vector<vertex_id> vertices_of(vertex_kind kind) const;
  /// Returns the children of `v` in the locality tree, in vertex order.
  [[nodiscard]] std::span<const vertex_id> children(vertex_id v) const noexcept;
  /// Returns every link, tree links first, in insertion order.
  [[nodiscard]] std::vector<link_ref> links() const;
  /// Returns the links incident to `v`, in insertion order.
  [[nodiscard]] std::vector<link_ref> links_of(vertex_id v) const;
  /// Returns the link between `v` and its locality parent; precondition: v is not the root.
  [[nodiscard]] const topo_link& uplink(vertex_id v) const noexcept;
  /// Returns the derived views (pair relations, bandwidths, affinity groups), computed once by
  /// node_topology_builder::build().
  [[nodiscard]] const node_views& views() const noexcept;
  /// Returns the Boost graph for algorithms that need it. Vertex descriptors equal
  /// vertex_id::index().
  [[nodiscard]] const graph_type& graph() const noexcept;

  /// Structural equality: same name, vertices and links in the same order.
  friend bool operator==(const node_topology& a, const node_topology& b);

 private:
  friend class node_topology_builder;
  struct data;
  std::shared_ptr<const data> data_;
};

/// Builds a node_topology. Every add/connect call only records; build() validates the whole
/// topology and either returns it or an error naming the offending vertex or link.
class node_topology_builder {
 public:
  /// Starts a topology named `name` whose root is a machine vertex named `name`.
  explicit node_topology_builder(std::string name);

  /// Returns the machine root.
  [[nodiscard]] vertex_id root() const noexcept { return vertex_id(0); }
  /// Adds a vertex of `kind` below `parent` in the locality tree, joined by `uplink`; returns it.
  /// Precondition: parent was returned by this builder.
  vertex_id add(vertex_kind kind, std::string name, vertex_id parent, topo_link uplink);
  /// Adds a vertex with all its properties (its `parent` field is the locality parent).
  vertex_id add(topo_vertex vertex, topo_link uplink);
  /// Adds a non-tree link (NVLink, SMP, or a second PCIe path) between `a` and `b`.
  void connect(vertex_id a, vertex_id b, topo_link link);
  /// Returns a vertex for editing its properties before build().
  [[nodiscard]] topo_vertex& vertex(vertex_id v) noexcept;
  [[nodiscard]] const topo_vertex& vertex(vertex_id v) const noexcept;
  /// Returns the number of vertices added so far (the root included).
  [[nodiscard]] std::size_t vertex_count() const noexcept { return vertices_.size(); }
  /// Returns the vertex named `name`, or nullopt.
  [[nodiscard]] std::optional<vertex_id> find(std::string_view name) const;

  /// Validates and returns the topology. Errors (invalid_argument unless noted): duplicate
  /// vertex names (already_exists); a GPU without an index, duplicate GPU indices, or indices not
  /// 0..n-1; NVLinks touching anything but GPUs and NVSwitches; a self link; a link with a
  /// negative bandwidth or zero count; network links inside a server; a server tree kind
  /// (package..nic) below a device; more than max_vertices vertices (out_of_range).
  [[nodiscard]] result<node_topology> build() &&;

  /// The most vertices one server may have; larger inputs are refused as absurd.
  static constexpr std::size_t max_vertices = 1u << 16;

 private:
  struct pending_link {
    vertex_id a;
    vertex_id b;
    topo_link link;
  };
  std::string name_;
  std::vector<topo_vertex> vertices_;
  std::vector<topo_link> uplinks_;
  std::vector<pending_link> extra_links_;
};

}  // namespace hetsched
