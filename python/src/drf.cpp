// SPDX-License-Identifier: MIT
// Bindings of Dominant Resource Fairness: progressive filling (tasks, divisible), H-DRF,
// dominant shares and the Mesos-style DRF sorter.
#include <hetsched/policies/drf.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

drf_exclusions exclusions_from(const std::vector<std::string>& names) {
  drf_exclusions out;
  for (const std::string& n : names) out.insert(n);
  return out;
}

std::vector<drf_user> users_from(const py::iterable& users) {
  std::vector<drf_user> out;
  for_each_item(users, "users", [&](py::handle item, const std::string& what) {
    drf_user u;
    fields f(item, what);
    u.name = f.required<std::string>("name");
    u.task_demand = drf_vector_from(f.object("demand"), f.path("demand"));
    f.get("weight", u.weight);
    std::map<std::string, double> rw;
    if (f.get("resource_weights", rw))
      for (const auto& [k, v] : rw) u.resource_weights.emplace(k, v);
    std::int64_t max_tasks = 0;
    if (f.get("max_tasks", max_tasks)) u.max_tasks = max_tasks;
    f.finish();
    out.push_back(std::move(u));
  });
  return out;
}

drf_client_weight client_weight(double weight, const std::map<std::string, double>& per_resource,
                                std::string_view client) {
  drf_client_weight w;
  w.scalar = unwrap(make_drf_weight(weight, client));
  for (const auto& [name, value] : per_resource)
    w.per_resource.emplace(name,
                           unwrap(make_drf_weight(value, fmt::format("{}/{}", client, name))));
  return w;
}

void put_share(py::dict& d, const char* prefix, std::int64_t num, std::int64_t den) {
  d[prefix] = den != 0 ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
  d[py::str(std::string(prefix) + "_num")] = num;
  d[py::str(std::string(prefix) + "_den")] = den;
}

py::dict fill_tasks(const py::dict& capacity, const py::iterable& users,
                    const std::vector<std::string>& excluded) {
  const std::vector<drf_user> us = users_from(users);
  const auto a = unwrap(drf_fill_tasks(drf_vector_from(capacity, "capacity"), us,
                                       drf_fill_options{exclusions_from(excluded)}));
  py::list rows;
  for (std::size_t i = 0; i < us.size(); ++i) {
    py::dict r;
    r["name"] = us[i].name;
    r["tasks"] = a.tasks[i];
    put_share(r, "dominant_share", a.dominant[i].share.num, a.dominant[i].share.den);
    r["dominant_resource"] = a.dominant[i].resource;
    r["allocation"] = to_py(a.allocation[i]);
    rows.append(r);
  }
  py::dict out;
  out["users"] = rows;
  out["order"] = a.order;
  return out;
}

py::dict fill_divisible(const py::dict& capacity, const py::iterable& users,
                        const std::vector<std::string>& excluded) {
  const std::vector<drf_user> us = users_from(users);
  const auto a = unwrap(drf_fill_divisible(drf_vector_from(capacity, "capacity"), us,
                                           drf_fill_options{exclusions_from(excluded)}));
  py::list rows;
  for (std::size_t i = 0; i < us.size(); ++i) {
    py::dict r;
    r["name"] = us[i].name;
    put_share(r, "tasks", a.tasks[i].num, a.tasks[i].den);
    put_share(r, "dominant_share", a.dominant_share[i].num, a.dominant_share[i].den);
    rows.append(r);
  }
  py::dict out;
  out["users"] = rows;
  return out;
}

py::dict fill_hdrf(const py::dict& capacity, const py::iterable& queues, const py::iterable& jobs,
                   const std::vector<std::string>& excluded) {
  std::vector<hdrf_queue> qs;
  for_each_item(queues, "queues", [&](py::handle item, const std::string& what) {
    fields f(item, what);
    hdrf_queue q;
    q.path = f.required<std::string>("path");
    f.get("weight", q.weight);
    f.finish();
    qs.push_back(std::move(q));
  });
  std::vector<hdrf_job> js;
  for_each_item(jobs, "jobs", [&](py::handle item, const std::string& what) {
    fields f(item, what);
    hdrf_job j;
    j.name = f.required<std::string>("name");
    j.queue = f.required<std::string>("queue");
    j.task_demand = drf_vector_from(f.object("demand"), f.path("demand"));
    std::int64_t tasks = 0;
    if (f.get("tasks", tasks)) j.tasks = tasks;
    f.finish();
    js.push_back(std::move(j));
  });
  const auto a = unwrap(hdrf_fill_tasks(drf_vector_from(capacity, "capacity"), qs, js,
                                        drf_fill_options{exclusions_from(excluded)}));
  py::list rows;
  for (std::size_t i = 0; i < js.size(); ++i) {
    py::dict r;
    r["name"] = js[i].name;
    r["queue"] = js[i].queue;
    r["tasks"] = a.tasks[i];
    r["allocation"] = to_py(a.allocation[i]);
    rows.append(r);
  }
  py::dict out;
  out["jobs"] = rows;
  return out;
}

