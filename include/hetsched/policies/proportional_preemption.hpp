// SPDX-License-Identifier: MIT
// YARN's ProportionalCapacityPreemptionPolicy (PCPP) as a pure, exact planner.
//
// plan_proportional_preemption() takes a snapshot of a queue hierarchy (guaranteed and maximum
// capacity, pending demand, per-queue disable flag, the running containers grouped into jobs) and
// returns the ideal assignment of every queue (YARN's water-filling, computed top-down per level),
// how much each leaf should give back this round (dead zone, per-round cap, natural termination
// factor) and an ordered list of victim containers with reasons (YARN's FifoCandidatesSelector,
// plus a minimum runtime before preemption and whole gangs taken together). Containers already
// chosen by an earlier round and not yet terminated ("in flight") are deducted from the need and
// never chosen again, so a second round does not pick new victims for the same need.
// Arithmetic is exact: amounts are int64 vectors of up to 8 dimensions compared as YARN's
// DominantResourceCalculator does (with one dimension: its DefaultResourceCalculator), ratios are
// fractions, and YARN's float products are rational products rounded as YARN rounds them
// (docs/proportional_preemption.md lists each place). Deterministic; bad input is an error.
//
// @see Hadoop YARN CapacityScheduler: ProportionalCapacityPreemptionPolicy,
//      PreemptableResourceCalculator, TempQueuePerPartition, FifoCandidatesSelector.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <hetsched/model/result.hpp>

namespace hetsched {

/// The most resource dimensions a PCPP snapshot may use.
inline constexpr std::size_t pcpp_max_dimensions = 8;

/// An amount per dimension (only the snapshot's first `dimensions` entries are used; the rest
/// must be zero).
using pcpp_vector = std::array<std::int64_t, pcpp_max_dimensions>;

/// Parent index of a top-level queue (a child of the implicit root, whose capacity is the
/// cluster).
inline constexpr std::size_t pcpp_root = std::numeric_limits<std::size_t>::max();

/// An exact non-negative ratio num/den (YARN's float parameters, e.g. 0.1 = {1, 10}).
struct pcpp_ratio {
  std::int64_t num = 0;
  std::int64_t den = 1;

  friend bool operator==(const pcpp_ratio&, const pcpp_ratio&) = default;
};

/// A queue's preemption switch. YARN's disable_preemption is inherited by children unless a
/// child sets it explicitly.
enum class pcpp_preemption : unsigned char {
  inherit,   ///< As the parent (top-level queues: as pcpp_snapshot::root_preemption).
  disabled,  ///< Containers of this subtree are never victims; its extra is untouchable.
  enabled,   ///< Preemptable even under a disabled parent.
};

/// One queue. Parents come before their children in the snapshot.
struct pcpp_queue {
  std::string name;                ///< For messages and reports.
  std::size_t parent = pcpp_root;  ///< Index of the parent queue (< own index) or pcpp_root.
  pcpp_vector guaranteed{};        ///< Absolute guaranteed capacity.
  pcpp_vector maximum{};           ///< Absolute maximum capacity.
  pcpp_vector pending{};           ///< Leaves only (parents sum their children): unmet demand.
  pcpp_preemption preemption = pcpp_preemption::inherit;
};

/// One running job (YARN application) in a leaf queue.
struct pcpp_job {
  std::uint64_t id = 0;          ///< Tie-break: larger ids are preempted first.
  std::size_t queue = 0;         ///< Index of its leaf queue.
  std::int32_t priority = 0;     ///< Higher = more important; lower-priority jobs lose first.
  std::int64_t submit_time = 0;  ///< Later-submitted jobs lose first.
  bool gang = false;             ///< All its containers are preempted together or not at all.
};

/// One running container (task) of a job. A queue's `used` is the sum of its containers.
struct pcpp_container {
  std::uint64_t id = 0;         ///< Tie-break: larger ids (allocated later) are preempted first.
  std::size_t job = 0;          ///< Index of its job.
  std::int32_t priority = 0;    ///< Higher = more important; within a job, lower goes first.
  std::int64_t start_time = 0;  ///< Newer containers go first; also the minimum-runtime clock.
  pcpp_vector size{};           ///< Resources it holds.
  bool am = false;              ///< Application master: considered only after all others.
  bool in_flight = false;       ///< Already chosen as a victim, not terminated yet.
};

/// The input of one planning round.
struct pcpp_snapshot {
  std::size_t dimensions = 1;  ///< 1..pcpp_max_dimensions.
  pcpp_vector cluster{};       ///< Total capacity (the root's guarantee); every used entry > 0.
  std::vector<pcpp_queue> queues;
  std::vector<pcpp_job> jobs;
  std::vector<pcpp_container> containers;
  /// The root queue's switch, inherited by top-level queues that inherit (YARN's
  /// root.disable_preemption): disabled makes every queue not overriding it unpreemptable;
  /// inherit and enabled leave preemption on (YARN's default).
  pcpp_preemption root_preemption = pcpp_preemption::inherit;
};

/// How YARN's multiplyAndNormalizeUp rounds (offers during water-filling, natural termination).
enum class pcpp_rounding : unsigned char {
  up,       ///< DominantResourceCalculator: ceil(x * f).
  nearest,  ///< DefaultResourceCalculator: (long)(x * f + 0.5).
};

/// Parameters (YARN names in parentheses; defaults are YARN's product defaults).
struct pcpp_params {
  /// Dead zone: a leaf acts only if used > guaranteed * (1 + this) (max_ignored_over_capacity).
  pcpp_ratio max_ignored_over_capacity{1, 10};
  /// Fraction of a leaf's to-be-preempted taken per round (natural_termination_factor).
  pcpp_ratio natural_termination_factor{2, 10};
  /// Per-round cap as a fraction of the cluster (total_preemption_per_round).
  pcpp_ratio total_preemption_per_round{1, 10};
  /// A unit (container, or whole gang) younger than this (now - start_time < min_runtime) is
  /// never a victim. 0 disables the protection.
  std::int64_t min_runtime = 0;
  std::int64_t now = 0;  ///< The current time, in the unit of start_time.
  pcpp_rounding rounding = pcpp_rounding::up;
};

/// What the planner computed for one queue (parents included).
struct pcpp_queue_plan {
  pcpp_vector used{};       ///< Sum of its containers (parents: of their children).
  pcpp_vector pending{};    ///< As given (parents: sum of their children).
  pcpp_vector in_flight{};  ///< Held by in-flight containers (parents: sum).
  pcpp_vector ideal{};      ///< Ideal assignment (idealAssigned).
  pcpp_vector
      to_be_preempted{};  ///< used - in_flight - max(min(used+pending, guar), ideal), scaled.
  /// Leaves: what this round tries to obtain (dead zone, natural termination); else zero.
  pcpp_vector to_obtain{};
  pcpp_vector selected{};            ///< Held by the new victims of this round (leaves).
  bool preemption_disabled = false;  ///< After inheritance.
  bool leaf = false;
};

/// Why a container is a victim.
enum class pcpp_victim_reason : unsigned char {
  over_ideal,     ///< Its leaf holds more than its ideal assignment (regular pass).
  over_ideal_am,  ///< Same, taken in the last pass over application-master units.
  gang_member,    ///< Taken with the previous victim because they belong to one gang.
};

/// One victim container.
struct pcpp_victim {
  std::size_t container = 0;  ///< Index in the snapshot.
  std::size_t job = 0;
  std::size_t queue = 0;
  pcpp_victim_reason reason = pcpp_victim_reason::over_ideal;

