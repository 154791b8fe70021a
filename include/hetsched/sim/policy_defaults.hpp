// SPDX-License-Identifier: MIT
// The parameters a trace implies for a policy spec (hetsched-sim and hetsched.simulate() fill
// them when the user does not): the `quota=` of the capacity and hived placements from a VC quota
// table or from the trace, fgd's `classes=` (the trace's target workload), drf's weights=quota.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/workload/trace.hpp>
#include <hetsched/workload/vc_quota.hpp>

namespace hetsched::sim {

/// Returns the trace's tenants in the engine's tenant-index order: first arrival, arrivals
/// ordered by submit time, ties in trace order.
[[nodiscard]] std::vector<std::string> tenant_order(const workload::trace& trace);

/// Sets `quota=G0/G1/...` (GPUs per tenant index) on every spec whose placement is capacity or
/// hived and that has no quota of its own (a capacity spec with `tree=` gets `tenants=`, the
/// tenant names in tenant-index order, instead), and `classes=` (the trace's task classes) on fgd
/// specs without one. With `table` a tenant's quota is its VC's GPUs (0 if the table lacks it);
/// otherwise capacity gets equal shares of `cluster_gpus` (the remainder to the first tenants)
/// and hived shares proportional to each tenant's GPU-time demand (floor). With `table`, a drf
/// ordering's `weights=quota` becomes the table's GPUs per tenant (`vc=G/...`, capped at
/// max_tenant_weight; a tenant with 0 GPUs or missing from the table keeps weight 1);
/// without one it is left for make_ordering() to reject.
/// Errors: the fgd target workload cannot be made (e.g. an empty trace); weights=quota with a
/// tenant whose name cannot be written in weights= ('/', '=', ',', '+' or "*").
[[nodiscard]] result<void> fill_quota_params(std::vector<policy_spec>& specs,
                                             const workload::trace& trace,
                                             std::uint64_t cluster_gpus,
                                             const workload::vc_quota_table* table);

}  // namespace hetsched::sim
