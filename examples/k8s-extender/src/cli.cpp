// SPDX-License-Identifier: MIT
// The command line of hetsched-k8s-extender (CLI11).
#include "cli.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#include <CLI/CLI.hpp>

namespace hetsched::k8s {
namespace {

// Returns "" if `v` is HOST:PORT with a non-empty host and a decimal port 0..65535, else why not.
std::string check_listen(const std::string& v) {
  const auto colon = v.rfind(':');
  if (colon == std::string::npos || colon == 0) return "must be HOST:PORT, got '" + v + "'";
  const std::string_view digits = std::string_view(v).substr(colon + 1);
  int port = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || port < 0 ||
      port > 65535)
    return "the port of '" + v + "' must be a decimal number 0..65535";
  return {};
}

}  // namespace

std::variant<extender_cli, cli_exit> parse_extender_cli(const std::vector<std::string>& args) {
  extender_cli out;
  CLI::App app{
      "hetsched-k8s-extender: a Kubernetes scheduler extender placing GPU pods with hetsched "
      "(docs/k8s_extender.md)",
      args.empty() ? "hetsched-k8s-extender" : args.front()};
  app.option_defaults()->always_capture_default();

  auto* packer = app.add_option("--packer-cluster", out.packer_cluster_file,
                                "packer backend: nodes as JSON (docs/k8s_extender.md)")
                     ->type_name("FILE");
  auto* hived = app.add_option("--hived-config", out.hived_config_file,
                               "HiveD backend: hivedscheduler's config shape as JSON")
                    ->type_name("FILE");
  auto* demo = app.add_flag("--demo", out.demo,
                            "packer backend on 4 dgx1-v100 (V100) + 2 dgx-a100 (A100) nodes");
  auto* policy =
      app.add_option("--policy", out.policy,
                     "drive this registry policy through the policy contract over the nodes of "
                     "--packer-cluster or --demo, e.g. fifo+packer, fifo+fgd, drf+packer:fit=worst "
                     "(docs/k8s_extender.md)")
          ->type_name("SPEC");
  auto* tenants = app.add_option("--policy-tenants", out.policy_tenants,
                                 "with --policy: namespaces in tenant order (tenant 0, 1, ...); "
                                 "other namespaces share the next tenant")
                      ->type_name("NS,...")
                      ->delimiter(',');
  tenants->needs(policy);
  policy->excludes(hived);
  packer->excludes(hived, demo);
  hived->excludes(packer, demo);
  demo->excludes(packer, hived);
  app.add_flag("--check", out.check, "load the backend, print a one-line summary and exit");

  std::string listen = out.host + ":" + std::to_string(out.port);
  app.add_option("--listen", listen, "address to listen on (port 0: an ephemeral port)")
      ->type_name("HOST:PORT")
      ->check(CLI::Validator(check_listen, "HOST:PORT", "HOST:PORT"));
  app.add_option("--url-prefix", out.url_prefix,
                 "routes PATH/filter, PATH/prioritize, ... (kube-scheduler's urlPrefix path)")
      ->type_name("PATH");
  app.add_option("--max-body-bytes", out.max_body_bytes,
                 "largest request body, however it is framed (413 above)")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30));
  app.add_option("--threads", out.threads,
                 "worker threads; each open connection holds one while it sends a request")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
  app.add_option("--pending-capacity", out.pending_capacity,
                 "filtered pods remembered for bind (oldest dropped first)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10'000'000}));
  app.add_flag("--tolerate-unknown-nodes", out.tolerate_unknown_nodes,
               "unknown nodes fail as unresolvable instead of HTTP 404");
  auto* apiserver =
      app.add_option(
             "--apiserver-url", out.apiserver_url,
             "create each pod's v1 Binding through this API server URL, plain http, meant "
             "for `kubectl proxy` (http://127.0.0.1:8001); without it each binding is printed "
             "as a JSON line on stdout")
          ->type_name("URL");
  app.add_option("--apiserver-timeout", out.apiserver_timeout_seconds,
                 "connect/read timeout of the API server requests, seconds")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3600}));

  app.add_option("--pending-bytes", out.pending_capacity_bytes,
                 "bytes the filtered pods remembered for bind may take (oldest dropped first)")
      ->check(CLI::Range(std::size_t{1} << 20, std::size_t{1} << 40));
  app.add_option("--request-timeout", out.request_timeout_seconds,
                 "seconds from a request's first byte to its last body byte (and for a TLS "
                 "handshake); slower requests are cut (408)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{600}));
  app.add_option("--idle-timeout", out.idle_timeout_seconds,
                 "seconds an open connection may wait for its next request (less while other "
                 "connections wait for a worker thread)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3600}));
  auto* cert = app.add_option("--tls-cert-file", out.tls_cert_file,
                              "serve HTTPS with this PEM certificate (chain)")
                   ->type_name("FILE");
  auto* key =
      app.add_option("--tls-key-file", out.tls_key_file, "the PEM private key of --tls-cert-file")
          ->type_name("FILE");
  auto* ca = app.add_option("--client-ca-file", out.client_ca_file,
                            "accept clients whose TLS certificate this PEM CA signed "
                            "(kube-scheduler's tlsConfig certFile/keyFile)")
                 ->type_name("FILE");
  cert->needs(key);
  key->needs(cert);
  ca->needs(cert);
  app.add_option("--token-file", out.token_file,
                 "require `Authorization: Bearer TOKEN` (the file's text) on every route, unless "
                 "a client certificate verified")
      ->type_name("FILE");
  app.add_flag("--enable-release", out.enable_release,
               "serve POST <prefix>/release, which gives a pod's GPUs back (for a watcher of pod "
               "deletions)");
  app.add_flag("--allow-unauthenticated", out.allow_unauthenticated,
               "serve a non-loopback --listen address without --token-file or --client-ca-file");

  app.add_option("--state-file", out.state_file,
                 "without --apiserver-url: journal every bind and release to this file "
                 "(fsync'd) and replay it at start, so a restart keeps the bindings")
      ->type_name("FILE")
      ->excludes(apiserver);

  std::vector<const char*> argv;
  argv.reserve(args.size() + 1);
  argv.push_back(args.empty() ? "hetsched-k8s-extender" : args.front().c_str());
  for (std::size_t i = 1; i < args.size(); ++i) argv.push_back(args[i].c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    std::ostringstream text;
    const int code = app.exit(e, text, text);
    return cli_exit{code == 0 ? 0 : 2, text.str()};
  }
  if (out.packer_cluster_file.empty() && out.hived_config_file.empty() && !out.demo)
    return cli_exit{
        2,
        "choose a backend: --packer-cluster FILE, --hived-config FILE or --demo (--policy SPEC "
        "needs the nodes of --packer-cluster FILE or --demo)\n" +
            app.help()};
  if (out.pending_capacity_bytes < 2 * out.max_body_bytes)
    return cli_exit{2,
                    "--pending-bytes must be at least twice --max-body-bytes, so that the pod "
                    "of the largest request fits\n"};
  const auto colon = listen.rfind(':');
  out.host = listen.substr(0, colon);
  out.port = std::stoi(listen.substr(colon + 1));
  return out;
}

std::variant<std::string, cli_exit> read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return cli_exit{2, "--token-file " + path + ": cannot be read\n"};
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())) != 0)
    token.pop_back();
  if (token.size() < 16)
    return cli_exit{2, "--token-file " + path + ": the token must have at least 16 bytes\n"};
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f)
      return cli_exit{
          2, "--token-file " + path + ": the token holds white space or a control character\n"};
  }
  return token;
}

}  // namespace hetsched::k8s
