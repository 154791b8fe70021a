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
  /// Called under the lock after a bind commits, before the response: the place to create the
  /// v1.Binding and patch the bind-info annotation through the API server. An error undoes the
  /// commit and becomes the ExtenderBindingResult's Error.
  std::function<result<void>(const binding_record&)> on_bind;
};

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
  /// Returns Prometheus text-format counters.
  [[nodiscard]] std::string metrics() const;
  /// Returns the backend kind.
  [[nodiscard]] std::string_view kind() const;

 private:
  result<std::vector<node_info>> screen_nodes(const std::vector<node_info>& nodes,
                                              std::map<std::string, std::string>& unknown) const;
  void remember(const pod_info& pod);

  mutable std::mutex mu_;
  std::unique_ptr<backend> backend_;
  extender_options opts_;
  struct pending_pod {
    pod_info pod;
    std::uint64_t seq = 0;
  };
  std::unordered_map<std::string, pending_pod> pending_;
  std::deque<std::pair<std::string, std::uint64_t>> pending_order_;
  std::uint64_t seq_ = 0;
  std::map<std::string, binding_record> bound_;
  std::map<std::string, std::uint64_t> counters_;
};

}  // namespace hetsched::k8s
