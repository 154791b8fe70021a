// SPDX-License-Identifier: MIT
// Bindings of Gandiva (Xiao et al., OSDI'18): reactive placement, time slicing, packing trials,
// the migration planner and grow-shrink.
#include <memory>

#include <hetsched/policies/gandiva.hpp>
#include <hetsched/policies/gandiva_packing.hpp>
#include <hetsched/policies/gandiva_time_slicing.hpp>
#include <hetsched/policies/grow_shrink.hpp>
#include <hetsched/policies/migration_planner.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

// Gandiva's reactive placement plus the node count its accessors check against.
struct gandiva_py {
  gandiva_reactive policy;
  std::size_t nodes = 0;
};

node_id node_in(const gandiva_py& g, std::uint32_t n) {
  if (n >= g.nodes) raise(errc::not_found, fmt::format("node {}: no such node", n));
  return node_id(n);
}

template <typename T>
T with_topology(const cluster& c, const py::object& topology, auto&&... args) {
  if (topology.is_none()) return T(c, args...);
  return T(c, topology.cast<const cluster_topology&>(), args...);
}

std::vector<job_profile> profiles_from(const py::iterable& obj) {
  std::vector<job_profile> out;
  for_each_item(obj, "profiles", [&](py::handle item, const std::string& w) {
    fields f(item, w);
    job_profile p;
    p.job = job_id(f.required<std::uint32_t>("job"));
    f.get("gpu_util_milli", p.gpu_util_milli);
    f.get("memory_mib", p.memory_mib);
    f.get("rate", p.rate);
    f.finish();
    out.push_back(p);
  });
  return out;
}

py::dict trial_to_py(const packing_trial& t) {
  py::dict d;
  d["job"] = t.job.value();
  d["device"] = t.device.value();
  py::list previous;
  append_rows(previous, t.job, t.previous);
  d["previous"] = previous;
  std::vector<std::uint32_t> partners;
  for (const job_id j : t.partners) partners.push_back(j.value());
  d["partners"] = partners;
  d["util_milli"] = t.util_milli;
  d["profiled_memory_mib"] = t.profiled_memory_mib;
  return d;
}

packing_trial trial_from(const py::dict& obj) {
  fields f(obj, "trial");
  packing_trial t;
  t.job = job_id(f.required<std::uint32_t>("job"));
  t.device = device_id(f.required<std::uint32_t>("device"));
  t.previous = placements_from(f.object("previous"), f.path("previous"));
  std::vector<std::uint32_t> partners;
  f.get("partners", partners);
  for (const std::uint32_t p : partners) t.partners.emplace_back(p);
  f.get("util_milli", t.util_milli);
  f.get("profiled_memory_mib", t.profiled_memory_mib);
  f.finish();
  return t;
}

py::dict migration_plan_to_py(const migration_plan& p) {
  py::dict d;
  py::list moves;
  for (const migration_move& mv : p.moves) {
    py::dict r;
    r["job"] = mv.job.value();
    r["kind"] = std::string(to_string(mv.kind));
    r["target"] = mv.target.value();
    py::list from;
    append_rows(from, mv.job, mv.from);
    py::list to;
    append_rows(to, mv.job, mv.to);
    r["from"] = from;
    r["to"] = to;
    r["gpus"] = mv.gpus;
    r["span_before"] = mv.span_before;
    r["span_after"] = mv.span_after;
    r["idle_server_gpus"] = mv.idle_server_gpus;
    r["cost_s"] = mv.cost_s;
    r["cost_gpu_s"] = mv.cost_gpu_s;
    moves.append(r);
  }
  d["moves"] = moves;
  d["fragmented_before"] = p.fragmented_before;
  d["fragmented_after"] = p.fragmented_after;
  d["server_gpus"] = p.server_gpus;
  d["servers_emptied"] = p.servers_emptied;
  d["total_cost_gpu_s"] = p.total_cost_gpu_s;
  d["stop"] = std::string(to_string(p.stop));
  d["decision"] = to_py(to_decision(p));
  return d;
}

