// SPDX-License-Identifier: MIT
// The affinity packer's exact partition search (private; affinity_packer_search.cpp holds the
// values, affinity_packer_select.cpp the chosen block of each mode).
//
// A state is the set S of available GPUs not yet placed (a bitmask over the ascending available
// list, at most max_packer_gpus); the padding still to place follows from |S| (pending iff |S| is
// not a multiple of the size k, and then it is `pad` = (k - m % k) % k slots, all in one block of
// k - pad GPUs). best(S) is the highest sum of block scores over the partitions of S in which the
// block holding a required GPU holds all of them and no padding.
//
// Values (solve): threshold queries with memoized exact values and upper bounds.
// - One block: its score. Two blocks: exact, every split enumerated with incremental row sums
//   (value = score(S) + 2 score(C) - sum over C of its rows within S, C the padded block or the
//   block holding S's lowest GPU; the last two levels as one pair loop). The required GPUs are
//   placed first (C holds all or none of them), so the enumeration runs over the others only.
// - Three blocks or more, size >= 3, "largest block first": every partition of S whose value
//   exceeds f has a full block A with F * score(A) + P > f (F full blocks, P the best padded
//   block), its highest-scoring one. So best(S) = max over such A of score(A) + best(S \ A);
//   the full blocks above the threshold are listed by score (the best one first, so f rises
//   fast), and each is cut by the partner bound of its rest before its rest is solved with the
//   floor f - score(A). On unstructured matrices only a few blocks clear the threshold (a block
//   must be far above the mean), where the lowest-GPU DP had to look at every block holding the
//   lowest GPU.
//   - Listing: on nodes of four blocks or more (size 3..5 of 16 GPUs) from the block table,
//     every full block of the node sorted by score once, lazily down to the lowest threshold
//     asked so far (a state scans the head while the score clears its threshold and keeps the
//     blocks inside it: a few thousand mask tests where an enumeration visited C(|S|, k) blocks
//     and their prefixes). On other nodes (few states below the top) by enumeration, partial
//     blocks cut when even the highest pair score for every missing pair cannot reach the
//     threshold.
//   - Pivot: when many listed blocks tie at the top score (more than a quarter of the lowest
//     GPU's block count: few distinct pair scores, where any of them can be a partition's
//     highest-scoring block), the blocks holding the weakest GPU (lowest row sum within S)
//     are counted against the listed ones, both through the loose bound (partners within S);
//     if fewer pass, the state is searched by that GPU instead, as it is when more blocks clear
//     the threshold than the lowest GPU has. Every partition has exactly one block
//     holding any given GPU, so either search is exact; only the speed differs (20 at 3/4 of
//     the pairs, size 4: 1.5 ms by the largest blocks, 0.15 ms by the weakest GPU, 0.4 ms by
//     the lowest one).
// - Size 2 (matchings) and those fallbacks: the blocks of one GPU (the lowest for size 2, as
//   go-gpuallocator's recursion); a rest solved exactly costs one lookup, the others are sorted
//   by a loose bound (partners within S) and checked against the rest's own bound before they
//   are searched.
// - The selection walks (affinity_packer_select.cpp) choose per state between the largest blocks
//   and the lowest GPU's blocks the same way; every choice is exact. spread with a bonus first
//   scans the blocks in key order (weakest_in_key_order), each checked exactly, and walks only
//   if that needs too many checks.
// - Twin GPUs (equal scores to all others, not required) are interchangeable: states are memoized
//   per twin orbit and the value searches take one block per orbit.
// - The partner bound of a rest R: each GPU's k - 1 best partners within R (k - pad - 1 for the
//   GPUs of a pending padded block: the k - pad smallest losses come off), halved; O(|R| * k)
//   through per-GPU rank tables.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace hetsched::detail {

/// floor(a / b) for b > 0.
[[nodiscard]] inline std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// A set of positions in the ascending available list.
using packer_mask = std::uint32_t;

