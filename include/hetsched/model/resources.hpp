// SPDX-License-Identifier: MIT
// Resource vectors in integer units and GPU requests (whole GPUs or a fraction of one GPU).
//
// A resource_vector counts milli-GPU, milli-CPU, memory MiB and GPU memory MiB, plus named
// extended resources ("rdma/hca", "nvidia.com/mig-1g.10gb") kept in a sorted map whose zero
// entries are erased, so equal amounts compare equal. Arithmetic is exact int64; every amount a
// model object accepts is at most max_resource_amount (2^40), so sums over millions of nodes or
// tasks cannot overflow. A gpu_request asks for `count` whole GPUs, or for 1..999 milli-GPU of a
// single device (fractional sharing), optionally of one GPU type and with per-GPU memory.
#pragma once

#include <boost/container/flat_map.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// The largest amount of any one resource a model object accepts (2^40: 1 PiB in MiB).
inline constexpr std::int64_t max_resource_amount = std::int64_t{1} << 40;

/// Milli-GPU in one whole GPU.
inline constexpr std::int64_t milli_per_gpu_unit = 1000;

/// Named extended resources, sorted by name; amounts are integers (devices, slots, bytes).
using extended_resources = boost::container::flat_map<std::string, std::int64_t, std::less<>>;

/// An amount of every resource kind.
struct resource_vector {
  std::int64_t milli_gpu = 0;       ///< GPU compute in thousandths of a GPU.
  std::int64_t milli_cpu = 0;       ///< CPU in thousandths of a core.
  std::int64_t memory_mib = 0;      ///< Host memory, MiB.
  std::int64_t gpu_memory_mib = 0;  ///< GPU memory, MiB.
  /// Extended resources. Arithmetic erases entries that become zero; a missing entry is zero.
  extended_resources extended;

  /// Returns the amount of extended resource `name`, 0 if absent. O(log k).
  [[nodiscard]] std::int64_t extended_amount(std::string_view name) const noexcept;
  /// Sets extended resource `name` to `amount`; erases the entry when amount is 0.
  void set_extended(std::string_view name, std::int64_t amount);
  /// Returns true if every component is zero (zero-valued extended entries count as zero).
  [[nodiscard]] bool is_zero() const noexcept;
  /// Returns true if any component, extended ones included, is negative.
  [[nodiscard]] bool any_negative() const noexcept;

  /// Adds `other` componentwise. O(k log k) in the number of extended entries.
  resource_vector& operator+=(const resource_vector& other);
  /// Subtracts `other` componentwise; results may go negative (see any_negative()).
  resource_vector& operator-=(const resource_vector& other);

  friend bool operator==(const resource_vector&, const resource_vector&) = default;
};

/// Returns a + b componentwise.
[[nodiscard]] resource_vector operator+(resource_vector a, const resource_vector& b);
/// Returns a - b componentwise.
[[nodiscard]] resource_vector operator-(resource_vector a, const resource_vector& b);
/// Returns v scaled by `factor`. Precondition: the products fit in int64.
[[nodiscard]] resource_vector operator*(resource_vector v, std::int64_t factor);

/// Returns true if a <= b in every component (a missing extended entry is 0). A partial order:
/// !(a <= b) does not imply b <= a.
[[nodiscard]] bool operator<=(const resource_vector& a, const resource_vector& b) noexcept;

/// Returns true if `request` fits into `available`, i.e. request <= available componentwise.
[[nodiscard]] inline bool fits(const resource_vector& request,
                               const resource_vector& available) noexcept {
  return request <= available;
}

/// What a task asks of GPUs: `count` devices, each giving `milli_per_gpu` milli-GPU and
/// `memory_mib` GPU memory, all of `type` (empty = any type).
struct gpu_request {
  std::uint32_t count = 0;             ///< Devices; 0 = no GPU. Fractional requests need 1.
  std::uint32_t milli_per_gpu = 1000;  ///< 1000 for whole GPUs, 1..999 for a shared GPU.
  gpu_type type;                       ///< Required model; empty accepts any model.
  std::int64_t memory_mib = 0;         ///< GPU memory per device, MiB; 0 = no memory claim.

  /// Returns true if this asks for part of one GPU (milli_per_gpu < 1000).
  [[nodiscard]] bool is_fractional() const noexcept { return count > 0 && milli_per_gpu < 1000; }
  /// Returns count * milli_per_gpu, the milli-GPU the request occupies in total.
  [[nodiscard]] std::int64_t total_milli_gpu() const noexcept {
    return std::int64_t{count} * std::int64_t{milli_per_gpu};
  }

  friend bool operator==(const gpu_request&, const gpu_request&) = default;
};

/// The most devices one task may ask for; a task's devices all sit on one node.
inline constexpr std::uint32_t max_gpus_per_task = 1024;

/// Returns a request for `count` whole GPUs of `type` (empty = any) with `memory_mib` per GPU.
[[nodiscard]] inline gpu_request whole_gpus(std::uint32_t count, gpu_type type = {},
                                            std::int64_t memory_mib = 0) noexcept {
  return gpu_request{count, 1000, type, memory_mib};
}

/// Returns a request for `milli` milli-GPU (1..999) of one device of `type` with `memory_mib`.
[[nodiscard]] inline gpu_request fractional_gpu(std::uint32_t milli, gpu_type type = {},
                                                std::int64_t memory_mib = 0) noexcept {
  return gpu_request{1, milli, type, memory_mib};
}

/// Returns ok if `request` is well formed: milli_per_gpu in 1..1000 (out_of_range otherwise),
/// count 1 when fractional (invalid_argument), count <= max_gpus_per_task (out_of_range),
/// memory_mib in 0..max_resource_amount (invalid_argument / out_of_range).
[[nodiscard]] result<void> validate(const gpu_request& request);

/// Returns ok if every amount of `extended` is in 0..max_resource_amount and every name is
/// non-empty; errors are invalid_argument (negative, empty name) or out_of_range, naming the
/// entry.
[[nodiscard]] result<void> validate(const extended_resources& extended);

}  // namespace hetsched

/// Formats as "{milli_gpu=1500, milli_cpu=2000, memory_mib=4096, gpu_memory_mib=0, rdma/hca=1}".
template <>
struct fmt::formatter<hetsched::resource_vector> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }

  template <typename FormatContext>
  auto format(const hetsched::resource_vector& v, FormatContext& ctx) const {
    auto out =
        fmt::format_to(ctx.out(), "{{milli_gpu={}, milli_cpu={}, memory_mib={}, gpu_memory_mib={}",
                       v.milli_gpu, v.milli_cpu, v.memory_mib, v.gpu_memory_mib);
    for (const auto& [name, amount] : v.extended)
      out = fmt::format_to(out, ", {}={}", name, amount);
    return fmt::format_to(out, "}}");
  }
};
