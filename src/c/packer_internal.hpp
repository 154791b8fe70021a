// SPDX-License-Identifier: MIT
// Internals of the C API packer shared by placement (packer.cpp) and grow-shrink
// (packer_grow_shrink.cpp): the handle with its free-GPU bookkeeping.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <hetsched/c/packer.h>
#include <hetsched/policies/gang_placement.hpp>

#include "c_internal.hpp"

struct hs_packer {
  /// One placed task of a committed job.
  struct held_task {
    std::uint32_t task = 0;
    std::uint32_t node = 0;
    std::vector<std::uint32_t> gpus;  ///< Node-local GPU indices.
  };

  hetsched::gang_placer placer;
  /// Free node-local GPU indices per node, strictly ascending.
  std::vector<std::vector<std::uint32_t>> free;
  /// Committed jobs: their placed tasks, ascending task index (an elastic job's set may have gaps
  /// after a grow-shrink commit).
  std::map<std::uint64_t, std::vector<held_task>> jobs;

  /// Returns `gpus` of node `node` to the free list.
  void give_back(std::uint32_t node, const std::vector<std::uint32_t>& gpus);
  /// Takes `gpus` of node `node` off the free list.
  void take(std::uint32_t node, const std::vector<std::uint32_t>& gpus);
};

namespace hetsched::capi {

/// Commits a decision of hs_packer_grow_shrink (kind packer_grow_shrink, owner checked): checks
/// every release and bind against the packer's current state first, then frees the released
/// tasks' GPUs and takes the grown tasks' GPUs. Errors (nothing changed): HS_NOT_FOUND for a job
/// no longer committed, HS_CONFLICT for a task no longer held where the decision says, a grown
/// task already placed or a GPU no longer free, HS_FAILED_PRECONDITION for a release that would
/// leave the job no task.
hs_status commit_grow_shrink(hs_packer& packer, const hs_decision& decision);

}  // namespace hetsched::capi
