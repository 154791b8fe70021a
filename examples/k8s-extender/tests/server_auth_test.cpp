// SPDX-License-Identifier: MIT
// Secure defaults: bearer tokens, TLS with client certificates, no unauthenticated non-loopback
// listener. The certificates are made at test time with the openssl CLI in a temporary
// directory (no key is committed).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <string>
#include <unistd.h>
#include <variant>

#include "cli.hpp"
#include "extender.hpp"
#include "fixtures.hpp"
#include "server.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* token = "s3cret-token-0123456789";

/// A throwaway CA, a server certificate for 127.0.0.1 and client certificates (one signed by
/// the CA, one self-signed), made with the openssl CLI.
class test_pki {
 public:
  test_pki() {
    char tmpl[] = "/tmp/hetsched-pki-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (made == nullptr) return;
    dir_ = made;
    std::ofstream(dir_ / "server.ext") << "subjectAltName=IP:127.0.0.1\n";
    std::ofstream(dir_ / "client.ext") << "extendedKeyUsage=clientAuth\n";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string cmd = fmt::format(
        "cd {0} && openssl req -x509 {1} -keyout ca.key -out ca.crt -subj /CN=test-ca -days 1 && "
        "openssl req {1} -keyout server.key -out server.csr -subj /CN=127.0.0.1 && "
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
        "-out server.crt -days 1 -extfile server.ext && "
        "openssl req {1} -keyout client.key -out client.csr -subj /CN=kube-scheduler && "
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
        "-out client.crt -days 1 -extfile client.ext && "
        "openssl req -x509 {1} -keyout rogue.key -out rogue.crt -subj /CN=rogue -days 1",
        dir_.string(), ec);
    ok_ = std::system(fmt::format("({}) > {}/openssl.log 2>&1", cmd, dir_.string()).c_str()) == 0;
  }
  test_pki(const test_pki&) = delete;
  test_pki& operator=(const test_pki&) = delete;
  ~test_pki() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] std::string path(const char* name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
  bool ok_ = false;
};

class K8sExtenderServerAuth : public ::testing::Test {
 protected:
  void start(server_options opts) {
    ex_ = std::make_unique<extender>(test::packer_cluster());
    server_ = std::make_unique<extender_server>(*ex_, std::move(opts));
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

TEST_F(K8sExtenderServerAuth, BearerTokenGuardsEveryRoute) {
  server_options opts;
  opts.bearer_token = token;
  opts.enable_release = true;
  start(opts);
  httplib::Client c("127.0.0.1", port_);
  const std::string before = ex_->digest();
  for (const char* path : {"/healthz", "/metrics", "/pods"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
    EXPECT_EQ(json::parse(r->body)["Error"], "missing or wrong bearer token");
    EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  }
  for (const char* path : {"/filter", "/prioritize", "/preempt", "/bind", "/release"}) {
    auto r = c.Post(path, test::read_data("filter_nodenames.json"), "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
  }
  c.set_bearer_token_auth("s3cret-token-0123456788");
  EXPECT_EQ(c.Get("/healthz")->status, 401);
  c.set_bearer_token_auth(std::string(token) + "x");
  EXPECT_EQ(c.Get("/healthz")->status, 401);
  EXPECT_EQ(ex_->digest(), before);

  c.set_bearer_token_auth(token);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  auto f = c.Post("/filter", test::read_data("filter_nodenames.json"), "application/json");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 200);
}

TEST_F(K8sExtenderServerAuth, NonLoopbackNeedsAuthentication) {
  extender ex(test::packer_cluster());
  server_options opts;
  opts.host = "0.0.0.0";
  extender_server open(ex, opts);
  auto refused = open.start();
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, errc::failed_precondition);
  EXPECT_EQ(refused.error().message,
            "refusing to serve 0.0.0.0 without authentication: give a bearer token file or a "
            "client CA, or allow unauthenticated access explicitly");
  opts.bearer_token = token;
  extender_server guarded(ex, opts);
  EXPECT_TRUE(guarded.start().has_value());
  guarded.stop();
  opts.bearer_token.clear();
  opts.allow_unauthenticated = true;
  extender_server allowed(ex, opts);
  EXPECT_TRUE(allowed.start().has_value());
  allowed.stop();
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("10.0.0.1"));
}

TEST_F(K8sExtenderServerAuth, TlsWithClientCertificates) {
  test_pki pki;
  ASSERT_TRUE(pki.ok()) << "openssl CLI failed";
  server_options opts;
  opts.tls = tls_files{pki.path("server.crt"), pki.path("server.key"), pki.path("ca.crt")};
  start(opts);

  // kube-scheduler's tlsConfig: certFile/keyFile (client), caFile (server's CA)
  httplib::SSLClient good("127.0.0.1", port_, pki.path("client.crt"), pki.path("client.key"));
  good.set_ca_cert_path(pki.path("ca.crt").c_str());
  good.enable_server_certificate_verification(true);
  auto h = good.Get("/healthz");
  ASSERT_TRUE(h) << httplib::to_string(h.error());
  EXPECT_EQ(h->status, 200);
  auto f = good.Post("/filter", test::read_data("filter_nodenames.json"), "application/json");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 200);

