// SPDX-License-Identifier: MIT
// The affinity packer's previous exact search (transitional): the memoized lowest-GPU subset DP
// with branch and bound and twin reduction that affinity_packer_search.cpp replaces, kept only so
// that tests/policies/affinity_packer_test.cpp can compare the two on many random inputs.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <functional>
#include <limits>
#include <utility>

#include <hetsched/policies/affinity_packer.hpp>

#include "affinity_packer_detail.hpp"

namespace hetsched {

namespace {

using mask_type = std::uint32_t;

/// Memo marks: best(S) not computed yet / no valid partition of S.
constexpr std::int64_t unknown_sum = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t infeasible_sum = unknown_sum + 1;

/// Returns true if sorted(a) is lexicographically before sorted(b) (same popcount, a != b).
bool lex_before(mask_type a, mask_type b) noexcept {
  const mask_type d = a ^ b;
  return (a & (d & (~d + 1U))) != 0;
}

class solver {
 public:
  solver(std::vector<std::int64_t> w, std::size_t m, std::size_t k, mask_type required)
      : w_(std::move(w)),
        m_(m),
        k_(k),
        pad_((k - m % k) % k),
        required_(required),
        memo_(std::size_t{1} << m, unknown_sum),
        order_(m * m, 0),
        scratch_(m + 2) {
    // Twins: two GPUs, neither required, with equal scores to every other GPU. Swapping twins
    // maps every state holding both onto itself without changing any score, so best(S) only
    // depends on how many GPUs of each twin class S holds, and a block of S only needs to take
    // the lowest GPUs of S in each class (the lowest GPU of S stays in it).
    for (std::size_t p = 0; p < m_; ++p) {
      if (((required_ >> p) & 1U) != 0 || class_of_[p] != 0) continue;
      mask_type members = mask_type{1} << p;
      for (std::size_t q = p + 1; q < m_; ++q) {
        if (((required_ >> q) & 1U) != 0 || class_of_[q] != 0) continue;
        bool twin = true;
        for (std::size_t r = 0; r < m_ && twin; ++r) {
          twin = r == p || r == q || w_[p * m_ + r] == w_[q * m_ + r];
        }
        if (twin) members |= mask_type{1} << q;
      }
      for (mask_type a = members; a != 0; a &= a - 1) {
        const auto q = static_cast<std::size_t>(std::countr_zero(a));
        class_of_[q] = members;
        lower_[q] = members & ((mask_type{1} << q) - 1U);
      }
      if (std::popcount(members) > 1) classes_.push_back(members);
    }
    // order_: each GPU's partners, best score first (ties: lower position), for local_bound().
    for (std::size_t p = 0; p < m_; ++p) {
      std::uint8_t* row = &order_[p * m_];
      std::size_t n = 0;
      for (std::size_t q = 0; q < m_; ++q) {
        if (q != p) row[n++] = static_cast<std::uint8_t>(q);
      }
      std::stable_sort(row, row + n, [&](std::uint8_t x, std::uint8_t y) {
        return w_[p * m_ + x] > w_[p * m_ + y];
      });
    }
  }

