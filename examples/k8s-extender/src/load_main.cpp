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
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
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
#include "bind_journal.hpp"
#include "extender.hpp"
#include "server.hpp"

#include <CLI/CLI.hpp>
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
  std::vector<double> latency_us;       // filter and prioritize
  std::vector<double> bind_latency_us;  // bind (with the state file: until it is on disk)
  std::size_t other_requests = 0;       // binds and releases
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
    const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    if (timed) {
      rep.latency_us.push_back(us);
    } else {
      ++rep.other_requests;
      if (path == "/bind") rep.bind_latency_us.push_back(us);
    }
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

int usage(const std::string& why) {
  std::cerr << "hetsched-extender-load: " << why << "\n";
  return 2;
}

// Returns "" if `v` is HOST:PORT with a decimal port 1..65535, else why not.
std::string check_url(const std::string& v) {
  const auto colon = v.rfind(':');
  if (colon == std::string::npos || colon == 0) return "must be HOST:PORT, got '" + v + "'";
  const std::string digits = v.substr(colon + 1);
  int port = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || port < 1 ||
      port > 65535)
    return "the port of '" + v + "' must be a decimal number 1..65535";
  return {};
}

}  // namespace

static int run(int argc, char** argv) {
  options o;
  CLI::App app{
      "hetsched-extender-load: a loopback load test of the extender (docs/k8s_extender.md)",
      "hetsched-extender-load"};
  app.option_defaults()->always_capture_default();
  app.add_option("--requests", o.requests, "filter + prioritize requests in total")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000'000}));
  app.add_option("--connections", o.connections, "client threads, one keep-alive connection each")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
  app.add_option("--bind-every", o.bind_every, "bind every K-th pod")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  app.add_option("--hold", o.hold, "release a bound pod H binds later")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}));
  std::string state_file;
  app.add_option("--state-file", state_file,
                 "journal the in-process server's binds and releases to this file (replaced), "
                 "as hetsched-k8s-extender --state-file does")
      ->type_name("FILE");
  std::string url;
  app.add_option("--url", url, "target a running extender instead of an in-process one")
      ->type_name("HOST:PORT")
      ->check(CLI::Validator(check_url, "HOST:PORT", "HOST:PORT"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!url.empty()) {
    const auto colon = url.rfind(':');
    o.host = url.substr(0, colon);
    o.port = std::stoi(url.substr(colon + 1));
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
  std::unique_ptr<bind_journal> journal;
  if (port == 0) {
    auto b = make_packer_backend(nodes);
    if (!b) return usage(b.error().message);
    extender_options eo;
    if (!state_file.empty()) {
      // as the server runs with --state-file: every bind and release fsync'd before the answer
      bind_journal::contents read;
      (void)std::remove(state_file.c_str());
      auto opened = bind_journal::open(state_file, "packer", read);
      if (!opened) return usage(opened.error().message);
      journal = std::move(*opened);
      eo.on_bind = [j = journal.get()](const binding_record& rec) { return j->append_bind(rec); };
      eo.after_bind = [j = journal.get()](const binding_record&) { return j->sync(); };
      eo.on_release = [j = journal.get()](const binding_record& rec) {
        if (auto r = j->append_release(rec.args.pod_uid); !r)
          std::cerr << "journal: " << r.error().message << "\n";
      };
      eo.after_release = [j = journal.get()](const binding_record&) {
        if (auto r = j->sync(); !r) std::cerr << "journal: " << r.error().message << "\n";
      };
    }
    ex = std::make_unique<extender>(std::move(*b), std::move(eo));
    server_options so;
    so.threads = o.connections + 4;
    so.enable_release = true;
    server = std::make_unique<extender_server>(*ex, so);
    auto p = server->start();
    if (!p) return usage(p.error().message);
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
  std::vector<double> bind_all;
  std::size_t non_200 = 0, binds_ok = 0, refused = 0, bad = 0, releases = 0, others = 0;
  std::map<std::string, std::int64_t> live;
  for (auto& r : reports) {
    all.insert(all.end(), r.latency_us.begin(), r.latency_us.end());
    bind_all.insert(bind_all.end(), r.bind_latency_us.begin(), r.bind_latency_us.end());
    others += r.other_requests;
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
            << "all requests (also binds and releases) " << sent + others << ": "
            << static_cast<double>(sent + others) / seconds << " req/s; bind p50 "
            << percentile(bind_all, 0.50) << " us, p99 " << percentile(bind_all, 0.99) << " us\n"
            << "binds ok " << binds_ok << ", refused (no longer fit) " << refused << ", releases "
            << releases << ", non-200 " << non_200 << ", bad " << bad << "\n";
  const bool pass = non_200 == 0 && bad == 0 && consistent && sent >= o.requests;
  if (journal)
    std::cout << "state file " << state_file << ": " << journal->records() << " records, "
              << journal->live() << " live, " << journal->fsyncs() << " fdatasync calls\n";
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
