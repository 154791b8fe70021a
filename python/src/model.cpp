// SPDX-License-Identifier: MIT
// Bindings of the model: GPU types, resources, job specs, the lifecycle, Cluster, ClusterState
// and decisions (check / apply).
#include <memory>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/lifecycle.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

constexpr std::string_view state_names[] = {"submitted", "queued",    "scheduled",
                                            "running",   "succeeded", "failed",
                                            "preempted", "suspended", "cancelled"};

node_id node_arg(const cluster& c, std::uint32_t n) {
  const node_id id(n);
  if (!c.contains(id)) raise(errc::not_found, fmt::format("node {}: no such node", n));
  return id;
}

device_id device_arg(const cluster& c, std::uint32_t d) {
  const device_id id(d);
  if (!c.contains(id)) raise(errc::not_found, fmt::format("device {}: no such device", d));
  return id;
}

py::dict status_to_py(const job_status& s) {
  py::dict d;
  d["state"] = std::string(to_string(s.state));
  d["attempts"] = s.attempts;
  return d;
}

py::list node_rows(const cluster& c) {
  py::list rows;
  for (std::uint32_t i = 0; i < c.node_count(); ++i) {
    const node_info& n = c.node(node_id(i));
    py::dict r;
    r["id"] = i;
    r["name"] = n.name;
    r["health"] = std::string(to_string(n.health));
    r["gpus"] = n.device_count;
    r["first_device"] = n.first_device.value();
    r["gpu_type"] = n.device_count > 0 ? std::string(c.device(n.first_device).type.name()) : "";
    r["milli_gpu"] = n.allocatable.milli_gpu;
    r["milli_cpu"] = n.allocatable.milli_cpu;
    r["memory_mib"] = n.allocatable.memory_mib;
    r["gpu_memory_mib"] = n.allocatable.gpu_memory_mib;
    py::dict labels;
    for (const auto& [k, v] : n.labels) labels[py::str(k)] = v;
    r["labels"] = labels;
    py::dict ext;
    for (const auto& [k, v] : n.allocatable.extended) ext[py::str(k)] = v;
    r["extended"] = ext;
    rows.append(r);
  }
  return rows;
}

py::list device_rows(const cluster& c) {
  py::list rows;
  for (std::uint32_t i = 0; i < c.device_count(); ++i) {
    const device_info& d = c.device(device_id(i));
    py::dict r;
    r["id"] = i;
    r["node"] = d.node.value();
    r["local_index"] = d.local_index;
    r["type"] = std::string(d.type.name());
    r["memory_mib"] = d.memory_mib;
    r["health"] = std::string(to_string(d.health));
    rows.append(r);
  }
  return rows;
}

std::shared_ptr<cluster> make_cluster(const py::iterable& nodes) {
  auto c = std::make_shared<cluster>();
  for_each_item(nodes, "nodes", [&](py::handle item, const std::string& what) {
    node_spec spec = node_from(item, what);
    auto r = c->add_node(std::move(spec));
    if (!r) raise(r.error().code, fmt::format("{}: {}", what, r.error().message));
  });
  return c;
}

py::dict job_row(const job_record& rec) {
  py::dict r;
  r["id"] = rec.spec.id.value();
  r["name"] = rec.spec.name;
  r["state"] = std::string(to_string(rec.status.state));
  r["attempts"] = rec.status.attempts;
  r["tenant"] =
      rec.spec.tenant.valid() ? py::object(py::int_(rec.spec.tenant.value())) : py::none();
  r["priority"] = rec.spec.priority;
  r["tasks"] = task_count(rec.spec);
  std::uint32_t placed = 0;
  for (const task_placement& p : rec.placement) placed += p.node.valid() ? 1U : 0U;
  r["placed_tasks"] = placed;
  r["milli_gpu"] = total_request(rec.spec).milli_gpu;
  return r;
}

py::dict device_usage_to_py(const device_usage& u) {
  py::dict d;
  d["milli_gpu"] = u.milli_gpu;
  d["gpu_memory_mib"] = u.gpu_memory_mib;
  py::list holders;
  for (const device_holder& h : u.holders) {
    py::dict x;
    x["job"] = h.job.value();
    x["task"] = h.task.value();
    x["milli_gpu"] = h.milli_gpu;
    x["gpu_memory_mib"] = h.gpu_memory_mib;
    holders.append(x);
  }
  d["holders"] = holders;
  return d;
}

