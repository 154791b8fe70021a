// SPDX-License-Identifier: MIT
// Summary table, CSV, JSON and SVG outputs of hetsched-sim.
#include "report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>

#include "svg.hpp"

namespace hetsched::simcli {
namespace {

result<void> write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return make_error(errc::failed_precondition, "{}: cannot open for writing", path.string());
  out << text;
  if (!out) return make_error(errc::failed_precondition, "{}: write failed", path.string());
  return {};
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_dist(const metrics::distribution& d) {
  return fmt::format(
      "{{\"count\": {}, \"mean\": {:.3f}, \"median\": {:.3f}, \"p95\": {:.3f}, \"p99\": {:.3f}, "
      "\"p999\": {:.3f}, \"max\": {:.3f}}}",
      d.count, d.mean, d.median, d.p95, d.p99, d.p999, d.max);
}

// Column names of the FGD fragmentation breakdown, in frag_bucket order (GPUs per bucket).
constexpr std::array<std::string_view, frag_bucket_count> frag_bucket_columns{
    "frag_q1_gpus", "frag_q2_gpus", "frag_q3_gpus",       "frag_q4_gpus",
    "frag_xl_gpus", "frag_xr_gpus", "frag_no_access_gpus"};

double secs(std::int64_t ms) { return static_cast<double>(ms) / 1000.0; }

const sim::private_cluster_plan* find_plan(const policy_run& r, std::string_view vc) {
  for (const sim::private_cluster_plan& p : r.private_plans)
    if (p.vc == vc) return &p;
  return nullptr;
}

std::string opt_num(bool has, double v, int decimals = 3) {
  return has ? fmt::format("{:.{}f}", v, decimals) : std::string();
}

std::string json_num(bool has, double v, int decimals = 3) {
  return has ? fmt::format("{:.{}f}", v, decimals) : std::string("null");
}

// jobs_<label>.csv and jobs_<label>.json: one row per trace job.
result<void> write_jobs(const std::filesystem::path& base, const std::string& label,
                        const policy_run& r, const workload::trace& trace) {
  std::string csv =
      "name,tenant,submit_s,first_start_s,finish_s,duration_s,gpus,queue_s,jct_s,pending_s,"
      "state,preemptions,migrations,failures,suspensions,run_s,placement_slowdown\n";
  std::string json = "[\n";
  for (std::size_t j = 0; j < r.result.jobs.size(); ++j) {
    const sim::job_outcome& o = r.result.jobs[j];
    const bool ran = o.first_start_ms >= 0;
    const bool ok = o.state == job_state::succeeded;
    const bool done = o.finish_ms >= 0;
    const std::string& tenant = o.rejected ? trace[j].tenant : r.result.tenants[o.tenant];
    const std::string_view state = o.rejected ? std::string_view("rejected") : to_string(o.state);
    const double queue = secs(o.first_start_ms - o.submit_ms);
    const double jct = secs(o.finish_ms - o.submit_ms);
    const bool slowed = o.ideal_run_ms > 0;
    const double slowdown = slowed ? static_cast<double>(o.run_ms) / o.ideal_run_ms : 0.0;
    csv +=
        fmt::format("{},{},{:.3f},{},{},{:.3f},{:.3f},{},{},{:.3f},{},{},{},{},{},{:.3f},{}\n",
                    trace[j].name, tenant, secs(o.submit_ms), opt_num(ran, secs(o.first_start_ms)),
                    opt_num(done, secs(o.finish_ms)), secs(o.duration_ms),
                    static_cast<double>(o.milli_gpu) / 1000.0, opt_num(ran, queue),
                    opt_num(ok, jct), secs(o.pending_ms), state, o.preemptions, o.migrations,
                    o.failures, o.suspensions, secs(o.run_ms), opt_num(slowed, slowdown, 4));
    json += fmt::format(
        "  {{\"name\": {}, \"tenant\": {}, \"submit_s\": {:.3f}, \"first_start_s\": {}, "
        "\"finish_s\": {}, \"duration_s\": {:.3f}, \"gpus\": {:.3f}, \"queue_s\": {}, \"jct_s\": "
        "{}, \"pending_s\": {:.3f}, \"state\": {}, \"preemptions\": {}, \"migrations\": {}, "
        "\"failures\": {}, \"suspensions\": {}, \"run_s\": {:.3f}, \"placement_slowdown\": "
        "{}}}{}\n",
        json_string(trace[j].name), json_string(tenant), secs(o.submit_ms),
        json_num(ran, secs(o.first_start_ms)), json_num(done, secs(o.finish_ms)),
        secs(o.duration_ms), static_cast<double>(o.milli_gpu) / 1000.0, json_num(ran, queue),
        json_num(ok, jct), secs(o.pending_ms), json_string(state), o.preemptions, o.migrations,
        o.failures, o.suspensions, secs(o.run_ms), json_num(slowed, slowdown, 4),
        j + 1 == r.result.jobs.size() ? "" : ",");
  }
  json += "]\n";
  HETSCHED_TRY(write_file(base / fmt::format("jobs_{}.csv", label), csv));
  return write_file(base / fmt::format("jobs_{}.json", label), json);
}

// series_<label>.csv and .json, gpus_over_time_<label>.svg and alloc_frag_vs_demand_<label>.svg;
// appends the policy's utilisation line to `util`.
result<void> write_series(const std::filesystem::path& base, const std::string& label,
                          const policy_run& r, std::vector<plot_line>& util) {
  const std::vector<std::int64_t> arrived = metrics::arrived_demand_milli(r.result);
  const bool has_frag = r.fragmentation.size() == r.result.series.size();
  const double total = static_cast<double>(r.result.total_milli_gpu) / 1000.0;
  const auto pct = [&](double gpus) { return total > 0 ? 100.0 * gpus / total : 0.0; };
  std::string csv =
      "time_s,allocated_gpus,busy_gpus,healthy_gpus,demand_gpus,arrived_gpus,running,waiting,"
      "utilisation_pct,allocation_pct,arrived_pct,fragmented_gpus,fragmentation_pct,"
      "frag_ratio_pct";
  for (const std::string_view c : frag_bucket_columns) csv += fmt::format(",{}", c);
  csv += '\n';
  std::string json = "[\n";
  plot_line u{r.label, {}, false};
  plot_line alloc{"allocated GPUs", {}, false};
  plot_line busy{"busy GPUs", {}, false};
  plot_line demand{"demand of waiting and running jobs", {}, true};
  plot_line healthy{"healthy GPUs", {}, true};
  plot_line alloc_pct{"GPU allocation (% of cluster)", {}, false};
  plot_line frag_pct{"fragmentation (% of cluster GPUs)", {}, false};
  plot_line ratio_pct{"fragmentation ratio (% of idle GPUs)", {}, true};
  const double t0 = secs(r.result.first_submit_ms);
  for (std::size_t k = 0; k < r.result.series.size(); ++k) {
    const sim::time_sample& ts = r.result.series[k];
    const double t = secs(ts.time_ms);
    const double a = static_cast<double>(ts.allocated_milli_gpu) / 1000.0;
    const double b = static_cast<double>(ts.busy_milli_gpu) / 1000.0;
    const double d = static_cast<double>(ts.demand_milli_gpu) / 1000.0;
    const double h = static_cast<double>(ts.healthy_milli_gpu) / 1000.0;
    const double arr = static_cast<double>(arrived[k]) / 1000.0;
    const double frag = has_frag ? r.fragmentation[k].fragmented_milli_gpu / 1000.0 : 0.0;
    const double ratio = has_frag ? r.fragmentation[k].ratio_pct() : 0.0;
    csv += fmt::format(
        "{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{:.4f},{:.4f},{:.4f},{},{},{}", t, a, b, h,
        d, arr, ts.running, ts.waiting, pct(b), pct(a), pct(arr), opt_num(has_frag, frag),
        opt_num(has_frag, pct(frag), 4), opt_num(has_frag, ratio, 4));
    json += fmt::format(
        "  {{\"time_s\": {:.3f}, \"allocated_gpus\": {:.3f}, \"busy_gpus\": {:.3f}, "
        "\"healthy_gpus\": {:.3f}, \"demand_gpus\": {:.3f}, \"arrived_gpus\": {:.3f}, "
        "\"running\": {}, \"waiting\": {}, \"utilisation_pct\": {:.4f}, \"allocation_pct\": "
        "{:.4f}, \"arrived_pct\": {:.4f}, \"fragmented_gpus\": {}, \"fragmentation_pct\": {}, "
        "\"frag_ratio_pct\": {}",
        t, a, b, h, d, arr, ts.running, ts.waiting, pct(b), pct(a), pct(arr),
        json_num(has_frag, frag), json_num(has_frag, pct(frag), 4), json_num(has_frag, ratio, 4));
    for (std::size_t q = 0; q < frag_bucket_count; ++q) {
      const double gpus = has_frag ? r.fragmentation[k].breakdown.milli[q] / 1000.0 : 0.0;
      csv += fmt::format(",{}", opt_num(has_frag, gpus));
      json += fmt::format(", \"{}\": {}", frag_bucket_columns[q], json_num(has_frag, gpus));
    }
    csv += '\n';
    json += fmt::format("}}{}\n", k + 1 == r.result.series.size() ? "" : ",");
    const double hours = (t - t0) / 3600.0;
    u.points.emplace_back(hours, pct(b));
    alloc.points.emplace_back(hours, a);
    busy.points.emplace_back(hours, b);
    demand.points.emplace_back(hours, d);
    healthy.points.emplace_back(hours, h);
    alloc_pct.points.emplace_back(pct(arr), pct(a));
    if (has_frag) {
      frag_pct.points.emplace_back(pct(arr), pct(frag));
      ratio_pct.points.emplace_back(pct(arr), ratio);
    }
  }
  json += "]\n";
  HETSCHED_TRY(write_file(base / fmt::format("series_{}.csv", label), csv));
  HETSCHED_TRY(write_file(base / fmt::format("series_{}.json", label), json));
  const std::vector<plot_line> over_time{alloc, busy, demand, healthy};
  HETSCHED_TRY(
      write_file(base / fmt::format("gpus_over_time_{}.svg", label),
                 render_svg({fmt::format("GPUs over time: {}", r.label), "time (h)", "GPUs", false},
                            over_time)));
  std::vector<plot_line> vs_demand{alloc_pct};
  if (has_frag) {
    vs_demand.push_back(frag_pct);
    vs_demand.push_back(ratio_pct);
  }
  HETSCHED_TRY(write_file(
      base / fmt::format("alloc_frag_vs_demand_{}.svg", label),
      render_svg({fmt::format("Allocation and fragmentation against arrived demand: {}", r.label),
                  "arrived GPU demand (% of cluster GPUs, cumulative)", "%", false},
                 vs_demand)));
  util.push_back(std::move(u));
  return {};
}

}  // namespace

std::string file_label(std::string_view label) {
  std::string out(label);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

void print_table(std::FILE* out, std::span<const policy_run> runs) {
  std::size_t w = 6;
  for (const policy_run& r : runs) w = std::max(w, r.label.size());
  fmt::print(out,
             "{:<{}} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7} {:>6} {:>5} "
             "{:>6} {:>6} {:>7} {:>6} {:>7} {:>6} {:>6} {:>7} {:>6}\n",
             "policy", w, "done", "JCT mean", "JCT p50", "JCT p95", "JCT p99", "JCT p99.9",
             "queue avg", "queue p99", "makespan", "jobs/h", "util%", "Jain", "DSsprd", "FTF",
             "FTFmax", "slow", "preempt", "migr", "retry", "susp", "wall s");
  fmt::print(out, "{:<{}} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n", "", w, "",
             "(s)", "(s)", "(s)", "(s)", "(s)", "(s)", "(s)", "(h)");
  for (const policy_run& r : runs) {
    const metrics::run_summary& s = r.summary;
    fmt::print(
        out,
        "{:<{}} {:>7} {:>9.0f} {:>9.0f} {:>9.0f} {:>9.0f} {:>9.0f} {:>9.0f} {:>9.0f} "
        "{:>8.1f} {:>7.2f} {:>6.1f} {:>5.3f} {:>6.3f} {:>6.2f} {:>7.1f} {:>6.3f} {:>7} {:>6} "
        "{:>6} {:>7} {:>6.2f}\n",
        r.label, w, s.succeeded, s.jct_s.mean, s.jct_s.median, s.jct_s.p95, s.jct_s.p99,
        s.jct_s.p999, s.queue_s.mean, s.queue_s.p99, s.makespan_s / 3600.0, s.throughput_per_h,
        100.0 * s.utilisation, s.jain, s.dominant_share_spread, s.ftf_mean, s.ftf_max,
        s.placement_slowdown, s.preemptions, s.migrations, s.retries, s.suspensions, r.wall_s);
  }
  fmt::print(out,
             "\ncolumns: done = jobs succeeded; JCT = submission to finish; queue = submission to "
             "first start\n(response time); makespan = first submission to last finish; util% = "
             "busy GPU time / GPU\ncapacity over the makespan; Jain = Jain's index of the tenants' "
             "service ratios (GPU run time /\nGPU time in the system); DSsprd = max - min of the "
             "tenants' dominant shares; FTF, FTFmax =\nmean and max finish-time fairness (JCT / "
             "time on a 1/N share of the cluster; > 1 is unfair);\nslow = mean slowdown from "
             "placement (run time / run time without locality and co-location\nlosses; 1 without "
             "--speed-model); preempt, migr, retry, susp = preemptions, migrations, retried\n"
             "failures, time-slice suspensions; wall s = simulator wall time.\n");
  for (const policy_run& r : runs) {
    if (r.anomaly.empty()) continue;
    fmt::print(out, "\nsharing anomaly of {} (mean queueing delay, s):\n", r.label);
    fmt::print(out, "  {:<10} {:>12} {:>12} {:>12} {:>10} {:>12}  {}\n", "vc", "shared", "private",
               "anomaly", "quota", "private GPUs", "quota from");
    for (const metrics::vc_anomaly& a : r.anomaly) {
      const sim::private_cluster_plan* p = find_plan(r, a.name);
      fmt::print(out, "  {:<10} {:>12.0f} {:>12.0f} {:>12.0f} {:>10} {:>12}  {}\n", a.name,
                 a.shared_queue_s, a.private_queue_s, a.anomaly_s, p != nullptr ? p->quota_gpus : 0,
                 p != nullptr ? p->gpus : 0, p != nullptr ? sim::to_string(p->source) : "");
    }
  }
}

result<void> write_outputs(const std::string& dir, std::span<const policy_run> runs,
                           const workload::trace& trace) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(errc::failed_precondition, "{}: cannot create directory: {}", dir,
                      ec.message());
  const fs::path base(dir);
  std::vector<plot_line> cdf;
  std::vector<plot_line> util;
  std::string summary_csv =
      "policy,jobs,succeeded,failed,rejected,unplaceable,jct_mean_s,jct_median_s,jct_p95_s,"
      "jct_p99_s,jct_p999_s,queue_mean_s,queue_median_s,queue_p95_s,queue_p99_s,queue_p999_s,"
      "pending_mean_s,makespan_s,throughput_per_h,utilisation,allocation_ratio,jain,"
      "dominant_share_spread,ftf_mean,ftf_max,ftf_unfair_fraction,preemptions,migrations,"
      "retries,suspensions,node_failures,wall_s,placement_slowdown\n";
  std::string json = "{\n  \"policies\": [\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const policy_run& r = runs[i];
    const metrics::run_summary& s = r.summary;
    const std::string label = file_label(r.label);
    HETSCHED_TRY(write_jobs(base, label, r, trace));
    HETSCHED_TRY(write_series(base, label, r, util));
    std::vector<double> jcts;
    for (const sim::job_outcome& o : r.result.jobs)
      if (o.state == job_state::succeeded) jcts.push_back(secs(o.finish_ms - o.submit_ms));
    std::sort(jcts.begin(), jcts.end());
    plot_line c{r.label, {}, false};
    for (std::size_t k = 0; k < jcts.size(); ++k)
      c.points.emplace_back(jcts[k], static_cast<double>(k + 1) / static_cast<double>(jcts.size()));
    cdf.push_back(std::move(c));

    summary_csv += fmt::format(
        "{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},"
        "{:.3f},{:.3f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{},{},"
        "{:.3f},{:.4f}\n",
        r.label, s.jobs, s.succeeded, s.failed, s.rejected, s.unplaceable, s.jct_s.mean,
        s.jct_s.median, s.jct_s.p95, s.jct_s.p99, s.jct_s.p999, s.queue_s.mean, s.queue_s.median,
        s.queue_s.p95, s.queue_s.p99, s.queue_s.p999, s.mean_pending_s, s.makespan_s,
        s.throughput_per_h, s.utilisation, s.allocation_ratio, s.jain, s.dominant_share_spread,
        s.ftf_mean, s.ftf_max, s.ftf_unfair_fraction, s.preemptions, s.migrations, s.retries,
        s.suspensions, s.node_failures, r.wall_s, s.placement_slowdown);
    json += fmt::format(
        "    {{\"policy\": {}, \"jobs\": {}, \"succeeded\": {}, \"failed\": {}, \"rejected\": {}, "
        "\"unplaceable\": {},\n     \"jct_s\": {},\n     \"queue_s\": {},\n     "
        "\"pending_mean_s\": {:.3f}, \"makespan_s\": {:.3f}, \"throughput_per_h\": {:.4f}, "
        "\"utilisation\": {:.6f}, \"allocation_ratio\": {:.6f},\n     \"jain\": {:.6f}, "
        "\"dominant_share_spread\": {:.6f}, \"ftf_mean\": {:.6f}, \"ftf_max\": {:.6f}, "
        "\"ftf_unfair_fraction\": {:.6f},\n     \"preemptions\": {}, \"migrations\": {}, "
        "\"retries\": {}, \"suspensions\": {}, \"node_failures\": {}, \"wall_s\": {:.3f}, "
        "\"placement_slowdown\": {:.4f},\n     \"tenants\": [",
        json_string(r.label), s.jobs, s.succeeded, s.failed, s.rejected, s.unplaceable,
        json_dist(s.jct_s), json_dist(s.queue_s), s.mean_pending_s, s.makespan_s,
        s.throughput_per_h, s.utilisation, s.allocation_ratio, s.jain, s.dominant_share_spread,
        s.ftf_mean, s.ftf_max, s.ftf_unfair_fraction, s.preemptions, s.migrations, s.retries,
        s.suspensions, s.node_failures, r.wall_s, s.placement_slowdown);
    for (std::size_t k = 0; k < s.tenants.size(); ++k) {
      const metrics::tenant_summary& t = s.tenants[k];
      json += fmt::format(
          "{}{{\"name\": {}, \"jobs\": {}, \"succeeded\": {}, \"mean_queue_s\": {:.3f}, "
          "\"mean_jct_s\": {:.3f}, \"service_ratio\": {:.6f}, \"dominant_share\": {:.6f}}}",
          k == 0 ? "" : ", ", json_string(t.name), t.jobs, t.succeeded, t.mean_queue_s,
          t.mean_jct_s, t.service_ratio, t.dominant_share);
    }
    json += "],\n     \"sharing_anomaly\": [";
    for (std::size_t k = 0; k < r.anomaly.size(); ++k) {
      const metrics::vc_anomaly& a = r.anomaly[k];
      const sim::private_cluster_plan* p = find_plan(r, a.name);
      json += fmt::format(
          "{}{{\"vc\": {}, \"shared_queue_s\": {:.3f}, \"private_queue_s\": {:.3f}, "
          "\"anomaly_s\": {:.3f}, \"quota_gpus\": {}, \"private_gpus\": {}, "
          "\"private_nodes\": {}, \"quota_from\": {}}}",
          k == 0 ? "" : ", ", json_string(a.name), a.shared_queue_s, a.private_queue_s, a.anomaly_s,
          p != nullptr ? p->quota_gpus : 0, p != nullptr ? p->gpus : 0, p != nullptr ? p->nodes : 0,
          json_string(p != nullptr ? sim::to_string(p->source) : ""));
    }
    json += i + 1 == runs.size() ? "]}\n" : "]},\n";
  }
  json += "  ]\n}\n";
  HETSCHED_TRY(write_file(base / "summary.csv", summary_csv));
  HETSCHED_TRY(write_file(base / "summary.json", json));
  HETSCHED_TRY(write_file(
      base / "jct_cdf.svg",
      render_svg({"JCT CDF (succeeded jobs)", "job completion time (s)", "fraction of jobs", true},
                 cdf)));
  HETSCHED_TRY(write_file(base / "utilisation.svg",
                          render_svg({"GPU utilisation over time (GPUs held by running jobs)",
                                      "time (h)", "busy GPUs (% of cluster)", false},
                                     util)));
  return {};
}

}  // namespace hetsched::simcli
