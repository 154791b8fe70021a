// SPDX-License-Identifier: MIT
// The HTTP front of the extender (cpp-httplib): routes, limits, TLS, authentication, listener.
//
// Routes under url_prefix (kube-scheduler's urlPrefix; the verbs are the path's last segment):
// POST filter, prioritize, preempt, bind (the extender v1 protocol), POST release (pod deleted:
// {"PodUID": "..."}; only with enable_release, else 403), GET healthz, GET metrics (Prometheus
// text), GET pods (bindings as JSON). A POST body must be application/json (else 415), at most
// max_body_bytes however it is framed (Content-Length, chunked or gzip; else 413) and well-formed
// JSON (else 400 with the parser's message); every 4xx body is {"Error": message}.
// Limits (http_transport.hpp): a request must arrive whole within request_timeout of its first
// byte (else 408, or the connection is closed while the head is incomplete); its head may take
// 64 KiB and its framed body twice max_body_bytes on the wire; an idle keep-alive connection is
// closed after idle_timeout, and as soon as another connection has waited 20 ms for a worker
// thread (every worker busy). A refused request whose body was not read closes its connection.
// Authentication: with a bearer token and/or a client CA every route needs `Authorization:
// Bearer TOKEN` (compared in constant time) or a verified client certificate, else 401. Without
// either, start() refuses a non-loopback address unless allow_unauthenticated.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>

#include "extender.hpp"
#include "http_transport.hpp"

namespace hetsched::k8s {

/// Listener settings.
struct server_options {
  std::string host = "127.0.0.1";
  int port = 0;                  ///< 0 = an ephemeral port (see extender_server::port()).
  std::string url_prefix = "/";  ///< e.g. "/hetsched": routes become /hetsched/filter, ...
  std::size_t max_body_bytes = std::size_t{8} << 20;
  std::size_t threads = 32;  ///< Worker threads; each connection holds one while it is served.
  std::size_t keep_alive_max_requests = 100000;
  /// From a request's first byte to its last body byte (and for the TLS handshake).
  std::chrono::milliseconds request_timeout{10'000};
  /// Longest wait for the next request on an open connection.
  std::chrono::milliseconds idle_timeout{30'000};
  /// Longest wait for the peer to take response bytes.
  std::chrono::milliseconds write_timeout{10'000};
  /// TLS: serve HTTPS when cert_file is set; client_ca_file asks clients for certificates.
  tls_files tls;
  /// Required as `Authorization: Bearer TOKEN` unless a verified client certificate is shown.
  std::string bearer_token;
  /// Serve POST release (it gives a pod's GPUs back; a watcher of pod deletions calls it).
  bool enable_release = false;
  /// Serve a non-loopback address without a token or client CA.
  bool allow_unauthenticated = false;
};

/// The bytes a request head may take (request line and headers).
inline constexpr std::size_t max_request_head_bytes = std::size_t{64} << 10;

/// An HTTP server bound to one extender. The extender must outlive the server.
class extender_server {
 public:
  /// Errors are reported by start()/run() (bad TLS files, no authentication off loopback).
  extender_server(extender& ex, server_options opts);
  extender_server(const extender_server&) = delete;
  extender_server& operator=(const extender_server&) = delete;
  ~extender_server();

  /// Binds and starts serving on a background thread; returns the port. Errors:
  /// failed_precondition if the address cannot be bound, the server already runs or a
  /// non-loopback address has no authentication; invalid_argument for unreadable TLS files.
  [[nodiscard]] result<int> start();
  /// Serves on the calling thread until stop() (from a signal handler thread or another thread).
  /// Errors as start().
  [[nodiscard]] result<void> run();
  /// Stops serving and joins the background thread. Idempotent.
  void stop();
  /// Returns the bound port (0 before start()).
  [[nodiscard]] int port() const noexcept;

  /// Serves `raw` as the bytes of one plain-HTTP connection, with every limit but the clocks
  /// (the HTTP fuzzer, socket-free tests), and returns what the server wrote. `consumed`, if
  /// given, receives how many input bytes were read. Needs no start().
  [[nodiscard]] std::string serve_bytes(std::string_view raw, std::size_t* consumed = nullptr);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Returns true for 127.0.0.0/8, ::1 and "localhost".
[[nodiscard]] bool is_loopback_host(std::string_view host);

}  // namespace hetsched::k8s
