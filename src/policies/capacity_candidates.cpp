// SPDX-License-Identifier: MIT
// Preemption candidates of capacity queues: the candidate index (each queue's admitted slots
// sorted once per cycle) and the candidate lists of one search over it, filtered lazily.
#include <algorithm>

#include "capacity_internal.hpp"

namespace hetsched::capacity_detail {
namespace {

// candidate_before for two candidates of one queue (the same for every preemptor).
bool same_queue_before(const candidate& x, const candidate& y) {
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.admitted_at != y.admitted_at) return x.admitted_at > y.admitted_at;
  return x.job < y.job;
}

// Sorts queue x's admitted slots (not in flight) into the index and sums, per priority level,
// the use of those another queue's search may take (not excluded, old enough).
void build_queue(ordering_scratch& s, const capacity_state& state, const eligibility& e,
                 std::uint32_t x) {
  auto& ix = s.index;
  const auto& slots = state.slots();
  const std::size_t nf = state.tree().fr_count();
  const auto b = static_cast<std::uint32_t>(ix.items.size());
  for (const std::uint32_t slot : state.queue(queue_id(x)).admitted) {
    const auto& rec = slots[slot];
    if (rec.preemptor.valid()) continue;
    ix.items.push_back({slot, queue_id(x), rec.w.priority, rec.w.job, rec.w.admitted_at,
                        rec.fr_mask, rec.order_time});
  }
  const auto en = static_cast<std::uint32_t>(ix.items.size());
  std::sort(ix.items.begin() + b, ix.items.begin() + en, same_queue_before);
  ix.begin[x] = b;
  ix.end[x] = en;
  const auto lb = static_cast<std::uint32_t>(ix.level_prio.size());
  ix.level_begin[x] = lb;
  for (std::uint32_t i = b; i < en; ++i) {
    const candidate& c = ix.items[i];
    if (ix.level_prio.size() == lb || ix.level_prio.back() != c.priority) {
      const std::size_t prev = ix.level_cum.size();
      ix.level_prio.push_back(c.priority);
      ix.level_cum.resize(prev + nf, 0);
      if (ix.level_prio.size() > lb + 1)
        for (std::size_t f = 0; f < nf; ++f) ix.level_cum[prev + f] = ix.level_cum[prev - nf + f];
    }
    const bool excluded =
        e.excluded != nullptr && c.slot < e.excluded->size() && (*e.excluded)[c.slot] != 0;
    const bool young = e.min_runtime > 0 && e.now - c.admitted_at < e.min_runtime;
    const bool counts = !excluded && !young;
    ix.counted[c.slot] = counts ? 1 : 0;
    if (!counts) continue;
    const std::size_t base = (ix.level_prio.size() - 1) * nf;
    for (const auto& [f, a] : slots[c.slot].use) ix.level_cum[base + f] += a;
  }
  ix.level_end[x] = static_cast<std::uint32_t>(ix.level_prio.size());
  ix.ready[x] = 1;
}

}  // namespace

void ordering_scratch::prepare(const capacity_tree& tree, std::size_t slot_count) {
  const std::size_t n = tree.size();
  if (pruned.size() != n) {
    for (auto* v : {&pruned, &on_path, &live_stamp, &bucket_stamp, &cache_stamp, &begin, &cur, &end,
                    &live, &cache_version, &scan_stamp, &scan_version, &index.begin, &index.end,
                    &index.level_begin, &index.level_end, &index.version})
      v->assign(n, 0);
    cache.assign(n, drs_value{});
    base.assign(n, drs_value{});
    base_ready.assign(n, 0);
    scan_q.assign(n, queue_id::invalid());
    scan_c.assign(n, queue_id::invalid());
    scan_c_first.assign(n, 0);
    index.ready.assign(n, 0);
    index.items.clear();
    index.level_prio.clear();
    index.level_cum.clear();
    stamp = 0;
  }
  if (index.counted.size() < slot_count) index.counted.resize(slot_count, 0);
}

void exclude_slot(ordering_scratch& s, const capacity_state& state, std::uint32_t slot) {
  auto& ix = s.index;
  const auto& rec = state.slots()[slot];
  const std::uint32_t x = rec.w.queue.value();
  if (x < ix.ready.size() && ix.ready[x] != 0) {
    // Drop it from the queue's list: later searches never walk over it.
    const auto first = ix.items.begin() + ix.begin[x];
    const auto last = ix.items.begin() + ix.end[x];
    const auto it = std::find_if(first, last, [&](const candidate& c) { return c.slot == slot; });
    if (it != last) {
      std::move(it + 1, last, it);
      --ix.end[x];
      ++ix.version[x];
    }
  }
  if (slot >= ix.counted.size() || ix.counted[slot] == 0) return;
  ix.counted[slot] = 0;
  const std::size_t nf = state.tree().fr_count();
  for (std::uint32_t l = ix.level_begin[x]; l < ix.level_end[x]; ++l)
    if (ix.level_prio[l] >= rec.w.priority)
      for (const auto& [f, a] : rec.use) ix.level_cum[l * nf + f] -= a;
}

