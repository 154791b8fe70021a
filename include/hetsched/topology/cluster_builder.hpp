// SPDX-License-Identifier: MIT
// The cluster topology (nodes grouped into racks, network tiers and NVLink domains) and its
// builder.
//
// A cluster_topology holds each node's node_topology by shared template (12,500 DGX A100 nodes
// share one topology and its views), a Boost graph of the cluster-level vertices (cluster, network
// tiers, racks, NVLink domains, nodes) joined by typed network links with bandwidth, and the
// cluster affinity tree above the nodes (node -> NVLink domain / rack -> tier 1 -> ... ->
// cluster). GPUs get dense cluster-wide device ids in node order. Racks, tiers and NVLink domains
// take consecutive nodes, so every group is a contiguous node range.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched {

/// An exact oversubscription ratio `down`:`up` (3:1 means the uplink carries a third of what the
/// members can send). 1:1 is non-blocking.
struct oversubscription {
  std::uint32_t down = 1;
  std::uint32_t up = 1;

  friend bool operator==(const oversubscription&, const oversubscription&) = default;
};

/// One node of a cluster.
struct cluster_node {
  std::string name;
  /// Index into cluster_topology::templates().
  std::uint32_t template_index = 0;
  /// The node's GPU i has cluster-wide device id first_gpu + i.
  device_id first_gpu;
  std::uint32_t gpu_count = 0;
  /// Bandwidth of the node's uplink to its rack in MB/s.
  std::int64_t uplink_mb_s = 0;
  /// Index of the node's leaf group in cluster_topology::groups().
  std::uint32_t group = 0;

  friend bool operator==(const cluster_node&, const cluster_node&) = default;
};

/// A group of the cluster affinity tree: the cluster, a network tier group, a rack, an NVLink
/// domain or a single node. Members are the nodes [first_node, first_node + node_count).
struct cluster_group {
  affinity_level level = affinity_level::cluster;
  /// Tier number for network_tier groups (1 is the first tier above racks); 0 otherwise.
  std::uint32_t tier = 0;
  std::string name;
  /// Parent group; the root (the cluster) is its own parent.
  std::uint32_t parent = 0;
  /// Child groups in node order.
  std::vector<std::uint32_t> children;
  node_id first_node;
  std::uint32_t node_count = 0;
  std::uint64_t gpu_count = 0;
  /// Uplink bandwidth to the parent group in MB/s (0 for the root).
  std::int64_t uplink_mb_s = 0;
  /// The group's vertex in cluster_topology::graph().
  std::uint32_t vertex = 0;

  friend bool operator==(const cluster_group&, const cluster_group&) = default;
};

/// Properties of a cluster-level vertex.
struct cluster_vertex {
  vertex_kind kind = vertex_kind::cluster;
  std::string name;
  std::uint32_t group = 0;  ///< Index into cluster_topology::groups().

  friend bool operator==(const cluster_vertex&, const cluster_vertex&) = default;
};

/// An immutable cluster topology. Cheap to copy (shared state); safe to read concurrently.
class cluster_topology {
 public:
  using graph_type = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                           cluster_vertex, topo_link>;

  cluster_topology();

  [[nodiscard]] const std::string& name() const noexcept;
  [[nodiscard]] std::size_t node_count() const noexcept;
  [[nodiscard]] std::size_t gpu_count() const noexcept;
  /// Returns node `n`. Precondition: n < node_count().
  [[nodiscard]] const cluster_node& node(node_id n) const noexcept;
  /// Returns every node in id order.
  [[nodiscard]] std::span<const cluster_node> nodes() const noexcept;
  /// Returns the topology of node `n` (shared with every node of the same template).
  [[nodiscard]] const node_topology& topology_of(node_id n) const noexcept;
  /// Returns the distinct node topologies, in order of first use.
  [[nodiscard]] std::span<const node_topology> templates() const noexcept;
  /// Returns the node named `name`, or not_found.
  [[nodiscard]] result<node_id> find_node(std::string_view name) const;
  /// Returns the node holding cluster-wide GPU `gpu`. O(log nodes). Precondition: gpu <
  /// gpu_count().
  [[nodiscard]] node_id node_of_gpu(device_id gpu) const noexcept;

  /// Returns the cluster affinity tree; group 0 is the cluster.
  [[nodiscard]] std::span<const cluster_group> groups() const noexcept;
  /// Returns the lowest group containing both nodes (the node's own group if a == b).
  [[nodiscard]] const cluster_group& common_group(node_id a, node_id b) const noexcept;
  /// Returns the highest level crossed between two GPUs: gpu if equal, node if on one node, else
  /// the level of common_group of their nodes (nvlink_domain, rack, network_tier or cluster).
  [[nodiscard]] affinity_level level_between(device_id a, device_id b) const noexcept;
  /// Returns the cluster-level graph (vertex descriptors equal cluster_group::vertex).
  [[nodiscard]] const graph_type& graph() const noexcept;