drf_client_id client_arg(std::uint32_t id) { return drf_client_id(id); }

void bind_sorter(py::module_& m) {
  py::class_<drf_sorter>(
      m, "DrfSorter",
      "Mesos's DRF sorter: clients are '/'-separated role paths; pick_next() returns the active\n"
      "client with the lowest weighted dominant share (ties: fewer allocations, then smaller "
      "path).\nEvery method that raises leaves the sorter unchanged.")
      .def(py::init([](const std::vector<std::string>& excluded) {
             return drf_sorter(exclusions_from(excluded));
           }),
           py::arg("excluded") = std::vector<std::string>{},
           "Makes an empty sorter ignoring the `excluded` resource names.")
      .def(
          "set_total",
          [](drf_sorter& s, const py::dict& total) {
            check(s.set_total(drf_vector_from(total, "total")));
          },
          py::arg("total"), "Sets the cluster total {resource: amount}.")
      .def(
          "add",
          [](drf_sorter& s, std::string_view path, bool active) {
            return unwrap(s.add(path, active)).value();
          },
          py::arg("path"), py::arg("active") = true, "Adds client `path` and returns its id.")
      .def(
          "remove", [](drf_sorter& s, std::uint32_t c) { check(s.remove(client_arg(c))); },
          py::arg("client"), "Removes a client and its allocation.")
      .def(
          "activate", [](drf_sorter& s, std::uint32_t c) { check(s.activate(client_arg(c))); },
          py::arg("client"), "Makes a client eligible for pick_next()/sort().")
      .def(
          "deactivate", [](drf_sorter& s, std::uint32_t c) { check(s.deactivate(client_arg(c))); },
          py::arg("client"), "Makes a client ineligible for pick_next()/sort().")
      .def(
          "set_weight",
          [](drf_sorter& s, std::string_view path, double weight,
             const std::map<std::string, double>& per_resource) {
            if (per_resource.empty()) {
              check(s.set_weight(path, weight));
            } else {
              check(s.set_weight(path, client_weight(weight, per_resource, path)));
            }
          },
          py::arg("path"), py::arg("weight"),
          py::arg("resource_weights") = std::map<std::string, double>{},
          "Sets the weight of `path` (scalar, optionally overridden per resource).")
      .def(
          "allocated",
          [](drf_sorter& s, std::uint32_t c, const py::dict& r) {
            check(s.allocated(client_arg(c), drf_vector_from(r, "resources")));
          },
          py::arg("client"), py::arg("resources"),
          "Adds `resources` to a client's allocation (counts one allocation).")
      .def(
          "unallocated",
          [](drf_sorter& s, std::uint32_t c, const py::dict& r) {
            check(s.unallocated(client_arg(c), drf_vector_from(r, "resources")));
          },
          py::arg("client"), py::arg("resources"), "Subtracts `resources` from the allocation.")
      .def(
          "update",
          [](drf_sorter& s, std::uint32_t c, const py::dict& from, const py::dict& to) {
            check(
                s.update(client_arg(c), drf_vector_from(from, "from"), drf_vector_from(to, "to")));
          },
          py::arg("client"), py::arg("old"), py::arg("new"),
          "Replaces `old` by `new` within the allocation without counting an allocation.")
      .def(
          "find",
          [](const drf_sorter& s, std::string_view path) { return unwrap(s.find(path)).value(); },
          py::arg("path"), "Returns the id of client `path`; NotFound otherwise.")
      .def(
          "path",
          [](const drf_sorter& s, std::uint32_t c) {
            static_cast<void>(unwrap(s.share(client_arg(c))));
            return s.path(client_arg(c));
          },
          py::arg("client"), "Returns the path of a client.")
      .def(
          "share",
          [](const drf_sorter& s, std::uint32_t c) {
            const drf_share sh = unwrap(s.share(client_arg(c)));
            py::dict d;
            put_share(d, "share", sh.num, sh.den);
            return d;
          },
          py::arg("client"), "Returns {share, share_num, share_den}: the weighted dominant share.")
      .def(
          "allocation_count",
          [](const drf_sorter& s, std::uint32_t c) {
            return unwrap(s.allocation_count(client_arg(c)));
          },
          py::arg("client"), "Returns the number of allocated() calls counted for a client.")
      .def(
          "allocation",
          [](const drf_sorter& s, std::uint32_t c) {
            return to_py(unwrap(s.allocation(client_arg(c))));
          },
          py::arg("client"), "Returns a client's allocation {resource: amount}.")
      .def(
          "pick_next",
          [](const drf_sorter& s) -> py::object {
            const auto c = s.pick_next();
            return c ? py::object(py::int_(c->value())) : py::none();
          },
          "Returns the id of the next client to serve, or None when none is active.")
      .def(
          "sort",
          [](const drf_sorter& s) {
            std::vector<std::uint32_t> out;
            for (const drf_client_id c : s.sort()) out.push_back(c.value());
            return out;
          },
          "Returns the active client ids, first to serve first.")
      .def(
          "sorted_paths",
          [](const drf_sorter& s) {
            std::vector<std::string> out;
            for (const drf_client_id c : s.sort()) out.push_back(s.path(c));
            return out;
          },
          "Returns the active client paths, first to serve first.")
      .def("__len__", &drf_sorter::size);
}

}  // namespace

