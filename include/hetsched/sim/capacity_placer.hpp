// SPDX-License-Identifier: MIT
// The placer behind capacity admission: quotas are virtual (issue 3 §2), so capacity_placement
// decides only what is admitted (quota, borrowing, preemption for quota) and a placer binds each
// admitted job to nodes and GPUs.
//
// A placer is the small runtime interface capacity_placer (place an admitted job: bind or defer;
// commit; release; rebuild). Two come with the simulator, chosen by make_capacity_placer() or by
// the spec parameter `capacity:placer=packer|hived`: the indexed packer (the default) and HiveD's
// buddy-cell allocator with one virtual cluster spanning the whole cluster. An embedder plugs its
// own by deriving from capacity_placer or wrapping any job_placement in capacity_placer_adapter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/sim/placement.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched::sim {

/// Binds jobs that capacity admission admitted. Contract (capacity_placement relies on it):
/// - place(state, job) is asked only for a job whose quota is admitted now; it returns either
///   one bind of that job that passes check_decision(state, d), or the job's deferral
///   (insufficient_capacity, fragmented or topology_unsatisfiable), never preemptions,
///   suspensions or migrations: preemption is capacity's. A deferral leaves the placer as it was,
///   so a job that does not fit physically holds no quota and no cells (capacity charges quota
///   only when a bind is committed).
/// - commit(after, d) follows every decision the engine applies through capacity_placement, not
///   only the placer's binds (victims marked "preempt now, start later" included);
///   release(after, job) follows every job that freed its resources (finish, failure, requeue
///   after preemption, cancel), whoever placed it; rebuild(state) follows health changes.
class capacity_placer {
 public:
  virtual ~capacity_placer() = default;
  /// Returns the placer's name ("packer", "hived"), for messages.
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual result<decision> place(const cluster_state& state, job_id job) = 0;
  virtual void commit(const cluster_state& after, const decision& d) = 0;
  virtual void release(const cluster_state& after, job_id job) = 0;
  virtual void rebuild(const cluster_state& state) = 0;
};

/// Wraps a job_placement (placement.hpp) as a capacity_placer. P must keep the contract above.
template <job_placement P>
class capacity_placer_adapter final : public capacity_placer {
 public:
  capacity_placer_adapter(P inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) override {
    return inner_.place(state, job);
  }
  void commit(const cluster_state& after, const decision& d) override { inner_.commit(after, d); }
  void release(const cluster_state& after, job_id job) override { inner_.release(after, job); }
  void rebuild(const cluster_state& state) override { inner_.rebuild(state); }
  [[nodiscard]] P& inner() noexcept { return inner_; }
  [[nodiscard]] const P& inner() const noexcept { return inner_; }

 private:
  P inner_;
  std::string name_;
};

/// The placers that come with the simulator.
enum class capacity_placer_kind : std::uint8_t {
  /// indexed_packer (placement.hpp) with the given node_fit: today's capacity placement.
  packer,
  /// HiveD (hived_placement in placer mode, quota_placement.hpp): cells derived from the
  /// topology (top cells up to racks), one VC "vc0" owning every node-level cell, every admitted
  /// GPU job a guaranteed affinity group of that VC at priority 0 whatever its tenant and trace
  /// priority, HiveD preemption off. Jobs with a CPU-only task are deferred as
  /// topology_unsatisfiable.
  hived,
};

/// Returns "packer" or "hived".
[[nodiscard]] std::string_view to_string(capacity_placer_kind kind) noexcept;

/// Returns the placer `kind` for `description` (node topologies from `topology` when not null;
/// `fit` is the packer's and ignored by HiveD). Errors: invalid_argument when kind is hived and
/// topology is null; those of hived_placement::create.
[[nodiscard]] result<std::unique_ptr<capacity_placer>> make_capacity_placer(
    capacity_placer_kind kind, const cluster& description, const cluster_topology* topology,
    node_fit fit = node_fit::best);

}  // namespace hetsched::sim
