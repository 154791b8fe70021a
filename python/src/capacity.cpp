// SPDX-License-Identifier: MIT
// Bindings of hierarchical capacity queues: tree build (Kueue-style or from YARN queues),
// submit, the admission cycle with preemption, what-if, queue status and shares.
#include <cmath>
#include <limits>

#include <hetsched/policies/capacity_preemption.hpp>
#include <hetsched/policies/capacity_queue.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

constexpr std::string_view kind_names[] = {"cohort", "queue"};
constexpr std::string_view within_names[] = {"never", "lower_priority",
                                             "lower_or_newer_equal_priority"};
constexpr std::string_view reclaim_names[] = {"never", "lower_priority", "any"};
constexpr std::string_view order_names[] = {
    "strict_fifo", "best_effort_fifo", "strict_priority", "priority", "drf", "custom"};
constexpr std::string_view strategy_names[] = {"less_than_or_equal_to_final_share",
                                               "less_than_initial_share"};

// The reason named `name` as to_string(preemption_reason) spells it (Kueue's names).
preemption_reason reason_from(std::string_view name, std::string_view what) {
  for (int i = 0; i <= static_cast<int>(preemption_reason::in_cohort_reclaim_while_borrowing); ++i)
    if (to_string(static_cast<preemption_reason>(i)) == name)
      return static_cast<preemption_reason>(i);
  raise(errc::invalid_argument, fmt::format("{}: unknown preemption reason '{}'", what, name));
}

std::vector<quota_spec> quotas_from(py::handle obj, const std::string& what) {
  std::vector<quota_spec> out;
  for_each_item(obj, what, [&](py::handle item, const std::string& w) {
    fields f(item, w);
    quota_spec q;
    f.get("flavor", q.flavor);
    q.resource = f.required<std::string>("resource");
    f.get("nominal", q.nominal);
    std::int64_t v = 0;
    if (f.get("borrowing_limit", v)) q.borrowing_limit = v;
    if (f.get("lending_limit", v)) q.lending_limit = v;
    f.finish();
    out.push_back(std::move(q));
  });
  return out;
}

std::optional<yarn_user_limit_spec> user_limit_from(py::handle obj, const std::string& what) {
  if (obj.is_none()) return std::nullopt;
  fields f(obj, what);
  yarn_user_limit_spec u;
  f.get("minimum_user_limit_percent", u.minimum_user_limit_percent);
  f.get("user_limit_factor", u.user_limit_factor);
  std::map<std::uint32_t, double> weights;
  if (f.get("user_weights", weights))
    for (const auto& [t, w] : weights) u.user_weights.emplace(tenant_id(t), w);
  f.finish();
  return u;
}

capacity_tree_spec tree_spec_from(const py::iterable& nodes) {
  capacity_tree_spec spec;
  for_each_item(nodes, "nodes", [&](py::handle item, const std::string& what) {
    fields f(item, what);
    capacity_node_spec n;
    n.name = f.required<std::string>("name");
    f.get("parent", n.parent);
    std::string s;
    if (f.get("kind", s)) n.kind = parse_enum<capacity_node_kind>(s, kind_names, f.path("kind"));
    n.quotas = quotas_from(f.object("quotas"), f.path("quotas"));
    f.get("fair_weight", n.fair_weight);
    const py::object pre = f.object("preemption");
    if (!pre.is_none()) {
      fields pf(pre, f.path("preemption"));
      if (pf.get("within_queue", s))
        n.preemption.within_queue =
            parse_enum<within_queue_preemption>(s, within_names, pf.path("within_queue"));
      if (pf.get("reclaim", s))
        n.preemption.reclaim = parse_enum<cohort_reclaim>(s, reclaim_names, pf.path("reclaim"));
      pf.get("borrow_within_cohort", n.preemption.borrow.enabled);
      std::int32_t threshold = 0;
      if (pf.get("max_priority_threshold", threshold))
        n.preemption.borrow.max_priority_threshold = threshold;
      pf.finish();
    }
    if (f.get("order", s)) n.order = parse_enum<queue_order>(s, order_names, f.path("order"));
    n.user_limit = user_limit_from(f.object("user_limit"), f.path("user_limit"));
    f.finish();
    spec.nodes.push_back(std::move(n));
  });
  return spec;
}

queue_id queue_arg(const capacity_tree& t, py::handle obj, const std::string& what) {
  if (py::isinstance<py::str>(obj)) {
    const auto name = obj.cast<std::string>();
    const auto q = t.find(name);
    if (!q) raise(errc::not_found, fmt::format("{}: unknown queue '{}'", what, name));
    return *q;
  }
  try {
    const auto id = obj.cast<std::uint32_t>();
    if (id >= t.size()) raise(errc::not_found, fmt::format("{}: unknown queue {}", what, id));
    return queue_id(id);
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument, fmt::format("{}: expected a queue name or id", what));
  }
}

