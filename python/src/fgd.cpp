// SPDX-License-Identifier: MIT
// Bindings of FGD (fragmentation gradient descent, Weng et al., ATC'23): the fragmentation
// measure, the scorers, the FGD cluster model and the openb replay.
#include <hetsched/policies/fgd.hpp>
#include <hetsched/sim/fgd_replay.hpp>
#include <hetsched/workload/openb.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

// Reads the task keys of `f` into `t` (the caller may have read other keys first).
void read_task(fields& f, fgd_task& t) {
  f.get("cpu_milli", t.cpu_milli);
  f.get("memory_mib", t.memory_mib);
  f.get("num_gpu", t.num_gpu);
  f.get("gpu_milli", t.gpu_milli);
  f.get("gpu_spec", t.gpu_spec);
}

fgd_task task_from(const py::dict& obj) {
  fields f(obj, "task");
  fgd_task t;
  read_task(f, t);
  f.finish();
  check(validate(t));
  return t;
}

void put_task(py::dict& d, const fgd_task& t) {
  d["cpu_milli"] = t.cpu_milli;
  d["memory_mib"] = t.memory_mib;
  d["num_gpu"] = t.num_gpu;
  d["gpu_milli"] = t.gpu_milli;
  d["gpu_spec"] = t.gpu_spec;
}

std::vector<fgd_node_spec> nodes_from(const py::iterable& obj) {
  std::vector<fgd_node_spec> out;
  for_each_item(obj, "nodes", [&](py::handle item, const std::string& w) {
    fields f(item, w);
    fgd_node_spec n;
    n.name = f.required<std::string>("name");
    f.get("cpu_milli", n.cpu_milli);
    f.get("memory_mib", n.memory_mib);
    f.get("gpus", n.gpus);
    f.get("model", n.model);
    f.finish();
    out.push_back(std::move(n));
  });
  return out;
}

py::list nodes_to_py(const std::vector<fgd_node_spec>& nodes) {
  py::list rows;
  for (const fgd_node_spec& n : nodes) {
    py::dict r;
    r["name"] = n.name;
    r["cpu_milli"] = n.cpu_milli;
    r["memory_mib"] = n.memory_mib;
    r["gpus"] = n.gpus;
    r["model"] = n.model;
    rows.append(r);
  }
  return rows;
}

std::vector<sim::fgd_arrival> arrivals_from(const py::iterable& obj) {
  std::vector<sim::fgd_arrival> out;
  for_each_item(obj, "arrivals", [&](py::handle item, const std::string& w) {
    fields f(item, w);
    sim::fgd_arrival a;
    f.get("name", a.name);
    read_task(f, a.task);
    f.finish();
    out.push_back(std::move(a));
  });
  return out;
}

py::list arrivals_to_py(const std::vector<sim::fgd_arrival>& arrivals) {
  py::list rows;
  for (const sim::fgd_arrival& a : arrivals) {
    py::dict r;
    r["name"] = a.name;
    put_task(r, a.task);
    rows.append(r);
  }
  return rows;
}

py::dict workload_to_py(const fgd_workload& w) {
  py::list classes;
  for (std::size_t i = 0; i < w.classes.size(); ++i) {
    const fgd_task_class& c = w.classes[i];
    py::dict r;
    r["cpu_milli"] = c.cpu_milli;
    r["gpu_milli"] = c.gpu_milli;
    r["num_gpu"] = c.num_gpu;
    r["gpu_spec"] = c.gpu_spec;
    r["count"] = c.count;
    r["weight"] = i < w.weights.size() ? w.weights[i] : 0.0;
    classes.append(r);
  }
  py::dict d;
  d["classes"] = classes;
  return d;
}

fgd_workload workload_from(const py::object& obj) {
  fgd_workload w;
  if (obj.is_none()) return w;
  fields f(obj, "workload");
  for_each_item(f.object("classes"), f.path("classes"),
                [&](py::handle item, const std::string& cw) {
                  fields cf(item, cw);
                  fgd_task_class c;
                  cf.get("cpu_milli", c.cpu_milli);
                  cf.get("gpu_milli", c.gpu_milli);
                  cf.get("num_gpu", c.num_gpu);
                  cf.get("gpu_spec", c.gpu_spec);
                  cf.get("count", c.count);
                  double weight = 0;
                  if (!cf.get("weight", weight))
                    raise(errc::invalid_argument, fmt::format("{}: missing key 'weight'", cw));
                  cf.finish();
                  w.classes.push_back(std::move(c));
                  w.weights.push_back(weight);
                });
  f.finish();
  return w;
}

py::dict breakdown_to_py(const frag_breakdown& b) {
  py::dict d;
  for (std::size_t i = 0; i < frag_bucket_count; ++i)
    d[py::str(std::string(to_string(static_cast<frag_bucket>(i))))] = b.milli[i];
  d["fragment"] = b.fragment();
  d["idle"] = b.idle();
  d["q124"] = b.q124();
  return d;
}

// Python names of fgd_policy, in enumerator order.
constexpr std::string_view policy_names[] = {"fgd",         "best_fit",       "dot_product",
                                             "gpu_packing", "gpu_clustering", "random"};

