// SPDX-License-Identifier: MIT
// The HTTP front of the extender.
#include "server.hpp"

#include <fmt/format.h>

#include <httplib.h>
#include <string_view>
#include <thread>
#include <utility>

#include <sys/socket.h>

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

constexpr const char* json_type = "application/json";

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

}  // namespace

struct extender_server::impl {
  extender& ex;
  server_options opts;
  httplib::Server svr;
  std::thread thread;
  int port = 0;
  bool started = false;
  socket_t listen_fd = INVALID_SOCKET;

  impl(extender& e, server_options o) : ex(e), opts(std::move(o)) {
    const std::string prefix = normalise_prefix(opts.url_prefix);
    const std::size_t threads = opts.threads == 0 ? 1 : opts.threads;
    svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    svr.set_payload_max_length(opts.max_body_bytes);
    svr.set_keep_alive_max_count(opts.keep_alive_max_requests);
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
      if (res.status == 413) {
        send_error(res, 413, fmt::format("request body exceeds the limit of {} bytes", limit));
      } else if (res.status == 404) {
        send_error(res, 404, "no such endpoint");
      } else {
        send_error(res, res.status, fmt::format("HTTP error {}", res.status));
      }
    });
    for (const char* verb : {"filter", "prioritize", "preempt", "bind", "release"}) {
      svr.Post(prefix + verb, [this, verb](const httplib::Request& req, httplib::Response& res) {
        const std::string ct = req.get_header_value("Content-Type");
        if (!is_json_content(ct)) {
          send_error(res, 415, fmt::format("Content-Type must be application/json, got '{}'", ct));
          return;
        }
        auto body = parse_json(req.body);
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

  result<void> bind_socket() {
    if (started) return make_error(errc::failed_precondition, "the server already runs");
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
  impl_->thread = std::thread([s = &impl_->svr] { (void)s->listen_after_bind(); });
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

}  // namespace hetsched::k8s
