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
//   smallest) is kept. With a bonus and four blocks or more, the full blocks holding the required
//   GPUs are first taken by that key (those a cheap bound keeps, at most 4096) and the first whose
//   rest reaches best(all) - score is the answer; after 16 exact checks without one, the walk
//   (on four or five blocks; on six or more the scan runs to its answer).
// - compat: go-gpuallocator's order: at each state the first block of the lowest GPU (its order:
//   lexicographic combinations, padding last) whose rest reaches the remaining target.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
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

/// The number of pairs of `gpus` GPUs.
std::int64_t pairs(std::size_t gpus) noexcept {
  return static_cast<std::int64_t>(gpus * (gpus - 1) / 2);
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

/// The exact checks spread's key-order scan may spend before it hands over to the walk, on
/// nodes of four or five blocks; on six blocks or more (size 3 of 16 GPUs and below) the walk
/// visits so many states that the scan runs to its answer (survey of 600 size-3 answers with a
/// bonus: worst 0.98 -> 0.59 ms, total 63 -> 71 ms; at 16 checks on four or five blocks, more
/// checks cost sizes 4 and 5 a third more).
constexpr std::size_t max_key_order_checks = 16;
/// The candidate blocks above which spread's key-order scan is not tried.
constexpr std::size_t max_key_order_candidates = 4096;

/// Writes the positions of S to `out` in ascending order; returns how many.
std::size_t positions_of(packer_mask s, std::uint8_t* out) noexcept {
  std::size_t count = 0;
  for (packer_mask a = s; a != 0; a &= a - 1) {
    out[count++] = static_cast<std::uint8_t>(std::countr_zero(a));
  }
  return count;
}

/// The `n` lowest GPUs of S (all of them if fewer): the lexicographically first block of S.
packer_mask lowest_gpus(packer_mask s, std::size_t n) noexcept {
  packer_mask out = 0;
  for (std::size_t i = 0; i < n && s != 0; ++i) {
    out |= s & (~s + 1U);
    s &= s - 1;
  }
  return out;
}

}  // namespace

packer_search::block_caps packer_search::caps_of(packer_mask all, std::size_t c,
                                                 std::int64_t target) {
  block_caps caps;
  const std::size_t pad_left = pending_padding(c);
  const auto full = static_cast<std::int64_t>((c + pad_left) / k_ - (pad_left > 0 ? 1 : 0));
  caps.padded = pad_left > 0 ? std::max<std::int64_t>(best_padded_block(all), 0) : 0;
  // The highest-scoring full block of a partition scoring target scores at least
  // (target - padded) / full, so the strongest block does: the enumeration cuts the others.
  caps.full = packer_infeasible;
  if (use_table_) {
    caps.full = std::max(best_table_block(all).second, packer_infeasible);
  } else {
    full_blocks(
        all, true, [&](packer_mask, std::int64_t score) { caps.full = std::max(caps.full, score); },
        -floor_div(-(target - caps.padded), full));
  }
  return caps;
}

std::int64_t packer_search::weakest_key_bound(packer_mask s, std::size_t c, std::int64_t target,
                                              std::span<const std::int64_t> bonus,
                                              const block_caps& caps) {
  if (!rank_tables_built_) build_rank_tables();
  // score(B) = half the sum over B of each GPU's scores to the others of B >= half the sum of
  // the k smallest "k - 1 weakest partners within S" sums; the bonus of B is at most the sum
  // of the k largest bonuses of S.
  std::int64_t weakest[32];
  std::int64_t gains[32];
  std::size_t n = 0;
  const auto sum = [](std::int64_t a, std::int64_t b) { return a + b; };
  const auto either = [](std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(a | b);
  };
  for (packer_mask a = s; a != 0; a &= a - 1) {
    const auto p = static_cast<std::size_t>(std::countr_zero(a));
    packer_mask ranks = rank_bits_.combine(p, s, either);
    packer_mask keep = 0;
    for (std::size_t j = 0; j + 1 < k_ && ranks != 0; ++j) {
      const packer_mask top = packer_mask{1} << (31 - std::countl_zero(ranks));
      keep |= top;
      ranks &= ~top;
    }
    weakest[n] = rank_sums_.combine(p, keep, sum);
    gains[n++] = bonus.empty() ? 0 : bonus[p];
  }
  const std::size_t take = std::min(k_, n);
  const std::int64_t low = sum_of_first(weakest, n, take, std::less<>());
  const std::int64_t gain = bonus.empty() ? 0 : sum_of_first(gains, n, take, std::greater<>());
  // A full block of a partition scoring target scores at least target minus the most the
  // other full blocks and the padded one can score (their caps).
  const std::size_t pad_left = pending_padding(c);
  const auto full = static_cast<std::int64_t>((c + pad_left) / k_ - (pad_left > 0 ? 1 : 0));
  const std::int64_t others = (full - 1) * caps.full + (pad_left > 0 ? caps.padded : 0);
  return gain - std::max((low + 1) / 2, target - others);
}

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
  const std::size_t count = positions_of(all & ~required_, list);
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
  // A full block scoring below ceil((target - padded) / full) is not the highest-scoring one.
  const std::int64_t need = full > 0 ? -floor_div(-(target - padded), full) : packer_infeasible;
  static_cast<void>(subsets(list, count, k_ - held, 0, required_, held, 0, all, one_per_orbit,
                            set_score(required_), need, visit));
  return first_reaching(candidates, all, c, target, std::numeric_limits<std::size_t>::max());
}

