// SPDX-License-Identifier: MIT
// Conformance runner for the kueue_* kinds of the drf_capacity vector family, against
// hetsched/policies/capacity_queue.hpp and capacity_preemption.hpp.
//
// Amounts may be fractional (3.5 cpus), so every amount is scaled by 1000 to an integer. A quota
// key "res" means flavor "default", "res@flavor" names a flavor. Parents that a case references
// but does not define become empty cohorts (Kueue creates implicit cohorts). Workload UIDs are
// their names (the upstream tests' tie-break), so job ids are assigned in name order.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

using detail::json_value;
using outcome = std::optional<std::string>;

constexpr double scale = 1000.0;

std::optional<std::int64_t> scaled(const json_value& v) {
  if (!v.is_number()) return std::nullopt;
  const double x = v.as_double() * scale;
  const double r = std::round(x);
  if (std::fabs(x - r) > 1e-6 || std::fabs(r) > 1e15) return std::nullopt;
  return static_cast<std::int64_t>(r);
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  const auto at = key.find('@');
  if (at == std::string::npos) return {key, "default"};
  return {key.substr(0, at), key.substr(at + 1)};
}

const std::string& str(const json_value* v) {
  static const std::string empty;
  return v != nullptr && v->is_string() ? v->as_string() : empty;
}

// The quotas of a node from its nominal / borrowing_limit / lending_limit objects.
std::vector<quota_spec> quotas_of(const json_value& node) {
  std::map<std::pair<std::string, std::string>, quota_spec> by_key;
  const auto get = [&](const std::string& key) -> quota_spec& {
    auto [res, flavor] = split_key(key);
    auto& q = by_key[{flavor, res}];
    q.flavor = flavor;
    q.resource = res;
    return q;
  };
  if (const auto* n = node.find("nominal"); n != nullptr && n->is_object())
    for (const auto& [k, v] : n->as_object()) get(k).nominal = scaled(v).value_or(-1);
  if (const auto* n = node.find("borrowing_limit"); n != nullptr && n->is_object())
    for (const auto& [k, v] : n->as_object()) get(k).borrowing_limit = scaled(v).value_or(-1);
  if (const auto* n = node.find("lending_limit"); n != nullptr && n->is_object())
    for (const auto& [k, v] : n->as_object()) get(k).lending_limit = scaled(v).value_or(-1);
  std::vector<quota_spec> out;
  for (auto& [k, q] : by_key) out.push_back(std::move(q));
  return out;
}

queue_preemption preemption_of(const json_value* p) {
  queue_preemption out;
  if (p == nullptr || !p->is_object()) return out;
  const std::string& within = str(p->find("within_cluster_queue"));
  if (within == "LowerPriority") out.within_queue = within_queue_preemption::lower_priority;
  if (within == "LowerOrNewerEqualPriority")
    out.within_queue = within_queue_preemption::lower_or_newer_equal_priority;
  const std::string& reclaim = str(p->find("reclaim_within_cohort"));
  if (reclaim == "LowerPriority") out.reclaim = cohort_reclaim::lower_priority;
  if (reclaim == "Any") out.reclaim = cohort_reclaim::any;
  if (const auto* b = p->find("borrow_within_cohort"); b != nullptr && b->is_object()) {
    out.borrow.enabled = str(b->find("policy")) != "Never";
    if (const auto* t = b->find("max_priority_threshold"); t != nullptr && t->is_integer())
      out.borrow.max_priority_threshold = static_cast<std::int32_t>(t->as_int64());
  }
  return out;
}

// A case's world: the state and the job id of every workload name.
struct world {
  std::optional<capacity_state> state;
  std::map<std::string, job_id> ids;
  std::map<std::uint32_t, std::string> names;
};

