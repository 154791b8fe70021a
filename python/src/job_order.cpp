// SPDX-License-Identifier: MIT
// Bindings of the job orderings (policies/job_order.hpp) as objects: FifoOrder, SjfOrder,
// TiresiasLasOrder (discretised 2D-LAS) and DrfOrder. Each reads job dicts and returns the order
// as job ids (order()) or as rows (ranking()); key-based orderings also expose key().
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <hetsched/policies/job_order.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

/// FIFO, SJF and Tiresias 2D-LAS: a key per job, ties to the lower job id.
struct key_order {
  enum class kind : unsigned char { fifo, sjf, las };
  kind k = kind::fifo;
  las_params las;

  [[nodiscard]] order_key key(const job_view& j) const {
    switch (k) {
      case kind::fifo: return fifo_key(j);
      case kind::sjf: return sjf_key(j);
      case kind::las: return las_key(las, j);
    }
    return fifo_key(j);
  }
};

struct fifo_order : key_order {
  fifo_order() { k = kind::fifo; }
};
struct sjf_order : key_order {
  sjf_order() { k = kind::sjf; }
};
struct las_order : key_order {
  explicit las_order(las_params p) {
    k = kind::las;
    las = std::move(p);
  }
};

/// DRF over tenants: capacity and per-tenant usage and weight.
struct drf_job_order {
  std::int64_t capacity_milli_gpu = 0;
  std::int64_t capacity_milli_cpu = 0;
  std::int64_t capacity_memory_mib = 0;
  std::vector<tenant_usage> tenants;
};

job_view job_from(py::handle obj, const std::string& what) {
  fields f(obj, what);
  job_view j;
  const auto id = f.required<std::int64_t>("id");
  if (id < 0 || id >= static_cast<std::int64_t>(job_id::invalid().value()))
    raise(errc::invalid_argument, fmt::format("{}.id: {} is outside 0..2^32-2", what, id));
  j.id = job_id(static_cast<std::uint32_t>(id));
  f.get("tenant", j.tenant);
  f.get("submit_ms", j.submit_ms);
  f.get("milli_gpu", j.milli_gpu);
  f.get("milli_cpu", j.milli_cpu);
  f.get("memory_mib", j.memory_mib);
  f.get("duration_estimate_ms", j.duration_estimate_ms);
  f.get("attained_gpu_ms", j.attained_gpu_ms);
  f.get("running", j.running);
  f.finish();
  return j;
}

std::vector<job_view> jobs_from(const py::object& seq) {
  std::vector<job_view> jobs;
  std::set<std::uint32_t> ids;
  for_each_item(seq, "jobs", [&](py::handle item, const std::string& w) {
    jobs.push_back(job_from(item, w));
    if (!ids.insert(jobs.back().id.value()).second)
      raise(errc::invalid_argument, fmt::format("{}.id: job {} repeats", w, jobs.back().id));
  });
  return jobs;
}

/// Indices of `jobs` in `o`'s order.
std::vector<std::size_t> sorted(const key_order& o, const std::vector<job_view>& jobs) {
  std::vector<order_key> keys;
  keys.reserve(jobs.size());
  for (const job_view& j : jobs) keys.push_back(o.key(j));
  std::vector<std::size_t> idx(jobs.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return key_before(keys[a], jobs[a].id, keys[b], jobs[b].id);
  });
  return idx;
}

py::list ids_of(const std::vector<job_view>& jobs, const std::vector<std::size_t>& idx) {
  py::list out;
  for (std::size_t i : idx) out.append(jobs[i].id.value());
  return out;
}

