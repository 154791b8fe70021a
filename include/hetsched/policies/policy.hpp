// SPDX-License-Identifier: MIT
// The policy contract: the one interface every scheduling policy of hetsched implements, over the
// model (cluster_state, ids) and answering with the model's one decision type (model/decision.hpp).
//
// Two roles compose (DESIGN.md §4):
// - ordering: which job goes next (FIFO, SJF, Tiresias, DRF; orderings.hpp). Compile time: the
//   job_ordering concept; run time: ordering_policy and ordering_adapter<O>.
// - placement: where a job goes and what must make room for it (the packer, Gandiva, FGD and its
//   baselines, capacity queues, HiveD; indexed_packer.hpp, gandiva_placement.hpp,
//   fgd_placement.hpp, capacity_placement.hpp, hived_placement.hpp, migrating_placement.hpp;
//   the first-fit and random baselines, baseline_placement.hpp).
//   Compile time: the job_placement concept; run time: placement_policy and placement_adapter<P>.
// Any ordering composes with any placement. make_policy() (registry.hpp) builds both from their
// names and parameters ("ORDER:k=v+PLACEMENT:k=v"); the simulator, the C API, Python and the
// Kubernetes extender reach policies through it.
//
// The calls of a placement, and what the caller (an engine: the simulator, an extender) promises:
//   place(state, job)     decide for one queued job; no change to what the policy has committed
//                         (caches may fill). The decision passes check_decision(state, d).
//   what_if(state, job)   the answer the next place(state, job) would give, with no side effect
//                         at all (no trigger armed, nothing recorded); for probes and dry runs.
//   commit(after, d)      after apply(state, d) succeeded: the policy updates its indices.
//   release(after, job)   after the job freed its resources (finish, failure, preemption,
//                         cancel).
//   rebuild(state)        after health or configuration changes, or after a restart: every index
//                         is recomputed from `state`. A restarted embedder replays its bind
//                         records into a fresh cluster_state (apply a decision holding the binds)
//                         and calls rebuild(state) once: replay_bindings() does both.
//
// Worked example (the packer under FIFO on a 2-node cluster; error handling shortened):
//
//   auto pol = make_policy("fifo+packer", description, &topology);   // registry.hpp
//   cluster_state state(description);
//   job_id j = *state.submit(spec);                                  // model/cluster_state.hpp
//   result<decision> d = pol->place->place(state, j);                // binds or a deferral
//   if (d && !d->binds.empty() && apply(state, *d)) pol->place->commit(state, *d);
//   ...                                                              // the job runs
//   state.finish(j); pol->place->release(state, j);
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/job_order.hpp>

namespace hetsched {

/// Policy parameters as "key=value" pairs, sorted by key.
using policy_params = std::map<std::string, std::string, std::less<>>;

// ---- Ordering: which job next ------------------------------------------------------------------

/// A type that orders jobs. static_keys(): a waiting job's key() never changes (the engine keeps
/// waiting jobs sorted incrementally and never calls order()); otherwise the engine calls order()
/// on every scheduling pass. preemptive(): running jobs take part in order() and the engine may,
/// at round boundaries, preempt a running job that the order puts after waiting ones (engine.hpp:
/// within one tenant and priority under a per-tenant placement; rolled back when the victim
/// restarts in the same pass).
template <typename O>
concept job_ordering = requires(const O& o, const job_view& j, std::span<const job_view> jobs,
                                const order_context& ctx) {
  { o.name() } -> std::convertible_to<std::string_view>;
  { o.static_keys() } -> std::convertible_to<bool>;
  { o.preemptive() } -> std::convertible_to<bool>;
  { o.key(j) } -> std::same_as<order_key>;
  { o.order(jobs, ctx) } -> std::same_as<std::vector<std::uint32_t>>;
};

/// A job_ordering that weighs tenants: tenant_weight(name) is the weight (>= 1) of the tenant of
/// that trace name.
template <typename O>
concept weighted_job_ordering = job_ordering<O> && requires(const O& o, std::string_view tenant) {
  { o.tenant_weight(tenant) } -> std::same_as<std::uint32_t>;
};

/// The runtime ordering interface (see job_ordering for the contract of each member).
class ordering_policy {
 public:
  virtual ~ordering_policy() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual bool static_keys() const noexcept = 0;
  [[nodiscard]] virtual bool preemptive() const noexcept = 0;
  /// Returns the key of `j` (meaningful when static_keys()).
  [[nodiscard]] virtual order_key key(const job_view& j) const = 0;
  /// Returns the indices of `jobs` in scheduling order (a permutation).
  [[nodiscard]] virtual std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                         const order_context& ctx) const = 0;
  /// Returns the weight (>= 1) of the tenant named `tenant` (its trace name); the engine puts it
  /// in order_context::tenants[...].weight. Only DRF uses weights.
  [[nodiscard]] virtual std::uint32_t tenant_weight(std::string_view tenant) const = 0;
};

