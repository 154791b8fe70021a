// SPDX-License-Identifier: MIT
// The policy contract (policy.hpp) over every placement of the registry (registry.hpp): what_if()
// is the answer the next place() gives and changes nothing, replay_bindings() is all or nothing,
// and the registry makes every entry by name.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::HasErrc;
using hetsched::testing::IsOk;
using ::testing::ElementsAre;

/// Two DGX-1 V100 servers (nodes n0, n1) in one rack.
struct two_servers {
  cluster_topology topo =
      cluster_builder("c").add_nodes(node_template::dgx1_v100, 2, "n").racks(1).build().value();
  cluster description = to_cluster(topo).value();
};

job_spec gpu_job(std::uint32_t id, std::uint32_t tenant, std::uint32_t gpus,
                 std::uint32_t tasks = 1, std::int32_t priority = 0) {
  job_spec s;
  s.id = job_id(id);
  s.name = fmt::format("j{}", id);
  s.tenant = tenant_id(tenant);
  s.priority = priority;
  task_role r;
  r.name = "t";
  r.task_count = tasks;
  r.milli_cpu = 1000;
  r.memory_mib = 1024;
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

/// place() + apply() + commit(); returns the decision.
decision run(cluster_state& st, placement_policy& p, job_id j) {
  auto d = p.place(st, j);
  EXPECT_THAT(d, IsOk());
  if (!d) return {};
  EXPECT_THAT(apply(st, *d), IsOk());
  p.commit(st, *d);
  return *d;
}

TEST(Registry, EveryEntryIsMadeByName) {
  std::vector<std::string> names;
  for (const ordering_entry& e : orderings()) names.emplace_back(e.name);
  EXPECT_THAT(names, ElementsAre("fifo", "sjf", "tiresias", "drf"));
  names.clear();
  for (const placement_entry& e : placements()) names.emplace_back(e.name);
  EXPECT_THAT(names,
              ElementsAre("packer", "gandiva", "capacity", "hived", "fgd", "first-fit", "random"));

  const two_servers f;
  for (const ordering_entry& e : orderings()) {
    auto o = make_ordering(e.name, {});
    ASSERT_THAT(o, IsOk()) << e.name;
    EXPECT_EQ((*o)->name(), e.name == "tiresias" ? "tiresias" : e.name);
  }
  for (const placement_entry& e : placements()) {
    const policy_params params =
        e.name == "fgd" ? policy_params{{"policy", "best_fit"}} : policy_params{};
    auto p = make_placement(e.name, params, f.description, &f.topo);
    ASSERT_THAT(p, IsOk()) << e.name;
    EXPECT_EQ((*p)->name(), e.name);
  }
  EXPECT_THAT(make_placement("bestfit", {}, f.description, &f.topo), ErrorContains("bestfit"));
  EXPECT_THAT(make_placement("bestfit", {}, f.description, &f.topo), HasErrc(errc::not_found));
  EXPECT_THAT(make_policy("fifo+packer:fit=tight", f.description, &f.topo),
              HasErrc(errc::invalid_argument));
  EXPECT_THAT(make_policy("fifo+hived", f.description, nullptr), ErrorContains("topology"));
}

/// Returns the spec `text` with `extra` added to its placement parameters (values a spec's text
/// cannot hold, such as a JSON queue tree).
policy_spec with_params(std::string_view text, const policy_params& extra) {
  auto spec = parse_policy_spec(text);
  EXPECT_THAT(spec, IsOk());
  for (const auto& [k, v] : extra) spec->placement_params[k] = v;
  return *spec;
}

/// Hierarchical queues (capacity with tree=): tenants 0 and 1 in queues t0 and t1 of one cohort,
/// 8 GPUs each, reclaiming borrowed quota and preempting lower priorities.
const policy_params queue_tree{{"tree", R"({"nodes": [{"name": "org", "kind": "cohort"},
      {"name": "t0", "parent": "org", "quotas": [{"resource": "gpu", "nominal": 8}],
       "preemption": {"within_queue": "lower_priority", "reclaim_within_cohort": "any"}},
      {"name": "t1", "parent": "org", "quotas": [{"resource": "gpu", "nominal": 8}],
       "preemption": {"within_queue": "lower_priority", "reclaim_within_cohort": "any"}}]})"},
                               {"tenants", "t0/t1"}};

