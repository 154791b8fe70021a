// SPDX-License-Identifier: MIT
// migration_trigger: when the simulator's migrating placements run Gandiva's migration planner.
#include <algorithm>
#include <vector>

#include <hetsched/sim/placement.hpp>

namespace hetsched::sim {

migration_trigger::migration_trigger(const cluster& description, const cluster_topology* topology,
                                     sim_migration_params params)
    : planner_(topology != nullptr ? migration_planner(description, *topology)
                                   : migration_planner(description)),
      params_(params) {
  for (const node_info& n : description.nodes())
    server_gpus_ = std::max(server_gpus_, n.device_count);
}

void migration_trigger::placed(job_id job, const decision& d) {
  if (d.binds.empty()) waiting_.insert(job.value());
}

void migration_trigger::committed(const cluster_state& after, const decision& d) {
  for (const binding& b : d.binds) {
    waiting_.erase(b.job.value());
    examine(after, b.job);
  }
  for (const migration& m : d.migrations) examine(after, m.job);
}

void migration_trigger::released(job_id job) {
  freed_ = true;
  waiting_.erase(job.value());
  spread_.erase(job.value());
}

void migration_trigger::rebuilt(const cluster_state& state) {
  freed_ = true;
  spread_.clear();
  std::set<std::uint32_t> still;
  for (const auto& [id, rec] : state.jobs()) {
    if (rec.status.state == job_state::queued && waiting_.contains(id.value()))
      still.insert(id.value());
    examine(state, id);
  }
  waiting_ = std::move(still);
}

void migration_trigger::examine(const cluster_state& state, job_id job) {
  spread_.erase(job.value());
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return;
  const job_state s = rec->status.state;
  if (s != job_state::running && s != job_state::scheduled) return;
  std::vector<std::uint32_t> nodes;
  std::uint64_t gpus = 0;
  for (const task_placement& p : rec->placement) {
    if (!p.node.valid()) continue;
    nodes.push_back(p.node.value());
    gpus += p.devices.size();
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (nodes.size() > 1 && gpus <= server_gpus_) spread_.insert(job.value());
}

result<decision> migration_trigger::plan(const cluster_state& state, std::int64_t now_ms) {
  if (!freed_) return decision{};
  if (planned_ && now_ms - last_plan_ms_ < params_.interval_ms) return decision{};
  migration_params p = params_.planner;
  p.defragment = p.defragment && !waiting_.empty();
  p.consolidate_gangs = p.consolidate_gangs && !spread_.empty();
  if (!p.defragment && !p.consolidate_gangs) return decision{};
  freed_ = false;
  planned_ = true;
  last_plan_ms_ = now_ms;
  auto plan = planner_.plan(state, p);
  if (!plan) return std::move(plan).error();
  return to_decision(*plan);
}

}  // namespace hetsched::sim
