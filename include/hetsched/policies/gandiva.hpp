// SPDX-License-Identifier: MIT
// gandiva_reactive: Gandiva's reactive placement (affinity-based packing with time-slicing) as a
// stateful policy that places one queued job at a time.
//
// Gandiva (Xiao et al., OSDI'18, §4) gives every server an affinity: the GPU count of the jobs it
// hosts. A new job of k GPUs goes, in order, (1) to a server of affinity k with k free GPUs,
// (2) to an empty server, (3) to a server of another affinity with k free GPUs, (4) by
// oversubscription onto the GPUs of a running job of the same size on a server of affinity k
// (time-slicing: that job is suspended), (5) else it waits. 1-GPU jobs therefore collect on the
// same servers and larger jobs find whole servers. The object keeps incremental indices over the
// servers so one placement costs O(log n) in the common case; the caller keeps them in sync with
// commit() / release() / rebuild() after it changes the cluster state. Gandiva's introspective
// mode lives in gandiva_time_slicing.hpp, gandiva_packing.hpp, migration_planner.hpp and
// grow_shrink.hpp (semantics and interpretations: docs/gandiva.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/policies/gandiva_devices.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Tunables of gandiva_reactive.
struct gandiva_params {
  /// Allows stage (4): time-slicing a new job onto the GPUs of a running job of the same size.
  bool allow_oversubscription = true;
  /// Stage (4) time-slices onto the GPU set of a running job (the devices it holds) only while
  /// fewer than this many suspended jobs are remembered on each of those GPUs (the default 1
  /// shares every GPU set between at most two jobs); 0 disables stage (4) like
  /// allow_oversubscription = false.
  std::uint32_t max_time_sliced_jobs_per_gpu_set = 1;

  friend bool operator==(const gandiva_params&, const gandiva_params&) = default;
};

/// Gandiva's reactive placement. @see Gandiva: Introspective Cluster Scheduling for Deep Learning
/// (Xiao et al., OSDI'18).
///
/// Terms. A server's *free GPUs* are its devices that were healthy (device and node) at the last
/// rebuild() and that no task holds. The jobs a server *hosts* are those holding resources on it
/// (scheduled or running). The *affinity* of a server is the GPU count (devices on that server)
/// of the lowest-id job it hosts, 0 when it hosts none (an *empty* server); Gandiva's servers
/// host one job size each, stage (3) is the only way sizes mix. A GPU's *time-slicing count* is
/// the number of suspended jobs whose remembered placement includes it; the *GPU set* of a running
/// job is the devices it holds, and the set's time-slicing count is the largest count among them.
/// A server's *time-sliced GPUs* are the sum of its GPUs' time-slicing counts, and its
/// *time-slicing load* is time-sliced GPUs / GPUs of the server (suspended jobs per GPU, compared
/// exactly); time_sliced(n) reports the number of suspended jobs remembered on it.
///
/// Supported jobs: exactly one task asking for k >= 1 whole GPUs (milli_per_gpu 1000). Other
/// jobs (several tasks, fractional or no GPUs) and jobs asking for more GPUs than the largest
/// server has are deferred with defer_reason::topology_unsatisfiable and a message saying why.
///
/// Order of candidate servers for a job of k GPUs, and every tie-break:
/// 1. affinity k and >= k free GPUs: most free GPUs first, then lower node id;
/// 2. empty with >= k free GPUs: lower node id first;
/// 3. another affinity (not 0, not k) and >= k free GPUs: most free GPUs first, then lower id;
/// 4. if params.allow_oversubscription, servers of affinity k whose time-sliced GPUs are below
///    params.max_time_sliced_jobs_per_gpu_set x their GPUs: lowest time-slicing load first (the
///    oversubscription is balanced across same-affinity servers), then lower node id. On a server
///    the victim is a hosted job that is running, preemptible, has one task with exactly k whole
///    GPUs there, is the only holder of them, and whose GPU set has a time-slicing count below
///    the limit: lowest count first (balanced inside the server), then lowest job id. The
///    decision suspends it and binds the new job onto its devices; a server without a victim is
///    skipped;
/// 5. otherwise a deferral with defer_reason::insufficient_capacity.
/// A candidate of stages 1-3 is taken only if the cluster state confirms, on a healthy node, k
/// fully free healthy devices of the requested type with the requested GPU memory and room for the
/// task's CPU, memory and extended resources; else the next candidate is tried. On the chosen
/// server the devices are, with a node topology of at most max_packer_gpus GPUs, allocate(scores,
/// free devices, {}, k, lexmax) (best connected; its tie-breaks); otherwise the k lowest local
/// indices. Every share is {device, 1000, gpu.memory_mib}, as check_decision demands.
///
/// Cost: stages 1 and 3 walk ordered sets and stop at the first server with fewer than k free
/// GPUs; stage 2 walks empty servers in id order (skipping only those with fewer than k free
/// GPUs); each stops at the first server the state confirms, so a placement on a homogeneous
/// cluster costs O(log n) plus the packer. Stage 4 walks same-affinity servers until a victim is
/// found; it stops at the first server whose load reaches the limit (every later one has
/// reached it too).
class gandiva_reactive {
 public:
  /// Makes the policy for `description` without topologies (lowest free indices win). The
  /// indices start as for an empty state; call rebuild() for a state with jobs or faults.
  gandiva_reactive(const cluster& description, gandiva_params params = {});
  /// Makes the policy with the node topologies of `topology` (node ids must agree, as
  /// to_cluster() guarantees; nodes beyond topology.node_count() get none).
  gandiva_reactive(const cluster& description, const cluster_topology& topology,
                   gandiva_params params = {});

