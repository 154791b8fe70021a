// SPDX-License-Identifier: MIT
// The simulator's engine class (private): state, events and the methods split between engine.cpp
// (bookkeeping, arrivals, decisions, passes, the main loop) and engine_events.cpp (completions,
// failures, preemption requeues, a placement's evictions, time-slice rotation, node failures and
// repairs).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/workload/synthetic.hpp>

namespace hetsched::sim::detail {

inline constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

enum class ev : std::uint8_t { finish, fail, node_fail, node_repair, slice, evict, round, plan };

struct event {
  std::int64_t t;
  ev kind;
  std::uint64_t seq;
  std::uint32_t who;
  std::uint32_t epoch;
  friend bool operator>(const event& a, const event& b) {
    return std::tie(a.t, a.kind, a.seq) > std::tie(b.t, b.kind, b.seq);
  }
};

struct job_rt {
  std::int64_t remaining_ms = 0;
  std::int64_t run_start_ms = -1;  // -1 unless running
  std::int64_t pending_since = -1;
  std::int64_t extra_ms = 0;  // cost added at the next (re)start
  std::int64_t attained_gpu_ms = 0;
  std::uint32_t epoch = 0;
  std::uint32_t shape = 0;
  std::uint32_t preemptor = none;  // while evicting: the job it makes room for
  std::uint32_t in_flight = 0;     // while waiting: its victims not yet terminated
  std::uint32_t placed_tasks = 0;  // elastic job holding fewer tasks than it has; 0: all
  // Speed model (engine.hpp, engine_speed.cpp): work ms per wall ms on the current GPUs, and the
  // part of it due to placement (locality x co-location); 1 with the model off.
  double rate = 1.0;
  double placement_factor = 1.0;
  std::int64_t fail_work = -1;  // speed model: work left until this attempt's drawn failure
  order_key key{};
  bool waiting = false;
  bool suspended = false;
  bool evicting = false;    // a placement's victim: stopped, still holding its resources
  bool las_victim = false;  // evicted by the current pass's preemption round
};

using shape_key = std::tuple<std::uint32_t, std::uint32_t, std::int64_t, std::int64_t, std::int64_t,
                             std::string, std::string>;

class engine {
 public:
  engine(std::shared_ptr<const cluster> description, const workload::trace& trace,
         ordering_policy& order, placement_policy& place, const sim_params& params,
         sim_observer* observer)
      : state_(description),
        trace_(trace),
        order_(order),
        place_(place),
        p_(params),
        observer_(observer),
        rng_(params.seed ^ 0x5eed5eed5eedULL),
        speed_on_(params.speed.enabled()) {}

  result<sim_result> run();

 private:
  // Bookkeeping helpers.
  void push(std::int64_t t, ev kind, std::uint32_t who, std::uint32_t epoch = 0) {
    events_.push(event{t, kind, seq_++, who, epoch});
    if (kind != ev::round && kind != ev::slice && kind != ev::plan) ++live_events_;
  }
  // Milli-GPU the job holds while placed: its request, scaled down while an elastic job holds
  // fewer tasks than it has (grow-shrink).
  [[nodiscard]] std::int64_t milli(std::uint32_t j) const {
    const std::uint32_t k = rt_[j].placed_tasks;
    return k == 0 ? out_.jobs[j].milli_gpu : out_.jobs[j].milli_gpu * k / trace_[j].tasks;
  }
  // Work (full-size ms) done in `elapsed` ms, and wall ms to do `work`, at the job's speed: with
  // the speed model its rate; else placed tasks / tasks for an elastic job holding fewer tasks,
  // else 1.
  [[nodiscard]] std::int64_t work_in(std::uint32_t j, std::int64_t elapsed) const {
    if (speed_on_) return speed_work_in(rt_[j].rate, elapsed);
    const std::uint32_t k = rt_[j].placed_tasks;
    return k == 0 ? elapsed : elapsed * k / trace_[j].tasks;
  }
  [[nodiscard]] std::int64_t wall_for(std::uint32_t j, std::int64_t work) const {
    if (speed_on_) return speed_wall_for(rt_[j].rate, work);
    const std::uint32_t k = rt_[j].placed_tasks;
    const std::int64_t n = trace_[j].tasks;
    return k == 0 ? work : (work * n + k - 1) / k;
  }
  [[nodiscard]] static std::int64_t speed_work_in(double rate, std::int64_t elapsed);
  [[nodiscard]] static std::int64_t speed_wall_for(double rate, std::int64_t work);
  // Speed model (engine_speed.cpp). The rate and placement factor of job j on the GPUs the
  // cluster_state gives it, with the running jobs that share its devices.
  [[nodiscard]] std::pair<double, double> speed_of(std::uint32_t j) const;
  // Job j (running since t) reads its rate, registers with the running jobs sharing its devices
  // and re-times them.
  void start_speed(std::uint32_t j, std::int64_t t);
  // Job j stopped running at t: the jobs that shared its devices are re-timed.
  void stop_speed(std::uint32_t j, std::int64_t t);
  // Running job j keeps its GPUs but its rate may have changed: progress so far is booked and its
  // finish (or drawn failure) is rescheduled at the new rate.
  void retime(std::uint32_t j, std::int64_t t);
  // Books `elapsed` ms of running of job j into its outcome (run_ms, ideal_run_ms).
  void book_run(std::uint32_t j, std::int64_t elapsed) {
    out_.jobs[j].run_ms += elapsed;
    out_.jobs[j].ideal_run_ms += static_cast<double>(elapsed) * rt_[j].placement_factor;
  }
  // Schedules the end of job j's current stretch of running from t: its drawn failure, its
  // finish, or an immediate failure when its rate is 0.
  void schedule_end(std::uint32_t j, std::int64_t t);
  // Recomputes placed_tasks of job j from the model (after a bind, grow or partial release).
  void recount_tasks(std::uint32_t j);
  [[nodiscard]] std::int64_t free_milli() const {
    return healthy_milli_ - state_.total_used().milli_gpu;
  }
  [[nodiscard]] job_view view(std::uint32_t j, std::int64_t now) const;
  void advance(std::int64_t t);
  void sample(std::int64_t t);