void bind_drf(py::module_& m) {
  m.def("drf_fill_tasks", &fill_tasks, py::arg("capacity"), py::arg("users"),
        py::arg("excluded") = std::vector<std::string>{},
        "Returns the DRF allocation of indivisible tasks (progressive filling, NSDI'11).\n"
        "`capacity` is {resource: amount}; `users` a list of {name, demand: {resource: "
        "amount},\nweight, resource_weights, max_tasks}. Result: {users: [{name, tasks, "
        "dominant_share,\ndominant_share_num, dominant_share_den, dominant_resource, "
        "allocation}], order: [user index\nper task]}.");
  m.def("drf_fill_divisible", &fill_divisible, py::arg("capacity"), py::arg("users"),
        py::arg("excluded") = std::vector<std::string>{},
        "Returns the divisible DRF allocation: {users: [{name, tasks, tasks_num, tasks_den,\n"
        "dominant_share, dominant_share_num, dominant_share_den}]} (exact rationals).");
  m.def("hdrf_fill_tasks", &fill_hdrf, py::arg("capacity"), py::arg("queues"), py::arg("jobs"),
        py::arg("excluded") = std::vector<std::string>{},
        "Returns the H-DRF allocation (Volcano hdrf): `queues` [{path, weight}], `jobs` [{name,\n"
        "queue, demand, tasks}]. Result: {jobs: [{name, queue, tasks, allocation}]}.");
  m.def(
      "dominant_share",
      [](const py::dict& usage, const py::dict& capacity, double weight,
         const std::map<std::string, double>& resource_weights,
         const std::vector<std::string>& excluded) {
        const auto d = unwrap(dominant_share(
            drf_vector_from(usage, "usage"), drf_vector_from(capacity, "capacity"),
            client_weight(weight, resource_weights, "weight"), exclusions_from(excluded)));
        py::dict out;
        put_share(out, "share", d.share.num, d.share.den);
        out["resource"] = d.resource;
        return out;
      },
      py::arg("usage"), py::arg("capacity"), py::arg("weight") = 1.0,
      py::arg("resource_weights") = std::map<std::string, double>{},
      py::arg("excluded") = std::vector<std::string>{},
      "Returns {share, share_num, share_den, resource}: the weighted dominant share of `usage`.");
  m.def(
      "to_drf_vector",
      [](const py::dict& resources, std::string_view gpu_type_name, bool per_type) {
        return to_py(to_drf_vector(resources_from(resources, "resources"),
                                   gpu_type_from(gpu_type_name, "gpu_type"),
                                   per_type ? gpu_grouping::per_type : gpu_grouping::fungible));
      },
      py::arg("resources"), py::arg("gpu_type") = "", py::arg("per_type") = false,
      "Returns a resource dict as a fairness vector {'gpu' or 'gpu/<type>', 'cpu', 'memory', "
      "...}.");
  bind_sorter(m);
}

}  // namespace hetsched::python
