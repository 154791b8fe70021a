// SPDX-License-Identifier: MIT
// migration_planner: Gandiva's introspective migration as a pure planner that returns an ordered
// list of moves (with expected gain and cost) and the decision that carries them out.
//
// Gandiva (Xiao et al., OSDI'18, §3.3 and §4) migrates jobs for two reasons: to bring the tasks
// of a gang onto one server (locality) and, when GPUs free up, to defragment: jobs move from the
// server with more free GPUs to one with fewer, so servers empty out and larger jobs find whole
// servers. Defragmentation repeats until the free GPUs on non-idle servers fall below a threshold
// (3/4 of a server by default) or no job benefits. The planner only reads the cluster state; the
// caller applies to_decision(plan) (which passes check_decision) when it wants the moves done.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/gandiva_devices.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Tunables of migration_planner::plan().
struct migration_params {
  /// Defragmentation runs while (free GPUs on non-idle servers) * threshold_den >=
  /// threshold_num * (GPUs of the largest server); default 3/4 of a server. Both > 0.
  std::uint32_t threshold_num = 3;
  std::uint32_t threshold_den = 4;
  /// Checkpoint plus restore time of one move, seconds (the moved job makes no progress).
  std::int64_t checkpoint_restore_s = 30;
  /// Plans gang consolidation moves (stage 1).
  bool consolidate_gangs = true;
  /// Plans defragmentation moves (stage 2).
  bool defragment = true;
  /// Moves only preemptible jobs.
  bool require_preemptible = false;
  /// At most this many moves (0 = no limit). A server is evacuated only if all its moves fit.
  std::uint32_t max_moves = 0;

  friend bool operator==(const migration_params&, const migration_params&) = default;
};

/// Why a move was planned.
enum class move_kind : std::uint8_t {
  consolidate,  ///< Brings every task of a job spread over servers onto one server.
  defragment,   ///< Part of emptying a server into servers with fewer free GPUs.
};

/// Returns "consolidate" or "defragment".
[[nodiscard]] std::string_view to_string(move_kind k) noexcept;

/// One planned move of one job, with its expected gain and cost.
struct migration_move {
  job_id job;
  move_kind kind = move_kind::defragment;
  node_id target;                      ///< The server the moved tasks go to.
  std::vector<task_placement> from;    ///< Old placements of the moved tasks, in task order.
  std::vector<task_placement> to;      ///< New placements of the same tasks, in task order.
  std::uint32_t gpus = 0;              ///< GPUs moved (sum over the moved tasks).
  std::uint32_t span_before = 0;       ///< Servers the job's tasks occupied before the move.
  std::uint32_t span_after = 0;        ///< Servers they occupy after it.
  std::uint32_t idle_server_gpus = 0;  ///< Usable GPUs of servers this move leaves idle.
  std::int64_t cost_s = 0;             ///< params.checkpoint_restore_s.
  std::int64_t cost_gpu_s = 0;         ///< cost_s times every GPU the job holds (the gang pauses).

  friend bool operator==(const migration_move&, const migration_move&) = default;
};

/// Why planning stopped.
enum class migration_stop : std::uint8_t {
  below_threshold,  ///< Free GPUs on non-idle servers fell below the threshold.
  no_benefit,       ///< No further server can be emptied (or defragmentation is off).
  move_limit,       ///< params.max_moves reached.
};

/// Returns "below_threshold", "no_benefit" or "move_limit".
[[nodiscard]] std::string_view to_string(migration_stop s) noexcept;

/// The ordered moves and what they achieve.
struct migration_plan {
  std::vector<migration_move> moves;    ///< In the order they were planned.
  std::uint32_t fragmented_before = 0;  ///< Free usable GPUs on non-idle servers, before.
  std::uint32_t fragmented_after = 0;   ///< The same after every move.
  std::uint32_t server_gpus = 0;        ///< GPUs of the largest server (threshold unit).
  std::uint32_t servers_emptied = 0;    ///< Servers the plan leaves idle.
  std::int64_t total_cost_gpu_s = 0;    ///< Sum of cost_gpu_s.
  migration_stop stop = migration_stop::no_benefit;