void bind_reactive(py::module_& m) {
  py::class_<gandiva_py>(
      m, "GandivaReactive",
      "Gandiva's reactive placement: same-affinity servers first, then empty ones, then mixed,\n"
      "then time-slicing onto a running job of the same size (suspend + bind); otherwise a "
      "deferral.\nplace() is pure; call commit() after ClusterState.apply() and release() when "
      "a job frees\nits GPUs (or use place_and_apply()).")
      .def(py::init([](const std::shared_ptr<cluster>& c, const py::object& topology,
                       bool oversubscribe, std::uint32_t slices) {
             const gandiva_params p{oversubscribe, slices};
             return gandiva_py{with_topology<gandiva_reactive>(*c, topology, p), c->node_count()};
           }),
           py::arg("cluster"), py::arg("topology") = py::none(),
           py::arg("allow_oversubscription") = true,
           py::arg("max_time_sliced_jobs_per_gpu_set") = 1,
           "Makes the policy for Cluster `cluster` (GPU choice by the node topologies of "
           "ClusterTopology\n`topology` when given).")
      .def(
          "place",
          [](const gandiva_py& g, const cluster_state& s, std::uint32_t job) {
            return to_py(unwrap(g.policy.place(s, job_id(job))));
          },
          py::arg("state"), py::arg("job"),
          "Returns the decision dict for queued job `job` (a bind, a suspension plus a bind, or "
          "a\ndeferral); changes nothing.")
      .def(
          "place_and_apply",
          [](gandiva_py& g, cluster_state& s, std::uint32_t job) {
            const decision d = unwrap(g.policy.place(s, job_id(job)));
            check(apply(s, d));
            check(g.policy.commit(d));
            return to_py(d);
          },
          py::arg("state"), py::arg("job"),
          "Places `job`, applies the decision to `state`, commits it to the indices and returns "
          "it.")
      .def(
          "commit",
          [](gandiva_py& g, const py::dict& d) {
            check(g.policy.commit(decision_from(d, "decision")));
          },
          py::arg("decision"),
          "Updates the indices after ClusterState.apply(decision). Raises InvalidArgument (and\n"
          "changes nothing) for a node or device outside the cluster, a device not on its task's\n"
          "node or a device listed twice in one task.")
      .def(
          "release", [](gandiva_py& g, std::uint32_t job) { g.policy.release(job_id(job)); },
          py::arg("job"), "Updates the indices after `job` released its GPUs.")
      .def(
          "rebuild", [](gandiva_py& g, const cluster_state& s) { check(g.policy.rebuild(s)); },
          py::arg("state"), "Recomputes every index from `state`.")
      .def(
          "affinity",
          [](const gandiva_py& g, std::uint32_t n) { return g.policy.affinity(node_in(g, n)); },
          py::arg("node"), "Returns node `node`'s affinity (GPU count of its jobs; 0 = empty).")
      .def(
          "free_gpus",
          [](const gandiva_py& g, std::uint32_t n) { return g.policy.free_gpus(node_in(g, n)); },
          py::arg("node"), "Returns node `node`'s free GPUs as the indices see them.")
      .def(
          "time_sliced",
          [](const gandiva_py& g, std::uint32_t n) { return g.policy.time_sliced(node_in(g, n)); },
          py::arg("node"), "Returns the number of jobs time-sliced out on node `node`.");
}

void bind_planners(py::module_& m) {
  py::class_<migration_planner>(
      m, "MigrationPlanner",
      "Gandiva's migration: consolidates gangs spread over servers and defragments by "
      "emptying\nservers into fuller ones.")
      .def(py::init([](const std::shared_ptr<cluster>& c, const py::object& topology) {
             return with_topology<migration_planner>(*c, topology);
           }),
           py::arg("cluster"), py::arg("topology") = py::none(),
           "Makes a planner for Cluster `cluster` (optionally with its ClusterTopology).")
      .def(
          "plan",
          [](const migration_planner& p, const cluster_state& s, std::uint32_t num,
             std::uint32_t den, std::int64_t cost_s, bool consolidate, bool defragment,
             bool require_preemptible, std::uint32_t max_moves) {
            const migration_params params{
                num, den, cost_s, consolidate, defragment, require_preemptible, max_moves};
            return migration_plan_to_py(unwrap(p.plan(s, params)));
          },
          py::arg("state"), py::arg("threshold_num") = 3, py::arg("threshold_den") = 4,
          py::arg("checkpoint_restore_s") = 30, py::arg("consolidate_gangs") = true,
          py::arg("defragment") = true, py::arg("require_preemptible") = false,
          py::arg("max_moves") = 0,
          "Returns the plan: {moves: [{job, kind, target, from, to, gpus, span_before, "
          "span_after,\nidle_server_gpus, cost_s, cost_gpu_s}], fragmented_before, "
          "fragmented_after, server_gpus,\nservers_emptied, total_cost_gpu_s, stop, decision}.");
  py::class_<grow_shrink_planner>(
      m, "GrowShrinkPlanner",
      "Gandiva's grow-shrink: elastic jobs grow onto idle GPUs and shrink back when jobs wait.")
      .def(py::init([](const std::shared_ptr<cluster>& c, const py::object& topology) {
             return with_topology<grow_shrink_planner>(*c, topology);
           }),
           py::arg("cluster"), py::arg("topology") = py::none(),
           "Makes a planner for Cluster `cluster` (optionally with its ClusterTopology).")
      .def(
          "plan",
          [](const grow_shrink_planner& p, const cluster_state& s, const py::iterable& elastic,
             std::uint32_t reserve, std::uint32_t max_grow) {
            std::vector<elastic_job> jobs;
            for_each_item(elastic, "elastic", [&](py::handle item, const std::string& w) {
              fields f(item, w);
              elastic_job e;
              e.job = job_id(f.required<std::uint32_t>("job"));
              f.get("base_tasks", e.base_tasks);
              f.finish();
              jobs.push_back(e);
            });
            const grow_shrink_plan plan =
                unwrap(p.plan(s, jobs, grow_shrink_params{reserve, max_grow}));
            py::dict d;
            py::list grow;
            for (const binding& b : plan.grow) append_rows(grow, b.job, b.tasks);
            d["grow"] = grow;
            py::list shrink;
            for (const task_release& r : plan.shrink) {
              py::dict x;
              x["job"] = r.job.value();
              std::vector<std::uint32_t> tasks;
              for (const task_id t : r.tasks) tasks.push_back(t.value());
              x["tasks"] = tasks;
              x["gpus"] = r.gpus;
              shrink.append(x);
            }
            d["shrink"] = shrink;
            d["free_gpus"] = plan.free_gpus;
            d["waiting_gpus"] = plan.waiting_gpus;
            d["offered_gpus"] = plan.offered_gpus;
            d["reclaimed_gpus"] = plan.reclaimed_gpus;
            d["decision"] = to_py(to_decision(plan));
            return d;
          },
          py::arg("state"), py::arg("elastic"), py::arg("reserve_gpus") = 0,
          py::arg("max_grow_tasks") = 0,
          "Returns {grow (task rows), shrink: [{job, tasks, gpus}], free_gpus, waiting_gpus,\n"
          "offered_gpus, reclaimed_gpus, decision} for elastic jobs [{job, base_tasks}]. The\n"
          "decision binds the grown tasks and gives the shrunk ones back as `releases` rows\n"
          "[{job, task}] (partial releases: the job keeps running on its other tasks).");
}

}  // namespace

