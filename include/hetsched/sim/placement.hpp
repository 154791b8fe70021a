// SPDX-License-Identifier: MIT
// The simulator's placement plug-in: where a job's tasks go. An indexed best-fit packer, an
// adapter for Gandiva's reactive placement, and Gandiva's introspective migration for either.
//
// Compile time: the job_placement concept (place / commit / release / rebuild, the shape of
// gandiva_reactive). Run time: the small virtual base `placement`, placement_adapter<P>, and
// make_placement(name, params, cluster, topology), the factory behind --policy. A placement keeps
// incremental indices; the engine tells it every change: commit() after apply(), release() after a
// job freed its resources, rebuild() after health changes. Placements written later (HiveD, FGD)
// plug in by adding a type and a factory branch.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/migration_planner.hpp>
#include <hetsched/sim/ordering.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched::sim {

/// A type that places queued jobs. place() returns a decision for one queued job (a bind, possibly
/// with suspensions, preemptions or migrations of other jobs, or a deferral) that passes
/// check_decision(state, d); commit(after, d) follows apply(); release(after, job) follows a job
/// freeing its resources (finish, failure, requeue after preemption, cancel); rebuild(state)
/// recomputes every index (health changes).
///
/// "Preempt now, start later": place() may instead return no bind, the job's deferral and
/// preemptions of running preemptible jobs (the victims). The engine then stops the victims'
/// progress and calls commit(state, d) at once with the victims still holding their resources
/// (the placement marks them in flight and may reserve room for the job); after the engine's
/// preemption delay each victim is preempted in the cluster_state, requeued, and release(after,
/// victim) follows. The job is placed by a later place() call. While a job has victims in
/// flight the engine ignores further preemptions for it; victims already in flight for another
/// job are skipped.
///
/// Migration (optional): a type with `plan_migrations(state)` returning result<decision> may move
/// running jobs (see placement::plan_migrations and migrating_placement).
template <typename P>
concept job_placement = requires(P& p, const cluster_state& s, job_id j, const decision& d) {
  { p.place(s, j) } -> std::same_as<result<decision>>;
  p.commit(s, d);
  p.release(s, j);
  p.rebuild(s);
};

/// The runtime placement interface (see job_placement).
class placement {
 public:
  virtual ~placement() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// True if place() may succeed with no free GPU (time-slicing); the engine then never skips it.
  [[nodiscard]] virtual bool oversubscribes() const noexcept = 0;
  /// True if place() depends on the job's tenant (quotas): the engine then never lets one
  /// tenant's failed job stand for another tenant's job of the same shape.
  [[nodiscard]] virtual bool per_tenant() const noexcept { return false; }
  /// True if place() may answer with preemptions ("preempt now, start later", see
  /// job_placement): the engine then asks it even when fewer GPUs are free than the job needs.
  [[nodiscard]] virtual bool preempts() const noexcept { return false; }
  /// Tells the placement the simulated time (ms) of the place() or commit() call that follows;
  /// the engine calls it before each of them. Placements whose decisions do not depend on time
  /// ignore it (the default).
  virtual void set_time(std::int64_t now_ms) { static_cast<void>(now_ms); }
  /// True if plan_migrations() may return moves (Gandiva's introspective migration).
  [[nodiscard]] virtual bool migrates() const noexcept { return false; }
  /// Returns the migrations to carry out now: a decision holding only migrations of running
  /// jobs (each at most once), or an empty decision. The engine calls it at the start of every
  /// scheduling pass when migrates() (after set_time(now)); the placement decides whether to plan
  /// (migrating_placement: only after GPUs freed up). The engine applies the decision, stops each
  /// moved job and restarts it on its new GPUs with migration_cost_ms added to its remaining work,
  /// then calls commit(after, d). Default: an empty decision.
  [[nodiscard]] virtual result<decision> plan_migrations(const cluster_state& state) {
    static_cast<void>(state);
    return decision{};
  }
  [[nodiscard]] virtual result<decision> place(const cluster_state& state, job_id job) = 0;
  virtual void commit(const cluster_state& after, const decision& d) = 0;
  virtual void release(const cluster_state& after, job_id job) = 0;
  virtual void rebuild(const cluster_state& state) = 0;
};

/// What a placement tells the engine about itself (see the matching methods of `placement`).
struct placement_traits {
  bool oversubscribes = false;  ///< place() may succeed with no free GPU (time-slicing).
  bool per_tenant = false;      ///< place() depends on the job's tenant (quotas).
  bool preempts = false;        ///< place() may preempt running jobs for a waiting one.

