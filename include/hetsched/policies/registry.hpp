// SPDX-License-Identifier: MIT
// The policy registry: every ordering and placement of hetsched by name, and policies as text,
// "ORDER[:k=v,...][+PLACEMENT[:k=v,...]]", e.g. "fifo+packer",
// "tiresias:thresholds=3200/36000+packer:fit=best", "fifo+gandiva:slices=1", "drf+hived".
//
// make_policy() is the one way in for every surface (the simulator's --policy, the C API, Python,
// the Kubernetes extender): it parses the text in one place, looks both names up in the registry
// tables (src/policies/registry.cpp) and calls the entries' factories, so any ordering combines
// with any placement. A missing placement means "packer"; "gandiva" alone means "fifo+gandiva".
// Gandiva's introspective migration is a placement parameter: on by default for gandiva
// ("gandiva:migrate=0" turns it off), off for packer ("packer:migrate=1").
//
// Adding a policy: write its header and source (a type satisfying job_placement or job_ordering,
// policy.hpp, and a factory `make_<name>_placement(params, description, topology)` or
// `make_<name>_ordering(params)` that validates the parameters), then add one entry to the
// table in registry.cpp. Names are matched exactly (lower case).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <hetsched/model/cluster.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/policy.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// Makes an ordering from its parameters (registry.cpp's table).
using ordering_factory = result<std::unique_ptr<ordering_policy>> (*)(const policy_params&);
/// Makes a placement for a cluster (node topologies from `topology` when not null).
using placement_factory = result<std::unique_ptr<placement_policy>> (*)(
    const policy_params&, const cluster& description, const cluster_topology* topology);

/// A registry entry of an ordering.
struct ordering_entry {
  std::string_view name;
  ordering_factory make;
  std::string_view summary;  ///< One line: what it is and its parameters.
};

/// A registry entry of a placement.
struct placement_entry {
  std::string_view name;
  placement_factory make;
  std::string_view summary;  ///< One line: what it is and its parameters.
};

/// Every ordering, in a fixed order: fifo, sjf, tiresias (make_ordering also takes its alias las),
/// drf.
[[nodiscard]] std::span<const ordering_entry> orderings() noexcept;
/// Every placement, in a fixed order: packer, gandiva, capacity, hived, fgd, first-fit, random.
[[nodiscard]] std::span<const placement_entry> placements() noexcept;

/// A parsed policy specification.
struct policy_spec {
  std::string text;  ///< The specification as written (the policy's label).
  std::string order = "fifo";
  policy_params order_params;
  std::string placement = "packer";
  policy_params placement_params;

  friend bool operator==(const policy_spec&, const policy_spec&) = default;
};

/// Returns the spec of `text`. Errors (invalid_argument, quoting the text): empty text or part, a
/// parameter without '=' or with an empty key, a repeated key, more than one '+'.
[[nodiscard]] result<policy_spec> parse_policy_spec(std::string_view text);

/// An ordering and a placement: a whole policy.
struct policy_instance {
  std::unique_ptr<ordering_policy> order;
  std::unique_ptr<placement_policy> place;
};

/// Returns the ordering named `name` (orderings()) made with `params`. Errors: not_found naming
/// the ordering and the valid names; the factory's invalid_argument.
[[nodiscard]] result<std::unique_ptr<ordering_policy>> make_ordering(std::string_view name,
                                                                     const policy_params& params);

/// Returns the placement named `name` (placements()) for `description` (node topologies from
/// `topology` when not null). Errors: not_found naming the placement and the valid names; the
/// factory's invalid_argument.
[[nodiscard]] result<std::unique_ptr<placement_policy>> make_placement(
    std::string_view name, const policy_params& params, const cluster& description,
    const cluster_topology* topology);

/// Returns the ordering and placement of `spec` for `description` (topology may be null). Under a
/// preemptive ordering (Tiresias) hived's preemption defaults to 0; placement preemption asked
/// for explicitly (hived:preemption=1, capacity:preemption=classic|fair) is combined with it by
/// the simulator's precedence rule (the engine of hetsched::sim). Errors: those of
/// make_ordering() and make_placement(), prefixed with the spec text.
[[nodiscard]] result<policy_instance> make_policy(const policy_spec& spec,
                                                  const cluster& description,
                                                  const cluster_topology* topology);

/// Returns make_policy(parse_policy_spec(text), description, topology).
[[nodiscard]] result<policy_instance> make_policy(std::string_view text, const cluster& description,
                                                  const cluster_topology* topology);

}  // namespace hetsched
