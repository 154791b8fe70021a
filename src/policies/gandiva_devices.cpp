// SPDX-License-Identifier: MIT
// gandiva_devices: per-node score matrices and GPU choice for Gandiva's planners.
#include <algorithm>
#include <limits>
#include <map>

#include <hetsched/policies/gandiva_devices.hpp>

namespace hetsched {

namespace {

constexpr std::uint32_t no_matrix = std::numeric_limits<std::uint32_t>::max();

}  // namespace

node_score_table::node_score_table(const cluster& description)
    : matrix_of_(description.node_count(), no_matrix) {}

node_score_table::node_score_table(const cluster& description, const cluster_topology& topology)
    : node_score_table(description) {
  std::map<const node_topology*, std::uint32_t> seen;
  const std::size_t n = std::min(description.node_count(), topology.node_count());
  for (std::size_t i = 0; i < n; ++i) {
    const node_id id(static_cast<std::uint32_t>(i));
    const node_topology& t = topology.topology_of(id);
    auto it = seen.find(&t);
    if (it == seen.end()) {
      matrices_.push_back(pair_score_matrix::from_topology(t));
      it = seen.emplace(&t, static_cast<std::uint32_t>(matrices_.size() - 1)).first;
    }
    if (matrices_[it->second].size() == description.node(id).device_count)
      matrix_of_[i] = it->second;
  }
}

const pair_score_matrix* node_score_table::scores(node_id n) const noexcept {
  if (n.index() >= matrix_of_.size() || matrix_of_[n.index()] == no_matrix) return nullptr;
  return &matrices_[matrix_of_[n.index()]];
}

std::vector<std::uint32_t> pick_gpus(const pair_score_matrix* scores,
                                     std::span<const std::uint32_t> available,
                                     std::uint32_t count) {
  if (scores != nullptr && available.size() <= max_packer_gpus && count > 0) {
    auto answer = allocate(*scores, available, {}, count, packer_mode::lexmax);
    if (answer && answer->status == packer_status::allocated) return std::move(answer->gpus);
  }
  return {available.begin(), available.begin() + count};
}

}  // namespace hetsched