  /// Returns the decision for queued job `job` of `state` (a bind, a suspension plus a bind, or a
  /// deferral); every returned decision passes check_decision(state, d). No side effects.
  /// Errors: not_found for an unknown job, failed_precondition for a job that is not queued,
  /// invalid_argument if `state` describes a cluster of a different size.
  [[nodiscard]] result<decision> place(const cluster_state& state, job_id job) const;

  /// Updates the indices after the caller applied `d` to the state: binds and resumptions hold
  /// devices, suspensions free them and count as time-sliced, preemptions drop the job,
  /// partial releases drop the released tasks, migrations move tasks; deferrals change nothing.
  /// Meant for a `d` that apply() accepted; entries for jobs the indices do not track are
  /// ignored (as release() ignores them). Errors (and nothing changes): invalid_argument if a
  /// bind or migration names a node or device outside the cluster, a device that is not on the
  /// task's node, or the same device twice in one task.
  [[nodiscard]] result<void> commit(const decision& d);
  /// Updates the indices after job `job` released its resources or its remembered placement
  /// (finished, failed, cancelled, requeued). Unknown jobs are ignored.
  void release(job_id job);
  /// Recomputes every index from `state` (health, allocations, suspended jobs). Errors (and
  /// nothing changes): invalid_argument if `state` describes a cluster of another shape (node
  /// count, device count or a node's devices differ from the policy's cluster).
  [[nodiscard]] result<void> rebuild(const cluster_state& state);

  /// Returns the affinity of node `n` (0 = empty). Precondition: n is a node of the cluster.
  [[nodiscard]] std::uint32_t affinity(node_id n) const noexcept;
  /// Returns the free GPUs of node `n` as the indices see them.
  [[nodiscard]] std::uint32_t free_gpus(node_id n) const noexcept;
  /// Returns the number of suspended jobs whose remembered placement lies on node `n`.
  [[nodiscard]] std::uint32_t time_sliced(node_id n) const noexcept;
  /// Returns the time-sliced GPUs of node `n` (the sum of its GPUs' time-slicing counts).
  [[nodiscard]] std::uint32_t time_sliced_gpus(node_id n) const noexcept;
  /// Returns the time-slicing count of device `d` (suspended jobs remembered on it).
  /// Precondition: d is a device of the cluster.
  [[nodiscard]] std::uint32_t time_sliced_on(device_id d) const noexcept;

