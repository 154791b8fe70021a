// SPDX-License-Identifier: MIT
// Topology-aware GPU packer (affinity_packer.hpp): the entry points. The exact search is
// affinity_packer_search.cpp (values: largest block first, two-block splits, memo of exact
// values and upper bounds) and affinity_packer_select.cpp (the block of each mode); its design
// is in affinity_packer_search.hpp and docs/packer.md.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <iterator>
#include <utility>

#include <hetsched/policies/affinity_packer.hpp>

#include "affinity_packer_detail.hpp"
#include "affinity_packer_search.hpp"

namespace hetsched {

namespace detail {

result<std::vector<std::uint32_t>> sorted_unique(std::span<const std::uint32_t> gpus, std::size_t n,
                                                 const char* what) {
  std::vector<std::uint32_t> out(gpus.begin(), gpus.end());
  std::sort(out.begin(), out.end());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] >= n) {
      return make_error(errc::out_of_range, "{} GPU {} is not below the matrix size {}", what,
                        out[i], n);
    }
    if (i > 0 && out[i] == out[i - 1]) {
      return make_error(errc::invalid_argument, "{} GPU {} is listed twice", what, out[i]);
    }
  }
  return out;
}

result<packer_answer> allocate_bonus(const pair_score_matrix& scores,
                                     std::span<const std::uint32_t> available,
                                     std::span<const std::uint32_t> required, std::size_t size,
                                     packer_mode mode, std::span<const std::int64_t> gpu_bonus,
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
  packer_mask required_mask = 0;
  for (const std::uint32_t g : *req) {
    const auto it = std::lower_bound(avail->begin(), avail->end(), g);
    if (it == avail->end() || *it != g) {
      answer.status = packer_status::required_unavailable;
      return answer;
    }
    required_mask |= packer_mask{1} << static_cast<std::size_t>(it - avail->begin());
  }
  if (size == 1 && mode == packer_mode::compat) {
    // go-gpuallocator's size-1 shortcut: the required GPU, else the lowest available one (every
    // partition scores 0; its first partition starts with the lowest GPU alone).
    answer.gpus.push_back(req->empty() ? avail->front() : req->front());
    return answer;
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
  if (size == m) {
    // The whole node: the only partition is one block of every available GPU, whatever the
    // mode or bonus (no search, no memo: DESIGN.md §8 asks <= 2 µs for this request).
    answer.gpus = std::move(*avail);
    answer.block_score = scores.set_score(answer.gpus);
    answer.partition_score = answer.block_score;
    return answer;
  }
  if (size == 1) {
    // One GPU with a required one (the case without is above): every partition is of single
    // GPUs and scores 0, and the only block holding the required GPU is that GPU.
    answer.gpus.push_back(req->front());
    return answer;
  }
  std::vector<std::int64_t> w(m * m, 0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < m; ++j) w[i * m + j] = scores.score((*avail)[i], (*avail)[j]);
  }
  const packer_mask all = (packer_mask{1} << m) - 1;
  packer_search dp(std::move(w), m, size, required_mask);
  const std::int64_t best = dp.best(all);
  if (best <= packer_infeasible) {
    return make_error(errc::internal, "the packer found no partition for a feasible request");
  }
  answer.partition_score = best;
  packer_mask chosen = 0;
  if (mode == packer_mode::compat) {
    const auto blocks = dp.first_partition(all, best);
    if (blocks.empty()) {
      return make_error(errc::internal, "the packer lost its best partition");
    }
    std::int64_t chosen_score = -1;
    bool chosen_padded = false;
    for (const auto& [b, padded] : blocks) {
      if ((b & required_mask) != required_mask) continue;
      const std::int64_t score = dp.set_score(b);
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
    chosen = lowest ? dp.weakest_block(all, bonus) : dp.lexmax_block(all, best, bonus);
    if (chosen == 0) {
      return make_error(errc::internal, "the packer lost the block of its best partition");
    }
  }
  for (packer_mask a = chosen; a != 0; a &= a - 1) {
    answer.gpus.push_back((*avail)[static_cast<std::size_t>(std::countr_zero(a))]);
  }
  answer.block_score = scores.set_score(answer.gpus);
  return answer;
}

}  // namespace detail

result<packer_answer> allocate(const pair_score_matrix& scores,
                               std::span<const std::uint32_t> available,
                               std::span<const std::uint32_t> required, std::size_t size,
                               packer_mode mode) {
  return detail::allocate_bonus(scores, available, required, size, mode, {}, false);
}

packer_state::packer_state(pair_score_matrix scores) : scores_(std::move(scores)) {
  free_.resize(scores_.size());
  for (std::size_t i = 0; i < free_.size(); ++i) free_[i] = static_cast<std::uint32_t>(i);
}

result<packer_state> packer_state::make(pair_score_matrix scores,
                                        std::span<const std::uint32_t> available) {
  auto avail = detail::sorted_unique(available, scores.size(), "available");
  if (!avail) return std::move(avail).error();
  packer_state state(std::move(scores));
  state.free_ = std::move(*avail);
  return state;
}

result<packer_answer> packer_state::allocate(std::size_t size,
                                             std::span<const std::uint32_t> required,
                                             packer_mode mode) {
  auto answer = hetsched::allocate(scores_, free_, required, size, mode);
  if (!answer || answer->status != packer_status::allocated) return answer;
  std::vector<std::uint32_t> rest;
  rest.reserve(free_.size());
  std::set_difference(free_.begin(), free_.end(), answer->gpus.begin(), answer->gpus.end(),
                      std::back_inserter(rest));
  free_ = std::move(rest);
  return answer;
}

result<void> packer_state::release(std::span<const std::uint32_t> gpus) {
  auto back = detail::sorted_unique(gpus, scores_.size(), "released");
  if (!back) {
    if (back.error().code == errc::invalid_argument) {
      return make_error(errc::already_exists, "{}", back.error().message);
    }
    return std::move(back).error();
  }
  for (const std::uint32_t g : *back) {
    if (std::binary_search(free_.begin(), free_.end(), g)) {
      return make_error(errc::already_exists, "released GPU {} is already free", g);
    }
  }
  std::vector<std::uint32_t> merged;
  merged.reserve(free_.size() + back->size());
  std::merge(free_.begin(), free_.end(), back->begin(), back->end(), std::back_inserter(merged));
  free_ = std::move(merged);
  return {};
}

}  // namespace hetsched