template <typename Class>
void def_key_methods(Class& c) {
  c.def(
       "key",
       [](const key_order& o, const py::dict& job) {
         const order_key k = o.key(job_from(job, "job"));
         return std::vector<std::int64_t>(k.begin(), k.end());
       },
       py::arg("job"),
       "Returns the job's sort key [a, b, c] (compared lexicographically, then the job id).")
      .def(
          "order",
          [](const key_order& o, const py::object& jobs) {
            const auto js = jobs_from(jobs);
            return ids_of(js, sorted(o, js));
          },
          py::arg("jobs"), "Returns the job ids of `jobs` (job dicts) in this order.")
      .def(
          "ranking",
          [](const key_order& o, const py::object& jobs) {
            const auto js = jobs_from(jobs);
            py::list rows;
            std::size_t position = 0;
            for (std::size_t i : sorted(o, js)) {
              const order_key k = o.key(js[i]);
              py::dict r;
              r["position"] = position++;
              r["job"] = js[i].id.value();
              r["key"] = std::vector<std::int64_t>(k.begin(), k.end());
              if (o.k == key_order::kind::las) r["queue"] = k[0];
              rows.append(r);
            }
            return rows;
          },
          py::arg("jobs"),
          "Returns rows {position, job, key} (TiresiasLasOrder adds queue) in this order, for "
          "pandas.");
}

constexpr const char* job_doc =
    "A job dict is {id (required, 0..2^32-2), tenant, submit_ms, milli_gpu, milli_cpu, "
    "memory_mib\n(whole request), duration_estimate_ms (-1 = unknown), attained_gpu_ms, "
    "running}; ids must not repeat.";

}  // namespace