void bind_cluster(py::module_& m) {
  py::class_<cluster, std::shared_ptr<cluster>>(
      m, "Cluster",
      "An immutable cluster description: nodes with their GPUs, CPU, memory, labels and health.\n"
      "Node ids are dense in list order; device (GPU) ids are dense over the cluster in node "
      "order.")
      .def(py::init(&make_cluster), py::arg("nodes"),
           "Builds a cluster from node dicts {name, labels, milli_cpu, memory_mib, extended, "
           "health,\ndevices: [{type, memory_mib, health}]} or, instead of devices, {gpus, "
           "gpu_type, gpu_memory_mib}.\nRaises InvalidArgument/OutOfRange/AlreadyExists naming "
           "the node.")
      .def_property_readonly("node_count", &cluster::node_count, "Number of nodes.")
      .def_property_readonly("device_count", &cluster::device_count, "Number of GPUs.")
      .def("nodes", &node_rows, "Returns one dict per node (id, name, gpus, allocatable, ...).")
      .def("devices", &device_rows,
           "Returns one dict per GPU (id, node, local_index, type, memory_mib, health).")
      .def(
          "find_node",
          [](const cluster& c, std::string_view name) -> py::object {
            const auto id = c.find_node(name);
            return id ? py::object(py::int_(id->value())) : py::none();
          },
          py::arg("name"), "Returns the id of the node named `name`, or None.")
      .def(
          "total_capacity", [](const cluster& c) { return to_py(c.total_capacity()); },
          "Returns the sum of every node's allocatable resources as a resource dict.")
      .def("__eq__", [](const cluster& a, const cluster& b) { return a == b; })
      .def("__repr__", [](const cluster& c) {
        return fmt::format("<hetsched.Cluster {} nodes, {} GPUs>", c.node_count(),
                           c.device_count());
      });
}

