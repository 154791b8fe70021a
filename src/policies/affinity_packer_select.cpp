// SPDX-License-Identifier: MIT
// The block each packer mode returns (affinity_packer_search.hpp), given best(all).
//
// - lexmax: the padding-free blocks holding the required GPUs, best key first (score + bonus,
//   then lexicographically smallest); on a node of two blocks each is checked exactly in O(1)
//   (the rest is one block), otherwise the first one whose rest reaches best(all) - score wins;
//   a loose bound (partners within all) filters them, the rest's own bound and a threshold query
//   check them.
// - spread: walks the states on optimal partitions (each state once): two blocks: every optimal
//   split; size >= 3: the full blocks that can be the highest-scoring block of an optimal
//   partition and reach it; size <= 2: the blocks of the lowest GPU that reach it. Every block of
//   every optimal partition is seen, the weakest (highest bonus - score, then lexicographically
//   smallest) is kept.
// - compat: go-gpuallocator's order: at each state the first block of the lowest GPU (its order:
//   lexicographic combinations, padding last) whose rest reaches the remaining target.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "affinity_packer_search.hpp"

namespace hetsched::detail {

namespace {

/// Returns true if sorted(a) is lexicographically before sorted(b) (a != b). Also
/// go-gpuallocator's block order for two blocks holding the same lowest GPU: a block that runs
/// out of GPUs continues with padding slots, which come after every GPU, so the first GPU in
/// only one of them decides.
bool lex_before(packer_mask a, packer_mask b) noexcept {
  const packer_mask d = a ^ b;
  return (a & (d & (~d + 1U))) != 0;
}

/// Returns the sum of `bonus` (indexed by position in the available list) over S; 0 if empty.
std::int64_t mask_bonus(packer_mask s, std::span<const std::int64_t> bonus) noexcept {
  if (bonus.empty()) return 0;
  std::int64_t total = 0;
  for (packer_mask a = s; a != 0; a &= a - 1) {
    total += bonus[static_cast<std::size_t>(std::countr_zero(a))];
  }
  return total;
}

}  // namespace

packer_search::state_tops packer_search::tops_of(packer_mask s) const noexcept {
  state_tops out;
  for (packer_mask a = s; a != 0; a &= a - 1) {
    const auto p = static_cast<std::size_t>(std::countr_zero(a));
    const std::uint8_t* row = &order_[p * m_];
    std::size_t rank = 0;
    for (std::size_t i = 0; i + 1 < m_ && rank + 1 < k_; ++i) {
      const std::size_t q = row[i];
      if (((s >> q) & 1U) == 0) continue;
      const std::int64_t v = w_[p * m_ + q];
      out.top[p] += v;
      if (rank + 1 >= k_ - pad_) out.loss[p] += v;
      ++rank;
    }
    out.total += out.top[p];
  }
  return out;
}

std::int64_t packer_search::loose_rest_bound2(const state_tops& t, packer_mask s, packer_mask b,
                                              bool padded) const noexcept {
  std::int64_t total = t.total;
  for (packer_mask a = b; a != 0; a &= a - 1) total -= t.top[std::countr_zero(a)];
  const packer_mask rest = s & ~b;
  if (!padded && pad_ > 0 && static_cast<std::size_t>(std::popcount(rest)) % k_ != 0 && rest != 0) {
    std::int64_t least = std::numeric_limits<std::int64_t>::max();
    for (packer_mask a = rest; a != 0; a &= a - 1) {
      least = std::min(least, t.loss[std::countr_zero(a)]);
    }
    total -= static_cast<std::int64_t>(k_ - pad_) * least;
  }
  return total;
}

packer_mask packer_search::lexmax_block(packer_mask all, std::int64_t target,
                                        std::span<const std::int64_t> bonus) {
  const auto c = static_cast<std::size_t>(std::popcount(all));
  const std::size_t pad_left = pending_padding(c);
  const bool two = c + pad_left == 2 * k_;
  const std::int64_t score_all = set_score(all);
  std::uint8_t list[32];
  std::size_t count = 0;
  for (packer_mask a = all & ~required_; a != 0; a &= a - 1) {
    list[count++] = static_cast<std::uint8_t>(std::countr_zero(a));
  }
  // Without a bonus twins are interchangeable: the lowest twins of an orbit of blocks give its
  // lexicographically smallest member, with the same key and the same optimality.
  const bool one_per_orbit = bonus.empty();
  const auto held = static_cast<std::size_t>(std::popcount(required_));
  packer_mask chosen = 0;
  std::int64_t chosen_key = 0;
  auto keep = [&](packer_mask b, std::int64_t score) {
    const std::int64_t key = score + mask_bonus(b, bonus);
    if (chosen == 0 || key > chosen_key || (key == chosen_key && lex_before(b, chosen))) {
      chosen = b;
      chosen_key = key;
    }
  };
  if (two) {
    // score(b) + score(rest) = score(all) + 2 score(b) - rows of b within all; the rest is one
    // block (the padded one if padding pends) without required GPUs. Both sums grow with b.
    std::int64_t row_all[32] = {};
    for (packer_mask a = all; a != 0; a &= a - 1) {
      const auto p = static_cast<std::size_t>(std::countr_zero(a));
      row_all[p] = row_sum(p, all);
    }
    std::int64_t required_rows = 0;
    for (packer_mask a = required_; a != 0; a &= a - 1)
      required_rows += row_all[std::countr_zero(a)];
    const std::size_t need = k_ - held;
    auto grow = [&](auto& self, std::size_t next, std::size_t have, packer_mask b,
                    std::int64_t score, std::int64_t rows) -> void {
      if (have == need) {
        if (score_all + 2 * score - rows == target) keep(b, score);
        return;
      }
      for (std::size_t i = next; i + (need - have) <= count; ++i) {
        const std::size_t p = list[i];
        if (one_per_orbit && (lower_[p] & all & ~b) != 0) continue;
        self(self, i + 1, have + 1, b | (packer_mask{1} << p), score + row_sum(p, b),
             rows + row_all[p]);
      }
    };
    grow(grow, 0, 0, required_, set_score(required_), required_rows);
    return chosen;
  }
  // Without a bonus or required GPUs the answer is the highest-scoring full block of its
  // partition: full * score + best padded block >= target.
  std::int64_t full = 0;
  std::int64_t padded = 0;
  if (bonus.empty() && required_ == 0) {
    const std::size_t blocks = (c + pad_left) / k_;
    full = static_cast<std::int64_t>(pad_left > 0 ? blocks - 1 : blocks);
    padded = pad_left > 0 ? best_padded_block(all) : 0;
  }
  const state_tops tops = tops_of(all);
  std::vector<std::pair<std::int64_t, packer_mask>> candidates;
  auto visit = [&](packer_mask b, std::int64_t score) {
    if (full > 0 && full * score + padded < target) return;
    if (2 * score + loose_rest_bound2(tops, all, b, false) >= 2 * target) {
      candidates.emplace_back(score + mask_bonus(b, bonus), b);
    }
  };
  subsets(list, count, k_ - held, 0, required_, 0, all, one_per_orbit, set_score(required_), visit);
  // Worse = lower key, then lexicographically later: the heap's top is the next best.
  const auto worse = [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    return x.second != y.second && lex_before(y.second, x.second);
  };
  std::make_heap(candidates.begin(), candidates.end(), worse);
  while (!candidates.empty()) {
    std::pop_heap(candidates.begin(), candidates.end(), worse);
    const packer_mask b = candidates.back().second;
    candidates.pop_back();
    const packer_mask rest = all & ~b;
    const std::int64_t need = target - set_score(b);
    if (rest_bound(rest, c - k_) < need) continue;
    if (reaches(rest, need)) return b;
  }
  return 0;
}

packer_mask packer_search::weakest_block(packer_mask all, std::span<const std::int64_t> bonus) {
  packer_mask chosen = 0;
  std::int64_t chosen_key = 0;
  auto consider = [&](packer_mask b, std::int64_t score) {
    if ((b & required_) != required_) return;
    const std::int64_t key = mask_bonus(b, bonus) - score;
    if (chosen == 0 || key > chosen_key || (key == chosen_key && lex_before(b, chosen))) {
      chosen = b;
      chosen_key = key;
    }
  };
  std::vector<bool> seen(std::size_t{1} << m_, false);
  std::vector<packer_mask> stack{all};
  seen[all] = true;
  auto push = [&](packer_mask rest) {
    if (!seen[rest]) {
      seen[rest] = true;
      stack.push_back(rest);
    }
  };
  while (!stack.empty()) {
    const packer_mask s = stack.back();
    stack.pop_back();
    const auto c = static_cast<std::size_t>(std::popcount(s));
    const std::size_t pad_left = pending_padding(c);
    const std::size_t blocks = (c + pad_left) / k_;
    if (blocks == 1) {
      if (pad_left == 0) consider(s, set_score(s));
      continue;
    }
    const std::int64_t target = best(s);
    if (blocks == 2) {
      // Every optimal split, both of its blocks (the padded one is never taken).
      const std::int64_t score_s = set_score(s);
      lowest_blocks(s, pad_left, false, [&](packer_mask b, std::int64_t score, bool padded) {
        const packer_mask rest = s & ~b;
        const bool rest_padded = pad_left > 0 && !padded;
        if (!valid_block(b, padded) || !valid_block(rest, rest_padded)) return false;
        std::int64_t rows = 0;
        for (packer_mask a = b; a != 0; a &= a - 1) {
          rows += row_sum(static_cast<std::size_t>(std::countr_zero(a)), s);
        }
        if (score_s + 2 * score - rows != target) return false;
        if (!padded) consider(b, score);
        if (!rest_padded) consider(rest, score_s + score - rows);
        return false;
      });
      continue;
    }
    if (k_ >= 3) {
      // A partition scoring target has its highest-scoring full block A with
      // full * score(A) + best padded block >= target.
      const auto full = static_cast<std::int64_t>(pad_left > 0 ? blocks - 1 : blocks);
      const std::int64_t padded = pad_left > 0 ? best_padded_block(s) : 0;
      full_blocks(s, false, [&](packer_mask b, std::int64_t score) {
        if (full * score + padded < target) return;
        const packer_mask rest = s & ~b;
        if (score + rest_bound(rest, c - k_) < target || !reaches(rest, target - score)) return;
        consider(b, score);
        push(rest);
      });
      continue;
    }
    lowest_blocks(s, pad_left, false, [&](packer_mask b, std::int64_t score, bool padded) {
      if (!valid_block(b, padded)) return false;
      const packer_mask rest = s & ~b;
      const std::size_t rest_c = c - (padded ? k_ - pad_ : k_);
      if (score + rest_bound(rest, rest_c) < target || !reaches(rest, target - score)) {
        return false;
      }
      if (!padded) consider(b, score);
      push(rest);
      return false;
    });
  }
  return chosen;
}

void packer_search::optimal_lowest_blocks(packer_mask s, std::int64_t target,
                                          std::vector<std::pair<packer_mask, bool>>& out,
                                          std::vector<bool>& seen) {
  const auto c = static_cast<std::size_t>(std::popcount(s));
  const std::size_t pad_left = pending_padding(c);
  const std::size_t blocks = (c + pad_left) / k_;
  if (blocks == 2) {
    const std::int64_t score_s = set_score(s);
    lowest_blocks(s, pad_left, false, [&](packer_mask b, std::int64_t score, bool padded) {
      const packer_mask rest = s & ~b;
      if (!valid_block(b, padded) || !valid_block(rest, pad_left > 0 && !padded)) return false;
      std::int64_t rows = 0;
      for (packer_mask a = b; a != 0; a &= a - 1) {
        rows += row_sum(static_cast<std::size_t>(std::countr_zero(a)), s);
      }
      if (score_s + 2 * score - rows == target) out.emplace_back(b, padded);
      return false;
    });
    return;
  }
  // Each optimal partition has a highest-scoring full block A (full * score(A) + best padded
  // block >= target): the lowest GPU's block is A or lies in an optimal partition of S \ A.
  const auto full = static_cast<std::int64_t>(pad_left > 0 ? blocks - 1 : blocks);
  const std::int64_t padded = pad_left > 0 ? best_padded_block(s) : 0;
  const packer_mask lowest = s & (~s + 1U);
  full_blocks(s, false, [&](packer_mask b, std::int64_t score) {
    if (full * score + padded < target) return;
    const packer_mask rest = s & ~b;
    if ((b & lowest) == 0 && seen[rest]) return;
    if (score + rest_bound(rest, c - k_) < target || !reaches(rest, target - score)) return;
    if ((b & lowest) != 0) {
      out.emplace_back(b, false);
      return;
    }
    seen[rest] = true;
    optimal_lowest_blocks(rest, target - score, out, seen);
  });
}

std::vector<std::pair<packer_mask, bool>> packer_search::first_partition(packer_mask all,
                                                                         std::int64_t target) {
  std::vector<std::pair<packer_mask, bool>> blocks;
  std::vector<std::pair<packer_mask, bool>> options;
  std::vector<bool> seen;
  packer_mask s = all;
  std::int64_t left = target;
  while (s != 0) {
    const auto c = static_cast<std::size_t>(std::popcount(s));
    const std::size_t pad_left = pending_padding(c);
    if (c + pad_left == k_) {
      blocks.emplace_back(s, pad_left > 0);
      break;
    }
    packer_mask chosen = 0;
    bool chosen_padded = false;
    if (k_ >= 3 || c + pad_left == 2 * k_) {
      // The optimal blocks of the lowest GPU, then go-gpuallocator's first of them.
      options.clear();
      seen.assign(std::size_t{1} << m_, false);
      optimal_lowest_blocks(s, left, options, seen);
      for (const auto& [b, padded] : options) {
        if (chosen == 0 || lex_before(b, chosen)) {
          chosen = b;
          chosen_padded = padded;
        }
      }
    } else {
      // Size <= 2: go-gpuallocator's order, the first block whose rest reaches the target.
      const state_tops tops = tops_of(s);
      lowest_blocks(s, pad_left, false, [&](packer_mask b, std::int64_t score, bool padded) {
        if (!valid_block(b, padded)) return false;
        if (2 * score + loose_rest_bound2(tops, s, b, padded) < 2 * left) return false;
        const packer_mask rest = s & ~b;
        const std::size_t rest_c = c - (padded ? k_ - pad_ : k_);
        if (score + rest_bound(rest, rest_c) < left || !reaches(rest, left - score)) return false;
        chosen = b;
        chosen_padded = padded;
        return true;
      });
    }
    if (chosen == 0) return {};
    blocks.emplace_back(chosen, chosen_padded);
    s &= ~chosen;
    left -= set_score(chosen);
  }
  return blocks;
}

}  // namespace hetsched::detail
