// SPDX-License-Identifier: MIT
// The HTTP front of the extender.
#include "server.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <httplib.h>
#include <mutex>
#include <optional>
#include <poll.h>
#include <string_view>
#include <thread>
#include <unistd.h>
#include <utility>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/socket.h>

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using std::chrono::steady_clock;

constexpr const char* json_type = "application/json";

/// The stream of the connection the calling worker thread serves (handlers reach it here).
thread_local request_stream* current_stream = nullptr;

void close_connection_after(httplib::Response& res) {
  if (current_stream != nullptr) current_stream->close_after_response();
  res.set_header("Connection", "close");
}

bool is_json_content(std::string_view ct) {
  const auto semi = ct.find(';');
  std::string_view media = ct.substr(0, semi);
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  while (!media.empty() && media.front() == ' ') media.remove_prefix(1);
  if (media.size() != 16) return false;
  for (std::size_t i = 0; i < media.size(); ++i) {
    char c = media[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != json_type[i]) return false;
  }
  return true;
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json{{"Error", message}}.dump(-1, ' ', false, json::error_handler_t::replace),
                  json_type);
}

std::string normalise_prefix(std::string p) {
  if (p.empty() || p.front() != '/') p.insert(p.begin(), '/');
  if (p.back() != '/') p.push_back('/');
  return p;
}

std::string sha256(std::string_view text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(md), len);
}

/// The connections accepted but not yet picked up by a worker, in arrival order (httplib's
/// pool is FIFO). Idle keep-alive connections give their thread up while one has waited longer
/// than a free worker would take to pick it up.
class waiting_connections {
 public:
  void arrived() {
    std::lock_guard lock(mu_);
    since_.push_back(steady_clock::now());
  }
  void picked_up() {
    std::lock_guard lock(mu_);
    if (!since_.empty()) since_.pop_front();
  }
  /// Returns true if the oldest waiting connection has waited longer than `patience`.
  [[nodiscard]] bool starving(std::chrono::milliseconds patience) const {
    std::lock_guard lock(mu_);
    return !since_.empty() && steady_clock::now() - since_.front() > patience;
  }

 private:
  mutable std::mutex mu_;
  std::deque<steady_time> since_;
};

