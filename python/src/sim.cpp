// SPDX-License-Identifier: MIT
// Bindings of the simulator (policy specs as hetsched-sim's --policy, clusters, workloads) and of
// the metrics computed from a run.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <hetsched/metrics/fragmentation.hpp>
#include <hetsched/metrics/metrics.hpp>
#include <hetsched/policies/gandiva_placement.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/migrating_placement.hpp>
#include <hetsched/policies/orderings.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/sim/engine.hpp>
#include <hetsched/sim/fragmentation_recorder.hpp>
#include <hetsched/sim/policy_defaults.hpp>
#include <hetsched/sim/sharing_anomaly.hpp>
#include <hetsched/sim/speed_model.hpp>
#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/workload/openb.hpp>
#include <hetsched/workload/openb_cluster.hpp>
#include <hetsched/workload/synthetic.hpp>

#include "convert.hpp"
#include "trace_files.hpp"

namespace hetsched::python {
namespace {

constexpr std::string_view profile_names[] = {"philly", "helios"};

// The cluster of a run: its model description and, when known, its topology.
struct run_cluster {
  std::shared_ptr<const cluster> description;
  std::optional<cluster_topology> topology;
};

cluster_topology nodes_topology(std::string_view spec) {
  cluster_builder b("custom");
  std::string_view rest = spec;
  while (!rest.empty()) {
    const std::size_t comma = std::min(rest.find(','), rest.size());
    const std::string_view item = rest.substr(0, comma);
    rest = comma < rest.size() ? rest.substr(comma + 1) : std::string_view{};
    const std::size_t colon = item.find(':');
    std::size_t count = 0;
    const std::string_view n = colon == std::string_view::npos ? "" : item.substr(colon + 1);
    const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), count);
    if (colon == std::string_view::npos || ec != std::errc() || ptr != n.data() + n.size() ||
        count == 0)
      raise(errc::invalid_argument, fmt::format("nodes: '{}' is not TEMPLATE:COUNT", item));
    b.add_nodes(template_from(std::string(item.substr(0, colon)), "nodes"), count);
  }
  b.racks(8);
  return unwrap(b.build());
}

run_cluster cluster_arg(const py::object& c, const py::object& nodes) {
  run_cluster out;
  if (!nodes.is_none()) {
    out.topology = nodes_topology(nodes.cast<std::string>());
  } else if (py::isinstance<py::str>(c) && c.cast<std::string>().starts_with("openb-nodes:")) {
    const std::string path = c.cast<std::string>().substr(std::string_view("openb-nodes:").size());
    std::ifstream in(path, std::ios::binary);
    if (!in) raise(errc::not_found, fmt::format("{}: cannot open the openb node list", path));
    std::stringstream buf;
    buf << in.rdbuf();
    auto openb = workload::parse_openb_nodes(buf.str());
    if (!openb) raise(openb.error().code, fmt::format("{}: {}", path, openb.error().message));
    auto topo = workload::openb_cluster_topology(*openb);
    if (!topo) raise(topo.error().code, fmt::format("{}: {}", path, topo.error().message));
    out.topology = std::move(*topo);
  } else if (py::isinstance<py::str>(c)) {
    out.topology = unwrap(make_builtin_cluster(c.cast<std::string>()));
  } else if (py::isinstance<cluster_topology>(c)) {
    out.topology = c.cast<cluster_topology>();
  } else if (py::isinstance<cluster>(c)) {
    out.description = c.cast<std::shared_ptr<cluster>>();
    return out;
  } else {
    raise(errc::invalid_argument,
          "cluster: expected a built-in cluster name, a ClusterTopology or a Cluster");
  }
  out.description = std::make_shared<const cluster>(unwrap(to_cluster(*out.topology)));
  return out;
}

