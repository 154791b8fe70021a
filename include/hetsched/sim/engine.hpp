// SPDX-License-Identifier: MIT
// The trace-driven discrete-event simulator: a cluster_state driven through submit / apply /
// record exactly as an embedding scheduler drives it, with an ordering and a placement plug-in.
//
// Events, processed in (time, kind, sequence) order: job arrivals (from the trace), completions,
// job failures (retried through the lifecycle's retry rule; progress since the attempt started is
// lost), node failures (the node's jobs fail) and repairs, time-slice rotations (Gandiva) and
// scheduling rounds. Scheduling is event-driven (a pass after every instant at which something
// happened) or, with round_ms > 0, only at multiples of round_ms. Preemption keeps a job's progress
// and adds preemption_cost_ms to its remaining work; a migration adds migration_cost_ms; a resume
// after time-slicing adds resume_cost_ms. Victims a placement asks for on behalf of a waiting job
// ("preempt now, start later", placement.hpp) stop at once but keep their resources for
// preemption_delay_ms (the kill in flight) before they are requeued. Pure: time is simulated,
// randomness comes from the seed, progress is reported to an optional observer (no I/O).
//
// Migration (Gandiva's introspective mode; placement::plan_migrations, migrating_placement): in a
// pass, after the waiting jobs had their chance, a placement that migrates() is asked for moves;
// the engine applies them (apply(), so check_decision), and each moved job stops and restarts at
// once on its new GPUs with migration_cost_ms added to its remaining work (its progress is kept;
// it holds GPUs throughout; counted in sim_counters::migrations and job_outcome::migrations). A
// job time-sliced with a moved job stays paired with it; the next rotation takes it out of
// time-slicing as usual when GPUs are free. If anything moved, the waiting jobs get a second
// placement round in the same pass.
//
// Speed (sim_params::speed, speed_model.hpp, docs/speed_model.md): with the model off (the
// default) a job runs at its nominal speed on any GPUs, so a consolidation only costs and a
// defragmentation pays off only by placing waiting jobs earlier; every pinned figure of the
// project is with the model off. With it on, a running job progresses at rate r = hardware x
// scaling x locality x co-location (work ms per wall ms), read when it starts on its GPUs:
// hardware and scaling from its job type (trace_job::model) on the GPU type it holds (a job on
// several types moves at its slowest type's rate), its GPU count against the trace's (an
// elastic job holding k of n tasks runs at the model's scaling, not k/n), locality from
// placement_locality() over sim_params::topology, co-location from the running job of lowest
// index that shares one of its devices (the table measures pairs; an unnamed job type stands
// for an unknown peer: the default interference). When a job starts or stops beside it, a job's
// rate is read again and its finish moves (no cost). A rate of 0 (the table says the job type
// cannot run on that GPU type or beside that peer: out of memory in Gavel's measurements) fails
// the attempt at once; the lifecycle's retry rule applies. job_outcome::run_ms and ideal_run_ms
// record the time run and the time the same work would have taken without locality and
// co-location losses.
//
// A preemptive ordering (Tiresias 2D-LAS) runs a preemption round at each round boundary: it
// orders the waiting jobs (except those blocked, below) with the preemptible running ones and
// admits them greedily by GPU count; running jobs left out are evicted at once (no delay), then
// the pass places waiting jobs in order. Rules that keep it from thrashing, deterministic:
//  1. Group. Under a per_tenant() placement (capacity, hived) each (tenant, job priority) is a
//     separate group: a waiting job only displaces running jobs of its own tenant and priority,
//     with a budget of the GPUs those hold plus the free GPUs left by the groups before it
//     (tenant index order, then priority from high to low). Preemption across tenants or
//     priorities is the placement's alone (quota reclaim, HiveD guarantees), and a placement
//     never preempts a job for one of the same tenant and priority, so the two never evict each
//     other's choices: a placement's victim is re-admitted by the round only over jobs of its own
//     group, never over its preemptor. Otherwise (packer, fgd, gandiva) all jobs form one group
//     with a budget of the healthy GPUs minus the non-preemptible running jobs.
//  2. Roll back. A victim that restarts in the same pass (its preemptor could not be placed on
//     what it freed, e.g. fragmentation or quota) has its eviction undone: its preemption is not
//     counted, no preemption_cost_ms is added (sim_counters::preemption_rollbacks counts these).
//     Where every preemptor is placed nothing changes.
//  3. Block. A job admitted by a round but left unplaced causes no further preemption until some
//     job finishes or fails or a placement's victim is requeued.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hetsched/metrics/run_record.hpp>
#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/sim/speed_model.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::sim {

