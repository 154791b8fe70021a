// SPDX-License-Identifier: MIT
// The speed model: how fast a job progresses on a given placement, relative to its reference.
//
// A job's progress rate (1.0 = the job alone on its reference GPU count of the reference GPU
// type, all its GPUs behind one NVLink fabric or PCIe switch) is the product of four factors:
// hardware (measured throughput on this GPU type over the reference type), scaling (GPU count
// over the reference count), locality (the highest tier the job's GPUs cross, weighted by the job
// type's communication sensitivity) and co-location (measured packed throughput, else a default
// interference factor). Formulas, defaults and their sources: docs/speed_model.md. A disabled
// model (the default) gives 1.0 for every query: the simulator's behaviour without it.
// Pure, deterministic value type; no I/O. The throughput table comes from policies/.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/ids.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/throughput_table.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

/// The highest boundary a job's GPUs cross, closest first.
enum class locality_tier : std::uint8_t {
  same_switch,   ///< One GPU, one PCIe switch (PIX), or one NVLink island / NVSwitch fabric.
  same_socket,   ///< Across PCIe switches under one CPU socket (PXB, PHB, NODE).
  same_node,     ///< Across CPU sockets of one server (SYS).
  same_rack,     ///< Across servers of one rack.
  across_racks,  ///< Across racks.
};

inline constexpr std::size_t locality_tier_count = 5;

/// Returns the lower-case name of `tier`, e.g. "same_socket".
[[nodiscard]] std::string_view to_string(locality_tier tier) noexcept;

/// How placement_locality() reads the topology.
struct locality_options {
  /// When true, GPUs of one node joined by NVLink among themselves (directly or through an
  /// NVSwitch fabric) are same_switch whatever their PCIe relation, and GPUs of one multi-node
  /// NVLink domain are same_switch across nodes. When false only the PCIe tree and the racks
  /// count (what a PCIe-only reading of the machine gives).
  bool use_nvlink = true;

  friend bool operator==(const locality_options&, const locality_options&) = default;
};

/// Returns the locality tier of a job placed on cluster-wide GPUs `gpus` of `topology`: the
/// highest tier over its nodes (see locality_options) and, within each node, same_switch if the
/// node's GPUs of the job form one NVLink island (use_nvlink), else the highest pair tier (a pair
/// with NVLink: same_switch; PIX: same_switch; PXB, PHB, NODE: same_socket; SYS or unknown:
/// same_node). Across nodes: same_switch inside one NVLink domain (use_nvlink), same_rack if one
/// rack holds both nodes or the cluster has no racks, else across_racks. Order of `gpus` is
/// irrelevant. Errors: invalid_argument if `gpus` is empty or lists a GPU twice, out_of_range for a
/// GPU id >= topology.gpu_count(). O(g^2) pair lookups per node for g GPUs on it.
[[nodiscard]] result<locality_tier> placement_locality(const cluster_topology& topology,
                                                       std::span<const device_id> gpus,
                                                       const locality_options& options = {});

/// The parameters of the speed model. Every default cites its source in docs/speed_model.md §4.
struct speed_model_params {
  /// False: every rate is 1.0 (the simulator's behaviour without a speed model).
  bool enabled = false;
  /// The GPU type rates are relative to (Gavel's heterogeneity-agnostic baselines use v100).
  gpu_type reference_gpu{"v100"};
  /// Slowdown of a fully sensitive job (sensitivity 1) per locality tier, >= 1 and
  /// non-decreasing: 1 (same switch), 1.4 (across PCIe switches: the seed's 40%), 1.48 (across
  /// sockets: 1 + 0.4 x NCCL's PCIe/Skylake-UPI bandwidth ratio 12/10), 5 (across servers: the
  /// seed's "up to 5x", equal to Gavel's measured mean for LM on V100, 5.05), 5 (across racks:
  /// no published figure, so no extra penalty).
  std::array<double, locality_tier_count> tier_slowdown{1.0, 1.4, 1.48, 5.0, 5.0};
  /// Communication sensitivity by job type name or by family (the name before " ("), >= 0:
  /// slowdown = 1 + sensitivity x (tier_slowdown - 1). Defaults from Gavel's measured
  /// consolidated/unconsolidated ratios on V100: (mean ratio - 1) / (5 - 1).
  std::map<std::string, double, std::less<>> sensitivity{
      {"LM", 1.0}, {"ResNet-18", 0.43}, {"Transformer", 0.27}, {"ResNet-50", 0.02}};
  /// Sensitivity of a job type found in neither form: the seed's figures apply as stated.
  double default_sensitivity = 1.0;
  /// Use the table's spread (unconsolidated) throughput for jobs across servers when it has one.
  bool use_measured_spread = true;
  /// Rate factor of a co-located job when the table has no packed figure for the pair, in [0, 1]:
  /// the median of Gavel's 1,881 nonzero packed/alone ratios.
  double interference = 0.58;
  /// Speedup on n GPUs is n^scaling_exponent when the table has no figure for both counts, in
  /// [0, 1]: least-squares fit to Gavel's 168 multi-GPU entries (0.753).
  double scaling_exponent = 0.75;
  /// Cluster GPU type name -> the table's GPU type it stands for, for names table_gpu() does not
  /// resolve by itself (e.g. {"Tesla-V100-PCIE-32GB", v100}).
  std::map<std::string, gpu_type, std::less<>> gpu_aliases{};

