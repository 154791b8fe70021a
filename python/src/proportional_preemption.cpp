// SPDX-License-Identifier: MIT
// Bindings of YARN's proportional capacity preemption (PCPP) planner: a ProportionalPreemption
// object holding the parameters, whose plan() reads a snapshot dict (queues by name, jobs by id)
// and returns the per-queue plan and the victims as row lists.
#include <map>
#include <string>
#include <vector>

#include <hetsched/policies/proportional_preemption.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

constexpr std::string_view preemption_names[] = {"inherit", "disabled", "enabled"};
constexpr std::string_view rounding_names[] = {"up", "nearest"};
constexpr std::string_view reason_names[] = {"over_ideal", "over_ideal_am", "gang_member"};

/// A ratio from an int, a fractions.Fraction, a (num, den) pair, a str ("1/10", "0.1") or a float
/// (read as its shortest decimal repr, so 0.1 is exactly 1/10).
pcpp_ratio ratio_from(const py::object& obj, const std::string& what) {
  pcpp_ratio r;
  try {
    if (py::isinstance<py::tuple>(obj) || py::isinstance<py::list>(obj)) {
      const auto pair = obj.cast<std::vector<std::int64_t>>();
      if (pair.size() != 2)
        raise(errc::invalid_argument, fmt::format("{}: a ratio pair needs (num, den)", what));
      r = {pair[0], pair[1]};
    } else {
      py::object exact = obj;
      if (py::isinstance<py::float_>(obj) || py::isinstance<py::str>(obj)) {
        const py::object text = py::isinstance<py::float_>(obj) ? py::repr(obj) : obj;
        exact = py::module_::import("fractions").attr("Fraction")(text);
      }
      if (py::isinstance<py::bool_>(exact) || !py::hasattr(exact, "numerator") ||
          !py::hasattr(exact, "denominator"))
        raise(errc::invalid_argument,
              fmt::format("{}: expected an int, Fraction, float, str or (num, den)", what));
      r = {exact.attr("numerator").cast<std::int64_t>(),
           exact.attr("denominator").cast<std::int64_t>()};
    }
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument, fmt::format("{}: ratio terms must be 64-bit integers", what));
  } catch (const py::error_already_set& e) {
    raise(errc::invalid_argument, fmt::format("{}: not a ratio ({})", what, e.what()));
  }
  if (r.den <= 0 || r.num < 0)
    raise(errc::invalid_argument,
          fmt::format("{}: ratio {}/{} must have num >= 0 and den > 0", what, r.num, r.den));
  return r;
}

/// An amount: an int (one dimension) or a list of `dims` ints.
pcpp_vector vector_from(const py::object& obj, std::size_t dims, const std::string& what) {
  pcpp_vector v{};
  if (obj.is_none()) return v;
  try {
    if (py::isinstance<py::int_>(obj) && !py::isinstance<py::bool_>(obj)) {
      if (dims != 1)
        raise(errc::invalid_argument,
              fmt::format("{}: expected a list of {} amounts, got one int", what, dims));
      v[0] = obj.cast<std::int64_t>();
      return v;
    }
    const auto list = obj.cast<std::vector<std::int64_t>>();
    if (list.size() != dims)
      raise(errc::invalid_argument,
            fmt::format("{}: expected {} amounts, got {}", what, dims, list.size()));
    for (std::size_t d = 0; d < dims; ++d) v[d] = list[d];
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument, fmt::format("{}: expected an int or a list of ints", what));
  }
  return v;
}

/// The snapshot with, for the results, the queue names and the job and container ids.
struct snapshot_input {
  pcpp_snapshot s;
  bool scalar = true;  ///< amounts given (and returned) as ints
};

