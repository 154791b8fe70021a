// SPDX-License-Identifier: MIT
// hetsched-sim: replay a workload (an embedded synthetic one, or a trace file) on a cluster under
// several policies and compare them side by side.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include <hetsched/metrics/fragmentation.hpp>
#include <hetsched/metrics/metrics.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/sim/fragmentation_recorder.hpp>
#include <hetsched/sim/policy_defaults.hpp>
#include <hetsched/sim/sharing_anomaly.hpp>
#include <hetsched/sim/speed_model.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/workload/openb.hpp>
#include <hetsched/workload/openb_cluster.hpp>
#include <hetsched/workload/synthetic.hpp>

#include "report.hpp"
#include "trace_files.hpp"

#include <sys/resource.h>

namespace {

using namespace hetsched;

constexpr std::string_view default_policies[] = {"fifo+packer", "sjf+packer", "tiresias+packer",
                                                 "drf+packer", "fifo+gandiva"};

void print_help() {
  fmt::print(
      "usage: hetsched-sim [options]\n"
      "\n"
      "Replays a workload on a GPU cluster under one or more scheduling policies and prints a\n"
      "side-by-side summary. Without --trace it generates a seeded synthetic workload shaped\n"
      "after the Philly (or Helios) trace summaries.\n"
      "\n"
      "Cluster (one of):\n"
      "  --cluster NAME          built-in cluster: {} (default demo)\n"
      "  --cluster openb-nodes:PATH\n"
      "                          the nodes of an Alibaba openb node list (CPU, memory, GPU\n"
      "                          count and model per node; models keep their openb names)\n"
      "  --nodes T:N[,T:N...]    node list from templates ({}), in racks of 8\n"
      "\n"
      "Workload:\n"
      "  --trace FORMAT:PATH     read a trace instead (formats: {}); errors name file:line:field\n"
      "  --jobs N                synthetic: number of jobs (default 5000)\n"
      "  --seed S                synthetic and failure randomness seed (default 1)\n"
      "  --profile P             synthetic: philly or helios (default philly)\n"
      "  --load L                synthetic: offered load, GPU demand / capacity (default 0.9)\n"
      "  --tenants N             synthetic: number of VCs (default 8)\n"
      "  --max-gpus N            synthetic: cap on a job's GPUs (default min(128, cluster))\n"
      "\n"
      "Policies:\n"
      "  --policy SPEC           repeatable; SPEC = ORDER[:k=v,...][+PLACEMENT[:k=v,...]]\n"
      "                          orderings: fifo, sjf, tiresias[:thresholds=GPUs/GPUs...],\n"
      "                                     drf[:weights=TENANT=W/TENANT=W/...[/*=W]|quota]\n"
      "                          drf weights: integers 1..1000000, unlisted tenants 1 (or *=W);\n"
      "                          weights=quota takes each tenant's --vc-quota GPUs\n"
      "                          placements: packer[:fit=best|worst,gang=together|tasks,\n"
      "                                             MIGRATION],\n"
      "                                      gandiva[:oversubscribe=0|1,slices=N,MIGRATION],\n"
      "                                      "
      "capacity[:borrow=0|1,borrow_limit=GPUs,fit=best|worst,\n"
      "                                               preemption=none|classic|fair|\n"
      "                                                          proportional,\n"
      "                                               min_runtime_s=N,quota=G/G..,\n"
      "                                               PCPP,\n"
      "                                               placer=packer|hived],\n"
      "                                      hived[:top=rack|node,guaranteed_min_priority=P,\n"
      "                                            preemption=0|1,quota=G/G..],\n"
      "                                      fgd[:policy=fgd|best_fit|dot_product|gpu_packing|\n"
      "                                          gpu_clustering|random,seed=N],\n"
      "                                      first-fit, random[:seed=N] (baselines: lowest\n"
      "                                      indices; uniform among feasible nodes/GPUs)\n"
      "                          capacity preemption (default none): Kueue classic or\n"
      "                          fair-sharing preemption reclaims borrowed quota, never from\n"
      "                          a job that has run less than min_runtime_s seconds of\n"
      "                          simulated time (Kueue's minimum runtime, default 0; it\n"
      "                          becomes a victim at the first pass after that);\n"
      "                          proportional (alias pcpp): YARN's proportional capacity\n"
      "                          preemption, one round per monitoring interval; PCPP:\n"
      "                          max_ignored_over_capacity=0.1 (dead zone),\n"
      "                          natural_termination_factor=0.2, total_preemption_per_round=\n"
      "                          0.1 (of the cluster), monitoring_interval_ms=3000 (YARN's\n"
      "                          defaults; 0: every pass); hived\n"
      "                          preemption (default 1, 0 under tiresias): guaranteed jobs\n"
      "                          preempt opportunistic and lower-priority ones; victims stop at\n"
      "                          once and free their GPUs after --preemption-delay-s; under\n"
      "                          tiresias, which preempts by itself, placement preemption\n"
      "                          works across tenants and priorities and tiresias' within\n"
      "                          them (docs/simulator.md); capacity placer=hived binds\n"
      "                          admitted jobs with HiveD (one VC over the cluster)\n"
      "                          MIGRATION (Gandiva's introspective mode; default on for\n"
      "                          gandiva, off for packer): migrate=0|1|consolidate|defragment,\n"
      "                          migrate_threshold=N/D (defragment down to N/D of a server,\n"
      "                          default 3/4), migrate_interval_s=S (at most one plan per S\n"
      "                          simulated seconds, default 60); moved jobs pay\n"
      "                          --migration-cost-s\n"
      "                          default: {}\n"
      "  --vc-quota PATH         VC quota table: quotas of capacity and hived by tenant name\n"
      "                          (default: capacity equal shares, hived shares proportional to\n"
      "                          GPU-time demand). A VC -> node table (Philly, Venus; 8 GPUs per\n"
      "                          node) or a daily VC -> GPU table (Helios Earth, header date,...)\n"
      "  --vc-quota-day DAY      which quotas of a daily table: latest (default), a date such as\n"
      "                          2020-06-01, max or mean (per VC, over all days)\n"
      "  --queue-tree PATH       hierarchical capacity queues for the capacity policies without\n"
      "                          a tree= of their own (capacity:tree=PATH names one per\n"
      "                          policy): a JSON queue tree (cohorts, queues, flavors, user\n"
      "                          limits, fair sharing, preemption; docs/capacity_queues.md)\n"
      "                          run by the library's admission cycle\n"
      "\n"
      "Engine:\n"
      "  --round-s S             schedule only every S seconds (default 0: event-driven;\n"
      "                          preemptive orderings re-evaluate every 60 s)\n"
      "  --blocking              strict order: stop a pass at the first job that does not fit\n"
      "  --elastic               submit preemptible multi-task jobs as elastic (gandiva:grow=1)\n"
      "  --preemption-cost-s S   added to a preempted job's remaining work (default 30)\n"
      "  --preemption-delay-s S  time a placement's preemption victims keep their GPUs before\n"
      "                          they are requeued (two-phase preemption; default 30)\n"
      "  --migration-cost-s S    added to a migrated job's remaining work (default 30)\n"
      "  --resume-cost-s S       added when a time-sliced job resumes (default 1)\n"
      "  --time-slice-s S        time-slice rotation period (default 60)\n"
      "  --failure-prob P        probability that an attempt fails (default 0)\n"
      "  --retries N             failures requeued before a job fails for good (default 3)\n"
      "  --node-mtbf-h H         mean time between failures of one node, hours (default 0: off)\n"
      "  --node-repair-s S       time a failed node stays down (default 3600)\n"
      "  --sample-s S            time-series period (default: span / 500, at least 60)\n"
      "\n"
      "Speed model (docs/speed_model.md; off by default: every job runs at its nominal speed):\n"
      "  --speed-model           a job's speed depends on its GPU type, the locality of its\n"
      "                          GPUs (NVLink/PCIe switch, socket, node, rack), co-location and\n"
      "                          its GPU count; job types come from the trace (Gavel's job_type)\n"
      "  --throughput-table FORMAT:PATH\n"
      "                          measured throughputs per job type and GPU type (formats: gavel,\n"
      "                          e.g. gavel_throughputs/simulation_throughputs.json, or "
      "hetsched);\n"
      "                          implies --speed-model. Without it GPU types do not differ\n"
      "  --reference-gpu TYPE    the GPU type trace durations refer to (default v100)\n"
      "\n"
      "Output:\n"
      "  --out DIR               write into DIR: per policy jobs_*.csv/.json and series_*.csv/\n"
      "                          .json (allocation, utilisation, demand, FGD fragmentation);\n"
      "                          summary.csv, summary.json; SVG plots jct_cdf, utilisation\n"
      "                          (busy GPUs over time), gpus_over_time_*, alloc_frag_vs_demand_*\n"
      "                          (allocation and fragmentation against arrived demand)\n"
      "  --private-vcs           also run each VC alone on a private cluster of its quota and\n"
      "                          print the sharing anomaly: the quota from --vc-quota, or without\n"
      "                          a table the VC's share of GPU-time demand; the first nodes\n"
      "                          holding that many GPUs\n"
      "  --progress / --no-progress  progress bar on stderr (default: when stderr is a terminal)\n"
      "  --help                  this text\n",
      fmt::join(builtin_cluster_names(), ", "),
      [] {
        std::string s;
        for (const node_template t : all_node_templates()) {
          if (!s.empty()) s += ", ";
          s += to_string(t);
        }
        return s;
      }(),
      cli::trace_formats(), fmt::join(default_policies, " "));
}

class progress_bar final : public sim::sim_observer {
 public:
  explicit progress_bar(std::string label) : label_(std::move(label)) { progress_every = 2000; }
  void on_progress(std::uint64_t done, std::uint64_t total, std::int64_t now_ms) override {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double f = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const int bars = static_cast<int>(f * 30);
    fmt::print(stderr, "\r{:<24} [{:=<{}}{:<{}}] {:5.1f}% {}/{} jobs, simulated {:.1f} d", label_,
               "", bars, "", 30 - bars, 100 * f, done, total,
               static_cast<double>(now_ms) / 86'400'000.0);
    std::fflush(stderr);
  }
  void finish() { fmt::print(stderr, "\r{:<110}\r", ""); }

