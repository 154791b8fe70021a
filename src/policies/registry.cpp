// SPDX-License-Identifier: MIT
// The registry tables and parsing "ORDER[:k=v,...][+PLACEMENT[:k=v,...]]".
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <utility>

#include <hetsched/policies/baseline_placement.hpp>
#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/fgd_placement.hpp>
#include <hetsched/policies/gandiva_placement.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/orderings.hpp>
#include <hetsched/policies/registry.hpp>

namespace hetsched {
namespace {

// One entry per policy: adding a policy adds a line here.
constexpr std::array ordering_table{
    ordering_entry{"fifo", &make_fifo_ordering, "submission order (no parameters)"},
    ordering_entry{"sjf", &make_sjf_ordering, "shortest expected duration first (no parameters)"},
    ordering_entry{"tiresias", &make_las_ordering,
                   "Tiresias 2D-LAS, preemptive (thresholds=<GPU-s>/<GPU-s>/...)"},
    ordering_entry{"drf", &make_drf_ordering,
                   "weighted DRF across tenants (weights=<tenant>=<w>/...)"},
};
constexpr std::array<std::pair<std::string_view, std::string_view>, 1> ordering_aliases{
    std::pair<std::string_view, std::string_view>{"las", "tiresias"}};

constexpr std::array placement_table{
    placement_entry{"packer", &make_packer_placement,
                    "best- or worst-fit nodes, topology-aware GPUs (fit, migrate...)"},
    placement_entry{"gandiva", &make_gandiva_placement,
                    "Gandiva reactive placement and migration (oversubscribe, slices, migrate...)"},
    placement_entry{"capacity", &make_capacity_placement,
                    "capacity queues: quotas, borrowing, preemption (quota, borrow, preemption...; "
                    "tree= for hierarchical queues)"},
    placement_entry{"hived", &make_hived_placement,
                    "HiveD buddy cells, one VC per tenant (quota, top, preemption...)"},
    placement_entry{"fgd", &make_fgd_placement,
                    "FGD fragmentation-gradient descent and its baselines (policy, classes...)"},
    placement_entry{"first-fit", &make_first_fit_placement,
                    "baseline: lowest node and device indices that fit (no parameters)"},
    placement_entry{"random", &make_random_placement,
                    "baseline: uniform among feasible nodes, then devices (seed=<u64>, default 1)"},
};

template <typename Table>
auto names_of(const Table& table) {
  std::vector<std::string_view> out;
  for (const auto& e : table) out.push_back(e.name);
  return out;
}

result<void> parse_part(std::string_view whole, std::string_view part, std::string& name,
                        policy_params& params) {
  const std::size_t colon = part.find(':');
  name = std::string(part.substr(0, colon));
  if (name.empty())
    return make_error(errc::invalid_argument, "policy '{}': empty ordering or placement name",
                      whole);
  if (colon == std::string_view::npos) return {};
  std::string_view rest = part.substr(colon + 1);
  while (true) {
    const std::size_t comma = std::min(rest.find(','), rest.size());
    const std::string_view kv = rest.substr(0, comma);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return make_error(errc::invalid_argument,
                        "policy '{}': parameter '{}' of {} is not key=value", whole, kv, name);
    const auto [it, fresh] =
        params.try_emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    if (!fresh)
      return make_error(errc::invalid_argument, "policy '{}': parameter {} of {} is repeated",
                        whole, it->first, name);
    if (comma >= rest.size()) break;
    rest = rest.substr(comma + 1);
  }
  return {};
}

}  // namespace

result<policy_spec> parse_policy_spec(std::string_view text) {
  policy_spec s;
  s.text = std::string(text);
  if (text.empty()) return make_error(errc::invalid_argument, "empty policy specification");
  const std::size_t plus = text.find('+');
  if (plus != std::string_view::npos && text.find('+', plus + 1) != std::string_view::npos)
    return make_error(errc::invalid_argument,
                      "policy '{}': more than one '+' (expected ORDER[+PLACEMENT])", text);
  const std::string_view first = text.substr(0, plus);
  std::string name;
  policy_params params;
  HETSCHED_TRY(parse_part(text, first, name, params));
  if (plus == std::string_view::npos && name == "gandiva") {
    s.placement = name;
    s.placement_params = std::move(params);
    return s;
  }
  s.order = std::move(name);
  s.order_params = std::move(params);
  if (plus != std::string_view::npos)
    HETSCHED_TRY(parse_part(text, text.substr(plus + 1), s.placement, s.placement_params));
  return s;
}

std::span<const ordering_entry> orderings() noexcept { return ordering_table; }

std::span<const placement_entry> placements() noexcept { return placement_table; }

result<std::unique_ptr<ordering_policy>> make_ordering(std::string_view name,
                                                       const policy_params& params) {
  for (const auto& [alias, target] : ordering_aliases)
    if (name == alias) name = target;
  for (const ordering_entry& e : ordering_table)
    if (e.name == name) return e.make(params);
  return make_error(errc::not_found, "unknown ordering '{}' (known: {})", name,
                    fmt::join(names_of(ordering_table), ", "));
}

result<std::unique_ptr<placement_policy>> make_placement(std::string_view name,
                                                         const policy_params& params,
                                                         const cluster& description,
                                                         const cluster_topology* topology) {
  for (const placement_entry& e : placement_table)
    if (e.name == name) return e.make(params, description, topology);
  return make_error(errc::not_found, "unknown placement '{}' (known: {})", name,
                    fmt::join(names_of(placement_table), ", "));
}

result<policy_instance> make_policy(std::string_view text, const cluster& description,
                                    const cluster_topology* topology) {
  auto spec = parse_policy_spec(text);
  if (!spec) return std::move(spec).error();
  return make_policy(*spec, description, topology);
}

result<policy_instance> make_policy(const policy_spec& spec, const cluster& description,
                                    const cluster_topology* topology) {
  auto o = make_ordering(spec.order, spec.order_params);
  if (!o) return make_error(o.error().code, "policy '{}': {}", spec.text, o.error().message);
  // Under a preemptive ordering (Tiresias) HiveD's placement preemption is off unless asked for
  // (hived:preemption=1). Both kinds may be combined: under a per-tenant placement the engine
  // restricts the ordering's preemption to jobs of one tenant (engine.hpp).
  policy_params pp = spec.placement_params;
  if ((*o)->preemptive() && spec.placement == "hived" && !pp.contains("preemption"))
    pp.emplace("preemption", "0");
  auto p = make_placement(spec.placement, pp, description, topology);
  if (!p) return make_error(p.error().code, "policy '{}': {}", spec.text, p.error().message);
  return policy_instance{std::move(*o), std::move(*p)};
}

}  // namespace hetsched