packer_mask packer_search::weakest_in_key_order(packer_mask all, std::int64_t target,
                                                std::span<const std::int64_t> bonus,
                                                const block_caps& caps, std::size_t max_checks) {
  const auto c = static_cast<std::size_t>(std::popcount(all));
  const std::size_t pad_left = pending_padding(c);
  const auto full = static_cast<std::int64_t>((c + pad_left) / k_ - (pad_left > 0 ? 1 : 0));
  std::uint8_t list[32];
  const std::size_t count = positions_of(all & ~required_, list);
  // Without a bonus twins are interchangeable (as in lexmax_block): the lowest twins of an orbit
  // give its lexicographically smallest member, with the same key and the same optimality.
  const bool one_per_orbit = bonus.empty();
  const auto held = static_cast<std::size_t>(std::popcount(required_));
  // A full block of a partition scoring target scores at least target minus the most the other
  // blocks can score (their caps).
  const std::int64_t need = target - (full - 1) * caps.full - (pad_left > 0 ? caps.padded : 0);
  const state_tops tops = tops_of(all);
  std::vector<std::pair<std::int64_t, packer_mask>> candidates;
  bool too_many = false;
  auto visit = [&](packer_mask b, std::int64_t score) {
    if (2 * score + loose_rest_bound2(tops, all, b, false) < 2 * target) return false;
    if (candidates.size() == max_key_order_candidates) {
      too_many = true;
      return true;
    }
    candidates.emplace_back(mask_bonus(b, bonus) - score, b);
    return false;
  };
  static_cast<void>(subsets(list, count, k_ - held, 0, required_, held, 0, all, one_per_orbit,
                            set_score(required_), need, visit));
  if (too_many) return 0;
  return first_reaching(candidates, all, c, target, max_checks);
}

