// SPDX-License-Identifier: MIT
// Errors as Python exceptions and the dict conversions of model values (convert.hpp).
#include "convert.hpp"

#include <array>
#include <map>

namespace hetsched::python {
namespace {

// One exception class per errc, in errc order; owned by the module for its lifetime.
std::array<PyObject*, 6> error_classes{};
PyObject* error_base = nullptr;

constexpr std::string_view health_names[] = {"healthy", "cordoned", "unhealthy"};
constexpr std::string_view event_names[] = {"enqueue", "schedule", "start",   "succeed", "fail",
                                            "preempt", "requeue",  "suspend", "resume",  "cancel"};
constexpr std::string_view defer_names[] = {"insufficient_capacity", "quota_exceeded",
                                            "topology_unsatisfiable", "fragmented"};

PyObject* make_class(py::module_& m, const char* name, const char* doc, py::tuple bases) {
  const std::string full = std::string("hetsched.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(cls));
  return cls;
}

std::string type_name(const py::object& v) {
  return py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>();
}

}  // namespace

void register_errors(py::module_& m) {
  const py::object exception = py::reinterpret_borrow<py::object>(PyExc_Exception);
  error_base = make_class(m, "Error",
                          "Base class of every error hetsched reports; `code` holds the "
                          "library's error code name (e.g. 'invalid_argument').",
                          py::make_tuple(exception));
  const py::object base = py::reinterpret_borrow<py::object>(error_base);
  const auto with = [&](PyObject* builtin) {
    return py::make_tuple(base, py::reinterpret_borrow<py::object>(builtin));
  };
  error_classes[0] =
      make_class(m, "InvalidArgument", "Malformed or inconsistent input (errc::invalid_argument).",
                 with(PyExc_ValueError));
  error_classes[1] = make_class(m, "NotFound", "An id or name names nothing (errc::not_found).",
                                with(PyExc_KeyError));
  error_classes[2] =
      make_class(m, "AlreadyExists", "An id or name is defined twice (errc::already_exists).",
                 with(PyExc_ValueError));
  error_classes[3] = make_class(m, "FailedPrecondition",
                                "Well-formed input the current state forbids "
                                "(errc::failed_precondition).",
                                with(PyExc_RuntimeError));
  error_classes[4] =
      make_class(m, "OutOfRange", "A value outside a documented limit (errc::out_of_range).",
                 with(PyExc_ValueError));
  error_classes[5] =
      make_class(m, "InternalError", "An invariant of hetsched broke; a bug (errc::internal).",
                 with(PyExc_RuntimeError));
}

void raise(const error& e) { raise(e.code, e.message); }

void raise(errc code, std::string message) {
  const auto index = static_cast<std::size_t>(code);
  PyObject* cls = index < error_classes.size() ? error_classes[index] : error_base;
  py::object type = py::reinterpret_borrow<py::object>(cls);
  py::object inst = type(message);
  inst.attr("code") = std::string(to_string(code));
  PyErr_SetObject(cls, inst.ptr());
  throw py::error_already_set();
}

fields::fields(py::handle obj, std::string what) : what_(std::move(what)) {
  if (!py::isinstance<py::dict>(obj))
    raise(errc::invalid_argument, fmt::format("{}: expected a dict", what_));
  dict_ = py::reinterpret_borrow<py::dict>(obj);
}

py::object fields::object(const char* key) {
  known_.emplace_back(key);
  if (!dict_.contains(key)) return py::none();
  return dict_[key];
}

std::string fields::path(std::string_view key) const { return fmt::format("{}.{}", what_, key); }

void fields::finish() const {
  for (const auto& item : dict_) {
    const py::handle k = item.first;
    if (!py::isinstance<py::str>(k))
      raise(errc::invalid_argument, fmt::format("{}: keys must be strings", what_));
    const auto key = k.cast<std::string>();
    bool found = false;
    for (const std::string& known : known_) found = found || known == key;
    if (!found) {
      std::string names;
      for (const std::string& known : known_) {
        if (!names.empty()) names += ", ";
        names += known;
      }
      raise(errc::invalid_argument,
            fmt::format("{}: unknown key '{}' (known: {})", what_, key, names));
    }
  }
}

void fields::bad_type(const char* key, const py::object& v) const {
  raise(errc::invalid_argument, fmt::format("{}.{}: value of type {} has the wrong type or range",
                                            what_, key, type_name(v)));
}

void fields::missing(const char* key) const {
  raise(errc::invalid_argument, fmt::format("{}: missing key '{}'", what_, key));
}

gpu_type gpu_type_from(std::string_view name, std::string_view what) {
  if (name.empty() || name == "any") return {};
  auto t = gpu_type::parse(name);
  if (!t) raise(t.error().code, fmt::format("{}: {}", what, t.error().message));
  return *t;
}

health health_from(std::string_view name, std::string_view what) {
  return parse_enum<health>(name, health_names, what);
}

job_event job_event_from(std::string_view name, std::string_view what) {
  return parse_enum<job_event>(name, event_names, what);
}

defer_reason defer_reason_from(std::string_view name, std::string_view what) {
  return parse_enum<defer_reason>(name, defer_names, what);
}

py::dict to_py(const resource_vector& v) {
  py::dict d;
  d["milli_gpu"] = v.milli_gpu;
  d["milli_cpu"] = v.milli_cpu;
  d["memory_mib"] = v.memory_mib;
  d["gpu_memory_mib"] = v.gpu_memory_mib;
  py::dict ext;
  for (const auto& [name, amount] : v.extended) ext[py::str(name)] = amount;
  d["extended"] = ext;
  return d;
}

extended_resources extended_from(py::handle obj, const std::string& what) {
  extended_resources out;
  if (obj.is_none()) return out;
  std::map<std::string, std::int64_t> m;
  try {
    m = obj.cast<std::map<std::string, std::int64_t>>();
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument, fmt::format("{}: expected a dict of name -> int", what));
  }
  for (const auto& [name, amount] : m) out.emplace(name, amount);
  return out;
}

resource_vector resources_from(py::handle obj, const std::string& what) {
  resource_vector v;
  fields f(obj, what);
  f.get("milli_gpu", v.milli_gpu);
  f.get("milli_cpu", v.milli_cpu);
  f.get("memory_mib", v.memory_mib);
  f.get("gpu_memory_mib", v.gpu_memory_mib);
  v.extended = extended_from(f.object("extended"), f.path("extended"));
  f.finish();
  return v;
}

py::dict to_py(const drf_vector& v) {
  py::dict d;
  for (const auto& [name, amount] : v) d[py::str(name)] = amount;
  return d;
}

drf_vector drf_vector_from(py::handle obj, const std::string& what) {
  drf_vector out;
  if (obj.is_none()) return out;
  std::map<std::string, std::int64_t> m;
  try {
    m = obj.cast<std::map<std::string, std::int64_t>>();
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument, fmt::format("{}: expected a dict of resource -> int", what));
  }
  for (const auto& [name, amount] : m) out.emplace(name, amount);
  return out;
}

