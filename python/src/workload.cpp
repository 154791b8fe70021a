// SPDX-License-Identifier: MIT
// Bindings of the workload readers (Gavel, Pollux, Tiresias, Alibaba openb, VC quotas, cluster
// summaries), the synthetic generator and trace merging. Readers take text; load_trace() reads
// files the way hetsched-sim's --trace does.
#include <array>

#include <hetsched/workload/cluster_summary.hpp>
#include <hetsched/workload/gavel.hpp>
#include <hetsched/workload/openb.hpp>
#include <hetsched/workload/pollux.hpp>
#include <hetsched/workload/synthetic.hpp>
#include <hetsched/workload/tiresias.hpp>
#include <hetsched/workload/trace_registry.hpp>
#include <hetsched/workload/vc_quota.hpp>

#include "convert.hpp"
#include "trace_files.hpp"

namespace hetsched::python {
namespace {

constexpr std::string_view profile_names[] = {"philly", "helios"};

py::object opt(const std::optional<std::int64_t>& v) {
  return v ? py::object(py::int_(*v)) : py::none();
}

py::object opt(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::none();
}

py::dict table_to_py(const workload::vc_quota_table& t) {
  py::list vcs;
  for (const workload::vc_quota& q : t.vcs) {
    py::dict r;
    r["vc"] = q.vc;
    r["gpus"] = q.gpus;
    r["nodes"] = q.nodes ? py::object(py::int_(*q.nodes)) : py::none();
    vcs.append(r);
  }
  py::dict d;
  d["vcs"] = vcs;
  d["gpus_per_node"] = t.gpus_per_node;
  d["gpu_type"] = t.gpu_type;
  d["total_gpus"] = t.total_gpus();
  return d;
}

std::vector<workload::gavel_throughput> throughputs_from(const py::object& obj) {
  std::vector<workload::gavel_throughput> out;
  for_each_item(obj, "throughputs", [&](py::handle item, const std::string& w) {
    fields f(item, w);
    workload::gavel_throughput t;
    t.job_type = f.required<std::string>("job_type");
    f.get("scale_factor", t.scale_factor);
    t.steps_per_second = f.required<double>("steps_per_second");
    f.finish();
    out.push_back(std::move(t));
  });
  return out;
}

py::list pods_to_py(const std::vector<workload::openb_pod>& pods) {
  py::list rows;
  for (const workload::openb_pod& p : pods) {
    py::dict r;
    r["name"] = p.name;
    r["cpu_milli"] = p.cpu_milli;
    r["memory_mib"] = p.memory_mib;
    r["num_gpu"] = p.num_gpu;
    r["gpu_milli"] = p.gpu_milli;
    r["gpu_spec"] = p.gpu_spec;
    r["qos"] = p.qos;
    r["pod_phase"] = p.pod_phase;
    r["creation_time"] = opt(p.creation_time);
    r["deletion_time"] = opt(p.deletion_time);
    r["scheduled_time"] = opt(p.scheduled_time);
    rows.append(r);
  }
  return rows;
}

result<workload::trace> parse_openb(std::string_view text, std::string_view) {
  auto pods = workload::parse_openb_pods(text);
  if (!pods) return std::move(pods).error();
  return workload::openb_to_trace(*pods);
}

}  // namespace

void bind_workload(py::module_& m) {
  m.def(
      "trace_formats",
      [] {
        std::vector<std::string> out;
        for (const workload::trace_format& f : workload::builtin_trace_formats())
          out.push_back(f.name);
        out.emplace_back("openb");
        return out;
      },
      "Returns the format names parse_trace() accepts.");
  m.def(
      "parse_trace",
      [](std::string_view format, std::string_view text, std::string_view source) {
        const std::array<workload::trace_format, 1> extra = {
            workload::trace_format{"openb", parse_openb}};
        return to_py(unwrap(workload::parse_trace(format, text, source, extra)));
      },
      py::arg("format"), py::arg("text"), py::arg("source") = "",
      "Returns the trace rows of `text` read by the reader of `format` (gavel, pollux, tiresias, "
      "openb)\nwith default options; `source` names the text in errors (and gives Gavel's "
      "tenant).");
  m.def(
      "load_trace", [](std::string_view spec) { return to_py(unwrap(cli::load_trace(spec)).jobs); },
      py::arg("spec"),
      "Returns the trace rows of 'FORMAT:PATH' read as hetsched-sim --trace does (csv, gavel, "
      "openb,\npollux, tiresias; a directory merges its files by submit time).");
  m.def(
      "parse_gavel_trace",
      [](std::string_view text, std::string_view source, std::string tenant,
         const py::object& throughputs, double fallback) {
        workload::gavel_options o;
        o.tenant = std::move(tenant);
        o.throughputs = throughputs_from(throughputs);
        o.fallback_steps_per_second = fallback;
        return to_py(unwrap(workload::parse_gavel_trace(text, source, o)));
      },
      py::arg("text"), py::arg("source") = "", py::arg("tenant") = "",
      py::arg("throughputs") = py::none(),
      py::arg("fallback_steps_per_second") = workload::gavel_default_steps_per_second,
      "Returns the trace rows of a Gavel (Philly-derived) trace; `throughputs` [{job_type,\n"
      "scale_factor, steps_per_second}] turn steps into durations.");
  m.def(
      "parse_gavel_throughputs",
      [](std::string_view json, std::string_view source, std::string_view worker) {
        py::list rows;
        for (const auto& t : unwrap(workload::parse_gavel_throughputs(json, source, worker))) {
          py::dict r;
          r["job_type"] = t.job_type;
          r["scale_factor"] = t.scale_factor;
          r["steps_per_second"] = t.steps_per_second;
          rows.append(r);
        }
        return rows;
      },
      py::arg("json_text"), py::arg("source") = "", py::arg("worker_type") = "v100",
      "Returns Gavel's throughput table rows {job_type, scale_factor, steps_per_second} for one "
      "worker\ntype.");
  m.def(
      "parse_pollux_workload",
      [](std::string_view text, std::string_view source, std::string tenant) {
        workload::pollux_options o;
        o.tenant = std::move(tenant);
        return to_py(unwrap(workload::parse_pollux_workload(text, source, o)));
      },
      py::arg("text"), py::arg("source") = "", py::arg("tenant") = "",
      "Returns the trace rows of a Pollux workload CSV.");
  m.def(
      "parse_tiresias_jobs",
      [](std::string_view text, std::string_view source, std::string tenant) {
        return to_py(unwrap(workload::parse_tiresias_jobs(text, source, {std::move(tenant)})));
      },
      py::arg("text"), py::arg("source") = "", py::arg("tenant") = "",
      "Returns the trace rows of a Tiresias simulator job CSV.");
  m.def(
      "parse_tiresias_cluster_spec",
      [](std::string_view text, std::string_view source) {
        const auto s = unwrap(workload::parse_tiresias_cluster_spec(text, source));
        py::dict d;
        d["switches"] = s.switches;
        d["nodes_per_switch"] = s.nodes_per_switch;
        d["gpus_per_node"] = s.gpus_per_node;
        d["cpus_per_node"] = s.cpus_per_node;
        d["memory_gb_per_node"] = s.memory_gb_per_node;
        return d;
      },
      py::arg("text"), py::arg("source") = "", "Returns a Tiresias cluster spec as a dict.");
  m.def(
      "parse_openb_pods",
      [](std::string_view text) { return pods_to_py(unwrap(workload::parse_openb_pods(text))); },
      py::arg("text"), "Returns the pod rows of an Alibaba openb pod list CSV.");
  m.def(
      "parse_openb_nodes",
      [](std::string_view text) {
        py::list rows;
        for (const workload::openb_node& n : unwrap(workload::parse_openb_nodes(text))) {
          py::dict r;
          r["name"] = n.name;
          r["cpu_milli"] = n.cpu_milli;
          r["memory_mib"] = n.memory_mib;
          r["gpus"] = n.gpus;
          r["model"] = n.model;
          rows.append(r);
        }
        return rows;
      },
      py::arg("text"), "Returns the node rows of an Alibaba openb node list CSV.");
  m.def(
      "parse_vc_node_table",
      [](std::string_view text, std::string_view source, std::uint32_t gpus_per_node,
         std::string gpu_type_name) {
        return table_to_py(unwrap(workload::parse_vc_node_table(
            text, source, workload::vc_node_options{gpus_per_node, std::move(gpu_type_name)})));
      },
      py::arg("text"), py::arg("source") = "", py::arg("gpus_per_node") = 8,
      py::arg("gpu_type") = "",
      "Returns a Philly-style VC -> node table: {vcs: [{vc, gpus, nodes}], gpus_per_node, "
      "gpu_type,\ntotal_gpus}.");
  m.def(
      "parse_vc_gpu_history",
      [](std::string_view text, std::string_view source) {
        const auto h = unwrap(workload::parse_vc_gpu_history(text, source));
        py::list days;
        for (const workload::vc_gpu_day& d : h.days) {
          py::dict r;
          r["date"] = d.date;
          for (std::size_t i = 0; i < h.vcs.size() && i < d.gpus.size(); ++i)
            r[py::str(h.vcs[i])] = d.gpus[i];
          days.append(r);
        }
        py::dict out;
        out["vcs"] = h.vcs;
        out["days"] = days;
        return out;
      },
      py::arg("text"), py::arg("source") = "",
      "Returns a per-day VC GPU history: {vcs, days: [{date, <vc>: gpus, ...}]}.");
  m.def(
      "parse_cluster_summaries",
      [](std::string_view text, std::string_view source) {
        py::list rows;
        for (const workload::cluster_summary& s :
             unwrap(workload::parse_cluster_summaries(text, source))) {
          py::dict r;
          r["cluster"] = s.cluster;
          r["gpus"] = opt(s.gpus);
          r["jobs"] = opt(s.jobs);
          r["gpu_jobs"] = opt(s.gpu_jobs);
          r["avg_gpu_run_s"] = opt(s.avg_gpu_run_s);
          r["avg_gpu_queue_s"] = opt(s.avg_gpu_queue_s);
          r["avg_gpus_per_job"] = opt(s.avg_gpus_per_job);
          r["median_gpu_run_s"] = opt(s.median_gpu_run_s);
          r["median_gpu_queue_s"] = opt(s.median_gpu_queue_s);
          r["median_gpus_per_job"] = opt(s.median_gpus_per_job);
          r["max_gpu_run_s"] = opt(s.max_gpu_run_s);
          r["max_gpus_per_job"] = opt(s.max_gpus_per_job);
          r["gpu_complete_rate"] = opt(s.gpu_complete_rate);
          r["gpu_cancel_rate"] = opt(s.gpu_cancel_rate);
          r["gpu_fail_rate"] = opt(s.gpu_fail_rate);
          rows.append(r);
        }
        return rows;
      },
      py::arg("text"), py::arg("source") = "",
      "Returns the rows of an Acme/Helios cluster summary CSV (None where a column is absent).");
  m.def(
      "synthesize",
      [](std::uint64_t seed, std::uint64_t jobs, std::string_view profile, double load,
         std::uint64_t cluster_gpus, std::uint32_t gpus_per_node, std::uint32_t max_gpus,
         std::uint32_t tenants, double preemptible_fraction) {
        workload::synthetic_params p;
        p.seed = seed;
        p.jobs = jobs;
        p.profile = parse_enum<workload::synthetic_profile>(profile, profile_names, "profile");
        p.load = load;
        p.cluster_gpus = cluster_gpus;
        p.gpus_per_node = gpus_per_node;
        p.max_gpus = max_gpus;
        p.tenants = tenants;
        p.preemptible_fraction = preemptible_fraction;
        return to_py(unwrap(workload::synthesize(p)));
      },
      py::arg("seed") = 1, py::arg("jobs") = 1000, py::arg("profile") = "philly",
      py::arg("load") = 0.9, py::arg("cluster_gpus") = 1024, py::arg("gpus_per_node") = 8,
      py::arg("max_gpus") = 128, py::arg("tenants") = 8, py::arg("preemptible_fraction") = 1.0,
      "Returns a seeded synthetic trace shaped after the Philly or Helios summaries.");
  m.def(
      "merge_traces",
      [](const py::iterable& traces) {
        std::vector<workload::trace> ts;
        for_each_item(traces, "traces", [&](py::handle item, const std::string& w) {
          ts.push_back(trace_from(item, w));
        });
        return to_py(unwrap(workload::merge_traces(ts)));
      },
      py::arg("traces"), "Returns the jobs of several traces merged by submit time.");
}

}  // namespace hetsched::python