/// httplib's thread pool, recording waiting_connections.
class counting_pool final : public httplib::TaskQueue {
 public:
  counting_pool(std::size_t threads, waiting_connections& waiting)
      : pool_(threads), waiting_(waiting) {}
  void enqueue(std::function<void()> fn) override {
    waiting_.arrived();
    pool_.enqueue([this, fn = std::move(fn)] {
      waiting_.picked_up();
      fn();
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
  waiting_connections& waiting_;
};

/// cpp-httplib's server with its connection loop replaced (see http_transport.hpp).
class guarded_server final : public httplib::Server {
 public:
  explicit guarded_server(const server_options& opts) : opts_(opts) {}

  void set_tls(const tls_context* tls) { tls_ = tls; }
  [[nodiscard]] waiting_connections& waiting() { return waiting_; }

  /// Serves requests from `s` until it ends, is cut, a handler asks to close, the keep-alive
  /// count is used up or (with `listening`) the server stops.
  void serve(request_stream& s, bool listening) {
    request_stream* const outer = current_stream;
    current_stream = &s;
    // A kept-alive connection between requests yields to connections waiting for a worker; a
    // new one keeps its worker until its first byte or request_timeout (a client that has just
    // connected is about to send).
    const auto stopping = [this, listening] { return listening && svr_sock_ == INVALID_SOCKET; };
    const auto give_up = [this, listening] {
      return listening && (svr_sock_ == INVALID_SOCKET || waiting_.starving(patience));
    };
    const std::size_t budget = max_request_head_bytes + 2 * opts_.max_body_bytes;
    bool first = true;
    for (std::size_t left = opts_.keep_alive_max_requests; left > 0; --left) {
      if (listening && svr_sock_ == INVALID_SOCKET) break;
      if (!(first ? s.wait_for_request(opts_.request_timeout, stopping)
                  : s.wait_for_request(opts_.idle_timeout, give_up)))
        break;
      first = false;
      s.begin_request(steady_clock::now() + opts_.request_timeout, budget);
      bool closed = false;
      const bool ok = process_request(s, left == 1, closed, nullptr);
      if (!ok || closed || s.closing()) break;
    }
    current_stream = outer;
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    {
      socket_stream s(sock, tls_, opts_.write_timeout);
      if (s.handshake(steady_clock::now() + opts_.request_timeout)) {
        serve(s, true);
        s.shutdown_tls();
        if (s.may_have_unread_input()) {
          linger_and_close(sock);
          return true;
        }
      }
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return true;
  }

  // Closing a socket with unread bytes sends a reset, which can destroy the response (a 413)
  // before the client reads it; so half-close, then discard what still arrives for a short,
  // bounded while (256 KiB, 500 ms), as HTTP servers' lingering close does.
  static void linger_and_close(socket_t sock) {
    ::shutdown(sock, SHUT_WR);
    const auto until = steady_clock::now() + std::chrono::milliseconds(500);
    std::size_t drained = 0;
    char buf[16384];
    while (drained < (std::size_t{256} << 10)) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(until - steady_clock::now())
              .count();
      if (left <= 0) break;
      pollfd p{sock, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      const ssize_t n = ::recv(sock, buf, sizeof buf, 0);
      if (n <= 0) break;
      drained += static_cast<std::size_t>(n);
    }
    ::close(sock);
  }

  /// A free worker picks a connection up within microseconds: one waiting longer means that
  /// every worker is busy.
  static constexpr std::chrono::milliseconds patience{20};

  const server_options& opts_;
  const tls_context* tls_ = nullptr;
  waiting_connections waiting_;
};

}  // namespace

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.substr(0, 4) == "127.";
}

struct extender_server::impl {
  extender& ex;
  server_options opts;
  guarded_server svr;
  std::optional<tls_context> tls;
  std::string token_digest;
  std::thread thread;
  int port = 0;
  bool started = false;
  socket_t listen_fd = INVALID_SOCKET;

  impl(extender& e, server_options o) : ex(e), opts(std::move(o)), svr(opts) {
    if (!opts.bearer_token.empty()) token_digest = sha256(opts.bearer_token);
    const std::string prefix = normalise_prefix(opts.url_prefix);
    const std::size_t threads = opts.threads == 0 ? 1 : opts.threads;
    waiting_connections* waiting = &svr.waiting();
    svr.new_task_queue = [threads, waiting] { return new counting_pool(threads, *waiting); };
    svr.set_payload_max_length(opts.max_body_bytes);
    svr.set_tcp_nodelay(true);
    // libcpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed when the shared
    // library was built): keep the socket to raise it after bind (see bind_socket()).
    svr.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      listen_fd = sock;
    });
    const std::size_t limit = opts.max_body_bytes;
    svr.set_error_handler([limit](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return;
      // the body of a refused request may still be on the wire
      close_connection_after(res);
      if (res.status == 413) {
        send_error(res, 413, fmt::format("request body exceeds the limit of {} bytes", limit));
      } else if (res.status == 404) {
        send_error(res, 404, "no such endpoint");
      } else {
        send_error(res, res.status, fmt::format("HTTP error {}", res.status));
      }
    });
    svr.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
          close_connection_after(res);
          send_error(res, 500, "internal error");
        });
    svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
      close_connection_after(res);
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401, unauthorized_message());
      return httplib::Server::HandlerResponse::Handled;
    });
    for (const char* verb : {"filter", "prioritize", "preempt", "bind", "release"}) {
      const bool refused = std::string_view(verb) == "release" && !opts.enable_release;
      svr.Post(prefix + verb, [this, verb, refused](const httplib::Request& req,
                                                    httplib::Response& res,
                                                    const httplib::ContentReader& reader) {
        if (refused) {
          close_connection_after(res);
          send_error(res, 403,
                     "POST release is disabled; start the extender with --enable-release");
          return;
        }
        const std::string ct = req.get_header_value("Content-Type");
        if (!is_json_content(ct)) {
          close_connection_after(res);
          send_error(res, 415, fmt::format("Content-Type must be application/json, got '{}'", ct));
          return;
        }
        std::string text;
        if (!read_body(req, res, reader, text)) return;
        auto body = parse_json(text);
        if (!body) {
          send_error(res, 400, body.error().message);
          return;
        }
        auto answer = ex.handle(verb, *body);
        res.status = answer.status;
        res.set_content(answer.body.dump(-1, ' ', false, json::error_handler_t::replace),
                        json_type);
      });
    }
    svr.Get(prefix + "healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    svr.Get(prefix + "metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(ex.metrics(), "text/plain; version=0.0.4");
    });
    svr.Get(prefix + "pods", [this](const httplib::Request&, httplib::Response& res) {
      json out = json::object();
      for (const auto& [uid, rec] : ex.bindings()) {
        out[uid] = json{{"PodName", rec.args.pod_name},
                        {"PodNamespace", rec.args.pod_namespace},
                        {"Node", rec.where.node},
                        {"GPUs", rec.where.gpus},
                        {"BindInfo", rec.where.bind_info}};
      }
      res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), json_type);
    });
  }

  [[nodiscard]] bool auth_required() const {
    return !opts.bearer_token.empty() || !opts.tls.client_ca_file.empty();
  }

  [[nodiscard]] bool authorized(const httplib::Request& req) const {
    if (!auth_required()) return true;
    if (current_stream != nullptr && current_stream->client_verified()) return true;
    if (token_digest.empty()) return false;
    constexpr std::string_view scheme = "Bearer ";
    const std::string header = req.get_header_value("Authorization");
    if (header.size() <= scheme.size() || header.compare(0, scheme.size(), scheme) != 0)
      return false;
    // equal-length digests compared in constant time: the token's bytes leak no timing
    const std::string given = sha256(std::string_view(header).substr(scheme.size()));
    return given.size() == token_digest.size() &&
           CRYPTO_memcmp(given.data(), token_digest.data(), given.size()) == 0;
  }

  [[nodiscard]] std::string unauthorized_message() const {
    if (opts.bearer_token.empty())
      return "a client certificate signed by the client CA is required";
    if (opts.tls.client_ca_file.empty()) return "missing or wrong bearer token";
    return "missing or wrong bearer token, and no client certificate signed by the client CA";
  }

  // Reads the body into `text` with max_body_bytes enforced however it is framed (httplib 0.11
  // checks only Content-Length); on failure answers 413, 408 or 400 and closes the connection.
  bool read_body(const httplib::Request& req, httplib::Response& res,
                 const httplib::ContentReader& reader, std::string& text) const {
    const std::size_t limit = opts.max_body_bytes;
    const std::string declared = req.get_header_value("Content-Length");
    if (!declared.empty() && std::strtoull(declared.c_str(), nullptr, 10) > limit) {
      close_connection_after(res);
      send_error(res, 413, fmt::format("request body exceeds the limit of {} bytes", limit));
      return false;
    }
    bool over = false;
    const bool ok = reader([&](const char* data, std::size_t n) {
      if (n > limit - text.size()) {
        over = true;
        return false;
      }
      text.append(data, n);
      return true;
    });
    if (ok) return true;
    close_connection_after(res);
    const stream_cut cut = current_stream == nullptr ? stream_cut::none : current_stream->cut();
    if (over || cut == stream_cut::too_large || res.status == 413) {
      send_error(res, 413, fmt::format("request body exceeds the limit of {} bytes", limit));
    } else if (cut == stream_cut::timed_out) {
      send_error(res, 408,
                 fmt::format("request not received within {} ms", opts.request_timeout.count()));
    } else {
      send_error(res, 400, "request body could not be read (bad chunked framing or encoding)");
    }
    return false;
  }

  result<void> prepare() {
    if (opts.tls.cert_file.empty() != opts.tls.key_file.empty())
      return make_error(errc::invalid_argument, "TLS needs both a certificate and a key file");
    if (!opts.tls.client_ca_file.empty() && opts.tls.cert_file.empty())
      return make_error(errc::invalid_argument, "a client CA needs TLS (a certificate and key)");
    if (!auth_required() && !opts.allow_unauthenticated && !is_loopback_host(opts.host))
      return make_error(errc::failed_precondition,
                        "refusing to serve {} without authentication: give a bearer token file "
                        "or a client CA, or allow unauthenticated access explicitly",
                        opts.host);
    if (!opts.tls.cert_file.empty() && !tls) {
      auto made = tls_context::create(opts.tls, !opts.bearer_token.empty());
      if (!made) return made.error();
      tls.emplace(std::move(*made));
      svr.set_tls(&*tls);
    }
    return {};
  }

  result<void> bind_socket() {
    if (started) return make_error(errc::failed_precondition, "the server already runs");
    HETSCHED_TRY(prepare());
    if (opts.port == 0) {
      port = svr.bind_to_any_port(opts.host);
    } else {
      port = svr.bind_to_port(opts.host, opts.port) ? opts.port : -1;
    }
    if (port <= 0)
      return make_error(errc::failed_precondition, "cannot bind {}:{}", opts.host, opts.port);
    // Linux takes a second listen() on a listening socket as a new backlog: 16 clients that
    // connect at once overflow a queue of 5 and see resets or second-long SYN retries.
    if (listen_fd != INVALID_SOCKET) (void)::listen(listen_fd, SOMAXCONN);
    started = true;
    return {};
  }
};

