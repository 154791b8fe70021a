// SPDX-License-Identifier: MIT
// Conformance runner for the yarn_user_limit kind of the drf_capacity vector family, against
// yarn_user_limit() of hetsched/policies/capacity_queue.hpp. Amounts are scaled by 1000 to
// integers; the limit is exact (no allocation granularity), compared as a double.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include <hetsched/policies/capacity_queue.hpp>

#include "conform.hpp"

namespace hetsched::conform {

void run_yarn_user_limit_case(const vector_case& c, reporter& out) {
  const vector_value input = c.json["input"];
  const vector_value expected = c.json["expected"];
  if (!input.present() || !expected.present()) {
    out.fail(c.name, "missing input or expected");
    return;
  }
  constexpr double scale = 1000.0;
  const double capacity_amount = input["queue_capacity"].number();
  if (!(capacity_amount >= 0) || capacity_amount > 1e12)
    input["queue_capacity"].fail("must be in [0, 10^12]");
  const auto capacity = static_cast<std::int64_t>(std::llround(capacity_amount * scale));
  yarn_user_limit_spec spec;
  // Out-of-range values go to yarn_user_limit, whose error the case then reports.
  spec.minimum_user_limit_percent = input["minimum_user_limit_percent"].integer();
  spec.user_limit_factor = input["user_limit_factor"].number();
  const auto users = input["active_users"].items();
  const auto want = expected["user_limit"].items();
  if (users.size() != want.size()) {
    out.fail(c.name, "active_users and user_limit differ in length");
    return;
  }
  std::string why;
  for (std::size_t i = 0; i < users.size(); ++i) {
    // Saturated queue: consumed == capacity, minimum allocation 0.
    const double active = users[i].number();  // the sum of the active users' weights
    const auto limit = yarn_user_limit(capacity, capacity, capacity, 0, active, spec);
    if (!limit) {
      why += fmt::format("{} users: {}; ", active, limit.error().message);
      continue;
    }
    const double got = limit->to_double() / scale;
    if (std::fabs(got - want[i].number()) > 1e-9)
      why += fmt::format("{} users: limit {} (want {}); ", active, got, want[i].number());
  }
  if (why.empty()) {
    out.pass(c.name, c.kind);
  } else {
    out.fail(c.name, why);
  }
}

}  // namespace hetsched::conform
