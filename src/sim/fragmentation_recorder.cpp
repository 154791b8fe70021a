// SPDX-License-Identifier: MIT
// trace_fgd_tasks(), trace_fgd_workload() and fragmentation_recorder.
#include <utility>

#include <hetsched/sim/fragmentation_recorder.hpp>

namespace hetsched::sim {

std::vector<fgd_task> trace_fgd_tasks(const workload::trace& trace) {
  std::vector<fgd_task> tasks;
  for (const workload::trace_job& j : trace) {
    fgd_task t;
    t.cpu_milli = j.cpu_milli_per_task;
    t.memory_mib = j.memory_mib_per_task;
    t.num_gpu = j.gpus_per_task;
    t.gpu_milli = j.gpus_per_task > 0 ? j.gpu_milli_per_task / j.gpus_per_task : 0;
    t.gpu_spec = j.gpu_type;
    for (std::uint32_t k = 0; k < j.tasks; ++k) tasks.push_back(t);
  }
  return tasks;
}

result<fgd_workload> trace_fgd_workload(const workload::trace& trace, int popularity_pct) {
  return make_fgd_workload(trace_fgd_tasks(trace), popularity_pct);
}

fragmentation_recorder::fragmentation_recorder(fgd_workload w, sim_observer* forward)
    : series_(std::move(w)), forward_(forward) {
  if (forward_ != nullptr) progress_every = forward_->progress_every;
}

void fragmentation_recorder::on_progress(std::uint64_t done, std::uint64_t total,
                                         std::int64_t now_ms) {
  if (forward_ != nullptr) forward_->on_progress(done, total, now_ms);
}

void fragmentation_recorder::on_sample(std::int64_t time_ms, const cluster_state& state) {
  series_.record(time_ms, state);
}

}  // namespace hetsched::sim
