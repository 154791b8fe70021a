// SPDX-License-Identifier: MIT
// fgd_replay: the FGD experiment driver. Nodes + ordered arrivals + policy -> the outcome of every
// arrival and the allocation / fragmentation curves over arrived demand.
//
// The reference experiment (FGD, ATC'23, §6) shuffles the pods of a trace with a seed, inflates
// the list to 130% of the cluster's GPUs by sampling copies, then schedules every pod once, in
// order, with no departures; a pod that fails the filter is never retried. After each arrival it
// records the GPU allocation and the fragmentation of the cluster. run_fgd_replay() is that loop;
// shuffle_and_inflate() builds the arrival list from a trace and a seed. Both are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/fgd.hpp>
#include <hetsched/workload/openb.hpp>

namespace hetsched::sim {

/// One arrival: the pod's name and its request (cpu_milli as the scheduler sees it).
struct fgd_arrival {
  std::string name;
  fgd_task task;

  friend bool operator==(const fgd_arrival&, const fgd_arrival&) = default;
};

/// What happened at one arrival, and the cluster's figures right after it.
struct fgd_outcome {
  bool scheduled = false;
  std::uint32_t node = 0;              ///< Node index (meaningful when scheduled).
  std::vector<std::uint32_t> gpus;     ///< Devices taken (ascending for exclusive tasks).
  std::int64_t arrived_gpu_milli = 0;  ///< Σ requested milli-GPU of arrivals so far (this one too).
  std::int64_t used_gpu_milli = 0;     ///< Allocated milli-GPU.
  std::uint32_t used_nodes = 0;        ///< Nodes hosting at least one task.
  frag_breakdown frag;                 ///< Cluster breakdown (milli-GPU).

