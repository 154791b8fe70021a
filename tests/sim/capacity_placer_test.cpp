// SPDX-License-Identifier: MIT
// The placer behind capacity admission (make_capacity_placer, capacity_placement.hpp): HiveD
// binding what capacity admits (topology-aware GPUs, deferral reasons, quota never held by an
// unplaced job), quota preemption with HiveD releasing its victims' cells, an embedder's own
// placer, and errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/orderings.hpp>
#include <hetsched/sim/engine.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::ErrorContains;
using hetsched::testing::IsOk;
using hetsched::testing::simulate_spec;
using hetsched::testing::two_dgx;
using fixture = hetsched::testing::sim_fixture;

workload::trace_job job(std::string name, std::string tenant, std::int64_t submit_s,
                        std::int64_t duration_s, std::uint32_t gpus) {
  return hetsched::testing::gpu_job(std::move(name), std::move(tenant), submit_s, duration_s, gpus);
}

/// Submits job `id` of tenant `tenant`: `tasks` tasks of `gpus` whole GPUs each.
void submit(cluster_state& st, std::uint32_t id, std::uint32_t tenant, std::uint32_t gpus,
            std::uint32_t tasks = 1) {
  job_spec s;
  s.id = job_id(id);
  s.name = "j" + std::to_string(id);
  s.tenant = tenant_id(tenant);
  task_role role;
  role.name = "t";
  role.task_count = tasks;
  role.gpu = whole_gpus(gpus);
  s.roles.push_back(role);
  ASSERT_THAT(st.submit(s), IsOk());
  ASSERT_THAT(record(st, job_id(id), job_event::enqueue), IsOk());
}

/// The local GPU indices of task 0 of the only bind of `d`.
std::vector<std::uint32_t> local_gpus(const cluster& c, const decision& d) {
  std::vector<std::uint32_t> out;
  if (d.binds.size() != 1) return out;
  const task_placement& tp = d.binds[0].tasks[0];
  for (const device_share& s : tp.devices)
    out.push_back(s.device.value() - c.node(tp.node).first_device.value());
  return out;
}

capacity_placement hived_capacity(const fixture& f, capacity_params p) {
  auto placer = make_capacity_placer(capacity_placer_kind::hived, *f.description, &f.topo);
  EXPECT_THAT(placer, IsOk());
  auto c = capacity_placement::create(std::move(*placer), std::move(p));
  EXPECT_THAT(c, IsOk());
  return std::move(*c);
}

const hived_placement& hived_of(const capacity_placement& c) {
  return dynamic_cast<const placement_adapter<hived_placement>&>(c.placer()).inner();
}

/// Places, applies and commits job `id`; returns the decision.
decision place_commit(capacity_placement& c, cluster_state& st, std::uint32_t id) {
  auto d = c.place(st, job_id(id));
  EXPECT_THAT(d, IsOk());
  if (!d) return {};
  EXPECT_THAT(check_decision(st, *d), IsOk());
  if (!d->binds.empty()) {
    EXPECT_THAT(apply(st, *d), IsOk());
    c.commit(st, *d);
  }
  return *d;
}

