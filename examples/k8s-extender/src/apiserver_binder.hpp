// SPDX-License-Identifier: MIT
// The API-server binder of hetsched-k8s-extender (--apiserver-url): on each committed bind it
// creates the pod's v1 Binding, as kube-scheduler's default binder would.
//
// It speaks plain HTTP to `kubectl proxy` (or any proxy in front of the API server that handles
// authentication and TLS); https URLs are refused. The request is
//   POST {url}/api/v1/namespaces/{namespace}/pods/{name}/binding
//   {"apiVersion": "v1", "kind": "Binding",
//    "metadata": {"name", "namespace", "uid", "annotations"?}, "target": {"apiVersion": "v1",
//    "kind": "Node", "name": node}}
// metadata.uid makes the API server refuse the binding if the pod was replaced by another of the
// same name (409). For HiveD, metadata.annotations carries hivedscheduler's pod-bind-info (the
// placement as JSON, which is also YAML); the API server copies a Binding's annotations onto the
// pod, as hivedscheduler relies on; every Binding also carries hetsched.io/bind-info (node and
// GPU indices), so that a restarted extender rebuilds its state from the bound pods
// (bound_pods(), as hivedscheduler does from its bind-info annotations). Any answer other than 2xx,
// and any connection error or timeout, is an error naming the status and the API server's
// Status.message; the extender then rolls the bind back (extender_options::on_bind) and
// kube-scheduler reads the message from ExtenderBindingResult.Error. One request per bind, under
// the extender's lock.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>

#include "extender.hpp"

#include <nlohmann/json.hpp>

namespace hetsched::k8s {

/// The annotation the extender puts on each Binding (hence on the pod): {"node": N, "gpus":
/// [...]} as JSON, what a restart needs to replay the packer's placement.
inline constexpr std::string_view bind_info_annotation = "hetsched.io/bind-info";

/// Returns the v1 Binding object for `rec` (see above).
[[nodiscard]] nlohmann::json binding_object(const binding_record& rec);
/// Returns the binding a bound v1.Pod records, or nullopt for a pod this extender did not bind
/// or that no longer holds GPUs (no spec.nodeName, phase Succeeded or Failed, neither
/// hetsched.io/bind-info nor HiveD's pod-bind-info). A pod bound by hivedscheduler itself
/// (only pod-bind-info) is read from that. Errors: invalid_argument naming the pod and the
/// problem (an annotation that is not JSON, a node other than spec.nodeName, a bad pod).
[[nodiscard]] result<std::optional<binding_record>> bound_pod_record(const nlohmann::json& pod);
/// Returns /api/v1/namespaces/{ns}/pods/{name}/binding, each segment percent-encoded.
[[nodiscard]] std::string binding_path(const binding_args& args);

/// Posts v1 Bindings to one API server (through kubectl proxy).
class apiserver_binder {
 public:
  /// Returns a binder for `url`, "http://HOST[:PORT]" with an optional trailing "/" (port 80 by
  /// default). Errors: invalid_argument naming the problem (https, another scheme, a path, a bad
  /// port, no host). `timeout` bounds connecting and each read/write.
  [[nodiscard]] static result<apiserver_binder> create(
      const std::string& url, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  /// Creates the v1 Binding of `rec`. Errors: failed_precondition with "API server answered
  /// STATUS: message" or "API server unreachable at URL: reason".
  [[nodiscard]] result<void> bind(const binding_record& rec) const;
  /// Lists the bound pods of every namespace (GET /api/v1/pods?fieldSelector=spec.nodeName!=,
  /// 500 a page) and returns their bindings (bound_pod_record) in the API server's order;
  /// pods whose record is malformed go to `skipped` as messages. Errors: failed_precondition as
  /// bind(), or for an answer that is not a PodList.
  [[nodiscard]] result<std::vector<binding_record>> bound_pods(
      std::vector<std::string>& skipped) const;

  [[nodiscard]] const std::string& host() const noexcept { return host_; }
  [[nodiscard]] int port() const noexcept { return port_; }

 private:
  apiserver_binder(std::string host, int port, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(port), timeout_(timeout) {}

  std::string host_;
  int port_ = 80;
  std::chrono::milliseconds timeout_;
};

}  // namespace hetsched::k8s