snapshot_input snapshot_from(const py::dict& obj) {
  snapshot_input in;
  fields f(obj, "snapshot");
  const py::object cluster = f.object("cluster");
  if (cluster.is_none()) raise(errc::invalid_argument, "snapshot: missing key 'cluster'");
  in.scalar = py::isinstance<py::int_>(cluster);
  if (in.scalar) {
    in.s.dimensions = 1;
  } else {
    try {
      in.s.dimensions = cluster.cast<std::vector<std::int64_t>>().size();
    } catch (const py::cast_error&) {
      raise(errc::invalid_argument, "snapshot.cluster: expected an int or a list of ints");
    }
    if (in.s.dimensions == 0 || in.s.dimensions > pcpp_max_dimensions)
      raise(errc::invalid_argument, fmt::format("snapshot.cluster: {} dimensions (1..{})",
                                                in.s.dimensions, pcpp_max_dimensions));
  }
  const std::size_t dims = in.s.dimensions;
  in.s.cluster = vector_from(cluster, dims, "snapshot.cluster");

  std::map<std::string, std::size_t, std::less<>> queue_index;
  std::vector<std::string> parents;
  for_each_item(f.object("queues"), f.path("queues"), [&](py::handle item, const std::string& w) {
    fields qf(item, w);
    pcpp_queue q;
    q.name = qf.required<std::string>("name");
    std::string parent;
    qf.get("parent", parent);
    q.guaranteed = vector_from(qf.object("guaranteed"), dims, qf.path("guaranteed"));
    const py::object maximum = qf.object("maximum");
    q.maximum = maximum.is_none() ? in.s.cluster : vector_from(maximum, dims, qf.path("maximum"));
    q.pending = vector_from(qf.object("pending"), dims, qf.path("pending"));
    std::string preemption = "inherit";
    qf.get("preemption", preemption);
    q.preemption = parse_enum<pcpp_preemption>(preemption, preemption_names, qf.path("preemption"));
    qf.finish();
    if (!queue_index.emplace(q.name, in.s.queues.size()).second)
      raise(errc::invalid_argument, fmt::format("{}: queue name '{}' repeats", w, q.name));
    parents.push_back(parent);
    in.s.queues.push_back(std::move(q));
  });
  for (std::size_t i = 0; i < parents.size(); ++i) {
    if (parents[i].empty()) continue;
    auto it = queue_index.find(parents[i]);
    if (it == queue_index.end())
      raise(errc::not_found,
            fmt::format("snapshot.queues[{}].parent: unknown queue '{}'", i, parents[i]));
    in.s.queues[i].parent = it->second;
  }

  std::map<std::uint64_t, std::size_t> job_index;
  for_each_item(f.object("jobs"), f.path("jobs"), [&](py::handle item, const std::string& w) {
    fields jf(item, w);
    pcpp_job j;
    j.id = jf.required<std::uint64_t>("id");
    const auto queue = jf.required<std::string>("queue");
    auto it = queue_index.find(queue);
    if (it == queue_index.end())
      raise(errc::not_found, fmt::format("{}.queue: unknown queue '{}'", w, queue));
    j.queue = it->second;
    jf.get("priority", j.priority);
    jf.get("submit_time", j.submit_time);
    jf.get("gang", j.gang);
    jf.finish();
    if (!job_index.emplace(j.id, in.s.jobs.size()).second)
      raise(errc::invalid_argument, fmt::format("{}: job id {} repeats", w, j.id));
    in.s.jobs.push_back(j);
  });

  for_each_item(f.object("containers"), f.path("containers"),
                [&](py::handle item, const std::string& w) {
                  fields cf(item, w);
                  pcpp_container c;
                  c.id = cf.required<std::uint64_t>("id");
                  const auto job = cf.required<std::uint64_t>("job");
                  auto it = job_index.find(job);
                  if (it == job_index.end())
                    raise(errc::not_found, fmt::format("{}.job: unknown job {}", w, job));
                  c.job = it->second;
                  cf.get("priority", c.priority);
                  cf.get("start_time", c.start_time);
                  c.size = vector_from(cf.object("size"), dims, cf.path("size"));
                  cf.get("am", c.am);
                  cf.get("in_flight", c.in_flight);
                  cf.finish();
                  in.s.containers.push_back(c);
                });
  f.finish();
  return in;
}

