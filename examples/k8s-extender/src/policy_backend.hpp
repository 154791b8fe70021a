// SPDX-License-Identifier: MIT
// The policy backend: any policy of the registry (make_policy, policies/registry.hpp), driven
// through the policy contract (policies/policy.hpp) over the model's cluster_state, with no
// per-policy code. Selected with `--policy SPEC` over the nodes of a packer cluster file.
//
// The cluster: one model node per packer node (same order, so node ids agree with the topology),
// built from its template (to_node_spec), with the configured labels plus hetsched.io/gpu-type
// and kubernetes.io/hostname; a cluster_topology of the same templates in the same order for the
// placements that read topology (the packer's GPU choice, HiveD's cells). Each pod is a one-task
// gang job of the model: the pod's GPUs (whole GPUs, any model), its spec.priority, preemptible,
// tenant = the index of its namespace in `tenants` (namespaces not listed share the tenant
// tenants.size(); with no list every pod is tenant 0). CPU and memory are left to
// kube-scheduler's own filters: the extender sees only the pods it binds, so it could not account
// for the others. Only bound pods are jobs of the state; a decision for a pod that is not bound
// submits its job for the call and takes it out again (the state is as before).
//
// Candidates: every verb decides over the nodes kube-scheduler offers (bind: those of the pod's
// last filter, or every node when it was never filtered) that are healthy (observe_health), match
// the pod's nodeSelector and have at least as many GPUs as it asks. The other nodes are cordoned
// in the state for the call, the placement rebuilt (the contract's rebuild after a health change)
// and both undone afterwards, so the policy can only choose a candidate; with no node to hide the
// call costs no rebuild.
//
// filter: what_if (no side effect). A plain bind of the pod passes its node alone; the other
// candidates fail in FailedNodes with "policy SPEC places the pod on N". A deferral fails every
// candidate with the policy's reason (FailedNodes: preemption may help). A decision that would
// also preempt, migrate or suspend other pods fails every candidate too (the extender carries
// out binds only). Nodes that are unhealthy, do not match the selector or are too small are in
// FailedAndUnresolvableNodes. prioritize: the chosen node 10, every other node 0.
// preempt: what_if over the candidate nodes; its preemptions, by pod UID in the decision's order,
// grouped by the node they run on, restricted to the candidates; a pod that fits already gets its
// node with no victims; a policy that does not preempt answers no node. Read only.
// bind: what_if must bind the pod on kube-scheduler's node (otherwise failed_precondition naming
// both nodes, or the policy's reason); then place (which the contract makes equal to what_if),
// apply (all or nothing), commit. release: the job is cancelled in the state (its GPUs freed),
// the policy releases it, the state forgets it. restore: the recorded GPUs are applied as a bind
// and the policy is rebuilt before its next call (replay_bindings split in two, so that a restart
// replaying N records costs one rebuild). The placement's clock (set_time) is never set: the
// extender has no simulated time, and decisions stay a function of the state.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/topology/cluster_builder.hpp>

#include "backend.hpp"

namespace hetsched::k8s {

/// The model cluster and the topology of a packer cluster file's nodes (node ids agree; the
/// topology names node N "N-0", cluster_builder's naming).
struct policy_cluster {
  std::shared_ptr<const cluster> description;
  cluster_topology topology;
};

/// Returns the cluster of `nodes` (see the top of this file). Errors: invalid_argument (no node,
/// a duplicate name), those of the templates and of cluster_builder.
[[nodiscard]] result<policy_cluster> make_policy_cluster(const std::vector<packer_node>& nodes);

/// Returns the job of `pod` (see the top of this file) with id `id` and tenant `tenant`.
[[nodiscard]] job_spec pod_job_spec(const pod_info& pod, job_id id, std::uint32_t tenant);

/// Returns a backend driving the policy `spec` ("ORDER[:k=v,...][+PLACEMENT[:k=v,...]]", any
/// spec of the registry) over `nodes`, every node healthy; `tenants` lists namespaces in tenant
/// order. The ordering is built and validated but orders nothing: kube-scheduler's queue
/// presents one pod at a time. Errors: invalid_argument or not_found from make_policy naming the
/// spec and the bad name or parameter; those of make_policy_cluster; invalid_argument for a
/// namespace listed twice.
[[nodiscard]] result<std::unique_ptr<backend>> make_policy_backend(
    std::string_view spec, std::vector<packer_node> nodes, std::vector<std::string> tenants = {});

}  // namespace hetsched::k8s