 private:
  friend class cluster_builder;
  struct data;
  std::shared_ptr<const data> data_;
};

/// Builds a cluster_topology: nodes first (in order), then how they are grouped.
class cluster_builder {
 public:
  explicit cluster_builder(std::string name);

  /// Adds `count` nodes of `topology`, named "<prefix>-<k>" with k counting from 0 per prefix
  /// (prefix defaults to the topology's name). `uplink_mb_s` < 0 means the sum of the node's NIC
  /// speeds.
  cluster_builder& add_nodes(const node_topology& topology, std::size_t count,
                             std::string prefix = {}, std::int64_t uplink_mb_s = -1);
  /// Adds `count` nodes of a built-in template.
  cluster_builder& add_nodes(node_template t, std::size_t count, std::string prefix = {},
                             std::int64_t uplink_mb_s = -1);
  /// Groups consecutive nodes into racks of `nodes_per_rack` (the last one may be smaller); the
  /// rack uplink carries the members' total divided by `ratio`.
  cluster_builder& racks(std::size_t nodes_per_rack, oversubscription ratio = {},
                         link_kind network = link_kind::infiniband);
  /// Adds a network tier above the previous level (racks, or the tier added before): groups of
  /// `members_per_group` consecutive members (the last one may be smaller), e.g. "pod", "spine".
  cluster_builder& tier(std::string name, std::size_t members_per_group,
                        oversubscription ratio = {});
  /// Groups consecutive nodes into multi-node NVLink domains of `nodes_per_domain` nodes whose GPUs
  /// reach each other over NVLink at `gpu_nvlink_mb_s` per GPU. A domain must fit inside one rack
  /// or be made of whole racks.
  cluster_builder& nvlink_domains(std::size_t nodes_per_domain, std::int64_t gpu_nvlink_mb_s);

  /// Validates and returns the cluster. Errors: no nodes, a template that failed to build, zero
  /// sizes or ratios (invalid_argument); racks() called twice, tier() before racks(), domains that
  /// straddle racks (invalid_argument); duplicate node names (already_exists); more than
  /// max_nodes nodes or max_gpus GPUs (out_of_range).
  [[nodiscard]] result<cluster_topology> build() const;

  static constexpr std::size_t max_nodes = 1u << 20;
  static constexpr std::size_t max_gpus = 1u << 24;

 private:
  struct node_batch {
    std::uint32_t template_index;
    std::size_t count;
    std::string prefix;
    std::int64_t uplink_mb_s;
  };
  struct tier_spec {
    std::string name;
    std::size_t members;
    oversubscription ratio;
  };
  std::string name_;
  std::vector<node_topology> templates_;
  std::vector<node_batch> batches_;
  std::optional<error> deferred_error_;
  std::size_t nodes_per_rack_ = 0;
  oversubscription rack_ratio_;
  link_kind rack_network_ = link_kind::infiniband;
  std::vector<tier_spec> tiers_;
  std::size_t nodes_per_domain_ = 0;
  std::int64_t domain_gpu_mb_s_ = 0;
  bool racks_set_twice_ = false;
  bool tier_before_racks_ = false;
};

/// Returns the names of the built-in clusters:
/// - "demo": 4 DGX A100, 2 HGX H100 and 2 DGX-2 in racks of 4 under one pod;
/// - "superpod-a100": 140 DGX A100 in racks of 4, scalable units of 5 racks, one spine;
/// - "h100-nvlink-pod": 64 HGX H100 in racks of 4 and NVLink domains of 32 nodes (256 GPUs at
///   450 GB/s each, as a DGX H100 SuperPOD with the NVLink Switch System);
/// - "a100-100k": 12,500 DGX A100 (100,000 GPUs) in racks of 8, pods of 16 racks, spine groups of
///   16 pods with 2:1 oversubscription at the pod uplinks.
[[nodiscard]] std::span<const std::string_view> builtin_cluster_names() noexcept;

/// Returns the built-in cluster named `name`, or not_found naming it and the valid names.
[[nodiscard]] result<cluster_topology> make_builtin_cluster(std::string_view name);

/// Returns the model description of one server of topology `t` named `name`: its GPUs in index
/// order with their model and memory, milli-CPU = 1000 x the CPUs of its packages' cpusets (NUMA
/// nodes' if it has no packages; list "0-55,112-167" or hwloc bitmask "0xff,0x0f" syntax), host
/// memory = the NUMA nodes' memory, extended resource "rdma/hca" = its NIC count (omitted if 0),
/// and the label "hetsched.io/topology" = t.name().
[[nodiscard]] node_spec to_node_spec(const node_topology& t, std::string name);

/// Returns the model cluster of `topology`: one node per cluster node, in node order, so node and
/// device ids agree between the two; each node also carries labels naming its groups
/// ("hetsched.io/rack", "hetsched.io/nvlink-domain", "hetsched.io/tier-1", ...).
[[nodiscard]] result<cluster> to_cluster(const cluster_topology& topology);

}  // namespace hetsched