/// The sum of the `take` first of values[0, n) in the order `before` (take <= n; reorders
/// values): insertion into a sorted head for the few of a block, nth_element beyond.
template <typename Before>
[[nodiscard]] std::int64_t sum_of_first(std::int64_t* values, std::size_t n, std::size_t take,
                                        Before before) {
  if (take > 4) {
    std::nth_element(values, values + (take - 1), values + n, before);
  } else {
    for (std::size_t i = 1; i < n; ++i) {
      const std::int64_t v = values[i];
      if (i >= take && !before(v, values[take - 1])) continue;
      std::size_t j = i < take ? i : take - 1;
      if (i >= take) values[i] = values[j];
      for (; j > 0 && before(v, values[j - 1]); --j) values[j] = values[j - 1];
      values[j] = v;
    }
  }
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < take; ++i) sum += values[i];
  return sum;
}

/// best() of a state without a valid partition (also the "no floor" of solve()).
inline constexpr std::int64_t packer_infeasible = -(std::int64_t{1} << 62);

/// The exact search of one allocate() call: `w` is the m x m score matrix of the available GPUs
/// (row-major, by position), `k` the request size, `required` the required positions.
class packer_search {
 public:
  packer_search(std::vector<std::int64_t> w, std::size_t m, std::size_t k, packer_mask required);

  /// Returns best(S) exactly, packer_infeasible if S has no valid partition.
  [[nodiscard]] std::int64_t best(packer_mask s) { return solve(s, packer_infeasible); }

  /// Threshold query: returns v with v > floor and v == best(S), or v <= floor and best(S) <= v.
  [[nodiscard]] std::int64_t solve(packer_mask s, std::int64_t floor);

  /// Returns true if some partition of S scores `target` (callers pass target >= best(S)).
  [[nodiscard]] bool reaches(packer_mask s, std::int64_t target) {
    return solve(s, target - 1) >= target;
  }

  /// Returns the score of the set S (sum over its pairs).
  [[nodiscard]] std::int64_t set_score(packer_mask s) const noexcept;

  /// lexmax: the padding-free block holding the required GPUs in a partition scoring `target`
  /// (= best(all)) with the highest score + bonus sum, then the lexicographically smallest.
  [[nodiscard]] packer_mask lexmax_block(packer_mask all, std::int64_t target,
                                         std::span<const std::int64_t> bonus);

  /// spread: over every partition scoring best(all), the padding-free block holding the required
  /// GPUs with the highest bonus sum - score, then the lexicographically smallest.
  [[nodiscard]] packer_mask weakest_block(packer_mask all, std::span<const std::int64_t> bonus);

  /// compat: go-gpuallocator's first maximal partition of `all` (target = best(all)), blocks in
  /// its order, each with a flag telling whether it holds the padding.
  [[nodiscard]] std::vector<std::pair<packer_mask, bool>> first_partition(packer_mask all,
                                                                          std::int64_t target);

 private:
  struct memo_entry {
    packer_mask key = 0;
    bool exact = false;
    std::int64_t value = 0;
  };

  /// Open-addressing memo keyed by state (a few thousand states per call at most in practice).
  class memo_table {
   public:
    memo_table();
    [[nodiscard]] const memo_entry* find(packer_mask s) const noexcept;
    /// Stores an exact value, or lowers the upper bound of S to `value`.
    void store(packer_mask s, std::int64_t value, bool exact);

   private:
    [[nodiscard]] std::size_t slot(packer_mask s) const noexcept;
    void grow();
    std::vector<memo_entry> slots_;
    std::size_t used_ = 0;
  };

  /// A candidate block of a value search: its score, the key it is ordered by, the block.
  struct candidate {
    std::int64_t key = 0;
    std::int64_t score = 0;
    packer_mask block = 0;
  };

  // Values (affinity_packer_search.cpp).
  std::int64_t remember(packer_mask s, std::int64_t value, bool exact);
  std::int64_t two_blocks(packer_mask s, std::size_t pad_left);
  std::int64_t by_largest_block(packer_mask s, std::size_t c, std::size_t pad_left,
                                std::int64_t floor);
  std::int64_t by_one_gpu(packer_mask s, std::size_t c, std::size_t pad_left, std::int64_t floor,
                          std::size_t pivot);
  /// The GPU of S with the lowest sum of scores to the others of S (the lowest of its twins;
  /// ties: the lowest position): its blocks rarely clear a threshold, so few are searched.
  [[nodiscard]] std::size_t weakest_gpu(packer_mask s) const noexcept;
  /// The best padded block of S (k - pad GPUs, none required); packer_infeasible if none.
  std::int64_t best_padded_block(packer_mask s);
  /// An upper bound of best(R) (the partner bound); |R| = c.
  [[nodiscard]] std::int64_t rest_bound(packer_mask r, std::size_t c);
  /// The best upper bound of best(R) known without searching: the memo, else the partner bound.
  [[nodiscard]] std::int64_t known_bound(packer_mask r, std::size_t c);
  void build_rank_tables();

