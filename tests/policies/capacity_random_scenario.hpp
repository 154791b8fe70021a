// SPDX-License-Identifier: MIT
// Seeded random capacity-queue scenarios shared by the capacity property tests.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched {

// A random scenario: one or two roots, cohorts in between, queues of every order, flavors,
// resources, limits, user limits, preemption policies, running and pending workloads and
// sometimes victims in flight.
class capacity_scenario {
 public:
  explicit capacity_scenario(std::uint64_t seed) : rng_(seed) {}

  std::mt19937_64& rng() { return rng_; }
  std::int64_t pick(std::int64_t lo, std::int64_t hi) {  // inclusive
    return lo + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return pick(0, 99) < percent; }

  capacity_tree_spec tree() {
    capacity_tree_spec spec;
    with_cpu_ = chance(40);
    flavors_ =
        chance(50) ? std::vector<std::string>{"a100", "h100"} : std::vector<std::string>{"a100"};
    const int roots = chance(30) ? 2 : 1;
    for (int r = 0; r < roots; ++r) {
      const std::string root = fmt::format("r{}", r);
      spec.nodes.push_back(cohort(root, "", 6));
      std::vector<std::string> parents{root};
      const int mids = static_cast<int>(pick(0, 2));
      for (int m = 0; m < mids; ++m) {
        parents.push_back(fmt::format("{}m{}", root, m));
        spec.nodes.push_back(cohort(parents.back(), root, 2));
      }
      const int nq = static_cast<int>(pick(2, 4));
      for (int i = 0; i < nq; ++i) {
        queues_.push_back(fmt::format("{}q{}", root, i));
        spec.nodes.push_back(queue(queues_.back(), parents[rng_() % parents.size()]));
      }
    }
    return spec;
  }

  pending_workload workload(std::uint32_t id, queue_id q) {
    pending_workload w{job_id(id),
                       q,
                       tenant_id(static_cast<std::uint32_t>(pick(0, 2))),
                       static_cast<std::int32_t>(pick(0, 2)),
                       pick(0, 9),
                       {{"gpu", pick(1, 3)}},
                       {}};
    if (with_cpu_) w.request["cpu"] = pick(1, 4);
    if (chance(20)) w.flavors = {flavors_[rng_() % flavors_.size()]};
    return w;
  }

  const std::vector<std::string>& queues() const { return queues_; }
  /// Returns a random queue of the scenario's tree `t`.
  queue_id any_queue(const capacity_tree& t) { return *t.find(queues_[rng_() % queues_.size()]); }
  /// The custom order of the scenarios' custom queues: by tenant (ties to the lower job id).
  static bool by_tenant(const pending_workload& a, const pending_workload& b) {
    return a.tenant < b.tenant;
  }
  /// Returns true if every resource of `w` fits its queue now in w's flavor.
  static bool fits_now(const capacity_state& s, const admitted_workload& w) {
    for (const auto& [r, amount] : w.request) {
      const auto f = s.tree().find_fr(w.flavor, r);
      if (!f || !s.tree().declares(w.queue, *f) ||
          quota_available(s.tree(), s.usage(), w.queue, *f) < amount)
        return false;
    }
    return true;
  }
  const std::vector<std::string>& flavors() const { return flavors_; }

 private:
  std::vector<quota_spec> quotas(std::int64_t most, bool limits) {
    std::vector<quota_spec> out;
    for (const auto& f : flavors_) {
      if (flavors_.size() > 1 && limits && chance(25)) continue;  // this queue lacks the flavor
      for (const char* r : {"gpu", "cpu"}) {
        if (std::string(r) == "cpu" && !with_cpu_) continue;
        quota_spec q{f, r, pick(0, most * (std::string(r) == "cpu" ? 2 : 1)), std::nullopt,
                     std::nullopt};
        if (limits && chance(25)) q.borrowing_limit = pick(0, 3);
        if (limits && chance(20)) q.lending_limit = pick(0, q.nominal);
        out.push_back(q);
      }
    }
    return out;
  }
  capacity_node_spec cohort(const std::string& name, const std::string& parent, std::int64_t most) {
    capacity_node_spec c;
    c.name = name;
    c.parent = parent;
    c.kind = capacity_node_kind::cohort;
    c.quotas = quotas(most, false);
    if (!parent.empty() && chance(30)) c.fair_weight = static_cast<double>(pick(1, 3));
    return c;
  }
  capacity_node_spec queue(const std::string& name, const std::string& parent) {
    capacity_node_spec q;
    q.name = name;
    q.parent = parent;
    q.quotas = quotas(4, true);
    if (q.quotas.empty()) q.quotas = {{flavors_[0], "gpu", pick(0, 4), std::nullopt, std::nullopt}};
    static constexpr queue_order orders[] = {queue_order::strict_fifo,
                                             queue_order::best_effort_fifo,
                                             queue_order::strict_priority,
                                             queue_order::priority,
                                             queue_order::drf,
                                             queue_order::custom};
    q.order = orders[rng_() % 6];
    if (chance(15)) {
      yarn_user_limit_spec ul;
      ul.minimum_user_limit_percent = pick(25, 100);
      ul.user_limit_factor = chance(30) ? -1.0 : static_cast<double>(pick(1, 2));
      q.user_limit = ul;
    }
    q.preemption.within_queue = static_cast<within_queue_preemption>(pick(0, 2));
    q.preemption.reclaim = static_cast<cohort_reclaim>(pick(0, 2));
    if (chance(15)) {
      q.preemption.borrow.enabled = true;
      if (chance(50))
        q.preemption.borrow.max_priority_threshold = static_cast<std::int32_t>(pick(0, 1));
    }
    q.fair_weight = chance(5) ? 0.0 : static_cast<double>(pick(1, 3));
    return q;
  }

  std::mt19937_64 rng_;
  bool with_cpu_ = false;
  std::vector<std::string> flavors_;
  std::vector<std::string> queues_;
};

}  // namespace hetsched