  friend bool operator==(const placement_traits&, const placement_traits&) = default;
};

/// Wraps a job_placement as a placement with fixed traits.
template <job_placement P>
class placement_adapter final : public placement {
 public:
  placement_adapter(P inner, std::string name, placement_traits traits)
      : inner_(std::move(inner)), name_(std::move(name)), traits_(traits) {}
  placement_adapter(P inner, std::string name, bool oversubscribes)
      : placement_adapter(std::move(inner), std::move(name), placement_traits{oversubscribes}) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] bool oversubscribes() const noexcept override { return traits_.oversubscribes; }
  [[nodiscard]] bool per_tenant() const noexcept override { return traits_.per_tenant; }
  [[nodiscard]] bool preempts() const noexcept override { return traits_.preempts; }
  /// Forwarded to P::set_time when P has one.
  void set_time(std::int64_t now_ms) override {
    if constexpr (requires(P & p) { p.set_time(now_ms); }) inner_.set_time(now_ms);
  }
  /// True when P has plan_migrations.
  [[nodiscard]] bool migrates() const noexcept override { return has_migrations; }
  /// Forwarded to P::plan_migrations when P has one; an empty decision otherwise.
  [[nodiscard]] result<decision> plan_migrations(const cluster_state& state) override {
    if constexpr (has_migrations) {
      return inner_.plan_migrations(state);
    } else {
      return placement::plan_migrations(state);
    }
  }
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) override {
    return inner_.place(state, job);
  }
  void commit(const cluster_state& after, const decision& d) override { inner_.commit(after, d); }
  void release(const cluster_state& after, job_id job) override { inner_.release(after, job); }
  void rebuild(const cluster_state& state) override { inner_.rebuild(state); }
  [[nodiscard]] P& inner() noexcept { return inner_; }

 private:
  static constexpr bool has_migrations = requires(P & p, const cluster_state& s) {
    { p.plan_migrations(s) } -> std::same_as<result<decision>>;
  };
  P inner_;
  std::string name_;
  placement_traits traits_;
};

/// How indexed_packer picks a node.
enum class node_fit : std::uint8_t {
  best,   ///< Fewest free GPUs that suffice (packing; keeps whole servers for big jobs).
  worst,  ///< Most free GPUs (spreading).
};

/// Parameters of indexed_packer.
struct packer_placement_params {
  node_fit fit = node_fit::best;

  friend bool operator==(const packer_placement_params&, const packer_placement_params&) = default;
};

/// Places each task of a job on one node: the node by `fit` over an index of free whole GPUs, the
/// GPUs inside it by the topology-aware packer (allocate(..., lexmax)) when the node's topology is
/// known and has at most max_packer_gpus GPUs, else the lowest free local indices.
///
/// Index: per node group (nodes whose first device has the same GPU type, groups in order of first
/// appearance) and free count, the healthy nodes with that many free healthy GPUs; plus the
/// healthy devices that are partly used (for fractional requests), by free milli-GPU.
/// Whole-GPU task of k GPUs, best fit: free counts k, k+1, ... ; inside a count, groups in order,
/// then lower node id; a node is taken if its type matches the request, k of its free devices have
/// the requested GPU memory and its free CPU, memory and extended resources cover the task (minus
/// what earlier tasks of the same job took). Worst fit walks counts downwards. Fractional task:
/// the partly used device with the least free milli-GPU that suffices (then lower device id), else
/// a whole free GPU chosen as for k = 1 (the packer's least-damage GPU). CPU-only task: the first
/// healthy node in id order with room (O(nodes)). A gang is all or nothing: if a task finds no
/// node the job is deferred, insufficient_capacity when the cluster has fewer free healthy GPUs
/// than the job asks for, fragmented otherwise. Cost per whole-GPU task: O(max GPUs per node +
/// log nodes) plus the packer when the first candidate fits.
class indexed_packer {
 public:
  /// Makes the packer for `description` (no topologies) with every device free.
  explicit indexed_packer(const cluster& description, packer_placement_params params = {});
  /// Makes the packer with node topologies from `topology` (node ids must agree).
  indexed_packer(const cluster& description, const cluster_topology& topology,
                 packer_placement_params params = {});

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  void rebuild(const cluster_state& state);