 private:
  std::string label_;
  std::chrono::steady_clock::time_point last_{};
};

template <typename T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

int fail(std::string_view message) {
  fmt::print(stderr, "hetsched-sim: {}\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  std::string cluster_name = "demo";
  std::string nodes_spec;
  std::string trace_spec;
  std::string vc_quota_path;
  std::string vc_quota_day = "latest";
  std::string queue_tree_path;
  std::string out_dir;
  std::vector<std::string> policies;
  workload::synthetic_params sp;
  sp.jobs = 5000;
  bool max_gpus_set = false;
  sim::sim_params params;
  bool speed = false;
  std::string throughput_spec;
  speed_model_params speed_params;
  bool private_vcs = false;
  int progress = -1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const auto value = [&]() -> std::optional<std::string_view> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    const auto need = [&](std::string_view what) -> std::optional<std::string_view> {
      auto v = value();
      if (!v) fmt::print(stderr, "hetsched-sim: {} needs a value ({})\n", a, what);
      return v;
    };
    const auto num_s = [&](std::int64_t& into) -> bool {
      auto v = need("seconds");
      if (!v) return false;
      auto d = parse_number<double>(*v);
      if (!d || *d < 0) {
        fmt::print(stderr, "hetsched-sim: {} {}: expected a non-negative number of seconds\n", a,
                   *v);
        return false;
      }
      into = static_cast<std::int64_t>(*d * 1000.0);
      return true;
    };
    const auto num_u = [&](auto& into) -> bool {
      auto v = need("integer");
      if (!v) return false;
      auto d = parse_number<std::remove_reference_t<decltype(into)>>(*v);
      if (!d) {
        fmt::print(stderr, "hetsched-sim: {} {}: expected a non-negative integer\n", a, *v);
        return false;
      }
      into = *d;
      return true;
    };
    const auto num_d = [&](double& into) -> bool {
      auto v = need("number");
      if (!v) return false;
      auto d = parse_number<double>(*v);
      if (!d) {
        fmt::print(stderr, "hetsched-sim: {} {}: expected a number\n", a, *v);
        return false;
      }
      into = *d;
      return true;
    };
    bool ok = true;
    if (a == "--help" || a == "-h") {
      print_help();
      return 0;
    } else if (a == "--cluster") {
      auto v = need("name");
      ok = v.has_value();
      if (ok) cluster_name = std::string(*v);
    } else if (a == "--nodes") {
      auto v = need("T:N list");
      ok = v.has_value();
      if (ok) nodes_spec = std::string(*v);
    } else if (a == "--trace") {
      auto v = need("FORMAT:PATH");
      ok = v.has_value();
      if (ok) trace_spec = std::string(*v);
    } else if (a == "--vc-quota") {
      auto v = need("PATH");
      ok = v.has_value();
      if (ok) vc_quota_path = std::string(*v);
    } else if (a == "--queue-tree") {
      auto v = need("PATH");
      ok = v.has_value();
      if (ok) queue_tree_path = std::string(*v);
    } else if (a == "--vc-quota-day") {
      auto v = need("latest, max, mean or a date");
      ok = v.has_value();
      if (ok) vc_quota_day = std::string(*v);
    } else if (a == "--out") {
      auto v = need("directory");
      ok = v.has_value();
      if (ok) out_dir = std::string(*v);
    } else if (a == "--policy") {
      auto v = need("SPEC");
      ok = v.has_value();
      if (ok) policies.emplace_back(*v);
    } else if (a == "--profile") {
      auto v = need("philly or helios");
      ok = v.has_value();
      if (ok && *v == "philly") {
        sp.profile = workload::synthetic_profile::philly;
      } else if (ok && *v == "helios") {
        sp.profile = workload::synthetic_profile::helios;
      } else if (ok) {
        return fail(fmt::format("--profile {}: expected philly or helios", *v));
      }
    } else if (a == "--jobs") {
      // A whole number, also written with an exponent (1e6); checked against the generator's
      // limit here so that the error names the option (synthesize() refuses it too).
      auto v = need("integer");
      if (!v) return 2;
      const auto whole = parse_number<std::uint64_t>(*v);
      const auto real = whole ? std::optional<double>() : parse_number<double>(*v);
      if (!whole && !(real && *real >= 0 && *real == std::floor(*real)))
        return fail(fmt::format("--jobs {}: expected a whole number of jobs", *v));
      if (whole ? *whole == 0 || *whole > workload::max_synthetic_jobs
                : *real < 1 || *real > static_cast<double>(workload::max_synthetic_jobs))
        return fail(fmt::format("--jobs {}: expected 1..{} synthetic jobs", *v,
                                workload::max_synthetic_jobs));
      sp.jobs = whole ? *whole : static_cast<std::uint64_t>(*real);
    } else if (a == "--seed") {
      ok = num_u(sp.seed);
      params.seed = sp.seed;
    } else if (a == "--load") {
      ok = num_d(sp.load);
    } else if (a == "--tenants") {
      ok = num_u(sp.tenants);
    } else if (a == "--max-gpus") {
      ok = num_u(sp.max_gpus);
      max_gpus_set = true;
    } else if (a == "--round-s") {
      ok = num_s(params.round_ms);
    } else if (a == "--blocking") {
      params.blocking = true;
    } else if (a == "--elastic") {
      params.elastic = true;
    } else if (a == "--preemption-cost-s") {
      ok = num_s(params.preemption_cost_ms);
    } else if (a == "--preemption-delay-s") {
      ok = num_s(params.preemption_delay_ms);
    } else if (a == "--migration-cost-s") {
      ok = num_s(params.migration_cost_ms);
    } else if (a == "--resume-cost-s") {
      ok = num_s(params.resume_cost_ms);
    } else if (a == "--time-slice-s") {
      ok = num_s(params.time_slice_ms);
    } else if (a == "--failure-prob") {
      ok = num_d(params.job_failure_probability);
    } else if (a == "--retries") {
      ok = num_u(params.retry_limit);
    } else if (a == "--node-mtbf-h") {
      ok = num_d(params.node_mtbf_hours);
    } else if (a == "--node-repair-s") {
      ok = num_s(params.node_repair_ms);
    } else if (a == "--sample-s") {
      ok = num_s(params.sample_ms);
    } else if (a == "--speed-model") {
      speed = true;
    } else if (a == "--throughput-table") {
      auto v = need("FORMAT:PATH");
      ok = v.has_value();
      if (ok) throughput_spec = std::string(*v);
      speed = true;
    } else if (a == "--reference-gpu") {
      auto v = need("GPU type");
      if (!v) return 2;
      auto type = gpu_type::parse(*v);
      if (!type) return fail(fmt::format("--reference-gpu: {}", type.error().message));
      speed_params.reference_gpu = *type;
    } else if (a == "--private-vcs") {
      private_vcs = true;
    } else if (a == "--progress") {
      progress = 1;
    } else if (a == "--no-progress") {
      progress = 0;
    } else {
      return fail(fmt::format("unknown option '{}' (see --help)", a));
    }
    if (!ok) return 2;
  }
  if (policies.empty()) policies.assign(std::begin(default_policies), std::end(default_policies));
  const bool show_progress = progress == 1 || (progress == -1 && isatty(STDERR_FILENO) != 0);

  // Cluster.
  result<cluster_topology> topo = make_error(errc::internal, "no cluster");
  if (!nodes_spec.empty()) {
    cluster_builder b("custom");
    std::string_view rest = nodes_spec;
    while (!rest.empty()) {
      const std::size_t comma = std::min(rest.find(','), rest.size());
      const std::string_view item = rest.substr(0, comma);
      rest = comma < rest.size() ? rest.substr(comma + 1) : std::string_view{};
      const std::size_t colon = item.find(':');
      const auto tpl = parse_node_template(item.substr(0, colon));
      // 0 stands for a missing or bad count (value_or: GCC 12 -O3 misreads the optional).
      const std::size_t count = colon == std::string_view::npos
                                    ? 0
                                    : parse_number<std::size_t>(item.substr(colon + 1)).value_or(0);
      if (!tpl || count == 0)
        return fail(fmt::format("--nodes: '{}' is not TEMPLATE:COUNT with a known template", item));
      b.add_nodes(*tpl, count);
    }
    b.racks(8);
    topo = b.build();
  } else if (cluster_name.starts_with("openb-nodes:")) {
    const std::string path = cluster_name.substr(std::string_view("openb-nodes:").size());
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(fmt::format("--cluster: {}: cannot open the openb node list", path));
    std::stringstream buf;
    buf << in.rdbuf();
    auto nodes = workload::parse_openb_nodes(buf.str());
    if (!nodes) return fail(fmt::format("{}: {}", path, nodes.error().message));
    topo = workload::openb_cluster_topology(*nodes);
    if (!topo) return fail(fmt::format("{}: {}", path, topo.error().message));
  } else {
    topo = make_builtin_cluster(cluster_name);
  }
  if (!topo) return fail(topo.error().message);
  auto model = to_cluster(*topo);
  if (!model) return fail(model.error().message);
  const auto description = std::make_shared<const cluster>(std::move(*model));
  if (speed) {
    throughput_table table;
    if (!throughput_spec.empty()) {
      auto loaded = cli::load_throughput_table(throughput_spec);
      if (!loaded) return fail(loaded.error().message);
      table = std::move(*loaded);
    }
    speed_params.enabled = true;
    auto m = speed_model::make(speed_params, std::move(table));
    if (!m) return fail(fmt::format("speed model: {}", m.error().message));
    params.speed = std::move(*m);
    params.topology = std::make_shared<const cluster_topology>(*topo);
  }
  // Synthetic jobs larger than the smallest GPU node are split into tasks of that size.
  std::uint32_t gpus_per_node = 0;
  for (const node_info& n : description->nodes())
    if (n.device_count > 0 && (gpus_per_node == 0 || n.device_count < gpus_per_node))
      gpus_per_node = n.device_count;

  // Workload.
  workload::trace trace;
  std::vector<std::size_t> trace_lines;
  if (!trace_spec.empty()) {
    auto loaded = cli::load_trace(trace_spec);
    if (!loaded) return fail(loaded.error().message);
    trace = std::move(loaded->jobs);
    trace_lines = std::move(loaded->lines);
  } else {
    sp.cluster_gpus = description->device_count();
    sp.gpus_per_node = std::max<std::uint32_t>(1, gpus_per_node);
    if (!max_gpus_set)
      sp.max_gpus = static_cast<std::uint32_t>(
          std::min<std::size_t>(128, std::max<std::size_t>(1, description->device_count())));
    auto t = workload::synthesize(sp);
    if (!t) return fail(t.error().message);
    trace = std::move(*t);
  }

  std::vector<policy_spec> specs;
  for (const std::string& p : policies) {
    auto s = parse_policy_spec(p);
    if (!s) return fail(s.error().message);
    specs.push_back(std::move(*s));
  }
  if (auto t = cli::resolve_queue_trees(specs, queue_tree_path); !t)
    return fail(fmt::format("--queue-tree: {}", t.error().message));
  const auto day = workload::parse_vc_day_selector(vc_quota_day);
  if (!day) return fail(fmt::format("--vc-quota-day: {}", day.error().message));
  auto quota_table = cli::load_vc_quota(vc_quota_path, *day);
  if (!quota_table) return fail(quota_table.error().message);
  const workload::vc_quota_table* quotas = *quota_table ? &**quota_table : nullptr;
  if (auto q = sim::fill_quota_params(specs, trace, description->device_count(), quotas); !q)
    return fail(q.error().message);
  // The fragmentation series of --out measures against the trace's own task classes.
  std::optional<fgd_workload> frag_target;
  if (!out_dir.empty() && !trace.empty()) {
    auto w = sim::trace_fgd_workload(trace);
    if (!w) return fail(fmt::format("fragmentation target workload: {}", w.error().message));
    frag_target = std::move(*w);
  }
  for (const policy_spec& s : specs) {
    // Check the names and parameters before any long run.
    auto inst = make_policy(s, *description, &*topo);
    if (!inst) return fail(inst.error().message);
  }
  fmt::print("cluster {}: {} nodes, {} GPUs; workload: {} jobs ({}); {} policies\n",
             nodes_spec.empty() ? cluster_name : "custom", description->node_count(),
             description->device_count(), trace.size(),
             trace_spec.empty() ? fmt::format("synthetic {}, load {}, seed {}",
                                              workload::to_string(sp.profile), sp.load, sp.seed)
                                : trace_spec,
             specs.size());

  std::vector<simcli::policy_run> runs;
  for (const policy_spec& spec : specs) {
    auto inst = make_policy(spec, *description, &*topo);
    if (!inst) return fail(inst.error().message);
    progress_bar bar(spec.text);
    std::optional<sim::fragmentation_recorder> frag;
    if (frag_target) frag.emplace(*frag_target, show_progress ? &bar : nullptr);
    sim::sim_observer* observer = nullptr;
    if (frag) {
      observer = &*frag;
    } else if (show_progress) {
      observer = &bar;
    }
    const auto start = std::chrono::steady_clock::now();
    auto r = sim::simulate(description, trace, *inst->order, *inst->place, params, observer);
    if (show_progress) bar.finish();
    if (!r) {
      std::string msg = r.error().message;
      // Map "trace job N (...)" to the file line when the trace came from a file.
      const std::string_view prefix = "trace job ";
      if (msg.starts_with(prefix) && !trace_lines.empty()) {
        const auto idx = parse_number<std::size_t>(std::string_view(msg).substr(
            prefix.size(), msg.find(' ', prefix.size()) - prefix.size()));
        if (idx && *idx < trace_lines.size())
          msg = fmt::format("{}:{}: {}", trace_spec.substr(trace_spec.find(':') + 1),
                            trace_lines[*idx], msg);
      }
      return fail(fmt::format("policy {}: {}", spec.text, msg));
    }
    simcli::policy_run run;
    run.label = spec.text;
    run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.summary = metrics::summarize(*r);
    run.result = std::move(*r);
    if (frag) run.fragmentation = frag->samples();
    if (private_vcs) {
      const auto plans = sim::plan_private_clusters(*description, trace, quotas);
      auto anomaly =
          sim::run_private_vcs(spec, *description, &*topo, trace, params, run.summary, plans);
      if (!anomaly) return fail(fmt::format("policy {}: {}", spec.text, anomaly.error().message));
      run.anomaly = std::move(*anomaly);
      run.private_plans = plans;
    }
    runs.push_back(std::move(run));
  }
  fmt::print("\n");
  simcli::print_table(stdout, runs);
  if (!out_dir.empty()) {
    if (auto ok = simcli::write_outputs(out_dir, runs, trace); !ok) return fail(ok.error().message);
    fmt::print("\nwrote CSV, JSON and SVG files into {}\n", out_dir);
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print("peak RSS {:.1f} MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