packer_mask packer_search::first_reaching(
    std::vector<std::pair<std::int64_t, packer_mask>>& candidates, packer_mask all, std::size_t c,
    std::int64_t target, std::size_t max_checks) {
  // Worse = lower key, then lexicographically later: the heap's top is the next best.
  const auto worse = [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    return x.second != y.second && lex_before(y.second, x.second);
  };
  std::make_heap(candidates.begin(), candidates.end(), worse);
  std::size_t checks = 0;
  while (!candidates.empty()) {
    std::pop_heap(candidates.begin(), candidates.end(), worse);
    const packer_mask b = candidates.back().second;
    candidates.pop_back();
    const packer_mask rest = all & ~b;
    const std::int64_t rest_target = target - set_score(b);
    if (rest_bound(rest, c - k_) < rest_target) continue;
    if (checks == max_checks) return 0;
    ++checks;
    if (reaches(rest, rest_target)) return b;
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
  const auto all_c = static_cast<std::size_t>(std::popcount(all));
  // Caps only matter for states of three blocks or more (below, weakest_key_bound is not used).
  block_caps caps{pairs(k_) * max_pair_, pairs(k_ - pad_) * max_pair_};
  bool caps_known = (all_c + pending_padding(all_c)) / k_ < 3;
  // With a bonus the walk's key bound is weak: where states of four blocks or more make the
  // walk long, first scan the blocks in key order (on three blocks the walk is the cheaper).
  if (!bonus.empty() && (all_c + pending_padding(all_c)) / k_ >= 4) {
    caps = caps_of(all, all_c, best(all));
    caps_known = true;
    const std::size_t max_checks = (all_c + pending_padding(all_c)) / k_ >= 6
                                       ? std::numeric_limits<std::size_t>::max()
                                       : max_key_order_checks;
    if (const packer_mask b = weakest_in_key_order(all, best(all), bonus, caps, max_checks);
        b != 0) {
      return b;
    }
  }
  std::vector<bool> seen(std::size_t{1} << m_, false);
  std::vector<candidate> largest;
  std::vector<candidate> optimal;
  std::vector<candidate> lowest;
  constexpr std::size_t max_optimal_largest = 8;
  std::vector<packer_mask> stack{all};
  seen[all] = true;
  // Computed on the first rest bound (short walks do not need them).
  const auto rest_caps = [&]() -> const block_caps& {
    if (!caps_known) {
      caps = caps_of(all, all_c, best(all));
      caps_known = true;
    }
    return caps;
  };
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
    // Nothing to find where the required GPUs are placed already, or where no block can beat
    // the chosen one (key bound below, or equal and no block before it).
    if ((s & required_) != required_) continue;
    const std::int64_t target = best(s);
    // Returns false if neither block b (score, padded) of s nor any block of its rest (rest_c
    // GPUs) in a partition reaching target can beat the chosen block.
    const auto may_improve = [&](packer_mask b, std::int64_t score, bool padded,
                                 std::size_t rest_c) {
      if (chosen == 0) return true;
      if (!padded && (b & required_) == required_) {
        const std::int64_t key = mask_bonus(b, bonus) - score;
        if (key > chosen_key || (key == chosen_key && lex_before(b, chosen))) return true;
      }
      const packer_mask rest = s & ~b;
      const std::size_t rest_pad = pending_padding(rest_c);
      const std::size_t rest_full = (rest_c + rest_pad) / k_ - (rest_pad > 0 ? 1 : 0);
      if ((rest & required_) != required_ || rest_full == 0) return false;
      const std::int64_t bound =
          weakest_key_bound(rest, rest_c, target - score, bonus, rest_caps());
      return bound > chosen_key ||
             (bound == chosen_key && lex_before(lowest_gpus(rest, k_), chosen));
    };
    if (chosen != 0) {
      const std::int64_t bound = weakest_key_bound(s, c, target, bonus, caps);
      if (bound < chosen_key || (bound == chosen_key && !lex_before(lowest_gpus(s, k_), chosen))) {
        continue;
      }
    }
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
      // A partition scoring target has its highest-scoring full block A among largest_blocks():
      // when those are few, and few of them reach the target (each such A leaves a rest to walk;
      // where optimal partitions abound the lowest GPU's blocks leave far fewer), expand
      // through them.
      // (Rests of two blocks end the walk there, so any number of them is cheap, and the list
      // may run to half the lowest GPU's block count: size 6 of 16 GPUs, pairs 10/20, about a
      // thousand largest blocks take half the time of the lowest GPU's 3,458.)
      const std::size_t max_optimal =
          blocks == 3 ? largest.max_size()
                      : std::max(max_optimal_largest, lowest_block_count(c, pad_left) / 64);
      if (largest_blocks(s, c, pad_left, target, false,
                         lowest_block_count(c, pad_left) / (blocks == 3 ? 2 : 4), largest)) {
        optimal.clear();
        for (const candidate& cand : largest) {
          const packer_mask rest = s & ~cand.block;
          if (cand.score + rest_bound(rest, c - k_) < target ||
              !may_improve(cand.block, cand.score, false, c - k_) ||
              !reaches(rest, target - cand.score)) {
            continue;
          }
          optimal.push_back(cand);
          if (optimal.size() > max_optimal) break;
        }
        if (optimal.size() <= max_optimal) {
          for (const candidate& cand : optimal) {
            consider(cand.block, cand.score);
            push(s & ~cand.block);
          }
          continue;
        }
      }
    }
    // The lowest GPU's blocks that may lie on an optimal partition, best key first (padded
    // blocks, which are never taken, last), so that the chosen block improves early and cuts
    // the later ones.
    const state_tops tops = tops_of(s);
    lowest.clear();
    lowest_blocks(s, pad_left, false, [&](packer_mask b, std::int64_t score, bool padded) {
      if (!valid_block(b, padded)) return false;
      if (2 * score + loose_rest_bound2(tops, s, b, padded) < 2 * target) return false;
      const packer_mask rest = s & ~b;
      const std::size_t rest_c = c - (padded ? k_ - pad_ : k_);
      if (score + rest_bound(rest, rest_c) < target) return false;
      const bool takes = !padded && (b & required_) == required_;
      lowest.push_back({takes ? mask_bonus(b, bonus) - score : packer_infeasible, score, b});
      return false;
    });
    std::sort(lowest.begin(), lowest.end(), [](const candidate& x, const candidate& y) {
      return x.key != y.key ? x.key > y.key : lex_before(x.block, y.block);
    });
    for (const candidate& cand : lowest) {
      const bool padded = std::popcount(cand.block) != static_cast<int>(k_);
      const std::size_t rest_c = c - static_cast<std::size_t>(std::popcount(cand.block));
      const packer_mask rest = s & ~cand.block;
      if (!may_improve(cand.block, cand.score, padded, rest_c) ||
          !reaches(rest, target - cand.score)) {
        continue;
      }
      if (!padded) consider(cand.block, cand.score);
      push(rest);
    }
  }
  return chosen;
}