  /// Returns best(S): the highest partition score of S (padding pending iff |S| % k != 0) in
  /// which a block holding a required GPU holds all of them and no padding; infeasible_sum if
  /// there is none. Exact: a block is pruned only if its bound cannot beat the best so far.
  std::int64_t solve(mask_type s) {
    s = canonical(s);
    if (memo_[s] != unknown_sum) return memo_[s];
    const mask_type in_r = s & required_;
    if (in_r != 0 && in_r != required_) return memo_[s] = infeasible_sum;
    const auto c = static_cast<std::size_t>(std::popcount(s));
    if (c == 0) return memo_[s] = 0;
    const std::size_t pad_left = c % k_ == 0 ? 0 : pad_;
    if (c + pad_left == k_) {
      return memo_[s] = valid_block(s, pad_left > 0) ? mask_score(s) : infeasible_sum;
    }
    std::int64_t best = infeasible_sum;
    if (c + pad_left == 2 * k_) return memo_[s] = best_split(s, pad_left);
    const bound bound_s = local_bound(s);
    for_each_block(s, pad_left, true, [&](mask_type b, std::int64_t score, bool padded) {
      if (!valid_block(b, padded)) return false;
      const mask_type rest = s & ~b;
      // Without twins a solved rest costs one lookup and is exact, so it goes before the bound;
      // with twins the lookup needs canonical() and the bound (which cuts much more on such
      // symmetric topologies) goes first.
      const bool cut = best != infeasible_sum;
      std::int64_t sub = classes_.empty() ? memo_[rest] : unknown_sum;
      if (sub == unknown_sum) {
        if (cut && 2 * score + rest_bound2(bound_s, s, b, padded) <= 2 * best) return false;
        sub = solve(rest);
      }
      if (sub != infeasible_sum && score + sub > best) best = score + sub;
      return false;
    });
    return memo_[s] = best;
  }

  /// Returns best(S) for a state S of exactly two blocks (|S| + pending padding = 2k): every
  /// split into the block B holding S's lowest GPU and the rest, scored in O(1) each from
  /// score(S \ B) = score(S) + score(B) - sum over B of each GPU's row sum within S.
  std::int64_t best_split(mask_type s, std::size_t pad_left) {
    split_frame fr;
    std::int64_t total2 = 0;
    for (mask_type a = s; a != 0; a &= a - 1) {
      const auto p = static_cast<std::uint8_t>(std::countr_zero(a));
      std::int64_t row = 0;
      for (mask_type o = s; o != 0; o &= o - 1)
        row += w_[p * m_ + static_cast<std::size_t>(std::countr_zero(o))];
      fr.list[fr.count] = p;
      fr.row[fr.count++] = row;
      total2 += row;
    }
    fr.state = s;
    fr.score_s = total2 / 2;
    fr.pad_left = pad_left;
    fr.members[0] = fr.list[0];
    split_extend(fr, 1, 1, mask_type{1} << fr.list[0], 0, fr.row[0]);
    return fr.best;
  }

