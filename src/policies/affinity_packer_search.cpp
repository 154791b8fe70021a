// SPDX-License-Identifier: MIT
// The affinity packer's exact values (affinity_packer_search.hpp): memo, bounds, two-block
// splits, largest-block-first and lowest-GPU-first searches.
#include "affinity_packer_search.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>

namespace hetsched::detail {

static_assert(max_packer_gpus <= 16, "row and rank tables cover two bytes of GPUs");

namespace {

constexpr packer_mask empty_key = ~packer_mask{0};

}  // namespace

packer_search::memo_table::memo_table() : slots_(64) {
  for (memo_entry& e : slots_) e.key = empty_key;
}

std::size_t packer_search::memo_table::slot(packer_mask s) const noexcept {
  // Fibonacci hashing: the high bits of the product, as many as the table has.
  const std::size_t mask = slots_.size() - 1;
  const auto bits = static_cast<unsigned>(std::countr_zero(slots_.size()));
  std::size_t i =
      static_cast<std::size_t>((std::uint64_t{s} * 0x9E3779B97F4A7C15ULL) >> (64U - bits));
  while (slots_[i].key != empty_key && slots_[i].key != s) i = (i + 1) & mask;
  return i;
}

const packer_search::memo_entry* packer_search::memo_table::find(packer_mask s) const noexcept {
  const memo_entry& e = slots_[slot(s)];
  return e.key == s ? &e : nullptr;
}

void packer_search::memo_table::store(packer_mask s, std::int64_t value, bool exact) {
  memo_entry* e = &slots_[slot(s)];
  if (e->key != s) {
    if (2 * (used_ + 1) > slots_.size()) {
      grow();
      e = &slots_[slot(s)];
    }
    ++used_;
    e->key = s;
    e->exact = exact;
    e->value = value;
    return;
  }
  if (e->exact) return;
  if (exact) {
    e->exact = true;
    e->value = value;
  } else {
    e->value = std::min(e->value, value);
  }
}

void packer_search::memo_table::grow() {
  std::vector<memo_entry> old(2 * slots_.size());
  std::swap(old, slots_);
  for (memo_entry& e : slots_) e.key = empty_key;
  for (const memo_entry& e : old) {
    if (e.key != empty_key) slots_[slot(e.key)] = e;
  }
}

packer_search::packer_search(std::vector<std::int64_t> w, std::size_t m, std::size_t k,
                             packer_mask required)
    : w_(std::move(w)),
      m_(m),
      k_(k),
      pad_((k - m % k) % k),
      required_(required),
      order_(m * m, 0),
      scratch_(m + 2) {
  for (const std::int64_t v : w_) max_pair_ = std::max(max_pair_, v);
  // Twins: two GPUs, neither required, with equal scores to every other GPU. Swapping twins
  // maps every state holding both onto itself without changing any score, so best(S) only
  // depends on how many GPUs of each twin class S holds, and a search only needs to take the
  // lowest GPUs of S in each class.
  for (std::size_t p = 0; p < m_; ++p) {
    if (((required_ >> p) & 1U) != 0 || class_of_[p] != 0) continue;
    packer_mask members = packer_mask{1} << p;
    for (std::size_t q = p + 1; q < m_; ++q) {
      if (((required_ >> q) & 1U) != 0 || class_of_[q] != 0) continue;
      bool twin = true;
      for (std::size_t r = 0; r < m_ && twin; ++r) {
        twin = r == p || r == q || w_[p * m_ + r] == w_[q * m_ + r];
      }
      if (twin) members |= packer_mask{1} << q;
    }
    for (packer_mask a = members; a != 0; a &= a - 1) {
      const auto q = static_cast<std::size_t>(std::countr_zero(a));
      class_of_[q] = members;
      lower_[q] = members & ((packer_mask{1} << q) - 1U);
    }
    if (std::popcount(members) > 1) {
      classes_.push_back(members);
      twins_ |= members;
    }
  }
  // States of three blocks or more are searched many times below a node of four blocks or
  // more: there the table of the node's blocks by score replaces the enumerations.
  use_table_ = k_ >= 3 && (m_ + pad_) / k_ >= 4;
  const auto sum = [](std::int64_t a, std::int64_t b) { return a + b; };
  row_tables_.reset(m_, m_);
  for (std::size_t p = 0; p < m_; ++p) {
    row_tables_.fill(
        p, [&](std::size_t q) { return w_[p * m_ + q]; }, sum);
  }
  // order_: each GPU's partners, best score first (ties: lower position).
  for (std::size_t p = 0; p < m_; ++p) {
    std::uint8_t* row = &order_[p * m_];
    std::size_t n = 0;
    for (std::size_t q = 0; q < m_; ++q) {
      if (q != p) row[n++] = static_cast<std::uint8_t>(q);
    }
    // Insertion sort (at most 15 partners), stable.
    for (std::size_t i = 1; i < n; ++i) {
      const std::uint8_t q = row[i];
      std::size_t j = i;
      for (; j > 0 && w_[p * m_ + row[j - 1]] < w_[p * m_ + q]; --j) row[j] = row[j - 1];
      row[j] = q;
    }
  }
}

void packer_search::build_rank_tables() {
  rank_tables_built_ = true;
  rank_bits_.reset(m_, m_);
  rank_sums_.reset(m_, m_ - 1);  // ranks 0 .. m - 2
  const auto either = [](std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(a | b);
  };
  const auto sum = [](std::int64_t a, std::int64_t b) { return a + b; };
  for (std::size_t p = 0; p < m_; ++p) {
    const std::uint8_t* row = &order_[p * m_];
    std::uint16_t rank_of[32] = {};
    for (std::size_t i = 0; i + 1 < m_; ++i) rank_of[row[i]] = static_cast<std::uint16_t>(1U << i);
    // A GPU g != p adds its rank bit; rank i adds p's i-th best score.
    rank_bits_.fill(
        p, [&](std::size_t g) { return rank_of[g]; }, either);
    rank_sums_.fill(
        p, [&](std::size_t i) { return w_[p * m_ + row[i]]; }, sum);
  }
}

packer_mask packer_search::canonical(packer_mask s) const noexcept {
  for (const packer_mask members : classes_) {
    packer_mask top = members;
    for (int drop = std::popcount(members) - std::popcount(s & members); drop > 0; --drop) {
      top &= top - 1;
    }
    s = (s & ~members) | top;
  }
  return s;
}

std::int64_t packer_search::set_score(packer_mask s) const noexcept {
  std::int64_t total = 0;
  for (packer_mask a = s; a != 0; a &= a - 1) {
    total += row_sum(static_cast<std::size_t>(std::countr_zero(a)), s);
  }
  return total / 2;
}

std::int64_t packer_search::remember(packer_mask s, std::int64_t value, bool exact) {
  memo_.store(s, value, exact);
  return value;
}

std::int64_t packer_search::solve(packer_mask s, std::int64_t floor) {
  s = canonical(s);
  if (const memo_entry* e = memo_.find(s); e != nullptr && (e->exact || e->value <= floor)) {
    return e->value;
  }
  const packer_mask in_r = s & required_;
  if (in_r != 0 && in_r != required_) return remember(s, packer_infeasible, true);
  const auto c = static_cast<std::size_t>(std::popcount(s));
  if (c == 0) return 0;
  const std::size_t pad_left = pending_padding(c);
  const std::size_t blocks = (c + pad_left) / k_;
  if (blocks == 1) return valid_block(s, pad_left > 0) ? set_score(s) : packer_infeasible;
  if (blocks == 2) return remember(s, two_blocks(s, pad_left), true);
  return k_ >= 3 ? by_largest_block(s, c, pad_left, floor)
                 : by_one_gpu(s, c, pad_left, floor, static_cast<std::size_t>(std::countr_zero(s)));
}

namespace {

/// two_blocks()'s enumeration of the block C: the candidate positions e[] (GPUs that may join
/// C), acc[x] = 2 w(x, C) - row(x) for those not yet decided, rows[x] = w(e[x], .) (row
/// pointers); the required GPUs are placed before (in C or out of it), so every C is valid.
struct split_frame {
  std::uint8_t e[32] = {};
  std::int64_t acc[32] = {};
  const std::int64_t* rows[32] = {};
  std::size_t count = 0;
  std::size_t size = 0;  ///< |C|.
  /// With twins: lower[g] = the GPUs of g's twin class below g (C takes those of S first).
  const packer_mask* lower = nullptr;
  packer_mask state = 0;
  packer_mask gpus = 0;  ///< The GPUs of C.
  std::int64_t best = packer_infeasible;
};

/// Returns true if C may take e[x] next: with twins, only after the twins of S below it.
bool split_takes(const split_frame& f, std::size_t x) {
  return f.lower == nullptr || (f.lower[f.e[x]] & f.state & ~f.gpus) == 0;
}

/// Extends C (`depth` members, value `value`) with candidates from `start` on.
void split_extend(split_frame& f, std::size_t depth, std::size_t start, std::int64_t value) {
  if (depth + 1 == f.size) {
    for (std::size_t x = start; x < f.count; ++x) {
      const std::int64_t v = value + f.acc[x];
      if (v > f.best && split_takes(f, x)) f.best = v;
    }
    return;
  }
  if (depth + 2 == f.size && f.lower == nullptr) {
    // The last two members as one pair loop: value + acc[x] + acc[y] + 2 w(x, y).
    std::int64_t best = f.best;
    for (std::size_t x = start; x + 1 < f.count; ++x) {
      const std::int64_t vx = value + f.acc[x];
      const std::int64_t* row = f.rows[x];
      for (std::size_t y = x + 1; y < f.count; ++y) {
        best = std::max(best, vx + f.acc[y] + 2 * row[f.e[y]]);
      }
    }
    f.best = best;
    return;
  }
  for (std::size_t x = start; x + (f.size - depth) <= f.count; ++x) {
    if (!split_takes(f, x)) continue;
    const std::int64_t* row = f.rows[x];
    for (std::size_t y = x + 1; y < f.count; ++y) f.acc[y] += 2 * row[f.e[y]];
    const packer_mask gpu = packer_mask{1} << f.e[x];
    f.gpus |= gpu;
    split_extend(f, depth + 1, x + 1, value + f.acc[x]);
    f.gpus &= ~gpu;
    for (std::size_t y = x + 1; y < f.count; ++y) f.acc[y] -= 2 * row[f.e[y]];
  }
}

}  // namespace

std::int64_t packer_search::two_blocks(packer_mask s, std::size_t pad_left) {
  // score(C) + score(S \ C) = score(S) + 2 score(C) - sum over C of the rows within S.
  std::int64_t row[32];
  std::int64_t rows2 = 0;
  for (packer_mask a = s; a != 0; a &= a - 1) {
    const auto p = static_cast<std::size_t>(std::countr_zero(a));
    row[p] = row_sum(p, s);
    rows2 += row[p];
  }
  split_frame f;
  if (!classes_.empty()) {
    f.lower = lower_;
    f.state = s;
  }
  // The blocks C holding `c0` and size - |c0| of `candidates`.
  const auto split_from = [&](packer_mask c0, packer_mask candidates, std::size_t size) {
    const auto held = static_cast<std::size_t>(std::popcount(c0));
    if (held > size || held + static_cast<std::size_t>(std::popcount(candidates)) < size) return;
    std::int64_t value = rows2 / 2 + 2 * set_score(c0);
    for (packer_mask a = c0; a != 0; a &= a - 1) value -= row[std::countr_zero(a)];
    if (held == size) {
      f.best = std::max(f.best, value);
      return;
    }
    f.count = 0;
    f.size = size;
    f.gpus = c0;
    for (packer_mask a = candidates; a != 0; a &= a - 1) {
      const auto p = static_cast<std::size_t>(std::countr_zero(a));
      f.acc[f.count] = 2 * row_sum(p, c0) - row[p];
      f.rows[f.count] = &w_[p * m_];
      f.e[f.count++] = static_cast<std::uint8_t>(p);
    }
    split_extend(f, held, 0, value);
  };
  const packer_mask in_r = s & required_;
  const packer_mask free = s & ~required_;
  if (pad_left > 0) {
    // C = the padded block (k - pad GPUs, the smaller one), anywhere in S but on no required GPU.
    split_from(0, free, k_ - pad_);
    return f.best;
  }
  // C = the block of the lowest GPU: with all the required GPUs or with none of them.
  const packer_mask lowest = s & (~s + 1U);
  if ((lowest & required_) != 0) {
    split_from(in_r, free, k_);
    return f.best;
  }
  split_from(lowest, free & ~lowest, k_);
  if (in_r != 0) split_from(lowest | in_r, free & ~lowest, k_);
  return f.best;
}

std::int64_t packer_search::rest_bound(packer_mask r, std::size_t c) {
  if (c == 0) return 0;
  if (!rank_tables_built_) build_rank_tables();
  const std::size_t pad_left = pending_padding(c);
  const std::size_t degree = k_ - 1;
  const std::size_t padded_degree = k_ - pad_ - 1;
  const auto either = [](std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(a | b);
  };
  const auto sum = [](std::int64_t a, std::int64_t b) { return a + b; };
  std::int64_t total = 0;
  std::int64_t losses[32];
  std::size_t n = 0;
  for (packer_mask a = r; a != 0; a &= a - 1) {
    const auto p = static_cast<std::size_t>(std::countr_zero(a));
    const packer_mask ranks = rank_bits_.combine(p, r, either);
    // The first `padded_degree` and `degree` partners within r: the lowest rank bits.
    packer_mask rest = ranks;
    if (pad_left > 0) {
      for (std::size_t j = 0; j < padded_degree; ++j) rest &= rest - 1;
    }
    const packer_mask padded_top = ranks ^ rest;
    for (std::size_t j = pad_left > 0 ? padded_degree : 0; j < degree; ++j) rest &= rest - 1;
    const std::int64_t top_sum = rank_sums_.combine(p, ranks ^ rest, sum);
    total += top_sum;
    if (pad_left > 0) losses[n++] = top_sum - rank_sums_.combine(p, padded_top, sum);
  }
  if (pad_left > 0) {
    // The k - pad GPUs of the padded block have k - pad - 1 partners each.
    total -= sum_of_first(losses, n, k_ - pad_, std::less<>());
  }
  return total / 2;
}

std::int64_t packer_search::known_bound(packer_mask r, std::size_t c) {
  const memo_entry* e = memo_.find(canonical(r));
  if (e != nullptr && e->exact) return e->value;
  const std::int64_t bound = rest_bound(r, c);
  return e != nullptr ? std::min(bound, e->value) : bound;
}

void packer_search::build_table() {
  table_built_ = true;
  std::size_t blocks = 1;  // C(m, k)
  for (std::size_t i = 1; i <= k_; ++i) blocks = blocks * (m_ - k_ + i) / i;
  table_.reserve(blocks);
  full_blocks((packer_mask{1} << m_) - 1U, false, [&](packer_mask b, std::int64_t score) {
    table_.push_back({score, b});
  });
}

void packer_search::sort_table_down_to(std::int64_t need) {
  if (!table_built_) build_table();
  if (need >= table_floor_) return;
  // The unsorted tail holds the blocks below the old floor: move those reaching `need` up,
  // sorted, after the sorted head (they all score below it).
  const auto by_score = [](const scored_block& x, const scored_block& y) {
    return x.score != y.score ? x.score > y.score : x.block < y.block;
  };
  const auto head = table_.begin() + static_cast<std::ptrdiff_t>(table_sorted_);
  const auto tail =
      std::partition(head, table_.end(), [need](const scored_block& e) { return e.score >= need; });
  std::sort(head, tail, by_score);
  table_sorted_ = static_cast<std::size_t>(tail - table_.begin());
  table_floor_ = need;
}

std::pair<packer_mask, std::int64_t> packer_search::best_table_block(packer_mask s) {
  if (!table_built_) build_table();
  // Every block of the sorted head outscores the tail: the first one inside S is the best.
  for (std::size_t i = 0; i < table_sorted_; ++i) {
    const scored_block& e = table_[i];
    if ((e.block & ~s) == 0 && takes_lowest_twins(e.block, s)) return {e.block, e.score};
  }
  scored_block best{0, 0};
  for (std::size_t i = table_sorted_; i < table_.size(); ++i) {
    const scored_block& e = table_[i];
    if ((e.block & ~s) != 0 || !takes_lowest_twins(e.block, s)) continue;
    if (best.block == 0 || e.score > best.score ||
        (e.score == best.score && e.block < best.block)) {
      best = e;
    }
  }
  return {best.block, best.score};
}

std::int64_t packer_search::best_padded_block(packer_mask s) {
  const std::size_t j = k_ - pad_;
  std::uint8_t list[32];
  std::size_t count = 0;
  for (packer_mask a = s & ~required_; a != 0; a &= a - 1) {
    list[count++] = static_cast<std::uint8_t>(std::countr_zero(a));
  }
  if (count < j) return packer_infeasible;
  if (j == 1) return 0;
  std::int64_t best = packer_infeasible;
  auto keep = [&](packer_mask, std::int64_t score) { best = std::max(best, score); };
  static_cast<void>(subsets(list, count, j, 0, 0, 0, 0, s, true, 0, packer_infeasible, keep));
  return best;
}

std::int64_t packer_search::by_largest_block(packer_mask s, std::size_t c, std::size_t pad_left,
                                             std::int64_t floor) {
  const std::size_t blocks = (c + pad_left) / k_;
  const auto full = static_cast<std::int64_t>(pad_left > 0 ? blocks - 1 : blocks);
  const std::int64_t padded = pad_left > 0 ? best_padded_block(s) : 0;
  if (padded == packer_infeasible) return remember(s, packer_infeasible, true);
  std::int64_t best = floor;
  bool found = false;
  std::int64_t bound = packer_infeasible;  // best(S) <= bound unless found
  const std::size_t rest_c = c - k_;
  // Returns score + best(S \ b) or an upper bound of it at or below best.
  auto descend = [&](packer_mask b, std::int64_t score) {
    const std::int64_t sub = solve(s & ~b, std::max(best - score, packer_infeasible));
    if (sub <= packer_infeasible) return;
    if (score + sub > best) {
      best = score + sub;
      found = true;
    } else {
      bound = std::max(bound, score + sub);
    }
  };
  packer_mask first = 0;
  std::int64_t first_score = 0;
  if (floor <= packer_infeasible) {
    // An incumbent before filtering: the best-scoring block and the best completion of its rest.
    if (use_table_) {
      std::tie(first, first_score) = best_table_block(s);
    } else {
      full_blocks(s, true, [&](packer_mask b, std::int64_t score) {
        if (first == 0 || score > first_score) {
          first = b;
          first_score = score;
        }
      });
    }
    if (first == 0) return remember(s, packer_infeasible, true);
    descend(first, first_score);
  }
  // A partition above `best` has a full block A with full * score(A) + padded > best: its
  // highest-scoring full block. Blocks below that are cut; `below` keeps the best cut score.
  if (depth_ >= scratch_.size()) scratch_.resize(depth_ + 1);
  std::vector<candidate>& list = scratch_[depth_];
  list.clear();
  // When more blocks clear the threshold than the lowest GPU has blocks (many near-equal
  // blocks, e.g. few distinct pair scores), the lowest-GPU search is the cheaper one.
  const std::size_t cap = lowest_block_count(c, pad_left);
  bool too_many = false;
  // Blocks scoring below `need` cannot clear the threshold (enumeration cuts them early).
  const std::int64_t need =
      best <= packer_infeasible ? packer_infeasible : floor_div(best - padded, full) + 1;
  std::int64_t below = need <= packer_infeasible ? packer_infeasible : need - 1;
  auto keep = [&](packer_mask b, std::int64_t score) {
    if (b == first) return false;
    if (full * score + padded <= best) {
      below = std::max(below, score);
      return false;
    }
    if (list.size() == cap) {
      too_many = true;
      return true;
    }
    list.push_back({score, score, b});
    return false;
  };
  // The table lists the blocks best first; the enumeration in combination order.
  if (use_table_) {
    table_blocks(s, true, need, keep);
  } else {
    full_blocks(s, true, keep, need);
  }
  // (With an incumbent the floor drops below it, so that its value comes back exact.)
  const std::int64_t pivot_floor = found ? best - 1 : floor;
  if (too_many) return by_one_gpu(s, c, pad_left, pivot_floor, weakest_gpu(s));
  // Many blocks tie at the top score (few distinct pair scores), and a partition above the
  // threshold can have any of them as its highest-scoring block; the weakest GPU is in one
  // block of each partition too, and usually in far fewer candidates: search its blocks
  // instead when fewer of them pass the loose bound (partners within S) than listed blocks do.
  // (Counting on every long list, ties or not, cost sparse 10/20 matrices 30%.)
  std::int64_t top = first != 0 ? first_score : packer_infeasible;
  for (const candidate& cand : list) top = std::max(top, cand.score);
  std::size_t ties = 0;  // listed blocks at the top score
  for (const candidate& cand : list) ties += cand.score == top ? 1 : 0;
  if (4 * ties > cap) {
    const state_tops tops = tops_of(s);
    std::size_t listed = 0;
    for (const candidate& cand : list) {
      if (2 * cand.score + loose_rest_bound2(tops, s, cand.block, false) > 2 * best) ++listed;
    }
    const std::size_t pivot = weakest_gpu(s);
    std::size_t held = 0;
    blocks_holding(s, pivot, pad_left, true,
                   [&](packer_mask b, std::int64_t score, bool in_padding) {
                     if (valid_block(b, in_padding) &&
                         2 * score + loose_rest_bound2(tops, s, b, in_padding) > 2 * best) {
                       ++held;
                     }
                     return held >= listed;
                   });
    if (held < listed) return by_one_gpu(s, c, pad_left, pivot_floor, pivot);
  }
  if (!use_table_) {
    std::sort(list.begin(), list.end(), [](const candidate& x, const candidate& y) {
      return x.score != y.score ? x.score > y.score : x.block < y.block;
    });
  }
  ++depth_;
  for (std::size_t i = 0; i < scratch_[depth_ - 1].size(); ++i) {
    const candidate cand = scratch_[depth_ - 1][i];
    if (full * cand.score + padded <= best) {
      below = std::max(below, cand.score);
      break;
    }
    const std::int64_t key = cand.score + known_bound(s & ~cand.block, rest_c);
    if (key <= best) {
      bound = std::max(bound, key);
      continue;
    }
    descend(cand.block, cand.score);
  }
  --depth_;
  if (found) return remember(s, best, true);
  if (below > packer_infeasible) bound = std::max(bound, full * below + padded);
  return remember(s, bound, false);
}

std::size_t packer_search::weakest_gpu(packer_mask s) const noexcept {
  std::size_t pivot = 0;
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  for (packer_mask a = s; a != 0; a &= a - 1) {
    const auto p = static_cast<std::size_t>(std::countr_zero(a));
    if ((lower_[p] & s) != 0) continue;
    if (const std::int64_t row = row_sum(p, s); row < lowest) {
      pivot = p;
      lowest = row;
    }
  }
  return pivot;
}

std::int64_t packer_search::by_one_gpu(packer_mask s, std::size_t c, std::size_t pad_left,
                                       std::int64_t floor, std::size_t pivot) {
  std::int64_t best = floor;
  bool found = false;
  std::int64_t bound = packer_infeasible;
  if (depth_ >= scratch_.size()) scratch_.resize(depth_ + 1);
  std::vector<candidate>& list = scratch_[depth_];
  list.clear();
  // A rest solved exactly costs one lookup; the others are ordered by a loose bound (partners
  // within S), checked against the rest's own bound before they are searched.
  const state_tops tops = tops_of(s);
  blocks_holding(s, pivot, pad_left, true, [&](packer_mask b, std::int64_t score, bool padded) {
    if (!valid_block(b, padded)) return false;
    const memo_entry* e = memo_.find(canonical(s & ~b));
    if (e != nullptr && e->exact) {
      if (e->value <= packer_infeasible) return false;
      if (score + e->value > best) {
        best = score + e->value;
        found = true;
      } else {
        bound = std::max(bound, score + e->value);
      }
      return false;
    }
    std::int64_t key = score + loose_rest_bound2(tops, s, b, padded) / 2;
    if (e != nullptr) key = std::min(key, score + e->value);
    if (key <= best) {
      bound = std::max(bound, key);
      return false;
    }
    list.push_back({key, score, b});
    return false;
  });
  std::sort(list.begin(), list.end(), [](const candidate& x, const candidate& y) {
    return x.key != y.key ? x.key > y.key : x.block < y.block;
  });
  ++depth_;
  for (std::size_t i = 0; i < scratch_[depth_ - 1].size(); ++i) {
    const candidate cand = scratch_[depth_ - 1][i];
    if (cand.key <= best) {
      bound = std::max(bound, cand.key);
      break;
    }
    const packer_mask rest = s & ~cand.block;
    const std::int64_t tighter =
        cand.score + rest_bound(rest, c - static_cast<std::size_t>(std::popcount(cand.block)));
    if (tighter <= best) {
      bound = std::max(bound, tighter);
      continue;
    }
    const std::int64_t sub = solve(rest, std::max(best - cand.score, packer_infeasible));
    if (sub <= packer_infeasible) continue;
    if (cand.score + sub > best) {
      best = cand.score + sub;
      found = true;
    } else {
      bound = std::max(bound, cand.score + sub);
    }
  }
  --depth_;
  if (found) return remember(s, best, true);
  return remember(s, bound, false);
}

}  // namespace hetsched::detail
