// SPDX-License-Identifier: MIT
// capacity_placement: capacity queues as a placement policy (policy.hpp; registry name "capacity"):
// admission by per-tenant quota, borrowing and preemption; a placer binds what is admitted (the
// indexed packer by default, or HiveD).
//
// Tenants are the engine's tenant indices (order of first arrival, ties by trace order). Quotas
// come as the parameter `quota=G0/G1/...`: whole GPUs per tenant index (parse_quota_list(),
// policy.hpp); hetsched-sim fills it from --vc-quota or from the trace (equal shares) when the
// user does not give it. A tenant beyond the list has quota 0.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_preemption.hpp>
#include <hetsched/policies/capacity_queue.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/policies/proportional_preemption.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// The placer: any placement_policy (policy.hpp) that binds the jobs capacity admission admitted,
/// with a stricter contract (capacity_placement relies on it):
/// - place(state, job) is asked only for a job whose quota is admitted now; it returns either
///   one bind of that job that passes check_decision(state, d), or the job's deferral
///   (insufficient_capacity, fragmented or topology_unsatisfiable), never preemptions,
///   suspensions or migrations: preemption is capacity's. A deferral leaves the placer as it was,
///   so a job that does not fit physically holds no quota and no cells (capacity charges quota
///   only when a bind is committed).
/// - commit(after, d) follows every decision the engine applies through capacity_placement, not
///   only the placer's binds (victims marked "preempt now, start later" included);
///   release(after, job) follows every job that freed its resources (finish, failure, requeue
///   after preemption, cancel), whoever placed it; rebuild(state) follows health changes.

/// The placers that come with the simulator.
enum class capacity_placer_kind : std::uint8_t {
  /// indexed_packer (indexed_packer.hpp) with the given node_fit: today's capacity placement.
  packer,
  /// HiveD (hived_placement in placer mode, hived_placement.hpp): cells derived from the
  /// topology (top cells up to racks), one VC "vc0" owning every node-level cell, every admitted
  /// GPU job a guaranteed affinity group of that VC at priority 0 whatever its tenant and trace
  /// priority, HiveD preemption off. Jobs with a CPU-only task are deferred as
  /// topology_unsatisfiable.
  hived,
};

/// Returns "packer" or "hived".
[[nodiscard]] std::string_view to_string(capacity_placer_kind kind) noexcept;

/// Returns the placer `kind` for `description` (node topologies from `topology` when not null;
/// `fit` is the packer's and ignored by HiveD). Errors: invalid_argument when kind is hived and
/// topology is null; those of hived_placement::create.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_capacity_placer(
    capacity_placer_kind kind, const cluster& description, const cluster_topology* topology,
    node_fit fit = node_fit::best);

/// Preemption of capacity_placement.
enum class capacity_preemption_mode : std::uint8_t {
  none,     ///< Borrowed GPUs come back only when the borrowers finish.
  classic,  ///< Kueue's classic preemption (plan_preemption, fair_sharing off).
  fair,     ///< Kueue's fair-sharing preemption (strategies S2-a then S2-b, equal weights).
  /// YARN's ProportionalCapacityPreemptionPolicy (plan_proportional_preemption), run every
  /// monitoring interval; parameter value `proportional` or `pcpp`.
  proportional,
};

/// Parameters of capacity_placement.
struct capacity_params {
  std::vector<std::uint32_t> quota;  ///< Nominal GPUs per tenant index.
  bool borrow = true;                ///< May use other tenants' unused nominal quota.
  /// With borrow: at most this many GPUs above the tenant's nominal quota (-1: no limit).
  std::int64_t borrow_limit = -1;
  /// How the packer picks nodes for admitted jobs (the packer placer only).
  node_fit fit = node_fit::best;
  capacity_preemption_mode preemption = capacity_preemption_mode::none;
  /// Kueue's minimum runtime before preemption, seconds of simulated time: a running job is no
  /// victim before it has run this long since its (last) start. 0: no minimum.
  std::int64_t min_runtime_s = 0;
  /// preemption=proportional only (YARN's names and product defaults): the dead zone
  /// (max_ignored_over_capacity), the fraction of a queue's excess taken per round
  /// (natural_termination_factor), the per-round cap as a fraction of the cluster
  /// (total_preemption_per_round), and the least simulated time between two rounds
  /// (monitoring_interval, ms; 0: every scheduling pass, at most once per millisecond).
  pcpp_ratio max_ignored_over_capacity{1, 10};
  pcpp_ratio natural_termination_factor{2, 10};
  pcpp_ratio total_preemption_per_round{1, 10};
  std::int64_t monitoring_interval_ms = 3'000;
};

