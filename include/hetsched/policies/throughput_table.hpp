// SPDX-License-Identifier: MIT
// The measured throughput table: job type x GPU type -> steps/s, alone, packed and spread.
//
// A throughput_table holds what Gavel (Narayanan et al., OSDI'20) calls the oracle throughputs:
// for a job type (a model name plus its scale factor, the GPUs it uses at once) on a GPU type,
// its steps/s running alone ("single"), its steps/s and its peer's when two job types share the
// same GPUs ("packed"), and its steps/s when its GPUs are spread over servers ("spread", Gavel's
// `<type>_unconsolidated`). Heterogeneity-aware policies and the simulator's speed model read it.
// Two text formats: Gavel's own JSON and a simpler one for users' tables (docs/speed_model.md §5).
// Pure data, no I/O: the readers take the text the caller read.
// @see Narayanan et al., Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning
//      Workloads, OSDI'20.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/result.hpp>

namespace hetsched {

/// A job type: a model name (e.g. "ResNet-50 (batch size 64)") and its scale factor (GPU count).
struct job_type_key {
  std::string name;
  std::uint32_t scale_factor = 1;

  friend bool operator==(const job_type_key&, const job_type_key&) = default;
  friend std::strong_ordering operator<=>(const job_type_key&, const job_type_key&) = default;
};

/// Returns Gavel's text of `key`, e.g. "('ResNet-50 (batch size 64)', 1)".
[[nodiscard]] std::string to_string(const job_type_key& key);

/// Returns the job type of a Gavel key "('<name>', <scale factor>)" (the name may also be
/// double-quoted). Errors: invalid_argument naming the text if it is not of that shape, the name
/// is empty or has a backslash, or the scale factor is not an integer in [1, 4096].
[[nodiscard]] result<job_type_key> parse_gavel_job_key(std::string_view text);

/// Two throughputs measured together: the job's own and its peer's, in steps/s.
struct packed_throughput {
  double self = 0;
  double peer = 0;

  friend bool operator==(const packed_throughput&, const packed_throughput&) = default;
};

/// Job type x GPU type -> measured steps/s. Every throughput is finite and >= 0 (0 means the job
/// type cannot run there, e.g. out of memory). Lookups are O(log n) with no allocation.
class throughput_table {
 public:
  static constexpr std::uint32_t max_scale_factor = 4096;

  /// Declares a GPU type the table has figures for. Errors: invalid_argument for the empty type,
  /// already_exists if declared before.
  result<void> add_gpu_type(gpu_type type);

  /// Sets the steps/s of `job` alone on `type`. Errors: not_found for an undeclared GPU type;
  /// invalid_argument for an empty name, a scale factor outside [1, max_scale_factor] or a
  /// negative or non-finite throughput; already_exists if set before. Messages name the entry.
  result<void> set_single(const job_type_key& job, gpu_type type, double steps_per_second);

  /// Sets the steps/s of `job` alone with its GPUs spread over servers. Errors as set_single.
  result<void> set_spread(const job_type_key& job, gpu_type type, double steps_per_second);

  /// Sets the packed throughputs of `job` and `peer` sharing GPUs of `type`; the mirrored entry
  /// (peer, job) is set too. Errors as set_single, plus invalid_argument if the two scale factors
  /// differ, and already_exists if (job, peer) was set before unless `allow_mirror` is true and the
  /// existing entry is exactly the mirror of this one (Gavel lists every pair under both jobs).
  result<void> set_packed(const job_type_key& job, const job_type_key& peer, gpu_type type,
                          packed_throughput steps_per_second, bool allow_mirror = false);

  /// Returns the steps/s of job type `name` at `scale_factor` alone on `type`, or nullopt.
  [[nodiscard]] std::optional<double> single(std::string_view name, std::uint32_t scale_factor,
                                             gpu_type type) const;
  /// Returns the steps/s with the job's GPUs spread over servers, or nullopt.
  [[nodiscard]] std::optional<double> spread(std::string_view name, std::uint32_t scale_factor,
                                             gpu_type type) const;
  /// Returns the packed throughputs of `name` (self) next to `peer` (both at `scale_factor`), or
  /// nullopt.
  [[nodiscard]] std::optional<packed_throughput> packed(std::string_view name,
                                                        std::string_view peer,
                                                        std::uint32_t scale_factor,
                                                        gpu_type type) const;

