// SPDX-License-Identifier: MIT
// The HTTP front of the extender (cpp-httplib): routes, content checks and the listener thread.
//
// Routes under url_prefix (kube-scheduler's urlPrefix; the verbs are the path's last segment):
// POST filter, prioritize, preempt, bind (the extender v1 protocol), POST release (pod deleted:
// {"PodUID": "..."}), GET healthz, GET metrics (Prometheus text), GET pods (bindings as JSON).
// A POST body must be application/json (else 415), at most max_body_bytes (else 413) and
// well-formed JSON (else 400 with the parser's message); every 4xx body is {"Error": message}.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <hetsched/model/result.hpp>

#include "extender.hpp"

namespace hetsched::k8s {

/// Listener settings.
struct server_options {
  std::string host = "127.0.0.1";
  int port = 0;                  ///< 0 = an ephemeral port (see extender_server::port()).
  std::string url_prefix = "/";  ///< e.g. "/hetsched": routes become /hetsched/filter, ...
  std::size_t max_body_bytes = std::size_t{8} << 20;
  std::size_t threads = 32;  ///< Worker threads; each keep-alive connection holds one.
  std::size_t keep_alive_max_requests = 100000;
};

/// An HTTP server bound to one extender. The extender must outlive the server.
class extender_server {
 public:
  extender_server(extender& ex, server_options opts);
  extender_server(const extender_server&) = delete;
  extender_server& operator=(const extender_server&) = delete;
  ~extender_server();

  /// Binds and starts serving on a background thread; returns the port. Errors:
  /// failed_precondition if the address cannot be bound or the server already runs.
  [[nodiscard]] result<int> start();
  /// Serves on the calling thread until stop() (from a signal handler thread or another thread).
  /// Errors as start().
  [[nodiscard]] result<void> run();
  /// Stops serving and joins the background thread. Idempotent.
  void stop();
  /// Returns the bound port (0 before start()).
  [[nodiscard]] int port() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace hetsched::k8s