/// Largest monitoring_interval_ms accepted (about 31 years).
inline constexpr std::int64_t max_capacity_monitoring_interval_ms = 1'000'000'000'000;

/// Largest min_runtime_s accepted (about 31 years; keeps the admission stamps in 64 bits).
inline constexpr std::int64_t max_capacity_min_runtime_s = 1'000'000'000;

/// Capacity queues (one queue per tenant, Kueue ClusterQueues in one cohort): a job of tenant t
/// needing g milli-GPUs is admitted when usage(t) + g <= nominal(t), or, with borrowing, when
/// usage(t) + g <= nominal(t) + borrow_limit and the cohort's total usage + g <= the sum of
/// nominal quotas; otherwise it is deferred as quota_exceeded. An admitted job is placed by the
/// placer (see make_capacity_placer): indexed_packer with params.fit by default, or any placer
/// given to create(), such as HiveD (make_capacity_placer). The placer's deferrals are returned as
/// they are; quota is charged only when a bind is committed, so an admitted job that does not fit
/// physically holds nothing and is asked again at the next pass. Every commit, release and
/// rebuild reaches the placer (a preemption victim is released in the placer too: HiveD frees
/// its cells). Cost: O(1) on top of the placer.
///
/// Preemption (preemption=classic|fair; none by default: a queue whose borrowed GPUs are needed
/// back waits for the borrowers to finish). The placement mirrors its running jobs into a
/// hetsched::capacity_state: one cohort, queue i+1 for tenant i with resource "gpu" (milli-GPU)
/// in flavor "default", nominal = quota, borrowing limit = borrow_limit (0 without borrowing),
/// reclaimWithinCohort Any and withinClusterQueue LowerPriority; priorities are the jobs' trace
/// priorities and admission times a count of commits (candidate order: capacity_preemption.hpp).
/// A GPU job deferred by admission or by the packer asks plan_preemption(); a non-empty victim
/// list is returned as "preempt now, start later" (policy.hpp): the deferral plus the victims
/// ("<Kueue reason> by job <id>"). When the engine commits it, the victims are marked in flight
/// for the job and the job's quota is reserved (counted in its tenant's usage, so no borrower
/// takes the GPUs the victims free) until it binds; a job with a reservation never plans again.
/// In the mirror, reserved jobs and non-preemptible jobs are marked in flight for themselves, so
/// they are never candidates. The mirror is rebuilt when a tenant beyond it appears.
///
/// Admission times in the mirror are stamps now_ms·2^20 + k (k: commits earlier in the same
/// millisecond, at most 2^20 - 1; times past ~278 years count as that), from the simulated time
/// the engine gives through set_time():
/// candidates keep the commit order, and plan_preemption's min_runtime (min_runtime_s·1000·2^20,
/// with now = now_ms·2^20 + 2^20 - 1) excludes exactly the jobs started less than min_runtime_s
/// seconds ago. Such a job becomes a candidate at the first scheduling pass at or after it has
/// run min_runtime_s seconds (event-driven: the next arrival, completion or round; sim_params::
/// round_ms gives periodic passes); until then the preemptor waits. Preemption
/// is quota-level, as Kueue: when the quota fits but the placer finds no room (fragmentation, or
/// quotas above the cluster's GPUs), the job waits; victims are chosen by quota, not by where
/// they run, and the preemptor is bound by the placer once they are gone (or earlier, if room
/// appears elsewhere). An admitted job the placer defers as topology_unsatisfiable (it can never
/// place it) plans no preemption.
///
/// preemption=proportional (YARN's PCPP, docs/simulator_policies.md): no Kueue mirror. A GPU job
/// deferred by admission or by the placer asks for a PCPP round when none ran in the last
/// monitoring_interval_ms of simulated time (the first pass at or after the interval, as with
/// min_runtime_s; sim_params::round_ms gives periodic passes). A round builds the snapshot from
/// the simulated state: one dimension (milli-GPU, YARN's DefaultResourceCalculator: rounding
/// `nearest`); cluster = the cluster's GPUs, or the sum of quotas if larger; a top-level queue per
/// tenant index (quota table's length or the highest tenant seen, whichever is larger) with
/// guaranteed = its quota and maximum = the cluster (borrow=1), quota + borrow_limit capped by
/// the cluster (borrow_limit >= 0), or its quota (borrow=0); pending = the GPUs of its queued
/// jobs (preemptors holding a reservation included); one PCPP job per running GPU job (id and
/// submit time = the job's trace index, the trace priority, gang: the simulator preempts whole
/// jobs) with one container per task (start = the job's last start in ms); a non-preemptible
/// job's containers start after `now`, so the minimum runtime (min_runtime_s·1000 + 1 ms, now =
/// now_ms + 1: at least 1, so non-preemptible jobs are never victims) protects them; victims in
/// flight are `in_flight`. The round's victim jobs (plan order, each once) form a pool, replaced
/// by the next round, and each tenant's ideal assignment is kept. A deferred job of tenant t
/// takes victims from the pool in order (skipping those no longer running or already in flight)
/// until they hold its need: a job without a reservation only if ideal(t) >= usage(t) + need
/// (its tenant is owed that much; usage counts reservations), a job with one for what its
/// victims so far do not cover. They are returned as "preempt now, start later" ("proportional:
/// tenant <v> above its ideal <i> milli-GPU, by job <id>"); the commit reserves the job's quota
/// as for classic/fair. Victims left in the pool when no owed job asks are not preempted (the
/// next round re-plans them). Deterministic: the planner's tie-breaks
/// (proportional_preemption.hpp), pool order, the engine's order of place() calls.
class capacity_placement {
 public:
  /// Makes the placement with the packer placer (indexed_packer, params.fit; node topologies
  /// from `topology` when not null).
  capacity_placement(const cluster& description, const cluster_topology* topology,
                     capacity_params params);
  /// Returns the placement with `placer` binding admitted jobs (params.fit unused). Errors:
  /// invalid_argument when placer is null.
  [[nodiscard]] static result<capacity_placement> create(std::unique_ptr<placement_policy> placer,
                                                         capacity_params params);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  /// What place(state, job) answers now, recording nothing: the placer's what_if, and a PCPP
  /// round that is due planned and then discarded.
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  /// Rebuilds the placer, then brings the quota books to the state's jobs: a job the state no
  /// longer has is released; a job that holds resources in the state but was never committed
  /// here (bindings replayed after a restart, replay_bindings) is charged to its tenant and, with
  /// preemption, held in the mirror as admitted now (ascending job id).
  void rebuild(const cluster_state& state);
  /// Sets the simulated time (ms) of the following place() and commit() calls (non-decreasing).
  void set_time(std::int64_t now_ms) noexcept { now_ms_ = now_ms; }