/// Knobs of simulate().
struct sim_params {
  /// 0: event-driven scheduling; > 0: scheduling passes only at multiples of round_ms. Preemptive
  /// orderings re-evaluate running jobs at multiples of round_ms, or of 60 s when round_ms is 0.
  std::int64_t round_ms = 0;
  std::int64_t preemption_cost_ms = 30'000;  ///< Added to a preempted job's remaining work.
  /// Time from a placement's preemption request until its victims have terminated and their
  /// resources are free (two-phase preemption; Kubernetes' default grace period).
  std::int64_t preemption_delay_ms = 30'000;
  /// Added to a migrated job's remaining work (checkpoint, move and restore).
  std::int64_t migration_cost_ms = 30'000;
  std::int64_t resume_cost_ms = 1'000;  ///< Added when a time-sliced job resumes.
  std::int64_t time_slice_ms = 60'000;  ///< Rotation period of time-sliced job pairs.
  /// Strict order: a pass stops at the first job that cannot be placed (no backfilling).
  bool blocking = false;
  /// Submit every preemptible job of several tasks as an elastic (non-gang) job: its tasks may be
  /// bound and given back one by one (a placement's grow-shrink, gandiva:grow=1), and while it
  /// holds k of its n tasks it progresses at k/n of full speed and holds k/n of its GPUs.
  bool elastic = false;
  /// Probability that an attempt fails (at a uniform point of its remaining run time).
  double job_failure_probability = 0.0;
  std::uint32_t retry_limit = 3;  ///< Failures requeued before a job fails for good.
  /// Mean time between failures of one node, hours; 0 disables node failures.
  double node_mtbf_hours = 0.0;
  std::int64_t node_repair_ms = 3'600'000;  ///< Time a failed node stays down.
  std::uint64_t seed = 1;
  /// Period of the time series; 0 picks (last submit - first submit) / 500, at least 60 s.
  std::int64_t sample_ms = 0;
  /// The speed model (see above); disabled by default.
  speed_model speed{};
  /// The topology the speed model reads locality from; required when speed.enabled(), with the
  /// description's node and device ids (to_cluster() of it).
  std::shared_ptr<const cluster_topology> topology{};

  friend bool operator==(const sim_params&, const sim_params&) = default;
};

/// The run record of metrics/run_record.hpp under the simulator's names.
using metrics::job_outcome;
using metrics::tenant_integral;
using metrics::time_sample;
using sim_counters = metrics::run_counters;
using sim_result = metrics::run_record;

/// Progress hooks (a visitor; the simulator itself never prints).
class sim_observer {
 public:
  virtual ~sim_observer() = default;
  /// Called every `progress_every` finished jobs with the jobs done so far, their total and the
  /// simulated time.
  virtual void on_progress(std::uint64_t done, std::uint64_t total, std::int64_t now_ms) = 0;
  /// Called after each time_sample is recorded, with its time and the cluster at that instant
  /// (e.g. to compute a fragmentation series, metrics/fragmentation.hpp). No-op by default.
  virtual void on_sample(std::int64_t time_ms, const cluster_state& state) {
    static_cast<void>(time_ms);
    static_cast<void>(state);
  }
  std::uint64_t progress_every = 1000;
};

/// Returns ok if `job` is a job the simulator accepts; invalid_argument naming the job's index,
/// name and the field otherwise (submit_ms < 0, duration_ms <= 0, either above
/// workload::max_trace_time_ms, tasks 0, gpu_milli_per_task not
/// 1000 x gpus_per_task and not a fraction 1..999 with gpus_per_task 1, negative CPU or memory, a
/// bad GPU type name).
[[nodiscard]] result<void> validate_trace_job(const workload::trace_job& job, std::size_t index);

/// Returns the outcome of replaying `trace` on `description` with `order` and `place`. The trace
/// may be in any order (jobs are taken by submit time, then trace index); job ids are trace
/// indices. Errors: the first bad job (validate_trace_job), invalid_argument for bad params
/// (negative costs or periods, probabilities outside [0, 1]), internal if the model refused a
/// decision (a plug-in bug; the message names the job and the model's reason); invalid_argument
/// for an enabled speed model without a topology or with one whose nodes or GPUs do not match
/// `description`. Deterministic.
/// Memory: O(trace + active jobs); terminal jobs are dropped from the cluster_state.
[[nodiscard]] result<sim_result> simulate(std::shared_ptr<const cluster> description,
                                          const workload::trace& trace, ordering_policy& order,
                                          placement_policy& place, const sim_params& params,
                                          sim_observer* observer = nullptr);

}  // namespace hetsched::sim