  /// Returns the lexmax block of `all`: padding-free, holding the required GPUs, in a partition
  /// scoring `target` (= solve(all)); the highest block score + bonus (with `lowest`: the highest
  /// bonus - block score), then the lexicographically smallest. When `all` holds two blocks every
  /// candidate is checked exactly in O(1) (the rest is one block); otherwise the candidates that
  /// pass the bound are popped best first from a heap, each costing one bound or one solve().
  mask_type lexmax_block(mask_type all, std::int64_t target, std::span<const std::int64_t> bonus,
                         bool lowest) {
    const auto c = static_cast<std::size_t>(std::popcount(all));
    const std::size_t pad_left = c % k_ == 0 ? 0 : pad_;
    const bool two_blocks = c + pad_left == 2 * k_;
    subset_frame fr;
    std::int64_t score_all2 = 0;
    for (mask_type a = all; a != 0; a &= a - 1) {
      const auto p = static_cast<std::size_t>(std::countr_zero(a));
      for (mask_type o = all; o != 0; o &= o - 1) {
        fr.row[p] += w_[p * m_ + static_cast<std::size_t>(std::countr_zero(o))];
      }
      score_all2 += fr.row[p];
      if (((others_of(all) >> p) & 1U) != 0) fr.pool[fr.count++] = static_cast<std::uint8_t>(p);
    }
    std::int64_t base_rows = 0;
    for (mask_type a = required_; a != 0; a &= a - 1) {
      const auto p = static_cast<std::uint8_t>(std::countr_zero(a));
      fr.members[fr.have++] = p;
      base_rows += fr.row[p];
    }
    const bound bound_all = local_bound(all);
    mask_type chosen = 0;
    std::int64_t chosen_key = 0;
    std::vector<std::pair<std::int64_t, mask_type>> candidates;
    subsets_scored(
        fr, 0, required_, mask_score(required_), base_rows,
        [&](mask_type b, std::int64_t score, std::int64_t rows) {
          const std::int64_t gain = mask_bonus(b, bonus);
          const std::int64_t key = lowest ? gain - score : score + gain;
          if (two_blocks) {
            // score(b) + score(rest), rest = all \ b (it holds the padding if any).
            if (2 * score + score_all2 / 2 - rows != target) return;
            if (chosen == 0 || key > chosen_key || (key == chosen_key && lex_before(b, chosen))) {
              chosen = b;
              chosen_key = key;
            }
            return;
          }
          if (2 * score + rest_bound2(bound_all, all, b, false) >= 2 * target) {
            candidates.emplace_back(key, b);
          }
        });
    if (two_blocks) return chosen;
    // Worse = lower key, then lexicographically later: the heap's top is the next best.
    const auto worse = [](const auto& x, const auto& y) {
      if (x.first != y.first) return x.first < y.first;
      return x.second != y.second && lex_before(y.second, x.second);
    };
    std::make_heap(candidates.begin(), candidates.end(), worse);
    while (!candidates.empty()) {
      std::pop_heap(candidates.begin(), candidates.end(), worse);
      const mask_type b = candidates.back().second;
      candidates.pop_back();
      // The rest's own bound (partners within the rest only) is tighter than the one from `all`
      // and much cheaper than solving the rest.
      const mask_type rest = all & ~b;
      const std::int64_t score = mask_score(b);
      if (2 * score + rest_bound2(local_bound(rest), rest, 0, false) < 2 * target) continue;
      const std::int64_t sub = solve(rest);
      if (sub != infeasible_sum && score + sub == target) return b;
    }
    return 0;
  }

  /// Returns the spread block of `all`: over every partition scoring `target` (= solve(all)),
  /// the padding-free block holding the required GPUs with the highest bonus - block score, then
  /// the lexicographically smallest. Walks the states on optimal paths (each optimal partition is
  /// one path: the block holding the lowest GPU first), so it only solves states that lie on
  /// them or survive the bound; each state is expanded once.
  mask_type weakest_block(mask_type all, std::span<const std::int64_t> bonus) {
    mask_type chosen = 0;
    std::int64_t chosen_key = 0;
    auto consider = [&](mask_type b, std::int64_t score) {
      if ((b & required_) != required_) return;
      const std::int64_t key = mask_bonus(b, bonus) - score;
      if (chosen == 0 || key > chosen_key || (key == chosen_key && lex_before(b, chosen))) {
        chosen = b;
        chosen_key = key;
      }
    };
    std::vector<bool> seen(memo_.size(), false);
    std::vector<mask_type> stack{all};
    seen[all] = true;
    while (!stack.empty()) {
      const mask_type s = stack.back();
      stack.pop_back();
      const auto c = static_cast<std::size_t>(std::popcount(s));
      const std::size_t pad_left = c % k_ == 0 ? 0 : pad_;
      if (c + pad_left == k_) {
        if (pad_left == 0) consider(s, mask_score(s));
        continue;
      }
      const std::int64_t target = solve(s);
      const bound bound_s = local_bound(s);
      for_each_block(s, pad_left, false, [&](mask_type b, std::int64_t score, bool padded) {
        if (!valid_block(b, padded)) return false;
        if (2 * score + rest_bound2(bound_s, s, b, padded) < 2 * target) return false;
        const mask_type rest = s & ~b;
        const std::int64_t sub = solve(rest);
        if (sub == infeasible_sum || score + sub != target) return false;
        if (!padded) consider(b, score);
        if (!seen[rest]) {
          seen[rest] = true;
          stack.push_back(rest);
        }
        return false;
      });
    }
    return chosen;
  }