/// Wraps a job_ordering as an ordering.
template <job_ordering O>
class ordering_adapter final : public ordering_policy {
 public:
  explicit ordering_adapter(O inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return inner_.name(); }
  [[nodiscard]] bool static_keys() const noexcept override { return inner_.static_keys(); }
  [[nodiscard]] bool preemptive() const noexcept override { return inner_.preemptive(); }
  [[nodiscard]] order_key key(const job_view& j) const override { return inner_.key(j); }
  [[nodiscard]] std::vector<std::uint32_t> order(std::span<const job_view> jobs,
                                                 const order_context& ctx) const override {
    return inner_.order(jobs, ctx);
  }
  /// The inner ordering's tenant_weight() when it has one (weighted_job_ordering), else 1.
  [[nodiscard]] std::uint32_t tenant_weight(std::string_view tenant) const override {
    if constexpr (weighted_job_ordering<O>) {
      return inner_.tenant_weight(tenant);
    } else {
      static_cast<void>(tenant);
      return 1;
    }
  }
  [[nodiscard]] const O& inner() const noexcept { return inner_; }

 private:
  O inner_;
};

// ---- Placement: where it goes ------------------------------------------------------------------

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
/// What-if (optional): a type whose place() records something about the call (a trigger, a
/// cache that changes later answers) has `what_if(state, job)` returning result<decision>: the
/// answer place() would give, without recording anything. Without the member, place() must have
/// no side effect and placement_adapter answers what_if with it.
///
/// Migration (optional): a type with `plan_migrations(state)` returning result<decision> may move
/// running jobs (see placement_policy::plan_migrations and migrating_placement.hpp).
///
/// Planning (optional): a type with `plan(state)` returning result<decision>, `plans()`,
/// `owns_suspensions()` and `next_plan_ms()` changes placed jobs on its own schedule
/// (placement_policy::plan; Gandiva's time-slicing, packing and grow-shrink, gandiva_placement).
template <typename P>
concept job_placement = requires(P& p, const cluster_state& s, job_id j, const decision& d) {
  { p.place(s, j) } -> std::same_as<result<decision>>;
  p.commit(s, d);
  p.release(s, j);
  p.rebuild(s);
};