// Accepts the Python names and the reference simulator's names ("FGD", "BestFit", ...).
fgd_policy policy_from(std::string_view name) {
  if (const auto p = parse_fgd_policy(name)) return *p;
  return parse_enum<fgd_policy>(name, policy_names, "policy");
}

std::size_t node_in(const fgd_cluster& c, std::size_t n) {
  if (n >= c.size()) raise(errc::not_found, fmt::format("node {}: no such node", n));
  return n;
}

py::object choice_to_py(const std::optional<fgd_choice>& c) {
  if (!c) return py::none();
  py::dict d;
  d["node"] = c->node;
  d["gpus"] = c->gpus;
  d["score"] = c->score;
  return d;
}

void bind_fgd_cluster(py::module_& m) {
  py::class_<fgd_cluster>(m, "FgdCluster",
                          "The cluster model of the FGD simulator: nodes with CPU, memory and "
                          "GPUs of one model,\ntasks taking milli-GPU from devices.")
      .def(py::init([](const py::iterable& nodes) {
             return unwrap(fgd_cluster::make(nodes_from(nodes)));
           }),
           py::arg("nodes"),
           "Makes the idle cluster of nodes [{name, cpu_milli, memory_mib, gpus, model}].")
      .def("__len__", &fgd_cluster::size)
      .def(
          "nodes",
          [](const fgd_cluster& c) {
            py::list rows;
            for (std::size_t i = 0; i < c.size(); ++i) {
              const fgd_node_spec& s = c.spec(i);
              py::dict r;
              r["name"] = s.name;
              r["model"] = s.model;
              r["gpus"] = s.gpus;
              r["cpu_left"] = c.cpu_left(i);
              r["memory_left"] = c.memory_left(i);
              const auto left = c.gpu_left(i);
              r["gpu_left"] = std::vector<std::int64_t>(left.begin(), left.end());
              rows.append(r);
            }
            return rows;
          },
          "Returns one row per node: {name, model, gpus, cpu_left, memory_left, gpu_left}.")
      .def(
          "fits",
          [](const fgd_cluster& c, std::size_t n, const py::dict& t) {
            return c.fits(node_in(c, n), task_from(t));
          },
          py::arg("node"), py::arg("task"), "True if `task` passes the filter on node `node`.")
      .def(
          "place",
          [](fgd_cluster& c, std::size_t n, const py::dict& t, const py::object& gpus) {
            check(c.place(n, task_from(t), u32_list(gpus, "gpus")));
          },
          py::arg("node"), py::arg("task"), py::arg("gpus"),
          "Places `task` ({cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec}) on `node` "
          "using `gpus`.")
      .def_property_readonly("used_gpu_milli", &fgd_cluster::used_gpu_milli,
                             "Allocated milli-GPU over the cluster.")
      .def_property_readonly("used_nodes", &fgd_cluster::used_nodes, "Nodes hosting a task.")
      .def_property_readonly("total_gpus", &fgd_cluster::total_gpus, "Total GPU count.");
  py::class_<fgd_scheduler>(m, "FgdScheduler",
                            "One of the FGD simulator's placement policies: fgd, best_fit, "
                            "dot_product, gpu_packing,\ngpu_clustering or random.")
      .def(py::init([](std::string_view policy, const py::object& workload, std::uint64_t seed) {
             return fgd_scheduler(policy_from(policy), workload_from(workload), seed);
           }),
           py::arg("policy") = "fgd", py::arg("workload") = py::none(), py::arg("seed") = 0,
           "Makes the scheduler; `workload` (fgd_workload()) is used by fgd, `seed` by random.")
      .def_property_readonly(
          "policy",
          [](const fgd_scheduler& s) {
            return std::string(policy_names[static_cast<std::size_t>(s.policy())]);
          },
          "The policy name.")
      .def(
          "choose",
          [](fgd_scheduler& s, const fgd_cluster& c, const py::dict& t) {
            return choice_to_py(s.choose(c, task_from(t)));
          },
          py::arg("cluster"), py::arg("task"),
          "Returns {node, gpus, score} for `task`, or None when no node passes the filter.")
      .def(
          "schedule",
          [](fgd_scheduler& s, fgd_cluster& c, const py::dict& t) {
            const fgd_task task = task_from(t);
            const auto choice = s.choose(c, task);
            if (choice) check(c.place(choice->node, task, choice->gpus));
            return choice_to_py(choice);
          },
          py::arg("cluster"), py::arg("task"),
          "Chooses a node for `task`, places it on `cluster` and returns the choice (None if "
          "none fits).")
      .def(
          "score",
          [](const fgd_scheduler& s, const fgd_cluster& c, std::size_t n, const py::dict& t) {
            const fgd_task task = task_from(t);
            if (!c.fits(node_in(c, n), task))
              raise(errc::failed_precondition, fmt::format("node {}: the task does not fit", n));
            return choice_to_py(s.score(c, n, task));
          },
          py::arg("cluster"), py::arg("node"), py::arg("task"),
          "Returns {node, gpus, score} of `task` on a node it fits.");
}

}  // namespace

