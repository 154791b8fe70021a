// SPDX-License-Identifier: MIT
// The indexed packer, the Gandiva adapter and policy specifications.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <hetsched/policies/gandiva_placement.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/migrating_placement.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/topology/cluster_builder.hpp>

#include "support/matchers.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::HasErrc;
using hetsched::testing::IsOk;

cluster three_nodes() {
  cluster c;
  for (int i = 0; i < 3; ++i) {
    node_spec n;
    n.name = fmt::format("n{}", i);
    n.milli_cpu = 64'000;
    n.memory_mib = 1 << 20;
    for (int g = 0; g < 8; ++g) n.devices.push_back(device_spec{gpu_type("A100"), 81920});
    EXPECT_TRUE(c.add_node(std::move(n)).has_value());
  }
  return c;
}

job_spec gpu_job(std::uint32_t id, std::uint32_t gpus, std::uint32_t tasks = 1) {
  job_spec s;
  s.id = job_id(id);
  s.name = fmt::format("j{}", id);
  task_role r;
  r.name = "t";
  r.task_count = tasks;
  r.gpu = whole_gpus(gpus);
  s.roles.push_back(r);
  s.preemptible = true;
  return s;
}

void submit_queued(cluster_state& st, job_spec s) {
  const job_id id = s.id;
  ASSERT_THAT(st.submit(std::move(s)), IsOk());
  ASSERT_THAT(record(st, id, job_event::enqueue), IsOk());
}

decision place_and_apply(cluster_state& st, indexed_packer& p, job_id j) {
  auto d = p.place(st, j);
  EXPECT_THAT(d, IsOk());
  EXPECT_THAT(check_decision(st, *d), IsOk());
  EXPECT_THAT(apply(st, *d), IsOk());
  p.commit(st, *d);
  return *d;
}

TEST(IndexedPacker, BestFitPacksWorstFitSpreads) {
  cluster_state st(three_nodes());
  indexed_packer best(st.cluster());
  submit_queued(st, gpu_job(0, 6));
  submit_queued(st, gpu_job(1, 2));
  // 6 GPUs: all nodes have 8 free, lowest id: n0.
  EXPECT_EQ(place_and_apply(st, best, job_id(0)).binds[0].tasks[0].node, node_id(0));
  EXPECT_EQ(best.free_gpus(node_id(0)), 2u);
  // 2 GPUs, best fit: n0 (2 free) rather than n1 (8 free).
  const decision d = place_and_apply(st, best, job_id(1));
  EXPECT_EQ(d.binds[0].tasks[0].node, node_id(0));
  EXPECT_EQ(d.binds[0].tasks[0].devices.size(), 2u);
  EXPECT_EQ(best.free_gpus(node_id(0)), 0u);

  cluster_state st2(three_nodes());
  indexed_packer worst(st2.cluster(), {node_fit::worst});
  submit_queued(st2, gpu_job(0, 6));
  submit_queued(st2, gpu_job(1, 2));
  place_and_apply(st2, worst, job_id(0));
  // Worst fit: the 2-GPU job goes to n1 (8 free).
  EXPECT_EQ(place_and_apply(st2, worst, job_id(1)).binds[0].tasks[0].node, node_id(1));
}

TEST(IndexedPacker, GangIsAllOrNothingAndReleaseRestoresTheIndex) {
  cluster_state st(three_nodes());
  indexed_packer p(st.cluster());
  submit_queued(st, gpu_job(0, 4));
  submit_queued(st, gpu_job(1, 8, 2));
  submit_queued(st, gpu_job(2, 8, 3));
  place_and_apply(st, p, job_id(0));
  // Two 8-GPU tasks: n1 and n2 (n0 has 4 free).
  const decision d = place_and_apply(st, p, job_id(1));
  ASSERT_EQ(d.binds[0].tasks.size(), 2u);
  EXPECT_EQ(d.binds[0].tasks[0].node, node_id(1));
  EXPECT_EQ(d.binds[0].tasks[1].node, node_id(2));
  // Three 8-GPU tasks: only 4 GPUs free in total -> insufficient capacity, index untouched.
  auto def = p.place(st, job_id(2));
  ASSERT_THAT(def, IsOk());
  ASSERT_EQ(def->deferrals.size(), 1u);
  EXPECT_EQ(def->deferrals[0].reason, defer_reason::insufficient_capacity);
  EXPECT_EQ(p.free_gpus(node_id(0)), 4u);
  ASSERT_THAT(record(st, job_id(1), job_event::start), IsOk());
  ASSERT_THAT(record(st, job_id(1), job_event::succeed), IsOk());
  p.release(st, job_id(1));
  EXPECT_EQ(p.free_gpus(node_id(1)), 8u);
  EXPECT_EQ(p.free_gpus(node_id(2)), 8u);
  // 20 GPUs free, 24 asked: still insufficient capacity.
  def = p.place(st, job_id(2));
  ASSERT_EQ(def->deferrals.size(), 1u);
  EXPECT_EQ(def->deferrals[0].reason, defer_reason::insufficient_capacity);
  indexed_packer fresh(st.cluster());
  fresh.rebuild(st);
  EXPECT_EQ(fresh.free_gpus(node_id(0)), 4u);
  EXPECT_EQ(fresh.free_gpus(node_id(1)), 8u);
}

