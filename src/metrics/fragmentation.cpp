// SPDX-License-Identifier: MIT
// state_fragmentation() and fragmentation_series.
#include <hetsched/metrics/fragmentation.hpp>

namespace hetsched::metrics {
namespace {

// Fills `gpu_left` with node n's free milli-GPU per device (0 for an unhealthy device); returns
// false when the node is down or has no idle GPU capacity (it contributes nothing).
bool node_inputs(const cluster_state& state, node_id n, std::vector<std::int64_t>& gpu_left) {
  const cluster& c = state.cluster();
  const node_info& info = c.node(n);
  gpu_left.clear();
  if (info.device_count == 0 || state.node_health(n) != health::healthy) return false;
  bool any = false;
  for (std::uint32_t i = 0; i < info.device_count; ++i) {
    const device_id d(info.first_device.value() + i);
    const std::int64_t free =
        state.device_health(d) == health::healthy ? state.device_free(d).milli_gpu : 0;
    gpu_left.push_back(free);
    any = any || free > 0;
  }
  return any;
}

}  // namespace

frag_breakdown state_fragmentation(const cluster_state& state, const fgd_workload& w) {
  frag_breakdown out;
  std::vector<std::int64_t> gpu_left;
  const cluster& c = state.cluster();
  for (std::size_t i = 0; i < c.node_count(); ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    if (!node_inputs(state, n, gpu_left)) continue;
    out +=
        node_fragmentation(state.node_free(n).milli_cpu, gpu_left, c.devices(n)[0].type.name(), w);
  }
  return out;
}

void fragmentation_series::record(std::int64_t time_ms, const cluster_state& state) {
  const cluster& c = state.cluster();
  if (idle_node_frag_.size() != c.node_count()) {
    idle_node_frag_.assign(c.node_count(), frag_breakdown{});
    idle_node_known_.assign(c.node_count(), false);
  }
  fragmentation_sample s;
  s.time_ms = time_ms;
  for (std::size_t i = 0; i < c.node_count(); ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    if (!node_inputs(state, n, gpu_left_)) continue;
    double idle = 0;
    for (const std::int64_t g : gpu_left_) idle += static_cast<double>(g);
    s.idle_milli_gpu += idle;
    const bool untouched =
        state.node_used(n).is_zero() && idle == static_cast<double>(gpu_left_.size()) * 1000.0;
    if (!untouched || !idle_node_known_[i]) {
      const frag_breakdown b = node_fragmentation(state.node_free(n).milli_cpu, gpu_left_,
                                                  c.devices(n)[0].type.name(), workload_);
      if (!untouched) {
        s.fragmented_milli_gpu += b.fragment();
        s.breakdown += b;
        continue;
      }
      idle_node_frag_[i] = b;
      idle_node_known_[i] = true;
    }
    s.fragmented_milli_gpu += idle_node_frag_[i].fragment();
    s.breakdown += idle_node_frag_[i];
  }
  samples_.push_back(s);
}

}  // namespace hetsched::metrics