  /// Returns go-gpuallocator's first maximal partition of `all`, blocks in its order, each with
  /// a flag telling whether it holds the padding. Precondition: solve(all) is feasible.
  std::vector<std::pair<mask_type, bool>> first_partition(mask_type all) {
    std::vector<std::pair<mask_type, bool>> blocks;
    mask_type s = all;
    while (s != 0) {
      const auto c = static_cast<std::size_t>(std::popcount(s));
      const std::size_t pad_left = c % k_ == 0 ? 0 : pad_;
      if (c + pad_left == k_) {
        blocks.emplace_back(s, pad_left > 0);
        break;
      }
      const std::int64_t target = solve(s);
      const bound bound_s = local_bound(s);
      mask_type chosen = 0;
      bool chosen_padded = false;
      for_each_block(s, pad_left, false, [&](mask_type b, std::int64_t score, bool padded) {
        if (!valid_block(b, padded)) return false;
        if (2 * score + rest_bound2(bound_s, s, b, padded) < 2 * target) return false;
        const std::int64_t sub = solve(s & ~b);
        if (sub == infeasible_sum || score + sub != target) return false;
        chosen = b;
        chosen_padded = padded;
        return true;
      });
      blocks.emplace_back(chosen, chosen_padded);
      s &= ~chosen;
    }
    return blocks;
  }

  /// Returns the representative of S's twin orbit: each class's GPUs of S moved to its highest.
  [[nodiscard]] mask_type canonical(mask_type s) const noexcept {
    for (const mask_type members : classes_) {
      mask_type top = members;
      for (int drop = std::popcount(members) - std::popcount(s & members); drop > 0; --drop) {
        top &= top - 1;
      }
      s = (s & ~members) | top;
    }
    return s;
  }

  /// Returns the sum of `bonus` (indexed by position in the available list) over S; 0 if empty.
  [[nodiscard]] static std::int64_t mask_bonus(mask_type s,
                                               std::span<const std::int64_t> bonus) noexcept {
    if (bonus.empty()) return 0;
    std::int64_t total = 0;
    for (mask_type a = s; a != 0; a &= a - 1) {
      total += bonus[static_cast<std::size_t>(std::countr_zero(a))];
    }
    return total;
  }

  [[nodiscard]] std::int64_t mask_score(mask_type s) const noexcept {
    std::int64_t total = 0;
    for (mask_type a = s; a != 0; a &= a - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(a));
      for (mask_type b = a & (a - 1); b != 0; b &= b - 1) {
        total += w_[i * m_ + static_cast<std::size_t>(std::countr_zero(b))];
      }
    }
    return total;
  }

 private:
  /// Bounds for the subsets of one state S: top[p] is the sum of p's k-1 best scores to other
  /// GPUs of S; loss[p] the part of it a GPU of the pending padded block (k - pad GPUs, so
  /// k-pad-1 partners) cannot have: its k-pad-th .. k-1-th best. For R within S, half of
  /// sum(top over R) minus (k - pad) * min(loss over R) while the padding is pending bounds
  /// best(R): each GPU has at most k-1 partners and each pair is counted from both ends.
  struct bound {
    std::int64_t top[32] = {};
    std::int64_t loss[32] = {};
    std::int64_t total = 0;
  };