  /// A cheap bound for many blocks of one state S (affinity_packer_select.cpp): top[p] is the
  /// sum of p's k - 1 best scores to other GPUs of S, loss[p] the part of it a GPU of the pending
  /// padded block cannot have (its k - pad-th .. k - 1-th best).
  struct state_tops {
    std::int64_t top[32] = {};
    std::int64_t loss[32] = {};
    std::int64_t total = 0;
  };
  [[nodiscard]] state_tops tops_of(packer_mask s) const noexcept;
  /// The most a block inside a set can score (spread's walk: the blocks of `all` bound those of
  /// every state under it): `full` for k GPUs holding all or none of the required ones, `padded`
  /// for the k - pad GPUs of a padded block (none required; 0 without padding).
  struct block_caps {
    std::int64_t full = 0;
    std::int64_t padded = 0;
  };
  /// The caps of `all` (c GPUs, three blocks or more, best(all) = target).
  [[nodiscard]] block_caps caps_of(packer_mask all, std::size_t c, std::int64_t target);
  /// An upper bound of bonus sum - score (spread's key) over the full blocks of the partitions
  /// of S (c GPUs) scoring `target`, whose other blocks score at most `caps`.
  [[nodiscard]] std::int64_t weakest_key_bound(packer_mask s, std::size_t c, std::int64_t target,
                                               std::span<const std::int64_t> bonus,
                                               const block_caps& caps);
  /// spread's scan: the full blocks holding the required GPUs by decreasing bonus sum - score
  /// (then lexicographically smallest), each checked exactly against target = best(all); returns
  /// the first on a partition scoring target (weakest_block()'s answer), 0 if more than
  /// `max_checks` exact checks would be needed (or more than a fixed number of blocks pass the
  /// cheap bounds). `all` holds three blocks or more; `caps` are its caps.
  [[nodiscard]] packer_mask weakest_in_key_order(packer_mask all, std::int64_t target,
                                                 std::span<const std::int64_t> bonus,
                                                 const block_caps& caps, std::size_t max_checks);
  /// Takes the candidate (key, block)s best key first (ties: lexicographically smallest) and
  /// returns the first block whose rest in `all` (c GPUs) reaches target - its score (`all`
  /// holds three blocks or more); 0 if none does, or when that needs more than `max_checks`
  /// exact checks. Empties `candidates`.
  [[nodiscard]] packer_mask first_reaching(
      std::vector<std::pair<std::int64_t, packer_mask>>& candidates, packer_mask all, std::size_t c,
      std::int64_t target, std::size_t max_checks);
  /// Returns go-gpuallocator's first block holding the lowest GPU of S in a partition of S
  /// scoring `target` = best(S), with its padding flag, if it comes before `before` (0: any);
  /// else {0, false}. S holds two blocks or more; `seen` marks the rests already searched.
  std::pair<packer_mask, bool> first_lowest_block(packer_mask s, std::int64_t target,
                                                  packer_mask before, std::vector<bool>& seen);
  /// first_lowest_block() from the complete list of candidates for the highest-scoring full
  /// block A of a partition of S scoring `target` (largest_blocks()); sorts `largest`.
  std::pair<packer_mask, bool> first_by_largest(packer_mask s, std::int64_t target,
                                                packer_mask before, std::vector<bool>& seen,
                                                std::vector<candidate>& largest);
  /// The full blocks of S (one per twin orbit or all) that can be the highest-scoring full block
  /// of a partition scoring at least `target`: full * score + best padded block >= target.
  /// Returns false (list incomplete) as soon as there are more than `cap` of them.
  [[nodiscard]] bool largest_blocks(packer_mask s, std::size_t c, std::size_t pad_left,
                                    std::int64_t target, bool one_per_orbit, std::size_t cap,
                                    std::vector<candidate>& out);
  /// The number of blocks holding the lowest GPU of a state of c GPUs (the lowest-first search).
  [[nodiscard]] std::size_t lowest_block_count(std::size_t c, std::size_t pad_left) const noexcept;
  /// Twice an upper bound of best(S \ B) from the tops of S: O(|B| + |S| when padding pends).
  [[nodiscard]] std::int64_t loose_rest_bound2(const state_tops& t, packer_mask s, packer_mask b,
                                               bool padded) const noexcept;

