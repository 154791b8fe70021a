// SPDX-License-Identifier: MIT
// The FGD placement in the simulator: fractional GPUs, the classes parameter, errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <hetsched/policies/fgd_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>

#include "support/matchers.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;

std::shared_ptr<const cluster> one_node(std::size_t gpus) {
  cluster c;
  node_spec n;
  n.name = "n0";
  n.milli_cpu = 64'000;
  n.memory_mib = 512 * 1024;
  for (std::size_t g = 0; g < gpus; ++g) n.devices.push_back(device_spec{gpu_type("T4"), 16384});
  EXPECT_TRUE(c.add_node(std::move(n)).has_value());
  return std::make_shared<const cluster>(std::move(c));
}

workload::trace_job share(std::string name, std::int64_t milli, std::int64_t duration_s) {
  workload::trace_job j;
  j.name = std::move(name);
  j.tenant = "t";
  j.submit_ms = 0;
  j.duration_ms = duration_s * 1000;
  j.tasks = 1;
  j.gpus_per_task = 1;
  j.gpu_milli_per_task = milli;
  j.cpu_milli_per_task = 1000;
  return j;
}

sim_result run(const std::shared_ptr<const cluster>& c, const workload::trace& t,
               const policy_params& params) {
  auto o = make_ordering("fifo", {});
  EXPECT_THAT(o, IsOk());
  auto p = make_placement("fgd", params, *c, nullptr);
  EXPECT_THAT(p, IsOk());
  auto r = simulate(c, t, **o, **p, sim_params{});
  EXPECT_THAT(r, IsOk());
  return std::move(*r);
}