  /// Returns the bounds of state S. O(|S| * (k + skipped partners)).
  [[nodiscard]] bound local_bound(mask_type s) const noexcept {
    bound out;
    for (mask_type a = s; a != 0; a &= a - 1) {
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

  /// Returns twice an upper bound of best(S \ B), given the bounds of S.
  [[nodiscard]] std::int64_t rest_bound2(const bound& bs, mask_type s, mask_type b,
                                         bool padded) const noexcept {
    std::int64_t total = bs.total;
    for (mask_type a = b; a != 0; a &= a - 1) total -= bs.top[std::countr_zero(a)];
    const mask_type rest = s & ~b;
    if (!padded && pad_ > 0 && static_cast<std::size_t>(std::popcount(rest)) % k_ != 0) {
      std::int64_t least = std::numeric_limits<std::int64_t>::max();
      for (mask_type a = rest; a != 0; a &= a - 1) {
        least = std::min(least, bs.loss[std::countr_zero(a)]);
      }
      if (rest != 0) total -= static_cast<std::int64_t>(k_ - pad_) * least;
    }
    return total;
  }

  /// A block may hold required GPUs only if it holds all of them and no padding.
  [[nodiscard]] bool valid_block(mask_type b, bool padded) const noexcept {
    const mask_type in_r = b & required_;
    return in_r == 0 || (in_r == required_ && !padded);
  }

  /// Calls f(block, score, padded) for every block of S holding its lowest GPU, in
  /// go-gpuallocator's order (lexicographic combinations of the other GPUs, then the padding
  /// slots); blocks holding only part of the padding are skipped as go-gpuallocator does. Stops
  /// when f returns true.
  template <typename F>
  void for_each_block(mask_type s, std::size_t pad_left, bool twin_reduced, F&& f) {
    frame fr;
    fr.count = 0;
    fr.skip_twins = twin_reduced;
    fr.state = s;
    for (mask_type a = s; a != 0; a &= a - 1) {
      fr.list[fr.count++] = static_cast<std::uint8_t>(std::countr_zero(a));
    }
    fr.pad_left = pad_left;
    fr.members[0] = fr.list[0];
    static_cast<void>(
        extend(fr, 1, 1, mask_type{1} << fr.list[0], std::int64_t{0}, std::forward<F>(f)));
  }

  struct frame {
    std::uint8_t list[32] = {};
    std::uint8_t members[32] = {};
    std::size_t count = 0;
    std::size_t pad_left = 0;
    bool skip_twins = false;
    mask_type state = 0;
  };

  template <typename F>
  bool extend(frame& fr, std::size_t next, std::size_t have, mask_type b, std::int64_t score,
              F&& f) {
    if (have == k_) return f(b, score, false);
    const std::size_t need = k_ - have;
    for (std::size_t i = next; i < fr.count; ++i) {
      const std::size_t left_after = fr.count - 1 - i;
      // After GPU i the block still needs need-1 members: all real, or real ones then every
      // padding slot. Both get harder as i grows, so the loop can stop at the first failure.
      const bool real_finish = left_after >= need - 1;
      const bool nil_finish =
          fr.pad_left > 0 && need - 1 >= fr.pad_left && left_after >= need - 1 - fr.pad_left;
      if (!real_finish && !nil_finish) break;
      const std::size_t p = fr.list[i];
      if (fr.skip_twins && (lower_[p] & fr.state & ~b) != 0) continue;
      std::int64_t add = 0;
      for (std::size_t q = 0; q < have; ++q) add += w_[p * m_ + fr.members[q]];
      fr.members[have] = static_cast<std::uint8_t>(p);
      if (extend(fr, i + 1, have + 1, b | (mask_type{1} << p), score + add, f)) return true;
    }
    if (fr.pad_left > 0 && need == fr.pad_left) return f(b, score, true);
    return false;
  }

  /// The GPUs of `all` that are not required.
  [[nodiscard]] mask_type others_of(mask_type all) const noexcept { return all & ~required_; }

  /// subsets_scored()'s state: the pool to choose from, the block's members so far, row sums.
  struct subset_frame {
    std::uint8_t pool[32] = {};
    std::uint8_t members[32] = {};
    std::int64_t row[32] = {};  ///< Per GPU: its row sum within the state.
    std::size_t count = 0;
    std::size_t have = 0;
  };

  /// Calls f(block, score, rows) for every block of k GPUs made of b (fr.have members) and
  /// members of fr.pool from position `next` on; score and the row sums `rows` grow
  /// incrementally.
  template <typename F>
  void subsets_scored(subset_frame& fr, std::size_t next, mask_type b, std::int64_t score,
                      std::int64_t rows, F&& f) {
    if (fr.have == k_) {
      f(b, score, rows);
      return;
    }
    for (std::size_t i = next; i + (k_ - fr.have) <= fr.count; ++i) {
      const std::size_t p = fr.pool[i];
      std::int64_t add = 0;
      for (std::size_t q = 0; q < fr.have; ++q) add += w_[p * m_ + fr.members[q]];
      fr.members[fr.have++] = static_cast<std::uint8_t>(p);
      subsets_scored(fr, i + 1, b | (mask_type{1} << p), score + add, rows + fr.row[p], f);
      --fr.have;
    }
  }

  struct split_frame {
    std::uint8_t list[32] = {};
    std::uint8_t members[32] = {};
    std::int64_t row[32] = {};  ///< Per position of list: the GPU's row sum within the state.
    std::size_t count = 0;
    std::size_t pad_left = 0;
    mask_type state = 0;
    std::int64_t score_s = 0;
    std::int64_t best = infeasible_sum;
  };

  /// best_split()'s enumeration: grows the block b (`have` GPUs, `score`, row sums `rows`) from
  /// list position `next`; a complete block (k GPUs, or k - pad_left holding the padding) is
  /// scored with its rest. Twins are taken lowest first (the others give the same values).
  void split_extend(split_frame& fr, std::size_t next, std::size_t have, mask_type b,
                    std::int64_t score, std::int64_t rows) {
    const bool can_pad = fr.pad_left > 0 && have + fr.pad_left == k_;
    if (have == k_ || can_pad) {
      const bool padded = have != k_;
      const mask_type rest = fr.state & ~b;
      if (valid_block(b, padded) && valid_block(rest, !padded && fr.pad_left > 0)) {
        fr.best = std::max(fr.best, 2 * score + fr.score_s - rows);
      }
      if (have == k_) return;
    }
    for (std::size_t i = next; i < fr.count; ++i) {
      // The next block size to reach: the padded one first (k - pad_left), then k.
      const std::size_t target = fr.pad_left > 0 && have < k_ - fr.pad_left ? k_ - fr.pad_left : k_;
      if (fr.count - i < target - have) break;
      const std::size_t p = fr.list[i];
      if ((lower_[p] & fr.state & ~b) != 0) continue;
      std::int64_t add = 0;
      for (std::size_t q = 0; q < have; ++q) add += w_[p * m_ + fr.members[q]];
      fr.members[have] = static_cast<std::uint8_t>(p);
      split_extend(fr, i + 1, have + 1, b | (mask_type{1} << p), score + add, rows + fr.row[i]);
    }
  }

  /// A block of solve(S): twice its score plus twice the bound of the rest (key2), its score.
  struct candidate {
    std::int64_t key2 = 0;
    std::int64_t score = 0;
    mask_type block = 0;
  };

  std::vector<std::int64_t> w_;
  std::size_t m_;
  std::size_t k_;
  std::size_t pad_;
  mask_type required_;
  std::vector<std::int64_t> memo_;
  std::vector<std::uint8_t> order_;
  mask_type class_of_[32] = {};     ///< Each GPU's twin class (itself if it has no twin).
  mask_type lower_[32] = {};        ///< The GPUs of its class below each GPU.
  std::vector<mask_type> classes_;  ///< The twin classes with two GPUs or more.
  /// solve()'s candidate lists, one per recursion depth (each level places a block).
  std::vector<std::vector<candidate>> scratch_;
  std::size_t depth_ = 0;
};

}  // namespace

namespace detail {

result<packer_answer> allocate_bonus_reference(const pair_score_matrix& scores,
                                               std::span<const std::uint32_t> available,
                                               std::span<const std::uint32_t> required,
                                               std::size_t size, packer_mode mode,
                                               std::span<const std::int64_t> gpu_bonus,
                                               bool lowest) {
  if (size == 0) return make_error(errc::invalid_argument, "the request size is 0");
  auto avail = sorted_unique(available, scores.size(), "available");
  if (!avail) return std::move(avail).error();
  auto req = sorted_unique(required, scores.size(), "required");
  if (!req) return std::move(req).error();
  if (avail->size() > max_packer_gpus) {
    return make_error(errc::out_of_range, "{} GPUs are available, at most {} are supported",
                      avail->size(), max_packer_gpus);
  }
  packer_answer answer;
  if (avail->size() < size) {
    answer.status = packer_status::insufficient_gpus;
    return answer;
  }
  if (req->size() > size) {
    answer.status = packer_status::too_many_required;
    return answer;
  }
  const std::size_t m = avail->size();
  mask_type required_mask = 0;
  for (const std::uint32_t g : *req) {
    const auto it = std::lower_bound(avail->begin(), avail->end(), g);
    if (it == avail->end() || *it != g) {
      answer.status = packer_status::required_unavailable;
      return answer;
    }
    required_mask |= mask_type{1} << static_cast<std::size_t>(it - avail->begin());
  }
  if (size == 1 && mode == packer_mode::lexmax && req->empty()) {
    // Every partition scores 0: take the GPU whose pairs with the other available GPUs sum
    // lowest, so the best-connected GPUs stay free (lowest index on ties).
    // A bonus counts against the damage.
    std::size_t pick = 0;
    std::int64_t pick_damage = 0;
    for (std::size_t i = 0; i < m; ++i) {
      std::int64_t damage = gpu_bonus.empty() ? 0 : -gpu_bonus[(*avail)[i]];
      for (std::size_t j = 0; j < m; ++j) damage += scores.score((*avail)[i], (*avail)[j]);
      if (i == 0 || damage < pick_damage) {
        pick = i;
        pick_damage = damage;
      }
    }
    answer.gpus.push_back((*avail)[pick]);
    return answer;
  }
  std::vector<std::int64_t> w(m * m, 0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < m; ++j) w[i * m + j] = scores.score((*avail)[i], (*avail)[j]);
  }
  const mask_type all = m == 32 ? ~mask_type{0} : (mask_type{1} << m) - 1;
  solver dp(std::move(w), m, size, required_mask);
  const std::int64_t best = dp.solve(all);
  if (best == infeasible_sum) {
    return make_error(errc::internal, "the packer found no partition for a feasible request");
  }
  answer.partition_score = best;
  mask_type chosen = 0;
  if (mode == packer_mode::compat) {
    const auto blocks = dp.first_partition(all);
    std::int64_t chosen_score = -1;
    bool chosen_padded = false;
    for (const auto& [b, padded] : blocks) {
      if ((b & required_mask) != required_mask) continue;
      const std::int64_t score = dp.mask_score(b);
      if (score > chosen_score) {
        chosen_score = score;
        chosen = b;
        chosen_padded = padded;
      }
    }
    if (chosen_padded) {
      answer.status = packer_status::padded_block;
      return answer;
    }
  }
  if (mode == packer_mode::lexmax) {
    std::vector<std::int64_t> bonus;
    if (!gpu_bonus.empty()) {
      bonus.reserve(m);
      for (const std::uint32_t g : *avail) bonus.push_back(gpu_bonus[g]);
    }
    chosen = lowest ? dp.weakest_block(all, bonus) : dp.lexmax_block(all, best, bonus, false);
    if (chosen == 0) {
      return make_error(errc::internal, "the packer lost the block of its best partition");
    }
  }
  for (mask_type a = chosen; a != 0; a &= a - 1) {
    answer.gpus.push_back((*avail)[static_cast<std::size_t>(std::countr_zero(a))]);
  }
  answer.block_score = scores.set_score(answer.gpus);
  return answer;
}

}  // namespace detail

}  // namespace hetsched
