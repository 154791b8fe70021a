// SPDX-License-Identifier: MIT
// fgd_scheduler: the FGD score and the five baselines (BestFit, DotProduct, GpuPacking,
// GpuClustering, Random), the device choice of each, and the highest-score / smallest-name pick.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/model/assert.hpp>
#include <hetsched/policies/fgd.hpp>

namespace hetsched {
namespace {

constexpr std::int64_t max_score = 100;
constexpr double max_spec_cpu = 128000;  // the reference's normalisers
constexpr double max_spec_gpu = 8000;
constexpr std::int64_t max_spec_gpu_int = 8000;
constexpr std::size_t max_devices = 64;

using device_buffer = std::array<std::int64_t, max_devices>;

bool is_sharing(const fgd_task& t) { return t.num_gpu == 1 && t.gpu_milli < fgd_gpu_milli; }

std::int64_t total_left(std::span<const std::int64_t> left) {
  return std::accumulate(left.begin(), left.end(), std::int64_t{0});
}

/// Returns the lowest-index fully free devices, as many as the task's total milli needs.
std::vector<std::uint32_t> exclusive_devices(std::span<const std::int64_t> left,
                                             const fgd_task& t) {
  std::vector<std::uint32_t> out;
  std::int64_t need = t.gpu_milli * static_cast<std::int64_t>(t.num_gpu);
  for (std::uint32_t i = 0; i < left.size() && need > 0; ++i) {
    if (left[i] == fgd_gpu_milli) {
      out.push_back(i);
      need -= fgd_gpu_milli;
    }
  }
  return out;
}

/// Returns the device with the least room that still fits a sharing task (lowest index on ties).
std::vector<std::uint32_t> best_fit_device(std::span<const std::int64_t> left, const fgd_task& t) {
  std::optional<std::uint32_t> best;
  for (std::uint32_t i = 0; i < left.size(); ++i) {
    if (left[i] >= t.gpu_milli && (!best || left[i] < left[*best])) best = i;
  }
  return best ? std::vector<std::uint32_t>{*best} : std::vector<std::uint32_t>{};
}

/// The reference's NodeResource.Sub: CPU minus the request; each GPU taken from the device with
/// the least room that fits (stable ascending order of room). Writes the devices into `after`.
void subtract(std::span<const std::int64_t> left, const fgd_task& t, device_buffer& after) {
  std::copy(left.begin(), left.end(), after.begin());
  if (t.num_gpu == 0) return;
  std::array<std::uint32_t, max_devices> order{};
  std::iota(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(left.size()), 0U);
  std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(left.size()),
                   [&](std::uint32_t a, std::uint32_t b) { return left[a] < left[b]; });
  std::uint32_t need = t.num_gpu;
  for (std::size_t k = 0; k < left.size() && need > 0; ++k) {
    if (t.gpu_milli <= after[order[k]]) {
      after[order[k]] -= t.gpu_milli;
      --need;
    }
  }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::int64_t fgd_value(double before, double after) {
  return static_cast<std::int64_t>(sigmoid((before - after) / 1000) *
                                   static_cast<double>(max_score));
}

/// FGD score and devices given the node's current fragment `before`.
fgd_choice fgd_score(const fgd_cluster& c, std::size_t node, const fgd_task& t, double before,
                     const fgd_workload& w) {
  const auto left = c.gpu_left(node);
  const std::string_view model = c.spec(node).model;
  const std::int64_t cpu_after = c.cpu_left(node) - t.cpu_milli;
  device_buffer after{};
  const auto view = [&] { return std::span<const std::int64_t>(after.data(), left.size()); };
  fgd_choice out;
  out.node = static_cast<std::uint32_t>(node);
  if (is_sharing(t)) {
    std::array<std::pair<std::int64_t, std::int64_t>, max_devices> seen{};  // (room, score)
    std::size_t n_seen = 0;
    bool found = false;
    for (std::uint32_t i = 0; i < left.size(); ++i) {
      if (left[i] < t.gpu_milli) continue;
      std::optional<std::int64_t> s;
      for (std::size_t k = 0; k < n_seen; ++k) {
        if (seen[k].first == left[i]) s = seen[k].second;
      }
      if (!s) {
        std::copy(left.begin(), left.end(), after.begin());
        after[i] -= t.gpu_milli;
        s = fgd_value(before, node_fragmentation(cpu_after, view(), model, w).fragment());
        seen[n_seen++] = {left[i], *s};
      }
      if (!found || *s > out.score) {
        found = true;
        out.score = *s;
        out.gpus = {i};
      }
    }
    return out;
  }
  subtract(left, t, after);
  out.score = fgd_value(before, node_fragmentation(cpu_after, view(), model, w).fragment());
  if (t.num_gpu > 0) out.gpus = exclusive_devices(left, t);
  return out;
}

std::int64_t best_fit_value(const fgd_cluster& c, std::size_t node, const fgd_task& t) {
  const double free_cpu = static_cast<double>(c.cpu_left(node));
  const double free_gpu = static_cast<double>(total_left(c.gpu_left(node)));
  const double req_cpu = static_cast<double>(t.cpu_milli);
  const double req_gpu = static_cast<double>(t.gpu_milli * static_cast<std::int64_t>(t.num_gpu));
  double s = 0;
  s += (free_cpu - req_cpu) / max_spec_cpu * 0.5;
  s += (free_gpu - req_gpu) / max_spec_gpu * 0.5;
  return static_cast<std::int64_t>((1.0 - s) * static_cast<double>(max_score));
}

std::int64_t dot_product_value(const fgd_cluster& c, std::size_t node, const fgd_task& t) {
  const std::array<double, 2> node_vec{
      static_cast<double>(c.cpu_left(node)) / max_spec_cpu,
      static_cast<double>(total_left(c.gpu_left(node))) / max_spec_gpu};
  const std::array<double, 2> pod_vec{
      static_cast<double>(t.cpu_milli) / max_spec_cpu,
      static_cast<double>(t.gpu_milli * static_cast<std::int64_t>(t.num_gpu)) / max_spec_gpu};
  double dot = 0;
  for (std::size_t i = 0; i < 2; ++i) dot += node_vec[i] * pod_vec[i];
  dot /= 2.0;
  return static_cast<std::int64_t>(static_cast<double>(max_score) * (1 - dot));
}

std::int64_t gpu_packing_value(const fgd_cluster& c, std::size_t node, const fgd_task& t) {
  if (t.gpu_milli <= 0) return 0;
  const auto left = c.gpu_left(node);
  const auto gpus = static_cast<std::int64_t>(left.size());
  const auto fully_free =
      static_cast<std::int64_t>(std::count(left.begin(), left.end(), fgd_gpu_milli));
  if (fully_free == gpus) return std::max(max_score / 3 - fully_free, fully_free);
  std::array<std::uint32_t, max_devices> order{};
  std::iota(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(left.size()), 0U);
  std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(left.size()),
                   [&](std::uint32_t a, std::uint32_t b) { return left[a] < left[b]; });
  std::uint32_t need = t.num_gpu;
  std::int64_t free_used = 0;
  std::int64_t ratio = 0;
  for (std::size_t k = 0; k < left.size() && need > 0; ++k) {
    const auto room = left[order[k]];
    if (t.gpu_milli <= room) {
      --need;
      ratio += room * 100 / fgd_gpu_milli;
      if (room == fgd_gpu_milli) ++free_used;
    }
  }
  if (free_used > 0) return std::max(max_score / 2 - free_used, max_score / 3);
  return std::max(max_score - ratio / 10, max_score / 2);
}

std::int64_t gpu_clustering_value(const fgd_cluster& c, std::size_t node, const fgd_task& t) {
  if (t.gpu_milli <= 0) return 0;
  const std::size_t slot = is_sharing(t) ? 0 : t.num_gpu;
  const auto used = max_spec_gpu_int - total_left(c.gpu_left(node));
  const std::int64_t base = max_score / 4 * used / max_spec_gpu_int;
  const auto kinds = c.affinity_kinds(node);
  if (c.affinity(node)[slot] > 0) return base + (kinds == 1 ? max_score * 3 / 4 : max_score / 2);
  return base + (kinds == 0 ? max_score / 4 : 0);
}

/// Returns the score of a baseline (not fgd, not random).
std::int64_t baseline_value(fgd_policy p, const fgd_cluster& c, std::size_t node,
                            const fgd_task& t) {
  switch (p) {
    case fgd_policy::best_fit: return best_fit_value(c, node, t);
    case fgd_policy::dot_product: return dot_product_value(c, node, t);
    case fgd_policy::gpu_packing: return gpu_packing_value(c, node, t);
    case fgd_policy::gpu_clustering: return gpu_clustering_value(c, node, t);
    case fgd_policy::fgd:
    case fgd_policy::random: break;
  }
  return 0;
}

}  // namespace