pending_workload pending_from(const capacity_tree& t, const py::dict& obj) {
  fields f(obj, "workload");
  pending_workload w;
  w.job = job_id(f.required<std::uint32_t>("job"));
  w.queue = queue_arg(t, f.object("queue"), f.path("queue"));
  std::uint32_t tenant = 0;
  f.get("tenant", tenant);
  w.tenant = tenant_id(tenant);
  f.get("priority", w.priority);
  f.get("submit_time", w.submit_time);
  w.request = drf_vector_from(f.object("request"), f.path("request"));
  f.get("flavors", w.flavors);
  f.finish();
  return w;
}

admitted_workload admitted_from(const capacity_tree& t, const py::dict& obj) {
  fields f(obj, "workload");
  admitted_workload w;
  w.job = job_id(f.required<std::uint32_t>("job"));
  w.queue = queue_arg(t, f.object("queue"), f.path("queue"));
  std::uint32_t tenant = 0;
  f.get("tenant", tenant);
  w.tenant = tenant_id(tenant);
  f.get("priority", w.priority);
  f.get("admitted_at", w.admitted_at);
  f.get("flavor", w.flavor);
  w.request = drf_vector_from(f.object("request"), f.path("request"));
  f.finish();
  return w;
}

capacity_cycle_options options_of(std::int64_t now, bool fair_sharing, bool preemption,
                                  std::int64_t min_runtime, const py::object& strategies) {
  capacity_cycle_options o;
  o.now = now;
  o.fair_sharing = fair_sharing;
  o.preemption = preemption;
  o.min_runtime = min_runtime;
  if (!strategies.is_none()) {
    o.strategies.clear();
    for (const auto& s : strategies.cast<std::vector<std::string>>())
      o.strategies.push_back(parse_enum<fair_strategy>(s, strategy_names, "strategies"));
  }
  return o;
}

py::dict drs_to_py(const drs_value& d) {
  py::dict r;
  r["drs"] = d.infinite ? std::numeric_limits<double>::infinity() : d.to_double();
  r["borrowing"] = d.borrowing();
  r["dominant"] = std::string(d.dominant);
  return r;
}

py::list victims_to_py(const capacity_tree& t, const std::vector<preemption_target>& victims) {
  py::list rows;
  for (const preemption_target& v : victims) {
    py::dict r;
    r["victim"] = v.victim.value();
    r["queue"] = t.name(v.queue);
    r["reason"] = std::string(to_string(v.reason));
    rows.append(r);
  }
  return rows;
}

py::dict preemption_plan_to_py(const capacity_tree& t, const preemption_plan& p) {
  py::dict r;
  r["preemptor"] = p.preemptor.value();
  r["queue"] = p.queue.valid() ? py::object(py::str(t.name(p.queue))) : py::none();
  r["flavor"] = p.flavor;
  r["victims"] = victims_to_py(t, p.victims);
  return r;
}

py::dict plan_to_py(const capacity_tree& t, const admission_plan& p) {
  py::dict d;
  d["now"] = p.now;
  py::list admitted;
  for (const flavor_admission& a : p.admitted) {
    py::dict r;
    r["job"] = a.job.value();
    r["queue"] = t.name(a.queue);
    r["flavor"] = a.flavor;
    r["borrowing"] = a.borrowing;
    admitted.append(r);
  }
  d["admitted"] = admitted;
  py::list pre;
  for (const preemption_plan& x : p.preemptions) pre.append(preemption_plan_to_py(t, x));
  d["preemptions"] = pre;
  d["decision"] = to_py(p.decision);
  return d;
}

admission_plan plan_from(const capacity_tree& t, const py::dict& obj) {
  fields f(obj, "plan");
  admission_plan p;
  f.get("now", p.now);
  for_each_item(f.object("admitted"), f.path("admitted"),
                [&](py::handle item, const std::string& w) {
                  fields af(item, w);
                  flavor_admission a;
                  a.job = job_id(af.required<std::uint32_t>("job"));
                  a.queue = queue_arg(t, af.object("queue"), af.path("queue"));
                  af.get("flavor", a.flavor);
                  af.get("borrowing", a.borrowing);
                  af.finish();
                  p.admitted.push_back(std::move(a));
                });
  for_each_item(f.object("preemptions"), f.path("preemptions"),
                [&](py::handle item, const std::string& w) {
                  fields pf(item, w);
                  preemption_plan x;
                  x.preemptor = job_id(pf.required<std::uint32_t>("preemptor"));
                  x.queue = queue_arg(t, pf.object("queue"), pf.path("queue"));
                  pf.get("flavor", x.flavor);
                  for_each_item(pf.object("victims"), pf.path("victims"),
                                [&](py::handle v, const std::string& vw) {
                                  fields vf(v, vw);
                                  preemption_target target;
                                  target.victim = job_id(vf.required<std::uint32_t>("victim"));
                                  target.queue = queue_arg(t, vf.object("queue"), vf.path("queue"));
                                  std::string reason;
                                  if (vf.get("reason", reason))
                                    target.reason = reason_from(reason, vf.path("reason"));
                                  vf.finish();
                                  x.victims.push_back(target);
                                });
                  pf.finish();
                  p.preemptions.push_back(std::move(x));
                });
  p.decision = decision_from(f.object("decision"), f.path("decision"));
  f.finish();
  return p;
}