void bind_state(py::module_& m) {
  py::class_<cluster_state, std::shared_ptr<cluster_state>>(
      m, "ClusterState",
      "The live state of a cluster: health, per-device allocations and the registered jobs with\n"
      "their lifecycle status and placement. Changed only by submit/record/apply/set_*_health;\n"
      "every mutator validates first and leaves the state unchanged when it raises.")
      .def(py::init([](const std::shared_ptr<cluster>& c) {
             return std::make_shared<cluster_state>(std::shared_ptr<const cluster>(c));
           }),
           py::arg("cluster"), "Makes the empty state of `cluster` (no jobs).")
      .def_property_readonly(
          "cluster",
          [](const cluster_state& s) {
            return std::const_pointer_cast<cluster>(s.shared_cluster());
          },
          "The cluster description (shared, immutable).")
      .def(
          "submit",
          [](cluster_state& s, const py::dict& job, bool enqueue) {
            check(s.submit(job_from(job, "job")));
            if (enqueue) {
              const job_id id(job["id"].cast<std::uint32_t>());
              check(record(s, id, job_event::enqueue));
            }
          },
          py::arg("job"), py::arg("enqueue") = true,
          "Registers job spec `job` (a dict, see docs/python.md) and, with enqueue, moves it to "
          "queued.\nRaises InvalidArgument/OutOfRange for a bad spec, AlreadyExists for a known "
          "id.")
      .def(
          "record",
          [](cluster_state& s, std::uint32_t job, std::string_view event) {
            check(record(s, job_id(job), job_event_from(event, "event")));
          },
          py::arg("job"), py::arg("event"),
          "Records platform event `event` (enqueue, start, succeed, fail, requeue, cancel) for "
          "`job`.\nRaises NotFound for an unknown job, FailedPrecondition for an illegal "
          "transition.")
      .def(
          "check",
          [](const cluster_state& s, const py::dict& d) {
            check(check_decision(s, decision_from(d, "decision")));
          },
          py::arg("decision"),
          "Raises the first problem of `decision` (a decision dict) against this state; returns "
          "None if it can be applied.")
      .def(
          "is_feasible",
          [](const cluster_state& s, const py::dict& d) {
            return check_decision(s, decision_from(d, "decision")).has_value();
          },
          py::arg("decision"), "Returns True if check(decision) would not raise.")
      .def(
          "apply",
          [](cluster_state& s, const py::dict& d) {
            check(apply(s, decision_from(d, "decision")));
          },
          py::arg("decision"),
          "Checks then commits `decision` all or nothing; raises (state unchanged) if it is not "
          "feasible.")
      .def(
          "forget", [](cluster_state& s, std::uint32_t job) { check(s.forget(job_id(job))); },
          py::arg("job"), "Drops terminal job `job`.")
      .def(
          "set_node_health",
          [](cluster_state& s, std::uint32_t n, std::string_view h) {
            check(s.set_node_health(node_id(n), health_from(h, "health")));
          },
          py::arg("node"), py::arg("health"),
          "Sets node `node`'s health: 'healthy', 'cordoned' or 'unhealthy'.")
      .def(
          "set_device_health",
          [](cluster_state& s, std::uint32_t d, std::string_view h) {
            check(s.set_device_health(device_id(d), health_from(h, "health")));
          },
          py::arg("device"), py::arg("health"), "Sets GPU `device`'s health.")
      .def(
          "node_health",
          [](const cluster_state& s, std::uint32_t n) {
            return std::string(to_string(s.node_health(node_arg(s.cluster(), n))));
          },
          py::arg("node"), "Returns node `node`'s current health name.")
      .def(
          "device_health",
          [](const cluster_state& s, std::uint32_t d) {
            return std::string(to_string(s.device_health(device_arg(s.cluster(), d))));
          },
          py::arg("device"), "Returns GPU `device`'s current health name.")
      .def(
          "status",
          [](const cluster_state& s, std::uint32_t job) {
            return status_to_py(unwrap(s.status(job_id(job))));
          },
          py::arg("job"), "Returns {state, attempts} of `job`; NotFound if unknown.")
      .def(
          "placement",
          [](const cluster_state& s, std::uint32_t job) {
            const auto p = unwrap(s.placement(job_id(job)));
            py::list rows;
            append_rows(rows, job_id(job), std::vector<task_placement>(p.begin(), p.end()));
            return rows;
          },
          py::arg("job"),
          "Returns one row per task of `job`: {job, task, node (None if unplaced), devices, "
          "milli_gpu,\ngpu_memory_mib}.")
      .def(
          "job",
          [](const cluster_state& s, std::uint32_t job) {
            const job_record* rec = s.find_job(job_id(job));
            if (rec == nullptr) raise(errc::not_found, fmt::format("job {}: unknown job", job));
            py::dict d = to_py(rec->spec);
            d["state"] = std::string(to_string(rec->status.state));
            d["attempts"] = rec->status.attempts;
            return d;
          },
          py::arg("job"), "Returns the spec dict of `job` plus its state and attempts.")
      .def(
          "jobs",
          [](const cluster_state& s) {
            py::list rows;
            for (const auto& [id, rec] : s.jobs()) rows.append(job_row(rec));
            return rows;
          },
          "Returns one row per registered job, in id order: {id, name, state, attempts, tenant,\n"
          "priority, tasks, placed_tasks, milli_gpu}.")
      .def(
          "nodes",
          [](const cluster_state& s) {
            py::list rows;
            const cluster& c = s.cluster();
            for (std::uint32_t i = 0; i < c.node_count(); ++i) {
              const node_id n(i);
              const resource_vector used = s.node_used(n);
              const resource_vector free = s.node_free(n);
              py::dict r;
              r["id"] = i;
              r["name"] = c.node(n).name;
              r["health"] = std::string(to_string(s.node_health(n)));
              r["gpus"] = c.node(n).device_count;
              r["used_milli_gpu"] = used.milli_gpu;
              r["free_milli_gpu"] = free.milli_gpu;
              r["used_milli_cpu"] = used.milli_cpu;
              r["free_milli_cpu"] = free.milli_cpu;
              r["used_memory_mib"] = used.memory_mib;
              r["free_memory_mib"] = free.memory_mib;
              rows.append(r);
            }
            return rows;
          },
          "Returns one row per node: id, name, health, gpus and used/free milli-GPU, milli-CPU, "
          "memory.")
      .def(
          "node_used",
          [](const cluster_state& s, std::uint32_t n) {
            return to_py(s.node_used(node_arg(s.cluster(), n)));
          },
          py::arg("node"), "Returns the resources allocated on node `node`.")
      .def(
          "node_free",
          [](const cluster_state& s, std::uint32_t n) {
            return to_py(s.node_free(node_arg(s.cluster(), n)));
          },
          py::arg("node"), "Returns node `node`'s allocatable minus used resources.")
      .def(
          "device_used",
          [](const cluster_state& s, std::uint32_t d) {
            return device_usage_to_py(s.device_used(device_arg(s.cluster(), d)));
          },
          py::arg("device"),
          "Returns {milli_gpu, gpu_memory_mib, holders: [{job, task, milli_gpu, gpu_memory_mib}]}.")
      .def(
          "device_free",
          [](const cluster_state& s, std::uint32_t d) {
            const device_capacity c = s.device_free(device_arg(s.cluster(), d));
            py::dict r;
            r["milli_gpu"] = c.milli_gpu;
            r["gpu_memory_mib"] = c.gpu_memory_mib;
            return r;
          },
          py::arg("device"), "Returns {milli_gpu, gpu_memory_mib} free on GPU `device`.")
      .def(
          "total_used", [](const cluster_state& s) { return to_py(s.total_used()); },
          "Returns the resources allocated over the whole cluster.")
      .def(
          "copy", [](const cluster_state& s) { return std::make_shared<cluster_state>(s); },
          "Returns an independent copy (for what-if evaluation); the description is shared.")
      .def("__copy__", [](const cluster_state& s) { return std::make_shared<cluster_state>(s); })
      .def("__eq__", [](const cluster_state& a, const cluster_state& b) { return a == b; })
      .def("__repr__", [](const cluster_state& s) {
        return fmt::format("<hetsched.ClusterState {} nodes, {} jobs, {} milli-GPU used>",
                           s.cluster().node_count(), s.jobs().size(), s.total_used().milli_gpu);
      });
}

}  // namespace

