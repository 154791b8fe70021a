// SPDX-License-Identifier: MIT
// migration_trigger (when migrating placements run Gandiva's migration planner) and the migration
// parameters of the packer and gandiva placements.
#include <algorithm>
#include <charconv>
#include <vector>

#include <hetsched/policies/migrating_placement.hpp>

namespace hetsched {

migration_trigger::migration_trigger(const cluster& description, const cluster_topology* topology,
                                     migration_trigger_params params)
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

std::optional<result<void>> parse_migration_param(std::string_view plugin, std::string_view key,
                                                  std::string_view value, migration_options& opt) {
  migration_params& mp = opt.params.planner;
  if (key == "migrate") {
    if (value == "0") {
      opt.on = false;
    } else if (value == "1") {
      opt.on = true;
      mp.consolidate_gangs = true;
      mp.defragment = true;
    } else if (value == "consolidate" || value == "defragment") {
      opt.on = true;
      mp.consolidate_gangs = value == "consolidate";
      mp.defragment = value == "defragment";
    } else {
      return result<void>(make_error(errc::invalid_argument,
                                     "{}: migrate={} (expected 0, 1, consolidate or defragment)",
                                     plugin, value));
    }
    return result<void>();
  }
  if (key == "migrate_threshold") {
    const auto slash = value.find('/');
    std::uint32_t num = 0;
    std::uint32_t den = 0;
    bool ok = slash != std::string_view::npos;
    if (ok) {
      const std::string_view a = value.substr(0, slash);
      const std::string_view b = value.substr(slash + 1);
      const auto ra = std::from_chars(a.data(), a.data() + a.size(), num);
      const auto rb = std::from_chars(b.data(), b.data() + b.size(), den);
      ok = ra.ec == std::errc() && ra.ptr == a.data() + a.size() && rb.ec == std::errc() &&
           rb.ptr == b.data() + b.size() && num > 0 && den > 0;
    }
    if (!ok)
      return result<void>(
          make_error(errc::invalid_argument,
                     "{}: migrate_threshold={} (expected N/D with integers N, D > 0, e.g. 3/4)",
                     plugin, value));
    mp.threshold_num = num;
    mp.threshold_den = den;
    opt.needs_on = key;
    return result<void>();
  }
  if (key == "migrate_interval_s") {
    auto v = parse_param_uint(plugin, key, value);
    if (!v) return result<void>(std::move(v).error());
    opt.params.interval_ms = std::int64_t{*v} * 1000;
    opt.needs_on = key;
    return result<void>();
  }
  return std::nullopt;
}

}  // namespace hetsched