  /// Returns the free healthy GPUs of node `n` as the index sees them.
  [[nodiscard]] std::uint32_t free_gpus(node_id n) const noexcept { return free_[n.index()]; }

 private:
  struct pending_use {
    node_id node;
    resource_vector used;
  };
  void init(const cluster& description);
  void set_free(std::uint32_t node, std::uint32_t value);
  void refresh(const cluster_state& state, node_id n);
  void refresh_job_nodes(const cluster_state& state, job_id job);
  [[nodiscard]] std::optional<task_placement> try_node(const cluster_state& state, node_id n,
                                                       const task_role& role, task_id task,
                                                       std::span<const pending_use> taken,
                                                       std::span<const device_id> taken_devices);

  packer_placement_params params_;
  std::vector<pair_score_matrix> matrices_;
  std::vector<std::uint32_t> matrix_of_;  ///< Per node; UINT32_MAX when none.
  std::vector<std::uint32_t> group_of_;   ///< Per node: its GPU-type group.
  std::vector<gpu_type> group_type_;
  std::uint32_t max_gpus_ = 0;
  std::vector<std::uint32_t> free_;  ///< Per node: free healthy GPUs (UINT32_MAX: unindexed).
  std::uint64_t total_free_ = 0;     ///< Sum of free_ over indexed nodes.
  /// buckets_[group * (max_gpus_ + 1) + free] = nodes.
  std::vector<std::set<std::uint32_t>> buckets_;
  std::vector<std::int64_t> partial_free_;  ///< Per device: free milli in partial_, or -1.
  std::set<std::pair<std::int64_t, std::uint32_t>> partial_;
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> job_nodes_;
  /// Packer answers by (matrix, free-GPU mask, size); at most 2^16 x 16 entries per topology.
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> memo_;
};

/// Gandiva's reactive placement (gandiva_reactive) for the jobs it supports (one task of whole
/// GPUs); jobs it defers as topology_unsatisfiable (several tasks, fractional) go to an
/// indexed_packer instead. Both indices see every change. Oversubscribes (time-slicing).
class gandiva_placement {
 public:
  gandiva_placement(const cluster& description, const cluster_topology* topology,
                    gandiva_params params);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  void rebuild(const cluster_state& state);

 private:
  gandiva_reactive gandiva_;
  indexed_packer packer_;
};

/// When a migrating_placement plans, and what.
struct sim_migration_params {
  /// The planner's parameters. In the simulator only preemptible jobs move (a job that cannot be
  /// stopped cannot be checkpointed either); the planner's checkpoint_restore_s only fills the
  /// plan's cost figures, the engine charges its own migration_cost_ms.
  migration_params planner = [] {
    migration_params p;
    p.require_preemptible = true;
    return p;
  }();
  /// At most one plan per interval of simulated time (ms): a plan is made at the first pass at
  /// least this long after the previous one (0: any pass; migration_trigger).
  std::int64_t interval_ms = 60'000;

  friend bool operator==(const sim_migration_params&, const sim_migration_params&) = default;
};

/// When a migrating_placement plans, and what (the bookkeeping behind migrating_placement, the
/// same for every placement type). Pure: the planner reads the state; time comes from the caller.
///
/// Trigger. A plan is made by the first plan() call such that
///  1. GPUs have freed up since the last plan (released(): a job finished, failed or was
///     preempted; rebuilt(): a node's health changed);
///  2. params.interval_ms has passed since the last plan (any plan counts; the first call always
///     passes this test);
///  3. something can gain: a job waits (its last place() bound nothing), which enables
///     defragmentation, or a running job spans several servers while needing no more GPUs than
///     the largest server has, which enables consolidation. Only the enabled stages run (both
///     only if params.planner asks for them).
/// A call that fails 2 or 3 leaves the trigger armed; a plan disarms it, whether or not it moved
/// anything. Rule 3 is ours (the paper's trigger is "when GPUs free up"): without it a large
/// cluster with idle GPUs would defragment after every completion, at a migration's cost and for
/// no job, and the planner's O((nodes + devices + jobs) log nodes) would run at every pass.
class migration_trigger {
 public:
  /// Errors: none; a topology (node ids as to_cluster() gives) lets the planner pick GPUs with
  /// the packer, as pick_gpus does.
  migration_trigger(const cluster& description, const cluster_topology* topology,
                    sim_migration_params params);

