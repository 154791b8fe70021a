// SPDX-License-Identifier: MIT
// The command line of hetsched-k8s-extender, parsed with CLI11 (Debian libcli11-dev).
//
// `--x=v` and `--x v` both work; an unknown option, a missing or malformed value and a value out
// of its range each end parsing with an error that names the option (exit code 2); `--help`
// prints the generated, complete option list (exit code 0). Every numeric option has a range
// (see the help text); --listen must be HOST:PORT with PORT a decimal 0..65535.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace hetsched::k8s {

/// Everything the command line sets.
struct extender_cli {
  std::string packer_cluster_file;
  std::string hived_config_file;
  bool demo = false;
  /// --policy SPEC: the policy backend (a registry spec) over the packer cluster or demo nodes.
  std::string policy;
  /// --policy-tenants NS,...: namespaces in tenant order for the policy backend.
  std::vector<std::string> policy_tenants;
  bool check = false;
  std::string host = "127.0.0.1";
  int port = 8888;
  std::string url_prefix = "/";
  std::size_t max_body_bytes = std::size_t{8} << 20;
  std::size_t threads = 32;
  std::size_t pending_capacity = 65536;
  bool tolerate_unknown_nodes = false;
  std::string apiserver_url;
  std::int64_t apiserver_timeout_seconds = 10;
  std::size_t pending_capacity_bytes = std::size_t{256} << 20;
  std::int64_t request_timeout_seconds = 10;
  std::int64_t idle_timeout_seconds = 30;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  std::string token_file;
  bool enable_release = false;
  bool allow_unauthenticated = false;
  std::string state_file;
};

/// How parsing ended without settings: the text to print and the exit code (0 after --help,
/// 2 for an error; the error text names the option).
struct cli_exit {
  int code = 0;
  std::string text;
};

/// Returns the settings of `args` (args[0] is the program name), or the exit to take. Besides
/// each option's own range: --pending-bytes must be at least twice --max-body-bytes, TLS needs
/// both --tls-cert-file and --tls-key-file, and --client-ca-file needs TLS.
[[nodiscard]] std::variant<extender_cli, cli_exit> parse_extender_cli(
    const std::vector<std::string>& args);

/// Returns the bearer token in the file at `path`: its text without trailing white space (a
/// final newline is usual). Errors: invalid_argument naming the file when it cannot be read, is
/// empty, is shorter than 16 bytes, or holds white space or control characters inside the token.
[[nodiscard]] std::variant<std::string, cli_exit> read_token_file(const std::string& path);

}  // namespace hetsched::k8s
