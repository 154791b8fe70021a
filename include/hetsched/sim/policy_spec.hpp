// SPDX-License-Identifier: MIT
// Policy specifications as text, "ORDER[:k=v,...][+PLACEMENT[:k=v,...]]", e.g. "fifo+packer",
// "tiresias:thresholds=3200/36000+packer:fit=best", "fifo+gandiva:slices=1".
//
// The simulator's --policy option parses one spec per policy to compare; the ordering and the
// placement are then made by make_ordering() and make_placement(), so any ordering combines with
// any placement. A missing placement means "packer". "gandiva" alone means "fifo+gandiva".
// Gandiva's introspective migration is a placement parameter: on by default for gandiva
// ("gandiva:migrate=0" turns it off), off for packer ("packer:migrate=1"); see make_placement().
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/sim/ordering.hpp>
#include <hetsched/sim/placement.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched::sim {

/// A parsed policy specification.
struct policy_spec {
  std::string text;  ///< The specification as written (the policy's label).
  std::string order = "fifo";
  plugin_params order_params;
  std::string placement = "packer";
  plugin_params placement_params;

  friend bool operator==(const policy_spec&, const policy_spec&) = default;
};

/// Returns the spec of `text`. Errors (invalid_argument, quoting the text): empty text or part, a
/// parameter without '=' or with an empty key, a repeated key, more than one '+'.
[[nodiscard]] result<policy_spec> parse_policy_spec(std::string_view text);

/// An ordering and a placement made from a spec.
struct policy_instance {
  std::unique_ptr<ordering> order;
  std::unique_ptr<placement> place;
};

/// Returns the ordering and placement of `spec` for `description` (topology may be null). Under a
/// preemptive ordering (Tiresias) hived's preemption defaults to 0; placement preemption asked
/// for explicitly (hived:preemption=1, capacity:preemption=classic|fair) is combined with it by
/// the engine's precedence rule (engine.hpp). Errors: those of make_ordering() and
/// make_placement(), prefixed with the spec text.
[[nodiscard]] result<policy_instance> instantiate(const policy_spec& spec,
                                                  const cluster& description,
                                                  const cluster_topology* topology);

}  // namespace hetsched::sim