TEST(CapacityHivedPlacer, AdmittedJobsGetHivedBuddyCells) {
  const fixture f = two_dgx();
  capacity_params p;
  p.quota = {16};
  capacity_placement c = hived_capacity(f, p);
  EXPECT_EQ(c.placer().name(), "hived");
  EXPECT_EQ(hived_of(c).vc_nodes(0), 2u);  // one VC spanning both servers
  cluster_state st(*f.description);
  submit(st, 0, 0, 1);
  submit(st, 1, 0, 2);
  c.rebuild(st);
  // j0 (1 GPU) splits n0 down to GPU 0; j1 (2 GPUs) then takes the free PCIe-switch pair 2-3 of
  // n0, not GPUs 1 and 2 (which would straddle two switches) and not the idle n1.
  const decision d0 = place_commit(c, st, 0);
  ASSERT_EQ(d0.binds.size(), 1u);
  EXPECT_EQ(d0.binds[0].tasks[0].node, node_id(0));
  EXPECT_EQ(local_gpus(*f.description, d0), (std::vector<std::uint32_t>{0}));
  const decision d1 = place_commit(c, st, 1);
  ASSERT_EQ(d1.binds.size(), 1u);
  EXPECT_EQ(d1.binds[0].tasks[0].node, node_id(0));
  EXPECT_EQ(local_gpus(*f.description, d1), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(c.usage(0), 3000);
  EXPECT_EQ(hived_of(c).free_leaf_cells(), 13);
  c.release(st, job_id(1));
  EXPECT_EQ(c.usage(0), 1000);
  EXPECT_EQ(hived_of(c).free_leaf_cells(), 15);
}

TEST(CapacityHivedPlacer, QuotaDecidesFirstAndAnUnplacedJobHoldsNothing) {
  const fixture f = two_dgx();
  capacity_params p;
  p.quota = {8, 8};
  p.borrow = false;
  capacity_placement c = hived_capacity(f, p);
  cluster_state st(*f.description);
  submit(st, 0, 0, 4, 2);  // tenant 0: two 4-GPU tasks
  submit(st, 1, 0, 1);     // tenant 0: over its quota
  submit(st, 2, 1, 4);     // tenant 1: 4 GPUs
  submit(st, 3, 1, 8);     // tenant 1: 8 GPUs, over its quota once j2 runs
  c.rebuild(st);
  // HiveD packs j0's two 4-GPU pods into one server.
  const decision d0 = place_commit(c, st, 0);
  ASSERT_EQ(d0.binds.size(), 1u);
  ASSERT_EQ(d0.binds[0].tasks.size(), 2u);
  EXPECT_EQ(d0.binds[0].tasks[0].node, d0.binds[0].tasks[1].node);
  const decision d1 = place_commit(c, st, 1);
  ASSERT_EQ(d1.deferrals.size(), 1u);
  EXPECT_EQ(d1.deferrals[0].reason, defer_reason::quota_exceeded);
  EXPECT_EQ(hived_of(c).free_leaf_cells(), 8);
  const decision d2 = place_commit(c, st, 2);
  ASSERT_EQ(d2.binds.size(), 1u);
  EXPECT_NE(d2.binds[0].tasks[0].node, d0.binds[0].tasks[0].node);
  EXPECT_EQ(place_commit(c, st, 3).deferrals.at(0).reason, defer_reason::quota_exceeded);
  EXPECT_EQ(c.usage(0), 8000);
  EXPECT_EQ(c.usage(1), 4000);
}

TEST(CapacityHivedPlacer, PhysicalMisfitIsFragmentedOrInsufficientAndChargesNoQuota) {
  const fixture f = two_dgx();
  capacity_params p;
  p.quota = {32};  // quota above the cluster: only the placer can say no
  capacity_placement c = hived_capacity(f, p);
  cluster_state st(*f.description);
  submit(st, 0, 0, 4);
  submit(st, 1, 0, 4);
  submit(st, 2, 0, 4);
  submit(st, 3, 0, 8);
  submit(st, 4, 0, 8, 2);
  c.rebuild(st);
  ASSERT_EQ(place_commit(c, st, 0).binds.size(), 1u);
  ASSERT_EQ(place_commit(c, st, 1).binds.size(), 1u);
  ASSERT_EQ(place_commit(c, st, 2).binds.size(), 1u);
  // 4 GPUs free on one server: an 8-GPU job needs a whole server (insufficient), and so does
  // the 16-GPU gang.
  const decision d3 = place_commit(c, st, 3);
  ASSERT_EQ(d3.deferrals.size(), 1u);
  EXPECT_EQ(d3.deferrals[0].reason, defer_reason::insufficient_capacity);
  EXPECT_EQ(place_commit(c, st, 4).deferrals.at(0).reason, defer_reason::insufficient_capacity);
  EXPECT_EQ(c.usage(0), 12'000);
  // Free j1 (the second half of n0): 8 GPUs free but 4 on each server: fragmented.
  ASSERT_THAT(record(st, job_id(1), job_event::cancel), IsOk());
  c.release(st, job_id(1));
  const decision again = place_commit(c, st, 3);
  ASSERT_EQ(again.deferrals.size(), 1u);
  EXPECT_EQ(again.deferrals[0].reason, defer_reason::fragmented);
  EXPECT_EQ(c.usage(0), 8000);
  EXPECT_EQ(hived_of(c).free_leaf_cells(), 8);
}

// Quotas 8/8: A's a0 and a1 start at 0 (a1 borrows B's idle quota); B's b0 arrives at 5.
const workload::trace reclaim{job("a0", "A", 0, 100, 8), job("a1", "A", 0, 100, 8),
                              job("b0", "B", 5, 50, 8)};

/// Runs `trace` under fifo + capacity with the HiveD placer and checks after every commit and
/// release that the GPUs HiveD's groups hold are the cluster's used GPUs, and that
/// free_leaf_cells() counts the rest (no leaked cells).
struct hived_run {
  sim_result result;
  std::int64_t final_free_leaves = -1;
  std::uint64_t checks = 0;
  std::vector<std::string> mismatches;
};

class leak_checked final : public placement_policy {
 public:
  leak_checked(placement_adapter<capacity_placement>& inner, std::uint32_t jobs, hived_run& out)
      : inner_(inner), jobs_(jobs), out_(out) {}
  [[nodiscard]] std::string_view name() const noexcept override { return inner_.name(); }
  [[nodiscard]] bool oversubscribes() const noexcept override { return false; }
  [[nodiscard]] bool per_tenant() const noexcept override { return inner_.per_tenant(); }
  [[nodiscard]] bool preempts() const noexcept override { return inner_.preempts(); }
  void set_time(std::int64_t now_ms) override { inner_.set_time(now_ms); }
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) override {
    return inner_.place(state, job);
  }
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job) override {
    return inner_.what_if(state, job);
  }
  void commit(const cluster_state& after, const decision& d) override {
    inner_.commit(after, d);
    check(after);
  }
  void release(const cluster_state& after, job_id job) override {
    inner_.release(after, job);
    check(after);
  }
  void rebuild(const cluster_state& state) override { inner_.rebuild(state); }

 private:
  void check(const cluster_state& st) {
    std::int64_t used = 0;
    for (std::uint32_t i = 0; i < st.cluster().device_count(); ++i)
      used += st.device_used(device_id(i)).milli_gpu > 0;
    const hived_placement& h = hived_of(inner_.inner());
    std::int64_t held = 0;
    for (std::uint32_t j = 0; j < jobs_; ++j) {
      const auto g = h.allocator().group("j" + std::to_string(j));
      if (!g) continue;
      for (const auto& [node, leaves] : g->physical_placement)
        held += static_cast<std::int64_t>(leaves.size());
    }
    const std::int64_t all = static_cast<std::int64_t>(st.cluster().device_count());
    ++out_.checks;
    if (held != used || h.free_leaf_cells() != all - used)
      out_.mismatches.push_back("HiveD holds " + std::to_string(held) + " leaves, " +
                                std::to_string(h.free_leaf_cells()) + " free; " +
                                std::to_string(used) + " GPUs used");
  }
  placement_adapter<capacity_placement>& inner_;
  std::uint32_t jobs_;
  hived_run& out_;
};