py::object amount_to_py(const pcpp_vector& v, const snapshot_input& in) {
  if (in.scalar) return py::int_(v[0]);
  return py::cast(std::vector<std::int64_t>(
      v.begin(), v.begin() + static_cast<std::ptrdiff_t>(in.s.dimensions)));
}

py::dict plan_to_py(const pcpp_plan& plan, const snapshot_input& in) {
  py::list queues;
  for (std::size_t i = 0; i < plan.queues.size(); ++i) {
    const pcpp_queue_plan& q = plan.queues[i];
    py::dict r;
    r["queue"] = in.s.queues[i].name;
    r["leaf"] = q.leaf;
    r["preemption_disabled"] = q.preemption_disabled;
    r["used"] = amount_to_py(q.used, in);
    r["pending"] = amount_to_py(q.pending, in);
    r["in_flight"] = amount_to_py(q.in_flight, in);
    r["ideal"] = amount_to_py(q.ideal, in);
    r["to_be_preempted"] = amount_to_py(q.to_be_preempted, in);
    r["to_obtain"] = amount_to_py(q.to_obtain, in);
    r["selected"] = amount_to_py(q.selected, in);
    queues.append(r);
  }
  py::list victims;
  for (const pcpp_victim& v : plan.victims) {
    py::dict r;
    r["container"] = in.s.containers[v.container].id;
    r["job"] = in.s.jobs[v.job].id;
    r["queue"] = in.s.queues[v.queue].name;
    r["reason"] = std::string(reason_names[static_cast<std::size_t>(v.reason)]);
    r["container_index"] = v.container;
    victims.append(r);
  }
  py::dict d;
  d["queues"] = queues;
  d["victims"] = victims;
  d["root_ideal"] = amount_to_py(plan.root_ideal, in);
  d["preemption_allowed"] = amount_to_py(plan.preemption_allowed, in);
  return d;
}

void put_ratio(py::dict& d, const char* name, const pcpp_ratio& r) {
  d[name] = static_cast<double>(r.num) / static_cast<double>(r.den);
  d[py::str(fmt::format("{}_num", name))] = r.num;
  d[py::str(fmt::format("{}_den", name))] = r.den;
}

py::dict params_to_py(const pcpp_params& p) {
  py::dict d;
  put_ratio(d, "max_ignored_over_capacity", p.max_ignored_over_capacity);
  put_ratio(d, "natural_termination_factor", p.natural_termination_factor);
  put_ratio(d, "total_preemption_per_round", p.total_preemption_per_round);
  d["min_runtime"] = p.min_runtime;
  d["now"] = p.now;
  d["rounding"] = std::string(rounding_names[static_cast<std::size_t>(p.rounding)]);
  return d;
}

py::dict plan_with(const pcpp_params& params, const py::dict& snapshot, const py::object& now) {
  const snapshot_input in = snapshot_from(snapshot);
  pcpp_params p = params;
  if (!now.is_none()) p.now = now.cast<std::int64_t>();
  return plan_to_py(unwrap(plan_proportional_preemption(in.s, p)), in);
}

constexpr const char* snapshot_doc =
    "`snapshot` is {cluster: int | [int, ...] (one amount per dimension, 1..8),\n"
    "queues: [{name, parent (a queue name; None = top level), guaranteed, maximum (default: the\n"
    "cluster), pending (leaves only), preemption: 'inherit'|'disabled'|'enabled'}] (parents "
    "before\nchildren), jobs: [{id, queue (a leaf's name), priority, submit_time, gang}],\n"
    "containers: [{id, job (a job id), priority, start_time, size, am, in_flight}]}. Amounts "
    "are ints\nwhen `cluster` is an int, else lists of its length; results use the same shape.";

}  // namespace