  /// Returns the declared GPU types in ascending name order.
  [[nodiscard]] std::span<const gpu_type> gpu_types() const noexcept { return gpu_types_; }
  /// Returns true if `type` was declared.
  [[nodiscard]] bool has_gpu_type(gpu_type type) const noexcept;
  /// Returns every job type with a single, spread or packed entry, in ascending order.
  [[nodiscard]] std::vector<job_type_key> job_types() const;
  [[nodiscard]] std::size_t single_count() const noexcept { return single_.size(); }
  [[nodiscard]] std::size_t spread_count() const noexcept { return spread_.size(); }
  /// Returns the number of packed entries, counting (a, b) and its mirror (b, a) once each.
  [[nodiscard]] std::size_t packed_count() const noexcept { return packed_.size(); }
  [[nodiscard]] bool empty() const noexcept {
    return single_.empty() && spread_.empty() && packed_.empty();
  }

  friend bool operator==(const throughput_table&, const throughput_table&) = default;

 private:
  struct entry_key {
    std::string name;
    std::uint32_t scale_factor = 1;
    gpu_type gpu;
    friend bool operator==(const entry_key&, const entry_key&) = default;
  };
  struct pair_key {
    std::string name;
    std::string peer;
    std::uint32_t scale_factor = 1;
    gpu_type gpu;
    friend bool operator==(const pair_key&, const pair_key&) = default;
  };
  // Transparent orderings so that lookups by string_view allocate nothing.
  struct entry_less {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      return std::tuple<std::string_view, std::uint32_t, gpu_type>(a.name, a.scale_factor, a.gpu) <
             std::tuple<std::string_view, std::uint32_t, gpu_type>(b.name, b.scale_factor, b.gpu);
    }
  };
  struct pair_less {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      using key = std::tuple<std::string_view, std::string_view, std::uint32_t, gpu_type>;
      return key(a.name, a.peer, a.scale_factor, a.gpu) <
             key(b.name, b.peer, b.scale_factor, b.gpu);
    }
  };

  result<void> check_entry(const job_type_key& job, gpu_type type, double value,
                           std::string_view what) const;

  std::vector<gpu_type> gpu_types_;
  std::map<entry_key, double, entry_less> single_;
  std::map<entry_key, double, entry_less> spread_;
  std::map<pair_key, packed_throughput, pair_less> packed_;
};

/// Returns the table in Gavel's JSON format (simulation_throughputs.json): GPU type ->
/// "('<name>', <sf>)" -> {"null": steps/s alone, "('<peer>', <sf>)": [self, peer] packed}; a top
/// key "<type>_unconsolidated" gives the spread figures of a declared <type> (its "null" entries;
/// its packed pairs are checked and not kept). GPU types are the other top-level keys.
/// Errors (messages start with `source`, then the JSON path): invalid_argument for malformed JSON
/// (with its line), a duplicate key, a bad GPU type or job key, a value that is not a finite
/// number >= 0 or a 2-list of them, packed peers of another scale factor, a mirrored pair that
/// disagrees; not_found for "<type>_unconsolidated" of an undeclared type.
[[nodiscard]] result<throughput_table> parse_gavel_throughput_table(
    std::string_view json_text, std::string_view source = "throughput table");

/// Returns the table in hetsched's own JSON format (docs/speed_model.md §5):
///   {"gpu_types": ["A100", "H100"],
///    "jobs": [{"name": "GPT-2", "scale_factor": 1, "throughputs": {"A100": 3.1, "H100": 7.9},
///              "spread": {"A100": 2.0}}],
///    "packed": [{"gpu_type": "A100", "jobs": ["GPT-2", "ResNet-50"], "scale_factor": 1,
///                "throughputs": [1.2, 3.4]}]}
/// "scale_factor" defaults to 1; "spread" and "packed" are optional. Unknown members are errors.
/// Errors as parse_gavel_throughput_table, plus not_found naming an undeclared GPU type.
[[nodiscard]] result<throughput_table> parse_throughput_table(
    std::string_view json_text, std::string_view source = "throughput table");

}  // namespace hetsched
