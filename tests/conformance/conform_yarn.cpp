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

using detail::json_value;

std::optional<std::int64_t> integer_of(const json_value* v) {
  if (v == nullptr || !v->is_number()) return std::nullopt;
  if (v->is_integer()) return v->as_int64();
  const double d = v->as_double();
  if (d != std::floor(d)) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

std::optional<pcpp_ratio> ratio_of(const json_value* v) {
  if (v == nullptr || !v->is_number()) return std::nullopt;
  const double x = v->as_double();
  if (x < 0) return std::nullopt;
  return pcpp_ratio{static_cast<std::int64_t>(std::llround(x * 1e6)), 1000000};
}

struct pcpp_case {
  pcpp_snapshot snapshot;
  pcpp_params params;
  std::map<std::string, std::size_t> queue_index;  // path -> index
  std::vector<std::string> apps;                   // job index -> app name
};

// Builds the snapshot; returns an error text on malformed input.
std::string build(const json_value& input, pcpp_case& out) {
  const auto cluster = integer_of(input.find("cluster"));
  const json_value* queues = input.find("queues");
  const json_value* config = input.find("config");
  if (!cluster || queues == nullptr || !queues->is_array() || config == nullptr)
    return "input needs cluster, queues and config";
  out.snapshot.dimensions = 1;
  out.snapshot.cluster[0] = *cluster;
  const auto size = integer_of(config->find("container_size"));
  const std::int64_t container_size = size ? *size : 1;
  const auto dz = ratio_of(config->find("max_ignored_over_capacity"));
  const auto ntf = ratio_of(config->find("natural_termination_factor"));
  const auto per_round = ratio_of(config->find("total_preemption_per_round"));
  if (!dz || !ntf || !per_round) return "config needs the three PCPP ratios";
  out.params.max_ignored_over_capacity = *dz;
  out.params.natural_termination_factor = *ntf;
  out.params.total_preemption_per_round = *per_round;
  const json_value* calc = config->find("resource_calculator");
  out.params.rounding = calc != nullptr && calc->is_string() &&
                                std::string_view(calc->as_string()).starts_with("Default")
                            ? pcpp_rounding::nearest
                            : pcpp_rounding::up;
  std::vector<std::int64_t> used_of;
  for (const json_value& q : queues->as_array()) {
    const json_value* path = q.find("path");
    const auto guaranteed = integer_of(q.find("guaranteed"));
    const auto maximum = integer_of(q.find("max"));
    const auto used = integer_of(q.find("used"));
    const auto pending = integer_of(q.find("pending"));
    if (path == nullptr || !path->is_string() || !guaranteed || !maximum || !used || !pending)
      return "a queue needs path, guaranteed, max, used and pending";
    const std::string& name = path->as_string();
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
    const json_value* disabled = q.find("preemption_disabled");
    if (disabled != nullptr && disabled->is_bool() && disabled->as_bool())
      queue.preemption = pcpp_preemption::disabled;
    out.queue_index.emplace(name, out.snapshot.queues.size());
    out.snapshot.queues.push_back(std::move(queue));
    used_of.push_back(*used);
    const json_value* apps = q.find("apps");
    if (apps == nullptr) continue;
    if (!apps->is_array() || apps->as_array().size() > 1)
      return fmt::format("queue {}: one app per queue is supported", name);
    for (const json_value& app : apps->as_array()) {
      if (!app.is_string()) return fmt::format("queue {}: app names are strings", name);
      const std::size_t job = out.snapshot.jobs.size();
      out.snapshot.jobs.push_back(pcpp_job{job + 1, out.snapshot.queues.size() - 1, 0, 0, false});
      out.apps.push_back(app.as_string());
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
std::string check(const pcpp_case& c, const json_value* expected, std::string_view label) {
  if (expected == nullptr) return fmt::format("{}: no expected", label);
  const json_value* counts = expected->find("preempted_containers");
  if (counts == nullptr || !counts->is_object())
    return fmt::format("{}: expected.preempted_containers missing", label);
  const auto plan = plan_proportional_preemption(c.snapshot, c.params);
  if (!plan) return fmt::format("{}: planner error: {}", label, plan.error().message);
  std::map<std::string, std::int64_t> got;
  for (const std::string& app : c.apps) got[app] = 0;
  for (const pcpp_victim& v : plan->victims) ++got[c.apps[v.job]];
  std::string diff;
  for (const auto& [app, count] : got) {
    const json_value* want = counts->find(app);
    const std::int64_t w = want != nullptr && want->is_integer() ? want->as_int64() : 0;
    if (w != count) diff += fmt::format(" {}: expected {}, got {};", app, w, count);
  }
  for (const auto& [app, value] : counts->as_object())
    if (!got.contains(app)) diff += fmt::format(" {}: not in the input;", app);
  return diff.empty() ? std::string{} : fmt::format("{}:{}", label, diff);
}

void run_pcpp_case(const vector_case& vc, reporter& out) {
  const json_value& c = *vc.json;
  const json_value* input = c.find("input");
  if (input == nullptr) {
    out.fail(vc.name, "no input");
    return;
  }
  pcpp_case base;
  if (std::string err = build(*input, base); !err.empty()) {
    out.fail(vc.name, err);
    return;
  }
  std::string diff = check(base, c.find("expected"), "base");
  std::size_t runs = 1;
  if (const json_value* variants = c.find("variants"); variants != nullptr) {
    for (const json_value& v : variants->as_array()) {
      const json_value* change = v.find("change");
      if (change == nullptr || !change->is_string()) {
        diff += " variant without change;";
        continue;
      }
      pcpp_case variant = base;
      if (std::string err = apply_change(change->as_string(), variant); !err.empty()) {
        diff += ' ';
        diff += err;
        diff += ';';
        continue;
      }
      std::string d = check(variant, v.find("expected"), change->as_string());
      if (!d.empty()) {
        if (!diff.empty()) diff += " | ";
        diff += d;
      }
      ++runs;
    }
  }
  if (diff.empty()) {
    out.pass(vc.name, fmt::format("{} configuration(s)", runs));
  } else {
    out.fail(vc.name, diff);
  }
}

}  // namespace

void run_yarn_case(const vector_case& c, reporter& out) {
  if (c.kind == "yarn_user_limit") {
    run_yarn_user_limit_case(c, out);
    return;
  }
  if (c.kind == "yarn_pcpp") {
    run_pcpp_case(c, out);
    return;
  }
  out.skip(c.name, fmt::format("kind '{}' is not supported", c.kind));  // DESIGN.md §6
}

}  // namespace hetsched::conform
