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
#include <pthread.h>
#include <sstream>
#include <string>
#include <string_view>

#include <hetsched/policies/hived_config_json.hpp>

#include "apiserver_binder.hpp"
#include "backend.hpp"
#include "extender.hpp"
#include "server.hpp"

namespace {

using namespace hetsched;
using namespace hetsched::k8s;

constexpr const char* usage =
    "usage: hetsched-k8s-extender (--packer-cluster FILE | --hived-config FILE | --demo) "
    "[options]\n"
    "  --packer-cluster FILE     nodes for the packer backend (JSON, docs/k8s_extender.md)\n"
    "  --hived-config FILE       HiveD backend (hivedscheduler's config shape as JSON)\n"
    "  --demo                    packer backend on 4 dgx1-v100 (V100) + 2 dgx-a100 (A100) nodes\n"
    "  --listen HOST:PORT        default 0.0.0.0:8888\n"
    "  --url-prefix PATH         default / (routes PATH/filter, PATH/prioritize, ...)\n"
    "  --max-body-bytes N        default 8388608\n"
    "  --threads N               worker threads, default 32\n"
    "  --pending-capacity N      filtered pods remembered for bind, default 65536\n"
    "  --tolerate-unknown-nodes  unknown nodes fail as unresolvable instead of HTTP 404\n"
    "  --apiserver-url URL       create each pod's v1 Binding through this API server URL,\n"
    "                            plain http, meant for `kubectl proxy` (http://127.0.0.1:8001);\n"
    "                            without it each binding is printed as a JSON line on stdout\n"
    "  --apiserver-timeout SEC   connect/read timeout of those requests, default 10\n"
    "  --check                   load the backend, print a summary and exit\n";

int fail(const std::string& message) {
  std::cerr << "hetsched-k8s-extender: " << message << "\n" << usage;
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
  server_options sopts;
  sopts.host = "0.0.0.0";
  sopts.port = 8888;
  extender_options eopts;
  std::string cluster_file;
  std::string hived_file;
  std::string apiserver_url;
  std::string binds_to = "stdout (JSON lines)";
  long apiserver_timeout = 10;
  bool demo = false;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--packer-cluster") {
      if (!value(cluster_file)) return fail("--packer-cluster needs a file");
    } else if (a == "--hived-config") {
      if (!value(hived_file)) return fail("--hived-config needs a file");
    } else if (a == "--demo") {
      demo = true;
    } else if (a == "--listen") {
      if (!value(v)) return fail("--listen needs HOST:PORT");
      const auto colon = v.rfind(':');
      if (colon == std::string::npos) return fail("--listen needs HOST:PORT");
      sopts.host = v.substr(0, colon);
      sopts.port = std::atoi(v.c_str() + colon + 1);
      if (sopts.port < 0 || sopts.port > 65535) return fail("bad port in --listen");
    } else if (a == "--url-prefix") {
      if (!value(sopts.url_prefix)) return fail("--url-prefix needs a path");
    } else if (a == "--max-body-bytes") {
      if (!value(v)) return fail("--max-body-bytes needs a number");
      sopts.max_body_bytes = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a == "--threads") {
      if (!value(v)) return fail("--threads needs a number");
      sopts.threads = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a == "--pending-capacity") {
      if (!value(v)) return fail("--pending-capacity needs a number");
      eopts.pending_capacity = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a == "--apiserver-url") {
      if (!value(apiserver_url)) return fail("--apiserver-url needs a URL");
    } else if (a == "--apiserver-timeout") {
      if (!value(v)) return fail("--apiserver-timeout needs a number of seconds");
      apiserver_timeout = std::strtol(v.c_str(), nullptr, 10);
      if (apiserver_timeout <= 0 || apiserver_timeout > 3600)
        return fail("--apiserver-timeout must be 1..3600 seconds");
    } else if (a == "--check") {
      check = true;
    } else if (a == "--tolerate-unknown-nodes") {
      eopts.tolerate_unknown_nodes = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    } else {
      return fail(fmt::format("unknown option {}", a));
    }
  }

  std::unique_ptr<backend> b;
  if (!cluster_file.empty() && !hived_file.empty()) return fail("choose one backend");
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
    auto made = make_packer_backend(std::move(*nodes));
    if (!made) return fail(made.error().message);
    b = std::move(*made);
  } else if (demo) {
    auto made = make_packer_backend(demo_nodes());
    if (!made) return fail(made.error().message);
    b = std::move(*made);
  } else {
    return fail("choose a backend");
  }

  if (!apiserver_url.empty()) {
    // Each committed bind creates the pod's v1 Binding; a refusal undoes the bind and becomes
    // ExtenderBindingResult.Error (apiserver_binder.hpp).
    auto binder = apiserver_binder::create(apiserver_url, std::chrono::seconds(apiserver_timeout));
    if (!binder) return fail(binder.error().message);
    binds_to = fmt::format("the API server at http://{}:{}", binder->host(), binder->port());
    eopts.on_bind = [bd = std::move(*binder)](const binding_record& rec) { return bd.bind(rec); };
  } else {
    // Without an API server this prints one JSON line per committed binding for a sidecar (or a
    // wrapper) to forward.
    eopts.on_bind = [](const binding_record& rec) -> result<void> {
      nlohmann::json line = encode(rec.args);
      line["GPUs"] = rec.where.gpus;
      if (!rec.where.bind_info.is_null()) line["BindInfo"] = rec.where.bind_info;
      std::cout << line.dump() << std::endl;
      return {};
    };
  }
  extender ex(std::move(b), std::move(eopts));
  if (check) {
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
  if (!port) return fail(port.error().message);
  std::cerr << "hetsched-k8s-extender: " << ex.kind() << " backend, " << ex.total_gpus()
            << " GPUs, listening on " << sopts.host << ":" << *port << "\n";
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
