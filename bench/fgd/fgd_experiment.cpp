// SPDX-License-Identifier: MIT
// hetsched-fgd-experiment: runs the FGD (ATC'23) openb experiment and prints, for every trace and
// policy, the mean (and sample std) over the seeds of the GPU allocation ratio at 100% and 130%
// arrived demand, next to the published means of fgd_expected_summary_by_workload_policy.csv.
//
//   hetsched-fgd-experiment [--shared DIR] [--seeds FIRST LAST] [--policy NAME]... [TRACE...]
//
// TRACE is a pod-list suffix (default, gpushare40, multigpu20, gpuspec10, ...); default: default.
// Per run: shuffle_and_inflate(pods, seed) to 130%, nodes shuffled with the same seed, target
// workload from the uninflated trace, run_fgd_replay(). Also prints the wall time of each run.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <hetsched/sim/fgd_replay.hpp>
#include <hetsched/workload/openb.hpp>

namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct published {
  double at100 = NAN;
  double at130 = NAN;
};

/// Reads workload,policy -> means from the summary CSV (policy names like "06-FGD").
std::map<std::pair<std::string, std::string>, published> read_published(const std::string& text) {
  std::map<std::pair<std::string, std::string>, published> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string x;
    while (std::getline(ls, x, ',')) f.push_back(x);
    if (f.size() < 7) continue;
    std::string policy = f[1].substr(f[1].find('-') + 1);
    if (policy == "DotProd") policy = "DotProduct";
    out[{f[0], policy}] = published{std::stod(f[4]), std::stod(f[6])};
  }
  return out;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / static_cast<double>(v.size());
}

double stdev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hetsched;
  std::string shared = HETSCHED_SHARED_DIR_DEFAULT;
  std::uint64_t first = 42;
  std::uint64_t last = 51;
  std::vector<fgd_policy> policies;
  std::vector<std::string> traces;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--shared" && i + 1 < argc) {
      shared = argv[++i];
    } else if (a == "--seeds" && i + 2 < argc) {
      first = std::stoull(argv[++i]);
      last = std::stoull(argv[++i]);
    } else if (a == "--policy" && i + 1 < argc) {
      const auto p = parse_fgd_policy(argv[++i]);
      if (!p) {
        fmt::print(stderr, "unknown policy {}\n", argv[i]);
        return 2;
      }
      policies.push_back(*p);
    } else {
      traces.push_back(a);
    }
  }
  if (policies.empty()) {
    policies = {fgd_policy::random,      fgd_policy::dot_product, fgd_policy::gpu_clustering,
                fgd_policy::gpu_packing, fgd_policy::best_fit,    fgd_policy::fgd};
  }
  if (traces.empty()) traces = {"default"};
  const std::string dir = shared + "/data/traces/alibaba_openb_v2023/";
  const auto node_text = read_file(dir + "openb_node_list_gpu_node.csv");
  const auto summary = read_file(
      shared + "/data/traces/fgd_expected_results/fgd_expected_summary_by_workload_policy.csv");
  if (!node_text || !summary) {
    fmt::print(stderr, "cannot read the openb node list or the published summary under {}\n",
               shared);
    return 2;
  }
  auto nodes = workload::parse_openb_nodes(*node_text);
  if (!nodes) {
    fmt::print(stderr, "node list: {}\n", nodes.error().message);
    return 2;
  }
  const auto pub = read_published(*summary);
  std::int64_t total_gpus = 0;
  for (const auto& n : *nodes) total_gpus += n.gpus;
  fmt::print("{:<12} {:<14} {:>5} {:>16} {:>9} {:>7} {:>16} {:>9} {:>7} {:>9}\n", "trace", "policy",
             "seeds", "alloc@100 ours", "published", "diff", "alloc@130 ours", "published", "diff",
             "s/run");
  int status = 0;
  for (const auto& trace_name : traces) {
    const auto pod_text = read_file(dir + "openb_pod_list_" + trace_name + ".csv");
    if (!pod_text) {
      fmt::print(stderr, "cannot read trace {}\n", trace_name);
      return 2;
    }
    auto pods = workload::parse_openb_pods(*pod_text);
    if (!pods) {
      fmt::print(stderr, "{}: {}\n", trace_name, pods.error().message);
      return 2;
    }
    const auto original = sim::fgd_arrivals_from_openb(*pods);
    auto w = sim::fgd_workload_of(original);
    if (!w) {
      fmt::print(stderr, "{}: {}\n", trace_name, w.error().message);
      return 2;
    }
    for (const auto policy : policies) {
      std::vector<double> at100;
      std::vector<double> at130;
      double seconds = 0;
      for (std::uint64_t seed = first; seed <= last; ++seed) {
        auto arrivals = sim::shuffle_and_inflate(original, total_gpus, seed);
        if (!arrivals) {
          fmt::print(stderr, "{}: {}\n", trace_name, arrivals.error().message);
          return 2;
        }
        const auto t0 = std::chrono::steady_clock::now();
        auto run = sim::run_fgd_replay(sim::fgd_nodes_from_openb(*nodes, seed), *arrivals, *w,
                                       policy, seed);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!run) {
          fmt::print(stderr, "{}: {}\n", trace_name, run.error().message);
          return 2;
        }
        const auto& alloc = run->curves.alloc_pct;
        if (alloc.size() > 100 && alloc[100]) at100.push_back(*alloc[100]);
        if (alloc.size() > 130 && alloc[130]) at130.push_back(*alloc[130]);
      }
      const std::string workload_name = "openb_pod_list_" + trace_name;
      const auto it = pub.find({workload_name, std::string(to_string(policy))});
      const published p = it == pub.end() ? published{} : it->second;
      const double d100 = mean(at100) - p.at100;
      const double d130 = mean(at130) - p.at130;
      if (std::fabs(d100) > 0.3) status = 1;
      fmt::print(
          "{:<12} {:<14} {:>5} {:>9.2f}±{:<6.2f} {:>9.2f} {:>+7.2f} {:>9.2f}±{:<6.2f} {:>9.2f} "
          "{:>+7.2f} {:>9.3f}\n",
          trace_name, to_string(policy), at100.size(), mean(at100), stdev(at100), p.at100, d100,
          mean(at130), stdev(at130), p.at130, d130,
          seconds / static_cast<double>(last - first + 1));
      std::fflush(stdout);
    }
  }
  return status;
}
