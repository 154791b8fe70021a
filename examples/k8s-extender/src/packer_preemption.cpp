// SPDX-License-Identifier: MIT
// The packer's victim choice: a priority threshold, then a 0/1 knapsack over GPUs released.
//
// Step 1 (criterion 1): the lowest priority p such that all victims of priority <= p release
// enough. Any sufficient subset has a victim of priority >= p, and every subset of the
// victims <= p has its highest priority <= p, so the optimum is a subset of those.
// Step 2 (criteria 2-4): best[g] = the (count, sorted UIDs) minimum over subsets releasing
// exactly g GPUs, items taken in ascending UID order. Adding an item appends the largest UID so
// far, which keeps the lists sorted and preserves the order between extended lists of the same
// count, so the usual knapsack update is exact. The answer is the minimum of (count, g, UIDs)
// over g >= needed.
#include "packer_preemption.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace hetsched::k8s {
namespace {

struct subset {
  bool reachable = false;
  std::vector<std::string> uids;  // ascending
};

bool better(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

}  // namespace

std::optional<std::vector<std::string>> choose_gpu_victims(std::int64_t needed,
                                                           std::vector<gpu_victim> victims) {
  if (needed <= 0) return std::vector<std::string>{};
  std::sort(victims.begin(), victims.end(), [](const gpu_victim& a, const gpu_victim& b) {
    return std::tie(a.priority, a.uid) < std::tie(b.priority, b.uid);
  });
  // Step 1: the shortest prefix by priority (whole priority levels) that releases enough.
  std::int64_t released = 0;
  std::size_t take = 0;
  while (take < victims.size() && released < needed) {
    const std::int64_t level = victims[take].priority;
    while (take < victims.size() && victims[take].priority == level)
      released += victims[take++].gpus;
  }
  if (released < needed) return std::nullopt;
  victims.resize(take);
  std::sort(victims.begin(), victims.end(),
            [](const gpu_victim& a, const gpu_victim& b) { return a.uid < b.uid; });
  // Step 2: knapsack over the exact GPUs released.
  const auto cap = static_cast<std::size_t>(released);
  std::vector<subset> best(cap + 1);
  best[0].reachable = true;
  for (const auto& v : victims) {
    const auto w = static_cast<std::size_t>(v.gpus);
    for (std::size_t g = cap; g >= w && g > 0; --g) {
      const subset& from = best[g - w];
      if (!from.reachable) continue;
      std::vector<std::string> cand = from.uids;
      cand.push_back(v.uid);
      if (!best[g].reachable || better(cand, best[g].uids)) {
        best[g].reachable = true;
        best[g].uids = std::move(cand);
      }
    }
  }
  const subset* chosen = nullptr;
  for (auto g = static_cast<std::size_t>(needed); g <= cap; ++g) {
    if (!best[g].reachable) continue;
    // Scanning g upwards, a later g wins only with strictly fewer victims (criterion 3 then 4).
    if (chosen == nullptr || best[g].uids.size() < chosen->uids.size()) chosen = &best[g];
  }
  return chosen->uids;
}

}  // namespace hetsched::k8s
