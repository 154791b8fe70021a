// SPDX-License-Identifier: MIT
// Conformance runner for the yarn_* kinds of the drf_capacity vector family.
#include "conform.hpp"

namespace hetsched::conform {

void run_yarn_case(const vector_case& c, reporter& out) {
  if (c.kind == "yarn_user_limit") {
    run_yarn_user_limit_case(c, out);
    return;
  }
  out.skip(c.name, "YARN proportional preemption has not landed");
}

}  // namespace hetsched::conform
