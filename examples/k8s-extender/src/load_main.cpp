// SPDX-License-Identifier: MIT
// hetsched-extender-load: a loopback load test of the extender (docs/k8s_extender.md).
//
// Starts the server in-process on an ephemeral port with the packer backend (64 dgx1-v100 and
// 16 dgx-a100 nodes), or targets --url. C client threads each hold one keep-alive connection
// and send filter then prioritize for a fresh pod (1, 2, 4 or 8 GPUs, the 80 node names as
// kube-scheduler sends them with nodeCacheCapable); every --bind-every-th pod is bound to its
// best-scored passing node and released again --hold pods later; each thread also re-binds one
// bound UID, which must be refused. At the end it checks: every request answered 200, every
// refused bind carried an Error, no UID bound twice, the server's bindings equal the client's
// live set, no GPU of a node in two bindings, and committed GPUs == the sum over live bindings.
// Prints p50/p99 latency of filter+prioritize, requests per second and "load test: PASS".
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <httplib.h>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "extender.hpp"
#include "server.hpp"

#include <nlohmann/json.hpp>

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;
using namespace hetsched;
using namespace hetsched::k8s;

struct options {
  std::size_t requests = 10000;  // filter + prioritize requests in total
  std::size_t connections = 16;
  std::size_t bind_every = 4;
  std::size_t hold = 8;
  std::string host = "127.0.0.1";
  int port = 0;
};

struct thread_report {
  std::vector<double> latency_us;  // filter and prioritize
  std::size_t non_200 = 0;
  std::size_t binds_ok = 0;
  std::size_t binds_refused = 0;
  std::size_t bad_refusals = 0;  // a refusal without Error, or a double bind accepted
  std::size_t releases = 0;
  std::map<std::string, std::int64_t> live;  // uid -> GPUs
  std::vector<std::string> errors;
};

