// SPDX-License-Identifier: MIT
// Gandiva's introspective migration around any placement: migration_trigger decides when to plan,
// migrating_placement<P> wraps a job_placement P and returns migration_planner's moves.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/migration_planner.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// When a migrating_placement plans, and what.
struct migration_trigger_params {
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

  friend bool operator==(const migration_trigger_params&,
                         const migration_trigger_params&) = default;
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
                    migration_trigger_params params);

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

  [[nodiscard]] const migration_trigger_params& params() const noexcept { return params_; }
  /// Jobs whose last place() bound nothing, in id order.
  [[nodiscard]] const std::set<std::uint32_t>& waiting() const noexcept { return waiting_; }
  /// Running jobs over several servers that one server could hold, in id order.
  [[nodiscard]] const std::set<std::uint32_t>& spread() const noexcept { return spread_; }

 private:
  void examine(const cluster_state& state, job_id job);

  migration_planner planner_;
  migration_trigger_params params_;
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
  /// P's answer (P::what_if when P has one, else P::place) without arming the trigger.
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job) {
    if constexpr (requires(P & p) {
                    { p.what_if(state, job) } -> std::same_as<result<decision>>;
                  }) {
      return inner_.what_if(state, job);
    } else {
      return inner_.place(state, job);
    }
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
  /// P::plan(state) when P plans (policy.hpp, "Planning"), else an empty decision; trigger-free.
  [[nodiscard]] result<decision> plan(const cluster_state& state) {
    if constexpr (inner_plans) {
      return inner_.plan(state);
    } else {
      return decision{};
    }
  }
  /// P::plans() when P plans, else false.
  [[nodiscard]] bool plans() const noexcept {
    if constexpr (inner_plans) {
      return inner_.plans();
    } else {
      return false;
    }
  }
  /// P::owns_suspensions() when P plans, else false.
  [[nodiscard]] bool owns_suspensions() const noexcept {
    if constexpr (inner_plans) {
      return inner_.owns_suspensions();
    } else {
      return false;
    }
  }
  /// P::next_plan_ms() when P plans, else -1.
  [[nodiscard]] std::int64_t next_plan_ms() const noexcept {
    if constexpr (inner_plans) {
      return inner_.next_plan_ms();
    } else {
      return -1;
    }
  }
  [[nodiscard]] const migration_trigger& trigger() const noexcept { return trigger_; }
  [[nodiscard]] P& inner() noexcept { return inner_; }

 private:
  static constexpr bool inner_plans = requires(P & p, const P& cp, const cluster_state& s) {
    { p.plan(s) } -> std::same_as<result<decision>>;
    { cp.plans() } -> std::convertible_to<bool>;
    { cp.owns_suspensions() } -> std::convertible_to<bool>;
    { cp.next_plan_ms() } -> std::convertible_to<std::int64_t>;
  };
  P inner_;
  migration_trigger trigger_;
  std::int64_t now_ms_ = 0;
};

/// Gandiva's introspective migration as placement parameters (packer and gandiva): `migrate=0|1|
/// consolidate|defragment` (both stages, or one), `migrate_threshold=N/D` (defragment while the
/// free GPUs of non-idle servers reach N/D of the largest server; default 3/4) and
/// `migrate_interval_s=S` (at most one plan per S simulated seconds; default 60); the last two need
/// migration on.
struct migration_options {
  bool on = false;
  migration_trigger_params params;
  std::string_view needs_on;  ///< A key given that needs migration on, or empty.
};

/// The migration parameters' names, for messages.
inline constexpr std::string_view migration_keys = "migrate, migrate_threshold, migrate_interval_s";

/// Parses `key`=`value` into `opt` if it is a migration key: nullopt if it is not one, an error
/// naming the policy, key and value if the value is bad.
[[nodiscard]] std::optional<result<void>> parse_migration_param(std::string_view plugin,
                                                                std::string_view key,
                                                                std::string_view value,
                                                                migration_options& opt);

/// Returns `inner` as a placement_policy named `plugin` with `traits`, wrapped in
/// migrating_placement when `opt` asks for migration. Errors: invalid_argument when a migration
/// parameter was given with migration off.
template <job_placement P>
result<std::unique_ptr<placement_policy>> with_migration(P inner, std::string_view plugin,
                                                         const migration_options& opt,
                                                         placement_traits traits,
                                                         const cluster& description,
                                                         const cluster_topology* topology) {
  if (!opt.on) {
    if (!opt.needs_on.empty())
      return make_error(errc::invalid_argument, "{}: {} needs migrate=1, consolidate or defragment",
                        plugin, opt.needs_on);
    return std::unique_ptr<placement_policy>(
        std::make_unique<placement_adapter<P>>(std::move(inner), std::string(plugin), traits));
  }
  using wrapped = migrating_placement<P>;
  return std::unique_ptr<placement_policy>(std::make_unique<placement_adapter<wrapped>>(
      wrapped(std::move(inner), migration_trigger(description, topology, opt.params)),
      std::string(plugin), traits));
}

}  // namespace hetsched