py::dict to_py(const job_spec& spec) {
  py::dict d;
  d["id"] = spec.id.value();
  d["name"] = spec.name;
  d["tenant"] = spec.tenant.valid() ? py::object(py::int_(spec.tenant.value())) : py::none();
  d["queue"] = spec.queue.valid() ? py::object(py::int_(spec.queue.value())) : py::none();
  d["priority"] = spec.priority;
  d["image"] = spec.image;
  d["command"] = spec.command;
  d["gang"] = spec.gang;
  d["preemptible"] = spec.preemptible;
  d["retry_limit"] = spec.retry_limit;
  d["duration_estimate_s"] =
      spec.duration_estimate_s ? py::object(py::int_(*spec.duration_estimate_s)) : py::none();
  py::list roles;
  for (const task_role& r : spec.roles) {
    py::dict role;
    role["name"] = r.name;
    role["tasks"] = r.task_count;
    role["milli_cpu"] = r.milli_cpu;
    role["memory_mib"] = r.memory_mib;
    role["gpus"] = r.gpu.count;
    role["milli_per_gpu"] = r.gpu.milli_per_gpu;
    role["gpu_type"] = std::string(r.gpu.type.name());
    role["gpu_memory_mib"] = r.gpu.memory_mib;
    py::dict ext;
    for (const auto& [name, amount] : r.extended) ext[py::str(name)] = amount;
    role["extended"] = ext;
    roles.append(role);
  }
  d["roles"] = roles;
  return d;
}

