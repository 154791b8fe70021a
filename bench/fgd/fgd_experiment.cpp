// SPDX-License-Identifier: MIT
// hetsched-fgd-experiment: runs the FGD (ATC'23) openb experiment and prints, for every trace and
// policy, the mean (and sample std) over the seeds of the GPU allocation ratio at 100% and 130%
// arrived demand, next to the published means of fgd_expected_summary_by_workload_policy.csv.
// With --out DIR it also writes that table and the per-seed figures and mean curves as CSV and
// JSON (see print_help()).
//
// Per run: shuffle_and_inflate(pods, seed) to 130%, nodes shuffled with the same seed, target
// workload from the uninflated trace, run_fgd_replay(). Also prints the wall time of each run.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
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
    double at100 = NAN;
    double at130 = NAN;
    const auto parse = [](const std::string& t, double& v) {
      return std::from_chars(t.data(), t.data() + t.size(), v).ec == std::errc();
    };
    if (!parse(f[4], at100) || !parse(f[6], at130)) continue;
    out[{f[0], policy}] = published{at100, at130};
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

constexpr hetsched::fgd_policy all_policies[] = {
    hetsched::fgd_policy::random,         hetsched::fgd_policy::dot_product,
    hetsched::fgd_policy::gpu_clustering, hetsched::fgd_policy::gpu_packing,
    hetsched::fgd_policy::best_fit,       hetsched::fgd_policy::fgd};

std::string policy_names() {
  std::string out;
  for (const hetsched::fgd_policy p : all_policies)
    out += fmt::format("{}{}", out.empty() ? "" : ", ", hetsched::to_string(p));
  return out;
}

void print_help() {
  fmt::print(
      "usage: hetsched-fgd-experiment [options] [TRACE...]\n"
      "\n"
      "Runs the FGD (ATC'23) openb experiment: every pod list TRACE (a suffix of\n"
      "openb_pod_list_<TRACE>.csv: default, cpu050, gpushare40, multigpu20, gpuspec10, ...;\n"
      "default: default) is shuffled with each seed and inflated to 130% of the 6,212 GPUs of\n"
      "openb_node_list_gpu_node.csv, then replayed under each policy. Prints the mean and\n"
      "sample std over the seeds of the GPU allocation ratio at 100% and 130% arrived demand\n"
      "next to the published 10-seed means. Exit status 1 when a mean at 100% differs from the\n"
      "published one by more than 0.3 points, 2 on bad options or input.\n"
      "\n"
      "Options:\n"
      "  --shared DIR            the shared data directory (default {})\n"
      "  --seeds FIRST LAST      seeds FIRST..LAST inclusive (default 42 51)\n"
      "  --policy NAME           repeatable (default: all six):\n"
      "                          {}\n"
      "  --out DIR               also write into DIR (created if missing):\n"
      "                            fgd_summary.csv/.json  the printed table, one row per trace\n"
      "                                                   and policy\n"
      "                            fgd_runs.csv/.json     one row per trace, policy and seed:\n"
      "                                                   allocation at 100/130%, fragmentation\n"
      "                                                   amount and ratio at 80%, wall time\n"
      "                            fgd_curves.csv         per trace, policy and arrived percent\n"
      "                                                   0..130: mean allocation, fragmentation\n"
      "                                                   amount (% of GPUs) and ratio (% of\n"
      "                                                   idle GPUs) over the seeds\n"
      "  --help                  this text\n",
      HETSCHED_SHARED_DIR_DEFAULT, policy_names());
}

int fail(std::string_view message) {
  fmt::print(stderr, "hetsched-fgd-experiment: {}\n", message);
  return 2;
}

std::optional<std::uint64_t> parse_seed(std::string_view s) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string num(double v, int decimals = 4) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string();
}

std::string json_num(double v, int decimals = 4) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string("null");
}

// The value of an optional curve point, NaN when absent.
double at(const std::vector<std::optional<double>>& curve, std::size_t pct) {
  return pct < curve.size() && curve[pct] ? *curve[pct] : NAN;
}