py::dict status_to_py(const capacity_tree& t, const queue_report& r) {
  py::dict d = drs_to_py(r.drs);
  d["queue"] = t.name(r.node);
  py::list lines;
  for (const quota_line& l : r.lines) {
    py::dict x;
    x["flavor"] = l.flavor;
    x["resource"] = l.resource;
    x["nominal"] = l.nominal;
    x["subtree_quota"] = l.subtree_quota;
    x["usage"] = l.usage;
    x["available"] = l.available;
    x["potential_available"] = l.potential_available;
    x["borrowed"] = l.borrowed;
    lines.append(x);
  }
  d["lines"] = lines;
  return d;
}

#define HETSCHED_PY_CYCLE_ARGS                                                       \
  py::arg("now") = 0, py::arg("fair_sharing") = false, py::arg("preemption") = true, \
  py::arg("min_runtime") = 0, py::arg("strategies") = py::none()

}  // namespace

void bind_capacity(py::module_& m) {
  py::class_<capacity_state>(
      m, "CapacityQueues",
      "Hierarchical capacity queues (Kueue quota algebra, fair sharing, YARN user limits): a "
      "tree\nof cohorts and queues with per-(flavor, resource) quotas, the pending and "
      "admitted\nworkloads, and the admission cycle. Node dicts: {name, parent, kind: "
      "'cohort'|'queue',\nquotas: [{flavor, resource, nominal, borrowing_limit, "
      "lending_limit}], fair_weight,\npreemption: {within_queue, reclaim, borrow_within_cohort, "
      "max_priority_threshold}, order,\nuser_limit}. Workload dicts: {job, queue (name or id), "
      "tenant, priority, submit_time,\nrequest: {resource: amount}, flavors}.")
      .def(py::init([](const py::iterable& nodes) {
             return capacity_state(unwrap(capacity_tree::build(tree_spec_from(nodes))));
           }),
           py::arg("nodes"), "Builds the queue tree from node dicts (parents before children).")
      .def_static(
          "from_yarn",
          [](const py::iterable& queues, const py::iterable& total) {
            std::vector<yarn_queue_spec> qs;
            for_each_item(queues, "queues", [&](py::handle item, const std::string& what) {
              fields f(item, what);
              yarn_queue_spec q;
              q.name = f.required<std::string>("name");
              f.get("parent", q.parent);
              f.get("leaf", q.leaf);
              f.get("capacity_percent", q.capacity_percent);
              f.get("maximum_capacity_percent", q.maximum_capacity_percent);
              q.user_limit = user_limit_from(f.object("user_limit"), f.path("user_limit"));
              std::string order;
              if (f.get("order", order))
                q.order = parse_enum<queue_order>(order, order_names, f.path("order"));
              f.finish();
              qs.push_back(std::move(q));
            });
            const auto quotas = quotas_from(total, "cluster_total");
            return capacity_state(
                unwrap(capacity_tree::build(unwrap(capacity_spec_from_yarn(qs, quotas)))));
          },
          py::arg("queues"), py::arg("cluster_total"),
          "Builds the tree of YARN CapacityScheduler queues [{name, parent, leaf, "
          "capacity_percent,\nmaximum_capacity_percent, user_limit, order}] over `cluster_total` "
          "quotas.")
      .def(
          "queues",
          [](const capacity_state& s) {
            const capacity_tree& t = s.tree();
            py::list rows;
            for (std::uint32_t i = 0; i < t.size(); ++i) {
              const queue_id q(i);
              py::dict r = drs_to_py(dominant_resource_share(t, s.usage(), q));
              r["id"] = i;
              r["name"] = t.name(q);
              r["kind"] = t.is_queue(q) ? "queue" : "cohort";
              r["parent"] =
                  t.parent(q).valid() ? py::object(py::str(t.name(t.parent(q)))) : py::none();
              rows.append(r);
            }
            return rows;
          },
          "Returns one row per tree node: {id, name, kind, parent, drs, borrowing, dominant} "
          "(DRS =\nKueue's dominant resource share of what it borrows).")
      .def(
          "submit",
          [](capacity_state& s, const py::dict& w) { check(s.submit(pending_from(s.tree(), w))); },
          py::arg("workload"), "Adds a pending workload.")
      .def(
          "add_admitted",
          [](capacity_state& s, const py::dict& w) {
            check(s.add_admitted(admitted_from(s.tree(), w)));
          },
          py::arg("workload"),
          "Records an already admitted workload {job, queue, tenant, priority, admitted_at, "
          "flavor,\nrequest} (e.g. after a restart).")
      .def(
          "release", [](capacity_state& s, std::uint32_t job) { check(s.release(job_id(job))); },
          py::arg("job"), "Removes a pending or admitted workload (finished, or a victim gone).")
      .def(
          "plan",
          [](const capacity_state& s, std::int64_t now, bool fair, bool pre, std::int64_t min_rt,
             const py::object& strategies) {
            return plan_to_py(s.tree(), unwrap(plan_admission(
                                            s, options_of(now, fair, pre, min_rt, strategies))));
          },
          HETSCHED_PY_CYCLE_ARGS,
          "Returns the admission plan (pure): {now, admitted: [{job, queue, flavor, borrowing}],\n"
          "preemptions: [{preemptor, queue, flavor, victims: [{victim, queue, reason}]}], "
          "decision}.")
      .def(
          "apply",
          [](capacity_state& s, const py::dict& plan) {
            check(apply_admission(s, plan_from(s.tree(), plan)));
          },
          py::arg("plan"), "Commits a plan returned by plan(); victims are marked in flight.")
      .def(
          "cycle",
          [](capacity_state& s, std::int64_t now, bool fair, bool pre, std::int64_t min_rt,
             const py::object& strategies) {
            const admission_plan p =
                unwrap(plan_admission(s, options_of(now, fair, pre, min_rt, strategies)));
            check(apply_admission(s, p));
            return plan_to_py(s.tree(), p);
          },
          HETSCHED_PY_CYCLE_ARGS, "Plans and applies one admission cycle; returns the plan.")
      .def(
          "what_if",
          [](const capacity_state& s, const py::dict& w, std::int64_t now, bool fair, bool pre,
             std::int64_t min_rt, const py::object& strategies) {
            const what_if_answer a = unwrap(what_if(
                s, pending_from(s.tree(), w), options_of(now, fair, pre, min_rt, strategies)));
            py::dict d;
            d["admissible_now"] = a.admissible_now;
            d["flavor"] = a.flavor;
            d["borrowing"] = a.borrowing;
            d["drs_after"] = drs_to_py(a.drs_after)["drs"];
            d["needs_preemption"] = a.needs_preemption;
            d["victims"] = victims_to_py(s.tree(), a.victims);
            d["ahead_in_queue"] = a.ahead_in_queue;
            d["reason"] = a.reason;
            return d;
          },
          py::arg("workload"), HETSCHED_PY_CYCLE_ARGS,
          "Answers 'would this workload be admitted now' without side effects: {admissible_now,\n"
          "flavor, borrowing, drs_after, needs_preemption, victims, ahead_in_queue, reason}.")
      .def(
          "plan_preemption",
          [](const capacity_state& s, const py::dict& w, std::int64_t now, bool fair, bool pre,
             std::int64_t min_rt, const py::object& strategies) {
            return preemption_plan_to_py(
                s.tree(), unwrap(plan_preemption(s, pending_from(s.tree(), w),
                                                 options_of(now, fair, pre, min_rt, strategies))));
          },
          py::arg("workload"), HETSCHED_PY_CYCLE_ARGS,
          "Returns the victims that would let `workload` in: {preemptor, queue, flavor, victims}.")
      .def(
          "status",
          [](const capacity_state& s, const py::object& q) {
            return status_to_py(s.tree(), unwrap(queue_status(s, queue_arg(s.tree(), q, "queue"))));
          },
          py::arg("queue"),
          "Returns {queue, drs, borrowing, dominant, lines: [{flavor, resource, nominal, "
          "subtree_quota,\nusage, available, potential_available, borrowed}]}.")
      .def(
          "is_pending",
          [](const capacity_state& s, std::uint32_t j) { return s.is_pending(job_id(j)); },
          py::arg("job"), "True if `job` is pending.")
      .def(
          "is_admitted",
          [](const capacity_state& s, std::uint32_t j) { return s.is_admitted(job_id(j)); },
          py::arg("job"), "True if `job` is admitted.")
      .def(
          "in_flight",
          [](const capacity_state& s, std::uint32_t j) { return s.in_flight(job_id(j)); },
          py::arg("job"), "True if `job` is a victim whose release is awaited.")
      .def_property_readonly("pending_count", &capacity_state::pending_count,
                             "Number of pending workloads.")
      .def_property_readonly("admitted_count", &capacity_state::admitted_count,
                             "Number of admitted workloads.");
}

}  // namespace hetsched::python

#undef HETSCHED_PY_CYCLE_ARGS