std::size_t packer_search::lowest_block_count(std::size_t c, std::size_t pad_left) const noexcept {
  const auto binomial = [](std::size_t n, std::size_t r) {
    if (r > n) return std::size_t{0};
    std::size_t out = 1;
    for (std::size_t i = 1; i <= r; ++i) out = out * (n - r + i) / i;
    return out;
  };
  return binomial(c - 1, k_ - 1) + (pad_left > 0 ? binomial(c - 1, k_ - pad_ - 1) : 0);
}

bool packer_search::largest_blocks(packer_mask s, std::size_t c, std::size_t pad_left,
                                   std::int64_t target, bool one_per_orbit, std::size_t cap,
                                   std::vector<candidate>& out) {
  out.clear();
  const std::size_t blocks = (c + pad_left) / k_;
  const auto full = static_cast<std::int64_t>(pad_left > 0 ? blocks - 1 : blocks);
  const std::int64_t padded = pad_left > 0 ? best_padded_block(s) : 0;
  if (padded <= packer_infeasible) return true;
  bool complete = true;
  auto keep = [&](packer_mask b, std::int64_t score) {
    if (full * score + padded < target) return false;
    if (out.size() == cap) {
      complete = false;
      return true;
    }
    out.push_back({score, score, b});
    return false;
  };
  const std::int64_t need = -floor_div(-(target - padded), full);
  if (use_table_) {
    table_blocks(s, one_per_orbit, need, keep);
  } else {
    full_blocks(s, one_per_orbit, keep, need);
  }
  return complete;
}