void bind_proportional_preemption(py::module_& m) {
  py::class_<pcpp_params>(
      m, "ProportionalPreemption",
      "YARN's ProportionalCapacityPreemptionPolicy as a pure, exact planner: water-filling ideal\n"
      "assignment per queue level, dead zone, per-round cap, natural termination, then victims\n"
      "FIFO-in-reverse (jobs by lowest priority, latest submit, largest id; containers newest "
      "first;\napplication masters last; gangs whole). Ratios are exact: an int, a "
      "fractions.Fraction, a\n(num, den) pair, a str such as '1/10', or a float read as its "
      "decimal repr (0.1 is 1/10).\nDefaults are YARN's: max_ignored_over_capacity 0.1, "
      "natural_termination_factor 0.2,\ntotal_preemption_per_round 0.1, rounding 'up' "
      "(DominantResourceCalculator; 'nearest' is the\nDefaultResourceCalculator). "
      "docs/proportional_preemption.md.")
      .def(py::init([](const py::object& dead_zone, const py::object& natural,
                       const py::object& per_round, std::int64_t min_runtime, std::int64_t now,
                       std::string_view rounding) {
             pcpp_params p;
             if (!dead_zone.is_none())
               p.max_ignored_over_capacity = ratio_from(dead_zone, "max_ignored_over_capacity");
             if (!natural.is_none())
               p.natural_termination_factor = ratio_from(natural, "natural_termination_factor");
             if (!per_round.is_none())
               p.total_preemption_per_round = ratio_from(per_round, "total_preemption_per_round");
             if (min_runtime < 0)
               raise(errc::invalid_argument,
                     fmt::format("min_runtime: {} is negative", min_runtime));
             p.min_runtime = min_runtime;
             p.now = now;
             p.rounding = parse_enum<pcpp_rounding>(rounding, rounding_names, "rounding");
             return p;
           }),
           py::arg("max_ignored_over_capacity") = py::none(),
           py::arg("natural_termination_factor") = py::none(),
           py::arg("total_preemption_per_round") = py::none(), py::arg("min_runtime") = 0,
           py::arg("now") = 0, py::arg("rounding") = "up",
           "Holds the parameters (None = YARN's default). min_runtime: a container (or gang) "
           "younger than\nthis (now - start_time < min_runtime) is never a victim; 0 disables "
           "it.")
      .def_property_readonly("params", &params_to_py,
                             "The parameters: each ratio as a float plus exact *_num/*_den, "
                             "min_runtime, now, rounding.")
      .def(
          "plan",
          [](const pcpp_params& p, const py::dict& snapshot, const py::object& now) {
            return plan_with(p, snapshot, now);
          },
          py::arg("snapshot"), py::arg("now") = py::none(),
          (std::string("Returns one planning round over `snapshot` (now: overrides the "
                       "object's `now`), changing\nnothing: {queues: [{queue, leaf, "
                       "preemption_disabled, used, pending, in_flight, ideal,\nto_be_preempted, "
                       "to_obtain, selected}] (snapshot order), victims: [{container, job, "
                       "queue,\nreason: 'over_ideal'|'over_ideal_am'|'gang_member', "
                       "container_index}] (selection order),\nroot_ideal, preemption_allowed}. ") +
           snapshot_doc)
              .c_str());
  m.def(
      "plan_proportional_preemption",
      [](const py::dict& snapshot, const py::object& params) {
        pcpp_params p;
        if (!params.is_none()) {
          if (!py::isinstance<pcpp_params>(params))
            raise(errc::invalid_argument, "params: expected a ProportionalPreemption or None");
          p = params.cast<pcpp_params>();
        }
        return plan_with(p, snapshot, py::none());
      },
      py::arg("snapshot"), py::arg("params") = py::none(),
      "Returns ProportionalPreemption().plan(snapshot), or params.plan(snapshot) for a "
      "ProportionalPreemption\n`params`.");
}

}  // namespace hetsched::python