  /// Calls f(block, score) for every block of k GPUs of S holding all or none of the required
  /// GPUs; with `one_per_orbit`, twins are taken lowest first. f may return true to stop.
  template <typename F>
  void full_blocks(packer_mask s, bool one_per_orbit, F&& f, std::int64_t need = packer_infeasible);
  /// Calls f(subset, score) for every `j`-subset of list[next..count) added to `chosen` (which
  /// held `base` GPUs before) whose score reaches `need` (partial subsets whose score plus
  /// max_pair_ for every pair still to add stays below it are cut, and so are complete subsets
  /// below it); returns true if f (returning bool) asked to stop.
  template <typename F>
  bool subsets(const std::uint8_t* list, std::size_t count, std::size_t j, std::size_t next,
               packer_mask chosen, std::size_t base, std::size_t have, packer_mask s,
               bool one_per_orbit, std::int64_t score, std::int64_t need, F& f);
  /// Calls f(block, score) for the full blocks of S scoring at least `need` (one per twin orbit
  /// with `one_per_orbit`), best score first, ties lowest mask first, from the table of the
  /// node's blocks (use_table_); f returns true to stop.
  template <typename F>
  void table_blocks(packer_mask s, bool one_per_orbit, std::int64_t need, F&& f);
  /// The best-scoring full block of S (one per twin orbit; ties: the lowest mask) and its
  /// score from the table; {0, 0} if S has none.
  [[nodiscard]] std::pair<packer_mask, std::int64_t> best_table_block(packer_mask s);
  /// Sorts the table down to `need`: afterwards every block scoring at least `need` is in the
  /// sorted head (built on first use).
  void sort_table_down_to(std::int64_t need);
  void build_table();
  /// Returns true if block b of S holds the lowest GPUs of S of each of its twin classes.
  [[nodiscard]] bool takes_lowest_twins(packer_mask b, packer_mask s) const noexcept {
    for (packer_mask a = b & twins_; a != 0; a &= a - 1) {
      if ((lower_[std::countr_zero(a)] & s & ~b) != 0) return false;
    }
    return true;
  }
  /// Calls f(block, score, padded) for every block of S holding its lowest GPU, in
  /// go-gpuallocator's order (other members in lexicographic combination order, then the
  /// padding slots); blocks holding part of the padding are skipped as go-gpuallocator does.
  /// Stops when f returns true.
  template <typename F>
  void lowest_blocks(packer_mask s, std::size_t pad_left, bool one_per_orbit, F&& f) {
    blocks_holding(s, static_cast<std::size_t>(std::countr_zero(s)), pad_left, one_per_orbit, f);
  }
  /// As lowest_blocks() for the blocks of S holding `pivot` (a GPU of S): full blocks, and
  /// padded blocks (k - pad GPUs) while padding pends; the other members in ascending order.
  template <typename F>
  void blocks_holding(packer_mask s, std::size_t pivot, std::size_t pad_left, bool one_per_orbit,
                      F&& f);
  template <typename F>
  bool extend_lowest(const std::uint8_t* list, std::size_t count, std::size_t pad_left,
                     bool one_per_orbit, packer_mask s, std::size_t next, std::size_t have,
                     packer_mask b, std::int64_t score, F& f);