/// For a placement spec: two tenants' jobs fill the cluster, one more job queues; what_if() on
/// it, asked twice, equals the place() that follows, and none of the probes changes a later
/// answer (a second placement fed the same calls without the probes answers the same).
void expect_what_if_is_next_place(std::string_view spec, const policy_params& extra = {}) {
  SCOPED_TRACE(spec);
  const two_servers f;
  auto probed = make_policy(with_params(spec, extra), f.description, &f.topo);
  auto plain = make_policy(with_params(spec, extra), f.description, &f.topo);
  ASSERT_THAT(probed, IsOk());
  ASSERT_THAT(plain, IsOk());
  cluster_state a(f.description);
  cluster_state b(f.description);
  // Tenant 1 borrows the whole cluster (opportunistic under hived: priority -1 < 0), then a
  // guaranteed job of tenant 0 arrives.
  const std::vector<job_spec> jobs = {gpu_job(1, 1, 8, 1, -1), gpu_job(2, 1, 4, 1, -1),
                                      gpu_job(3, 1, 4, 1, -1), gpu_job(4, 0, 8, 1, 5),
                                      gpu_job(5, 0, 2, 1, 5)};
  for (const job_spec& j : jobs) {
    submit_queued(a, j);
    submit_queued(b, j);
  }
  for (const job_spec& j : jobs) {
    auto w1 = probed->place->what_if(a, j.id);
    auto w2 = probed->place->what_if(a, j.id);
    ASSERT_THAT(w1, IsOk());
    ASSERT_THAT(w2, IsOk());
    EXPECT_EQ(*w1, *w2) << "job " << j.id.value();
    const decision placed = run(a, *probed->place, j.id);
    EXPECT_EQ(*w1, placed) << "job " << j.id.value();
    EXPECT_EQ(run(b, *plain->place, j.id), placed) << "job " << j.id.value();
  }
}

TEST(PolicyContract, WhatIfIsTheNextPlaceAndChangesNothing) {
  expect_what_if_is_next_place("fifo+packer");
  expect_what_if_is_next_place("fifo+packer:fit=worst");
  expect_what_if_is_next_place("fifo+gandiva");
  expect_what_if_is_next_place("fifo+capacity:quota=8/8,borrow=1,preemption=classic");
  expect_what_if_is_next_place("fifo+capacity:quota=8/8,borrow=1,preemption=proportional");
  expect_what_if_is_next_place("fifo+capacity:quota=8/8,placer=hived");
  expect_what_if_is_next_place("fifo+hived:quota=8/8");
  expect_what_if_is_next_place("fifo+fgd:policy=random,seed=7");
  expect_what_if_is_next_place("fifo+fgd:policy=best_fit");
  expect_what_if_is_next_place("fifo+first-fit");
  expect_what_if_is_next_place("fifo+random:seed=7");
  expect_what_if_is_next_place("fifo+capacity", queue_tree);
}

