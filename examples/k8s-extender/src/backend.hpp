// SPDX-License-Identifier: MIT
// The placement backends behind the extender: the topology-aware packer, HiveD and any registry
// policy through the policy contract (policy_backend.hpp).
//
// A backend answers for one pod at a time and is called with the extender's lock held, so it
// needs no synchronization of its own. filter/prioritize/preempt only decide (HiveD may
// lazy-preempt inside schedule(), as hivedscheduler does); bind() commits and release() undoes a
// bind. Every error leaves the backend unchanged. Candidate nodes are known to the backend (the
// extender screens unknown names first).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/hived_config.hpp>
#include <hetsched/topology/templates.hpp>

#include "protocol.hpp"

#include <nlohmann/json.hpp>

namespace hetsched::k8s {

/// A committed placement: node, GPU (leaf) indices and backend-specific bind info (HiveD's
/// PodBindInfo as JSON; null for the packer).
struct placement {
  std::string node;
  std::vector<std::int64_t> gpus;
  nlohmann::json bind_info;
};

/// One placement backend. Not internally synchronized.
class backend {
 public:
  virtual ~backend() = default;
  /// Returns "packer", "hived" or "policy" (also the state file's backend kind).
  [[nodiscard]] virtual std::string_view kind() const noexcept = 0;
  /// Returns true if `node` is a node of the backend's cluster.
  [[nodiscard]] virtual bool knows_node(const std::string& node) const = 0;
  /// Returns ok if the backend can read the pod's request. Errors: invalid_argument (bad or
  /// missing annotation, a request no node could ever hold).
  [[nodiscard]] virtual result<void> check_pod(const pod_info& pod) const = 0;
  /// Records the health of the nodes whose health is known (node_health::unknown leaves a node
  /// as it was) and returns the previous health of the nodes that changed, so that calling it
  /// again with that list undoes it. The packer places nothing on an unhealthy node; HiveD marks
  /// it bad (set_node_bad) and healthy again (set_node_healthy) once it is ready. Every node
  /// starts healthy.
  virtual std::vector<node_info> observe_health(const std::vector<node_info>& nodes) = 0;
  /// Returns the filter verdict over `nodes` (all known). Errors as check_pod.
  [[nodiscard]] virtual result<filter_result> filter(const pod_info& pod,
                                                     const std::vector<node_info>& nodes) = 0;
  /// Returns one score 0..max_extender_priority per node of `nodes`, in their order.
  [[nodiscard]] virtual result<std::vector<host_priority>> prioritize(
      const pod_info& pod, const std::vector<node_info>& nodes) = 0;
  /// Returns the victims (by pod UID) per node for `pod`, restricted to the keys of
  /// `candidates` unless it is empty. Errors as check_pod.
  [[nodiscard]] virtual result<preemption_result> preempt(
      const pod_info& pod, const std::map<std::string, meta_victims>& candidates) = 0;
  /// Commits `pod` on `node` and returns its placement. Errors (state unchanged):
  /// failed_precondition when the pod no longer fits there.
  [[nodiscard]] virtual result<placement> bind(const pod_info& pod, const std::string& node) = 0;
  /// Releases a placement made by bind() or restore().
  [[nodiscard]] virtual result<void> release(const pod_info& pod, const placement& p) = 0;
  /// Commits a placement recorded earlier (a restart's replay), exactly as given: the packer
  /// takes the GPUs `p.gpus` of `p.node`, HiveD add_allocated() with `p.bind_info`. Health and
  /// selectors are not checked (the pod already runs there). Errors (state unchanged):
  /// invalid_argument for a malformed placement (GPU out of range or repeated, bind info that
  /// does not decode or names another node), failed_precondition when a GPU is not free.
  [[nodiscard]] virtual result<void> restore(const pod_info& pod, const placement& p) = 0;
  /// Forgets a pod that was filtered but never bound (HiveD's DeleteUnallocatedPod).
  virtual void forget(const pod_info& pod) = 0;
  /// Returns GPUs in use and in total.
  [[nodiscard]] virtual std::int64_t used_gpus() const = 0;
  [[nodiscard]] virtual std::int64_t total_gpus() const = 0;
  /// Returns a text that changes whenever the backend's allocation state changes.
  [[nodiscard]] virtual std::string digest() const = 0;
};

/// Health bookkeeping shared by the backends: the nodes last seen unhealthy, by name.
class node_health_map {
 public:
  /// Applies `nodes` (unknown health ignored); returns the previous health of changed nodes and
  /// appends to `went_bad` / `went_ready` the nodes that changed between healthy and unhealthy.
  std::vector<node_info> apply(const std::vector<node_info>& nodes,
                               std::vector<std::string>& went_bad,
                               std::vector<std::string>& went_ready) {
    std::vector<node_info> previous;
    for (const auto& n : nodes) {
      if (n.health == node_health::unknown) continue;
      auto it = bad_.find(n.name);
      const node_health old = it == bad_.end() ? node_health::ready : it->second;
      if (old == n.health) continue;
      previous.push_back(node_info{n.name, {}, old});
      if (n.health == node_health::ready) {
        bad_.erase(it);
        went_ready.push_back(n.name);
      } else {
        if (old == node_health::ready) went_bad.push_back(n.name);
        bad_.insert_or_assign(n.name, n.health);
      }
    }
    return previous;
  }
  /// Returns why `node` cannot take pods, or nullptr if it is healthy.
  [[nodiscard]] const char* why_bad(const std::string& node) const {
    auto it = bad_.find(node);
    if (it == bad_.end()) return nullptr;
    return it->second == node_health::unschedulable ? "node is unschedulable (cordoned)"
                                                    : "node is not Ready";
  }
  /// Returns "bad:name=reason,..." for the digests.
  [[nodiscard]] std::string digest() const {
    std::string out = "bad:";
    for (const auto& [name, h] : bad_)
      out.append(name).append("=").append(std::to_string(static_cast<int>(h))).append(",");
    return out;
  }

