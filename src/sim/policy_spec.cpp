// SPDX-License-Identifier: MIT
// Parsing "ORDER[:k=v,...][+PLACEMENT[:k=v,...]]".
#include <algorithm>

#include <hetsched/sim/policy_spec.hpp>

namespace hetsched::sim {
namespace {

result<void> parse_part(std::string_view whole, std::string_view part, std::string& name,
                        plugin_params& params) {
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
  plugin_params params;
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

result<policy_instance> instantiate(const policy_spec& spec, const cluster& description,
                                    const cluster_topology* topology) {
  auto o = make_ordering(spec.order, spec.order_params);
  if (!o) return make_error(o.error().code, "policy '{}': {}", spec.text, o.error().message);
  // Under a preemptive ordering (Tiresias) HiveD's placement preemption is off unless asked for
  // (hived:preemption=1). Both kinds may be combined: under a per-tenant placement the engine
  // restricts the ordering's preemption to jobs of one tenant (engine.hpp).
  plugin_params pp = spec.placement_params;
  if ((*o)->preemptive() && spec.placement == "hived" && !pp.contains("preemption"))
    pp.emplace("preemption", "0");
  auto p = make_placement(spec.placement, pp, description, topology);
  if (!p) return make_error(p.error().code, "policy '{}': {}", spec.text, p.error().message);
  return policy_instance{std::move(*o), std::move(*p)};
}

}  // namespace hetsched::sim
