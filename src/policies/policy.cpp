// SPDX-License-Identifier: MIT
// replay_bindings() and the parameter helpers of the policy contract.
#include <algorithm>
#include <charconv>

#include <hetsched/policies/policy.hpp>

namespace hetsched {

result<std::uint32_t> parse_param_uint(std::string_view policy, std::string_view key,
                                       std::string_view text) {
  std::uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    return make_error(errc::invalid_argument, "{}: parameter {}={} is not a non-negative integer",
                      policy, key, text);
  return v;
}

result<std::int64_t> parse_param_int(std::string_view policy, std::string_view key,
                                     std::string_view v) {
  std::int64_t x = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size())
    return make_error(errc::invalid_argument, "{}: parameter {}: '{}' is not an integer", policy,
                      key, v);
  return x;
}

result<bool> parse_param_flag(std::string_view policy, std::string_view key, std::string_view v) {
  if (v == "0" || v == "false") return false;
  if (v == "1" || v == "true") return true;
  return make_error(errc::invalid_argument, "{}: parameter {}: '{}' is not 0 or 1", policy, key, v);
}

result<std::vector<std::uint32_t>> parse_quota_list(std::string_view text) {
  std::vector<std::uint32_t> out;
  while (!text.empty()) {
    const std::size_t slash = std::min(text.find('/'), text.size());
    const std::string_view item = text.substr(0, slash);
    std::uint32_t g = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), g);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      return make_error(errc::invalid_argument, "quota: '{}' is not a number of GPUs", item);
    out.push_back(g);
    text = slash < text.size() ? text.substr(slash + 1) : std::string_view{};
  }
  return out;
}

result<void> replay_bindings(cluster_state& state, placement_policy& p,
                             std::span<const binding> binds) {
  decision d;
  d.binds.assign(binds.begin(), binds.end());
  HETSCHED_TRY(apply(state, d));
  p.rebuild(state);
  return {};
}

}  // namespace hetsched