  /// Returns the milli-GPUs tenant `t` uses now (reservations of preemptors included).
  [[nodiscard]] std::int64_t usage(std::uint32_t t) const noexcept {
    return t < usage_.size() ? usage_[t] : 0;
  }
  /// Returns the placer that binds admitted jobs.
  [[nodiscard]] const placement_policy& placer() const noexcept { return *placer_; }

  /// Admission stamps per millisecond in the preemption mirror (see the class comment).
  static constexpr std::int64_t stamps_per_ms = std::int64_t{1} << 20;

 private:
  capacity_placement(std::unique_ptr<placement_policy> placer, capacity_params params);
  /// A job held in the preemption mirror (running, or reserved for a preemptor).
  struct mirror_rec {
    std::uint32_t tenant = 0;
    std::int64_t milli = 0;
    std::int32_t priority = 0;
    std::int64_t admitted_at = 0;
    job_id marked = job_id::invalid();  ///< In flight for this job (itself: never a candidate).
  };
  [[nodiscard]] std::int64_t nominal(std::uint32_t t) const noexcept;
  /// place() (trial false) and what_if() (trial true: the placer's what_if).
  [[nodiscard]] result<decision> decide(const cluster_state& state, job_id job, bool trial);
  [[nodiscard]] result<decision> preempt_or_wait(const cluster_state& state, decision wait,
                                                 const job_record& rec, std::int64_t need);
  /// preemption=proportional: the victims for `rec` from the current round's pool (planning a
  /// round when one is due).
  [[nodiscard]] result<decision> proportional_or_wait(const cluster_state& state, decision wait,
                                                      const job_record& rec, std::int64_t need);
  /// Plans a PCPP round over `state` (pool_, ideal_, next_round_ms_).
  [[nodiscard]] result<void> plan_round(const cluster_state& state);
  [[nodiscard]] bool kueue() const noexcept {
    return params_.preemption == capacity_preemption_mode::classic ||
           params_.preemption == capacity_preemption_mode::fair;
  }
  void ensure_queues(std::uint32_t tenant);
  /// With preemption: holds the running job `rec` in the mirror as admitted now.
  void hold(const job_record& rec);
  void mirror_add(job_id job, const mirror_rec& m);
  void mirror_drop(job_id job);
  void charge(job_id job, std::uint32_t t, std::int64_t m);
  /// Returns the admission stamp of a commit now (see the class comment).
  [[nodiscard]] std::int64_t admission_stamp() noexcept;

