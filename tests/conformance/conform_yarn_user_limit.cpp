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
  const auto* input = c.json->find("input");
  const auto* expected = c.json->find("expected");
  if (input == nullptr || expected == nullptr) {
    out.fail(c.name, "missing input or expected");
    return;
  }
  constexpr double scale = 1000.0;
  const auto capacity =
      static_cast<std::int64_t>(std::llround(input->find("queue_capacity")->as_double() * scale));
  yarn_user_limit_spec spec;
  spec.minimum_user_limit_percent = input->find("minimum_user_limit_percent")->as_int64();
  spec.user_limit_factor = input->find("user_limit_factor")->as_double();
  const auto& users = input->find("active_users")->as_array();
  const auto& want = expected->find("user_limit")->as_array();
  if (users.size() != want.size()) {
    out.fail(c.name, "active_users and user_limit differ in length");
    return;
  }
  std::string why;
  for (std::size_t i = 0; i < users.size(); ++i) {
    // Saturated queue: consumed == capacity, minimum allocation 0.
    const auto limit = yarn_user_limit(capacity, capacity, capacity, 0, users[i].as_double(), spec);
    if (!limit) {
      why += fmt::format("{} users: {}; ", users[i].as_int64(), limit.error().message);
      continue;
    }
    const double got = limit->to_double() / scale;
    if (std::fabs(got - want[i].as_double()) > 1e-9)
      why += fmt::format("{} users: limit {} (want {}); ", users[i].as_int64(), got,
                         want[i].as_double());
  }
  if (why.empty()) {
    out.pass(c.name, c.kind);
  } else {
    out.fail(c.name, why);
  }
}

}  // namespace hetsched::conform