/// For a placement spec: policy A places jobs 1-3 (tenant 1 borrows the whole cluster); a fresh
/// policy B gets A's bindings through replay_bindings() on a fresh state, as after a restart.
/// Both then answer the same for tenant 0's jobs 4 and 5 (which, under quotas, preempt).
void expect_replay_restores(std::string_view spec, const policy_params& extra = {}) {
  SCOPED_TRACE(spec);
  const two_servers f;
  auto a = make_policy(with_params(spec, extra), f.description, &f.topo);
  auto b = make_policy(with_params(spec, extra), f.description, &f.topo);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  const std::vector<job_spec> jobs = {gpu_job(1, 1, 8, 1, -1), gpu_job(2, 1, 4, 1, -1),
                                      gpu_job(3, 1, 4, 1, -1), gpu_job(4, 0, 8, 1, 5),
                                      gpu_job(5, 0, 2, 1, 5)};
  cluster_state sa(f.description);
  cluster_state sb(f.description);
  // Jobs 4 and 5 arrive after 1-3 are placed (an admission cycle would otherwise serve tenant 0,
  // within its quota, before tenant 1's borrowing jobs 2 and 3).
  for (std::size_t i = 0; i < 3; ++i) {
    submit_queued(sa, jobs[i]);
    submit_queued(sb, jobs[i]);
  }
  std::vector<binding> journal;
  for (std::uint32_t id = 1; id <= 3; ++id) {
    const decision d = run(sa, *a->place, job_id(id));
    ASSERT_EQ(d.binds.size(), 1u) << "job " << id;
    journal.push_back(d.binds[0]);
  }
  ASSERT_THAT(replay_bindings(sb, *b->place, journal), IsOk());
  for (std::size_t i = 3; i < jobs.size(); ++i) {
    submit_queued(sa, jobs[i]);
    submit_queued(sb, jobs[i]);
  }
  EXPECT_TRUE(sa == sb);
  for (std::uint32_t id = 4; id <= 5; ++id) {
    auto da = a->place->place(sa, job_id(id));
    auto db = b->place->place(sb, job_id(id));
    ASSERT_THAT(da, IsOk());
    ASSERT_THAT(db, IsOk());
    EXPECT_EQ(*da, *db) << "job " << id;
  }
}

TEST(PolicyContract, ReplayedBindingsRebuildEveryPlacement) {
  expect_replay_restores("fifo+packer");
  expect_replay_restores("fifo+gandiva");
  expect_replay_restores("fifo+capacity:quota=8/8,borrow=1,preemption=classic");
  expect_replay_restores("fifo+capacity:quota=8/8,borrow=1,preemption=fair");
  expect_replay_restores("fifo+capacity:quota=8/8,borrow=1,preemption=proportional");
  expect_replay_restores("fifo+capacity:quota=8/8,borrow=1,placer=hived");
  expect_replay_restores("fifo+hived:quota=8/8");
  expect_replay_restores("fifo+fgd:policy=best_fit");
  expect_replay_restores("fifo+first-fit");
  expect_replay_restores("fifo+capacity", queue_tree);
}

TEST(PolicyContract, ReplayedHivedJobsArePreemptedAsCommittedOnes) {
  // Without the replayed jobs in the allocator, HiveD would bind job 4 to cells the state says
  // are taken (the state check turns that into a wait); with them it names the victim.
  const two_servers f;
  auto p = make_placement("hived", {{"quota", "8/8"}}, f.description, &f.topo);
  ASSERT_THAT(p, IsOk());
  cluster_state st(f.description);
  submit_queued(st, gpu_job(1, 1, 8, 1, -1));
  submit_queued(st, gpu_job(2, 1, 8, 1, -1));
  submit_queued(st, gpu_job(4, 0, 8, 1, 5));
  const node_info& n0 = st.cluster().node(node_id(0));
  const node_info& n1 = st.cluster().node(node_id(1));
  auto whole = [](job_id j, const node_info& n, std::uint32_t task) {
    binding b{
        j,
        {task_placement{task_id(task), n.first_device.value() == 0 ? node_id(0) : node_id(1), {}}}};
    for (std::uint32_t g = 0; g < n.device_count; ++g)
      b.tasks[0].devices.push_back({device_id(n.first_device.value() + g), 1000, 0});
    return b;
  };
  const std::vector<binding> journal = {whole(job_id(1), n0, 0), whole(job_id(2), n1, 0)};
  ASSERT_THAT(replay_bindings(st, **p, journal), IsOk());
  auto d = (*p)->place(st, job_id(4));
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->binds.empty());
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_THAT(d->preemptions[0].job, ::testing::AnyOf(job_id(1), job_id(2)));
}