  friend bool operator==(const speed_model_params&, const speed_model_params&) = default;
};

/// Returns ok if `params` are usable. Errors (invalid_argument naming the field): a tier slowdown
/// below 1, not finite or decreasing; a negative or non-finite sensitivity; interference or
/// scaling_exponent outside [0, 1]; an empty reference_gpu while enabled.
[[nodiscard]] result<void> validate(const speed_model_params& params);

/// One question to the speed model.
struct speed_query {
  std::string_view job_type{};  ///< e.g. "ResNet-50 (batch size 64)"; may be unknown to the table.
  gpu_type gpu{};               ///< The GPU type the job runs on.
  locality_tier locality = locality_tier::same_switch;
  std::string_view peer_job_type{};       ///< The job type sharing its GPUs; empty = alone.
  std::uint32_t gpu_count = 1;            ///< GPUs the job runs on now (0 is read as 1).
  std::uint32_t reference_gpu_count = 0;  ///< GPUs its nominal duration refers to; 0 = gpu_count.
};

/// The four factors of a rate; rate() is their product.
struct speed_factors {
  double hardware = 1.0;
  double scaling = 1.0;
  double locality = 1.0;
  double colocation = 1.0;

  [[nodiscard]] double rate() const noexcept { return hardware * scaling * locality * colocation; }
  friend bool operator==(const speed_factors&, const speed_factors&) = default;
};

/// A pure speed model: parameters plus an optional measured throughput table.
class speed_model {
 public:
  /// A disabled model: every rate is 1.0.
  speed_model() = default;

  /// Returns a model over `params` and `table`. Errors: those of validate(params).
  [[nodiscard]] static result<speed_model> make(speed_model_params params,
                                                throughput_table table = {});

  /// Returns the progress rate of `query` (>= 0; 0 if the table says the job cannot run there).
  /// Deterministic; 1.0 when the model is disabled.
  [[nodiscard]] double rate(const speed_query& query) const { return factors(query).rate(); }

  /// Returns the factors of rate(query) (all 1.0 when disabled); docs/speed_model.md §3.
  [[nodiscard]] speed_factors factors(const speed_query& query) const;

  /// Returns the table's GPU type that a device of type `gpu` stands for: the alias of
  /// params().gpu_aliases if it lists the name; `gpu` if the table declares it; else the declared
  /// type whose name, ignoring case, is the longest prefix of gpu's name that ends where the name
  /// ends or before '-', '_' or '.' ("V100-SXM2-16GB" -> "v100", "A100-SXM4-80GB" -> "a100" when
  /// declared); else `gpu` (unknown to the table: hardware factor 1). factors() reads every GPU
  /// type, the query's and reference_gpu, through it.
  [[nodiscard]] gpu_type table_gpu(gpu_type gpu) const;

  /// Returns the communication sensitivity of `job_type` (exact name, then family, then default).
  [[nodiscard]] double sensitivity(std::string_view job_type) const;

  [[nodiscard]] const speed_model_params& params() const noexcept { return params_; }
  [[nodiscard]] const throughput_table& table() const noexcept { return table_; }
  [[nodiscard]] bool enabled() const noexcept { return params_.enabled; }

  friend bool operator==(const speed_model&, const speed_model&) = default;

 private:
  [[nodiscard]] double hardware_factor(std::string_view job, gpu_type gpu, std::uint32_t n,
                                       std::uint32_t reference_n) const;
  [[nodiscard]] double scaling_factor(std::string_view job, gpu_type gpu, std::uint32_t n,
                                      std::uint32_t reference_n) const;
  [[nodiscard]] double locality_factor(std::string_view job, gpu_type gpu, locality_tier tier,
                                       std::uint32_t n) const;
  [[nodiscard]] double colocation_factor(std::string_view job, std::string_view peer, gpu_type gpu,
                                         std::uint32_t n) const;

  speed_model_params params_;
  throughput_table table_;
};

}  // namespace hetsched
