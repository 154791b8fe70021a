// SPDX-License-Identifier: MIT
// hetsched-k8s-extender: the Kubernetes scheduler extender server (docs/k8s_extender.md).
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <mutex>
#include <pthread.h>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <hetsched/policies/hived_config_json.hpp>

#include "apiserver_binder.hpp"
#include "backend.hpp"
#include "bind_journal.hpp"
#include "cli.hpp"
#include "extender.hpp"
#include "policy_backend.hpp"
#include "server.hpp"

namespace {

using namespace hetsched;
using namespace hetsched::k8s;

int fail(const std::string& message) {
  std::cerr << "hetsched-k8s-extender: " << message << "\n";
  return 2;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// Prints one binding as a JSON line on stdout; whole lines, also from concurrent binds.
void print_binding(const binding_record& rec) {
  static std::mutex mu;
  nlohmann::json j = encode(rec.args);
  j["GPUs"] = rec.where.gpus;
  if (!rec.where.bind_info.is_null()) j["BindInfo"] = rec.where.bind_info;
  const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

std::vector<packer_node> demo_nodes() {
  std::vector<packer_node> nodes;
  nodes.reserve(6);
  for (int i = 0; i < 4; ++i)
    nodes.push_back(packer_node{fmt::format("v100-{}", i), node_template::dgx1_v100, "V100", {}});
  for (int i = 0; i < 2; ++i)
    nodes.push_back(packer_node{fmt::format("a100-{}", i), node_template::dgx_a100, "A100", {}});
  return nodes;
}

}  // namespace

static int run(int argc, char** argv) {
  auto parsed = parse_extender_cli(std::vector<std::string>(argv, argv + argc));
  if (auto* done = std::get_if<cli_exit>(&parsed)) {
    (done->code == 0 ? std::cout : std::cerr) << done->text;
    return done->code;
  }
  const extender_cli& cli = std::get<extender_cli>(parsed);
  server_options sopts;
  sopts.host = cli.host;
  sopts.port = cli.port;
  sopts.url_prefix = cli.url_prefix;
  sopts.max_body_bytes = cli.max_body_bytes;
  sopts.threads = cli.threads;
  sopts.request_timeout = std::chrono::seconds(cli.request_timeout_seconds);
  sopts.idle_timeout = std::chrono::seconds(cli.idle_timeout_seconds);
  sopts.tls = tls_files{cli.tls_cert_file, cli.tls_key_file, cli.client_ca_file};
  sopts.enable_release = cli.enable_release;
  sopts.allow_unauthenticated = cli.allow_unauthenticated;
  if (!cli.token_file.empty()) {
    auto token = read_token_file(cli.token_file);
    if (auto* done = std::get_if<cli_exit>(&token)) {
      std::cerr << "hetsched-k8s-extender: " << done->text;
      return done->code;
    }
    sopts.bearer_token = std::get<std::string>(token);
  }
  extender_options eopts;
  eopts.pending_capacity = cli.pending_capacity;
  eopts.pending_capacity_bytes = cli.pending_capacity_bytes;
  eopts.tolerate_unknown_nodes = cli.tolerate_unknown_nodes;
  const std::string& cluster_file = cli.packer_cluster_file;
  const std::string& hived_file = cli.hived_config_file;
  const std::string& apiserver_url = cli.apiserver_url;
  std::string binds_to = "stdout (JSON lines)";

  std::unique_ptr<backend> b;
  if (!hived_file.empty()) {
    std::string text;
    if (!read_file(hived_file, text)) return fail(fmt::format("cannot read {}", hived_file));
    auto cfg = hived::parse_config_json(text);
    if (!cfg) return fail(fmt::format("{}: {}", hived_file, cfg.error().message));
    auto made = make_hived_backend(*cfg);
    if (!made) return fail(fmt::format("{}: {}", hived_file, made.error().message));
    b = std::move(*made);
  } else if (!cluster_file.empty()) {
    std::string text;
    if (!read_file(cluster_file, text)) return fail(fmt::format("cannot read {}", cluster_file));
    auto j = parse_json(text);
    if (!j) return fail(fmt::format("{}: {}", cluster_file, j.error().message));
    auto nodes = parse_packer_cluster(*j);
    if (!nodes) return fail(fmt::format("{}: {}", cluster_file, nodes.error().message));
    auto made = cli.policy.empty()
                    ? make_packer_backend(std::move(*nodes))
                    : make_policy_backend(cli.policy, std::move(*nodes), cli.policy_tenants);
    if (!made)
      return fail(fmt::format("{}: {}", cli.policy.empty() ? cluster_file : "--policy",
                              made.error().message));
    b = std::move(*made);
  } else {
    auto made = cli.policy.empty()
                    ? make_packer_backend(demo_nodes())
                    : make_policy_backend(cli.policy, demo_nodes(), cli.policy_tenants);
    if (!made)
      return fail(
          fmt::format("{}{}", cli.policy.empty() ? "" : "--policy: ", made.error().message));
    b = std::move(*made);
  }

  // What a restart replays before serving: the API server's bound pods, else the state file.
  std::vector<binding_record> replay;
  std::vector<std::string> replay_notes;
  std::string replay_from;
  std::unique_ptr<bind_journal> journal;
  if (!apiserver_url.empty()) {
    // Each committed bind creates the pod's v1 Binding; a refusal undoes the bind and becomes
    // ExtenderBindingResult.Error (apiserver_binder.hpp).
    auto binder = apiserver_binder::create(apiserver_url,
                                           std::chrono::seconds(cli.apiserver_timeout_seconds));
    if (!binder) return fail(binder.error().message);
    binds_to = fmt::format("the API server at http://{}:{}", binder->host(), binder->port());
    if (!cli.check) {
      auto listed = binder->bound_pods(replay_notes);
      if (!listed) return fail(fmt::format("listing the bound pods: {}", listed.error().message));
      replay = std::move(*listed);
      replay_from = fmt::format("the bound pods of {}", binds_to);
    }
    eopts.on_bind = [bd = std::move(*binder)](const binding_record& rec) { return bd.bind(rec); };
  } else {
    if (!cli.state_file.empty()) {
      bind_journal::contents read;
      auto opened = bind_journal::open(cli.state_file, b->kind(), read);
      if (!opened) return fail(opened.error().message);
      journal = std::move(*opened);
      replay = std::move(read.live);
      replay_notes = std::move(read.warnings);
      replay_from = fmt::format("the state file {}", cli.state_file);
    }
    // One JSON line per committed binding on stdout for a sidecar (or a wrapper) to forward;
    // with the state file only once its record is on disk. A failed journal write or fdatasync
    // refuses the bind (rolled back).
    eopts.on_bind = [j = journal.get()](const binding_record& rec) -> result<void> {
      if (j != nullptr) return j->append_bind(rec);
      print_binding(rec);
      return {};
    };
    if (journal) {
      eopts.after_bind = [j = journal.get()](const binding_record& rec) -> result<void> {
        if (auto synced = j->sync(); !synced) return synced.error();
        print_binding(rec);
        return {};
      };
      const auto report = [](const binding_record& rec, const error& e) {
        std::cerr << "hetsched-k8s-extender: journaling the release of pod "
                  << rec.args.pod_namespace << "/" << rec.args.pod_name
                  << " failed (it comes back bound after a restart): " << e.message << "\n";
      };
      eopts.on_release = [j = journal.get(), report](const binding_record& rec) {
        if (auto r = j->append_release(rec.args.pod_uid); !r) report(rec, r.error());
      };
      eopts.after_release = [j = journal.get(), report](const binding_record& rec) {
        if (auto r = j->sync(); !r) report(rec, r.error());
      };
    }
  }
  extender ex(std::move(b), std::move(eopts));
  for (const auto& note : ex.restore(replay)) replay_notes.push_back(note);
  for (const auto& note : replay_notes)
    std::cerr << "hetsched-k8s-extender: replay: " << note << "\n";
  if (replay_from.empty()) {
    std::cerr << "hetsched-k8s-extender: no --state-file or --apiserver-url: bindings are not "
                 "kept across restarts\n";
  } else {
    std::cerr << "hetsched-k8s-extender: replayed " << ex.bindings().size() << " binding(s) from "
              << replay_from << ", " << ex.used_gpus() << " GPUs in use\n";
  }
  if (cli.check) {
    std::cout << "hetsched-k8s-extender: " << ex.kind() << " backend, " << ex.total_gpus()
              << " GPUs, bindings to " << binds_to << "\n";
    return 0;
  }
  extender_server server(ex, sopts);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // worker threads inherit the mask
  auto port = server.start();
  if (!port && port.error().code == errc::failed_precondition &&
      port.error().message.rfind("refusing", 0) == 0)
    return fail(port.error().message +
                " (--token-file, --client-ca-file with TLS, or --allow-unauthenticated)");
  if (!port) return fail(port.error().message);
  std::cerr << "hetsched-k8s-extender: " << ex.kind() << " backend, " << ex.total_gpus()
            << " GPUs, listening on " << (sopts.tls.cert_file.empty() ? "http" : "https") << "://"
            << sopts.host << ":" << *port << ", authentication: "
            << (sopts.bearer_token.empty() && sopts.tls.client_ca_file.empty() ? "none"
                : sopts.bearer_token.empty()       ? "client certificate"
                : sopts.tls.client_ca_file.empty() ? "bearer token"
                                                   : "client certificate or bearer token")
            << ", release route " << (sopts.enable_release ? "on" : "off") << "\n";
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "hetsched-k8s-extender: signal " << sig << ", stopping\n";
  server.stop();
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "hetsched-k8s-extender: " << e.what() << "\n";
    return 1;
  }
}
