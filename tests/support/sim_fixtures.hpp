// SPDX-License-Identifier: MIT
// Small simulator scenarios shared by the quota-placement and preemption tests: whole-GPU trace
// jobs in seconds, a two-DGX-1 cluster, and a run of one policy spec on them.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <hetsched/model/cluster.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/sim/policy_spec.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/workload/trace.hpp>

#include "support/matchers.hpp"

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

/// Runs `trace` on `f` under the policy spec `spec_text` (e.g. "fifo+capacity:quota=8/8");
/// parsing, instantiating and simulating are expected to succeed.
inline sim::sim_result simulate_spec(const sim_fixture& f, const workload::trace& trace,
                                     std::string_view spec_text,
                                     const sim::sim_params& params = {}) {
  auto spec = sim::parse_policy_spec(spec_text);
  EXPECT_THAT(spec, IsOk());
  auto inst = sim::instantiate(*spec, *f.description, &f.topo);
  EXPECT_THAT(inst, IsOk());
  auto r = sim::simulate(f.description, trace, *inst->order, *inst->place, params);
  EXPECT_THAT(r, IsOk());
  return std::move(*r);
}

}  // namespace hetsched::testing
