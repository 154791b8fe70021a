// SPDX-License-Identifier: MIT
// speed_model: the four rate factors (docs/speed_model.md §3) and validate(params).
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include <hetsched/sim/speed_model.hpp>

namespace hetsched {
namespace {

bool finite_at_least(double v, double low) { return std::isfinite(v) && v >= low; }

/// Returns the family of a job type: the name before " (", e.g. "ResNet-50" for
/// "ResNet-50 (batch size 64)"; the whole name if it has no " (".
std::string_view family_of(std::string_view job_type) {
  const auto paren = job_type.find(" (");
  return paren == std::string_view::npos ? job_type : job_type.substr(0, paren);
}

bool positive(const std::optional<double>& v) { return v && *v > 0; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// True if `prefix` is, ignoring case, a prefix of `name` ending at its end or before '-', '_'
/// or '.'.
bool family_prefix(std::string_view prefix, std::string_view name) {
  if (prefix.empty() || prefix.size() > name.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(prefix[i]) != lower(name[i])) return false;
  if (prefix.size() == name.size()) return true;
  const char next = name[prefix.size()];
  return next == '-' || next == '_' || next == '.';
}

}  // namespace

std::string_view to_string(locality_tier tier) noexcept {
  switch (tier) {
    case locality_tier::same_switch: return "same_switch";
    case locality_tier::same_socket: return "same_socket";
    case locality_tier::same_node: return "same_node";
    case locality_tier::same_rack: return "same_rack";
    case locality_tier::across_racks: return "across_racks";
  }
  return "unknown";
}

result<void> validate(const speed_model_params& params) {
  double previous = 1.0;
  for (std::size_t t = 0; t < locality_tier_count; ++t) {
    const double s = params.tier_slowdown[t];
    const auto tier = static_cast<locality_tier>(t);
    if (!finite_at_least(s, 1.0)) {
      return make_error(errc::invalid_argument, "tier_slowdown[{}]: {} is not a finite number >= 1",
                        to_string(tier), s);
    }
    if (s < previous) {
      return make_error(errc::invalid_argument,
                        "tier_slowdown[{}]: {} is below the closer tier's {} (must not decrease)",
                        to_string(tier), s, previous);
    }
    previous = s;
  }
  for (const auto& [name, s] : params.sensitivity) {
    if (!finite_at_least(s, 0.0)) {
      return make_error(errc::invalid_argument,
                        "sensitivity of '{}': {} is not a finite number >= 0", name, s);
    }
  }
  if (!finite_at_least(params.default_sensitivity, 0.0)) {
    return make_error(errc::invalid_argument, "default_sensitivity: {} is not a finite number >= 0",
                      params.default_sensitivity);
  }
  if (!finite_at_least(params.interference, 0.0) || params.interference > 1.0) {
    return make_error(errc::invalid_argument, "interference: {} is outside [0, 1]",
                      params.interference);
  }
  if (!finite_at_least(params.scaling_exponent, 0.0) || params.scaling_exponent > 1.0) {
    return make_error(errc::invalid_argument, "scaling_exponent: {} is outside [0, 1]",
                      params.scaling_exponent);
  }
  if (params.enabled && params.reference_gpu.empty()) {
    return make_error(errc::invalid_argument, "reference_gpu: empty while the model is enabled");
  }
  return {};
}

result<speed_model> speed_model::make(speed_model_params params, throughput_table table) {
  if (auto ok = validate(params); !ok) return std::move(ok).error();
  speed_model model;
  model.params_ = std::move(params);
  model.table_ = std::move(table);
  return model;
}

gpu_type speed_model::table_gpu(gpu_type gpu) const {
  if (const auto it = params_.gpu_aliases.find(gpu.name()); it != params_.gpu_aliases.end())
    return it->second;
  if (table_.has_gpu_type(gpu)) return gpu;
  gpu_type best = gpu;
  std::size_t best_size = 0;
  for (const gpu_type declared : table_.gpu_types()) {
    if (declared.name().size() > best_size && family_prefix(declared.name(), gpu.name())) {
      best = declared;
      best_size = declared.name().size();
    }
  }
  return best;
}

double speed_model::sensitivity(std::string_view job_type) const {
  if (const auto it = params_.sensitivity.find(job_type); it != params_.sensitivity.end()) {
    return it->second;
  }
  if (const auto it = params_.sensitivity.find(family_of(job_type));
      it != params_.sensitivity.end()) {
    return it->second;
  }
  return params_.default_sensitivity;
}

double speed_model::hardware_factor(std::string_view job, gpu_type gpu, std::uint32_t n,
                                    std::uint32_t reference_n) const {
  // The first scale factor, in the order n, reference_n, 1, measured on both GPU types.
  for (const std::uint32_t k : {n, reference_n, 1u}) {
    const auto here = table_.single(job, k, gpu);
    if (here && *here == 0) return 0.0;  // measured: cannot run there (out of memory)
    const auto there = table_.single(job, k, table_gpu(params_.reference_gpu));
    if (here && positive(there)) return *here / *there;
  }
  return 1.0;
}

double speed_model::scaling_factor(std::string_view job, gpu_type gpu, std::uint32_t n,
                                   std::uint32_t reference_n) const {
  if (n == reference_n) return 1.0;
  // Measured on the reference type, else on the job's own type, else the power law.
  for (const gpu_type type : {table_gpu(params_.reference_gpu), gpu}) {
    const auto at_n = table_.single(job, n, type);
    const auto at_reference = table_.single(job, reference_n, type);
    if (at_n && positive(at_reference) && (type == gpu || *at_n > 0)) {
      return *at_n / *at_reference;
    }
  }
  return std::pow(static_cast<double>(n) / static_cast<double>(reference_n),
                  params_.scaling_exponent);
}

double speed_model::locality_factor(std::string_view job, gpu_type gpu, locality_tier tier,
                                    std::uint32_t n) const {
  if (n <= 1) return 1.0;
  const auto& slowdown = params_.tier_slowdown;
  const auto t = static_cast<std::size_t>(tier);
  if (params_.use_measured_spread && tier >= locality_tier::same_rack) {
    const auto together = table_.single(job, n, gpu);
    const auto spread = table_.spread(job, n, gpu);
    if (positive(together) && spread) {
      const auto rack = static_cast<std::size_t>(locality_tier::same_rack);
      return std::min(1.0, *spread / *together) * (slowdown[rack] / slowdown[t]);
    }
  }
  return 1.0 / (1.0 + sensitivity(job) * (slowdown[t] - 1.0));
}

double speed_model::colocation_factor(std::string_view job, std::string_view peer, gpu_type gpu,
                                      std::uint32_t n) const {
  if (peer.empty()) return 1.0;
  const auto alone = table_.single(job, n, gpu);
  const auto packed = table_.packed(job, peer, n, gpu);
  if (positive(alone) && packed) return std::min(1.0, packed->self / *alone);
  return params_.interference;
}

speed_factors speed_model::factors(const speed_query& query) const {
  if (!params_.enabled) return {};
  const std::uint32_t n = std::max<std::uint32_t>(query.gpu_count, 1);
  const std::uint32_t reference_n = query.reference_gpu_count == 0 ? n : query.reference_gpu_count;
  const gpu_type gpu = table_gpu(query.gpu);
  speed_factors f;
  f.hardware = hardware_factor(query.job_type, gpu, n, reference_n);
  f.scaling = scaling_factor(query.job_type, gpu, n, reference_n);
  f.locality = locality_factor(query.job_type, gpu, query.locality, n);
  f.colocation = colocation_factor(query.job_type, query.peer_job_type, gpu, n);
  return f;
}

}  // namespace hetsched
