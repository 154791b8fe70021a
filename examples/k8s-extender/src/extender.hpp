// SPDX-License-Identifier: MIT
// The scheduler extender logic without sockets: filter, prioritize, preempt, bind and release.
//
// extender owns one backend (packer or HiveD) and the records kube-scheduler's bind needs: the
// pods seen by filter/prioritize/preempt (ExtenderBindingArgs carries only the pod's name, UID
// and node, so the pod itself comes from this cache, as in hivedscheduler) and the committed
// bindings by pod UID. One mutex serialises every call, so the object may be shared by the HTTP
// server's worker threads. Every request that fails (bad JSON shape, unknown node, refused bind)
// leaves the state unchanged, checkable with digest(). Unknown node names are refused with
// not_found by default (HTTP 404); with tolerate_unknown_nodes they are reported in
// FailedAndUnresolvableNodes instead and score 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/result.hpp>

#include "backend.hpp"
#include "protocol.hpp"

#include <nlohmann/json.hpp>

namespace hetsched::k8s {

/// A committed binding.
struct binding_record {
  binding_args args;
  pod_info pod;
  placement where;
};

/// Extender settings.
struct extender_options {
  /// Report unknown nodes as FailedAndUnresolvableNodes (score 0) instead of refusing them.
  bool tolerate_unknown_nodes = false;
  /// How many pods seen by filter/prioritize/preempt are remembered for bind (oldest dropped).
  std::size_t pending_capacity = 65536;
  /// How many bytes those pods may take (pod_footprint(); oldest dropped). Larger than any one
  /// request body, so that the pod just filtered stays.
  std::size_t pending_capacity_bytes = std::size_t{256} << 20;
  /// Called under the lock after a bind commits, before the response: the place to create the
  /// v1.Binding and patch the bind-info annotation through the API server. An error undoes the
  /// commit and becomes the ExtenderBindingResult's Error.
  std::function<result<void>(const binding_record&)> on_bind;
  /// Called without the lock after on_bind succeeded, before bind() answers: the place to wait
  /// for what on_bind started (the state file's fsync, shared by concurrent binds, so that no
  /// request waits for a disk under the lock). An error undoes the bind (release(), which runs
  /// the release hooks) and becomes the ExtenderBindingResult's Error.
  std::function<result<void>(const binding_record&)> after_bind;
  /// Called under the lock after a bound pod was released (the place to journal it). It cannot
  /// undo the release; it reports its own failures.
  std::function<void(const binding_record&)> on_release;
  /// Called without the lock after on_release, before release() answers (the fsync wait).
  std::function<void(const binding_record&)> after_release;
};

/// Returns the bytes `pod` takes in the pending-pod cache: its strings plus a fixed cost per
/// map entry and per pod (an estimate of the allocations, independent of the allocator).
[[nodiscard]] std::size_t pod_footprint(const pod_info& pod);

/// The answer to one extender call: an HTTP status and a JSON body.
struct response {
  int status = 200;
  nlohmann::json body;
};

/// The extender. Thread-safe (one mutex).
class extender {
 public:
  extender(std::unique_ptr<backend> b, extender_options opts = {});

  /// ExtenderArgs -> ExtenderFilterResult. Errors: invalid_argument (pod), not_found (node).
  [[nodiscard]] result<filter_result> filter(const extender_args& args);
  /// ExtenderArgs -> HostPriorityList, one entry per candidate node in request order.
  [[nodiscard]] result<std::vector<host_priority>> prioritize(const extender_args& args);
  /// ExtenderPreemptionArgs -> ExtenderPreemptionResult.
  [[nodiscard]] result<preemption_result> preempt(const preemption_args& args);
  /// ExtenderBindingArgs -> the committed record. Errors, state unchanged: not_found (unknown
  /// node; a pod never filtered), already_exists (UID already bound), failed_precondition (no
  /// longer fits; the namespace/name differ from the filtered pod's; on_bind failed).
  [[nodiscard]] result<binding_record> bind(const binding_args& args);
  /// Releases a bound pod (pod deleted) or forgets a filtered one. Errors: not_found.
  [[nodiscard]] result<void> release(const std::string& pod_uid);
  /// Replays committed bindings (a restart: the state file or the API server's bound pods), in
  /// order, through the backend's restore(); on_bind is not called. A record is skipped when
  /// its UID is already bound, its node is unknown, one of its GPUs is held by a binding
  /// restored or made before it (never two bindings on one GPU), or the backend refuses it.
  /// Returns one message per skipped record, naming the pod (and for a conflict the pod that
  /// holds the GPU). Deterministic: the first record of a conflict wins.
  [[nodiscard]] std::vector<std::string> restore(const std::vector<binding_record>& records);

  /// Dispatches a decoded JSON request body for `verb` ("filter", "prioritize", "preempt",
  /// "bind", "release") and returns the status and body: 200 with the protocol result; bind
  /// refusals are 200 with ExtenderBindingResult.Error (kube-scheduler reads that field); bad
  /// input is 400 (invalid_argument), 404 (not_found) or 409 (already_exists on release paths),
  /// each with {"Error": message}.
  [[nodiscard]] response handle(std::string_view verb, const nlohmann::json& body);

  /// Returns the binding of `pod_uid`, if any.
  [[nodiscard]] std::optional<binding_record> binding(const std::string& pod_uid) const;
  /// Returns every binding, by UID.
  [[nodiscard]] std::map<std::string, binding_record> bindings() const;
  /// Returns the number of GPUs committed and in the cluster.
  [[nodiscard]] std::int64_t used_gpus() const;
  [[nodiscard]] std::int64_t total_gpus() const;
  /// Returns a text that changes whenever any state changes (bindings, pending pods, backend).
  [[nodiscard]] std::string digest() const;
  /// Returns the number of pending pods and the bytes they take (pod_footprint()).
  [[nodiscard]] std::size_t pending_pods() const;
  [[nodiscard]] std::size_t pending_bytes() const;
  /// Returns Prometheus text-format counters.
  [[nodiscard]] std::string metrics() const;
  /// Returns the backend kind.
  [[nodiscard]] std::string_view kind() const;

 private:
  result<std::vector<node_info>> screen_nodes(const std::vector<node_info>& nodes,
                                              std::map<std::string, std::string>& unknown) const;
  void remember(const pod_info& pod);
  result<binding_record> bind_locked(const binding_args& args);

  mutable std::mutex mu_;
  std::unique_ptr<backend> backend_;
  extender_options opts_;
  struct pending_pod {
    pod_info pod;
    std::uint64_t seq = 0;
    std::size_t bytes = 0;
  };
  std::unordered_map<std::string, pending_pod> pending_;
  std::size_t pending_bytes_ = 0;
  void erase_pending(std::unordered_map<std::string, pending_pod>::iterator it);
  std::deque<std::pair<std::string, std::uint64_t>> pending_order_;
  std::uint64_t seq_ = 0;
  std::map<std::string, binding_record> bound_;
  std::map<std::string, std::uint64_t> counters_;
};

}  // namespace hetsched::k8s