outcome build_world(const json_value& input, world& out) {
  capacity_tree_spec spec;
  std::set<std::string> defined;
  std::vector<std::string> parents;
  const auto add_nodes = [&](const char* key, capacity_node_kind kind) {
    const auto* list = input.find(key);
    if (list == nullptr || !list->is_array()) return;
    for (const auto& n : list->as_array()) {
      capacity_node_spec s;
      s.name = str(n.find("name"));
      s.parent = str(n.find("parent"));
      s.kind = kind;
      s.quotas = quotas_of(n);
      if (const auto* w = n.find("fair_weight"); w != nullptr && w->is_number())
        s.fair_weight = w->as_double();
      if (kind == capacity_node_kind::queue) s.preemption = preemption_of(n.find("preemption"));
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
    if (const auto* l = input.find(key); l != nullptr && l->is_array())
      for (const auto& w : l->as_array()) names.insert(str(w.find("name")));
  if (const auto* in = input.find("incoming"); in != nullptr && in->is_object())
    if (in->find("name") != nullptr) names.insert(str(in->find("name")));
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

std::optional<parsed_workload> parse_workload(const json_value& w, const world& wd) {
  parsed_workload p;
  p.name = str(w.find("name"));
  const auto q = wd.state->tree().find(str(w.find("cq")));
  if (!q) return std::nullopt;
  p.queue = *q;
  for (const auto& [k, v] : w.as_object()) {
    if (k == "name" || k == "cq") continue;
    if (k == "priority") {
      p.priority = static_cast<std::int32_t>(v.as_int64());
      continue;
    }
    const auto [res, flavor] = split_key(k);
    const auto a = scaled(v);
    if (!a) return std::nullopt;
    p.flavor = flavor;
    p.request[res] = *a;
  }
  return p;
}

outcome load_admitted(const json_value& input, world& wd) {
  if (const auto* l = input.find("admitted"); l != nullptr && l->is_array())
    for (const auto& w : l->as_array()) {
      const auto p = parse_workload(w, wd);
      if (!p) return "bad admitted workload";
      const auto r = wd.state->add_admitted(
          {wd.ids.at(p->name), p->queue, tenant_id(0), p->priority, 0, p->flavor, p->request});
      if (!r) return fmt::format("add_admitted({}): {}", p->name, r.error().message);
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

outcome check_usage_map(const capacity_state& s, const json_value* m, std::string_view what) {
  std::string why;
  if (m == nullptr || !m->is_object()) return std::nullopt;
  for (const auto& [cq, res] : m->as_object())
    for (const auto& [key, v] : res.as_object()) {
      const auto got = usage_of(s, cq, key);
      if (got != scaled(v))
        why += fmt::format("{}[{}][{}] = {}; ", what, cq, key, got.value_or(-1));
    }
  if (!why.empty()) return why;
  return std::nullopt;
}

std::string first_cohort(const json_value& input) {
  return str(input.find("cohorts")->as_array().front().find("name"));
}

outcome check_cohort(const capacity_state& s, const std::string& cohort, const json_value* m,
                     bool subtree) {
  if (m == nullptr) return std::nullopt;
  std::string why;
  for (const auto& [key, v] : m->as_object()) {
    const auto [res, flavor] = split_key(key);
    const auto n = s.tree().find(cohort);
    const auto f = s.tree().find_fr(flavor, res);
    if (!n || !f) return "unknown cohort or resource";
    const std::int64_t got = subtree ? s.tree().subtree_quota(*n, *f) : s.usage(*n, *f);
    if (got != scaled(v))
      why += fmt::format("cohort {}[{}] = {}; ", subtree ? "subtree" : "usage", key, got);
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_quota_accounting(const json_value& c) {
  const auto& input = *c.find("input");
  const auto& exp = *c.find("expected");
  world wd;
  if (auto e = build_world(input, wd)) return e;
  if (auto e = load_admitted(input, wd)) return e;
  auto& s = *wd.state;
  const std::string cohort = first_cohort(input);
  const auto& init = *exp.find("initial");
  std::string why;
  for (auto e : {check_cohort(s, cohort, init.find("cohort_subtree_quota"), true),
                 check_cohort(s, cohort, init.find("cohort_usage"), false),
                 check_usage_map(s, init.find("usage"), "usage")})
    if (e) why += *e;
  if (const auto* sq = init.find("subtree_quota"))
    for (const auto& [cq, res] : sq->as_object())
      for (const auto& [key, v] : res.as_object()) {
        const auto [r, fl] = split_key(key);
        const auto n = s.tree().find(cq);
        const auto f = s.tree().find_fr(fl, r);
        if (!n || !f || s.tree().subtree_quota(*n, *f) != scaled(v))
          why += fmt::format("subtree_quota[{}] differs; ", cq);
      }
  if (const auto* after = exp.find("after_removing")) {
    for (const auto& r : after->find("removed")->as_array())
      if (!s.release(wd.ids.at(r.as_string()))) why += "release failed; ";
    for (auto e : {check_usage_map(s, after->find("usage"), "after.usage"),
                   check_cohort(s, cohort, after->find("cohort_usage"), false)})
      if (e) why += *e;
  }
  if (const auto* all = exp.find("after_removing_all")) {
    for (const auto& [name, id] : wd.ids)
      if (s.is_admitted(id) && !s.release(id)) why += "release failed; ";
    if (auto e = check_cohort(s, cohort, all->find("cohort_usage"), false)) why += *e;
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_max_admissible(const json_value& c) {
  std::string why;
  for (const auto& sub : c.find("input")->find("subcases")->as_array()) {
    world wd;
    if (auto e = build_world(sub, wd)) return e;
    const auto& s = *wd.state;
    for (const auto& [cq, res] : sub.find("expected")->as_object())
      for (const auto& [key, v] : res.as_object()) {
        const auto [r, fl] = split_key(key);
        const auto n = s.tree().find(cq);
        const auto f = s.tree().find_fr(fl, r);
        const std::int64_t got = n && f ? quota_available(s.tree(), s.usage(), *n, *f) : -1;
        if (got != scaled(v))
          why += fmt::format("{}: available[{}][{}] = {}; ", str(sub.find("name")), cq, key,
                             static_cast<double>(got) / scale);
      }
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_drs(const json_value& c) {
  std::string why;
  for (const auto& sub : c.find("input")->find("subcases")->as_array()) {
    world wd;
    if (auto e = build_world(sub, wd)) return e;
    auto& s = *wd.state;
    std::uint32_t next = 1000;
    for (const char* key : {"usage", "incoming"}) {
      const auto* m = sub.find(key);
      if (m == nullptr || !m->is_object()) continue;
      for (const auto& [cq, res] : m->as_object())
        for (const auto& [k, v] : res.as_object()) {
          const auto [r, fl] = split_key(k);
          const auto q = s.tree().find(cq);
          if (!q) return "unknown queue";
          auto ok_add = s.add_admitted({job_id(next++), *q, tenant_id(0), 0, 0, fl,
                                        drf_vector{{r, scaled(v).value_or(-1)}}});
          if (!ok_add) return ok_add.error().message;
        }
    }
    const std::string name = str(sub.find("name"));
    for (const auto& [node, e] : sub.find("expected")->as_object()) {
      const auto n = s.tree().find(node);
      if (!n) return "unknown node";
      const drs_value d = dominant_resource_share(s.tree(), s.usage(), *n);
      const auto* want = e.find("drs");
      const bool inf = want->is_string() && want->as_string() == "+Inf";
      if (inf ? !d.infinite : (d.infinite || d.rounded() != want->as_int64()))
        why += fmt::format("{}: drs[{}] = {}; ", name, node, d.rounded());
      if (const auto* p = e.find("drs_precise");
          p != nullptr && std::fabs(d.to_double() - p->as_double()) > 1e-9)
        why += fmt::format("{}: drs_precise[{}] = {}; ", name, node, d.to_double());
      const auto* dom = e.find("dominant");
      const std::string want_dom = dom->is_null() ? std::string() : dom->as_string();
      if (std::string(d.dominant) != want_dom)
        why += fmt::format("{}: dominant[{}] = '{}'; ", name, node, d.dominant);
      if (d.borrowing() != e.find("borrowing")->as_bool())
        why += fmt::format("{}: borrowing[{}] = {}; ", name, node, d.borrowing());
    }
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_preemption(const json_value& c, bool fair) {
  const auto& input = *c.find("input");
  world wd;
  if (auto e = build_world(input, wd)) return e;
  if (auto e = load_admitted(input, wd)) return e;
  const auto in = parse_workload(*input.find("incoming"), wd);
  if (!in) return "bad incoming";
  capacity_cycle_options opt;
  opt.fair_sharing = fair;
  if (const auto* st = input.find("strategies"); st != nullptr && st->is_array()) {
    opt.strategies.clear();
    for (const auto& x : st->as_array())
      opt.strategies.push_back(x.as_string() == "LessThanInitialShare"
                                   ? fair_strategy::less_than_initial_share
                                   : fair_strategy::less_than_or_equal_to_final_share);
  }
  pending_workload w{wd.ids.at(in->name), in->queue, tenant_id(0), in->priority, 0,
                     in->request,         {}};
  const auto plan = plan_preemption(*wd.state, w, opt);
  if (!plan) return fmt::format("plan_preemption: {}", plan.error().message);
  std::set<std::pair<std::string, std::string>> got;
  std::set<std::pair<std::string, std::string>> want;
  for (const auto& v : plan->victims)
    got.insert({wd.names.at(v.victim.value()), std::string(to_string(v.reason))});
  for (const auto& v : c.find("expected")->find("victims")->as_array())
    want.insert({str(v.find("name")), str(v.find("reason"))});
  if (got == want) return std::nullopt;
  std::string s = "victims:";
  for (const auto& [n, r] : got) s += fmt::format(" {}({})", n, r);
  return s;
}

outcome run_fair_admission(const json_value& c) {
  const auto& input = *c.find("input");
  world wd;
  if (auto e = build_world(input, wd)) return e;
  if (auto e = load_admitted(input, wd)) return e;
  auto& s = *wd.state;
  capacity_cycle_options opt;
  opt.fair_sharing = true;
  std::string why;
  for (const auto& p : input.find("pending")->as_array()) {
    const auto w = parse_workload(p, wd);
    if (!w) return "bad pending";
    pending_workload pw{wd.ids.at(w->name), w->queue, tenant_id(0), w->priority, 0, w->request, {}};
    const auto drs = c.find("expected")->find("drs_with_candidate");
    if (const auto* want = drs->find(w->name)) {
      const auto ans = what_if(s, pw, opt);
      if (!ans || ans->drs_after.rounded() != want->as_int64())
        why += fmt::format("drs_with_candidate[{}] = {}; ", w->name,
                           ans ? ans->drs_after.rounded() : -1);
    }
    if (const auto r = s.submit(pw); !r) return r.error().message;
  }
  const auto plan = plan_admission(s, opt);
  if (!plan) return plan.error().message;
  std::vector<std::string> admitted;
  for (const auto& a : plan->admitted) admitted.push_back(wd.names.at(a.job.value()));
  std::vector<std::string> want_admitted;
  for (const auto& a : c.find("expected")->find("admitted")->as_array())
    want_admitted.push_back(a.as_string());
  if (admitted != want_admitted) why += fmt::format("admitted = [{}]; ", fmt::join(admitted, ","));
  std::set<std::string> deferred;
  for (const auto& d : plan->decision.deferrals) deferred.insert(wd.names.at(d.job.value()));
  for (const auto& p : c.find("expected")->find("left_pending")->as_array())
    if (!deferred.contains(p.as_string())) why += fmt::format("{} not deferred; ", p.as_string());
  if (!why.empty()) return why;
  return std::nullopt;
}

}  // namespace

void run_kueue_case(const vector_case& c, reporter& out) {
  const auto& j = *c.json;
  if (j.find("input") == nullptr) {
    out.fail(c.name, "missing input");
    return;
  }
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
}

}  // namespace hetsched::conform
