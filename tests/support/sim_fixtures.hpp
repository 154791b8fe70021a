// SPDX-License-Identifier: MIT
// Small simulator scenarios shared by the quota-placement and preemption tests: whole-GPU trace
// jobs in seconds and a two-DGX-1 cluster.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <hetsched/model/cluster.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/workload/trace.hpp>

namespace hetsched::testing {

/// One task of `gpus` whole GPUs, submitted at `submit_s` and running `duration_s` seconds.
inline workload::trace_job gpu_job(std::string name, std::string tenant, std::int64_t submit_s,
                                   std::int64_t duration_s, std::uint32_t gpus,
                                   std::int32_t priority = 0) {
  workload::trace_job j;
  j.name = std::move(name);
  j.tenant = std::move(tenant);
  j.submit_ms = submit_s * 1000;
  j.duration_ms = duration_s * 1000;
  j.tasks = 1;
  j.gpus_per_task = gpus;
  j.gpu_milli_per_task = 1000 * std::int64_t{gpus};
  j.priority = priority;
  return j;
}

/// A topology and the cluster description built from it.
struct sim_fixture {
  cluster_topology topo;
  std::shared_ptr<const cluster> description;
};

/// Two DGX-1 V100 servers (8 GPUs each, nodes "n0" and "n1") in one rack.
inline sim_fixture two_dgx() {
  sim_fixture f{
      cluster_builder("c").add_nodes(node_template::dgx1_v100, 2, "n").racks(1).build().value(),
      nullptr};
  f.description = std::make_shared<const cluster>(to_cluster(f.topo).value());
  return f;
}

}  // namespace hetsched::testing