  friend bool operator==(const migration_plan&, const migration_plan&) = default;
};

/// Returns the decision that performs `plan`: one migration per move, in plan order, listing
/// the moved tasks' new placements. It passes check_decision on the state the plan was made from.
[[nodiscard]] decision to_decision(const migration_plan& plan);

/// Gandiva's migration planner. @see Gandiva: Introspective Cluster Scheduling for Deep
/// Learning (Xiao et al., OSDI'18).
///
/// Terms. A device is *usable* if it and its node are healthy; *free* if it is usable and no task
/// holds any of it (in the state, updated by the moves planned so far). A server is *non-idle*
/// if a task holds part of one of its devices. The *fragmented* GPUs are the free GPUs of
/// non-idle healthy servers. A job is *movable* if it is scheduled or running, preemptible when
/// params.require_preemptible, every role asks for whole GPUs (count >= 1, 1000 milli), every
/// task is placed, and no earlier move of the plan moved it (a job moves at most once per plan,
/// so each job appears once in the decision).
///
/// Stage 1, consolidation (params.consolidate_gangs), jobs in id order: a movable job whose
/// tasks span several servers moves the tasks not on the target to one healthy target server
/// that can hold them (free GPUs of the requested type and GPU memory, room for CPU, memory and
/// extended resources). Target order: fewest GPUs to move (the server holding most of the job's
/// GPUs first), then fewest free GPUs, then lower node id. A job no server can hold stays put.
///
/// Stage 2, defragmentation (params.defragment). While the fragmented GPUs reach the threshold:
/// take the healthy non-idle server with the most free GPUs f > 0 (then lower node id) not tried
/// before; if every job holding GPUs on it is movable, move each of them (most GPUs on it first,
/// then lower job id) with all its tasks on that server to one non-idle healthy server other
/// than the source with f' free GPUs, g <= f' < f for the job's g GPUs there (best fit: fewest
/// free GPUs, then lower node id), re-evaluated after each move. If every job finds a target
/// (and the move limit allows all of them) the moves are kept and the server becomes idle;
/// otherwise none of them is and the server is not tried again. The loop stops when no untried
/// source remains (no_benefit), below the threshold (below_threshold) or at the move limit.
///
/// Devices on a target: per moved task in task order, among the target's free devices of the
/// role's type and GPU memory, pick_gpus (the packer's lexmax when the node has a topology, else
/// the lowest local indices). Every share is {device, 1000, role.gpu.memory_mib}.
///
/// Gain and cost per move: GPUs moved, servers spanned before and after, usable GPUs of servers
/// the move leaves idle (the last move of an evacuation; a consolidation that empties a server),
/// cost_s = checkpoint_restore_s and cost_gpu_s = cost_s * the job's GPUs.
///
/// Cost: O((nodes + devices + jobs) log nodes) to build the working model, then O(log nodes)
/// per server tried and per move on clusters of one GPU type (each target search stops at the
/// first server that fits).
class migration_planner {
 public:
  /// Makes a planner for `description` without topologies (lowest free indices win).
  explicit migration_planner(const cluster& description);
  /// Makes a planner with the node topologies of `topology` (node ids as to_cluster() gives).
  migration_planner(const cluster& description, const cluster_topology& topology);

  /// Returns the plan for `state`. Pure and deterministic. Errors: invalid_argument if the state
  /// describes a cluster of another size, a threshold term is 0 or checkpoint_restore_s < 0.
  [[nodiscard]] result<migration_plan> plan(const cluster_state& state,
                                            const migration_params& params = {}) const;

 private:
  node_score_table scores_;
  std::size_t devices_ = 0;
};

}  // namespace hetsched