std::string_view to_string(fgd_policy p) noexcept {
  switch (p) {
    case fgd_policy::fgd: return "FGD";
    case fgd_policy::best_fit: return "BestFit";
    case fgd_policy::dot_product: return "DotProduct";
    case fgd_policy::gpu_packing: return "GpuPacking";
    case fgd_policy::gpu_clustering: return "GpuClustering";
    case fgd_policy::random: return "Random";
  }
  return "unknown";
}

std::optional<fgd_policy> parse_fgd_policy(std::string_view name) noexcept {
  for (const auto p : {fgd_policy::fgd, fgd_policy::best_fit, fgd_policy::dot_product,
                       fgd_policy::gpu_packing, fgd_policy::gpu_clustering, fgd_policy::random}) {
    if (name == to_string(p)) return p;
  }
  if (name == "DotProd") return fgd_policy::dot_product;
  return std::nullopt;
}

fgd_scheduler::fgd_scheduler(fgd_policy policy, fgd_workload workload, std::uint64_t seed)
    : policy_(policy), workload_(std::move(workload)), rng_state_(seed) {}

std::uint64_t fgd_scheduler::next_random() {
  // splitmix64: a fixed, portable stream for a given seed.
  std::uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

std::uint32_t fgd_scheduler::shape_id(const fgd_task& t) {
  const std::array<std::int64_t, 3> key{t.cpu_milli, static_cast<std::int64_t>(t.num_gpu),
                                        t.gpu_milli};
  const auto it = std::find(shapes_.begin(), shapes_.end(), key);
  if (it != shapes_.end()) return static_cast<std::uint32_t>(it - shapes_.begin());
  shapes_.push_back(key);
  return static_cast<std::uint32_t>(shapes_.size() - 1);
}

double fgd_scheduler::cached_fragment(const fgd_cluster& c, std::size_t node) {
  auto& e = cache_[node];
  const auto left = c.gpu_left(node);
  if (e.cpu_left != c.cpu_left(node) || e.model != c.spec(node).model ||
      !std::equal(left.begin(), left.end(), e.gpu_left.begin(), e.gpu_left.end())) {
    e.cpu_left = c.cpu_left(node);
    e.model = c.spec(node).model;
    e.gpu_left.assign(left.begin(), left.end());
    e.fragment = node_fragmentation(e.cpu_left, left, c.spec(node).model, workload_).fragment();
    e.scores.clear();
  }
  return e.fragment;
}

fgd_choice fgd_scheduler::score(const fgd_cluster& c, std::size_t node, const fgd_task& t) const {
  HETSCHED_ASSERT(node < c.size(), "node index out of range");
  fgd_choice out;
  out.node = static_cast<std::uint32_t>(node);
  const auto left = c.gpu_left(node);
  switch (policy_) {
    case fgd_policy::fgd: {
      const double before =
          node_fragmentation(c.cpu_left(node), left, c.spec(node).model, workload_).fragment();
      return fgd_score(c, node, t, before, workload_);
    }
    default: out.score = baseline_value(policy_, c, node, t); break;
  }
  if (t.num_gpu > 0)
    out.gpus = is_sharing(t) ? best_fit_device(left, t) : exclusive_devices(left, t);
  return out;
}

std::optional<fgd_choice> fgd_scheduler::choose(const fgd_cluster& c, const fgd_task& t) {
  if (policy_ == fgd_policy::random) {
    std::vector<std::uint32_t> feasible;
    for (std::uint32_t n = 0; n < c.size(); ++n) {
      if (c.fits(n, t)) feasible.push_back(n);
    }
    if (feasible.empty()) return std::nullopt;
    const auto pick = [&](std::uint64_t bound) {
      const std::uint64_t threshold = (0 - bound) % bound;  // unbiased rejection
      while (true) {
        const std::uint64_t x = next_random();
        if (x >= threshold) return x % bound;
      }
    };
    fgd_choice out;
    out.node = feasible[pick(feasible.size())];
    out.score = max_score;
    const auto left = c.gpu_left(out.node);
    if (is_sharing(t)) {
      std::uint64_t fitting = 0;
      for (std::uint32_t i = 0; i < left.size(); ++i) {
        if (left[i] >= t.gpu_milli && pick(++fitting) == 0) out.gpus = {i};
      }
    } else if (t.num_gpu > 0) {
      out.gpus = exclusive_devices(left, t);
    }
    return out;
  }
  std::optional<std::uint32_t> best;
  std::int64_t best_score = 0;
  const bool cached = policy_ == fgd_policy::fgd;
  std::uint32_t shape = 0;
  if (cached) {
    cache_.resize(c.size());
    shape = shape_id(t);
  }
  for (std::uint32_t n = 0; n < c.size(); ++n) {
    if (!c.fits(n, t)) continue;
    std::int64_t s = 0;
    if (cached) {
      const double before = cached_fragment(c, n);
      auto& scores = cache_[n].scores;
      if (scores.size() <= shape) scores.resize(shapes_.size(), -1);
      if (scores[shape] < 0) scores[shape] = fgd_score(c, n, t, before, workload_).score;
      s = scores[shape];
    } else {
      s = baseline_value(policy_, c, n, t);
    }
    if (!best || s > best_score || (s == best_score && c.name_rank(n) < c.name_rank(*best))) {
      best = n;
      best_score = s;
    }
  }
  if (!best) return std::nullopt;
  if (cached) return fgd_score(c, *best, t, cached_fragment(c, *best), workload_);
  return score(c, *best, t);
}

}  // namespace hetsched