  // no client certificate, a self-signed one, or plain HTTP: no request gets through
  httplib::SSLClient anonymous("127.0.0.1", port_);
  anonymous.set_ca_cert_path(pki.path("ca.crt").c_str());
  EXPECT_FALSE(anonymous.Get("/healthz"));
  httplib::SSLClient rogue("127.0.0.1", port_, pki.path("rogue.crt"), pki.path("rogue.key"));
  rogue.set_ca_cert_path(pki.path("ca.crt").c_str());
  EXPECT_FALSE(rogue.Get("/healthz"));
  httplib::Client plain("127.0.0.1", port_);
  plain.set_read_timeout(2, 0);
  auto p = plain.Get("/healthz");
  EXPECT_TRUE(!p || p->status != 200);
}

TEST_F(K8sExtenderServerAuth, TokenStandsInForAClientCertificate) {
  test_pki pki;
  ASSERT_TRUE(pki.ok()) << "openssl CLI failed";
  server_options opts;
  opts.tls = tls_files{pki.path("server.crt"), pki.path("server.key"), pki.path("ca.crt")};
  opts.bearer_token = token;
  start(opts);
  httplib::SSLClient c("127.0.0.1", port_);
  c.set_ca_cert_path(pki.path("ca.crt").c_str());
  c.enable_server_certificate_verification(true);
  auto r = c.Get("/healthz");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(json::parse(r->body)["Error"],
            "missing or wrong bearer token, and no client certificate signed by the client CA");
  c.set_bearer_token_auth(token);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  httplib::SSLClient cert("127.0.0.1", port_, pki.path("client.crt"), pki.path("client.key"));
  cert.set_ca_cert_path(pki.path("ca.crt").c_str());
  EXPECT_EQ(cert.Get("/healthz")->status, 200);
}

TEST_F(K8sExtenderServerAuth, BadTlsFilesAreNamed) {
  test_pki pki;
  ASSERT_TRUE(pki.ok()) << "openssl CLI failed";
  extender ex(test::packer_cluster());
  server_options opts;
  opts.tls = tls_files{pki.path("server.crt"), pki.path("client.key"), ""};
  extender_server mismatched(ex, opts);
  auto r = mismatched.start();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message.rfind(fmt::format("TLS key {} (for certificate {}): ",
                                                pki.path("client.key"), pki.path("server.crt")),
                                    0),
            0u)
      << r.error().message;
  EXPECT_NE(r.error().message.find("key values mismatch"), std::string::npos);
  opts.tls = tls_files{pki.path("missing.crt"), pki.path("server.key"), ""};
  extender_server missing(ex, opts);
  auto m = missing.start();
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(
      m.error().message.rfind(fmt::format("TLS certificate {}: ", pki.path("missing.crt")), 0), 0u)
      << m.error().message;
}

TEST(K8sExtenderTokenFile, IsReadAndChecked) {
  char tmpl[] = "/tmp/hetsched-token-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string path = tmpl;
  std::ofstream(path) << token << "\n";
  auto ok = read_token_file(path);
  ASSERT_TRUE(std::holds_alternative<std::string>(ok));
  EXPECT_EQ(std::get<std::string>(ok), token);
  std::ofstream(path) << "short\n";
  EXPECT_EQ(std::get<cli_exit>(read_token_file(path)).text,
            "--token-file " + path + ": the token must have at least 16 bytes\n");
  std::ofstream(path) << "two words in one token\n";
  EXPECT_EQ(std::get<cli_exit>(read_token_file(path)).text,
            "--token-file " + path + ": the token holds white space or a control character\n");
  std::remove(path.c_str());
  EXPECT_EQ(std::get<cli_exit>(read_token_file(path)).text,
            "--token-file " + path + ": cannot be read\n");
}

}  // namespace
}  // namespace hetsched::k8s