void bind_job_order(py::module_& m) {
  py::class_<key_order> base(m, "JobOrder",
                             "Base of the key orderings (FifoOrder, SjfOrder, TiresiasLasOrder).");
  def_key_methods(base);
  base.def_property_readonly(
      "name",
      [](const key_order& o) {
        constexpr std::string_view names[] = {"fifo", "sjf", "tiresias"};
        return std::string(names[static_cast<std::size_t>(o.k)]);
      },
      "The ordering's name in simulate() policy specs.");

  py::class_<fifo_order, key_order>(
      m, "FifoOrder",
      (std::string("First in, first out: key [submit_ms, 0, 0]; ties go to the lower job id.\n") +
       job_doc)
          .c_str())
      .def(py::init<>());
  py::class_<sjf_order, key_order>(
      m, "SjfOrder",
      (std::string("Shortest job first: key [duration_estimate_ms, submit_ms, 0]; an unknown "
                   "estimate (-1)\ncounts as longest; ties go to the lower job id. Oracle SJF "
                   "when the estimate is the true\nduration.\n") +
       job_doc)
          .c_str())
      .def(py::init<>());
  py::class_<las_order, key_order>(
      m, "TiresiasLasOrder",
      (std::string("Tiresias' discretised two-dimensional LAS (Gu et al., NSDI'19): key [queue, "
                   "0 if running\nelse 1, submit_ms], where queue = number of thresholds <= "
                   "attained_gpu_ms (GPU-ms of\nservice). Less service first; inside a queue "
                   "running jobs before waiting ones, then FIFO, then\nthe lower job id.\n") +
       job_doc)
          .c_str())
      .def(py::init([](const std::vector<std::int64_t>& thresholds) {
             las_params p;
             p.thresholds_gpu_ms = thresholds;
             check(validate(p));
             return las_order(std::move(p));
           }),
           py::arg("thresholds_gpu_ms") = std::vector<std::int64_t>{3'200'000},
           "Takes ascending positive thresholds in GPU-ms (default: one of 3,200 GPU-s, "
           "Tiresias' testbed).")
      .def_property_readonly(
          "thresholds_gpu_ms", [](const las_order& o) { return o.las.thresholds_gpu_ms; },
          "The queue thresholds in GPU-ms.")
      .def(
          "queue",
          [](const las_order& o, std::int64_t attained) { return las_queue(o.las, attained); },
          py::arg("attained_gpu_ms"),
          "Returns the queue of a job with `attained_gpu_ms` of service (0 = highest "
          "priority).");

  py::class_<drf_job_order>(
      m, "DrfOrder",
      (std::string(
           "Dominant Resource Fairness over tenants (Ghodsi et al., NSDI'11): repeatedly the "
           "next job\n(FIFO: submit_ms, then id) of the tenant with the lowest weighted "
           "dominant share, counting its\ncurrent usage plus every job already put before. "
           "Shares are compared exactly; ties go to the\nlower tenant index. A job's `tenant` "
           "indexes `tenants`.\n") +
       job_doc)
          .c_str())
      .def(py::init([](const py::dict& capacity, const py::object& tenants) {
             drf_job_order o;
             fields cf(capacity, "capacity");
             cf.get("milli_gpu", o.capacity_milli_gpu);
             cf.get("milli_cpu", o.capacity_milli_cpu);
             cf.get("memory_mib", o.capacity_memory_mib);
             cf.finish();
             if (o.capacity_milli_gpu < 0 || o.capacity_milli_cpu < 0 || o.capacity_memory_mib < 0)
               raise(errc::invalid_argument, "capacity: amounts must not be negative");
             for_each_item(tenants, "tenants", [&](py::handle item, const std::string& w) {
               fields tf(item, w);
               tenant_usage t;
               tf.get("milli_gpu", t.milli_gpu);
               tf.get("milli_cpu", t.milli_cpu);
               tf.get("memory_mib", t.memory_mib);
               tf.get("weight", t.weight);
               tf.finish();
               if (t.weight < 1)
                 raise(errc::invalid_argument, fmt::format("{}.weight: must be >= 1", w));
               if (t.milli_gpu < 0 || t.milli_cpu < 0 || t.memory_mib < 0)
                 raise(errc::invalid_argument, fmt::format("{}: usage must not be negative", w));
               o.tenants.push_back(t);
             });
             return o;
           }),
           py::arg("capacity"), py::arg("tenants") = py::none(),
           "`capacity` is {milli_gpu, milli_cpu, memory_mib} (zero = resource skipped); "
           "`tenants` is a list of\n{milli_gpu, milli_cpu, memory_mib, weight} (current usage; "
           "None = every tenant a job names\nstarts empty with weight 1).")
      .def(
          "order",
          [](const drf_job_order& o, const py::object& jobs) {
            const auto js = jobs_from(jobs);
            std::vector<tenant_usage> tenants = o.tenants;
            for (std::size_t i = 0; i < js.size(); ++i) {
              if (js[i].tenant < tenants.size()) continue;
              if (!o.tenants.empty())
                raise(errc::not_found,
                      fmt::format("jobs[{}].tenant: {} is not below the {} tenants", i,
                                  js[i].tenant, o.tenants.size()));
              tenants.resize(js[i].tenant + std::size_t{1});
            }
            order_context ctx;
            ctx.capacity_milli_gpu = o.capacity_milli_gpu;
            ctx.capacity_milli_cpu = o.capacity_milli_cpu;
            ctx.capacity_memory_mib = o.capacity_memory_mib;
            ctx.tenants = tenants;
            py::list out;
            for (std::uint32_t i : drf_order(js, ctx)) out.append(js[i].id.value());
            return out;
          },
          py::arg("jobs"), "Returns the job ids of `jobs` (job dicts) in DRF order.")
      .def(
          "ranking",
          [](const py::object& self, const py::object& jobs) {
            const py::list ids = self.attr("order")(jobs);
            std::map<std::uint32_t, std::uint32_t> tenant;
            for (const job_view& j : jobs_from(jobs)) tenant[j.id.value()] = j.tenant;
            py::list rows;
            std::size_t position = 0;
            for (const py::handle id : ids) {
              py::dict r;
              r["position"] = position++;
              r["job"] = id;
              r["tenant"] = tenant.at(id.cast<std::uint32_t>());
              rows.append(r);
            }
            return rows;
          },
          py::arg("jobs"), "Returns rows {position, job, tenant} in DRF order, for pandas.")
      .def_property_readonly(
          "name", [](const drf_job_order&) { return std::string("drf"); },
          "The ordering's name in simulate() policy specs.");
}

}  // namespace hetsched::python
