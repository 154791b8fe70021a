// SPDX-License-Identifier: MIT
// gandiva_placement and its registry factory (with Gandiva's migration).
#include <memory>
#include <utility>

#include <hetsched/detail/assert.hpp>
#include <hetsched/policies/gandiva_placement.hpp>
#include <hetsched/policies/migrating_placement.hpp>

namespace hetsched {

gandiva_placement::gandiva_placement(const cluster& description, const cluster_topology* topology,
                                     gandiva_params params)
    : gandiva_(topology != nullptr ? gandiva_reactive(description, *topology, params)
                                   : gandiva_reactive(description, params)),
      packer_(topology != nullptr ? indexed_packer(description, *topology)
                                  : indexed_packer(description)) {}

result<decision> gandiva_placement::place(const cluster_state& state, job_id job) {
  auto r = gandiva_.place(state, job);
  if (!r) return r;
  if (r->binds.empty() && r->deferrals.size() == 1 &&
      r->deferrals.front().reason == defer_reason::topology_unsatisfiable)
    return packer_.place(state, job);
  return r;
}

void gandiva_placement::commit(const cluster_state& after, const decision& d) {
  // The engine commits only what apply() accepted on a state of this cluster.
  [[maybe_unused]] const result<void> committed = gandiva_.commit(d);
  HETSCHED_ASSERT(committed, "gandiva_placement: a decision apply() accepted was refused");
  packer_.commit(after, d);
}

void gandiva_placement::release(const cluster_state& after, job_id job) {
  gandiva_.release(job);
  packer_.release(after, job);
}

void gandiva_placement::rebuild(const cluster_state& state) {
  [[maybe_unused]] const result<void> rebuilt = gandiva_.rebuild(state);
  HETSCHED_ASSERT(rebuilt, "gandiva_placement: rebuilt from a state of another cluster");
  packer_.rebuild(state);
}

result<std::unique_ptr<placement_policy>> make_gandiva_placement(const policy_params& params,
                                                                 const cluster& description,
                                                                 const cluster_topology* topology) {
  gandiva_params p;
  migration_options mig;
  mig.on = true;  // Gandiva's introspective mode migrates (docs/simulator.md)
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
    } else {
      return make_error(errc::invalid_argument,
                        "gandiva: unknown parameter {} (known: oversubscribe, slices, {})", key,
                        migration_keys);
    }
  }
  const bool over = p.allow_oversubscription;
  return with_migration(gandiva_placement(description, topology, p), "gandiva", mig,
                        placement_traits{over}, description, topology);
}

}  // namespace hetsched
