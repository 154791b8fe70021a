// SPDX-License-Identifier: MIT
// Private helpers shared by the affinity packer's sources (not installed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/affinity_packer.hpp>

namespace hetsched::detail {

/// Returns `gpus` ascending. Errors: out_of_range for a GPU >= n, invalid_argument for a repeat;
/// messages start with `what` ("available", "required", ...).
[[nodiscard]] result<std::vector<std::uint32_t>> sorted_unique(std::span<const std::uint32_t> gpus,
                                                               std::size_t n, const char* what);

/// Returns allocate(scores, available, required, size, mode) with `gpu_bonus` (empty, or one value
/// per matrix GPU) added to each lexmax candidate block's score (and against the size-1 damage);
/// with `lowest`, lexmax takes the block of a best partition with the lowest score minus bonus
/// (allocate_with's spread). Precondition: gpu_bonus is empty or has scores.size() values.
[[nodiscard]] result<packer_answer> allocate_bonus(const pair_score_matrix& scores,
                                                   std::span<const std::uint32_t> available,
                                                   std::span<const std::uint32_t> required,
                                                   std::size_t size, packer_mode mode,
                                                   std::span<const std::int64_t> gpu_bonus,
                                                   bool lowest);

}  // namespace hetsched::detail