extender_server::extender_server(extender& ex, server_options opts)
    : impl_(std::make_unique<impl>(ex, std::move(opts))) {}

extender_server::~extender_server() { stop(); }

result<int> extender_server::start() {
  HETSCHED_TRY(impl_->bind_socket());
  auto ended = std::make_shared<std::atomic<bool>>(false);
  impl_->thread = std::thread([s = &impl_->svr, ended] {
    (void)s->listen_after_bind();
    *ended = true;
  });
  // httplib's stop() does nothing before the accept loop runs: wait for it, so that a stop()
  // right after start() cannot be lost (and leave join() waiting for ever).
  while (!impl_->svr.is_running() && !*ended) std::this_thread::yield();
  return impl_->port;
}

result<void> extender_server::run() {
  HETSCHED_TRY(impl_->bind_socket());
  if (!impl_->svr.listen_after_bind())
    return make_error(errc::failed_precondition, "listening on port {} failed", impl_->port);
  return {};
}

void extender_server::stop() {
  if (!impl_ || !impl_->started) return;
  impl_->svr.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->started = false;
}

int extender_server::port() const noexcept { return impl_->port; }

std::string extender_server::serve_bytes(std::string_view raw, std::size_t* consumed) {
  memory_stream s(raw);
  impl_->svr.serve(s, false);
  if (consumed != nullptr) *consumed = s.consumed();
  return s.output();
}

}  // namespace hetsched::k8s
