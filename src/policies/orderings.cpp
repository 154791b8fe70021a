// SPDX-License-Identifier: MIT
// The built-in orderings' registry factories.
#include <array>
#include <charconv>

#include <hetsched/policies/orderings.hpp>

namespace hetsched {
namespace {

result<void> no_params(std::string_view name, const policy_params& params) {
  if (!params.empty())
    return make_error(errc::invalid_argument, "{}: unknown parameter {} (it takes none)", name,
                      params.begin()->first);
  return {};
}

result<std::vector<std::int64_t>> parse_thresholds(std::string_view text) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t slash = std::min(text.find('/', pos), text.size());
    const std::string_view part = text.substr(pos, slash - pos);
    std::int64_t seconds = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), seconds);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || seconds <= 0 ||
        seconds > (std::int64_t{1} << 40))
      return make_error(errc::invalid_argument,
                        "tiresias: thresholds={}: '{}' is not a positive number of GPU-seconds",
                        text, part);
    out.push_back(seconds * 1000);
    pos = slash + 1;
  }
  return out;
}

// Parses drf's `weights=` value "<tenant>=<weight>/..." ("*" = every tenant not listed).
result<drf_job_order> parse_drf_weights(std::string_view text) {
  drf_job_order o;
  if (text == "quota")
    return make_error(errc::invalid_argument,
                      "drf: weights=quota needs a VC quota table (hetsched-sim --vc-quota); "
                      "otherwise list the weights, e.g. weights=vc1=2/vc2=1");
  bool has_default = false;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t slash = std::min(text.find('/', pos), text.size());
    const std::string_view entry = text.substr(pos, slash - pos);
    pos = slash + 1;
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return make_error(errc::invalid_argument,
                        "drf: weights={}: entry '{}' is not <tenant>=<weight>", text, entry);
    const std::string_view tenant = entry.substr(0, eq);
    const std::string_view value = entry.substr(eq + 1);
    std::uint32_t weight = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), weight);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || weight < 1 ||
        weight > max_tenant_weight)
      return make_error(errc::invalid_argument,
                        "drf: weights={}: weight '{}' of tenant {} is not an integer in [1, {}]",
                        text, value, tenant, max_tenant_weight);
    if (tenant == "*") {
      if (has_default)
        return make_error(errc::invalid_argument, "drf: weights={}: '*' is given twice", text);
      has_default = true;
      o.default_weight = weight;
    } else if (!o.weights.try_emplace(std::string(tenant), weight).second) {
      return make_error(errc::invalid_argument, "drf: weights={}: tenant {} is given twice", text,
                        tenant);
    }
  }
  return o;
}

}  // namespace

result<std::unique_ptr<ordering_policy>> make_fifo_ordering(const policy_params& params) {
  HETSCHED_TRY(no_params("fifo", params));
  return std::unique_ptr<ordering_policy>(
      std::make_unique<ordering_adapter<fifo_order>>(fifo_order{}));
}

result<std::unique_ptr<ordering_policy>> make_sjf_ordering(const policy_params& params) {
  HETSCHED_TRY(no_params("sjf", params));
  return std::unique_ptr<ordering_policy>(
      std::make_unique<ordering_adapter<sjf_order>>(sjf_order{}));
}

result<std::unique_ptr<ordering_policy>> make_drf_ordering(const policy_params& params) {
  drf_job_order o;
  for (const auto& [key, value] : params) {
    if (key != "weights")
      return make_error(errc::invalid_argument, "drf: unknown parameter {} (known: weights)", key);
    auto w = parse_drf_weights(value);
    if (!w) return std::move(w).error();
    o = std::move(*w);
  }
  return std::unique_ptr<ordering_policy>(
      std::make_unique<ordering_adapter<drf_job_order>>(std::move(o)));
}

result<std::unique_ptr<ordering_policy>> make_las_ordering(const policy_params& params) {
  las_order o;
  for (const auto& [key, value] : params) {
    if (key != "thresholds")
      return make_error(errc::invalid_argument,
                        "tiresias: unknown parameter {} (known: thresholds)", key);
    auto t = parse_thresholds(value);
    if (!t) return std::move(t).error();
    o.params.thresholds_gpu_ms = std::move(*t);
  }
  HETSCHED_TRY(validate(o.params));
  return std::unique_ptr<ordering_policy>(
      std::make_unique<ordering_adapter<las_order>>(std::move(o)));
}

}  // namespace hetsched