job_spec job_from(py::handle obj, const std::string& what) {
  job_spec spec;
  fields f(obj, what);
  spec.id = job_id(f.required<std::uint32_t>("id"));
  f.get("name", spec.name);
  std::uint32_t v = 0;
  if (f.get("tenant", v)) spec.tenant = tenant_id(v);
  if (f.get("queue", v)) spec.queue = queue_id(v);
  f.get("priority", spec.priority);
  f.get("image", spec.image);
  f.get("command", spec.command);
  f.get("gang", spec.gang);
  f.get("preemptible", spec.preemptible);
  f.get("retry_limit", spec.retry_limit);
  std::int64_t estimate = 0;
  if (f.get("duration_estimate_s", estimate)) spec.duration_estimate_s = estimate;
  const std::string roles_path = f.path("roles");
  for_each_item(f.object("roles"), roles_path, [&](py::handle item, const std::string& rw) {
    task_role r;
    fields rf(item, rw);
    r.name = rf.required<std::string>("name");
    rf.get("tasks", r.task_count);
    rf.get("milli_cpu", r.milli_cpu);
    rf.get("memory_mib", r.memory_mib);
    rf.get("gpus", r.gpu.count);
    rf.get("milli_per_gpu", r.gpu.milli_per_gpu);
    std::string type;
    if (rf.get("gpu_type", type)) r.gpu.type = gpu_type_from(type, rf.path("gpu_type"));
    rf.get("gpu_memory_mib", r.gpu.memory_mib);
    r.extended = extended_from(rf.object("extended"), rf.path("extended"));
    rf.finish();
    spec.roles.push_back(std::move(r));
  });
  f.finish();
  return spec;
}

node_spec node_from(py::handle obj, const std::string& what) {
  node_spec spec;
  fields f(obj, what);
  spec.name = f.required<std::string>("name");
  std::map<std::string, std::string> labels;
  if (f.get("labels", labels))
    for (const auto& [k, val] : labels) spec.labels.emplace(k, val);
  f.get("milli_cpu", spec.milli_cpu);
  f.get("memory_mib", spec.memory_mib);
  spec.extended = extended_from(f.object("extended"), f.path("extended"));
  std::string h;
  if (f.get("health", h)) spec.health = health_from(h, f.path("health"));
  const std::string devices_path = f.path("devices");
  for_each_item(f.object("devices"), devices_path, [&](py::handle item, const std::string& dw) {
    device_spec d;
    fields df(item, dw);
    std::string type;
    if (df.get("type", type)) d.type = gpu_type_from(type, df.path("type"));
    df.get("memory_mib", d.memory_mib);
    std::string dh;
    if (df.get("health", dh)) d.health = health_from(dh, df.path("health"));
    df.finish();
    spec.devices.push_back(d);
  });
  std::uint32_t gpus = 0;
  std::string type;
  std::int64_t memory = 0;
  const bool has_gpus = f.get("gpus", gpus);
  f.get("gpu_type", type);
  f.get("gpu_memory_mib", memory);
  if (has_gpus && !spec.devices.empty())
    raise(errc::invalid_argument,
          fmt::format("{}: give either 'devices' or 'gpus', not both", what));
  if (has_gpus) {
    const gpu_type t = gpu_type_from(type, f.path("gpu_type"));
    if (gpus > max_gpus_per_task)
      raise(errc::out_of_range,
            fmt::format("{}.gpus: {} is above {}", what, gpus, max_gpus_per_task));
    spec.devices.assign(gpus, device_spec{t, memory, health::healthy});
  }
  f.finish();
  return spec;
}

void append_rows(py::list& rows, job_id job, const std::vector<task_placement>& tasks) {
  for (const task_placement& p : tasks) {
    py::dict row;
    row["job"] = job.value();
    row["task"] = p.task.value();
    row["node"] = p.node.valid() ? py::object(py::int_(p.node.value())) : py::none();
    py::list devices;
    py::list milli;
    py::list memory;
    for (const device_share& s : p.devices) {
      devices.append(s.device.value());
      milli.append(s.milli_gpu);
      memory.append(s.gpu_memory_mib);
    }
    row["devices"] = devices;
    row["milli_gpu"] = milli;
    row["gpu_memory_mib"] = memory;
    rows.append(row);
  }
}

