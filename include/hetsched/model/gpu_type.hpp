// SPDX-License-Identifier: MIT
// GPU types as first-class values, and the catalogue of known GPU models.
//
// A gpu_type is a small trivially copyable value holding a canonical model name such as
// "A100-SXM4-80GB" (vendor prefixes like "NVIDIA " or "Tesla " dropped, at most 31 characters of
// [A-Za-z0-9._-]). The empty gpu_type means "any type" in a request and "unknown" on a device.
// gpu_spec gives what the topology and policies need about a model: memory, compute capability
// and NVLink generation and per-link bandwidth. Unknown models are allowed: they have no spec.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

#include <hetsched/model/assert.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// A GPU model name, e.g. gpu_type("H100-SXM5-80GB").
class gpu_type {
 public:
  static constexpr std::size_t max_length = 31;

  /// The empty type: "any" in a request, "unknown" on a device.
  constexpr gpu_type() noexcept = default;

  /// Makes a type from a canonical name. Precondition: is_valid_name(name); prefer parse() for
  /// untrusted input.
  constexpr explicit gpu_type(std::string_view name) noexcept {
    HETSCHED_ASSERT(is_valid_name(name), "invalid gpu type name");
    size_ = static_cast<std::uint8_t>(std::min(name.size(), max_length));
    for (std::size_t i = 0; i < size_; ++i) chars_[i] = name[i];
  }

  /// Returns true if `name` is 1..31 characters of [A-Za-z0-9._-].
  [[nodiscard]] static constexpr bool is_valid_name(std::string_view name) noexcept {
    if (name.empty() || name.size() > max_length) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    });
  }

  /// Returns the type named `name`, or invalid_argument naming it if it is not a valid name.
  [[nodiscard]] static result<gpu_type> parse(std::string_view name);

  [[nodiscard]] constexpr std::string_view name() const noexcept { return {chars_.data(), size_}; }
  [[nodiscard]] constexpr bool empty() const noexcept { return size_ == 0; }

  friend constexpr bool operator==(const gpu_type& a, const gpu_type& b) noexcept {
    return a.name() == b.name();
  }
  friend constexpr std::strong_ordering operator<=>(const gpu_type& a, const gpu_type& b) noexcept {
    return a.name().compare(b.name()) <=> 0;
  }

 private:
  std::array<char, max_length> chars_{};
  std::uint8_t size_ = 0;
};

/// Facts about a GPU model.
struct gpu_spec {
  gpu_type type;
  std::int64_t memory_mib = 0;           ///< Device memory.
  std::uint32_t compute_capability = 0;  ///< SM version times 10: 70 (V100), 80 (A100), 90 (H100).
  std::uint8_t nvlink_generation = 0;    ///< 0 when the model has no NVLink.
  std::uint8_t max_nvlinks = 0;          ///< NVLink ports per GPU.
  std::uint8_t pcie_generation = 0;      ///< Host interface generation (x16 assumed).
  /// Unidirectional bandwidth of one NVLink, MB/s, as hwloc reports it (v1 20000, v2-v4 25000,
  /// v5 50000).
  std::int64_t nvlink_link_mb_s = 0;

  friend bool operator==(const gpu_spec&, const gpu_spec&) = default;
};

/// Returns every model in the built-in catalogue, sorted by name.
[[nodiscard]] std::span<const gpu_spec> known_gpu_specs() noexcept;

/// Returns the catalogue entry for `type`, or nullopt for an unknown model.
[[nodiscard]] std::optional<gpu_spec> find_gpu_spec(gpu_type type) noexcept;

/// Returns the canonical type for a model string as tools print it ("Tesla V100-SXM3-32GB-H",
/// "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"). Vendor prefixes are dropped, spaces
/// become '-', characters outside the name alphabet are dropped and the result is cut to 31
/// characters; a known catalogue name that prefixes the result wins ("V100-SXM3-32GB-H" ->
/// "V100-SXM3-32GB"). Returns the empty type if nothing usable remains.
[[nodiscard]] gpu_type normalize_gpu_model(std::string_view model);

/// Unidirectional bandwidth of one NVLink of `generation` in MB/s as hwloc reports it; 0 for an
/// unknown generation.
[[nodiscard]] constexpr std::int64_t nvlink_link_bandwidth_mb_s(unsigned generation) noexcept {
  switch (generation) {
    case 1: return 20000;
    case 2:
    case 3:
    case 4: return 25000;
    case 5: return 50000;
    default: return 0;
  }
}

}  // namespace hetsched

template <>
struct std::hash<hetsched::gpu_type> {
  std::size_t operator()(const hetsched::gpu_type& t) const noexcept {
    return std::hash<std::string_view>{}(t.name());
  }
};

template <>
struct fmt::formatter<hetsched::gpu_type> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const hetsched::gpu_type& t, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(t.empty() ? std::string_view("any") : t.name(),
                                                    ctx);
  }
};
