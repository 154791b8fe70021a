// SPDX-License-Identifier: MIT
// Private helpers shared by the two proportional-preemption sources: the exact resource
// calculator (YARN's DominantResourceCalculator semantics) and the per-queue working state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <hetsched/policies/proportional_preemption.hpp>

namespace hetsched::detail::pcpp {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/// A fraction num/den; den == 0 stands for +infinity where documented.
struct fraction {
  i128 num = 0;
  i128 den = 1;
};

/// Returns sign(x - y) for fractions with positive denominators (negative numerators count as 0).
[[nodiscard]] int compare_ratios(const fraction& x, const fraction& y) noexcept;

/// How a rational product is rounded to an integer.
enum class rounding_mode : unsigned char {
  truncate,  ///< Towards zero: Java's (long)(v * f).
  up,        ///< Ceiling of positive values, truncation of negative ones: (long)Math.ceil.
  nearest,   ///< (v * f + 1/2) truncated: Java's (long)(v * f + 0.5).
};

/// Returns v * num / den rounded by `mode`. Preconditions: den > 0, |v * num| < 2^126.
[[nodiscard]] std::int64_t scale(std::int64_t v, i128 num, i128 den, rounding_mode mode) noexcept;

/// Comparisons of resource vectors relative to the cluster, as YARN's DominantResourceCalculator:
/// shares a_i / C_i sorted in descending order, compared lexicographically. With one dimension
/// this is the plain order (DefaultResourceCalculator).
struct calculator {
  std::size_t k = 1;
  pcpp_vector cluster{};

  [[nodiscard]] int compare(const pcpp_vector& a, const pcpp_vector& b) const;
  [[nodiscard]] pcpp_vector min(const pcpp_vector& a, const pcpp_vector& b) const {
    return compare(a, b) <= 0 ? a : b;
  }
  [[nodiscard]] pcpp_vector max(const pcpp_vector& a, const pcpp_vector& b) const {
    return compare(a, b) >= 0 ? a : b;
  }
  /// Returns dominant_share(num) / dominant_share(den) (YARN's Resources.divide).
  [[nodiscard]] fraction dominant_ratio(const pcpp_vector& num, const pcpp_vector& den) const;
  void share_order(const pcpp_vector& a, std::array<std::uint8_t, 8>& order) const;
};

/// Working state of one queue.
struct node {
  pcpp_vector guaranteed{};
  pcpp_vector maximum{};
  pcpp_vector used{};
  pcpp_vector pending{};
  pcpp_vector in_flight{};
  pcpp_vector untouchable{};
  pcpp_vector preemptable{};
  pcpp_vector ideal{};
  pcpp_vector to_be_preempted{};
  pcpp_vector to_obtain{};
  pcpp_vector selected{};
  std::vector<std::size_t> children;
  bool leaf = true;
  bool disabled = false;
  bool has_guarantee = false;
};

/// End of a per-job container list.
inline constexpr std::uint32_t no_container = 0xffffffffU;

/// The containers of each job as singly linked lists (reverse snapshot order).
struct job_lists {
  std::vector<std::uint32_t> head;  ///< Per job: first container, or no_container.
  std::vector<std::uint32_t> next;  ///< Per container: next container of its job.
};

/// Runs FifoCandidatesSelector over the leaves (to_obtain set) and fills plan.victims and each
/// leaf's `selected`.
void select_victims(const pcpp_snapshot& snapshot, const pcpp_params& params, const calculator& rc,
                    const job_lists& lists, std::vector<node>& nodes, pcpp_plan& plan);

}  // namespace hetsched::detail::pcpp