void bind_gandiva(py::module_& m) {
  bind_reactive(m);
  bind_planners(m);
  m.def(
      "plan_time_slices",
      [](const cluster_state& s, const py::iterable& accounts, std::int64_t now_s,
         std::int64_t quantum_s) {
        std::vector<slice_account> acc;
        for_each_item(accounts, "accounts", [&](py::handle item, const std::string& w) {
          fields f(item, w);
          slice_account a;
          a.job = job_id(f.required<std::uint32_t>("job"));
          f.get("attained_s", a.attained_s);
          f.get("since_s", a.since_s);
          f.finish();
          acc.push_back(a);
        });
        const time_slice_plan p =
            unwrap(plan_time_slices(s, acc, time_slice_params{quantum_s}, now_s));
        py::dict d;
        std::vector<std::uint32_t> suspend;
        for (const job_id j : p.suspend) suspend.push_back(j.value());
        std::vector<std::uint32_t> resume;
        for (const job_id j : p.resume) resume.push_back(j.value());
        d["suspend"] = suspend;
        d["resume"] = resume;
        d["next_review_s"] = p.next_review_s ? py::object(py::int_(*p.next_review_s)) : py::none();
        d["decision"] = to_py(to_decision(p));
        return d;
      },
      py::arg("state"), py::arg("accounts"), py::arg("now_s"), py::arg("quantum_s") = 60,
      "Returns Gandiva's time-slicing plan {suspend, resume, next_review_s, decision} given "
      "per-job\naccounts [{job, attained_s, since_s}].");
  m.def(
      "propose_packing",
      [](const cluster_state& s, const py::iterable& profiles, const py::object& rejected,
         bool only_under_overload, std::uint32_t max_trials) {
        std::vector<rejected_pack> rej;
        for_each_item(rejected, "rejected", [&](py::handle item, const std::string& w) {
          fields f(item, w);
          rejected_pack r;
          r.job = job_id(f.required<std::uint32_t>("job"));
          r.device = device_id(f.required<std::uint32_t>("device"));
          f.finish();
          rej.push_back(r);
        });
        const packing_proposal p = unwrap(propose_packing(
            s, profiles_from(profiles), rej, packing_params{only_under_overload, max_trials}));
        py::dict d;
        py::list trials;
        for (const packing_trial& t : p.trials) trials.append(trial_to_py(t));
        d["trials"] = trials;
        d["start"] = to_py(p.start);
        return d;
      },
      py::arg("state"), py::arg("profiles"), py::arg("rejected") = py::none(),
      py::arg("only_under_overload") = true, py::arg("max_trials") = 1,
      "Returns Gandiva packing trials {trials: [{job, device, previous, partners, util_milli,\n"
      "profiled_memory_mib}], start: decision} from job profiles [{job, gpu_util_milli, "
      "memory_mib, rate}].");
  m.def(
      "judge_packing",
      [](const cluster_state& s, const py::dict& trial, const py::iterable& profiles,
         const py::iterable& measured) {
        std::vector<packed_rate> rates;
        for_each_item(measured, "measured", [&](py::handle item, const std::string& w) {
          fields f(item, w);
          packed_rate r;
          r.job = job_id(f.required<std::uint32_t>("job"));
          f.get("rate", r.rate);
          f.finish();
          rates.push_back(r);
        });
        const packing_verdict v =
            unwrap(judge_packing(s, trial_from(trial), profiles_from(profiles), rates));
        py::dict d;
        d["keep"] = v.keep;
        d["packed_throughput_milli"] = v.packed_throughput_milli;
        d["undo"] = to_py(v.undo);
        return d;
      },
      py::arg("state"), py::arg("trial"), py::arg("profiles"), py::arg("measured"),
      "Judges a packing trial from measured packed rates [{job, rate}]: {keep, "
      "packed_throughput_milli,\nundo: decision}.");
}

}  // namespace hetsched::python