workload::trace synthetic_trace(const py::object& obj, const cluster& c) {
  workload::synthetic_params sp;
  sp.jobs = 5000;
  std::uint32_t gpus_per_node = 0;
  for (const node_info& n : c.nodes())
    if (n.device_count > 0 && (gpus_per_node == 0 || n.device_count < gpus_per_node))
      gpus_per_node = n.device_count;
  sp.cluster_gpus = c.device_count();
  sp.gpus_per_node = std::max<std::uint32_t>(1, gpus_per_node);
  sp.max_gpus = static_cast<std::uint32_t>(
      std::min<std::size_t>(128, std::max<std::size_t>(1, c.device_count())));
  if (!obj.is_none()) {
    fields f(obj, "synthetic");
    f.get("seed", sp.seed);
    f.get("jobs", sp.jobs);
    std::string profile;
    if (f.get("profile", profile))
      sp.profile =
          parse_enum<workload::synthetic_profile>(profile, profile_names, f.path("profile"));
    f.get("load", sp.load);
    f.get("cluster_gpus", sp.cluster_gpus);
    f.get("gpus_per_node", sp.gpus_per_node);
    f.get("max_gpus", sp.max_gpus);
    f.get("min_duration_ms", sp.min_duration_ms);
    f.get("max_duration_ms", sp.max_duration_ms);
    f.get("tenants", sp.tenants);
    f.get("cpu_milli_per_gpu", sp.cpu_milli_per_gpu);
    f.get("memory_mib_per_gpu", sp.memory_mib_per_gpu);
    f.get("preemptible_fraction", sp.preemptible_fraction);
    f.finish();
  }
  return unwrap(workload::synthesize(sp));
}

std::int64_t ms_of(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds < 0)
    raise(errc::invalid_argument,
          fmt::format("{}: expected a non-negative number of seconds", what));
  return static_cast<std::int64_t>(seconds * 1000.0);
}

void put_distribution(py::dict& d, const char* prefix, const metrics::distribution& x) {
  const std::string p(prefix);
  d[py::str(p + "_mean_s")] = x.mean;
  d[py::str(p + "_median_s")] = x.median;
  d[py::str(p + "_p95_s")] = x.p95;
  d[py::str(p + "_p99_s")] = x.p99;
  d[py::str(p + "_p999_s")] = x.p999;
  d[py::str(p + "_max_s")] = x.max;
}

py::dict summary_to_py(const metrics::run_summary& s) {
  py::dict d;
  d["jobs"] = s.jobs;
  d["succeeded"] = s.succeeded;
  d["failed"] = s.failed;
  d["rejected"] = s.rejected;
  d["unplaceable"] = s.unplaceable;
  put_distribution(d, "jct", s.jct_s);
  put_distribution(d, "queue", s.queue_s);
  d["mean_pending_s"] = s.mean_pending_s;
  d["makespan_s"] = s.makespan_s;
  d["throughput_per_h"] = s.throughput_per_h;
  d["utilisation"] = s.utilisation;
  d["allocation_ratio"] = s.allocation_ratio;
  d["jain"] = s.jain;
  d["dominant_share_spread"] = s.dominant_share_spread;
  d["ftf_mean"] = s.ftf_mean;
  d["ftf_max"] = s.ftf_max;
  d["ftf_unfair_fraction"] = s.ftf_unfair_fraction;
  d["placement_slowdown"] = s.placement_slowdown;
  d["preemptions"] = s.preemptions;
  d["migrations"] = s.migrations;
  d["retries"] = s.retries;
  d["suspensions"] = s.suspensions;
  d["node_failures"] = s.node_failures;
  return d;
}

py::list tenants_to_py(const metrics::run_summary& s) {
  py::list rows;
  for (const metrics::tenant_summary& t : s.tenants) {
    py::dict r;
    r["name"] = t.name;
    r["jobs"] = t.jobs;
    r["succeeded"] = t.succeeded;
    r["mean_queue_s"] = t.mean_queue_s;
    r["mean_jct_s"] = t.mean_jct_s;
    r["service_ratio"] = t.service_ratio;
    r["dominant_share"] = t.dominant_share;
    rows.append(r);
  }
  return rows;
}

