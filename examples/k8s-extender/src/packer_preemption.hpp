// SPDX-License-Identifier: MIT
// The packer backend's victim choice for ExtenderPreemptionArgs (docs/k8s_extender.md, "preempt").
//
// kube-scheduler proposes victims per node; the packer judges only GPUs, and only those of pods
// this extender bound there (it knows their GPU count and spec.priority from bind). A node helps
// when the preemptor passes the filter there once some of those GPU victims are gone: selector
// and health as filter, the node has at least as many GPUs as the pod requests, and free GPUs +
// GPUs released >= GPUs requested. Among the subsets of GPU victims that release enough, the
// choice minimises, in this order:
//   1. the highest victim priority (lower priorities are evicted first),
//   2. the number of victims,
//   3. the GPUs released,
//   4. the victims' UIDs sorted ascending, compared lexicographically (a total order, so the
//      choice is deterministic).
// The other proposed victims (pods the extender did not bind there, pods without GPUs) are kept
// as proposed: kube-scheduler chose them for resources the packer does not see (CPU, memory), and
// its ExtenderPreemptionResult replaces the proposal. The answer lists the kept UIDs in the
// request's order, with NumPDBViolations = min(the request's count, victims kept) (an upper
// bound: the extender sees no PodDisruptionBudgets).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetsched::k8s {

/// A GPU victim candidate: a pod this extender bound on the node.
struct gpu_victim {
  std::string uid;
  std::int64_t gpus = 0;  ///< > 0
  std::int64_t priority = 0;
};

/// Returns the UIDs (sorted ascending) of the subset of `victims` that releases at least `needed`
/// GPUs and is minimal in the order above; empty when `needed` <= 0; nullopt when even all of
/// them release fewer than `needed`. Precondition: distinct UIDs, gpus > 0.
[[nodiscard]] std::optional<std::vector<std::string>> choose_gpu_victims(
    std::int64_t needed, std::vector<gpu_victim> victims);

}  // namespace hetsched::k8s
