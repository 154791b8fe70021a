// SPDX-License-Identifier: MIT
// The cluster description: nodes, their GPU devices, capacities, labels and health.
//
// A cluster is built once by add_node() (the topology layer converts a cluster topology into
// node_spec values) and is then read-only; changing health and allocations is the job of
// cluster_state. Node ids are dense in insertion order. Device ids are dense over the whole
// cluster in node order: node k owns [first_device, first_device + device_count), so the devices
// of a node are one contiguous span. Storage is two flat tables plus one name index; a device
// costs no heap allocation of its own, which keeps 12,500 nodes x 8 GPUs cheap to build and copy.
#pragma once

#include <boost/container/flat_map.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/resources.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// Health of a node or a device. Only `healthy` hardware accepts new placements; placements
/// already on hardware that turns cordoned or unhealthy stay until the platform reports the job
/// failed (record fail) or a policy preempts or migrates it.
enum class health : std::uint8_t {
  healthy,    ///< Usable.
  cordoned,   ///< Operator drain: no new placements, running work keeps going (not a fault).
  unhealthy,  ///< Faulty: no new placements; policies should move work away.
};

/// Returns the lower-case name of `h`, e.g. "cordoned".
[[nodiscard]] std::string_view to_string(health h) noexcept;

/// Node labels (key -> value), sorted by key.
using label_map = boost::container::flat_map<std::string, std::string, std::less<>>;

/// One GPU as a node_spec lists it.
struct device_spec {
  gpu_type type;                ///< Model; empty = unknown.
  std::int64_t memory_mib = 0;  ///< Device memory; 0 = unknown (fits no GPU memory claim).
  hetsched::health health = hetsched::health::healthy;

  friend bool operator==(const device_spec&, const device_spec&) = default;
};

/// A node as the caller describes it. Aggregate, so the topology layer can fill it field by field.
struct node_spec {
  std::string name;  ///< Unique, non-empty.
  label_map labels;
  std::int64_t milli_cpu = 0;   ///< Allocatable CPU.
  std::int64_t memory_mib = 0;  ///< Allocatable host memory.
  extended_resources extended;  ///< Allocatable extended resources.
  hetsched::health health = hetsched::health::healthy;
  std::vector<device_spec> devices;  ///< GPUs; position = local index.

  friend bool operator==(const node_spec&, const node_spec&) = default;
};

/// A node as the cluster stores it.
struct node_info {
  std::string name;
  label_map labels;
  /// milli_cpu, memory_mib and extended from the spec; milli_gpu = 1000 per device and
  /// gpu_memory_mib = the sum of device memory.
  resource_vector allocatable;
  hetsched::health health = hetsched::health::healthy;  ///< Health at description time.
  device_id first_device;                               ///< First of this node's devices.
  std::uint32_t device_count = 0;

  friend bool operator==(const node_info&, const node_info&) = default;
};

/// A GPU as the cluster stores it.
struct device_info {
  node_id node;                   ///< Owning node.
  std::uint32_t local_index = 0;  ///< Position within the node (0-based).
  gpu_type type;
  std::int64_t memory_mib = 0;
  hetsched::health health = hetsched::health::healthy;  ///< Health at description time.

  friend bool operator==(const device_info&, const device_info&) = default;
};

/// Returns ok if `spec` could be added to an empty cluster: non-empty name (invalid_argument),
/// capacities in 0..max_resource_amount (invalid_argument if negative, out_of_range if above),
/// valid extended resources, at most max_gpus_per_task devices (out_of_range), device memory in
/// 0..max_resource_amount. Errors name the node and, for devices, the local index.
[[nodiscard]] result<void> validate(const node_spec& spec);

/// The nodes and devices of a cluster. Copyable value; add-only.
class cluster {
 public:
  cluster() = default;

  /// Returns the id of the node added from `spec`. Errors: those of validate(node_spec), and
  /// already_exists if the name is taken. On error the cluster is unchanged. Amortized O(devices
  /// + log nodes).
  result<node_id> add_node(node_spec spec);

  /// Reserves room for `nodes` nodes and `devices` devices. Never changes contents.
  void reserve(std::size_t nodes, std::size_t devices);

  /// Returns the node `id`. Precondition: contains(id).
  [[nodiscard]] const node_info& node(node_id id) const noexcept { return nodes_[id]; }
  /// Returns the device `id`. Precondition: contains(id).
  [[nodiscard]] const device_info& device(device_id id) const noexcept { return devices_[id]; }
  /// Returns the devices of node `id`, in local index order. Precondition: contains(id).
  [[nodiscard]] std::span<const device_info> devices(node_id id) const noexcept;
  /// Returns the device of node `id` with local index `local_index`, or nullopt if out of range.
  [[nodiscard]] std::optional<device_id> device_at(node_id id,
                                                   std::uint32_t local_index) const noexcept;
  /// Returns the id of the node named `name`, or nullopt. O(log nodes).
  [[nodiscard]] std::optional<node_id> find_node(std::string_view name) const;

  /// Returns true if `id` names a node of this cluster.
  [[nodiscard]] bool contains(node_id id) const noexcept { return nodes_.contains(id); }
  /// Returns true if `id` names a device of this cluster.
  [[nodiscard]] bool contains(device_id id) const noexcept { return devices_.contains(id); }

  [[nodiscard]] std::size_t node_count() const noexcept { return nodes_.size(); }
  [[nodiscard]] std::size_t device_count() const noexcept { return devices_.size(); }
  /// Returns every node, indexed by node_id.
  [[nodiscard]] const id_vector<node_id, node_info>& nodes() const noexcept { return nodes_; }
  /// Returns every device, indexed by device_id.
  [[nodiscard]] const id_vector<device_id, device_info>& all_devices() const noexcept {
    return devices_;
  }
  /// Returns the sum of every node's allocatable resources (health ignored). O(1).
  [[nodiscard]] const resource_vector& total_capacity() const noexcept { return total_; }

  friend bool operator==(const cluster&, const cluster&) = default;

 private:
  id_vector<node_id, node_info> nodes_;
  id_vector<device_id, device_info> devices_;
  std::map<std::string, node_id, std::less<>> by_name_;
  resource_vector total_;
};

}  // namespace hetsched

template <>
struct fmt::formatter<hetsched::health> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(hetsched::health h, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(hetsched::to_string(h), ctx);
  }
};