void bind_fgd(py::module_& m) {
  bind_fgd_cluster(m);
  m.def(
      "fgd_workload",
      [](const py::iterable& tasks, int popularity_pct) {
        std::vector<fgd_task> ts;
        for_each_item(tasks, "tasks", [&](py::handle item, const std::string& w) {
          fields f(item, w);
          fgd_task t;
          static_cast<void>(f.object("name"));
          read_task(f, t);
          f.finish();
          ts.push_back(std::move(t));
        });
        return workload_to_py(unwrap(make_fgd_workload(ts, popularity_pct)));
      },
      py::arg("tasks"), py::arg("popularity_pct") = 95,
      "Returns the target workload of FGD from tasks (the most popular classes covering\n"
      "`popularity_pct` % of them): {classes: [{cpu_milli, gpu_milli, num_gpu, gpu_spec, count, "
      "weight}]}.");
  m.def(
      "node_fragmentation",
      [](std::int64_t cpu_left, const std::vector<std::int64_t>& gpu_left, std::string_view model,
         const py::dict& w) {
        return breakdown_to_py(node_fragmentation(cpu_left, gpu_left, model, workload_from(w)));
      },
      py::arg("cpu_left"), py::arg("gpu_left"), py::arg("model"), py::arg("workload"),
      "Returns a node's fragmentation breakdown in milli-GPU by bucket, plus fragment, idle, "
      "q124.");
  m.def(
      "cluster_fragmentation",
      [](const fgd_cluster& c, const py::dict& w) {
        return breakdown_to_py(cluster_fragmentation(c, workload_from(w)));
      },
      py::arg("cluster"), py::arg("workload"),
      "Returns the cluster's fragmentation breakdown (sum over nodes).");
  m.def(
      "run_fgd_replay",
      [](const py::iterable& nodes, const py::iterable& arrivals, const py::dict& w,
         std::string_view policy, std::uint64_t seed) {
        const auto r = unwrap(sim::run_fgd_replay(nodes_from(nodes), arrivals_from(arrivals),
                                                  workload_from(w), policy_from(policy), seed));
        py::list rows;
        for (const sim::fgd_outcome& o : r.outcomes) {
          py::dict x;
          x["scheduled"] = o.scheduled;
          x["node"] = o.scheduled ? py::object(py::int_(o.node)) : py::none();
          x["gpus"] = o.gpus;
          x["arrived_gpu_milli"] = o.arrived_gpu_milli;
          x["used_gpu_milli"] = o.used_gpu_milli;
          x["used_nodes"] = o.used_nodes;
          x["frag_milli"] = o.frag_milli();
          x["frag_ratio_pct"] = o.frag_ratio_pct();
          x["q124_pct"] = o.q124_pct();
          rows.append(x);
        }
        py::dict d;
        d["outcomes"] = rows;
        py::dict curves;
        curves["alloc_pct"] = r.curves.alloc_pct;
        curves["frag_amount_pct"] = r.curves.frag_amount_pct;
        curves["frag_ratio_pct"] = r.curves.frag_ratio_pct;
        d["curves"] = curves;
        d["failed"] = r.failed;
        return d;
      },
      py::arg("nodes"), py::arg("arrivals"), py::arg("workload"), py::arg("policy") = "fgd",
      py::arg("seed") = 0,
      "Replays task arrivals [{name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec}] on "
      "FGD\nnodes: {outcomes: one row per arrival, curves: {alloc_pct, frag_amount_pct, "
      "frag_ratio_pct},\nfailed}.");
  m.def(
      "fgd_arrivals_from_openb",
      [](std::string_view pods_csv) {
        const auto pods = unwrap(workload::parse_openb_pods(pods_csv));
        return arrivals_to_py(sim::fgd_arrivals_from_openb(pods));
      },
      py::arg("pods_csv"), "Returns the FGD arrivals of an openb pod list (CSV text).");
  m.def(
      "fgd_nodes_from_openb",
      [](std::string_view nodes_csv, std::optional<std::uint64_t> seed) {
        const auto nodes = unwrap(workload::parse_openb_nodes(nodes_csv));
        return nodes_to_py(sim::fgd_nodes_from_openb(nodes, seed));
      },
      py::arg("nodes_csv"), py::arg("seed") = py::none(),
      "Returns the FGD nodes of an openb node list (CSV text), shuffled when `seed` is given.");
  m.def(
      "fgd_shuffle_and_inflate",
      [](const py::iterable& arrivals, std::int64_t total_gpus, std::uint64_t seed,
         std::int64_t ratio_percent) {
        return arrivals_to_py(unwrap(
            sim::shuffle_and_inflate(arrivals_from(arrivals), total_gpus, seed, ratio_percent)));
      },
      py::arg("arrivals"), py::arg("total_gpus"), py::arg("seed"), py::arg("ratio_percent") = 130,
      "Returns the arrivals shuffled and repeated until they ask `ratio_percent` % of the GPUs.");
  m.def(
      "fgd_policy_names",
      [] { return std::vector<std::string>(std::begin(policy_names), std::end(policy_names)); },
      "Returns the FGD policy names.");
}

}  // namespace hetsched::python