  result<void> arrive(std::uint32_t j, std::int64_t t);
  void enqueue(std::uint32_t j, std::int64_t t);
  void dequeue(std::uint32_t j, std::int64_t t);
  void run_job(std::uint32_t j, std::int64_t t);
  void stop_progress(std::uint32_t j, std::int64_t t);
  void halt(std::uint32_t j, std::int64_t t);
  void drop_hold(std::uint32_t j);
  result<void> start_evictions(std::uint32_t j, const decision& d, std::int64_t t);
  void end_eviction(std::uint32_t v);
  result<void> evict(std::uint32_t v, std::int64_t t);
  result<void> finish(std::uint32_t j, std::int64_t t);
  result<void> fail(std::uint32_t j, std::int64_t t);
  result<void> terminal(std::uint32_t j, std::int64_t t, job_state s);
  result<void> requeue_preempted(std::uint32_t j, std::int64_t t);
  result<void> commit(std::uint32_t j, const decision& d, std::int64_t t);
  // Applies `d` if the model accepts it; false (nothing changed) otherwise.
  result<bool> try_commit(const decision& d, std::int64_t t);
  result<void> after_apply(const decision& d, std::int64_t t);
  result<bool> try_resume(std::uint32_t w, std::int64_t t);
  result<void> wake_waiters_of(std::uint32_t runner, std::int64_t t);
  result<void> rotate(std::int64_t t);
  result<void> node_failure(std::int64_t t);
  void schedule_node_failure(std::int64_t t);
  result<void> node_repair(std::uint32_t n, std::int64_t t);
  // Applies the placement's planned migrations (placement::plan_migrations); true if any.
  result<bool> migrate(std::int64_t t);
  // Applies the placement's plan (placement::plan) and schedules its next call; true if the
  // plan held anything.
  result<bool> run_plan(std::int64_t t);
  result<void> pass(std::int64_t t, bool preempt);
  result<std::vector<std::uint32_t>> preempt_pass(std::int64_t t);
  result<void> place_pass(std::int64_t t);
  result<bool> try_place(std::uint32_t j, std::int64_t t);

  cluster_state state_;
  const workload::trace& trace_;
  ordering_policy& order_;
  placement_policy& place_;
  sim_params p_;
  sim_observer* observer_;
  workload::split_rng rng_;
  sim_result out_;
  std::vector<job_rt> rt_;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  std::uint64_t live_events_ = 0;
  std::map<std::string, std::uint32_t, std::less<>> tenant_index_;
  std::vector<tenant_usage> usage_;
  std::map<shape_key, std::uint32_t> shape_index_;
  std::vector<std::set<std::pair<order_key, std::uint32_t>>> by_shape_;  // static orderings
  std::vector<std::uint32_t> waiting_;       // dynamic orderings: unordered
  std::vector<std::uint32_t> waiting_pos_;   // position in waiting_, or none
  std::vector<std::uint32_t> running_list_;  // running jobs, unordered
  std::vector<std::uint32_t> running_pos_;   // position in running_list_, or none
  std::set<std::uint32_t> suspended_;
  std::set<std::uint32_t> orphans_;  // suspended jobs in no time-slice pair
  // A waiting job admitted by a preemption round that still could not be placed does not cause
  // preemptions again until some job finishes or fails (release_gen_ moves on).
  std::vector<std::uint64_t> blocked_at_;
  std::uint64_t release_gen_ = 1;
  // Victims of the current pass's preemption round; one that restarts in the same pass (its
  // preemptor could not use its GPUs) is rolled back: no preemption counted, no cost paid.
  std::vector<std::uint32_t> las_victims_;
  std::map<std::uint32_t, std::uint32_t> slice_pairs_;  // suspended waiter -> runner
  std::int64_t healthy_milli_ = 0;
  std::int64_t running_milli_ = 0;
  std::int64_t demand_milli_ = 0;
  std::uint32_t running_ = 0;
  std::uint32_t waiting_count_ = 0;
  std::uint64_t done_ = 0;
  std::int64_t last_t_ = 0;
  std::int64_t next_sample_ = 0;
  std::int64_t sample_ms_ = 60'000;
  std::uint32_t max_node_gpus_ = 0;
  bool dirty_ = false;
  bool slice_scheduled_ = false;
  std::int64_t plan_at_ = -1;       // time of the pending plan event, or -1
  bool failure_scheduled_ = false;  // a node failure event is pending
  std::size_t arrived_ = 0;         // trace jobs that have arrived
  bool speed_on_ = false;           // p_.speed.enabled()
  // Speed model: running jobs sharing a device with each running job that shares one.
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> peers_;
};

}  // namespace hetsched::sim::detail
