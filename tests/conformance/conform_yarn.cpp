// SPDX-License-Identifier: MIT
// Conformance runner for the yarn_* kinds of the drf_capacity vector family.
//
// yarn_pcpp: the queues (absolute guaranteed / max / used / pending, one dimension) become a
// pcpp_snapshot; each leaf's app gets `used` containers of `container_size`; the config's floats
// become exact ratios (1e-6 resolution) and "Default" calculators round offers to nearest. The
// base case and every variant ("<queue> [and <queue>] preemption enabled|disabled") must give
// exactly the expected containers per app (apps not listed: none).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/policies/proportional_preemption.hpp>

#include "conform.hpp"

namespace hetsched::conform {

namespace {

/// Returns a whole number (an integer, or a double without fraction within +-2^53); nullopt when
/// absent or fractional. Throws vector_error when present and not a number.
std::optional<std::int64_t> integer_of(const vector_value& v) {
  if (!v.present()) return std::nullopt;
  if (v.json().is_number_integer()) return v.integer();
  const double d = v.number();
  if (d != std::floor(d) || std::fabs(d) > 9007199254740992.0) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

/// Returns a non-negative ratio (1e-6 resolution, up to 10^6); nullopt when absent or outside.
std::optional<pcpp_ratio> ratio_of(const vector_value& v) {
  if (!v.present()) return std::nullopt;
  const double x = v.number();
  if (!(x >= 0) || x > 1e6) return std::nullopt;
  return pcpp_ratio{static_cast<std::int64_t>(std::llround(x * 1e6)), 1000000};
}

struct pcpp_case {
  pcpp_snapshot snapshot;
  pcpp_params params;
  std::map<std::string, std::size_t> queue_index;  // path -> index
  std::vector<std::string> apps;                   // job index -> app name
};

// Builds the snapshot; returns an error text on malformed input.
std::string build(const vector_value& input, pcpp_case& out) {
  const auto cluster = integer_of(input["cluster"]);
  const vector_value queues = input["queues"];
  const vector_value config = input["config"];
  if (!cluster || !queues.json().is_array() || !config.present())
    return "input needs cluster, queues and config";
  out.snapshot.dimensions = 1;
  out.snapshot.cluster[0] = *cluster;
  const auto size = integer_of(config["container_size"]);
  const std::int64_t container_size = size ? *size : 1;
  if (container_size < 1) return "config.container_size must be >= 1";
  const auto dz = ratio_of(config["max_ignored_over_capacity"]);
  const auto ntf = ratio_of(config["natural_termination_factor"]);
  const auto per_round = ratio_of(config["total_preemption_per_round"]);
  if (!dz || !ntf || !per_round) return "config needs the three PCPP ratios";
  out.params.max_ignored_over_capacity = *dz;
  out.params.natural_termination_factor = *ntf;
  out.params.total_preemption_per_round = *per_round;
  out.params.rounding = config["resource_calculator"].string_or("").starts_with("Default")
                            ? pcpp_rounding::nearest
                            : pcpp_rounding::up;
  std::vector<std::int64_t> used_of;
  for (const vector_value& q : queues.items()) {
    const auto guaranteed = integer_of(q["guaranteed"]);
    const auto maximum = integer_of(q["max"]);
    const auto used = integer_of(q["used"]);
    const auto pending = integer_of(q["pending"]);
    if (!q["path"].json().is_string() || !guaranteed || !maximum || !used || !pending)
      return "a queue needs path, guaranteed, max, used and pending";
    if (*used < 0 || *used / container_size > 1'000'000)
      return fmt::format("{}: used {} is negative or more than 10^6 containers", q.path(), *used);
    const std::string name = q["path"].string();
    const auto dot = name.rfind('.');
    if (dot == std::string::npos) return fmt::format("queue {}: path has no parent", name);
    const std::string parent = name.substr(0, dot);
    pcpp_queue queue;
    queue.name = name;
    if (parent != "root") {
      const auto it = out.queue_index.find(parent);
      if (it == out.queue_index.end()) return fmt::format("queue {}: parent not listed", name);
      queue.parent = it->second;
    }
    queue.guaranteed[0] = *guaranteed;
    queue.maximum[0] = *maximum;
    queue.pending[0] = *pending;
    if (q["preemption_disabled"].boolean_or(false)) queue.preemption = pcpp_preemption::disabled;
    out.queue_index.emplace(name, out.snapshot.queues.size());
    out.snapshot.queues.push_back(std::move(queue));
    used_of.push_back(*used);
    const auto apps = q["apps"].items();
    if (apps.size() > 1) return fmt::format("queue {}: one app per queue is supported", name);
    for (const vector_value& app : apps) {
      const std::size_t job = out.snapshot.jobs.size();
      out.snapshot.jobs.push_back(pcpp_job{job + 1, out.snapshot.queues.size() - 1, 0, 0, false});
      out.apps.push_back(app.string());
      for (std::int64_t c = 0; c < *used / container_size; ++c) {
        pcpp_container con;
        con.id = out.snapshot.containers.size() + 1;
        con.job = job;
        con.start_time = static_cast<std::int64_t>(con.id);
        con.size[0] = container_size;
        out.snapshot.containers.push_back(con);
      }
    }
  }
  // Parents: pending is derived from the children; used must match the children's sum.
  std::vector<bool> is_parent(out.snapshot.queues.size(), false);
  for (const pcpp_queue& q : out.snapshot.queues)
    if (q.parent != pcpp_root) is_parent[q.parent] = true;
  for (std::size_t q = 0; q < out.snapshot.queues.size(); ++q)
    if (is_parent[q]) out.snapshot.queues[q].pending[0] = 0;
  return {};
}

// Applies "root.A.B and root.D.E preemption disabled" style changes.
std::string apply_change(const std::string& change, pcpp_case& c) {
  std::string_view text(change);
  pcpp_preemption mode = pcpp_preemption::inherit;
  constexpr std::string_view on = " preemption enabled";
  constexpr std::string_view off = " preemption disabled";
  if (text.ends_with(on)) {
    mode = pcpp_preemption::enabled;
    text.remove_suffix(on.size());
  } else if (text.ends_with(off)) {
    mode = pcpp_preemption::disabled;
    text.remove_suffix(off.size());
  } else {
    return fmt::format("unsupported variant '{}'", change);
  }
  while (!text.empty()) {
    const auto sep = text.find(" and ");
    const std::string name(text.substr(0, sep));
    const auto it = c.queue_index.find(name);
    if (it == c.queue_index.end()) return fmt::format("variant names unknown queue '{}'", name);
    c.snapshot.queues[it->second].preemption = mode;
    if (sep == std::string_view::npos) break;
    text.remove_prefix(sep + 5);
  }
  return {};
}

// Runs one configuration; returns an empty string on match, else what differed.
std::string check(const pcpp_case& c, const vector_value& expected, std::string_view label) {
  if (!expected.present()) return fmt::format("{}: no expected", label);
  const vector_value counts = expected["preempted_containers"];
  if (!counts.json().is_object())
    return fmt::format("{}: expected.preempted_containers missing", label);
  const auto plan = plan_proportional_preemption(c.snapshot, c.params);
  if (!plan) return fmt::format("{}: planner error: {}", label, plan.error().message);
  std::map<std::string, std::int64_t> got;
  for (const std::string& app : c.apps) got[app] = 0;
  for (const pcpp_victim& v : plan->victims) ++got[c.apps[v.job]];
  std::string diff;
  for (const auto& [app, count] : got) {
    const std::int64_t w = counts[app].integer_or(0);
    if (w != count) diff += fmt::format(" {}: expected {}, got {};", app, w, count);
  }
  for (const auto& [app, value] : counts.members())
    if (!got.contains(app)) diff += fmt::format(" {}: not in the input;", app);
  return diff.empty() ? std::string{} : fmt::format("{}:{}", label, diff);
}

void run_pcpp_case(const vector_case& vc, reporter& out) {
  const vector_value& c = vc.json;
  const vector_value input = c["input"];
  if (!input.present()) {
    out.fail(vc.name, "no input");
    return;
  }
  pcpp_case base;
  if (std::string err = build(input, base); !err.empty()) {
    out.fail(vc.name, err);
    return;
  }
  std::string diff = check(base, c["expected"], "base");
  std::size_t runs = 1;
  for (const vector_value& v : c["variants"].items()) {
    if (!v["change"].json().is_string()) {
      diff += " variant without change;";
      continue;
    }
    const std::string change = v["change"].string();
    pcpp_case variant = base;
    if (std::string err = apply_change(change, variant); !err.empty()) {
      diff += ' ';
      diff += err;
      diff += ';';
      continue;
    }
    std::string d = check(variant, v["expected"], change);
    if (!d.empty()) {
      if (!diff.empty()) diff += " | ";
      diff += d;
    }
    ++runs;
  }
  if (diff.empty()) {
    out.pass(vc.name, fmt::format("{} configuration(s)", runs));
  } else {
    out.fail(vc.name, diff);
  }
}

}  // namespace

void run_yarn_case(const vector_case& c, reporter& out) {
  run_guarded(out, c.name, [&] {
    if (c.kind == "yarn_user_limit") {
      run_yarn_user_limit_case(c, out);
    } else if (c.kind == "yarn_pcpp") {
      run_pcpp_case(c, out);
    } else {
      out.skip(c.name, fmt::format("kind '{}' is not supported", c.kind));  // DESIGN.md §6
    }
  });
}

}  // namespace hetsched::conform
