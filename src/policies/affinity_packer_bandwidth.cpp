// SPDX-License-Identifier: MIT
// Bandwidth terms of the affinity packer (affinity_packer.hpp): pair scores by real bandwidth,
// NCCL-style ring and tree bottleneck bandwidth of a GPU set, and the bandwidth node score.
//
// The ring bottleneck is the bottleneck travelling-salesman value of the set: the highest t such
// that the pairs with bandwidth >= t hold a Hamiltonian cycle. It is found by a binary search over
// the distinct pair bandwidths, each step a bitmask DP over the subsets holding the lowest GPU
// (reach[S] = the GPUs a path from it through exactly S can end at). The maximum spanning tree's
// lowest edge (Prim), the tree figure, and every GPU's second-best pair bound it from above.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/views.hpp>

#include "affinity_packer_detail.hpp"

namespace hetsched {

namespace {

__extension__ typedef __int128 i128;

std::int64_t pair_bandwidth(const node_views& views, bandwidth_source source, std::size_t i,
                            std::size_t j) noexcept {
  if (i == j) return 0;
  return source == bandwidth_source::nccl ? views.nccl_bandwidth_mb_s(i, j)
                                          : views.bandwidth_mb_s(i, j);
}

/// Returns true if the GPUs 0..k-1 with adjacency `adj` (bit j of adj[i]: pair i-j usable) hold a
/// Hamiltonian cycle. Precondition: 3 <= k <= 16.
bool has_hamiltonian_cycle(const std::vector<std::uint32_t>& adj, std::size_t k) {
  const std::uint32_t full = (std::uint32_t{1} << k) - 1U;
  bool complete = true;
  for (std::size_t i = 0; i < k && complete; ++i) {
    complete = (adj[i] | (std::uint32_t{1} << i)) == full;
  }
  if (complete) return true;
  for (std::size_t i = 0; i < k; ++i) {
    if (std::popcount(adj[i]) < 2) return false;
  }
  // reach[S >> 1] for S holding GPU 0: the ends of paths from GPU 0 visiting exactly S.
  std::vector<std::uint16_t> reach(std::size_t{1} << (k - 1), 0);
  reach[0] = 1;
  for (std::uint32_t half = 0; half < reach.size(); ++half) {
    const std::uint32_t ends = reach[half];
    if (ends == 0) continue;
    const std::uint32_t s = (half << 1) | 1U;
    // u extends a path of S iff one of S's path ends is adjacent to u.
    for (std::uint32_t next = full & ~s; next != 0; next &= next - 1) {
      const auto u = static_cast<std::size_t>(std::countr_zero(next));
      if ((adj[u] & ends) != 0) {
        reach[(s | (std::uint32_t{1} << u)) >> 1] |= static_cast<std::uint16_t>(1U << u);
      }
    }
  }
  for (std::uint32_t ends = reach[full >> 1]; ends != 0; ends &= ends - 1) {
    if ((adj[static_cast<std::size_t>(std::countr_zero(ends))] & 1U) != 0) return true;
  }
  return false;
}

}  // namespace

pair_score_matrix pair_score_matrix::from_views(const node_views& views, const pair_terms& terms) {
  const std::size_t n = views.gpu_count();
  std::vector<std::vector<std::int64_t>> rows(n, std::vector<std::int64_t>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      std::int64_t v = pair_weight(views.relation(i, j));
      if (terms.metric == pair_metric::bandwidth) {
        v += bandwidth_scale * pair_bandwidth(views, terms.source, i, j);
      }
      if (terms.same_numa != 0 && views.gpu_numa(i) >= 0 &&
          views.gpu_numa(i) == views.gpu_numa(j)) {
        v += terms.same_numa;
      }
      rows[i][j] = std::max<std::int64_t>(v, 0);
    }
  }
  pair_score_matrix m;
  m.n_ = n;
  m.cells_.reserve(n * n);
  for (const auto& row : rows) m.cells_.insert(m.cells_.end(), row.begin(), row.end());
  return m;
}

pair_score_matrix pair_score_matrix::bandwidths(const node_views& views, bandwidth_source source) {
  const std::size_t n = views.gpu_count();
  pair_score_matrix m;
  m.n_ = n;
  m.cells_.assign(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      m.cells_[i * n + j] = std::max<std::int64_t>(pair_bandwidth(views, source, i, j), 0);
    }
  }
  return m;
}