py::dict result_to_py(const std::string& label, const workload::trace& trace,
                      const sim::sim_result& r, const metrics::run_summary& s,
                      const std::vector<metrics::fragmentation_sample>& frag) {
  py::dict d;
  d["policy"] = label;
  py::dict summary = summary_to_py(s);
  summary["policy"] = label;
  d["summary"] = summary;
  d["tenants"] = tenants_to_py(s);
  py::list jobs;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const sim::job_outcome& o = r.jobs[i];
    py::dict x;
    x["index"] = i;
    x["name"] = i < trace.size() ? trace[i].name : std::string();
    x["tenant"] = o.tenant < r.tenants.size() ? r.tenants[o.tenant] : std::string();
    x["submit_ms"] = o.submit_ms;
    x["first_start_ms"] = o.first_start_ms;
    x["finish_ms"] = o.finish_ms;
    x["duration_ms"] = o.duration_ms;
    x["milli_gpu"] = o.milli_gpu;
    x["pending_ms"] = o.pending_ms;
    x["active_at_submit"] = o.active_at_submit;
    x["state"] = std::string(to_string(o.state));
    x["jct_ms"] = o.state == job_state::succeeded ? py::object(py::int_(o.finish_ms - o.submit_ms))
                                                  : py::none();
    x["queue_ms"] =
        o.first_start_ms >= 0 ? py::object(py::int_(o.first_start_ms - o.submit_ms)) : py::none();
    x["preemptions"] = o.preemptions;
    x["migrations"] = o.migrations;
    x["failures"] = o.failures;
    x["suspensions"] = o.suspensions;
    x["run_ms"] = o.run_ms;
    x["ideal_run_ms"] = o.ideal_run_ms;
    x["rejected"] = o.rejected;
    jobs.append(x);
  }
  d["jobs"] = jobs;
  py::list series;
  const std::vector<std::int64_t> arrived = metrics::arrived_demand_milli(r);
  const bool has_frag = frag.size() == r.series.size();
  for (std::size_t k = 0; k < r.series.size(); ++k) {
    const sim::time_sample& t = r.series[k];
    py::dict x;
    x["time_ms"] = t.time_ms;
    x["allocated_milli_gpu"] = t.allocated_milli_gpu;
    x["busy_milli_gpu"] = t.busy_milli_gpu;
    x["arrived_milli_gpu"] = arrived[k];
    if (has_frag) {
      x["fragmented_milli_gpu"] = frag[k].fragmented_milli_gpu;
      x["idle_milli_gpu"] = frag[k].idle_milli_gpu;
    }
    x["healthy_milli_gpu"] = t.healthy_milli_gpu;
    x["demand_milli_gpu"] = t.demand_milli_gpu;
    x["running"] = t.running;
    x["waiting"] = t.waiting;
    series.append(x);
  }
  d["series"] = series;
  const sim::sim_counters& c = r.counters;
  py::dict counters;
  counters["passes"] = c.passes;
  counters["binds"] = c.binds;
  counters["preemptions"] = c.preemptions;
  counters["preemption_rollbacks"] = c.preemption_rollbacks;
  counters["migrations"] = c.migrations;
  counters["failures"] = c.failures;
  counters["retries"] = c.retries;
  counters["suspensions"] = c.suspensions;
  counters["resumes"] = c.resumes;
  counters["grows"] = c.grows;
  counters["shrinks"] = c.shrinks;
  counters["node_failures"] = c.node_failures;
  counters["rejected"] = c.rejected;
  counters["unplaceable"] = c.unplaceable;
  counters["placement_calls"] = c.placement_calls;
  d["counters"] = counters;
  d["total_milli_gpu"] = r.total_milli_gpu;
  d["first_submit_ms"] = r.first_submit_ms;
  d["end_ms"] = r.end_ms;
  return d;
}

// The sharing anomaly of `shared`: each VC alone on a private cluster of its quota (the table's,
// or without one its share of GPU-time demand), as hetsched-sim --private-vcs.
py::list private_vcs(const policy_spec& spec, const run_cluster& rc, const cluster_topology* topo,
                     const workload::trace& trace, const sim::sim_params& params,
                     const metrics::run_summary& shared, const workload::vc_quota_table* quotas) {
  const std::vector<sim::private_cluster_plan> plans =
      sim::plan_private_clusters(*rc.description, trace, quotas);
  result<std::vector<metrics::vc_anomaly>> anomaly = make_error(errc::internal, "not run");
  {
    const py::gil_scoped_release release;
    anomaly = sim::run_private_vcs(spec, *rc.description, topo, trace, params, shared, plans);
  }
  const std::vector<metrics::vc_anomaly> rows_in = unwrap(std::move(anomaly));
  py::list rows;
  for (const metrics::vc_anomaly& a : rows_in) {
    py::dict x;
    x["name"] = a.name;
    x["shared_queue_s"] = a.shared_queue_s;
    x["private_queue_s"] = a.private_queue_s;
    x["anomaly_s"] = a.anomaly_s;
    for (const sim::private_cluster_plan& p : plans) {
      if (p.vc != a.name) continue;
      x["quota_gpus"] = p.quota_gpus;
      x["private_gpus"] = p.gpus;
      x["private_nodes"] = p.nodes;
      x["quota_from"] = std::string(sim::to_string(p.source));
    }
    rows.append(x);
  }
  return rows;
}