  /// Returns the fragmentation amount F(M) in milli-GPU.
  [[nodiscard]] double frag_milli() const noexcept { return frag.fragment(); }
  /// Returns 100·F(M)/idle (0 when nothing is idle).
  [[nodiscard]] double frag_ratio_pct() const noexcept;
  /// Returns 100·(Q1+Q2+Q4)/idle (0 when nothing is idle).
  [[nodiscard]] double q124_pct() const noexcept;
};

/// Per integer percent of arrived GPU demand (index = round(100·arrived/capacity)): the mean of
/// the samples whose arrived demand rounds to that percent; an empty percent takes the mean of
/// its neighbours ±1 that have samples (nullopt when none has).
struct fgd_curves {
  std::vector<std::optional<double>> alloc_pct;        ///< 100·used/capacity.
  std::vector<std::optional<double>> frag_amount_pct;  ///< 100·F(M)/capacity.
  std::vector<std::optional<double>> frag_ratio_pct;   ///< 100·F(M)/idle.
};

/// The outcome of a whole replay.
struct fgd_replay_result {
  std::vector<fgd_outcome> outcomes;  ///< One per arrival, in order.
  fgd_curves curves;
  std::size_t failed = 0;  ///< Arrivals that passed no node's filter.
};

/// Replays `arrivals` in order on an idle cluster of `nodes` under `policy` (workload `w` for the
/// FGD score and the fragmentation figures, `seed` for Random). O(arrivals · nodes) filter
/// checks plus the scores (cached by node state under FGD). Errors: bad nodes (see
/// fgd_cluster::make) or an arrival that breaks the fgd_task contract (named by index and name).
[[nodiscard]] result<fgd_replay_result> run_fgd_replay(std::vector<fgd_node_spec> nodes,
                                                       std::span<const fgd_arrival> arrivals,
                                                       const fgd_workload& w, fgd_policy policy,
                                                       std::uint64_t seed = 0);

/// Returns the curves of a list of outcomes for a cluster of `total_gpus` GPUs, up to the
/// largest arrived percent.
[[nodiscard]] fgd_curves make_fgd_curves(std::span<const fgd_outcome> outcomes,
                                         std::int64_t total_gpus);

/// Returns the arrival list of the reference protocol for `trace` (pods in trace order):
/// 1. sort by name, then shuffle (Fisher-Yates with a splitmix64 stream seeded by `seed`);
/// 2. with D the GPU demand of the trace (milli) and T = ratio_percent% of `total_gpus`·1000:
///    - D > T (tune down): remove pods drawn uniformly from the shuffled list until D <= T;
///    - D < T (tune up): append copies named "<name>-tuned-<i>" (i from 0) of pods drawn uniformly
///      with replacement from the shuffled list, until a drawn pod's per-GPU request would take
///      the demand above T (that draw is discarded and ends it). As in the reference, the test
///      uses the per-GPU request while the demand grows by the pod's total, so the last
///      multi-GPU copy may overshoot T by up to (k-1)·1000 milli;
///    - D = T: unchanged.
/// The reference does the same with Go's math/rand, whose stream is not reproduced: the list is a
/// different sample of the same distribution. Errors: total_gpus < 1, ratio_percent < 100, an
/// empty trace, or no pod asking for GPUs.
[[nodiscard]] result<std::vector<fgd_arrival>> shuffle_and_inflate(
    std::span<const fgd_arrival> trace, std::int64_t total_gpus, std::uint64_t seed,
    std::int64_t ratio_percent = 130);

/// Returns the arrivals of openb pods in the given order (names and requests as written).
[[nodiscard]] std::vector<fgd_arrival> fgd_arrivals_from_openb(
    std::span<const workload::openb_pod> pods);

/// Returns the node specs of openb nodes. With a seed the list is shuffled (Fisher-Yates, the
/// splitmix64 stream of seed ^ 0x6E6F646573, "nodes") as the reference shuffles its node list;
/// either way each name gets the "NNNN-" prefix of its position, so that the smallest-name
/// tie-break follows that order.
[[nodiscard]] std::vector<fgd_node_spec> fgd_nodes_from_openb(
    std::span<const workload::openb_node> nodes, std::optional<std::uint64_t> seed);

/// Returns the target workload of an original (uninflated) trace: make_fgd_workload() of its
/// tasks, so the weights' total is the trace's size as in the reference.
[[nodiscard]] result<fgd_workload> fgd_workload_of(std::span<const fgd_arrival> trace,
                                                   int popularity_pct = 95);

/// What a recorded replay (vector family fgd_replay/1) says happened at one arrival.
struct fgd_replay_expect {
  bool scheduled = false;
  std::string node;                               ///< Node name ("" when failed).
  std::vector<std::uint32_t> gpus;                ///< Sorted.
  std::optional<std::int64_t> arrived_gpu_milli;  ///< When the record has it.
  std::int64_t used_gpu_milli = 0;
  std::int64_t used_nodes = 0;
  double frag_milli = 0;
  double frag_ratio_pct = 0;
  double q124_pct = 0;
};

/// A parsed fgd_replay/1 document (../shared/vectors/fgd): policy, seed (0 when absent), nodes,
/// target workload ("typical_pods"), arrivals with their records, tolerances.
struct fgd_replay_vector {
  fgd_policy policy = fgd_policy::fgd;
  std::uint64_t seed = 0;
  std::vector<fgd_node_spec> nodes;
  fgd_workload workload;
  std::vector<fgd_arrival> arrivals;
  std::vector<fgd_replay_expect> expected;  ///< One per arrival.
  double tol_frag_milli = 0.05;             ///< |frag_milli| tolerance.
  double tol_pct = 0.01;                    ///< frag_ratio_pct / q124_pct tolerance.
};

/// Returns the vector held by the JSON text `json_text`. The class weights use total = the original
/// trace size: the document's "total_pods" when present, else the number of arrivals that are not
/// inflation copies (names without "-tuned-"). Arrival CPU requests are used as written. An
/// optional "tolerances" object (keys frag_milli, pct) overrides the tolerances. Errors: the JSON
/// reader's
/// ("line L, column C: ..."), or invalid_argument naming the item.
[[nodiscard]] result<fgd_replay_vector> parse_fgd_replay_vector(std::string_view json_text);

/// Returns what differs between an outcome and its record (status, node name, GPU set,
/// arrived_gpu_milli when recorded, used_gpu_milli and used_nodes exactly; frag_milli,
/// frag_ratio_pct and q124_pct within the tolerances), or nullopt when they agree.
[[nodiscard]] std::optional<std::string> compare_fgd_outcome(const fgd_outcome& o,
                                                             const fgd_replay_expect& x,
                                                             std::span<const fgd_node_spec> nodes,
                                                             double tol_frag_milli, double tol_pct);

}  // namespace hetsched::sim