void bind_model(py::module_& m) {
  bind_cluster(m);
  bind_state(m);
  m.def(
      "validate_job", [](const py::dict& job) { check(validate(job_from(job, "job"))); },
      py::arg("job"), "Raises the first problem of job spec dict `job`; returns None if valid.");
  m.def(
      "normalize_job", [](const py::dict& job) { return to_py(job_from(job, "job")); },
      py::arg("job"),
      "Returns job spec dict `job` with every field spelled out (defaults filled).");
  m.def(
      "task_count", [](const py::dict& job) { return task_count(job_from(job, "job")); },
      py::arg("job"), "Returns the number of tasks of `job` over all roles.");
  m.def(
      "total_request",
      [](const py::dict& job) {
        job_spec spec = job_from(job, "job");
        check(validate(spec));
        return to_py(total_request(spec));
      },
      py::arg("job"), "Returns the resources all tasks of `job` ask for together.");
  m.def(
      "task_request",
      [](const py::dict& job, std::uint32_t task) {
        return to_py(unwrap(task_request(job_from(job, "job"), task_id(task))));
      },
      py::arg("job"), py::arg("task"), "Returns the resources task `task` of `job` asks for.");
  m.def(
      "next_status",
      [](std::string_view state, std::string_view event, std::uint32_t attempts,
         std::uint32_t retry_limit) {
        const job_status s{parse_enum<job_state>(state, state_names, "state"), attempts};
        return status_to_py(unwrap(next_status(s, job_event_from(event, "event"), retry_limit)));
      },
      py::arg("state"), py::arg("event"), py::arg("attempts") = 0, py::arg("retry_limit") = 0,
      "Returns the lifecycle status {state, attempts} after `event`; FailedPrecondition if the "
      "event\nis not allowed in `state`.");
  m.def(
      "job_states",
      [] { return std::vector<std::string>(std::begin(state_names), std::end(state_names)); },
      "Returns every job state name in lifecycle order.");
  m.def(
      "is_terminal",
      [](std::string_view state) {
        return is_terminal(parse_enum<job_state>(state, state_names, "state"));
      },
      py::arg("state"), "Returns True for succeeded, failed and cancelled.");
  m.def(
      "known_gpu_specs",
      [] {
        py::list rows;
        for (const gpu_spec& s : known_gpu_specs()) {
          py::dict r;
          r["type"] = std::string(s.type.name());
          r["memory_mib"] = s.memory_mib;
          r["compute_capability"] = s.compute_capability;
          r["nvlink_generation"] = s.nvlink_generation;
          r["max_nvlinks"] = s.max_nvlinks;
          r["pcie_generation"] = s.pcie_generation;
          r["nvlink_link_mb_s"] = s.nvlink_link_mb_s;
          rows.append(r);
        }
        return rows;
      },
      "Returns the built-in GPU catalogue, one row per model, sorted by name.");
  m.def(
      "normalize_gpu_model",
      [](std::string_view model) { return std::string(normalize_gpu_model(model).name()); },
      py::arg("model"),
      "Returns the canonical GPU type of a tool's model string ('NVIDIA A100-SXM4-80GB' -> "
      "'A100-SXM4-80GB').");
}

}  // namespace hetsched::python
