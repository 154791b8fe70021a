// SPDX-License-Identifier: MIT
// hetsched-sim: the `quota=` parameter of the capacity and hived placements, from --vc-quota or
// from the trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/sim/policy_spec.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::simcli {

/// Returns the trace's tenants in the engine's tenant-index order: first arrival, arrivals
/// ordered by submit time, ties in trace order.
[[nodiscard]] std::vector<std::string> tenant_order(const workload::trace& trace);

/// Sets `quota=G0/G1/...` (GPUs per tenant index) on every spec whose placement is capacity or
/// hived and that has no quota of its own. With `vc_quota_path` (a Philly-style VC -> node table,
/// workload::parse_vc_node_table, 8 GPUs per node) a tenant's quota is its VC's GPUs (0 if the
/// table lacks it); otherwise capacity gets equal shares of `cluster_gpus` (the remainder to the
/// first tenants) and hived shares proportional to each tenant's GPU-time demand (floor).
/// Errors: the file cannot be read; those of the table reader (file:line: field).
[[nodiscard]] result<void> fill_quota_params(std::vector<sim::policy_spec>& specs,
                                             const workload::trace& trace,
                                             std::uint64_t cluster_gpus,
                                             const std::string& vc_quota_path);

}  // namespace hetsched::simcli
