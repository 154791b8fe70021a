// SPDX-License-Identifier: MIT
// Property test over every simulator placement (STYLE.md rule 33, for placement_policy): random,
// seeded churn of arrivals, completions, node failures and repairs (rebuild), driven through the
// placement protocol the engine uses (place -> apply -> commit, release, rebuild, "preempt now,
// start later", plan_migrations). Every decision passes check_decision, binds only queued jobs,
// each at most once, on healthy devices of healthy nodes; migrations move running jobs onto
// healthy devices; and two runs with the same seed return identical decisions.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/workload/synthetic.hpp>

#include "support/matchers.hpp"
#include "support/sim_fixtures.hpp"

namespace hetsched::sim {
namespace {

using hetsched::testing::IsOk;

/// Four DGX-1 V100 servers (32 GPUs) in one rack.
testing::sim_fixture four_dgx() {
  testing::sim_fixture f{
      cluster_builder("c").add_nodes(node_template::dgx1_v100, 4, "n").racks(1).build().value(),
      nullptr};
  f.description = std::make_shared<const cluster>(to_cluster(f.topo).value());
  return f;
}

/// Drives one placement through `steps` random steps; records every decision it returns.
class churn {
 public:
  churn(const testing::sim_fixture& f, std::string_view spec_text, std::uint64_t seed)
      : state_(f.description), rng_(seed), text_(spec_text) {
    auto spec = parse_policy_spec(spec_text);
    EXPECT_THAT(spec, IsOk());
    // FGD's target workload: the task classes arrive() draws from (CPU/MILLI/NUM/COUNT/SPEC).
    if (spec->placement == "fgd" && !spec->placement_params.contains("policy"))
      spec->placement_params["classes"] =
          "2000/1000/1/6/;2000/500/1/2/;2000/1000/2/4/;2000/1000/4/4/;2000/1000/8/4/;total=20";
    auto inst = make_policy(*spec, *f.description, &f.topo);
    EXPECT_THAT(inst, IsOk());
    place_ = std::move(inst->place);
    place_->rebuild(state_);
  }

  /// Every decision the placement returned, in order.
  std::vector<decision> run(int steps) {
    for (int s = 0; s < steps && !::testing::Test::HasFatalFailure(); ++s) {
      now_ms_ += 10'000;
      const double u = rng_.uniform();
      if (u < 0.45) {
        arrive();
      } else if (u < 0.80) {
        complete();
      } else if (u < 0.90) {
        fail_node();
      } else {
        repair_node();
      }
      migrate();
      pass();
    }
    return log_;
  }

  std::uint64_t binds = 0;
  std::uint64_t migrations = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t node_failures = 0;

 private:
  void arrive() {
    job_spec s;
    s.id = job_id(next_id_++);
    s.name = "j" + std::to_string(s.id.value());
    s.tenant = tenant_id(static_cast<std::uint32_t>(rng_.below(2)));
    s.priority = rng_.below(3) == 0 ? -1 : 0;
    s.preemptible = rng_.uniform() < 0.8;
    s.retry_limit = 2;
    task_role r;
    r.name = "t";
    constexpr std::uint32_t sizes[] = {1, 1, 2, 4, 8};
    const std::uint32_t gpus = sizes[rng_.below(5)];
    r.task_count = gpus >= 4 ? 1 + static_cast<std::uint32_t>(rng_.below(2)) : 1;
    r.gpu = whole_gpus(gpus);
    if (gpus == 1 && rng_.below(4) == 0) r.gpu.milli_per_gpu = 500;
    r.milli_cpu = 2000;
    r.memory_mib = 4096;
    s.roles.push_back(r);
    ASSERT_THAT(state_.submit(std::move(s)), IsOk());
    ASSERT_THAT(record(state_, job_id(next_id_ - 1), job_event::enqueue), IsOk());
  }

