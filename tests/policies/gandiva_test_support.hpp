// SPDX-License-Identifier: MIT
// Shared helpers of the Gandiva planner tests: clusters from templates and jobs bound onto
// chosen local GPUs.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/topology/cluster_builder.hpp>

#include "support/matchers.hpp"

namespace hetsched::gandiva_testing {

/// A cluster topology and the state of its cluster.
struct bed {
  cluster_topology topology;
  cluster_state state;

  explicit bed(cluster_topology t) : topology(t), state(to_cluster(t).value()) {}

  /// 4 workstation-4gpu servers (16 GPUs; NVLink pairs (0,3) and (1,2) on each).
  static bed workstations() {
    return bed(
        cluster_builder("ws").add_nodes(node_template::workstation_4gpu, 4, "ws").build().value());
  }
  static bed of(node_template t, std::size_t nodes) {
    return bed(cluster_builder("c").add_nodes(t, nodes, "n").build().value());
  }

  /// Returns the device id of local GPU `local` of node `node`.
  [[nodiscard]] device_id dev(std::uint32_t node, std::uint32_t local) const {
    return state.cluster().device_at(node_id(node), local).value();
  }

  /// Submits job `id` with one task per entry of `tasks` (each: node, local GPU indices) asking
  /// whole GPUs, binds and starts it.
  void run(std::uint32_t id,
           const std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>>& tasks,
           bool preemptible = true) {
    job_spec spec;
    spec.id = job_id(id);
    spec.name = "job";
    spec.preemptible = preemptible;
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      task_role role;
      role.name = "r";
      role.name.append(std::to_string(t));
      role.gpu = whole_gpus(static_cast<std::uint32_t>(tasks[t].second.size()));
      spec.roles.push_back(std::move(role));
    }
    run_spec(spec, tasks);
  }

  /// Submits job `id` asking `milli` milli-GPU and `memory_mib` of local GPU `local` of `node`,
  /// binds and starts it.
  void run_fractional(std::uint32_t id, std::uint32_t node, std::uint32_t local,
                      std::uint32_t milli, std::int64_t memory_mib) {
    job_spec spec;
    spec.id = job_id(id);
    spec.name = "job";
    spec.preemptible = true;
    spec.roles.push_back(task_role{"r0", 1, 0, 0, fractional_gpu(milli, {}, memory_mib), {}});
    run_spec(spec, {{node, {local}}});
  }

  /// Submits `spec`, binds task t onto tasks[t] (shares as the roles ask) and starts it.
  void run_spec(const job_spec& spec,
                const std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>>& tasks) {
    ASSERT_THAT(state.submit(spec), testing::IsOk());
    ASSERT_THAT(record(state, spec.id, job_event::enqueue), testing::IsOk());
    binding b{spec.id, {}};
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const task_role& role = spec.roles.at(t);
      task_placement p{task_id(static_cast<std::uint32_t>(t)), node_id(tasks[t].first), {}};
      for (std::uint32_t k : tasks[t].second)
        p.devices.push_back(
            device_share{dev(tasks[t].first, k), role.gpu.milli_per_gpu, role.gpu.memory_mib});
      b.tasks.push_back(std::move(p));
    }
    decision d;
    d.binds.push_back(std::move(b));
    ASSERT_THAT(apply(state, d), testing::IsOk());
    ASSERT_THAT(record(state, spec.id, job_event::start), testing::IsOk());
  }

  /// Suspends running job `id`.
  void suspend(std::uint32_t id) {
    decision d;
    d.suspensions.push_back(suspension{job_id(id)});
    ASSERT_THAT(apply(state, d), testing::IsOk());
  }
};

/// Returns the device ids of a placement.
inline std::vector<std::uint32_t> ids(const task_placement& p) {
  std::vector<std::uint32_t> out;
  for (const device_share& s : p.devices) out.push_back(s.device.value());
  return out;
}

}  // namespace hetsched::gandiva_testing