TEST(FgdPlacement, BestFitSharesOneGpuAndKeepsTheOtherWhole) {
  const auto c = one_node(2);
  // Two 0.4-GPU tasks share GPU 0 (least room that fits), so the whole-GPU task starts at once.
  const workload::trace t{share("a", 400, 100), share("b", 400, 100), share("c", 1000, 10)};
  const sim_result r = run(c, t, {{"policy", "best_fit"}});
  EXPECT_EQ(r.jobs[0].first_start_ms, 0);
  EXPECT_EQ(r.jobs[1].first_start_ms, 0);
  EXPECT_EQ(r.jobs[2].first_start_ms, 0);
  EXPECT_EQ(r.end_ms, 100'000);
}

TEST(FgdPlacement, ReleasedSharesAreReusable) {
  const auto c = one_node(1);
  // 0.7 then 0.7: the second waits for the first (the mirror is rebuilt after the release).
  const workload::trace t{share("a", 700, 50), share("b", 700, 30)};
  const sim_result r = run(c, t, {{"policy", "gpu_packing"}});
  EXPECT_EQ(r.jobs[1].first_start_ms, 50'000);
  EXPECT_EQ(r.end_ms, 80'000);
}

TEST(FgdPlacement, FgdUsesTheClassesOfTheTargetWorkload) {
  const auto c = one_node(2);
  const workload::trace t{share("a", 400, 100), share("b", 400, 100), share("c", 1000, 10)};
  // Target workload: whole-GPU tasks only; FGD keeps a whole GPU free for them.
  const sim_result r = run(c, t, {{"classes", "1000/1000/1/10/;total=10"}});
  EXPECT_EQ(r.jobs[2].first_start_ms, 0);
}

std::shared_ptr<const cluster> two_nodes() {
  cluster c;
  for (const char* name : {"n0", "n1"}) {
    node_spec n;
    n.name = name;
    n.milli_cpu = 64'000;
    n.memory_mib = 512 * 1024;
    for (int g = 0; g < 2; ++g) n.devices.push_back(device_spec{gpu_type("T4"), 16384});
    EXPECT_TRUE(c.add_node(std::move(n)).has_value());
  }
  return std::make_shared<const cluster>(std::move(c));
}

/// Submits and queues job `id`: one task of 1 CPU and `milli` of one GPU.
void submit_share(cluster_state& st, std::uint32_t id, std::uint32_t milli) {
  job_spec spec;
  spec.id = job_id(id);
  spec.name = fmt::format("j{}", id);
  task_role r;
  r.name = "t";
  r.milli_cpu = 1000;
  r.gpu.count = 1;
  r.gpu.milli_per_gpu = milli;
  spec.roles.push_back(r);
  ASSERT_THAT(st.submit(std::move(spec)), IsOk());
  ASSERT_THAT(record(st, job_id(id), job_event::enqueue), IsOk());
}

/// Places job `id`, applies and commits the bind; returns its (node, device ids), or nothing
/// when it is deferred.
std::vector<std::uint32_t> place_share(cluster_state& st, placement_policy& p, std::uint32_t id) {
  auto d = p.place(st, job_id(id));
  EXPECT_THAT(d, IsOk());
  if (!d || d->binds.empty()) return {};
  EXPECT_THAT(apply(st, *d), IsOk());
  p.commit(st, *d);
  const task_placement& tp = d->binds[0].tasks[0];
  std::vector<std::uint32_t> out{tp.node.value()};
  for (const device_share& u : tp.devices) out.push_back(u.device.value());
  return out;
}

TEST(FgdPlacement, AvoidsNodesAndDevicesThatAreNotHealthy) {
  const auto c = two_nodes();  // n0: devices 0, 1; n1: devices 2, 3
  cluster_state st(c);
  auto p = make_placement("fgd", {{"policy", "best_fit"}}, *c, nullptr);
  ASSERT_THAT(p, IsOk());
  ASSERT_THAT(st.set_node_health(node_id(0), health::unhealthy), IsOk());
  ASSERT_THAT(st.set_device_health(device_id(2), health::unhealthy), IsOk());
  (*p)->rebuild(st);
  // n0 is down and device 2 is broken: two 0.5-GPU tasks share device 3 on n1.
  for (std::uint32_t j = 0; j < 3; ++j) submit_share(st, j, 500);
  EXPECT_EQ(place_share(st, **p, 0), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(place_share(st, **p, 1), (std::vector<std::uint32_t>{1, 3}));
  // Nothing healthy is left for a third: deferred, not placed on the broken hardware.
  auto d = (*p)->place(st, job_id(2));
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->binds.empty());
  ASSERT_EQ(d->deferrals.size(), 1u);
  EXPECT_EQ(d->deferrals[0].reason, defer_reason::insufficient_capacity);
  // n0 repaired: the third goes to its lowest-index GPU.
  ASSERT_THAT(st.set_node_health(node_id(0), health::healthy), IsOk());
  (*p)->rebuild(st);
  EXPECT_EQ(place_share(st, **p, 2), (std::vector<std::uint32_t>{0, 0}));
}

TEST(FgdPlacement, ClassesRoundTripAndErrors) {
  auto w = parse_fgd_classes("1000/500/1/3/;2000/1000/2/1/V100|T4;total=4");
  ASSERT_THAT(w, IsOk());
  ASSERT_EQ(w->classes.size(), 2u);
  EXPECT_EQ(w->classes[1].gpu_spec, "V100|T4");
  EXPECT_EQ(w->classes[1].num_gpu, 2u);
  EXPECT_EQ(format_fgd_classes(*w, 4), "1000/500/1/3/;2000/1000/2/1/V100|T4;total=4");
  EXPECT_THAT(parse_fgd_classes("1000/x/1/3/"), ErrorContains("is not CPU/MILLI/NUM/COUNT/SPEC"));
  const auto c = one_node(1);
  EXPECT_THAT(make_placement("fgd", {}, *c, nullptr), ErrorContains("needs the target workload"));
  EXPECT_THAT(make_placement("fgd", {{"policy", "nosuch"}}, *c, nullptr),
              ErrorContains("policy 'nosuch'"));
}

}  // namespace
}  // namespace hetsched::sim
