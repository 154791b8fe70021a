// SPDX-License-Identifier: MIT
// describe(capacity_state): everything a capacity_state lets callers observe, as text, so that a
// test can assert "an error changed nothing" with one EXPECT_EQ (and read the difference).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched::testing {

/// Returns the usage of every node per (flavor, resource), every pending workload in each queue's
/// order (priority, submit time, request, allowed flavors, victims in flight for it), every
/// admitted workload (queue, flavor, request, admission time, in flight and for whom) and the
/// counts.
inline std::string describe(const capacity_state& s) {
  const capacity_tree& tree = s.tree();
  std::string out;
  for (std::size_t n = 0; n < tree.size(); ++n) {
    const queue_id q(static_cast<std::uint32_t>(n));
    out += fmt::format("node {}:", tree.name(q));
    for (std::size_t f = 0; f < tree.fr_count(); ++f)
      out += fmt::format(" {}@{}={}", tree.fr(f).resource, tree.fr(f).flavor, s.usage(q, f));
    out += '\n';
    if (!tree.is_queue(q)) continue;
    s.queue(q).pending.for_each([&](const capacity_state::pending_entry& e) {
      const pending_workload* w = s.pending(e.key.job);
      if (w == nullptr) {
        out +=
            fmt::format("  pending order names job {}, which is not pending\n", e.key.job.value());
        return;
      }
      out += fmt::format("  pending job {} tenant {} prio {} submit {} request", w->job.value(),
                         w->tenant.value(), w->priority, w->submit_time);
      for (const auto& [r, a] : w->request) out += fmt::format(" {}={}", r, a);
      out += fmt::format(" flavors [{}] victims in flight {}\n", fmt::join(w->flavors, ","),
                         s.victims_in_flight(w->job));
    });
  }
  std::vector<const capacity_state::admitted_rec*> admitted;
  for (const auto& rec : s.slots())
    if (rec.live) admitted.push_back(&rec);
  std::sort(admitted.begin(), admitted.end(),
            [](const auto* a, const auto* b) { return a->w.job < b->w.job; });
  for (const auto* rec : admitted) {
    const admitted_workload& w = rec->w;
    out += fmt::format("admitted job {} queue {} tenant {} prio {} at {} flavor {} request",
                       w.job.value(), tree.name(w.queue), w.tenant.value(), w.priority,
                       w.admitted_at, w.flavor);
    for (const auto& [r, a] : w.request) out += fmt::format(" {}={}", r, a);
    out += s.in_flight(w.job) ? fmt::format(" in flight for job {}\n", rec->preemptor.value())
                              : std::string(" running\n");
  }
  out += fmt::format("{} pending, {} admitted\n", s.pending_count(), s.admitted_count());
  return out;
}

}  // namespace hetsched::testing