// What --out writes, filled while the experiment runs.
struct output_tables {
  std::string summary_csv =
      "trace,policy,seeds,alloc100_mean,alloc100_std,alloc100_published,alloc100_diff,"
      "alloc130_mean,alloc130_std,alloc130_published,alloc130_diff,seconds_per_run\n";
  std::string summary_json;
  std::string runs_csv =
      "trace,policy,seed,alloc100,alloc130,frag_amount80,frag_ratio80,failed,seconds\n";
  std::string runs_json;
  std::string curves_csv = "trace,policy,arrived_pct,alloc_pct,frag_amount_pct,frag_ratio_pct\n";
};

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hetsched;
  std::string shared = HETSCHED_SHARED_DIR_DEFAULT;
  std::string out_dir;
  std::uint64_t first = 42;
  std::uint64_t last = 51;
  std::vector<fgd_policy> policies;
  std::vector<std::string> traces;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const auto missing = [&](std::string_view what) {
      return fail(fmt::format("{} needs {} (see --help)", a, what));
    };
    if (a == "--help" || a == "-h") {
      print_help();
      return 0;
    } else if (a == "--shared") {
      if (i + 1 >= args.size()) return missing("a directory");
      shared = std::string(args[++i]);
    } else if (a == "--out") {
      if (i + 1 >= args.size()) return missing("a directory");
      out_dir = std::string(args[++i]);
    } else if (a == "--seeds") {
      if (i + 2 >= args.size()) return missing("two seeds, FIRST LAST");
      const auto f = parse_seed(args[i + 1]);
      const auto l = parse_seed(args[i + 2]);
      if (!f || !l)
        return fail(fmt::format("--seeds {} {}: expected two non-negative integers FIRST LAST",
                                args[i + 1], args[i + 2]));
      if (*f > *l) return fail(fmt::format("--seeds {} {}: FIRST is greater than LAST", *f, *l));
      first = *f;
      last = *l;
      i += 2;
    } else if (a == "--policy") {
      if (i + 1 >= args.size()) return missing("a policy name");
      const auto p = parse_fgd_policy(args[++i]);
      if (!p) return fail(fmt::format("--policy {}: unknown policy ({})", args[i], policy_names()));
      policies.push_back(*p);
    } else if (a.starts_with("-")) {
      return fail(fmt::format("unknown option '{}' (see --help)", a));
    } else {
      traces.emplace_back(a);
    }
  }
  if (policies.empty()) {
    policies.assign(std::begin(all_policies), std::end(all_policies));
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
  output_tables tables;
  for (const auto& trace_name : traces) {
    const auto pod_text = read_file(dir + "openb_pod_list_" + trace_name + ".csv");
    if (!pod_text) {
      return fail(fmt::format("cannot read trace {} ({}openb_pod_list_{}.csv)", trace_name, dir,
                              trace_name));
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
      // Per arrived percent 0..130: sums and counts of the seeds' curve points.
      std::vector<std::array<double, 3>> curve_sum(131, {0, 0, 0});
      std::vector<std::array<int, 3>> curve_n(131, {0, 0, 0});
      for (std::uint64_t seed = first; seed <= last; ++seed) {
        auto arrivals = sim::shuffle_and_inflate(original, total_gpus, seed);
        if (!arrivals) {
          fmt::print(stderr, "{}: {}\n", trace_name, arrivals.error().message);
          return 2;
        }
        const auto t0 = std::chrono::steady_clock::now();
        auto run = sim::run_fgd_replay(sim::fgd_nodes_from_openb(*nodes, seed), *arrivals, *w,
                                       policy, seed);
        const double run_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        seconds += run_s;
        if (!run) {
          fmt::print(stderr, "{}: {}\n", trace_name, run.error().message);
          return 2;
        }
        const auto& alloc = run->curves.alloc_pct;
        if (alloc.size() > 100 && alloc[100]) at100.push_back(*alloc[100]);
        if (alloc.size() > 130 && alloc[130]) at130.push_back(*alloc[130]);
        const sim::fgd_curves& c = run->curves;
        for (std::size_t pct = 0; pct < curve_sum.size(); ++pct) {
          const std::array<double, 3> v{at(c.alloc_pct, pct), at(c.frag_amount_pct, pct),
                                        at(c.frag_ratio_pct, pct)};
          for (std::size_t k = 0; k < 3; ++k) {
            if (!std::isfinite(v[k])) continue;
            curve_sum[pct][k] += v[k];
            ++curve_n[pct][k];
          }
        }
        const std::string policy_name(to_string(policy));
        tables.runs_csv += fmt::format("{},{},{},{},{},{},{},{},{:.4f}\n", trace_name, policy_name,
                                       seed, num(at(c.alloc_pct, 100)), num(at(c.alloc_pct, 130)),
                                       num(at(c.frag_amount_pct, 80)),
                                       num(at(c.frag_ratio_pct, 80)), run->failed, run_s);
        tables.runs_json += fmt::format(
            "{}  {{\"trace\": {}, \"policy\": {}, \"seed\": {}, \"alloc100\": {}, "
            "\"alloc130\": {}, \"frag_amount80\": {}, \"frag_ratio80\": {}, \"failed\": {}, "
            "\"seconds\": {:.4f}}}",
            tables.runs_json.empty() ? "" : ",\n", json_string(trace_name),
            json_string(policy_name), seed, json_num(at(c.alloc_pct, 100)),
            json_num(at(c.alloc_pct, 130)), json_num(at(c.frag_amount_pct, 80)),
            json_num(at(c.frag_ratio_pct, 80)), run->failed, run_s);
      }
      for (std::size_t pct = 0; pct < curve_sum.size(); ++pct) {
        std::array<double, 3> m{NAN, NAN, NAN};
        for (std::size_t k = 0; k < 3; ++k)
          if (curve_n[pct][k] > 0) m[k] = curve_sum[pct][k] / curve_n[pct][k];
        tables.curves_csv += fmt::format("{},{},{},{},{},{}\n", trace_name, to_string(policy), pct,
                                         num(m[0]), num(m[1]), num(m[2]));
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
      const double per_run = seconds / static_cast<double>(last - first + 1);
      tables.summary_csv +=
          fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.4f}\n", trace_name, to_string(policy),
                      at100.size(), num(mean(at100)), num(stdev(at100)), num(p.at100), num(d100),
                      num(mean(at130)), num(stdev(at130)), num(p.at130), num(d130), per_run);
      tables.summary_json += fmt::format(
          "{}  {{\"trace\": {}, \"policy\": {}, \"seeds\": {}, \"alloc100_mean\": {}, "
          "\"alloc100_std\": {}, \"alloc100_published\": {}, \"alloc100_diff\": {}, "
          "\"alloc130_mean\": {}, \"alloc130_std\": {}, \"alloc130_published\": {}, "
          "\"alloc130_diff\": {}, \"seconds_per_run\": {:.4f}}}",
          tables.summary_json.empty() ? "" : ",\n", json_string(trace_name),
          json_string(to_string(policy)), at100.size(), json_num(mean(at100)),
          json_num(stdev(at100)), json_num(p.at100), json_num(d100), json_num(mean(at130)),
          json_num(stdev(at130)), json_num(p.at130), json_num(d130), per_run);
    }
  }
  if (!out_dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec)
      return fail(fmt::format("--out {}: cannot create the directory: {}", out_dir, ec.message()));
    const fs::path base(out_dir);
    const std::pair<const char*, std::string> files[] = {
        {"fgd_summary.csv", tables.summary_csv},
        {"fgd_summary.json", "[\n" + tables.summary_json + "\n]\n"},
        {"fgd_runs.csv", tables.runs_csv},
        {"fgd_runs.json", "[\n" + tables.runs_json + "\n]\n"},
        {"fgd_curves.csv", tables.curves_csv},
    };
    for (const auto& [name, text] : files)
      if (!write_text(base / name, text))
        return fail(fmt::format("{}: cannot write", (base / name).string()));
    fmt::print("wrote fgd_summary, fgd_runs (CSV, JSON) and fgd_curves.csv into {}\n", out_dir);
  }
  return status;
}