candidate_lists::candidate_lists(ordering_scratch& s, const capacity_state& state,
                                 const eligibility& e, const std::vector<queue_id>& queues,
                                 borrowers_entry* others)
    : s_(s), state_(&state), e_(&e), arr_(&s.index.items), wide_(state.tree().fr_count() > 64) {
  st_ = ++s_.stamp;
  s_.queues.clear();
  for (const queue_id q : queues) {
    const std::uint32_t x = q.value();
    if (s_.index.ready[x] == 0) build_queue(s_, state, e, x);
    if (s_.index.begin[x] == s_.index.end[x]) continue;  // has() is false: not this stamp
    s_.bucket_stamp[x] = st_;
    s_.cur[x] = s_.index.begin[x];
    s_.end[x] = s_.index.end[x];
    skip(x);
    if (s_.cur[x] < s_.end[x]) s_.queues.push_back(x);
  }
  if (others == nullptr) return;
  // Another queue's list is in priority order and its priority rules cut it at a bound, so
  // skip() would stop at its first candidate ignoring priority if that one is below the bound,
  // and find none otherwise: that first candidate is cached per entry until an exclusion.
  auto& ix = s_.index;
  std::int64_t bound = INT64_MAX;
  if (e.only_lower) bound = e.priority;
  if (e.other_below) bound = std::min<std::int64_t>(bound, *e.other_below);
  if (others->first.size() != others->queues.size()) {
    others->first.assign(others->queues.size(), 0);
    others->first_version.assign(others->queues.size(), 0);
  }
  for (std::size_t i = 0; i < others->queues.size(); ++i) {
    const std::uint32_t x = others->queues[i].value();
    if (x == e.own.value()) continue;
    if (ix.ready[x] == 0) build_queue(s_, state, e, x);
    if (others->first_version[i] != ix.version[x] + 1) {
      std::uint32_t p = ix.begin[x];
      while (p < ix.end[x] && !eligible_ignoring_priority(ix.items[p])) ++p;
      others->first[i] = p;
      others->first_version[i] = ix.version[x] + 1;
    }
    const std::uint32_t p = others->first[i];
    if (p >= ix.end[x] || ix.items[p].priority >= bound) continue;
    s_.bucket_stamp[x] = st_;
    s_.cur[x] = p;
    s_.end[x] = ix.end[x];
    s_.queues.push_back(x);
  }
}

candidate_lists::candidate_lists(ordering_scratch& s, const std::vector<candidate>& list)
    : s_(s), arr_(&s.explicit_items) {
  st_ = ++s_.stamp;
  s_.queues.clear();
  for (const auto& c : list) {
    const std::uint32_t x = c.queue.value();
    if (s_.bucket_stamp[x] != st_) {
      s_.bucket_stamp[x] = st_;
      s_.end[x] = 0;
      s_.queues.push_back(x);
    }
    ++s_.end[x];
  }
  std::uint32_t pos = 0;
  for (const std::uint32_t x : s_.queues) {
    s_.begin[x] = pos;
    s_.cur[x] = pos;
    pos += s_.end[x];
    s_.end[x] = pos;
  }
  s_.explicit_items.resize(list.size());
  for (const auto& c : list) s_.explicit_items[s_.cur[c.queue.value()]++] = c;
  for (const std::uint32_t x : s_.queues) {
    s_.cur[x] = s_.begin[x];
    if (s_.end[x] - s_.begin[x] > 1)
      std::sort(s_.explicit_items.begin() + static_cast<std::ptrdiff_t>(s_.begin[x]),
                s_.explicit_items.begin() + static_cast<std::ptrdiff_t>(s_.end[x]),
                same_queue_before);
  }
}

bool candidate_lists::uses_contested(const candidate& c) const {
  const auto& use = state_->slots()[c.slot].use;
  return std::any_of(use.begin(), use.end(), [&](const auto& fa) {
    return std::find(e_->frs_need->begin(), e_->frs_need->end(), fa.first) != e_->frs_need->end();
  });
}

}  // namespace hetsched::capacity_detail