  std::vector<job_id> jobs_in(job_state st) const {
    std::vector<job_id> out;
    for (const auto& [id, rec] : state_.jobs())
      if (rec.status.state == st) out.push_back(id);
    return out;
  }

  void complete() {
    const std::vector<job_id> running = jobs_in(job_state::running);
    if (running.empty()) return;
    const job_id j = running[rng_.below(running.size())];
    ASSERT_THAT(record(state_, j, job_event::succeed), IsOk());
    place_->release(state_, j);
    ASSERT_THAT(state_.forget(j), IsOk());
    resume_suspended();
  }

  // Suspended jobs resume when their remembered GPUs are free again (as the engine does).
  void resume_suspended() {
    for (const job_id j : jobs_in(job_state::suspended)) {
      decision d;
      d.resumes.push_back(resumption{j});
      if (!check_decision(state_, d)) continue;
      ASSERT_THAT(apply(state_, d), IsOk());
      place_->set_time(now_ms_);
      place_->commit(state_, d);
    }
  }

  void fail_node() {
    std::vector<node_id> healthy;
    for (std::uint32_t n = 0; n < state_.cluster().node_count(); ++n)
      if (state_.node_health(node_id(n)) == health::healthy) healthy.push_back(node_id(n));
    if (healthy.size() <= 1) return;  // keep one server up
    const node_id node = healthy[rng_.below(healthy.size())];
    ++node_failures;
    std::set<job_id> victims;
    for (const auto& [id, rec] : state_.jobs()) {
      const job_state st = rec.status.state;
      if (st != job_state::running && st != job_state::suspended) continue;
      for (const task_placement& p : rec.placement)
        if (p.node == node) victims.insert(id);
    }
    ASSERT_THAT(state_.set_node_health(node, health::unhealthy), IsOk());
    for (const job_id v : victims) {
      ASSERT_THAT(record(state_, v, job_event::fail), IsOk());
      place_->release(state_, v);
      auto st = state_.status(v);
      ASSERT_THAT(st, IsOk());
      if (st->state == job_state::failed) {
        ASSERT_THAT(state_.forget(v), IsOk());
      }
    }
    place_->rebuild(state_);
  }

  void repair_node() {
    std::vector<node_id> down;
    for (std::uint32_t n = 0; n < state_.cluster().node_count(); ++n)
      if (state_.node_health(node_id(n)) != health::healthy) down.push_back(node_id(n));
    if (down.empty()) return;
    ASSERT_THAT(state_.set_node_health(down[rng_.below(down.size())], health::healthy), IsOk());
    place_->rebuild(state_);
  }

  // Checks the properties of one decision before it is applied.
  void check(const decision& d) {
    EXPECT_THAT(check_decision(state_, d), IsOk()) << text_;
    std::set<job_id> bound;
    for (const binding& b : d.binds) {
      EXPECT_TRUE(bound.insert(b.job).second)
          << text_ << ": job " << b.job.value() << " bound twice";
      const job_record* rec = state_.find_job(b.job);
      ASSERT_NE(rec, nullptr);
      EXPECT_EQ(rec->status.state, job_state::queued) << text_ << ": job " << b.job.value();
      for (const task_placement& p : b.tasks) check_healthy(p);
    }
    for (const migration& m : d.migrations) {
      const job_record* rec = state_.find_job(m.job);
      ASSERT_NE(rec, nullptr);
      EXPECT_EQ(rec->status.state, job_state::running)
          << text_ << ": migrated job " << m.job.value();
      for (const task_placement& p : m.tasks) check_healthy(p);
    }
  }

  void check_healthy(const task_placement& p) {
    EXPECT_EQ(state_.node_health(p.node), health::healthy) << text_ << ": node " << p.node.value();
    for (const device_share& s : p.devices)
      EXPECT_EQ(state_.device_health(s.device), health::healthy)
          << text_ << ": device " << s.device.value();
  }

