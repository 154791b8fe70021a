// SPDX-License-Identifier: MIT
// The _hetsched extension module: registers the errors, then every binding area.
#include <hetsched/version.hpp>

#include "convert.hpp"

PYBIND11_MODULE(_hetsched, m) {
  namespace hp = hetsched::python;
  m.doc() =
      "hetsched: scheduling policies for multi-tenant heterogeneous GPU clusters.\n\n"
      "Inputs are plain dicts and lists; results are plain dicts and lists (rows of dicts) that\n"
      "load into pandas.DataFrame directly. Errors raise hetsched.Error subclasses: "
      "InvalidArgument\n(ValueError), NotFound (KeyError), AlreadyExists (ValueError), "
      "FailedPrecondition\n(RuntimeError), OutOfRange (ValueError), InternalError (RuntimeError). "
      "A call that raises\nchanges no object. See docs/python.md.";
  m.attr("__version__") = std::string(hetsched::version());
  hp::register_errors(m);
  hp::bind_model(m);
  hp::bind_topology(m);
  hp::bind_drf(m);
  hp::bind_capacity(m);
  hp::bind_hived(m);
  hp::bind_proportional_preemption(m);
  hp::bind_job_order(m);
  hp::bind_packer(m);
  hp::bind_gandiva(m);
  hp::bind_fgd(m);
  hp::bind_workload(m);
  hp::bind_sim(m);
  hp::bind_policy(m);
}