result<collective_bandwidth> collective_bandwidth_of(const pair_score_matrix& bandwidths,
                                                     std::span<const std::uint32_t> gpus) {
  auto set = detail::sorted_unique(gpus, bandwidths.size(), "collective");
  if (!set) return std::move(set).error();
  const std::size_t k = set->size();
  if (k > max_packer_gpus) {
    return make_error(errc::out_of_range, "{} GPUs given, at most {} are supported", k,
                      max_packer_gpus);
  }
  collective_bandwidth out;
  if (k < 2) return out;
  auto bw = [&](std::size_t a, std::size_t b) { return bandwidths.score((*set)[a], (*set)[b]); };
  std::vector<std::int64_t> values;
  out.pair_min_mb_s = std::numeric_limits<std::int64_t>::max();
  for (std::size_t a = 0; a < k; ++a) {
    for (std::size_t b = a + 1; b < k; ++b) {
      out.pair_min_mb_s = std::min(out.pair_min_mb_s, bw(a, b));
      values.push_back(bw(a, b));
    }
  }
  // Prim on the maximum spanning tree: its lowest edge is the best tree bottleneck.
  {
    std::vector<std::int64_t> key(k, -1);
    std::vector<bool> in(k, false);
    key[0] = std::numeric_limits<std::int64_t>::max();
    out.tree_mb_s = std::numeric_limits<std::int64_t>::max();
    for (std::size_t step = 0; step < k; ++step) {
      std::size_t pick = k;
      for (std::size_t v = 0; v < k; ++v) {
        if (!in[v] && (pick == k || key[v] > key[pick])) pick = v;
      }
      in[pick] = true;
      out.tree_mb_s = std::min(out.tree_mb_s, key[pick]);
      for (std::size_t v = 0; v < k; ++v) {
        if (!in[v]) key[v] = std::max(key[v], bw(pick, v));
      }
    }
  }
  if (k == 2) {
    out.ring_mb_s = out.pair_min_mb_s;
    return out;
  }
  // Binary search: the highest distinct value t (<= the tree bottleneck) whose pairs >= t hold a
  // Hamiltonian cycle; the lowest value always does (every pair is usable).
  // A ring uses two pairs of every GPU, so it is also bounded by each GPU's second-best pair.
  std::int64_t cap = out.tree_mb_s;
  for (std::size_t a = 0; a < k; ++a) {
    std::int64_t first = -1;
    std::int64_t second = -1;
    for (std::size_t b = 0; b < k; ++b) {
      if (a == b) continue;
      const std::int64_t v = bw(a, b);
      if (v > first) {
        second = first;
        first = v;
      } else if (v > second) {
        second = v;
      }
    }
    cap = std::min(cap, second);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  values.erase(std::upper_bound(values.begin(), values.end(), cap), values.end());
  std::size_t lo = 0;
  std::size_t hi = values.size() - 1;
  std::vector<std::uint32_t> adj(k, 0);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    for (std::size_t a = 0; a < k; ++a) {
      adj[a] = 0;
      for (std::size_t b = 0; b < k; ++b) {
        if (a != b && bw(a, b) >= values[mid]) adj[a] |= std::uint32_t{1} << b;
      }
    }
    if (has_hamiltonian_cycle(adj, k)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  out.ring_mb_s = values[lo];
  return out;
}

result<std::int64_t> bandwidth_node_score(const pair_score_matrix& bandwidths,
                                          std::span<const std::uint32_t> gpus,
                                          std::int64_t reference_mb_s) {
  auto figures = collective_bandwidth_of(bandwidths, gpus);
  if (!figures) return std::move(figures).error();
  if (gpus.size() < 2 || reference_mb_s <= 0) return std::int64_t{0};
  if (figures->ring_mb_s >= reference_mb_s) return std::int64_t{100};
  // ring < reference, so ring * 100 / reference < 100; 128 bits keep ring * 100 exact.
  const i128 scaled = static_cast<i128>(figures->ring_mb_s) * 100 / reference_mb_s;
  return static_cast<std::int64_t>(scaled);
}

}  // namespace hetsched