  void migrate() {
    if (!place_->migrates()) return;
    place_->set_time(now_ms_);
    auto d = place_->plan_migrations(state_);
    ASSERT_THAT(d, IsOk());
    if (d->empty()) return;
    log_.push_back(*d);
    check(*d);
    ASSERT_THAT(apply(state_, *d), IsOk());
    place_->commit(state_, *d);
    migrations += d->migrations.size();
  }

  // One scheduling pass over the queued jobs in id order, as the engine's FIFO pass.
  void pass() {
    for (const job_id j : jobs_in(job_state::queued)) {
      const job_record* rec = state_.find_job(j);
      if (rec == nullptr || rec->status.state != job_state::queued) continue;
      place_->set_time(now_ms_);
      auto d = place_->place(state_, j);
      ASSERT_THAT(d, IsOk()) << text_;
      log_.push_back(*d);
      check(*d);
      if (d->binds.empty() && d->preemptions.empty()) continue;
      if (d->binds.empty()) {
        // "Preempt now, start later": commit while the victims hold their GPUs, then the kill
        // completes (no delay here) and each victim is requeued and released.
        place_->commit(state_, *d);
        for (const preemption& p : d->preemptions) {
          decision kill;
          kill.preemptions.push_back(p);
          ASSERT_THAT(apply(state_, kill), IsOk()) << text_;
          ASSERT_THAT(record(state_, p.job, job_event::requeue), IsOk());
          place_->release(state_, p.job);
          ++preemptions;
        }
        continue;
      }
      ASSERT_THAT(apply(state_, *d), IsOk()) << text_;
      place_->commit(state_, *d);
      for (const preemption& p : d->preemptions) {
        ASSERT_THAT(record(state_, p.job, job_event::requeue), IsOk());
        place_->release(state_, p.job);
        ++preemptions;
      }
      for (const binding& b : d->binds) {
        ASSERT_THAT(record(state_, b.job, job_event::start), IsOk());
        ++binds;
      }
    }
  }

  cluster_state state_;
  workload::split_rng rng_;
  std::string text_;
  std::unique_ptr<placement_policy> place_;
  std::vector<decision> log_;
  std::uint32_t next_id_ = 0;
  std::int64_t now_ms_ = 0;
};

class PlacementProperty : public ::testing::TestWithParam<std::string_view> {};

TEST_P(PlacementProperty, RandomChurnKeepsEveryInvariantAndIsDeterministic) {
  const testing::sim_fixture f = four_dgx();
  for (const std::uint64_t seed : {1u, 2u}) {
    churn a(f, GetParam(), seed);
    const std::vector<decision> first = a.run(150);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_GT(a.binds, 20u);
    EXPECT_GT(a.node_failures, 3u);
    churn b(f, GetParam(), seed);
    EXPECT_EQ(first, b.run(150)) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(
    EverySimPlacement, PlacementProperty,
    ::testing::Values("fifo+packer", "fifo+packer:fit=worst", "fifo+packer:migrate=1",
                      "fifo+gandiva", "fifo+gandiva:migrate=0,oversubscribe=0",
                      "fifo+capacity:quota=16/16", "fifo+capacity:quota=16/16,preemption=classic",
                      "fifo+capacity:quota=16/16,preemption=fair",
                      "fifo+capacity:quota=16/16,preemption=proportional", "fifo+hived:quota=16/16",
                      "fifo+hived:quota=16/16,preemption=0", "fifo+fgd", "fifo+fgd:policy=best_fit",
                      "fifo+fgd:policy=dot_product", "fifo+fgd:policy=gpu_packing",
                      "fifo+fgd:policy=gpu_clustering", "fifo+fgd:policy=random", "fifo+first-fit",
                      "fifo+random:seed=3"),
    [](const ::testing::TestParamInfo<std::string_view>& param_info) {
      std::string name;
      for (const char c : param_info.param.substr(5))
        name += (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
      return name;
    });

}  // namespace
}  // namespace hetsched::sim
