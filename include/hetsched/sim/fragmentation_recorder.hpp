// SPDX-License-Identifier: MIT
// FGD fragmentation of a simulated cluster over time: the target workload of a trace, and a
// simulator observer that records metrics::state_fragmentation() at every time sample
// (metrics/fragmentation.hpp has the measure and the series).
#pragma once

#include <cstdint>
#include <vector>

#include <hetsched/metrics/fragmentation.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/fgd.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::sim {

/// Returns the fgd_task of each task of `trace` (CPU and memory per task, per-GPU milli, GPU
/// count, gpu_type as the allowed models), jobs in trace order. O(tasks).
[[nodiscard]] std::vector<fgd_task> trace_fgd_tasks(const workload::trace& trace);

/// Returns the FGD target workload of `trace`: make_fgd_workload(trace_fgd_tasks(trace),
/// popularity_pct). Errors: those of make_fgd_workload (an empty trace, a bad percentage).
[[nodiscard]] result<fgd_workload> trace_fgd_workload(const workload::trace& trace,
                                                      int popularity_pct = 95);

/// A simulator observer recording the fragmentation at every time sample (one entry per
/// sim_result::series entry, same times; metrics::fragmentation_series) and forwarding progress to
/// `forward` when given.
class fragmentation_recorder final : public sim_observer {
 public:
  explicit fragmentation_recorder(fgd_workload w, sim_observer* forward = nullptr);

  void on_progress(std::uint64_t done, std::uint64_t total, std::int64_t now_ms) override;
  void on_sample(std::int64_t time_ms, const cluster_state& state) override;

  /// Returns the samples recorded so far, in time order.
  [[nodiscard]] const std::vector<metrics::fragmentation_sample>& samples() const noexcept {
    return series_.samples();
  }

 private:
  metrics::fragmentation_series series_;
  sim_observer* forward_ = nullptr;
};

}  // namespace hetsched::sim