py::list run(const std::vector<std::string>& policies, const py::object& cluster_obj,
             const py::object& nodes, const py::object& trace_obj, const py::object& trace_spec,
             const py::object& synthetic, const std::string& vc_quota, const py::dict& knobs) {
  const run_cluster rc = cluster_arg(cluster_obj, nodes);
  workload::trace trace;
  if (!trace_obj.is_none()) {
    trace = trace_from(trace_obj, "trace");
  } else if (!trace_spec.is_none()) {
    trace = unwrap(cli::load_trace(trace_spec.cast<std::string>())).jobs;
  } else {
    trace = synthetic_trace(synthetic, *rc.description);
  }
  sim::sim_params params;
  fields f(knobs, "params");
  double seconds = 0;
  if (f.get("round_s", seconds)) params.round_ms = ms_of(seconds, "round_s");
  f.get("blocking", params.blocking);
  if (f.get("preemption_cost_s", seconds))
    params.preemption_cost_ms = ms_of(seconds, "preemption_cost_s");
  if (f.get("migration_cost_s", seconds))
    params.migration_cost_ms = ms_of(seconds, "migration_cost_s");
  if (f.get("resume_cost_s", seconds)) params.resume_cost_ms = ms_of(seconds, "resume_cost_s");
  if (f.get("time_slice_s", seconds)) params.time_slice_ms = ms_of(seconds, "time_slice_s");
  f.get("failure_prob", params.job_failure_probability);
  f.get("retries", params.retry_limit);
  f.get("node_mtbf_h", params.node_mtbf_hours);
  if (f.get("node_repair_s", seconds)) params.node_repair_ms = ms_of(seconds, "node_repair_s");
  if (f.get("sample_s", seconds)) params.sample_ms = ms_of(seconds, "sample_s");
  f.get("seed", params.seed);
  f.get("elastic", params.elastic);
  bool speed = false;
  f.get("speed_model", speed);
  std::string throughput_spec;
  f.get("throughput_table", throughput_spec);
  std::string reference_gpu;
  f.get("reference_gpu", reference_gpu);
  bool with_private_vcs = false;
  f.get("private_vcs", with_private_vcs);
  bool with_fragmentation = false;
  f.get("fragmentation", with_fragmentation);
  std::string vc_quota_day = "latest";
  f.get("vc_quota_day", vc_quota_day);
  std::string queue_tree;
  f.get("queue_tree", queue_tree);
  f.finish();
  if (speed || !throughput_spec.empty()) {
    if (!rc.topology)
      raise(errc::invalid_argument,
            "speed_model: the cluster has no topology (give a built-in "
            "name, nodes or a ClusterTopology)");
    speed_model_params sp;
    sp.enabled = true;
    if (!reference_gpu.empty()) sp.reference_gpu = unwrap(gpu_type::parse(reference_gpu));
    throughput_table table;
    if (!throughput_spec.empty()) table = unwrap(cli::load_throughput_table(throughput_spec));
    params.speed = unwrap(speed_model::make(std::move(sp), std::move(table)));
    params.topology = std::make_shared<const cluster_topology>(*rc.topology);
  }
  const workload::vc_day_selector day = unwrap(workload::parse_vc_day_selector(vc_quota_day));
  const std::optional<workload::vc_quota_table> quota_table =
      unwrap(cli::load_vc_quota(vc_quota, day));
  const workload::vc_quota_table* quotas = quota_table ? &*quota_table : nullptr;

  std::vector<policy_spec> specs;
  for (const std::string& p : policies) specs.push_back(unwrap(parse_policy_spec(p)));
  check(cli::resolve_queue_trees(specs, queue_tree));
  check(sim::fill_quota_params(specs, trace, rc.description->device_count(), quotas));
  std::optional<fgd_workload> frag_target;
  if (with_fragmentation && !trace.empty()) frag_target = unwrap(sim::trace_fgd_workload(trace));
  const cluster_topology* topo = rc.topology ? &*rc.topology : nullptr;
  for (const policy_spec& s : specs)
    static_cast<void>(unwrap(make_policy(s, *rc.description, topo)));
  py::list out;
  for (const policy_spec& s : specs) {
    auto inst = unwrap(make_policy(s, *rc.description, topo));
    result<sim::sim_result> r = make_error(errc::internal, "not run");
    std::optional<sim::fragmentation_recorder> frag;
    if (frag_target) frag.emplace(*frag_target);
    {
      const py::gil_scoped_release release;
      r = sim::simulate(rc.description, trace, *inst.order, *inst.place, params,
                        frag ? &*frag : nullptr);
    }
    if (!r) raise(r.error().code, fmt::format("policy {}: {}", s.text, r.error().message));
    const metrics::run_summary summary = metrics::summarize(*r);
    py::dict d =
        result_to_py(s.text, trace, *r, summary,
                     frag ? frag->samples() : std::vector<metrics::fragmentation_sample>{});
    if (with_private_vcs)
      d["sharing_anomaly"] = private_vcs(s, rc, topo, trace, params, summary, quotas);
    out.append(d);
  }
  return out;
}

