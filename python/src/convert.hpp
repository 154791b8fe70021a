// SPDX-License-Identifier: MIT
// Shared helpers of the Python bindings: hetsched errors as Python exceptions, strict readers of
// Python dicts, and conversions of model values to and from plain Python dicts and lists.
//
// Every input dict is read by a `fields` reader that rejects unknown keys (a typo is an
// InvalidArgument naming the key, never a silently ignored field) and treats None as "default".
// Every output is built from dict, list, int, float, str, bool and None only, so that results
// load into pandas directly. The binding areas (model, topology, policies, sim, workload) each
// have a bind_* function called from module.cpp.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/resources.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/drf.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>
#include <hetsched/workload/trace.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace hetsched::python {

namespace py = pybind11;

/// Creates hetsched.Error and its subclasses on `m` (one per errc).
void register_errors(py::module_& m);

/// Raises the Python exception of `e`: the class of e.code with e.message, `code` attribute set.
[[noreturn]] void raise(const error& e);

/// Raises the Python exception of `code` with `message`.
[[noreturn]] void raise(errc code, std::string message);

/// Returns the value of `r`, or raises its error.
template <typename T>
T unwrap(result<T>&& r) {
  if (!r) raise(r.error());
  return std::move(*r);
}

/// Raises the error of `r`, if any.
inline void check(const result<void>& r) {
  if (!r) raise(r.error());
}

/// Reads the keys of one input dict, rejecting unknown keys in finish().
class fields {
 public:
  /// Takes `obj`, which must be a dict (InvalidArgument naming `what` otherwise).
  fields(py::handle obj, std::string what);

  /// Reads `key` into `out` if present and not None; returns whether it did. A value of the
  /// wrong type raises InvalidArgument naming "what.key".
  template <typename T>
  bool get(const char* key, T& out) {
    known_.emplace_back(key);
    if (!dict_.contains(key)) return false;
    const py::object v = dict_[key];
    if (v.is_none()) return false;
    try {
      out = v.cast<T>();
    } catch (const py::cast_error&) {
      bad_type(key, v);
    }
    return true;
  }

  /// Returns key `key`, raising InvalidArgument if it is missing.
  template <typename T>
  T required(const char* key) {
    T out{};
    if (!get(key, out)) missing(key);
    return out;
  }

  /// Returns the raw object under `key` (None if absent) and marks it known.
  py::object object(const char* key);

  /// Returns "what.key", the name of a nested item for error messages.
  [[nodiscard]] std::string path(std::string_view key) const;

  /// Raises InvalidArgument naming the first key that no get() asked for.
  void finish() const;

 private:
  [[noreturn]] void bad_type(const char* key, const py::object& v) const;
  [[noreturn]] void missing(const char* key) const;

  py::dict dict_;
  std::string what_;
  std::vector<std::string> known_;
};

/// Calls f(item, "what[i]") for every item of the iterable `seq` (InvalidArgument if it is not
/// iterable or is a str/dict).
template <typename F>
void for_each_item(py::handle seq, const std::string& what, F&& f) {
  if (seq.is_none()) return;
  if (py::isinstance<py::str>(seq) || py::isinstance<py::dict>(seq) ||
      !py::isinstance<py::iterable>(seq))
    raise(errc::invalid_argument, fmt::format("{}: expected a list", what));
  std::size_t i = 0;
  for (const py::handle item : seq) {
    f(item, fmt::format("{}[{}]", what, i));
    ++i;
  }
}

/// Returns the enumerator of `E` named `name` among `names` (index = enumerator value), or raises
/// InvalidArgument naming `what`, the name and the valid names.
template <typename E, std::size_t N>
E parse_enum(std::string_view name, const std::string_view (&names)[N], std::string_view what) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  std::string known;
  for (const std::string_view n : names) {
    if (!known.empty()) known += ", ";
    known += n;
  }
  raise(errc::invalid_argument,
        fmt::format("{}: unknown value '{}' (expected one of: {})", what, name, known));
}

/// Returns the GPU type named `name` (empty = any), or raises InvalidArgument naming `what`.
gpu_type gpu_type_from(std::string_view name, std::string_view what);

health health_from(std::string_view name, std::string_view what);
job_event job_event_from(std::string_view name, std::string_view what);
defer_reason defer_reason_from(std::string_view name, std::string_view what);

/// {milli_gpu, milli_cpu, memory_mib, gpu_memory_mib, extended: {name: amount}}.
py::dict to_py(const resource_vector& v);
resource_vector resources_from(py::handle obj, const std::string& what);
extended_resources extended_from(py::handle obj, const std::string& what);

/// A drf_vector as {name: amount}.
py::dict to_py(const drf_vector& v);
drf_vector drf_vector_from(py::handle obj, const std::string& what);

/// A job spec: {id, name, tenant, queue, priority, image, command, gang, preemptible,
/// retry_limit, duration_estimate_s, roles: [{name, tasks, milli_cpu, memory_mib, gpus,
/// milli_per_gpu, gpu_type, gpu_memory_mib, extended}]}.
py::dict to_py(const job_spec& spec);
job_spec job_from(py::handle obj, const std::string& what);

/// A node spec: {name, labels, milli_cpu, memory_mib, extended, health, devices: [{type,
/// memory_mib, health}]} or, instead of devices, {gpus, gpu_type, gpu_memory_mib}.
node_spec node_from(py::handle obj, const std::string& what);

/// A decision: {binds, migrations: [{job, task, node, devices, milli_gpu, gpu_memory_mib}] (one
/// row per task), preemptions: [{job, reason}], suspensions, resumes: [{job}], deferrals: [{job,
/// reason, message}], releases: [{job, task}] (one row per released task of a partial_release;
/// rows of one job form one entry)}. decision_from() reads None as the empty decision.
py::dict to_py(const decision& d);
decision decision_from(py::handle obj, const std::string& what);

/// One row per task placement of `job`: {job, task, node, devices, milli_gpu, gpu_memory_mib}.
void append_rows(py::list& rows, job_id job, const std::vector<task_placement>& tasks);
std::vector<task_placement> placements_from(py::handle rows, const std::string& what);

/// A trace job as a dict with the trace_job field names.
py::dict to_py(const workload::trace_job& j);
workload::trace trace_from(py::handle obj, const std::string& what);
py::list to_py(const workload::trace& t);

/// A relation matrix as nested lists.
template <typename T>
py::list matrix_to_py(std::size_t n, T&& cell) {
  py::list rows;
  for (std::size_t i = 0; i < n; ++i) {
    py::list row;
    for (std::size_t j = 0; j < n; ++j) row.append(cell(i, j));
    rows.append(std::move(row));
  }
  return rows;
}

/// Returns the node template named `name`, or raises NotFound naming `what` and the names.
node_template template_from(const std::string& name, std::string_view what);

/// Returns the affinity level named `name` ("gpu" ... "cluster"), or raises InvalidArgument.
affinity_level level_from(std::string_view name, std::string_view what);

/// A list of uint32 from a Python iterable of ints.
std::vector<std::uint32_t> u32_list(py::handle obj, const std::string& what);

void bind_model(py::module_& m);
void bind_topology(py::module_& m);
void bind_drf(py::module_& m);
void bind_capacity(py::module_& m);
void bind_hived(py::module_& m);
void bind_proportional_preemption(py::module_& m);
void bind_job_order(py::module_& m);
void bind_packer(py::module_& m);
void bind_gandiva(py::module_& m);
void bind_fgd(py::module_& m);
void bind_sim(py::module_& m);
void bind_policy(py::module_& m);
void bind_workload(py::module_& m);

}  // namespace hetsched::python
