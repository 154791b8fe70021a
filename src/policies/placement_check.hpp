// SPDX-License-Identifier: MIT
// The last check of a placement that maps another policy's answer (FGD's node choice, HiveD's
// pods) onto the model: a decision the state would refuse becomes the job's deferral instead.
#pragma once

#include <utility>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>

namespace hetsched::detail {

/// Returns `d` if check_decision(state, d) accepts it, else a decision deferring `job`
/// (insufficient_capacity) with the check's message.
[[nodiscard]] inline decision checked_or_deferred(const cluster_state& state, decision d,
                                                  job_id job) {
  if (auto ok = check_decision(state, d); !ok) {
    decision wait;
    wait.deferrals.push_back({job, defer_reason::insufficient_capacity, ok.error().message});
    return wait;
  }
  return d;
}

}  // namespace hetsched::detail
