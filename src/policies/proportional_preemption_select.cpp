// SPDX-License-Identifier: MIT
// Victim selection of the proportional preemption planner: YARN's FifoCandidatesSelector (jobs in
// reverse FIFO order, containers in reverse priority then newest first, application masters last)
// with the per-round cap, YARN's inter-queue "positive contribution" rule, a minimum runtime
// before preemption, whole gangs and in-flight victims skipped.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include <hetsched/policies/proportional_preemption.hpp>

#include "proportional_preemption_detail.hpp"

namespace hetsched::detail::pcpp {

namespace {

// One container of a leaf with something to obtain, with its sort keys inline.
struct entry {
  std::size_t queue;
  std::int32_t job_priority;
  std::int64_t job_submit;
  std::uint64_t job_id;
  std::size_t job;
  std::int32_t priority;
  std::int64_t start;
  std::uint64_t id;
  std::size_t container;
};

// Preemption order: queue asc; job priority asc, submit desc, id desc, index desc; container
// priority asc, start desc, id desc, index desc.
bool before(const entry& a, const entry& b) noexcept {
  return std::tie(a.queue, a.job_priority, b.job_submit, b.job_id, b.job, a.priority, b.start, b.id,
                  b.container) < std::tie(b.queue, b.job_priority, a.job_submit, a.job_id, a.job,
                                          b.priority, a.start, a.id, a.container);
}

// A preemption unit: one container, or every container of a gang.
struct unit {
  std::size_t begin = 0;  // range in the sorted entries
  std::size_t end = 0;
  pcpp_vector size{};
  std::int64_t start = 0;
};

class selector {
 public:
  selector(const pcpp_snapshot& s, const pcpp_params& p, const calculator& rc, pcpp_plan& plan)
      : s_(s), p_(p), rc_(rc), plan_(plan), allowed_(plan.preemption_allowed) {}

  void run(std::vector<node>& nodes) {
    const std::size_t nq = nodes.size();
    std::vector<bool> active(nq, false);
    bool any = false;
    for (std::size_t q = 0; q < nq; ++q) {
      active[q] = nodes[q].leaf && !nodes[q].disabled && any_positive(nodes[q].to_obtain);
      any = any || active[q];
    }
    if (!any) return;
    entries_.reserve(s_.containers.size());
    for (std::size_t c = 0; c < s_.containers.size(); ++c) {
      const pcpp_container& con = s_.containers[c];
      const pcpp_job& job = s_.jobs[con.job];
      if (!active[job.queue]) continue;
      entries_.push_back(entry{job.queue, job.priority, job.submit_time, job.id, con.job,
                               con.priority, con.start_time, con.id, c});
    }
    std::sort(entries_.begin(), entries_.end(), before);
    std::size_t i = 0;
    while (i < entries_.size()) {
      std::size_t end = i;
      while (end < entries_.size() && entries_[end].queue == entries_[i].queue) ++end;
      run_queue(nodes[entries_[i].queue], i, end);
      i = end;
    }
  }

 private:
  [[nodiscard]] bool any_positive(const pcpp_vector& a) const {
    for (std::size_t i = 0; i < rc_.k; ++i)
      if (a[i] > 0) return true;
    return false;
  }

  void run_queue(node& n, std::size_t begin, std::size_t end) {
    obtain_ = n.to_obtain;
    done_ = false;
    am_units_.clear();
    std::size_t i = begin;
    while (i < end && !done_) {
      std::size_t job_end = i;
      while (job_end < end && entries_[job_end].job == entries_[i].job) ++job_end;
      if (s_.jobs[entries_[i].job].gang) {
        unit u{i, job_end, {}, entries_[i].start};
        bool in_flight = false;
        bool am = false;
        for (std::size_t e = i; e < job_end; ++e) {
          const pcpp_container& c = s_.containers[entries_[e].container];
          in_flight = in_flight || c.in_flight;
          am = am || c.am;
          u.start = std::max(u.start, c.start_time);
          for (std::size_t d = 0; d < rc_.k; ++d) u.size[d] += c.size[d];
        }
        if (!in_flight) consider(n, u, am);
      } else {
        for (std::size_t e = i; e < job_end && !done_; ++e) {
          const pcpp_container& c = s_.containers[entries_[e].container];
          if (c.in_flight) continue;
          consider(n, unit{e, e + 1, c.size, c.start_time}, c.am);
        }
      }
      i = job_end;
    }
    for (const unit& u : am_units_) {
      if (done_) break;
      try_preempt(n, u, pcpp_victim_reason::over_ideal_am);
    }
  }

  void consider(node& n, const unit& u, bool am) {
    if (am) {
      am_units_.push_back(u);
    } else {
      try_preempt(n, u, pcpp_victim_reason::over_ideal);
    }
  }

  // CapacitySchedulerPreemptionUtils.tryPreemptContainerAndDeductResToObtain, inter-queue mode.
  void try_preempt(node& n, const unit& u, pcpp_victim_reason reason) {
    const std::size_t k = rc_.k;
    if (p_.min_runtime > 0 && p_.now - u.start < p_.min_runtime) return;
    if (!any_positive(obtain_)) return;
    for (std::size_t d = 0; d < k; ++d)
      if (u.size[d] > allowed_[d]) return;
    pcpp_vector after{};
    pcpp_vector after_pos{};
    pcpp_vector before_pos{};
    for (std::size_t d = 0; d < k; ++d) {
      after[d] = obtain_[d] - u.size[d];
      after_pos[d] = std::max<std::int64_t>(after[d], 0);
      before_pos[d] = std::max<std::int64_t>(obtain_[d], 0);
    }
    if (rc_.compare(after_pos, before_pos) >= 0) return;
    obtain_ = after;
    for (std::size_t d = 0; d < k; ++d) {
      allowed_[d] -= u.size[d];
      n.selected[d] += u.size[d];
    }
    if (rc_.compare(obtain_, pcpp_vector{}) <= 0) done_ = true;
    for (std::size_t e = u.begin; e < u.end; ++e) {
      const entry& en = entries_[e];
      plan_.victims.push_back(pcpp_victim{en.container, en.job, en.queue,
                                          e == u.begin ? reason : pcpp_victim_reason::gang_member});
    }
  }

  const pcpp_snapshot& s_;
  const pcpp_params& p_;
  const calculator& rc_;
  pcpp_plan& plan_;
  pcpp_vector allowed_;
  pcpp_vector obtain_{};
  bool done_ = false;
  std::vector<entry> entries_;
  std::vector<unit> am_units_;
};

}  // namespace

void select_victims(const pcpp_snapshot& snapshot, const pcpp_params& params, const calculator& rc,
                    std::vector<node>& nodes, pcpp_plan& plan) {
  selector sel(snapshot, params, rc, plan);
  sel.run(nodes);
}

}  // namespace hetsched::detail::pcpp