 private:
  std::map<std::string, node_health> bad_;
};

/// One node of the packer's cluster.
struct packer_node {
  std::string name;
  node_template tmpl = node_template::dgx1_v100;
  std::string gpu_type;
  std::map<std::string, std::string> labels;
};

/// The node label carrying a node's GPU type (set from packer_node::gpu_type); a pod selects a
/// type with `nodeSelector: {hetsched.io/gpu-type: A100}`.
inline constexpr std::string_view gpu_type_label = "hetsched.io/gpu-type";

/// Returns true if `pod`'s nodeSelector matches `node`: each entry must equal the label of the
/// Node object `seen` (when kube-scheduler sent full objects), else the configured label, else
/// the built-in labels hetsched.io/gpu-type (the node's gpuType) and kubernetes.io/hostname (its
/// name). Otherwise sets `why` to a message naming the first entry that does not match.
[[nodiscard]] bool node_selector_matches(const pod_info& pod, const packer_node& node,
                                         const node_info& seen, std::string& why);

/// Returns the packer cluster described by `j`: {"nodes": [{"name", "template", "gpuType",
/// "labels"}], "nodeGroups": [{"namePrefix", "count", "template", "gpuType", "labels"}]} (group
/// nodes are named prefix0, prefix1, ...). Errors: invalid_argument naming the entry (unknown
/// template, duplicate name, missing field).
[[nodiscard]] result<std::vector<packer_node>> parse_packer_cluster(const nlohmann::json& j);

/// Returns a packer backend over `nodes`. Errors: invalid_argument (empty, duplicate names).
[[nodiscard]] result<std::unique_ptr<backend>> make_packer_backend(std::vector<packer_node> nodes);

/// The pod annotation carrying hivedscheduler's PodSchedulingSpec.
inline constexpr std::string_view hived_spec_annotation =
    "hivedscheduler.microsoft.com/pod-scheduling-spec";
/// The pod annotation hivedscheduler writes at bind time (PodBindInfo).
inline constexpr std::string_view hived_bind_info_annotation =
    "hivedscheduler.microsoft.com/pod-bind-info";

/// Returns a HiveD backend over `cfg`, every node healthy. Errors: those of
/// hived::scheduler::create.
[[nodiscard]] result<std::unique_ptr<backend>> make_hived_backend(const hived::config& cfg);

}  // namespace hetsched::k8s