TEST(IndexedPacker, GangTogetherKeepsATaskGroupOnOneNode) {
  // n0 keeps 1 GPU free, n1 3, n2 8. Four 1-GPU tasks one by one (best fit): n0, then n1 three
  // times; together: n2, the only node with 4 free, holds them all.
  const auto setup = [](cluster_state& st, indexed_packer& p) {
    submit_queued(st, gpu_job(0, 7));
    submit_queued(st, gpu_job(1, 5));
    place_and_apply(st, p, job_id(0));
    place_and_apply(st, p, job_id(1));
    submit_queued(st, gpu_job(2, 1, 4));
  };
  cluster_state apart(three_nodes());
  indexed_packer by_task(apart.cluster());
  setup(apart, by_task);
  const decision a = place_and_apply(apart, by_task, job_id(2));
  ASSERT_EQ(a.binds[0].tasks.size(), 4u);
  EXPECT_EQ(a.binds[0].tasks[0].node, node_id(0));
  EXPECT_EQ(a.binds[0].tasks[1].node, node_id(1));

  cluster_state st(three_nodes());
  packer_placement_params params;
  params.gang_together = true;
  indexed_packer together(st.cluster(), params);
  setup(st, together);
  const decision d = place_and_apply(st, together, job_id(2));
  ASSERT_EQ(d.binds[0].tasks.size(), 4u);
  for (const task_placement& tp : d.binds[0].tasks) EXPECT_EQ(tp.node, node_id(2));
  EXPECT_EQ(together.free_gpus(node_id(2)), 4u);
  EXPECT_EQ(together.free_gpus(node_id(0)), 1u);
  // Three tasks of 2 GPUs fit no node whole: one by one (n1 with 3 free first, then n2).
  submit_queued(st, gpu_job(3, 2, 3));
  const decision e = place_and_apply(st, together, job_id(3));
  ASSERT_EQ(e.binds[0].tasks.size(), 3u);
  EXPECT_EQ(e.binds[0].tasks[0].node, node_id(1));
  // The registry's spelling, and a bad value.
  EXPECT_THAT(make_packer_placement({{"gang", "together"}}, st.cluster(), nullptr), IsOk());
  EXPECT_THAT(make_packer_placement({{"gang", "all"}}, st.cluster(), nullptr),
              ErrorContains("gang=all (expected together or tasks)"));
}

TEST(IndexedPacker, FragmentedWhenEnoughGpusAreScattered) {
  cluster_state st(three_nodes());
  indexed_packer p(st.cluster());
  for (std::uint32_t i = 0; i < 3; ++i) submit_queued(st, gpu_job(i, 5));
  for (std::uint32_t i = 0; i < 3; ++i) place_and_apply(st, p, job_id(i));
  // 3 GPUs free on each node: 9 in total, no node has 4.
  submit_queued(st, gpu_job(3, 4));
  auto d = p.place(st, job_id(3));
  ASSERT_THAT(d, IsOk());
  ASSERT_EQ(d->deferrals.size(), 1u);
  EXPECT_EQ(d->deferrals[0].reason, defer_reason::fragmented);
}

TEST(IndexedPacker, UsesTheTopologyPackerInsideANode) {
  auto topo = cluster_builder("one").add_nodes(node_template::dgx1_v100, 1).build();
  ASSERT_THAT(topo, IsOk());
  auto model = to_cluster(*topo);
  ASSERT_THAT(model, IsOk());
  cluster_state st(std::move(*model));
  indexed_packer p(st.cluster(), *topo);
  submit_queued(st, gpu_job(0, 4));
  const decision d = place_and_apply(st, p, job_id(0));
  // DGX-1 hybrid cube-mesh: the best-connected quad is GPUs 0-3.
  std::vector<std::uint32_t> locals;
  for (const device_share& s : d.binds[0].tasks[0].devices)
    locals.push_back(st.cluster().device(s.device).local_index);
  EXPECT_EQ(locals, (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST(PolicySpec, ParsesOrderPlacementAndParameters) {
  auto s = parse_policy_spec("tiresias:thresholds=100/200+packer:fit=worst");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->order, "tiresias");
  EXPECT_EQ(s->order_params.at("thresholds"), "100/200");
  EXPECT_EQ(s->placement, "packer");
  EXPECT_EQ(s->placement_params.at("fit"), "worst");
  auto g = parse_policy_spec("gandiva");
  ASSERT_THAT(g, IsOk());
  EXPECT_EQ(g->order, "fifo");
  EXPECT_EQ(g->placement, "gandiva");
  EXPECT_EQ(parse_policy_spec("sjf")->placement, "packer");
  EXPECT_THAT(parse_policy_spec("a+b+c"), ErrorContains("more than one '+'"));
  EXPECT_THAT(parse_policy_spec("fifo:x"), ErrorContains("is not key=value"));
  EXPECT_THAT(parse_policy_spec("fifo:x=1,x=2"), ErrorContains("repeated"));
  const cluster c = three_nodes();
  EXPECT_THAT(make_policy(*parse_policy_spec("fifo+nosuch"), c, nullptr), HasErrc(errc::not_found));
  EXPECT_THAT(make_policy(*parse_policy_spec("fifo+packer:fit=odd"), c, nullptr),
              ErrorContains("fit=odd"));
  auto ok = make_policy(*parse_policy_spec("drf+gandiva:slices=2"), c, nullptr);
  ASSERT_THAT(ok, IsOk());
  EXPECT_EQ(ok->place->name(), "gandiva");
  EXPECT_TRUE(ok->place->oversubscribes());
  static_assert(job_placement<indexed_packer>);
  static_assert(job_placement<gandiva_placement>);
}

}  // namespace
}  // namespace hetsched::sim