json pod_json(const std::string& uid, std::int64_t gpus) {
  return json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", fmt::format("load-{}", uid)}, {"namespace", "load"}, {"uid", uid}}},
      {"spec",
       {{"schedulerName", "default-scheduler"},
        {"containers",
         json::array({{{"name", "main"},
                       {"image", "busybox"},
                       {"resources",
                        {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}},
                         {"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}}};
}

void client_thread(const options& o, int port, std::size_t id, std::size_t requests,
                   const std::vector<std::string>& node_names, thread_report& rep) {
  httplib::Client cli(o.host, port);
  cli.set_keep_alive(true);
  cli.set_tcp_nodelay(true);
  cli.set_read_timeout(60, 0);
  const std::int64_t sizes[] = {1, 2, 4, 8};
  std::deque<std::string> held;
  std::string bound_once;
  auto post = [&](const std::string& path, const json& body, bool timed) -> std::optional<json> {
    const auto t0 = clock_type::now();
    auto res = cli.Post(path.c_str(), body.dump(), "application/json");
    const auto t1 = clock_type::now();
    if (timed) rep.latency_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (!res || res->status != 200) {
      ++rep.non_200;
      if (rep.errors.size() < 5)
        rep.errors.push_back(fmt::format(
            "{}: {}", path,
            res ? fmt::format("{} {}", res->status, res->body) : httplib::to_string(res.error())));
      return std::nullopt;
    }
    return json::parse(res->body, nullptr, false);
  };
  for (std::size_t i = 0; 2 * i < requests; ++i) {
    const std::string uid = fmt::format("u{}-{}", id, i);
    const std::int64_t gpus = sizes[(i + id) % 4];
    const json args{{"Pod", pod_json(uid, gpus)}, {"Nodes", nullptr}, {"NodeNames", node_names}};
    auto filtered = post("/filter", args, true);
    if (2 * i + 1 >= requests) break;
    json passing = filtered ? (*filtered)["NodeNames"] : json::array();
    json prio_args = args;
    prio_args["NodeNames"] = passing.is_array() ? passing : json::array();
    auto scores = post("/prioritize", prio_args, true);
    if (!scores || !scores->is_array() || scores->empty() || i % o.bind_every != 0) continue;
    std::string best;
    std::int64_t best_score = -1;
    for (const auto& h : *scores)
      if (h["Score"].get<std::int64_t>() > best_score) {
        best_score = h["Score"].get<std::int64_t>();
        best = h["Host"].get<std::string>();
      }
    const json bind{{"PodName", fmt::format("load-{}", uid)},
                    {"PodNamespace", "load"},
                    {"PodUID", uid},
                    {"Node", best}};
    auto bound = post("/bind", bind, false);
    if (!bound) continue;
    if ((*bound)["Error"].get<std::string>().empty()) {
      ++rep.binds_ok;
      rep.live.emplace(uid, gpus);
      held.push_back(uid);
      if (bound_once.empty()) {
        bound_once = uid;
        auto again = post("/bind", bind, false);
        if (!again || (*again)["Error"].get<std::string>().empty()) ++rep.bad_refusals;
      }
    } else {
      ++rep.binds_refused;  // another thread took the GPUs first: a refusal, not a loss
    }
    while (held.size() > o.hold) {
      auto released = post("/release", json{{"PodUID", held.front()}}, false);
      if (released) {
        rep.live.erase(held.front());
        ++rep.releases;
      }
      held.pop_front();
    }
  }
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::llround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(k, v.size() - 1)];
}

int usage(const char* why) {
  std::cerr << "hetsched-extender-load: " << why
            << "\nusage: hetsched-extender-load [--requests N] [--connections C] "
               "[--bind-every K] [--hold H] [--url HOST:PORT]\n";
  return 2;
}

}  // namespace

static int run(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage("missing value");
    const std::string v = argv[++i];
    if (a == "--requests") {
      o.requests = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a == "--connections") {
      o.connections = std::max<std::size_t>(1, std::strtoull(v.c_str(), nullptr, 10));
    } else if (a == "--bind-every") {
      o.bind_every = std::max<std::size_t>(1, std::strtoull(v.c_str(), nullptr, 10));
    } else if (a == "--hold") {
      o.hold = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a == "--url") {
      const auto colon = v.rfind(':');
      if (colon == std::string::npos) return usage("--url needs HOST:PORT");
      o.host = v.substr(0, colon);
      o.port = std::atoi(v.c_str() + colon + 1);
    } else {
      return usage("unknown option");
    }
  }

  std::vector<packer_node> nodes;
  nodes.reserve(80);
  for (int k = 0; k < 64; ++k)
    nodes.push_back(packer_node{fmt::format("v100-{}", k), node_template::dgx1_v100, "V100", {}});
  for (int k = 0; k < 16; ++k)
    nodes.push_back(packer_node{fmt::format("a100-{}", k), node_template::dgx_a100, "A100", {}});
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const auto& n : nodes) names.push_back(n.name);

  std::unique_ptr<extender> ex;
  std::unique_ptr<extender_server> server;
  int port = o.port;
  if (port == 0) {
    auto b = make_packer_backend(nodes);
    if (!b) return usage(b.error().message.c_str());
    ex = std::make_unique<extender>(std::move(*b));
    server_options so;
    so.threads = o.connections + 4;
    server = std::make_unique<extender_server>(*ex, so);
    auto p = server->start();
    if (!p) return usage(p.error().message.c_str());
    port = *p;
  }

  std::vector<thread_report> reports(o.connections);
  std::vector<std::thread> threads;
  const auto t0 = clock_type::now();
  for (std::size_t t = 0; t < o.connections; ++t) {
    const std::size_t share = o.requests / o.connections + (t < o.requests % o.connections ? 1 : 0);
    threads.emplace_back(client_thread, std::cref(o), port, t, share, std::cref(names),
                         std::ref(reports[t]));
  }
  for (auto& th : threads) th.join();
  const double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();

  std::vector<double> all;
  std::size_t non_200 = 0, binds_ok = 0, refused = 0, bad = 0, releases = 0;
  std::map<std::string, std::int64_t> live;
  for (auto& r : reports) {
    all.insert(all.end(), r.latency_us.begin(), r.latency_us.end());
    non_200 += r.non_200;
    binds_ok += r.binds_ok;
    refused += r.binds_refused;
    bad += r.bad_refusals;
    releases += r.releases;
    for (const auto& e : r.errors) std::cerr << "error: " << e << "\n";
    for (const auto& [uid, g] : r.live)
      if (!live.emplace(uid, g).second) ++bad;
  }
  const std::size_t sent = all.size();

  // Server-side view of the bindings.
  bool consistent = true;
  httplib::Client cli(o.host, port);
  auto pods = cli.Get("/pods");
  std::int64_t live_gpus = 0;
  for (const auto& [uid, g] : live) live_gpus += g;
  if (!pods || pods->status != 200) {
    consistent = false;
    std::cerr << "GET /pods failed\n";
  } else {
    const json j = json::parse(pods->body);
    std::set<std::pair<std::string, std::int64_t>> gpu_slots;
    std::int64_t server_gpus = 0;
    for (const auto& [uid, rec] : j.items()) {
      if (live.count(uid) == 0) consistent = false;
      for (const auto& g : rec["GPUs"]) {
        ++server_gpus;
        if (!gpu_slots.emplace(rec["Node"].get<std::string>(), g.get<std::int64_t>()).second)
          consistent = false;  // one GPU in two bindings
      }
    }
    if (j.size() != live.size() || server_gpus != live_gpus) consistent = false;
    if (ex && ex->used_gpus() != live_gpus) consistent = false;
    std::cout << "server bindings " << j.size() << ", client live " << live.size()
              << ", GPUs committed " << server_gpus << " (client sum " << live_gpus << ")\n";
  }

  const double p50 = percentile(all, 0.50);
  const double p99 = percentile(all, 0.99);
  std::cout << "requests (filter+prioritize) " << sent << " over " << o.connections
            << " connections in " << seconds << " s: " << static_cast<double>(sent) / seconds
            << " req/s, p50 " << p50 << " us, p99 " << p99 << " us\n"
            << "binds ok " << binds_ok << ", refused (no longer fit) " << refused << ", releases "
            << releases << ", non-200 " << non_200 << ", bad " << bad << "\n";
  const bool pass = non_200 == 0 && bad == 0 && consistent && sent >= o.requests;
  std::cout << "load test: " << (pass ? "PASS" : "FAIL") << "\n";
  if (server) server->stop();
  return pass ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "hetsched-extender-load: " << e.what() << "\n";
    return 1;
  }
}