metrics::run_summary tenants_from(const py::handle& obj, const std::string& what) {
  metrics::run_summary s;
  fields f(obj, what);
  for (const char* key : {"policy", "summary", "jobs", "series", "counters", "total_milli_gpu",
                          "first_submit_ms", "end_ms", "sharing_anomaly"})
    static_cast<void>(f.object(key));
  for_each_item(f.object("tenants"), f.path("tenants"), [&](py::handle item, const std::string& w) {
    fields tf(item, w);
    metrics::tenant_summary t;
    t.name = tf.required<std::string>("name");
    tf.get("jobs", t.jobs);
    tf.get("succeeded", t.succeeded);
    tf.get("mean_queue_s", t.mean_queue_s);
    tf.get("mean_jct_s", t.mean_jct_s);
    tf.get("service_ratio", t.service_ratio);
    tf.get("dominant_share", t.dominant_share);
    tf.finish();
    s.tenants.push_back(std::move(t));
  });
  f.finish();
  return s;
}

}  // namespace

void bind_sim(py::module_& m) {
  m.def(
      "compare",
      [](const std::vector<std::string>& policies, const py::object& cluster_obj,
         const py::object& nodes, const py::object& trace, const py::object& trace_spec,
         const py::object& synthetic, const std::string& vc_quota, const py::kwargs& knobs) {
        return run(policies, cluster_obj, nodes, trace, trace_spec, synthetic, vc_quota, knobs);
      },
      py::arg("policies"), py::arg("cluster") = "demo", py::arg("nodes") = py::none(),
      py::arg("trace") = py::none(), py::arg("trace_spec") = py::none(),
      py::arg("synthetic") = py::none(), py::arg("vc_quota") = "",
      "Runs every policy spec of `policies` on the same cluster and workload, as hetsched-sim "
      "does;\nreturns one result dict per policy (see simulate()).\n\n"
      "Each spec is hetsched-sim's --policy: ORDER[:k=v,...][+PLACEMENT[:k=v,...]] with "
      "orderings\nfifo, sjf, tiresias, drf and placements packer, gandiva, capacity, hived, fgd, "
      "first-fit, random. The cluster is\na built-in name, 'openb-nodes:PATH' (an Alibaba openb "
      "node list), a "
      "ClusterTopology or a Cluster,\nor `nodes` 'TEMPLATE:N,...' (racks of 8).\nThe workload "
      "is `trace` (trace rows, e.g. from parse_trace()), `trace_spec` 'FORMAT:PATH'\n(csv, "
      "gavel, openb, pollux, tiresias; a file or directory) or a synthetic workload "
      "(`synthetic`\ndict of generator parameters, 5000 Philly-like jobs by default). "
      "`vc_quota` is a VC quota table path\n(a Philly/Venus VC -> node table, or a Helios Earth "
      "daily VC -> GPU table with knob vc_quota_day =\n'latest' (default), a date, 'max' or "
      "'mean') for the capacity and hived quotas and the private clusters.\nKeyword knobs: "
      "round_s, blocking, preemption_cost_s, migration_cost_s, resume_cost_s, time_slice_s,\n"
      "failure_prob, retries, node_mtbf_h, node_repair_s, sample_s, seed, vc_quota_day,\n"
      "queue_tree (a JSON queue-tree file for the capacity policies, as --queue-tree),\n"
      "elastic=True (preemptible jobs of several tasks are non-gang, for gandiva:grow=1, as "
      "--elastic),\n"
      "speed_model=True (the speed model, docs/speed_model.md, as --speed-model),\n"
      "throughput_table='gavel:PATH' or 'hetsched:PATH' (implies speed_model), reference_gpu,\n"
      "fragmentation=True (add FGD fragmented_milli_gpu and idle_milli_gpu to each series "
      "sample), and\nprivate_vcs=True (also run each VC alone on a private cluster of its quota "
      "- the table's, or\nwithout one its share of GPU-time demand - and add `sharing_anomaly` "
      "rows, as --private-vcs).");
  m.def(
      "simulate",
      [](const std::string& policy, const py::object& cluster_obj, const py::object& nodes,
         const py::object& trace, const py::object& trace_spec, const py::object& synthetic,
         const std::string& vc_quota, const py::kwargs& knobs) {
        const py::list runs =
            run({policy}, cluster_obj, nodes, trace, trace_spec, synthetic, vc_quota, knobs);
        return py::object(runs[0]);
      },
      py::arg("policy") = "fifo+packer", py::arg("cluster") = "demo", py::arg("nodes") = py::none(),
      py::arg("trace") = py::none(), py::arg("trace_spec") = py::none(),
      py::arg("synthetic") = py::none(), py::arg("vc_quota") = "",
      "Runs policy spec `policy` in the trace-driven simulator (arguments as compare()) and "
      "returns\n{policy, summary: flat metrics dict, tenants: rows, jobs: one row per trace job, "
      "series: time\nsamples, counters, total_milli_gpu, first_submit_ms, end_ms}. Every list "
      "of rows loads into\npandas.DataFrame directly.");
  m.def(
      "parse_policy_spec",
      [](std::string_view text) {
        const policy_spec s = unwrap(parse_policy_spec(text));
        py::dict d;
        d["text"] = s.text;
        d["order"] = s.order;
        d["order_params"] =
            std::map<std::string, std::string>(s.order_params.begin(), s.order_params.end());
        d["placement"] = s.placement;
        d["placement_params"] = std::map<std::string, std::string>(s.placement_params.begin(),
                                                                   s.placement_params.end());
        return d;
      },
      py::arg("text"),
      "Returns {text, order, order_params, placement, placement_params} of a policy spec.");
  m.def(
      "policy_names",
      [] {
        py::dict d;
        std::vector<std::string> orders;
        for (const ordering_entry& e : orderings()) orders.emplace_back(e.name);
        std::vector<std::string> places;
        for (const placement_entry& e : placements()) places.emplace_back(e.name);
        d["orderings"] = orders;
        d["placements"] = places;
        return d;
      },
      "Returns {orderings, placements}: the names policy specs accept.");
  m.def(
      "describe",
      [](std::vector<double> values) {
        const metrics::distribution x = metrics::describe(std::move(values));
        py::dict d;
        d["count"] = x.count;
        d["mean"] = x.mean;
        d["median"] = x.median;
        d["p95"] = x.p95;
        d["p99"] = x.p99;
        d["p999"] = x.p999;
        d["max"] = x.max;
        return d;
      },
      py::arg("values"),
      "Returns {count, mean, median, p95, p99, p999, max} (nearest-rank percentiles).");
  m.def(
      "percentile",
      [](std::vector<double> values, double q) {
        if (!(q > 0 && q <= 100))
          raise(errc::out_of_range, fmt::format("q: {} is not in (0, 100]", q));
        std::sort(values.begin(), values.end());
        return metrics::percentile_sorted(values, q);
      },
      py::arg("values"), py::arg("q"), "Returns the nearest-rank q-th percentile of `values`.");
  m.def(
      "jain_index", [](const std::vector<double>& x) { return metrics::jain_index(x); },
      py::arg("values"), "Returns Jain's fairness index (sum x)^2 / (n sum x^2); 1 if empty.");
  m.def(
      "sharing_anomaly",
      [](const py::dict& shared, const py::iterable& private_runs) {
        const metrics::run_summary s = tenants_from(shared, "shared");
        std::vector<metrics::run_summary> privates;
        for_each_item(private_runs, "private_runs", [&](py::handle item, const std::string& w) {
          privates.push_back(tenants_from(item, w));
        });
        py::list rows;
        for (const metrics::vc_anomaly& a : metrics::sharing_anomaly(s, privates)) {
          py::dict r;
          r["name"] = a.name;
          r["shared_queue_s"] = a.shared_queue_s;
          r["private_queue_s"] = a.private_queue_s;
          r["anomaly_s"] = a.anomaly_s;
          rows.append(r);
        }
        return rows;
      },
      py::arg("shared"), py::arg("private_runs"),
      "Returns the per-VC sharing anomaly (HiveD) rows {name, shared_queue_s, private_queue_s, "
      "anomaly_s}\nfrom a shared run's result and private runs' results (each one VC on its "
      "quota).");
}

}  // namespace hetsched::python
