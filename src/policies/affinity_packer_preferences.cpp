// SPDX-License-Identifier: MIT
// Job preferences of the affinity packer (affinity_packer.hpp): per-GPU NUMA and NIC bonuses and
// the per-job locality sensitivity (allocate_with).
//
// Both localities reuse the exact partition search of affinity_packer.cpp: every available GPU
// lies in some block of every partition, so a per-GPU bonus cannot change which partitions are
// best, only which of their blocks is taken. consolidate takes the best block of a best
// partition, spread the worst one (the best blocks stay free for locality-sensitive jobs).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/views.hpp>

#include "affinity_packer_detail.hpp"

namespace hetsched {

std::vector<std::int64_t> numa_bonus(const node_views& views, std::int32_t numa,
                                     std::int64_t weight) {
  std::vector<std::int64_t> out(views.gpu_count(), 0);
  if (numa < 0) return out;
  for (std::size_t g = 0; g < out.size(); ++g) {
    if (views.gpu_numa(g) == numa) out[g] = weight;
  }
  return out;
}

std::vector<std::int64_t> nic_bonus(const node_views& views, std::int64_t weight,
                                    pcie_relation level) {
  std::vector<std::int64_t> out(views.gpu_count(), 0);
  for (std::size_t g = 0; g < out.size(); ++g) {
    for (std::size_t n = 0; n < views.nic_count(); ++n) {
      const pcie_relation r = views.relation(g, views.gpu_count() + n).pcie;
      if (r != pcie_relation::unknown && r != pcie_relation::self && r <= level) {
        out[g] = weight;
        break;
      }
    }
  }
  return out;
}

result<packer_answer> allocate_with(const pair_score_matrix& scores,
                                    std::span<const std::uint32_t> available,
                                    std::span<const std::uint32_t> required, std::size_t size,
                                    const placement_preferences& prefs) {
  const auto& bonus = prefs.gpu_bonus;
  if (!bonus.empty() && bonus.size() != scores.size()) {
    return make_error(errc::invalid_argument, "gpu_bonus has {} values, the matrix has {} GPUs",
                      bonus.size(), scores.size());
  }
  for (std::size_t g = 0; g < bonus.size(); ++g) {
    if (bonus[g] < 0) {
      return make_error(errc::invalid_argument, "gpu_bonus of GPU {} is negative: {}", g, bonus[g]);
    }
  }
  return detail::allocate_bonus(scores, available, required, size, packer_mode::lexmax, bonus,
                                prefs.locality == locality_sensitivity::spread);
}

}  // namespace hetsched