namespace {

// A per-device amount: an int applies to every device, a list gives one per device.
std::vector<std::int64_t> per_device(fields& f, const char* key, std::size_t n) {
  const py::object v = f.object(key);
  if (v.is_none()) return std::vector<std::int64_t>(n, 0);
  if (py::isinstance<py::int_>(v)) return std::vector<std::int64_t>(n, v.cast<std::int64_t>());
  std::vector<std::int64_t> out;
  try {
    out = v.cast<std::vector<std::int64_t>>();
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument,
          fmt::format("{}: expected an int or a list of ints", f.path(key)));
  }
  if (out.size() != n)
    raise(errc::invalid_argument,
          fmt::format("{}: {} values for {} devices", f.path(key), out.size(), n));
  return out;
}

struct row {
  job_id job;
  task_placement placement;
};

row row_from(py::handle item, const std::string& what) {
  row r;
  fields f(item, what);
  r.job = job_id(f.required<std::uint32_t>("job"));
  r.placement.task = task_id(f.required<std::uint32_t>("task"));
  std::uint32_t node = 0;
  if (f.get("node", node)) r.placement.node = node_id(node);
  std::vector<std::uint32_t> devices;
  f.get("devices", devices);
  const auto milli = per_device(f, "milli_gpu", devices.size());
  const auto memory = per_device(f, "gpu_memory_mib", devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i)
    r.placement.devices.push_back({device_id(devices[i]), milli[i], memory[i]});
  f.finish();
  return r;
}

// Groups per-task rows by job, jobs in order of first appearance.
template <typename Entry>
std::vector<Entry> grouped(py::handle rows, const std::string& what) {
  std::vector<Entry> out;
  std::map<job_id, std::size_t> index;
  for_each_item(rows, what, [&](py::handle item, const std::string& w) {
    row r = row_from(item, w);
    auto [it, inserted] = index.emplace(r.job, out.size());
    if (inserted) out.push_back(Entry{r.job, {}});
    out[it->second].tasks.push_back(std::move(r.placement));
  });
  return out;
}

std::vector<job_id> job_list(py::handle rows, const std::string& what) {
  std::vector<job_id> out;
  for_each_item(rows, what, [&](py::handle item, const std::string& w) {
    fields f(item, w);
    out.emplace_back(f.required<std::uint32_t>("job"));
    f.finish();
  });
  return out;
}

}  // namespace

std::vector<task_placement> placements_from(py::handle rows, const std::string& what) {
  std::vector<task_placement> out;
  for_each_item(rows, what, [&](py::handle item, const std::string& w) {
    out.push_back(row_from(item, w).placement);
  });
  return out;
}

py::dict to_py(const decision& d) {
  py::dict out;
  py::list binds;
  for (const binding& b : d.binds) append_rows(binds, b.job, b.tasks);
  py::list migrations;
  for (const migration& m : d.migrations) append_rows(migrations, m.job, m.tasks);
  py::list preemptions;
  for (const preemption& p : d.preemptions) {
    py::dict r;
    r["job"] = p.job.value();
    r["reason"] = p.reason;
    preemptions.append(r);
  }
  const auto jobs = [](const auto& entries) {
    py::list l;
    for (const auto& e : entries) {
      py::dict r;
      r["job"] = e.job.value();
      l.append(r);
    }
    return l;
  };
  py::list deferrals;
  for (const deferral& x : d.deferrals) {
    py::dict r;
    r["job"] = x.job.value();
    r["reason"] = std::string(to_string(x.reason));
    r["message"] = x.message;
    deferrals.append(r);
  }
  out["binds"] = binds;
  out["preemptions"] = preemptions;
  out["migrations"] = migrations;
  out["suspensions"] = jobs(d.suspensions);
  out["resumes"] = jobs(d.resumes);
  out["deferrals"] = deferrals;
  py::list releases;
  for (const partial_release& x : d.releases) {
    for (const task_id t : x.tasks) {
      py::dict r;
      r["job"] = x.job.value();
      r["task"] = t.value();
      releases.append(r);
    }
  }
  out["releases"] = releases;
  return out;
}

