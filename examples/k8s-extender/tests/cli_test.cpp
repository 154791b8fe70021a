// SPDX-License-Identifier: MIT
// The extender's command line: both option spellings, named errors, ranges and the help text.
#include "cli.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace hetsched::k8s {
namespace {

std::variant<extender_cli, cli_exit> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "hetsched-k8s-extender");
  return parse_extender_cli(args);
}

// Returns the error text of a command line that must fail with exit code 2.
std::string error_of(std::vector<std::string> args) {
  auto r = parse(std::move(args));
  const auto* done = std::get_if<cli_exit>(&r);
  if (done == nullptr) return "(accepted)";
  EXPECT_EQ(done->code, 2);
  return done->text;
}

TEST(ExtenderCli, BothSpellingsAndDefaults) {
  auto r = parse({"--demo", "--listen=10.0.0.5:9443", "--threads", "8", "--max-body-bytes=65536",
                  "--pending-capacity", "100", "--apiserver-timeout=3"});
  ASSERT_TRUE(std::holds_alternative<extender_cli>(r)) << std::get<cli_exit>(r).text;
  const auto& c = std::get<extender_cli>(r);
  EXPECT_TRUE(c.demo);
  EXPECT_EQ(c.host, "10.0.0.5");
  EXPECT_EQ(c.port, 9443);
  EXPECT_EQ(c.threads, 8u);
  EXPECT_EQ(c.max_body_bytes, 65536u);
  EXPECT_EQ(c.pending_capacity, 100u);
  EXPECT_EQ(c.apiserver_timeout_seconds, 3);

  auto d = parse({"--demo"});
  ASSERT_TRUE(std::holds_alternative<extender_cli>(d));
  // loopback by default: a stranger on the network cannot reach an unauthenticated extender
  EXPECT_EQ(std::get<extender_cli>(d).host, "127.0.0.1");
  EXPECT_EQ(std::get<extender_cli>(d).port, 8888);
  EXPECT_EQ(std::get<extender_cli>(d).max_body_bytes, 8u << 20);
}

TEST(ExtenderCli, BadValuesAreNamed) {
  // was: a random port, a limit of 0, std::system_error
  EXPECT_NE(error_of({"--demo", "--listen", "host:abc"}).find("--listen"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--listen", "host:abc"}).find("must be a decimal number 0..65535"),
            std::string::npos);
  EXPECT_NE(error_of({"--demo", "--listen", "host:70000"}).find("--listen"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--listen", "8888"}).find("must be HOST:PORT"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--max-body-bytes", "abc"}).find("--max-body-bytes"),
            std::string::npos);
  EXPECT_NE(error_of({"--demo", "--max-body-bytes=0"}).find("--max-body-bytes"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--threads", "-1"}).find("--threads"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--threads", "0"}).find("--threads"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--pending-capacity", "1e9"}).find("--pending-capacity"),
            std::string::npos);
  EXPECT_NE(error_of({"--demo", "--apiserver-timeout", "0"}).find("--apiserver-timeout"),
            std::string::npos);
  EXPECT_NE(error_of({"--demo", "--no-such-flag"}).find("--no-such-flag"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--threads"}).find("--threads"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--packer-cluster", "c.json"}).find("excludes"), std::string::npos);
  EXPECT_NE(error_of({}).find("choose a backend"), std::string::npos);
  EXPECT_NE(error_of({"--demo", "--request-timeout", "0"}).find("--request-timeout"),
            std::string::npos);
  EXPECT_NE(error_of({"--demo", "--tls-cert-file", "c.pem"}).find("--tls-key-file"),
            std::string::npos);
  EXPECT_NE(error_of({"--demo", "--client-ca-file", "ca.pem"}).find("--tls-cert-file"),
            std::string::npos);
  EXPECT_EQ(error_of({"--demo", "--max-body-bytes", "4194304", "--pending-bytes", "4194304"}),
            "--pending-bytes must be at least twice --max-body-bytes, so that the pod of the "
            "largest request fits\n");
}

TEST(ExtenderCli, HelpIsGeneratedAndComplete) {
  auto r = parse({"--help"});
  const auto* done = std::get_if<cli_exit>(&r);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->code, 0);
  for (const char* opt : {"--packer-cluster", "--hived-config", "--demo", "--check", "--listen",
                          "--url-prefix", "--max-body-bytes", "--threads", "--pending-capacity",
                          "--tolerate-unknown-nodes", "--apiserver-url", "--apiserver-timeout"})
    EXPECT_NE(done->text.find(opt), std::string::npos) << opt;
}

}  // namespace
}  // namespace hetsched::k8s