hived_run run_hived(const fixture& f, const workload::trace& trace, capacity_params p) {
  hived_run out;
  placement_adapter<capacity_placement> place(
      hived_capacity(f, std::move(p)), "capacity",
      placement_traits{.per_tenant = true, .preempts = true});
  leak_checked checked(place, static_cast<std::uint32_t>(trace.size()), out);
  auto order = make_ordering("fifo", {});
  EXPECT_THAT(order, IsOk());
  auto r = simulate(f.description, trace, **order, checked, {});
  EXPECT_THAT(r, IsOk());
  out.result = std::move(*r);
  out.final_free_leaves = hived_of(place.inner()).free_leaf_cells();
  return out;
}

TEST(CapacityHivedPlacer, QuotaPreemptionReleasesTheVictimsCellsInHived) {
  const fixture f = two_dgx();
  capacity_params p;
  p.quota = {8, 8};
  p.preemption = capacity_preemption_mode::classic;
  const hived_run run = run_hived(f, reclaim, p);
  const sim_result& r = run.result;
  // As with the packer (preemption_test.cpp): a1, the latest admitted borrower, is the victim;
  // it stops at 5 and frees its server at 35, where HiveD binds b0 to the cells a1 left.
  EXPECT_EQ(r.counters.preemptions, 1u);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
  EXPECT_EQ(r.jobs[2].first_start_ms, 35'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 85'000);
  EXPECT_EQ(r.jobs[1].finish_ms, 210'000);  // restarts at 85 with 95 s + 30 s left
  EXPECT_GT(run.checks, 6u);
  EXPECT_TRUE(run.mismatches.empty()) << run.mismatches.front();
  EXPECT_EQ(run.final_free_leaves, 16);
}

TEST(CapacityHivedPlacer, VictimsOfTwoPreemptionRoundsLeaveNoCellsBehind) {
  // preemption_test.cpp's VictimsInFlightAreNotPickedTwice with HiveD binding: A's four 4-GPU
  // jobs fill both servers; b0 reclaims a3 and a2 (one server), b1 reclaims them again at 85 and
  // binds on n0 at 100 when a0 and a1 end, before its victims terminate at 115.
  const workload::trace t{job("a0", "A", 0, 100, 4), job("a1", "A", 0, 100, 4),
                          job("a2", "A", 0, 100, 4), job("a3", "A", 0, 100, 4),
                          job("b0", "B", 5, 50, 8),  job("b1", "B", 10, 50, 8)};
  const fixture f = two_dgx();
  capacity_params p;
  p.quota = {8, 8};
  p.preemption = capacity_preemption_mode::classic;
  const hived_run run = run_hived(f, t, p);
  const sim_result& r = run.result;
  EXPECT_EQ(r.counters.preemptions, 4u);
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
  EXPECT_EQ(r.jobs[2].preemptions, 2u);
  EXPECT_EQ(r.jobs[3].preemptions, 2u);
  EXPECT_EQ(r.jobs[4].first_start_ms, 35'000);
  EXPECT_EQ(r.jobs[5].first_start_ms, 100'000);
  EXPECT_EQ(r.jobs[2].finish_ms, 270'000);
  EXPECT_EQ(r.jobs[3].finish_ms, 270'000);
  EXPECT_TRUE(run.mismatches.empty()) << run.mismatches.front();
  EXPECT_EQ(run.final_free_leaves, 16);
}

TEST(CapacityHivedPlacer, SpecParameterSelectsThePlacer) {
  const fixture f = two_dgx();
  const sim_result packer = simulate_spec(f, reclaim, "fifo+capacity:quota=8/8");
  const sim_result explicit_packer =
      simulate_spec(f, reclaim, "fifo+capacity:quota=8/8,placer=packer");
  const sim_result hived = simulate_spec(f, reclaim, "fifo+capacity:quota=8/8,placer=hived");
  for (std::size_t j = 0; j < reclaim.size(); ++j) {
    EXPECT_EQ(explicit_packer.jobs[j].first_start_ms, packer.jobs[j].first_start_ms);
    EXPECT_EQ(hived.jobs[j].first_start_ms, packer.jobs[j].first_start_ms);
  }
  EXPECT_EQ(hived.jobs[2].first_start_ms, 100'000);  // no preemption: b0 waits for a borrower
  EXPECT_EQ(hived.end_ms, 150'000);
}

/// An embedder's placer: binds each admitted job's single task to the highest-numbered free GPUs
/// of node 0 and records what capacity asks of it.
class top_gpus_placer final : public placement_policy {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return "top"; }
  [[nodiscard]] bool oversubscribes() const noexcept override { return false; }
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) override {
    asked.push_back(job.value());
    return what_if(state, job);
  }
  [[nodiscard]] result<decision> what_if(const cluster_state& state, job_id job) override {
    const job_record* rec = state.find_job(job);
    decision d;
    const node_info& n = state.cluster().node(node_id(0));
    task_placement tp{first_task(rec->spec, 0), node_id(0), {}};
    for (std::uint32_t k = n.device_count;
         k-- > 0 && tp.devices.size() < rec->spec.roles[0].gpu.count;) {
      const device_id dev(n.first_device.value() + k);
      if (state.device_used(dev).milli_gpu == 0) tp.devices.push_back({dev, 1000, 0});
    }
    if (tp.devices.size() < rec->spec.roles[0].gpu.count) {
      d.deferrals.push_back({job, defer_reason::insufficient_capacity, "node 0 is full"});
    } else {
      d.binds.push_back({job, {tp}});
    }
    if (misbehave) d.preemptions.push_back({job_id(99), "not mine to do"});
    return d;
  }
  void commit(const cluster_state&, const decision& d) override { commits += d.binds.size(); }
  void release(const cluster_state&, job_id job) override { released.push_back(job.value()); }
  void rebuild(const cluster_state&) override { ++rebuilds; }

  std::vector<std::uint32_t> asked;
  std::vector<std::uint32_t> released;
  std::size_t commits = 0;
  std::size_t rebuilds = 0;
  bool misbehave = false;
};

TEST(CapacityPlacer, AnEmbeddersPlacerBindsOnlyAdmittedJobs) {
  const fixture f = two_dgx();
  auto own = std::make_unique<top_gpus_placer>();
  top_gpus_placer& placer = *own;
  capacity_params p;
  p.quota = {3};
  p.borrow = false;
  auto c = capacity_placement::create(std::move(own), p);
  ASSERT_THAT(c, IsOk());
  cluster_state st(*f.description);
  submit(st, 0, 0, 2);
  submit(st, 1, 0, 2);
  submit(st, 2, 0, 1);
  c->rebuild(st);
  const decision d0 = place_commit(*c, st, 0);
  EXPECT_EQ(local_gpus(*f.description, d0), (std::vector<std::uint32_t>{7, 6}));
  // j1 would exceed the quota of 3 GPUs: the placer is not asked.
  EXPECT_EQ(place_commit(*c, st, 1).deferrals.at(0).reason, defer_reason::quota_exceeded);
  const decision d2 = place_commit(*c, st, 2);
  EXPECT_EQ(local_gpus(*f.description, d2), (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(placer.asked, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(placer.commits, 2u);
  EXPECT_EQ(placer.rebuilds, 1u);
  c->release(st, job_id(0));
  EXPECT_EQ(placer.released, (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(c->usage(0), 1000);
  // A placer answering with preemptions breaks the contract: an error, nothing charged.
  placer.misbehave = true;
  ASSERT_THAT(record(st, job_id(0), job_event::cancel), IsOk());
  EXPECT_THAT(c->place(st, job_id(1)),
              ErrorContains("placer top answered job 1 with more than a bind or a deferral"));
  EXPECT_EQ(c->usage(0), 1000);
}

TEST(CapacityPlacer, BadPlacerInputIsRefused) {
  const fixture f = two_dgx();
  EXPECT_THAT(capacity_placement::create(nullptr, {}), ErrorContains("capacity: no placer"));
  EXPECT_THAT(make_capacity_placer(capacity_placer_kind::hived, *f.description, nullptr),
              ErrorContains("placer=hived needs the cluster topology"));
  EXPECT_THAT(make_placement("capacity", {{"placer", "gandiva"}}, *f.description, &f.topo),
              ErrorContains("parameter placer: 'gandiva' is not packer or hived"));
  EXPECT_THAT(
      make_placement("capacity", {{"placer", "hived"}, {"fit", "worst"}}, *f.description, &f.topo),
      ErrorContains("parameter fit applies to placer=packer only, not placer=hived"));
  EXPECT_THAT(make_placement("capacity", {{"placer", "hived"}}, *f.description, nullptr),
              ErrorContains("placer=hived needs the cluster topology"));
  EXPECT_THAT(make_placement("capacity", {{"placer", "hived"}}, *f.description, &f.topo), IsOk());
  EXPECT_EQ(to_string(capacity_placer_kind::packer), "packer");
  EXPECT_EQ(to_string(capacity_placer_kind::hived), "hived");
}

}  // namespace
}  // namespace hetsched::sim
