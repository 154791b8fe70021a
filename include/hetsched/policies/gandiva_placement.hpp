// SPDX-License-Identifier: MIT
// gandiva_placement: Gandiva's reactive placement as a placement policy (policy.hpp).
#pragma once

#include <memory>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Gandiva's reactive placement (gandiva_reactive) for the jobs it supports (one task of whole
/// GPUs); jobs it defers as topology_unsatisfiable (several tasks, fractional) go to an
/// indexed_packer instead. Both indices see every change. Oversubscribes (time-slicing).
class gandiva_placement {
 public:
  gandiva_placement(const cluster& description, const cluster_topology* topology,
                    gandiva_params params);

  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job);
  void commit(const cluster_state& after, const decision& d);
  void release(const cluster_state& after, job_id job);
  void rebuild(const cluster_state& state);

 private:
  gandiva_reactive gandiva_;
  indexed_packer packer_;
};

/// The registry factory (registry.hpp) of "gandiva": `oversubscribe=0|1` and `slices=<n>` (max
/// time-sliced jobs per GPU set), and Gandiva's introspective migration (migrate=..., on by
/// default; migrating_placement.hpp). Errors: invalid_argument naming an unknown parameter or a
/// bad value.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_gandiva_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology);

}  // namespace hetsched