  [[nodiscard]] packer_mask canonical(packer_mask s) const noexcept;
  [[nodiscard]] bool valid_block(packer_mask b, bool padded) const noexcept {
    const packer_mask in_r = b & required_;
    return in_r == 0 || (in_r == required_ && !padded);
  }
  /// The padding pending in a state of c GPUs.
  [[nodiscard]] std::size_t pending_padding(std::size_t c) const noexcept {
    return c % k_ == 0 ? 0 : pad_;
  }
  /// The sum of w(p, q) over q in S.
  [[nodiscard]] std::int64_t row_sum(std::size_t p, packer_mask s) const noexcept {
    return row_tables_.combine(p, s, [](std::int64_t a, std::int64_t b) { return a + b; });
  }

  /// Per row, a value for each subset of the low and of the high half of a mask's `bits` bits
  /// (2 * 2^ceil(bits / 2) values a row); combine() joins the two halves.
  template <typename T>
  struct half_tables {
    std::vector<T> low;
    std::vector<T> high;
    std::size_t shift = 0;  ///< Bits in the low half.
    std::size_t low_size = 1;
    std::size_t high_size = 1;
    void reset(std::size_t rows, std::size_t bits) {
      shift = (bits + 1) / 2;
      low_size = std::size_t{1} << shift;
      high_size = std::size_t{1} << (bits - shift);
      low.assign(rows * low_size, T{});
      high.assign(rows * high_size, T{});
    }
    template <typename J>
    [[nodiscard]] T combine(std::size_t row, packer_mask s, J join) const noexcept {
      return join(low[row * low_size + (s & (low_size - 1))], high[row * high_size + (s >> shift)]);
    }
    /// Fills row `row` from value(i) of each single bit i: a set's value joins its lowest bit's
    /// value to the value of the set without it.
    template <typename V, typename J>
    void fill(std::size_t row, V value, J join) {
      for (std::size_t x = 1; x < low_size; ++x) {
        low[row * low_size + x] = join(low[row * low_size + (x & (x - 1))],
                                       value(static_cast<std::size_t>(std::countr_zero(x))));
      }
      for (std::size_t x = 1; x < high_size; ++x) {
        high[row * high_size + x] =
            join(high[row * high_size + (x & (x - 1))],
                 value(shift + static_cast<std::size_t>(std::countr_zero(x))));
      }
    }
  };

  std::vector<std::int64_t> w_;
  std::int64_t max_pair_ = 0;  ///< The highest pair score.
  std::size_t m_;
  std::size_t k_;
  std::size_t pad_;
  packer_mask required_;
  memo_table memo_;
  /// row_sum() of p over each half of a set of GPUs.
  half_tables<std::int64_t> row_tables_;
  /// Per GPU its partners by decreasing score (ties: lower position). Built on first use:
  /// rank_bits_ maps a set of GPUs to their ranks in p's order (bit i = i-th best partner),
  /// rank_sums_ sums p's scores over a set of ranks.
  std::vector<std::uint8_t> order_;
  half_tables<std::uint16_t> rank_bits_;
  half_tables<std::int64_t> rank_sums_;
  bool rank_tables_built_ = false;
  packer_mask class_of_[32] = {};     ///< Each GPU's twin class (itself if it has no twin).
  packer_mask lower_[32] = {};        ///< The GPUs of its class below each GPU.
  std::vector<packer_mask> classes_;  ///< The twin classes with two GPUs or more.
  packer_mask twins_ = 0;             ///< Their GPUs.
  /// A full block of the node and its score.
  struct scored_block {
    std::int64_t score = 0;
    packer_mask block = 0;
  };
  /// Every full block of the node (all or none of the required GPUs); [0, table_sorted_) holds
  /// those scoring at least table_floor_, best first (ties: lowest mask), the rest score below.
  std::vector<scored_block> table_;
  std::size_t table_sorted_ = 0;
  std::int64_t table_floor_ = std::numeric_limits<std::int64_t>::max();
  bool use_table_ = false;
  bool table_built_ = false;
  /// Candidate lists of the value searches, one per recursion depth.
  std::vector<std::vector<candidate>> scratch_;
  std::size_t depth_ = 0;
};

