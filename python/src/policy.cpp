// SPDX-License-Identifier: MIT
// hetsched.Policy: any policy of the registry (policies/registry.hpp) by name, driven through the
// policy contract (policies/policy.hpp) over a ClusterState: place (decide), what_if, commit,
// release, rebuild, replay. The typed classes of the other binding files stay as conveniences.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/registry.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

/// A policy instance with the cluster (and topology) it was made for.
struct py_policy {
  std::shared_ptr<cluster> description;
  std::optional<cluster_topology> topology;
  policy_spec spec;
  policy_instance inst;

  void check_state(const cluster_state& s) const {
    if (s.shared_cluster().get() != description.get() && !(*s.shared_cluster() == *description))
      raise(
          errc::invalid_argument,
          fmt::format("policy '{}': the state is of another cluster than the policy's", spec.text));
  }
};

std::unique_ptr<py_policy> make(std::string_view text, const std::shared_ptr<cluster>& c,
                                const py::object& topology, const py::dict& params) {
  if (!c) raise(errc::invalid_argument, "Policy: cluster is None");
  auto out = std::make_unique<py_policy>();
  out->description = c;
  out->spec = unwrap(parse_policy_spec(text));
  for (const auto& [k, v] : params)
    out->spec.placement_params[py::str(k).cast<std::string>()] = py::str(v).cast<std::string>();
  if (!topology.is_none()) out->topology = topology.cast<cluster_topology>();
  out->inst =
      unwrap(make_policy(out->spec, *out->description, out->topology ? &*out->topology : nullptr));
  return out;
}

}  // namespace

void bind_policy(py::module_& m) {
  py::class_<py_policy>(
      m, "Policy",
      "Any policy of the registry, by name: Policy('fifo+packer', cluster) or\n"
      "Policy('drf+capacity:quota=8/8,preemption=classic', cluster, topology). It drives the\n"
      "placement through the policy contract over a ClusterState: place(state, job) decides\n"
      "without side effects on what was committed, what_if(state, job) answers the same with\n"
      "none at all, commit(state, decision) after state.apply(decision), release(state, job)\n"
      "after a job freed its resources, rebuild(state) after health changes, replay(state,\n"
      "decision) after a restart. Decisions are the dicts of ClusterState.apply. `params` adds\n"
      "placement parameters a spec's text cannot hold (e.g. tree=<JSON queue tree>).\n"
      "Raises NotFound for an unknown name, InvalidArgument for bad parameters.")
      .def(py::init(&make), py::arg("spec"), py::arg("cluster"), py::arg("topology") = py::none(),
           py::arg("params") = py::dict())
      .def_property_readonly(
          "spec", [](const py_policy& p) { return p.spec.text; }, "The spec as written.")
      .def_property_readonly(
          "ordering", [](const py_policy& p) { return std::string(p.inst.order->name()); },
          "The ordering's name.")
      .def_property_readonly(
          "placement", [](const py_policy& p) { return std::string(p.inst.place->name()); },
          "The placement's name.")
      .def_property_readonly(
          "traits",
          [](const py_policy& p) {
            py::dict d;
            d["oversubscribes"] = p.inst.place->oversubscribes();
            d["per_tenant"] = p.inst.place->per_tenant();
            d["preempts"] = p.inst.place->preempts();
            d["migrates"] = p.inst.place->migrates();
            return d;
          },
          "{oversubscribes, per_tenant, preempts, migrates} of the placement.")
      .def(
          "set_time", [](py_policy& p, std::int64_t now_ms) { p.inst.place->set_time(now_ms); },
          py::arg("now_ms"), "Sets the time (ms) of the following calls (quota placements).")
      .def(
          "place",
          [](py_policy& p, const cluster_state& s, std::uint32_t job) {
            p.check_state(s);
            return to_py(unwrap(p.inst.place->place(s, job_id(job))));
          },
          py::arg("state"), py::arg("job"),
          "Returns the decision for queued `job`: binds, or a deferral (with preemptions for\n"
          "'preempt now, start later').")
      .def(
          "what_if",
          [](py_policy& p, const cluster_state& s, std::uint32_t job) {
            p.check_state(s);
            return to_py(unwrap(p.inst.place->what_if(s, job_id(job))));
          },
          py::arg("state"), py::arg("job"),
          "Returns what place(state, job) would answer now, with no side effect.")
      .def(
          "commit",
          [](py_policy& p, const cluster_state& s, const py::dict& d) {
            p.check_state(s);
            p.inst.place->commit(s, decision_from(d, "decision"));
          },
          py::arg("state"), py::arg("decision"),
          "Tells the policy that `decision` was applied to `state`.")
      .def(
          "release",
          [](py_policy& p, const cluster_state& s, std::uint32_t job) {
            p.check_state(s);
            p.inst.place->release(s, job_id(job));
          },
          py::arg("state"), py::arg("job"),
          "Tells the policy that `job` freed its resources (finished, failed, preempted).")
      .def(
          "rebuild",
          [](py_policy& p, const cluster_state& s) {
            p.check_state(s);
            p.inst.place->rebuild(s);
          },
          py::arg("state"), "Recomputes the policy's indices from `state`.")
      .def(
          "replay",
          [](py_policy& p, cluster_state& s, const py::dict& d) {
            p.check_state(s);
            const decision dec = decision_from(d, "decision");
            check(replay_bindings(s, *p.inst.place, dec.binds));
          },
          py::arg("state"), py::arg("decision"),
          "Applies the binds of `decision` (bind records kept across a restart) to `state` and\n"
          "rebuilds the policy from it, all or nothing.")
      .def("__repr__",
           [](const py_policy& p) { return fmt::format("<hetsched.Policy '{}'>", p.spec.text); });
}

}  // namespace hetsched::python
