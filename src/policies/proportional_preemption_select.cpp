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

// Sort keys of a job and of a container, so that "a before b" is one tuple comparison.
struct job_key {
  std::int32_t priority;
  std::int64_t submit;
  std::uint64_t id;
  std::size_t index;
};
struct container_key {
  std::int32_t priority;
  std::int64_t start;
  std::uint64_t id;
  std::size_t index;
};

// Preemption order of jobs: priority asc, submit desc, id desc, index desc.
bool job_before(const job_key& a, const job_key& b) noexcept {
  return std::tie(a.priority, b.submit, b.id, b.index) <
         std::tie(b.priority, a.submit, a.id, a.index);
}
// Of the containers of a job: priority asc, start desc, id desc, index desc.
bool container_before(const container_key& a, const container_key& b) noexcept {
  return std::tie(a.priority, b.start, b.id, b.index) <
         std::tie(b.priority, a.start, a.id, a.index);
}

// A preemption unit: one container, or every container of a gang.
struct unit {
  std::size_t begin = 0;  // range in the sorted members
  std::size_t end = 0;
  std::size_t job = 0;
  pcpp_vector size{};
  std::int64_t start = 0;
};

class selector {
 public:
  selector(const pcpp_snapshot& s, const pcpp_params& p, const calculator& rc,
           const job_lists& lists, pcpp_plan& plan)
      : s_(s), p_(p), rc_(rc), lists_(lists), plan_(plan), allowed_(plan.preemption_allowed) {}

  void run(std::vector<node>& nodes) {
    const std::size_t nq = nodes.size();
    std::vector<bool> active(nq, false);
    bool any = false;
    for (std::size_t q = 0; q < nq; ++q) {
      active[q] = nodes[q].leaf && !nodes[q].disabled && any_positive(nodes[q].to_obtain);
      any = any || active[q];
    }
    if (!any) return;
    // Jobs of the active leaves, bucketed by leaf (counting sort, O(J)).
    const std::size_t nj = s_.jobs.size();
    std::vector<std::size_t> queue_start(nq + 1, 0);
    for (const pcpp_job& job : s_.jobs)
      if (active[job.queue]) ++queue_start[job.queue + 1];
    for (std::size_t q = 0; q < nq; ++q) queue_start[q + 1] += queue_start[q];
    std::vector<job_key> jobs(queue_start[nq]);
    {
      std::vector<std::size_t> fill(queue_start.begin(), queue_start.end() - 1);
      for (std::size_t j = 0; j < nj; ++j) {
        const pcpp_job& job = s_.jobs[j];
        if (active[job.queue])
          jobs[fill[job.queue]++] = job_key{job.priority, job.submit_time, job.id, j};
      }
    }
    // Per leaf, jobs come off a heap lazily: O(J + V log J) for V victims.
    const auto later = [](const job_key& a, const job_key& b) { return job_before(b, a); };
    for (std::size_t q = 0; q < nq; ++q) {
      if (!active[q]) continue;
      const auto first = jobs.begin() + static_cast<std::ptrdiff_t>(queue_start[q]);
      auto last = jobs.begin() + static_cast<std::ptrdiff_t>(queue_start[q + 1]);
      std::make_heap(first, last, later);
      begin_queue(nodes[q], q);
      while (first != last && !done_ && !blocked()) {
        std::pop_heap(first, last, later);
        --last;
        run_job(last->index);
      }
      end_queue();
    }
  }

 private:
  // True if no unit can be taken any more: a unit contributes only through a dimension that is
  // still to obtain and fits only if the per-round cap has room in it.
  [[nodiscard]] bool blocked() const {
    for (std::size_t d = 0; d < rc_.k; ++d)
      if (obtain_[d] > 0 && allowed_[d] > 0) return false;
    return true;
  }

  [[nodiscard]] bool any_positive(const pcpp_vector& a) const {
    for (std::size_t i = 0; i < rc_.k; ++i)
      if (a[i] > 0) return true;
    return false;
  }

  void begin_queue(node& n, std::size_t q) {
    node_ = &n;
    queue_ = q;
    obtain_ = n.to_obtain;
    done_ = false;
    am_units_.clear();
  }

  void run_job(std::size_t j) {
    // Only the jobs reached are expanded: their containers are appended to members_ (so the
    // ranges of deferred AM units stay valid) and sorted.
    const std::size_t b = members_.size();
    for (std::uint32_t ci = lists_.head[j]; ci != no_container; ci = lists_.next[ci]) {
      const pcpp_container& c = s_.containers[ci];
      members_.push_back(container_key{c.priority, c.start_time, c.id, ci});
    }
    const std::size_t e = members_.size();
    if (b == e) return;
    std::sort(members_.begin() + static_cast<std::ptrdiff_t>(b), members_.end(), container_before);
    if (s_.jobs[j].gang) {
      unit u{b, e, j, {}, members_[b].start};
      bool in_flight = false;
      bool am = false;
      for (std::size_t m = b; m < e; ++m) {
        const pcpp_container& c = s_.containers[members_[m].index];
        in_flight = in_flight || c.in_flight;
        am = am || c.am;
        u.start = std::max(u.start, c.start_time);
        for (std::size_t d = 0; d < rc_.k; ++d) u.size[d] += c.size[d];
      }
      if (!in_flight) consider(*node_, u, am);
      return;
    }
    for (std::size_t m = b; m < e && !done_; ++m) {
      const pcpp_container& c = s_.containers[members_[m].index];
      if (c.in_flight) continue;
      consider(*node_, unit{m, m + 1, j, c.size, c.start_time}, c.am);
    }
  }

  void end_queue() {
    for (const unit& u : am_units_) {
      if (done_ || blocked()) break;
      try_preempt(*node_, u, pcpp_victim_reason::over_ideal_am);
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
    for (std::size_t m = u.begin; m < u.end; ++m)
      plan_.victims.push_back(pcpp_victim{members_[m].index, u.job, queue_,
                                          m == u.begin ? reason : pcpp_victim_reason::gang_member});
  }

  const pcpp_snapshot& s_;
  const pcpp_params& p_;
  const calculator& rc_;
  const job_lists& lists_;
  pcpp_plan& plan_;
  pcpp_vector allowed_;
  pcpp_vector obtain_{};
  bool done_ = false;
  node* node_ = nullptr;
  std::size_t queue_ = 0;
  std::vector<container_key> members_;
  std::vector<unit> am_units_;
};

}  // namespace

void select_victims(const pcpp_snapshot& snapshot, const pcpp_params& params, const calculator& rc,
                    const job_lists& lists, std::vector<node>& nodes, pcpp_plan& plan) {
  selector sel(snapshot, params, rc, lists, plan);
  sel.run(nodes);
}

}  // namespace hetsched::detail::pcpp
