// SPDX-License-Identifier: MIT
// Small simulator scenarios shared by the simulator tests: whole-GPU trace jobs in seconds,
// clusters of plain A100 servers or two DGX-1s, and a run of one policy spec on them.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <hetsched/model/cluster.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
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

/// `nodes` servers "n0", "n1", ... of `gpus` A100 GPUs each (64 CPUs, 512 GiB), with no
/// topology (placements take the lowest free GPU indices).
inline std::shared_ptr<const cluster> a100_servers(std::size_t nodes, std::size_t gpus) {
  cluster c;
  for (std::size_t i = 0; i < nodes; ++i) {
    node_spec n;
    n.name = "n" + std::to_string(i);
    n.milli_cpu = 64'000;
    n.memory_mib = 512 * 1024;
    for (std::size_t g = 0; g < gpus; ++g)
      n.devices.push_back(device_spec{gpu_type("A100"), 81920});
    EXPECT_TRUE(c.add_node(std::move(n)).has_value());
  }
  return std::make_shared<const cluster>(std::move(c));
}

/// A job of tenant "vc0": `tasks` tasks of `gpus` whole GPUs each, submitted at `submit_s`,
/// running `duration_s` seconds.
inline workload::trace_job vc0_job(std::string name, std::int64_t submit_s, std::int64_t duration_s,
                                   std::uint32_t gpus, std::uint32_t tasks = 1) {
  workload::trace_job j = gpu_job(std::move(name), "vc0", submit_s, duration_s, gpus);
  j.tasks = tasks;
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
  auto spec = parse_policy_spec(spec_text);
  EXPECT_THAT(spec, IsOk());
  auto inst = make_policy(*spec, *f.description, &f.topo);
  EXPECT_THAT(inst, IsOk());
  auto r = sim::simulate(f.description, trace, *inst->order, *inst->place, params);
  EXPECT_THAT(r, IsOk());
  return std::move(*r);
}

}  // namespace hetsched::testing