/// The runtime placement interface (see job_placement and the calls at the top of this file).
class placement_policy {
 public:
  virtual ~placement_policy() = default;
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
  /// True if plan() may return decisions (introspective planners: Gandiva's time-slicing,
  /// packing, grow-shrink).
  [[nodiscard]] virtual bool plans() const noexcept { return false; }
  /// True if the placement resumes the jobs it suspends through plan() (its own time-slicing);
  /// the engine then neither pairs nor rotates suspended jobs itself. Default false.
  [[nodiscard]] virtual bool owns_suspensions() const noexcept { return false; }
  /// Returns what to change now among placed jobs: a decision of suspensions and preemptions of
  /// running or suspended jobs, resumptions, migrations and partial releases of running jobs, and
  /// binds (of queued jobs, or of more tasks of a running non-gang job: a grow), each job at most
  /// once, that passes check_decision; or an empty decision. The engine calls it when plans(),
  /// after set_time(now), at the start of every scheduling pass and again after the pass placed
  /// the waiting jobs; it applies the decision and calls commit(after, d). Default: empty.
  [[nodiscard]] virtual result<decision> plan(const cluster_state& state) {
    static_cast<void>(state);
    return decision{};
  }
  /// Returns the simulated time (ms) at which plan() wants to be called again even if nothing
  /// else happens (a quantum ends), or -1 for none. Read by the engine after each plan() call.
  [[nodiscard]] virtual std::int64_t next_plan_ms() const noexcept { return -1; }
  [[nodiscard]] virtual result<decision> place(const cluster_state& state, job_id job) = 0;
  /// Returns what place(state, job) would return now, with no side effect (see job_placement).
  [[nodiscard]] virtual result<decision> what_if(const cluster_state& state, job_id job) = 0;
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
class placement_adapter final : public placement_policy {
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
      return placement_policy::plan_migrations(state);
    }
  }
  /// P::plans() when P has plan(); false otherwise.
  [[nodiscard]] bool plans() const noexcept override {
    if constexpr (has_plan) {
      return inner_.plans();
    } else {
      return false;
    }
  }
  /// P::owns_suspensions() when P has plan(); false otherwise.
  [[nodiscard]] bool owns_suspensions() const noexcept override {
    if constexpr (has_plan) {
      return inner_.owns_suspensions();
    } else {
      return false;
    }
  }
  /// Forwarded to P::plan when P has one; an empty decision otherwise.
  [[nodiscard]] result<decision> plan(const cluster_state& state) override {
    if constexpr (has_plan) {
      return inner_.plan(state);
    } else {
      return placement_policy::plan(state);
    }
  }
  /// P::next_plan_ms() when P has plan(); -1 otherwise.
  [[nodiscard]] std::int64_t next_plan_ms() const noexcept override {
    if constexpr (has_plan) {
      return inner_.next_plan_ms();
    } else {
      return -1;
    }
  }
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) override {
    return inner_.place(state, job);
  }
  /// P::what_if when P has one, else P::place (P's place() then has no side effect).
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job) override {
    if constexpr (requires(P & p) {
                    { p.what_if(state, job) } -> std::same_as<result<decision>>;
                  }) {
      return inner_.what_if(state, job);
    } else {
      return inner_.place(state, job);
    }
  }
  void commit(const cluster_state& after, const decision& d) override { inner_.commit(after, d); }
  void release(const cluster_state& after, job_id job) override { inner_.release(after, job); }
  void rebuild(const cluster_state& state) override { inner_.rebuild(state); }
  [[nodiscard]] P& inner() noexcept { return inner_; }
  [[nodiscard]] const P& inner() const noexcept { return inner_; }

 private:
  static constexpr bool has_migrations = requires(P & p, const cluster_state& s) {
    { p.plan_migrations(s) } -> std::same_as<result<decision>>;
  };
  /// A planning placement has plan(state), plans(), owns_suspensions() and next_plan_ms().
  static constexpr bool has_plan = requires(P & p, const P& cp, const cluster_state& s) {
    { p.plan(s) } -> std::same_as<result<decision>>;
    { cp.plans() } -> std::convertible_to<bool>;
    { cp.owns_suspensions() } -> std::convertible_to<bool>;
    { cp.next_plan_ms() } -> std::convertible_to<std::int64_t>;
  };
  P inner_;
  std::string name_;
  placement_traits traits_;
};

/// Returns `text` as an unsigned integer. Errors: invalid_argument "<policy>: parameter
/// <key>=<text> is not a non-negative integer". For policy factories.
[[nodiscard]] result<std::uint32_t> parse_param_uint(std::string_view policy, std::string_view key,
                                                     std::string_view text);

/// Returns `v` as a signed integer. Errors: invalid_argument "<policy>: parameter <key>: '<v>' is
/// not an integer".
[[nodiscard]] result<std::int64_t> parse_param_int(std::string_view policy, std::string_view key,
                                                   std::string_view v);

/// Returns the flag `v` ("0", "false", "1", "true"). Errors: invalid_argument "<policy>:
/// parameter <key>: '<v>' is not 0 or 1".
[[nodiscard]] result<bool> parse_param_flag(std::string_view policy, std::string_view key,
                                            std::string_view v);

/// Returns the GPUs of "G0/G1/..." (each a non-negative integer; the `quota` parameter of the
/// capacity and hived placements: whole GPUs per tenant index). Errors: invalid_argument quoting
/// the bad item.
[[nodiscard]] result<std::vector<std::uint32_t>> parse_quota_list(std::string_view text);

/// Applies `binds` (bind records kept by an embedder, e.g. the Kubernetes extender's journal) to
/// `state` as one decision and then rebuilds `p` from the state: how a restarted embedder gets
/// back to where it was. All or nothing: if apply() refuses the records (a GPU in two records, an
/// unknown job or device), neither `state` nor `p` changes and the error names the problem.
[[nodiscard]] result<void> replay_bindings(cluster_state& state, placement_policy& p,
                                           std::span<const binding> binds);

}  // namespace hetsched