  /// After place(job) returned `d`: the job waits if `d` binds nothing.
  void placed(job_id job, const decision& d);
  /// After commit(after, d): bound jobs no longer wait; bound and moved jobs are re-examined.
  void committed(const cluster_state& after, const decision& d);
  /// After release(after, job): GPUs freed up; the job is forgotten.
  void released(job_id job);
  /// After rebuild(state): GPUs may have come back; every index is recomputed from `state`.
  void rebuilt(const cluster_state& state);
  /// Returns the moves to make at `now_ms` (see the class comment), or an empty decision.
  /// Errors: those of migration_planner::plan (a state of another cluster).
  [[nodiscard]] result<decision> plan(const cluster_state& state, std::int64_t now_ms);

  [[nodiscard]] const sim_migration_params& params() const noexcept { return params_; }
  /// Jobs whose last place() bound nothing, in id order.
  [[nodiscard]] const std::set<std::uint32_t>& waiting() const noexcept { return waiting_; }
  /// Running jobs over several servers that one server could hold, in id order.
  [[nodiscard]] const std::set<std::uint32_t>& spread() const noexcept { return spread_; }

 private:
  void examine(const cluster_state& state, job_id job);

  migration_planner planner_;
  sim_migration_params params_;
  std::uint32_t server_gpus_ = 0;  ///< GPUs of the largest server.
  std::set<std::uint32_t> waiting_;
  std::set<std::uint32_t> spread_;
  std::int64_t last_plan_ms_ = 0;
  bool planned_ = false;
  bool freed_ = false;
};

/// Gandiva's introspective migration around a placement P (the trigger: migration_trigger). P
/// places jobs and sees every change; plan_migrations() returns migration_planner's moves
/// (consolidation of gangs spread over servers, then defragmentation down to the threshold;
/// policies/migration_planner.hpp) as to_decision(plan). Deterministic: the plan is a pure
/// function of the state, the trigger of the calls.
template <job_placement P>
class migrating_placement {
 public:
  migrating_placement(P inner, migration_trigger trigger)
      : inner_(std::move(inner)), trigger_(std::move(trigger)) {}

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) {
    auto d = inner_.place(state, job);
    if (d) trigger_.placed(job, *d);
    return d;
  }
  void commit(const cluster_state& after, const decision& d) {
    inner_.commit(after, d);
    trigger_.committed(after, d);
  }
  void release(const cluster_state& after, job_id job) {
    inner_.release(after, job);
    trigger_.released(job);
  }
  void rebuild(const cluster_state& state) {
    inner_.rebuild(state);
    trigger_.rebuilt(state);
  }
  /// Records the simulated time; forwarded to P::set_time when P has one.
  void set_time(std::int64_t now_ms) {
    now_ms_ = now_ms;
    if constexpr (requires(P & p) { p.set_time(now_ms); }) inner_.set_time(now_ms);
  }
  /// Returns migration_trigger::plan(state, the time of the last set_time()).
  [[nodiscard]] result<decision> plan_migrations(const cluster_state& state) {
    return trigger_.plan(state, now_ms_);
  }
  [[nodiscard]] const migration_trigger& trigger() const noexcept { return trigger_; }
  [[nodiscard]] P& inner() noexcept { return inner_; }

 private:
  P inner_;
  migration_trigger trigger_;
  std::int64_t now_ms_ = 0;
};

/// Returns the names make_placement() accepts: packer, gandiva, capacity, hived
/// (sim/quota_placement.hpp), fgd (sim/fgd_placement.hpp).
[[nodiscard]] std::span<const std::string_view> placement_names() noexcept;

/// Returns the placement named `name` for `description` (node topologies from `topology` when not
/// null). Parameters: packer takes `fit=best|worst`; gandiva takes `oversubscribe=0|1` and
/// `slices=<n>` (max time-sliced jobs per GPU set). Both take Gandiva's introspective migration
/// (migrating_placement): `migrate=0|1|consolidate|defragment` (both stages, or one; default 1
/// for gandiva, 0 for packer), `migrate_threshold=N/D` (defragment while the free GPUs of
/// non-idle servers reach N/D of the largest server; default 3/4) and `migrate_interval_s=S`
/// (at most one plan per S simulated seconds; default 60); the last two need migration on.
/// Errors: not_found naming the placement and the valid names; invalid_argument naming an
/// unknown parameter or a bad value.
[[nodiscard]] result<std::unique_ptr<placement>> make_placement(std::string_view name,
                                                                const plugin_params& params,
                                                                const cluster& description,
                                                                const cluster_topology* topology);

}  // namespace hetsched::sim
