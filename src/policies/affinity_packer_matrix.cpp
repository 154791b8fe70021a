// SPDX-License-Identifier: MIT
// Pair scores of the affinity packer (affinity_packer.hpp): go-gpuallocator's link weights, score
// matrices from rows or topology views, set scores and kerthcet's node score. The solver is in
// affinity_packer.cpp, the bandwidth terms in affinity_packer_bandwidth.cpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/graph.hpp>

namespace hetsched {

std::int64_t pcie_weight(pcie_relation r) noexcept {
  switch (r) {
    case pcie_relation::pix: return packer_weight::pix;
    case pcie_relation::pxb: return packer_weight::pxb;
    case pcie_relation::phb: return packer_weight::phb;
    case pcie_relation::node: return packer_weight::node;
    case pcie_relation::sys: return packer_weight::sys;
    case pcie_relation::self:
    case pcie_relation::unknown: return 0;
  }
  return 0;
}

std::int64_t pair_weight(const pair_relation& r) noexcept {
  return pcie_weight(r.pcie) + packer_weight::nvlink * static_cast<std::int64_t>(r.nvlinks);
}

result<std::int64_t> go_link_weight(std::int64_t value) {
  constexpr std::int64_t first_nvlink = 7;
  constexpr std::int64_t last_nvlink = 24;
  if (value == -1 || value == 0) return std::int64_t{0};
  if (value >= 1 && value <= 6) return value * packer_weight::sys;
  if (value >= first_nvlink && value <= last_nvlink) {
    return (value - first_nvlink + 1) * packer_weight::nvlink;
  }
  return make_error(errc::out_of_range, "go-gpuallocator link type {} is not in -1..24", value);
}

result<pair_score_matrix> pair_score_matrix::from_rows(
    std::span<const std::vector<std::int64_t>> rows) {
  const std::size_t n = rows.size();
  pair_score_matrix m;
  m.n_ = n;
  m.cells_.reserve(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].size() != n) {
      return make_error(errc::invalid_argument, "pair score row {} has {} cells, expected {}", i,
                        rows[i].size(), n);
    }
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t v = rows[i][j];
      if (v < 0) {
        return make_error(errc::invalid_argument, "pair score ({}, {}) is negative: {}", i, j, v);
      }
      if (i == j && v != 0) {
        return make_error(errc::invalid_argument,
                          "pair score ({}, {}) on the diagonal is {}, not 0", i, j, v);
      }
      if (j < i && rows[j][i] != v) {
        return make_error(errc::invalid_argument,
                          "pair score ({}, {}) = {} differs from ({}, {}) = {}", i, j, v, j, i,
                          rows[j][i]);
      }
      m.cells_.push_back(v);
    }
  }
  return m;
}

pair_score_matrix pair_score_matrix::from_views(const node_views& views) {
  const std::size_t n = views.gpu_count();
  pair_score_matrix m;
  m.n_ = n;
  m.cells_.assign(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j) m.cells_[i * n + j] = pair_weight(views.relation(i, j));
    }
  }
  return m;
}

pair_score_matrix pair_score_matrix::from_topology(const node_topology& topology) {
  return from_views(topology.views());
}

std::int64_t pair_score_matrix::set_score(std::span<const std::uint32_t> gpus) const noexcept {
  std::int64_t total = 0;
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    for (std::size_t b = a + 1; b < gpus.size(); ++b) total += score(gpus[a], gpus[b]);
  }
  return total;
}

std::int64_t node_score(const pair_score_matrix& scores,
                        std::span<const std::uint32_t> gpus) noexcept {
  constexpr std::int64_t max_pair = 18 * packer_weight::nvlink;
  const auto k = static_cast<std::int64_t>(gpus.size());
  if (k < 2) return 0;
  const std::int64_t max_score = k * (k - 1) / 2 * max_pair;
  return std::min<std::int64_t>(100, scores.set_score(gpus) * 100 / max_score);
}

}  // namespace hetsched
