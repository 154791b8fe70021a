// SPDX-License-Identifier: MIT
// FGD fragmentation of a cluster over time: the fragmentation of a cluster_state under a target
// workload, and a series that records it at each sample (the simulator's observer that feeds it
// from a run is hetsched::sim::fragmentation_recorder).
//
// The measure is FGD's (ATC'23 §4, policies/fgd.hpp): a node's idle GPU capacity weighted by the
// probability that a task of the target workload (the trace's task classes, 95% popularity)
// cannot use it; the cluster's is the sum over nodes. hetsched-sim writes it next to allocation in
// its time series and plots both against arrived demand as the FGD paper does.
// @see Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent", USENIX ATC'23.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/fgd.hpp>

namespace hetsched::metrics {

/// Returns the FGD breakdown of `state` under `w`: the sum over healthy nodes of
/// node_fragmentation(free milli-CPU, free milli-GPU of each device (0 for an unhealthy one), the
/// model of the node's first device). A node that is down, or whose GPUs are all taken, counts
/// nothing: it has no idle GPU capacity. O(nodes x classes x GPUs per node).
[[nodiscard]] frag_breakdown state_fragmentation(const cluster_state& state, const fgd_workload& w);

/// The fragmentation at one time sample (milli-GPU).
struct fragmentation_sample {
  std::int64_t time_ms = 0;
  double fragmented_milli_gpu = 0;  ///< F: idle capacity the target workload cannot use.
  double idle_milli_gpu = 0;        ///< Idle capacity of healthy devices on healthy nodes.
  /// F and idle by bucket (FGD Fig. 5: Q1..Q4, XL, XR, NoAccess), summed over the nodes as
  /// state_fragmentation() does: fragment() and idle() equal the two fields above up to
  /// rounding (those sum each node's total; these sum each bucket).
  frag_breakdown breakdown;

  /// Returns 100 x F / idle, 0 when nothing is idle.
  [[nodiscard]] double ratio_pct() const noexcept {
    return idle_milli_gpu > 0 ? 100.0 * fragmented_milli_gpu / idle_milli_gpu : 0.0;
  }

  friend bool operator==(const fragmentation_sample&, const fragmentation_sample&) = default;
};

/// The fragmentation of one cluster at successive samples: record() appends
/// state_fragmentation()'s figures for a state. The breakdown of a node with nothing allocated is
/// computed once and reused (the cluster's nodes must not change between calls).
class fragmentation_series {
 public:
  explicit fragmentation_series(fgd_workload w) : workload_(std::move(w)) {}

  /// Appends the sample of `state` at `time_ms`. O(nodes x classes x GPUs per node) for the
  /// nodes with something allocated, O(nodes) for the others once seen.
  void record(std::int64_t time_ms, const cluster_state& state);

  /// Returns the samples recorded so far, in the order recorded.
  [[nodiscard]] const std::vector<fragmentation_sample>& samples() const noexcept {
    return samples_;
  }

 private:
  fgd_workload workload_;
  std::vector<fragmentation_sample> samples_;
  std::vector<frag_breakdown> idle_node_frag_;  // per node with nothing allocated
  std::vector<bool> idle_node_known_;           // idle_node_frag_[i] is computed
  std::vector<std::int64_t> gpu_left_;          // scratch
};

}  // namespace hetsched::metrics