std::pair<packer_mask, bool> packer_search::first_lowest_block(packer_mask s, std::int64_t target,
                                                               packer_mask before,
                                                               std::vector<bool>& seen) {
  const auto c = static_cast<std::size_t>(std::popcount(s));
  const std::size_t pad_left = pending_padding(c);
  const std::size_t blocks = (c + pad_left) / k_;
  std::pair<packer_mask, bool> found{0, false};
  // go-gpuallocator's order is lexicographic: once a block is not before `before`, no later one
  // is either.
  const auto too_late = [&](packer_mask b) { return before != 0 && !lex_before(b, before); };
  if (blocks == 2) {
    const std::int64_t score_s = set_score(s);
    lowest_blocks(s, pad_left, false, [&](packer_mask b, std::int64_t score, bool padded) {
      if (too_late(b)) return true;
      const packer_mask rest = s & ~b;
      if (!valid_block(b, padded) || !valid_block(rest, pad_left > 0 && !padded)) return false;
      std::int64_t rows = 0;
      for (packer_mask a = b; a != 0; a &= a - 1) {
        rows += row_sum(static_cast<std::size_t>(std::countr_zero(a)), s);
      }
      if (score_s + 2 * score - rows != target) return false;
      found = {b, padded};
      return true;
    });
    return found;
  }
  std::vector<candidate> largest;
  const std::size_t lowest_count = lowest_block_count(c, pad_left);
  if (k_ >= 3 && largest_blocks(s, c, pad_left, target, false, lowest_count / 8, largest)) {
    return first_by_largest(s, target, before, seen, largest);
  }
  // Scan in go-gpuallocator's order: the first block whose rest reaches the target (the usual
  // case when optimal partitions abound, e.g. on symmetric nodes). When the answer comes late
  // (a random 16-GPU matrix at size 6: over a thousand exact checks before it), a longer list
  // of candidates for the highest-scoring block is the cheaper search; it is tried once, after
  // lowest_count / 32 exact checks, and taken if it holds at most a quarter of lowest_count.
  const state_tops tops = tops_of(s);
  std::size_t checks = 0;
  bool listed = false;
  lowest_blocks(s, pad_left, false, [&](packer_mask b, std::int64_t score, bool padded) {
    if (too_late(b)) return true;
    if (!valid_block(b, padded)) return false;
    if (2 * score + loose_rest_bound2(tops, s, b, padded) < 2 * target) return false;
    const packer_mask rest = s & ~b;
    const std::size_t rest_c = c - (padded ? k_ - pad_ : k_);
    if (score + rest_bound(rest, rest_c) < target) return false;
    if (k_ >= 3 && ++checks == lowest_count / 32 &&
        largest_blocks(s, c, pad_left, target, false, lowest_count / 4, largest)) {
      listed = true;
      return true;
    }
    if (!reaches(rest, target - score)) return false;
    found = {b, padded};
    return true;
  });
  return listed ? first_by_largest(s, target, before, seen, largest) : found;
}

std::pair<packer_mask, bool> packer_search::first_by_largest(packer_mask s, std::int64_t target,
                                                             packer_mask before,
                                                             std::vector<bool>& seen,
                                                             std::vector<candidate>& largest) {
  // The lowest GPU's block is A or lies in an optimal partition of S \ A. The blocks holding the
  // lowest GPU go first, in go-gpuallocator's order.
  const auto c = static_cast<std::size_t>(std::popcount(s));
  const packer_mask lowest = s & (~s + 1U);
  std::sort(largest.begin(), largest.end(), [&](const candidate& x, const candidate& y) {
    const bool xl = (x.block & lowest) != 0;
    const bool yl = (y.block & lowest) != 0;
    if (xl != yl) return xl;
    return lex_before(x.block, y.block);
  });
  std::pair<packer_mask, bool> found{0, false};
  packer_mask limit = before;
  for (const candidate& cand : largest) {
    const packer_mask rest = s & ~cand.block;
    if ((cand.block & lowest) != 0) {
      if (limit != 0 && !lex_before(cand.block, limit)) continue;
    } else {
      // The rest's first conceivable block: its k lowest GPUs.
      packer_mask first = 0;
      packer_mask left = rest;
      for (std::size_t i = 0; i < k_ && left != 0; ++i) {
        first |= left & (~left + 1U);
        left &= left - 1;
      }
      if ((limit != 0 && !lex_before(first, limit)) || seen[rest]) continue;
    }
    if (cand.score + rest_bound(rest, c - k_) < target || !reaches(rest, target - cand.score)) {
      continue;
    }
    if ((cand.block & lowest) != 0) {
      found = {cand.block, false};
      limit = cand.block;
      continue;
    }
    // A rest that reaches its target is an optimal one (target = best(rest), whichever blocks
    // led to it), so its search is done once: its block came up the first time. A rest that
    // failed a higher target (blocks scoring less led to it) may still be reached later.
    seen[rest] = true;
    const auto sub = first_lowest_block(rest, target - cand.score, limit, seen);
    if (sub.first != 0) {
      found = sub;
      limit = sub.first;
    }
  }
  return found;
}

std::vector<std::pair<packer_mask, bool>> packer_search::first_partition(packer_mask all,
                                                                         std::int64_t target) {
  std::vector<std::pair<packer_mask, bool>> blocks;
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
    seen.assign(std::size_t{1} << m_, false);
    const auto [chosen, padded] = first_lowest_block(s, left, 0, seen);
    if (chosen == 0) return {};
    blocks.emplace_back(chosen, padded);
    s &= ~chosen;
    left -= set_score(chosen);
  }
  return blocks;
}

}  // namespace hetsched::detail