  friend bool operator==(const pcpp_victim&, const pcpp_victim&) = default;
};

/// The outcome of one round.
struct pcpp_plan {
  std::vector<pcpp_queue_plan> queues;  ///< Indexed as the snapshot's queues.
  pcpp_vector root_ideal{};             ///< The cluster.
  pcpp_vector preemption_allowed{};     ///< Per-round cap: floor(cluster * per_round).
  std::vector<pcpp_victim> victims;     ///< In selection order.
};

/// Returns the plan of one PCPP round over `snapshot`.
/// Errors (invalid_argument / out_of_range, naming the item): dimensions outside 1..8, a zero or
/// negative cluster entry, amounts outside 0..2^40 (sums of container sizes per dimension too),
/// nonzero entries beyond `dimensions`, a parent index not below its child, pending on a parent,
/// a queue's guaranteed above its maximum (YARN: maximum-capacity >= capacity), the guarantees
/// of a parent's children above its own guarantee or those of the top-level queues above the
/// cluster (sums below are allowed), a job in a non-leaf or missing queue, a container of a
/// missing job, ratios with den <= 0 or num < 0, a negative min_runtime. Containers using more
/// than the cluster are accepted (the cluster shrank under them, e.g. a node failed): as in
/// YARN, the water-filling starts with nothing unassigned and queues above their guarantee are
/// brought back towards it, so the plan frees the excess too. Complexity: O(C + J) for C containers
/// and J jobs, plus the water-filling (O(Q) per pass over Q siblings), plus O(log J) per job
/// reached and a sort of its containers: only jobs of leaves with something to obtain are reached,
/// lazily. Tie-breaks: equally underserved queues are served in snapshot order; leaves are visited
/// in snapshot order; jobs by (priority asc, submit_time desc, id desc, index desc); containers of
/// a job by (priority asc, start_time desc, id desc, index desc); AM units after all others of the
/// leaf, in the same order. A gang is one unit at its job's position, with the latest start time
/// of its containers and AM status if any container is an AM; a gang with any in-flight container
/// is in flight as a whole.
[[nodiscard]] result<pcpp_plan> plan_proportional_preemption(const pcpp_snapshot& snapshot,
                                                             const pcpp_params& params);

}  // namespace hetsched
