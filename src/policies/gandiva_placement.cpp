// SPDX-License-Identifier: MIT
// gandiva_placement, its planners (time-slicing, grow-shrink, packing) and its registry factory
// (with Gandiva's migration).
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include <hetsched/model/assert.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/policies/gandiva_packing.hpp>
#include <hetsched/policies/gandiva_placement.hpp>
#include <hetsched/policies/gandiva_time_slicing.hpp>
#include <hetsched/policies/migrating_placement.hpp>

namespace hetsched {

gandiva_placement::gandiva_placement(const cluster& description, const cluster_topology* topology,
                                     gandiva_params params, gandiva_plan_options options)
    : gandiva_(topology != nullptr ? gandiva_reactive(description, *topology, params)
                                   : gandiva_reactive(description, params)),
      packer_(topology != nullptr ? indexed_packer(description, *topology)
                                  : indexed_packer(description)),
      grow_(topology != nullptr ? grow_shrink_planner(description, *topology)
                                : grow_shrink_planner(description)),
      options_(options) {}

result<decision> gandiva_placement::place(const cluster_state& state, job_id job) {
  auto r = gandiva_.place(state, job);
  if (!r) return r;
  if (r->binds.empty() && r->deferrals.size() == 1 &&
      r->deferrals.front().reason == defer_reason::topology_unsatisfiable)
    return packer_.place(state, job);
  return r;
}

void gandiva_placement::stopped(job_id job) {
  const auto it = accounts_.find(job);
  if (it == accounts_.end() || !it->second.running) return;
  it->second.attained_ms += now_ms_ - it->second.since_ms;
  it->second.since_ms = now_ms_;
  it->second.running = false;
}

void gandiva_placement::commit(const cluster_state& after, const decision& d) {
  // The engine commits only what apply() accepted on a state of this cluster.
  [[maybe_unused]] const result<void> committed = gandiva_.commit(d);
  HETSCHED_ASSERT(committed, "gandiva_placement: a decision apply() accepted was refused");
  packer_.commit(after, d);
  if (!options_.slicing) return;
  for (const preemption& p : d.preemptions) stopped(p.job);
  for (const suspension& s : d.suspensions) stopped(s.job);
  const auto started = [&](job_id job) {
    account& a = accounts_[job];
    if (a.running) return;  // a grow: more tasks of a running job
    a.since_ms = now_ms_;
    a.running = true;
  };
  for (const resumption& r : d.resumes) started(r.job);
  for (const binding& b : d.binds) started(b.job);
}

void gandiva_placement::release(const cluster_state& after, job_id job) {
  gandiva_.release(job);
  packer_.release(after, job);
  accounts_.erase(job);
}

void gandiva_placement::rebuild(const cluster_state& state) {
  [[maybe_unused]] const result<void> rebuilt = gandiva_.rebuild(state);
  HETSCHED_ASSERT(rebuilt, "gandiva_placement: rebuilt from a state of another cluster");
  packer_.rebuild(state);
}

result<decision> gandiva_placement::plan(const cluster_state& state) {
  if (options_.slicing) {
    auto d = plan_slices(state);
    if (!d || !d->empty()) return d;
  }
  if (options_.grow) {
    auto d = plan_growth(state);
    if (!d || !d->empty()) return d;
  }
  if (options_.pack) return plan_packing(state);
  return decision{};
}

namespace {

std::uint32_t whole_gpus(const job_spec& spec) {
  std::uint32_t k = 0;
  for (const task_role& r : spec.roles) k += r.gpu.count * r.task_count;
  return k;
}

}  // namespace

result<decision> gandiva_placement::plan_slices(const cluster_state& state) {
  std::vector<slice_account> accounts;
  const std::int64_t now_s = now_ms_ / 1000;
  for (const auto& [job, a] : accounts_) {
    if (state.find_job(job) == nullptr) continue;
    accounts.push_back(slice_account{job, a.attained_ms / 1000, a.since_ms / 1000});
  }
  time_slice_params params;
  params.quantum_s = options_.quantum_s;
  auto plan = plan_time_slices(state, accounts, params, now_s);
  if (!plan) return std::move(plan).error();
  next_plan_ms_ = plan->next_review_s ? *plan->next_review_s * 1000 : -1;
  decision d = to_decision(*plan);
  if (!d.empty()) return d;
  // Unslicing: a suspended job that some server could hold on free GPUs leaves time-slicing.
  const cluster& c = state.cluster();
  std::vector<std::uint32_t> free(c.node_count(), 0);
  for (std::size_t i = 0; i < c.node_count(); ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    if (state.node_health(n) != health::healthy) continue;
    const node_info& info = c.node(n);
    for (std::uint32_t k = 0; k < info.device_count; ++k) {
      const device_id dev(info.first_device.value() + k);
      if (state.device_health(dev) == health::healthy && state.device_used(dev).holders.empty())
        ++free[i];
    }
  }
  for (const auto& [id, rec] : state.jobs()) {  // ascending job id
    if (rec.status.state != job_state::suspended || !rec.spec.preemptible) continue;
    const std::uint32_t k = whole_gpus(rec.spec);
    if (k == 0) continue;
    const auto it = std::find_if(free.begin(), free.end(), [&](std::uint32_t f) { return f >= k; });
    if (it == free.end()) continue;
    *it -= k;
    d.preemptions.push_back(preemption{id, "unslice"});
  }
  return d;
}

result<decision> gandiva_placement::plan_growth(const cluster_state& state) const {
  std::vector<elastic_job> elastic;
  for (const auto& [id, rec] : state.jobs()) {
    const job_state s = rec.status.state;
    if (s != job_state::scheduled && s != job_state::running) continue;
    if (rec.spec.gang || !rec.spec.preemptible || task_count(rec.spec) < 2) continue;
    elastic.push_back(elastic_job{id, 1});
  }
  if (elastic.empty()) return decision{};
  auto plan = grow_.plan(state, elastic);
  if (!plan) return std::move(plan).error();
  return to_decision(*plan);
}

result<decision> gandiva_placement::plan_packing(const cluster_state& state) const {
  std::vector<job_profile> profiles;
  for (const auto& [id, rec] : state.jobs()) {
    const auto role = std::find_if(rec.spec.roles.begin(), rec.spec.roles.end(),
                                   [](const task_role& r) { return r.gpu.count > 0; });
    if (role == rec.spec.roles.end()) continue;
    profiles.push_back(job_profile{id, role->gpu.milli_per_gpu, role->gpu.memory_mib, 1});
  }
  auto proposal = propose_packing(state, profiles, {});
  if (!proposal) return std::move(proposal).error();
  return std::move(proposal->start);
}

result<std::unique_ptr<placement_policy>> make_gandiva_placement(const policy_params& params,
                                                                 const cluster& description,
                                                                 const cluster_topology* topology) {
  gandiva_params p;
  gandiva_plan_options opt;
  migration_options mig;
  mig.on = true;  // Gandiva's introspective mode migrates (docs/simulator.md)
  bool quantum_given = false;
  for (const auto& [key, value] : params) {
    if (auto m = parse_migration_param("gandiva", key, value, mig)) {
      if (!*m) return std::move(*m).error();
    } else if (key == "oversubscribe") {
      auto v = parse_param_uint("gandiva", key, value);
      if (!v || *v > 1)
        return make_error(errc::invalid_argument, "gandiva: oversubscribe={} (expected 0 or 1)",
                          value);
      p.allow_oversubscription = *v == 1;
    } else if (key == "slices") {
      auto v = parse_param_uint("gandiva", key, value);
      if (!v) return std::move(v).error();
      p.max_time_sliced_jobs_per_gpu_set = *v;
    } else if (key == "slicing") {
      if (value != "engine" && value != "planner")
        return make_error(errc::invalid_argument,
                          "gandiva: slicing={} (expected engine or planner)", value);
      opt.slicing = value == "planner";
    } else if (key == "quantum_s") {
      auto v = parse_param_uint("gandiva", key, value);
      if (!v) return std::move(v).error();
      if (*v == 0)
        return make_error(errc::invalid_argument, "gandiva: quantum_s=0 (expected >= 1)");
      opt.quantum_s = *v;
      quantum_given = true;
    } else if (key == "pack" || key == "grow") {
      auto v = parse_param_flag("gandiva", key, value);
      if (!v) return std::move(v).error();
      (key == "pack" ? opt.pack : opt.grow) = *v;
    } else {
      return make_error(errc::invalid_argument,
                        "gandiva: unknown parameter {} (known: oversubscribe, slices, slicing, "
                        "quantum_s, pack, grow, {})",
                        key, migration_keys);
    }
  }
  if (quantum_given && !opt.slicing)
    return make_error(errc::invalid_argument, "gandiva: quantum_s needs slicing=planner");
  const bool over = p.allow_oversubscription;
  return with_migration(gandiva_placement(description, topology, p, opt), "gandiva", mig,
                        placement_traits{over}, description, topology);
}

}  // namespace hetsched