template <typename F>
bool packer_search::subsets(const std::uint8_t* list, std::size_t count, std::size_t j,
                            std::size_t next, packer_mask chosen, std::size_t base,
                            std::size_t have, packer_mask s, bool one_per_orbit, std::int64_t score,
                            std::int64_t need, F& f) {
  if (have == j) {
    if (score < need) return false;
    if constexpr (std::is_same_v<std::invoke_result_t<F&, packer_mask, std::int64_t>, bool>) {
      return f(chosen, score);
    } else {
      f(chosen, score);
      return false;
    }
  }
  const auto left = static_cast<std::int64_t>(j - have);
  const auto held = static_cast<std::int64_t>(base + have);
  if (score + max_pair_ * (left * held + left * (left - 1) / 2) < need) return false;
  for (std::size_t i = next; i + (j - have) <= count; ++i) {
    const std::size_t p = list[i];
    if (one_per_orbit && (lower_[p] & s & ~chosen) != 0) continue;
    if (subsets(list, count, j, i + 1, chosen | (packer_mask{1} << p), base, have + 1, s,
                one_per_orbit, score + row_sum(p, chosen), need, f)) {
      return true;
    }
  }
  return false;
}

template <typename F>
void packer_search::full_blocks(packer_mask s, bool one_per_orbit, F&& f, std::int64_t need) {
  std::uint8_t list[32];
  std::size_t count = 0;
  for (packer_mask a = s & ~required_; a != 0; a &= a - 1) {
    list[count++] = static_cast<std::uint8_t>(std::countr_zero(a));
  }
  if (subsets(list, count, k_, 0, 0, 0, 0, s, one_per_orbit, 0, need, f)) return;
  const packer_mask in_r = s & required_;
  const auto held = static_cast<std::size_t>(std::popcount(in_r));
  if (in_r != 0 && held <= k_) {
    static_cast<void>(subsets(list, count, k_ - held, 0, in_r, held, 0, s, one_per_orbit,
                              set_score(in_r), need, f));
  }
}

template <typename F>
void packer_search::table_blocks(packer_mask s, bool one_per_orbit, std::int64_t need, F&& f) {
  sort_table_down_to(need);
  for (std::size_t i = 0; i < table_sorted_; ++i) {
    const scored_block& e = table_[i];
    if (e.score < need) return;
    if ((e.block & ~s) != 0 || (one_per_orbit && !takes_lowest_twins(e.block, s))) continue;
    if (f(e.block, e.score)) return;
  }
}

template <typename F>
void packer_search::blocks_holding(packer_mask s, std::size_t pivot, std::size_t pad_left,
                                   bool one_per_orbit, F&& f) {
  std::uint8_t list[32];
  std::size_t count = 0;
  list[count++] = static_cast<std::uint8_t>(pivot);
  for (packer_mask a = s & ~(packer_mask{1} << pivot); a != 0; a &= a - 1) {
    list[count++] = static_cast<std::uint8_t>(std::countr_zero(a));
  }
  static_cast<void>(
      extend_lowest(list, count, pad_left, one_per_orbit, s, 1, 1, packer_mask{1} << pivot, 0, f));
}

template <typename F>
bool packer_search::extend_lowest(const std::uint8_t* list, std::size_t count, std::size_t pad_left,
                                  bool one_per_orbit, packer_mask s, std::size_t next,
                                  std::size_t have, packer_mask b, std::int64_t score, F& f) {
  if (have == k_) return f(b, score, false);
  const std::size_t need = k_ - have;
  for (std::size_t i = next; i < count; ++i) {
    const std::size_t left_after = count - 1 - i;
    // After GPU i the block still needs need-1 members: all real, or real ones then every
    // padding slot. Both get harder as i grows, so the loop can stop at the first failure.
    const bool real_finish = left_after >= need - 1;
    const bool nil_finish =
        pad_left > 0 && need - 1 >= pad_left && left_after >= need - 1 - pad_left;
    if (!real_finish && !nil_finish) break;
    const std::size_t p = list[i];
    if (one_per_orbit && (lower_[p] & s & ~b) != 0) continue;
    if (extend_lowest(list, count, pad_left, one_per_orbit, s, i + 1, have + 1,
                      b | (packer_mask{1} << p), score + row_sum(p, b), f)) {
      return true;
    }
  }
  if (pad_left > 0 && need == pad_left) return f(b, score, true);
  return false;
}

}  // namespace hetsched::detail
