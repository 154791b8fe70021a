// SPDX-License-Identifier: MIT
// The Kubernetes scheduler extender v1 protocol (k8s.io/kube-scheduler/extender/v1) as C++ values.
//
// The Go structs of extender/v1/types.go carry no json tags, so encoding/json writes the Go field
// names ("Pod", "NodeNames", "FailedNodes", "Host", "Score", "NodeNameToMetaVictims", ...) and
// reads keys case-insensitively. The encoders here write exactly those names; the decoders accept
// any letter case, as kube-scheduler itself does. Only the parts of a v1.Pod the extender needs
// are decoded (pod_info); a v1.NodeList contributes its items' metadata.name and labels.
// Decoding errors name the offending field and never throw.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>

#include <nlohmann/json.hpp>

namespace hetsched::k8s {

/// kube-scheduler's MaxExtenderPriority: prioritize scores are 0..10.
inline constexpr std::int64_t max_extender_priority = 10;
/// The largest nvidia.com/gpu quantity accepted, per container and for a pod's total: far above
/// any node, low enough that no sum of them overflows. Larger quantities are invalid_argument.
inline constexpr std::int64_t max_gpu_quantity = 1'000'000;

/// The parts of a v1.Pod the extender reads.
struct pod_info {
  std::string name;
  std::string name_space;
  std::string uid;
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> node_selector;
  /// Sum over spec.containers of the `nvidia.com/gpu` request (the limit if no request), and the
  /// max with any init container's.
  std::int64_t gpus = 0;
  /// spec.priority (set by the Priority admission plugin from the pod's PriorityClass; 0 when
  /// absent). The packer's preempt evicts lower priorities first.
  std::int64_t priority = 0;
  friend bool operator==(const pod_info&, const pod_info&) = default;
};

/// A candidate node's health as its Node object tells it (hivedscheduler's IsNodeHealthy):
/// unschedulable when spec.unschedulable is true (cordoned), else not_ready when
/// status.conditions has no Ready condition with status "True", else ready. NodeNames requests
/// and Node objects without status.conditions carry no health (unknown).
enum class node_health : unsigned char { unknown, ready, not_ready, unschedulable };

/// One candidate node: its name and, when kube-scheduler sent full Node objects, its labels and
/// health.
struct node_info {
  std::string name;
  std::map<std::string, std::string> labels;
  node_health health = node_health::unknown;
  friend bool operator==(const node_info&, const node_info&) = default;
};

/// ExtenderArgs{Pod, Nodes, NodeNames}. nodes_as_objects records which form the caller used, so
/// the filter result answers in the same form.
struct extender_args {
  pod_info pod;
  std::vector<node_info> nodes;
  bool nodes_as_objects = false;
  /// The raw Node objects (only when nodes_as_objects), echoed back for the passing nodes.
  std::vector<nlohmann::json> node_objects;
};

/// ExtenderFilterResult{Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}.
struct filter_result {
  std::vector<std::string> node_names;
  std::map<std::string, std::string> failed_nodes;
  std::map<std::string, std::string> failed_and_unresolvable;
  std::string error;
  friend bool operator==(const filter_result&, const filter_result&) = default;
};

/// HostPriority{Host, Score}.
struct host_priority {
  std::string host;
  std::int64_t score = 0;
  friend bool operator==(const host_priority&, const host_priority&) = default;
};

/// MetaVictims{Pods: [MetaPod{UID}], NumPDBViolations}.
struct meta_victims {
  std::vector<std::string> pod_uids;
  std::int64_t num_pdb_violations = 0;
  friend bool operator==(const meta_victims&, const meta_victims&) = default;
};

/// ExtenderPreemptionArgs{Pod, NodeNameToVictims, NodeNameToMetaVictims}: both maps folded into
/// node -> victims by UID.
struct preemption_args {
  pod_info pod;
  std::map<std::string, meta_victims> node_victims;
};

/// ExtenderPreemptionResult{NodeNameToMetaVictims}.
struct preemption_result {
  std::map<std::string, meta_victims> node_victims;
  friend bool operator==(const preemption_result&, const preemption_result&) = default;
};

/// ExtenderBindingArgs{PodName, PodNamespace, PodUID, Node}.
struct binding_args {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
  friend bool operator==(const binding_args&, const binding_args&) = default;
};

/// ExtenderBindingResult{Error}.
struct binding_result {
  std::string error;
  friend bool operator==(const binding_result&, const binding_result&) = default;
};

/// Returns the JSON text parsed, or invalid_argument with the parser's message (syntax errors and
/// numbers outside double's range such as 1e400 alike).
[[nodiscard]] result<nlohmann::json> parse_json(std::string_view text);

/// Returns the pod_info of a v1.Pod object. Errors: invalid_argument naming the field (missing
/// metadata.name or metadata.uid, a non-object, a GPU quantity that is not a whole number, a
/// spec.priority that is not an int32).
[[nodiscard]] result<pod_info> decode_pod(const nlohmann::json& pod);
/// Returns the GPU count of a resource quantity ("2", 2, "2000m"), 0..max_gpu_quantity. Errors:
/// invalid_argument (not a whole number, negative, above max_gpu_quantity).
[[nodiscard]] result<std::int64_t> decode_gpu_quantity(const nlohmann::json& q);

[[nodiscard]] result<extender_args> decode_extender_args(const nlohmann::json& j);
[[nodiscard]] result<preemption_args> decode_preemption_args(const nlohmann::json& j);
[[nodiscard]] result<binding_args> decode_binding_args(const nlohmann::json& j);
[[nodiscard]] result<filter_result> decode_filter_result(const nlohmann::json& j);
[[nodiscard]] result<std::vector<host_priority>> decode_host_priorities(const nlohmann::json& j);
[[nodiscard]] result<preemption_result> decode_preemption_result(const nlohmann::json& j);
[[nodiscard]] result<binding_result> decode_binding_result(const nlohmann::json& j);

/// Returns ExtenderFilterResult JSON; with `args.nodes_as_objects` the passing nodes go to
/// "Nodes" as a NodeList of the original objects, else to "NodeNames".
[[nodiscard]] nlohmann::json encode(const filter_result& r, const extender_args& args);
[[nodiscard]] nlohmann::json encode(const std::vector<host_priority>& list);
[[nodiscard]] nlohmann::json encode(const preemption_result& r);
[[nodiscard]] nlohmann::json encode(const binding_result& r);
[[nodiscard]] nlohmann::json encode(const binding_args& a);

/// Returns the member of object `j` whose key equals `key` ignoring ASCII case (Go's
/// encoding/json rule), or nullptr. Precondition: none (non-objects give nullptr).
[[nodiscard]] const nlohmann::json* find_key(const nlohmann::json& j, std::string_view key);

}  // namespace hetsched::k8s