  capacity_params params_;
  std::unique_ptr<placement_policy> placer_;  ///< Never null.
  std::int64_t total_nominal_ = 0;
  std::int64_t total_usage_ = 0;
  std::vector<std::int64_t> usage_;
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::int64_t>> running_;
  std::unique_ptr<capacity_state> mirror_;    ///< Only with preemption.
  std::uint32_t mirror_queues_ = 0;           ///< Tenants the mirror has queues for.
  std::map<std::uint32_t, mirror_rec> held_;  ///< The mirror's jobs by id.
  std::set<std::uint32_t> reserved_;          ///< Preemptors holding a quota reservation.
  std::int64_t now_ms_ = 0;                   ///< Simulated time given by set_time().
  std::int64_t stamp_ms_ = 0;                 ///< Millisecond of the last admission stamp.
  std::int64_t stamp_seq_ = 0;                ///< Stamps given in that millisecond.
  // preemption=proportional.
  std::int64_t next_round_ms_ = 0;  ///< A round is due at a place() at or after this time.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pool_;  ///< (victim job, its tenant).
  std::vector<std::int64_t> ideal_;                            ///< Last round's ideal, by tenant.
  std::unordered_map<std::uint32_t, std::int64_t> issued_;     ///< Preemptor: its victims' milli.
};

/// The registry factory (registry.hpp) of "capacity". With `tree=<queue-tree document>` it is
/// make_queue_placement() (queue_placement.hpp: hierarchical queues, flavors, user limits, the
/// real admission cycle); otherwise the flat form of this header: quota=G0/G1/..., borrow=0|1,
/// borrow_limit=<GPUs>, placer=packer|hived (default packer), fit=best|worst (packer placer only),
/// preemption=none|classic|fair|proportional (alias pcpp; default none), min_runtime_s=<s>, and
/// with proportional max_ignored_over_capacity, natural_termination_factor,
/// total_preemption_per_round (decimals, e.g. 0.1) and monitoring_interval_ms. Errors:
/// invalid_argument or out_of_range naming an unknown parameter or a bad value; those of
/// make_capacity_placer().
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_capacity_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