TEST(PolicyContract, HivedWhatIfLeavesTheAllocatorAsItWas) {
  const two_servers f;
  auto h = hived_placement::create(f.description, &f.topo, {.quota = {8, 8}});
  ASSERT_THAT(h, IsOk());
  placement_adapter<hived_placement> p(std::move(*h), "hived", placement_traits{.preempts = true});
  cluster_state st(f.description);
  submit_queued(st, gpu_job(1, 1, 8, 1, -1));
  submit_queued(st, gpu_job(2, 1, 8, 1, -1));
  submit_queued(st, gpu_job(3, 0, 8, 1, 5));
  EXPECT_EQ(run(st, p, job_id(1)).binds.size(), 1u);
  EXPECT_EQ(run(st, p, job_id(2)).binds.size(), 1u);
  // Job 3 is guaranteed in vc0 and the opportunistic jobs hold every GPU: HiveD names a victim,
  // and the preempting phase would reserve cells. The what-if does neither.
  const std::uint64_t before = p.inner().allocator().state_digest();
  auto w = p.what_if(st, job_id(3));
  ASSERT_THAT(w, IsOk());
  ASSERT_EQ(w->preemptions.size(), 1u);
  EXPECT_TRUE(w->binds.empty());
  EXPECT_EQ(p.inner().allocator().state_digest(), before);
  EXPECT_FALSE(p.inner().allocator().group("j3").has_value());
  // place() does reserve: the group now exists as preempting.
  auto d = p.place(st, job_id(3));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(*d, *w);
  EXPECT_TRUE(p.inner().allocator().group("j3").has_value());
}

TEST(PolicyContract, ReplayBindingsRestoresAStateAllOrNothing) {
  const two_servers f;
  auto p = make_placement("packer", {}, f.description, &f.topo);
  ASSERT_THAT(p, IsOk());
  // The bindings an embedder journaled before a restart: job 1 on n0 GPUs 0-3, job 2 on n1.
  cluster_state before(f.description);
  submit_queued(before, gpu_job(1, 0, 4));
  submit_queued(before, gpu_job(2, 0, 8));
  const decision d1 = run(before, **p, job_id(1));
  const decision d2 = run(before, **p, job_id(2));
  std::vector<binding> journal = {d1.binds[0], d2.binds[0]};

  auto fresh = make_placement("packer", {}, f.description, &f.topo);
  ASSERT_THAT(fresh, IsOk());
  cluster_state st(f.description);
  submit_queued(st, gpu_job(1, 0, 4));
  submit_queued(st, gpu_job(2, 0, 8));
  submit_queued(st, gpu_job(3, 0, 4));

  // A journal with GPUs in two records (job 3 on job 1's) is refused as a whole: nothing is
  // bound, not even job 2's valid record.
  std::vector<binding> bad = journal;
  bad.push_back(d1.binds[0]);
  bad.back().job = job_id(3);
  const cluster_state untouched = st;
  EXPECT_THAT(replay_bindings(st, **fresh, bad), HasErrc(errc::failed_precondition));
  EXPECT_TRUE(st == untouched);
  EXPECT_EQ(st.find_job(job_id(1))->status.state, job_state::queued);

  ASSERT_THAT(replay_bindings(st, **fresh, journal), IsOk());
  EXPECT_EQ(st.total_used().milli_gpu, 12'000);
  // The rebuilt packer sees the replayed jobs: job 3 goes to the 4 GPUs left on n0.
  auto next = (*fresh)->place(st, job_id(3));
  ASSERT_THAT(next, IsOk());
  ASSERT_EQ(next->binds.size(), 1u);
  EXPECT_EQ(next->binds[0].tasks[0].node, d1.binds[0].tasks[0].node);
  EXPECT_THAT(check_decision(st, *next), IsOk());
}

}  // namespace
}  // namespace hetsched