decision decision_from(py::handle obj, const std::string& what) {
  decision d;
  if (obj.is_none()) return d;
  fields f(obj, what);
  d.binds = grouped<binding>(f.object("binds"), f.path("binds"));
  d.migrations = grouped<migration>(f.object("migrations"), f.path("migrations"));
  for_each_item(f.object("preemptions"), f.path("preemptions"),
                [&](py::handle item, const std::string& w) {
                  fields pf(item, w);
                  preemption p;
                  p.job = job_id(pf.required<std::uint32_t>("job"));
                  pf.get("reason", p.reason);
                  pf.finish();
                  d.preemptions.push_back(std::move(p));
                });
  for (const job_id j : job_list(f.object("suspensions"), f.path("suspensions")))
    d.suspensions.push_back({j});
  for (const job_id j : job_list(f.object("resumes"), f.path("resumes"))) d.resumes.push_back({j});
  for_each_item(f.object("deferrals"), f.path("deferrals"),
                [&](py::handle item, const std::string& w) {
                  fields df(item, w);
                  deferral x;
                  x.job = job_id(df.required<std::uint32_t>("job"));
                  std::string reason;
                  if (df.get("reason", reason))
                    x.reason = defer_reason_from(reason, df.path("reason"));
                  df.get("message", x.message);
                  df.finish();
                  d.deferrals.push_back(std::move(x));
                });
  // One row per released task; rows of one job form one entry, jobs in order of first appearance.
  std::map<job_id, std::size_t> release_index;
  for_each_item(f.object("releases"), f.path("releases"),
                [&](py::handle item, const std::string& w) {
                  fields rf(item, w);
                  const job_id job(rf.required<std::uint32_t>("job"));
                  const task_id task(rf.required<std::uint32_t>("task"));
                  rf.finish();
                  auto [it, inserted] = release_index.emplace(job, d.releases.size());
                  if (inserted) d.releases.push_back(partial_release{job, {}});
                  d.releases[it->second].tasks.push_back(task);
                });
  f.finish();
  return d;
}

py::dict to_py(const workload::trace_job& j) {
  py::dict d;
  d["name"] = j.name;
  d["tenant"] = j.tenant;
  d["submit_ms"] = j.submit_ms;
  d["duration_ms"] = j.duration_ms;
  d["tasks"] = j.tasks;
  d["gpus_per_task"] = j.gpus_per_task;
  d["gpu_milli_per_task"] = j.gpu_milli_per_task;
  d["cpu_milli_per_task"] = j.cpu_milli_per_task;
  d["memory_mib_per_task"] = j.memory_mib_per_task;
  d["gpu_type"] = j.gpu_type;
  d["priority"] = j.priority;
  d["preemptible"] = j.preemptible;
  d["model"] = j.model;
  d["work_units"] = j.work_units ? py::object(py::int_(*j.work_units)) : py::none();
  return d;
}

py::list to_py(const workload::trace& t) {
  py::list l;
  for (const workload::trace_job& j : t) l.append(to_py(j));
  return l;
}

workload::trace trace_from(py::handle obj, const std::string& what) {
  workload::trace out;
  for_each_item(obj, what, [&](py::handle item, const std::string& w) {
    workload::trace_job j;
    fields f(item, w);
    f.get("name", j.name);
    f.get("tenant", j.tenant);
    f.get("submit_ms", j.submit_ms);
    f.get("duration_ms", j.duration_ms);
    f.get("tasks", j.tasks);
    f.get("gpus_per_task", j.gpus_per_task);
    if (!f.get("gpu_milli_per_task", j.gpu_milli_per_task))
      j.gpu_milli_per_task = std::int64_t{1000} * j.gpus_per_task;
    f.get("cpu_milli_per_task", j.cpu_milli_per_task);
    f.get("memory_mib_per_task", j.memory_mib_per_task);
    f.get("gpu_type", j.gpu_type);
    f.get("priority", j.priority);
    f.get("preemptible", j.preemptible);
    f.get("model", j.model);
    std::int64_t units = 0;
    if (f.get("work_units", units)) j.work_units = units;
    f.finish();
    out.push_back(std::move(j));
  });
  return out;
}

std::vector<std::uint32_t> u32_list(py::handle obj, const std::string& what) {
  if (obj.is_none()) return {};
  try {
    return obj.cast<std::vector<std::uint32_t>>();
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument, fmt::format("{}: expected a list of non-negative ints", what));
  }
}

}  // namespace hetsched::python
