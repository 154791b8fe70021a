// SPDX-License-Identifier: MIT
// Conformance runner for the kueue_* kinds of the drf_capacity vector family, against
// hetsched/policies/capacity_queue.hpp and capacity_preemption.hpp.
//
// Amounts may be fractional (3.5 cpus), so every amount is scaled by 1000 to an integer. A quota
// key "res" means flavor "default", "res@flavor" names a flavor. Parents that a case references
// but does not define become empty cohorts (Kueue creates implicit cohorts). Workload UIDs are
// their names (the upstream tests' tie-break), so job ids are assigned in name order.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <hetsched/policies/capacity_preemption.hpp>
#include <hetsched/policies/capacity_queue.hpp>

#include "conform.hpp"

namespace hetsched::conform {
namespace {

using outcome = std::optional<std::string>;

constexpr double scale = 1000.0;

/// Returns the amount `v` (a number, possibly fractional) times 1000 as an exact integer; throws
/// vector_error when it is not a number or not a multiple of 0.001.
std::int64_t scaled(const vector_value& v) {
  const double x = v.number() * scale;
  const double r = std::round(x);
  if (std::fabs(x - r) > 1e-6 || std::fabs(r) > 1e15)
    v.fail(fmt::format("{} is not an amount with at most 3 decimals", v.number()));
  return static_cast<std::int64_t>(r);
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  const auto at = key.find('@');
  if (at == std::string::npos) return {key, "default"};
  return {key.substr(0, at), key.substr(at + 1)};
}

// The quotas of a node from its nominal / borrowing_limit / lending_limit objects.
std::vector<quota_spec> quotas_of(const vector_value& node) {
  std::map<std::pair<std::string, std::string>, quota_spec> by_key;
  const auto get = [&](const std::string& key) -> quota_spec& {
    auto [res, flavor] = split_key(key);
    auto& q = by_key[{flavor, res}];
    q.flavor = flavor;
    q.resource = res;
    return q;
  };
  for (const auto& [k, v] : node["nominal"].members()) get(k).nominal = scaled(v);
  for (const auto& [k, v] : node["borrowing_limit"].members()) get(k).borrowing_limit = scaled(v);
  for (const auto& [k, v] : node["lending_limit"].members()) get(k).lending_limit = scaled(v);
  std::vector<quota_spec> out;
  for (auto& [k, q] : by_key) out.push_back(std::move(q));
  return out;
}

queue_preemption preemption_of(const vector_value& p) {
  queue_preemption out;
  const std::string within = p["within_cluster_queue"].string_or("");
  if (within == "LowerPriority") out.within_queue = within_queue_preemption::lower_priority;
  if (within == "LowerOrNewerEqualPriority")
    out.within_queue = within_queue_preemption::lower_or_newer_equal_priority;
  const std::string reclaim = p["reclaim_within_cohort"].string_or("");
  if (reclaim == "LowerPriority") out.reclaim = cohort_reclaim::lower_priority;
  if (reclaim == "Any") out.reclaim = cohort_reclaim::any;
  if (const vector_value b = p["borrow_within_cohort"]; b.present()) {
    out.borrow.enabled = b["policy"].string_or("") != "Never";
    if (const vector_value t = b["max_priority_threshold"]; t.present())
      out.borrow.max_priority_threshold = static_cast<std::int32_t>(t.integer(
          std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
  }
  return out;
}

// A case's world: the state and the job id of every workload name.
struct world {
  std::optional<capacity_state> state;
  std::map<std::string, job_id> ids;
  std::map<std::uint32_t, std::string> names;

  /// Returns the id of the workload `name` read from `v`; throws when the case never defines it.
  [[nodiscard]] job_id id_of(const vector_value& v) const {
    const std::string name = v.string();
    const auto it = ids.find(name);
    if (it == ids.end()) v.fail(fmt::format("'{}' is not a workload of the case", name));
    return it->second;
  }
};

outcome build_world(const vector_value& input, world& out) {
  capacity_tree_spec spec;
  std::set<std::string> defined;
  std::vector<std::string> parents;
  const auto add_nodes = [&](const char* key, capacity_node_kind kind) {
    for (const vector_value& n : input[key].items()) {
      capacity_node_spec s;
      s.name = n["name"].string();
      s.parent = n["parent"].string_or("");
      s.kind = kind;
      s.quotas = quotas_of(n);
      s.fair_weight = n["fair_weight"].number_or(s.fair_weight);
      if (kind == capacity_node_kind::queue) s.preemption = preemption_of(n["preemption"]);
      defined.insert(s.name);
      if (!s.parent.empty()) parents.push_back(s.parent);
      spec.nodes.push_back(std::move(s));
    }
  };
  add_nodes("cohorts", capacity_node_kind::cohort);
  add_nodes("cluster_queues", capacity_node_kind::queue);
  for (const auto& p : parents)
    if (defined.insert(p).second) {
      capacity_node_spec s;
      s.name = p;
      s.kind = capacity_node_kind::cohort;
      spec.nodes.push_back(std::move(s));
    }
  auto tree = capacity_tree::build(spec);
  if (!tree) return fmt::format("tree: {}", tree.error().message);
  out.state.emplace(std::move(*tree));
  // Job ids in name order over every workload the case mentions.
  std::set<std::string> names;
  for (const char* key : {"admitted", "pending"})
    for (const vector_value& w : input[key].items()) names.insert(w["name"].string());
  // A preemption case's incoming workload (kueue_drs subcases use "incoming" for usage instead).
  if (const vector_value in = input["incoming"]; in.has("name")) names.insert(in["name"].string());
  std::uint32_t next = 0;
  for (const auto& n : names) {
    out.ids[n] = job_id(next);
    out.names[next++] = n;
  }
  return std::nullopt;
}

// A workload record: {name, cq, <resource keys>..., priority}.
struct parsed_workload {
  std::string name;
  queue_id queue;
  std::int32_t priority = 0;
  std::string flavor = "default";
  drf_vector request;
};

parsed_workload parse_workload(const vector_value& w, const world& wd) {
  parsed_workload p;
  p.name = w["name"].string();
  const std::string cq = w["cq"].string();
  const auto q = wd.state->tree().find(cq);
  if (!q) w["cq"].fail(fmt::format("unknown cluster queue '{}'", cq));
  p.queue = *q;
  for (const auto& [k, v] : w.members()) {
    if (k == "name" || k == "cq") continue;
    if (k == "priority") {
      p.priority = static_cast<std::int32_t>(v.integer(std::numeric_limits<std::int32_t>::min(),
                                                       std::numeric_limits<std::int32_t>::max()));
      continue;
    }
    const auto [res, flavor] = split_key(k);
    p.flavor = flavor;
    p.request[res] = scaled(v);
  }
  return p;
}

outcome load_admitted(const vector_value& input, world& wd) {
  for (const vector_value& w : input["admitted"].items()) {
    const auto p = parse_workload(w, wd);
    const auto r = wd.state->add_admitted(
        {wd.ids.at(p.name), p.queue, tenant_id(0), p.priority, 0, p.flavor, p.request});
    if (!r) return fmt::format("add_admitted({}): {}", p.name, r.error().message);
  }
  return std::nullopt;
}

std::optional<std::int64_t> usage_of(const capacity_state& s, std::string_view node,
                                     const std::string& key) {
  const auto n = s.tree().find(node);
  const auto [res, flavor] = split_key(key);
  const auto f = s.tree().find_fr(flavor, res);
  if (!n || !f) return std::nullopt;
  return s.usage(*n, *f);
}

std::string check_usage_map(const capacity_state& s, const vector_value& m, std::string_view what) {
  std::string why;
  for (const auto& [cq, res] : m.members())
    for (const auto& [key, v] : res.members()) {
      const auto got = usage_of(s, cq, key);
      if (got != scaled(v))
        why += fmt::format("{}[{}][{}] = {}; ", what, cq, key, got.value_or(-1));
    }
  return why;
}

// The cohort of a quota-accounting case: its first cohort (the one the expectations name).
std::string first_cohort(const vector_value& input) {
  const auto cohorts = input["cohorts"].items();
  if (cohorts.empty()) input["cohorts"].fail("missing or empty (the expectations name a cohort)");
  return cohorts.front()["name"].string();
}

std::string check_cohort(const capacity_state& s, const vector_value& input, const vector_value& m,
                         bool subtree) {
  if (!m.present()) return {};
  const std::string cohort = first_cohort(input);
  std::string why;
  for (const auto& [key, v] : m.members()) {
    const auto [res, flavor] = split_key(key);
    const auto n = s.tree().find(cohort);
    const auto f = s.tree().find_fr(flavor, res);
    if (!n || !f) return fmt::format("unknown cohort {} or resource {}; ", cohort, key);
    const std::int64_t got = subtree ? s.tree().subtree_quota(*n, *f) : s.usage(*n, *f);
    if (got != scaled(v))
      why += fmt::format("cohort {}[{}] = {}; ", subtree ? "subtree" : "usage", key, got);
  }
  return why;
}

outcome run_quota_accounting(const vector_value& c) {
  const vector_value input = c["input"];
  const vector_value exp = c["expected"];
  world wd;
  if (auto e = build_world(input, wd)) return e;
  if (auto e = load_admitted(input, wd)) return e;
  auto& s = *wd.state;
  const vector_value init = exp["initial"];
  std::string why = check_cohort(s, input, init["cohort_subtree_quota"], true) +
                    check_cohort(s, input, init["cohort_usage"], false) +
                    check_usage_map(s, init["usage"], "usage");
  for (const auto& [cq, res] : init["subtree_quota"].members())
    for (const auto& [key, v] : res.members()) {
      const auto [r, fl] = split_key(key);
      const auto n = s.tree().find(cq);
      const auto f = s.tree().find_fr(fl, r);
      if (!n || !f || s.tree().subtree_quota(*n, *f) != scaled(v))
        why += fmt::format("subtree_quota[{}] differs; ", cq);
    }
  if (const vector_value after = exp["after_removing"]; after.present()) {
    for (const vector_value& r : after["removed"].items())
      if (!s.release(wd.id_of(r))) why += fmt::format("release of {} failed; ", r.string());
    why += check_usage_map(s, after["usage"], "after.usage") +
           check_cohort(s, input, after["cohort_usage"], false);
  }
  if (const vector_value all = exp["after_removing_all"]; all.present()) {
    for (const auto& [name, id] : wd.ids)
      if (s.is_admitted(id) && !s.release(id)) why += "release failed; ";
    why += check_cohort(s, input, all["cohort_usage"], false);
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_max_admissible(const vector_value& c) {
  std::string why;
  for (const vector_value& sub : c["input"]["subcases"].items()) {
    world wd;
    if (auto e = build_world(sub, wd)) return e;
    const auto& s = *wd.state;
    for (const auto& [cq, res] : sub["expected"].members())
      for (const auto& [key, v] : res.members()) {
        const auto [r, fl] = split_key(key);
        const auto n = s.tree().find(cq);
        const auto f = s.tree().find_fr(fl, r);
        const std::int64_t got = n && f ? quota_available(s.tree(), s.usage(), *n, *f) : -1;
        if (got != scaled(v))
          why += fmt::format("{}: available[{}][{}] = {}; ", sub["name"].string_or(sub.path()), cq,
                             key, static_cast<double>(got) / scale);
      }
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_drs(const vector_value& c) {
  std::string why;
  for (const vector_value& sub : c["input"]["subcases"].items()) {
    world wd;
    if (auto e = build_world(sub, wd)) return e;
    auto& s = *wd.state;
    std::uint32_t next = 1000;
    for (const char* key : {"usage", "incoming"}) {
      for (const auto& [cq, res] : sub[key].members())
        for (const auto& [k, v] : res.members()) {
          const auto [r, fl] = split_key(k);
          const auto q = s.tree().find(cq);
          if (!q) return fmt::format("{}: unknown queue {}", res.path(), cq);
          auto ok_add = s.add_admitted(
              {job_id(next++), *q, tenant_id(0), 0, 0, fl, drf_vector{{r, scaled(v)}}});
          if (!ok_add) return ok_add.error().message;
        }
    }
    const std::string name = sub["name"].string_or(sub.path());
    for (const auto& [node, e] : sub["expected"].members()) {
      const auto n = s.tree().find(node);
      if (!n) return fmt::format("{}: unknown node {}", e.path(), node);
      const drs_value d = dominant_resource_share(s.tree(), s.usage(), *n);
      if (const vector_value want = e["drs"]; want.present()) {
        const bool inf = want.json().is_string();
        if (inf && want.string() != "+Inf") want.fail("expected an integer or \"+Inf\"");
        if (inf ? !d.infinite : (d.infinite || d.rounded() != want.integer()))
          why += fmt::format("{}: drs[{}] = {}; ", name, node, d.rounded());
      }
      if (const vector_value p = e["drs_precise"];
          p.present() && std::fabs(d.to_double() - p.number()) > 1e-9)
        why += fmt::format("{}: drs_precise[{}] = {}; ", name, node, d.to_double());
      if (e.json().contains("dominant")) {  // null = no dominant resource
        const std::string want_dom = e["dominant"].string_or("");
        if (std::string(d.dominant) != want_dom)
          why += fmt::format("{}: dominant[{}] = '{}'; ", name, node, d.dominant);
      }
      if (const vector_value b = e["borrowing"]; b.present() && d.borrowing() != b.boolean())
        why += fmt::format("{}: borrowing[{}] = {}; ", name, node, d.borrowing());
    }
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_preemption(const vector_value& c, bool fair) {
  const vector_value input = c["input"];
  world wd;
  if (auto e = build_world(input, wd)) return e;
  if (auto e = load_admitted(input, wd)) return e;
  const vector_value incoming = input["incoming"];
  if (!incoming.present()) incoming.fail("missing (a preemption case needs the incoming workload)");
  const auto in = parse_workload(incoming, wd);
  capacity_cycle_options opt;
  opt.fair_sharing = fair;
  if (const vector_value st = input["strategies"]; st.present()) {
    opt.strategies.clear();
    for (const vector_value& x : st.items()) {
      const std::string name = x.string();
      if (name != "LessThanInitialShare" && name != "LessThanOrEqualToFinalShare")
        x.fail(fmt::format("unknown strategy '{}'", name));
      opt.strategies.push_back(name == "LessThanInitialShare"
                                   ? fair_strategy::less_than_initial_share
                                   : fair_strategy::less_than_or_equal_to_final_share);
    }
  }
  pending_workload w{wd.ids.at(in.name), in.queue, tenant_id(0), in.priority, 0, in.request, {}};
  const auto plan = plan_preemption(*wd.state, w, opt);
  if (!plan) return fmt::format("plan_preemption: {}", plan.error().message);
  const vector_value victims = c["expected"]["victims"];
  if (!victims.present()) return std::nullopt;  // nothing recorded to compare
  std::set<std::pair<std::string, std::string>> got;
  std::set<std::pair<std::string, std::string>> want;
  for (const auto& v : plan->victims)
    got.insert({wd.names.at(v.victim.value()), std::string(to_string(v.reason))});
  for (const vector_value& v : victims.items())
    want.insert({v["name"].string(), v["reason"].string()});
  if (got == want) return std::nullopt;
  std::string s = "victims:";
  for (const auto& [n, r] : got) s += fmt::format(" {}({})", n, r);
  return s;
}

outcome run_fair_admission(const vector_value& c) {
  const vector_value input = c["input"];
  const vector_value expected = c["expected"];
  world wd;
  if (auto e = build_world(input, wd)) return e;
  if (auto e = load_admitted(input, wd)) return e;
  auto& s = *wd.state;
  capacity_cycle_options opt;
  opt.fair_sharing = true;
  std::string why;
  for (const vector_value& p : input["pending"].items()) {
    const auto w = parse_workload(p, wd);
    pending_workload pw{wd.ids.at(w.name), w.queue, tenant_id(0), w.priority, 0, w.request, {}};
    if (const vector_value want = expected["drs_with_candidate"][w.name]; want.present()) {
      const auto ans = what_if(s, pw, opt);
      if (!ans || ans->drs_after.rounded() != want.integer())
        why += fmt::format("drs_with_candidate[{}] = {}; ", w.name,
                           ans ? ans->drs_after.rounded() : -1);
    }
    if (const auto r = s.submit(pw); !r) return r.error().message;
  }
  const auto plan = plan_admission(s, opt);
  if (!plan) return plan.error().message;
  if (const vector_value want = expected["admitted"]; want.present()) {
    std::vector<std::string> admitted;
    for (const auto& a : plan->admitted) admitted.push_back(wd.names.at(a.job.value()));
    if (admitted != want.strings())
      why += fmt::format("admitted = [{}]; ", fmt::join(admitted, ","));
  }
  std::set<std::string> deferred;
  for (const auto& d : plan->decision.deferrals) deferred.insert(wd.names.at(d.job.value()));
  for (const std::string& p : expected["left_pending"].strings())
    if (!deferred.contains(p)) why += fmt::format("{} not deferred; ", p);
  if (!why.empty()) return why;
  return std::nullopt;
}

}  // namespace

void run_kueue_case(const vector_case& c, reporter& out) {
  run_guarded(out, c.name, [&] {
    const vector_value& j = c.json;
    if (!j.has("input")) j["input"].fail("missing");
    outcome r;
    if (c.kind == "kueue_quota_accounting") {
      r = run_quota_accounting(j);
    } else if (c.kind == "kueue_max_admissible") {
      r = run_max_admissible(j);
    } else if (c.kind == "kueue_drs") {
      r = run_drs(j);
    } else if (c.kind == "kueue_classical_preemption") {
      r = run_preemption(j, false);
    } else if (c.kind == "kueue_fair_preemption") {
      r = run_preemption(j, true);
    } else if (c.kind == "kueue_fair_admission") {
      r = run_fair_admission(j);
    } else {
      out.skip(c.name, fmt::format("kind '{}' is not supported", c.kind));  // DESIGN.md §6
      return;
    }
    if (r) {
      out.fail(c.name, *r);
    } else {
      out.pass(c.name, c.kind);
    }
  });
}

}  // namespace hetsched::conform
