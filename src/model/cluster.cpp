// SPDX-License-Identifier: MIT
// The cluster description: node validation and the dense node and device tables.
#include <limits>
#include <utility>

#include <hetsched/model/cluster.hpp>

namespace hetsched {

std::string_view to_string(health h) noexcept {
  switch (h) {
    case health::healthy: return "healthy";
    case health::cordoned: return "cordoned";
    case health::unhealthy: return "unhealthy";
  }
  return "unknown";
}

namespace {

bool is_known(health h) noexcept {
  return h == health::healthy || h == health::cordoned || h == health::unhealthy;
}

result<void> check_amount(std::string_view node, std::string_view what, std::int64_t amount) {
  if (amount < 0) {
    return make_error(errc::invalid_argument, "node '{}': {} is negative ({})", node, what, amount);
  }
  if (amount > max_resource_amount) {
    return make_error(errc::out_of_range, "node '{}': {} is {}, exceeds {}", node, what, amount,
                      max_resource_amount);
  }
  return ok();
}

}  // namespace

result<void> validate(const node_spec& spec) {
  if (spec.name.empty()) return make_error(errc::invalid_argument, "node with an empty name");
  HETSCHED_TRY(check_amount(spec.name, "milli-CPU", spec.milli_cpu));
  HETSCHED_TRY(check_amount(spec.name, "memory MiB", spec.memory_mib));
  if (auto r = validate(spec.extended); !r) {
    return make_error(r.error().code, "node '{}': {}", spec.name, r.error().message);
  }
  if (!is_known(spec.health)) {
    return make_error(errc::invalid_argument, "node '{}': unknown health value", spec.name);
  }
  if (spec.devices.size() > max_gpus_per_task) {
    return make_error(errc::out_of_range, "node '{}': {} devices, at most {} per node", spec.name,
                      spec.devices.size(), max_gpus_per_task);
  }
  for (std::size_t i = 0; i < spec.devices.size(); ++i) {
    const device_spec& d = spec.devices[i];
    if (d.memory_mib < 0) {
      return make_error(errc::invalid_argument, "node '{}' device {}: memory is negative ({} MiB)",
                        spec.name, i, d.memory_mib);
    }
    if (d.memory_mib > max_resource_amount) {
      return make_error(errc::out_of_range, "node '{}' device {}: memory {} MiB exceeds {} MiB",
                        spec.name, i, d.memory_mib, max_resource_amount);
    }
    if (!is_known(d.health)) {
      return make_error(errc::invalid_argument, "node '{}' device {}: unknown health value",
                        spec.name, i);
    }
  }
  return ok();
}

result<node_id> cluster::add_node(node_spec spec) {
  HETSCHED_TRY(validate(spec));
  const auto slot = by_name_.lower_bound(spec.name);
  if (slot != by_name_.end() && slot->first == spec.name) {
    return make_error(errc::already_exists, "node '{}' already exists as node {}", spec.name,
                      slot->second);
  }
  // Ids are uint32 with max() reserved as invalid().
  constexpr std::size_t id_limit = std::numeric_limits<std::uint32_t>::max();
  if (nodes_.size() + 1 >= id_limit || devices_.size() + spec.devices.size() >= id_limit) {
    return make_error(errc::out_of_range, "node '{}': the cluster is full", spec.name);
  }

  const node_id id(static_cast<std::uint32_t>(nodes_.size()));
  node_info info;
  info.allocatable.milli_cpu = spec.milli_cpu;
  info.allocatable.memory_mib = spec.memory_mib;
  for (const auto& [name, amount] : spec.extended) info.allocatable.set_extended(name, amount);
  info.health = spec.health;
  info.first_device = device_id(static_cast<std::uint32_t>(devices_.size()));
  info.device_count = static_cast<std::uint32_t>(spec.devices.size());

  for (std::size_t i = 0; i < spec.devices.size(); ++i) {
    const device_spec& d = spec.devices[i];
    devices_.push_back(
        device_info{id, static_cast<std::uint32_t>(i), d.type, d.memory_mib, d.health});
    info.allocatable.milli_gpu += milli_per_gpu_unit;
    info.allocatable.gpu_memory_mib += d.memory_mib;
  }
  total_ += info.allocatable;
  info.name = spec.name;
  info.labels = std::move(spec.labels);
  by_name_.emplace_hint(slot, std::move(spec.name), id);
  nodes_.push_back(std::move(info));
  return id;
}

void cluster::reserve(std::size_t nodes, std::size_t devices) {
  nodes_.reserve(nodes);
  devices_.reserve(devices);
}

std::span<const device_info> cluster::devices(node_id id) const noexcept {
  const node_info& n = nodes_[id];
  return std::span<const device_info>(devices_.raw())
      .subspan(n.first_device.index(), n.device_count);
}

std::optional<device_id> cluster::device_at(node_id id, std::uint32_t local_index) const noexcept {
  if (!contains(id)) return std::nullopt;
  const node_info& n = nodes_[id];
  if (local_index >= n.device_count) return std::nullopt;
  return device_id(n.first_device.value() + local_index);
}

std::optional<node_id> cluster::find_node(std::string_view name) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

}  // namespace hetsched
