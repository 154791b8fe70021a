// SPDX-License-Identifier: MIT
// The HTTP layer's limits: bodies however framed, slow and idle clients, the pending-pod cache in
// bytes. Raw sockets where the framing matters; serve_bytes() where no socket is needed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <httplib.h>
#include <poll.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "extender.hpp"
#include "fixtures.hpp"
#include "server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

/// A raw loopback TCP connection.
class raw_client {
 public:
  explicit raw_client(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;
  ~raw_client() { ::close(fd_); }
  [[nodiscard]] bool connected() const { return connected_; }
  /// Returns false once the peer closed (EPIPE/ECONNRESET).
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  /// Reads until the peer closes or `timeout` passes; returns what arrived.
  std::string read_all(milliseconds timeout, bool* closed = nullptr) {
    std::string out;
    const auto until = steady_clock::now() + timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(until - steady_clock::now()).count();
      if (left <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed != nullptr) *closed = true;
        return out;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
    if (closed != nullptr) *closed = false;
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

std::string chunked_head(const std::string& path) {
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n",
      path);
}

std::string chunk(std::size_t n, char c) {
  return fmt::format("{:x}\r\n{}\r\n", n, std::string(n, c));
}

class K8sExtenderServerLimits : public ::testing::Test {
 protected:
  void start(server_options opts) {
    ex_ = std::make_unique<extender>(test::packer_cluster());
    server_ = std::make_unique<extender_server>(*ex_, opts);
    auto port = server_->start();
    ASSERT_TRUE(port.has_value()) << port.error().message;
    port_ = *port;
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  std::unique_ptr<extender> ex_;
  std::unique_ptr<extender_server> server_;
  int port_ = 0;
};

TEST_F(K8sExtenderServerLimits, ChunkedBodyOverTheLimitIs413) {
  server_options opts;
  opts.max_body_bytes = 4096;
  start(opts);
  raw_client c(port_);
  ASSERT_TRUE(c.connected());
  // 16 MiB in 8 KiB chunks: cpp-httplib alone read it whole (a 200 MiB body took 726 MB RSS)
  std::atomic<bool> refused{false};
  std::thread sender([&] {
    if (!c.send(chunked_head("/filter"))) return;
    for (int i = 0; i < 2048; ++i)
      if (!c.send(chunk(8192, ' '))) {
        refused = true;  // the server closed the connection before taking the body
        return;
      }
    (void)c.send("0\r\n\r\n");
  });
  bool closed = false;
  const std::string answer = c.read_all(milliseconds(10'000), &closed);
  sender.join();
  EXPECT_TRUE(refused.load());
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find(R"({"Error":"request body exceeds the limit of 4096 bytes"})"),
            std::string::npos);
  EXPECT_TRUE(closed);
}

TEST_F(K8sExtenderServerLimits, BodyLimitHoldsWithoutSockets) {
  extender ex(test::packer_cluster());
  server_options opts;
  opts.max_body_bytes = 4096;
  extender_server server(ex, opts);
  std::string raw = chunked_head("/filter");
  for (int i = 0; i < 1024; ++i) raw += chunk(1024, ' ');
  raw += "0\r\n\r\n";
  std::size_t consumed = 0;
  const std::string out = server.serve_bytes(raw, &consumed);
  EXPECT_EQ(out.rfind("HTTP/1.1 413", 0), 0u) << out;
  // the reading stops at the limit: at most one 4 KiB receive buffer past it
  EXPECT_LE(consumed, chunked_head("/filter").size() + 4096 + 2 * 4096);
  EXPECT_LT(consumed, raw.size() / 100);

  // a declared Content-Length over the limit is refused before its body is read
  const std::string declared =
      "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000000\r\n\r\n" +
      std::string(1'000'000, ' ');
  const std::string out2 = server.serve_bytes(declared, &consumed);
  EXPECT_EQ(out2.rfind("HTTP/1.1 413", 0), 0u) << out2;
  EXPECT_LT(consumed, std::size_t{16384});

  // within the limit, a chunked body is served as usual
  const std::string ok =
      chunked_head("/filter") + fmt::format("{:x}\r\n{}\r\n0\r\n\r\n",
                                            test::read_data("filter_nodenames.json").size(),
                                            test::read_data("filter_nodenames.json"));
  const std::string out3 = server.serve_bytes(ok);
  EXPECT_EQ(out3.rfind("HTTP/1.1 200", 0), 0u) << out3;
  EXPECT_NE(out3.find(R"("NodeNames":["v100-0","v100-1","v100-2"])"), std::string::npos) << out3;
}

TEST_F(K8sExtenderServerLimits, CompressedBodyCountsItsDecompressedBytes) {
  server_options opts;
  opts.max_body_bytes = 4096;
  start(opts);
  httplib::Client c("127.0.0.1", port_);
  c.set_compress(true);  // gzip: 1 MiB of spaces is about 1 KiB on the wire
  auto r = c.Post("/filter", std::string(1 << 20, ' '), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(json::parse(r->body)["Error"], "request body exceeds the limit of 4096 bytes");
}

TEST_F(K8sExtenderServerLimits, SlowClientsDoNotStarveHealthz) {
  server_options opts;
  opts.threads = 4;
  opts.request_timeout = milliseconds(1000);
  start(opts);
  // 8 clients (twice the workers) send request head bytes, one every 200 ms for 6 s: with
  // cpp-httplib's per-read timeout (5 s) each held a worker for as long as it kept sending.
  // Each client runs until the server cuts it or its 6 s are over, whatever the probe does (a
  // client stopped when the probe returned was not counted: flaky under ASan).
  std::atomic<int> cut_early{0};
  std::vector<std::thread> slow;
  for (int i = 0; i < 8; ++i) {
    slow.emplace_back([&] {
      raw_client c(port_);
      // a valid request line, then valid header lines for ever
      std::string head = "POST /filter HTTP/1.1\r\n";
      const auto t0 = steady_clock::now();
      for (std::size_t k = 0;; ++k) {
        if (k == head.size()) head += "X-Pad: aaaa\r\n";
        if (!c.send(head.substr(k, 1))) break;
        bool closed = false;
        (void)c.read_all(milliseconds(200), &closed);
        if (closed) {
          // The second four are served after the first four's 1 s deadline: cut at about 2 s.
          if (steady_clock::now() - t0 < milliseconds(4500)) ++cut_early;
          return;
        }
        if (steady_clock::now() - t0 > milliseconds(6000)) return;
      }
    });
  }
  std::this_thread::sleep_for(milliseconds(300));
  httplib::Client probe("127.0.0.1", port_);
  probe.set_read_timeout(8, 0);
  probe.set_connection_timeout(8, 0);
  const auto t0 = steady_clock::now();
  auto h = probe.Get("/healthz");
  const auto waited = steady_clock::now() - t0;
  for (auto& t : slow) t.join();
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  // the 4 slow clients queued before it are served first: two request timeouts (2 s) at most,
  // plus scheduling slack on a loaded machine
  EXPECT_LT(waited, milliseconds(3500));
  // every slow client was cut at its deadline, long before it finished
  EXPECT_EQ(cut_early.load(), 8);
}

TEST_F(K8sExtenderServerLimits, IdleConnectionsYieldToWaitingOnes) {
  server_options opts;
  opts.threads = 2;
  opts.idle_timeout = milliseconds(30'000);
  start(opts);
  // two kept-alive connections that went quiet after one request hold both workers
  std::vector<std::unique_ptr<httplib::Client>> idle;
  for (int i = 0; i < 2; ++i) {
    idle.push_back(std::make_unique<httplib::Client>("127.0.0.1", port_));
    idle.back()->set_keep_alive(true);
    ASSERT_EQ(idle.back()->Get("/healthz")->status, 200);
  }
  httplib::Client probe("127.0.0.1", port_);
  probe.set_read_timeout(10, 0);
  const auto t0 = steady_clock::now();
  auto h = probe.Get("/healthz");
  const auto waited = steady_clock::now() - t0;
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  // an idle connection gives its worker up within one 50 ms slice once another waits
  EXPECT_LT(waited, milliseconds(1000));
  // and the yielded connections reconnect transparently
  EXPECT_EQ(idle[0]->Get("/healthz")->status, 200);
}

TEST(K8sExtenderPendingCache, IsBoundedInBytes) {
  extender_options opts;
  opts.pending_capacity_bytes = std::size_t{1} << 20;
  extender ex(test::packer_cluster(), opts);
  // 100 pods with a 100 KiB annotation each: a count cap of 65,536 kept them all (1,000 pods of
  // 1 MiB took RSS from 9 MB to 1.19 GB)
  for (int i = 0; i < 100; ++i) {
    json pod = test::gpu_pod(fmt::format("p{}", i), fmt::format("u{}", i), 1);
    pod["metadata"]["annotations"]["big"] = std::string(100 << 10, 'x');
    ASSERT_EQ(ex.handle("filter", test::args_for(pod, {"v100-0"})).status, 200);
    EXPECT_LE(ex.pending_bytes(), std::size_t{1} << 20);
  }
  // each pod takes 100 KiB + its fixed costs: the newest 10 fit in 1 MiB
  json p99 = test::gpu_pod("p99", "u99", 1);
  p99["metadata"]["annotations"]["big"] = std::string(100 << 10, 'x');
  const std::size_t each = pod_footprint(decode_pod(p99).value());
  EXPECT_EQ(ex.pending_pods(), (std::size_t{1} << 20) / each);
  EXPECT_EQ(ex.pending_pods(), 10u);
  EXPECT_EQ(ex.handle("bind", test::bind_for(test::gpu_pod("p0", "u0", 1), "v100-0")).status, 404);
  const auto last = ex.handle("bind", test::bind_for(test::gpu_pod("p99", "u99", 1), "v100-0"));
  EXPECT_EQ(last.status, 200);
  EXPECT_EQ(last.body["Error"], "");
  EXPECT_EQ(ex.pending_pods(), 9u);
  EXPECT_EQ(ex.pending_bytes(), 9 * each);
}

}  // namespace
}  // namespace hetsched::k8s