  /// Equal if the parameters, topologies and all indices are equal (commit/release vs rebuild).
  friend bool operator==(const gandiva_reactive&, const gandiva_reactive&) = default;

 private:
  struct node_entry {
    std::uint32_t first_device = 0;          ///< Id of the server's first device.
    std::uint32_t gpus = 0;                  ///< GPUs of the server (healthy or not).
    std::uint32_t free = 0;                  ///< Free healthy GPUs.
    std::uint32_t suspended = 0;             ///< Suspended jobs remembered here.
    std::uint32_t sliced_gpus = 0;           ///< Time-sliced GPUs.
    std::map<job_id, std::uint32_t> hosted;  ///< Hosted job -> its GPUs on this node.
    friend bool operator==(const node_entry&, const node_entry&) = default;
  };
  struct job_entry {
    bool suspended = false;
    /// Per placed task, in placement order.
    std::vector<task_placement> tasks;
    friend bool operator==(const job_entry&, const job_entry&) = default;
  };
  /// (UINT32_MAX - free GPUs, node id): most free first, then lower id.
  using load_key = std::pair<std::uint32_t, std::uint32_t>;
  /// Stage (4) order: lowest time-slicing load sliced_gpus / gpus (exact), then lower node id.
  struct slice_key {
    std::uint32_t sliced_gpus = 0;
    std::uint32_t gpus = 1;
    std::uint32_t node = 0;
    friend bool operator<(const slice_key& a, const slice_key& b) noexcept {
      const std::uint64_t lhs = std::uint64_t{a.sliced_gpus} * b.gpus;
      const std::uint64_t rhs = std::uint64_t{b.sliced_gpus} * a.gpus;
      if (lhs != rhs) return lhs < rhs;
      return a.node < b.node;
    }
    friend bool operator==(const slice_key&, const slice_key&) = default;
  };
  [[nodiscard]] slice_key slice_key_of(node_id n) const noexcept;

  void init(const cluster& description);
  void unindex(node_id n);
  void index(node_id n);
  /// Checks that every placement of `d` names nodes and devices of the cluster consistently.
  [[nodiscard]] result<void> check_placements(const decision& d) const;
  void add_job(job_id job, bool suspended, std::vector<task_placement> placement);
  /// Forgets job `job` and returns its tracked placement (empty if unknown).
  std::vector<task_placement> drop_job(job_id job);
  [[nodiscard]] std::optional<task_placement> try_node(const cluster_state& state, node_id n,
                                                       const job_spec& spec) const;
  [[nodiscard]] std::optional<decision> try_oversubscribe(const cluster_state& state, node_id n,
                                                          const job_spec& spec) const;

  gandiva_params params_;
  node_score_table scores_;             ///< Per node: its GPUs' pair scores, or none.
  std::uint32_t max_gpus_ = 0;          ///< GPUs of the largest node.
  std::vector<bool> usable_;            ///< Per device: healthy at the last rebuild.
  std::vector<std::uint32_t> holders_;  ///< Per device: tracked tasks holding it.
  std::vector<std::uint32_t> sliced_;   ///< Per device: its time-slicing count.
  std::vector<node_entry> nodes_;
  std::map<job_id, job_entry> jobs_;
  std::map<std::uint32_t, std::set<load_key>> by_affinity_;  ///< Non-empty servers per affinity.
  std::set<load_key> non_empty_;                             ///< Every non-empty server.
  std::set<std::uint32_t> empty_;                            ///< Empty servers by id.
  /// Non-empty servers per affinity in stage (4) order.
  std::map<std::uint32_t, std::set<slice_key>> by_time_sliced_;
};

}  // namespace hetsched
