// SPDX-License-Identifier: MIT
// Readers for virtual-cluster (VC) quota tables: the Philly VC -> node table (HeliosArtifact
// `philly_vc.csv`), Helios Venus's VC -> node table (Lucid `vc_config.csv`) and Helios Earth's
// daily VC -> GPU table (HeliosArtifact `Earth_gpu_number.csv`).
//
// Both kinds become a neutral vc_quota_table (VC name -> GPUs, plus nodes when the table counts
// nodes); a daily table becomes one through a vc_day_selector (one date, the last day, or each
// VC's maximum or mean over the days). parse_vc_quota_file() reads either kind, told apart by the
// header. docs/workloads.md shows how a table becomes a capacity-queue tree (one leaf queue per
// VC, guaranteed GPUs = quota) or a HiveD configuration; hetsched-sim's --vc-quota gives it to the
// capacity and hived placements as their per-tenant `quota=` list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>

namespace hetsched::workload {

/// One VC's quota.
struct vc_quota {
  std::string vc;                      ///< VC name as in the table.
  std::uint32_t gpus = 0;              ///< GPUs guaranteed to the VC (nodes * gpus_per_node).
  std::optional<std::uint32_t> nodes;  ///< Whole nodes, when the table counts nodes.

  friend bool operator==(const vc_quota&, const vc_quota&) = default;
};

/// VC quotas in table order.
struct vc_quota_table {
  std::vector<vc_quota> vcs;
  std::uint32_t gpus_per_node = 0;  ///< GPUs per node, 0 when the table counts GPUs only.
  std::string gpu_type;             ///< GPU model of the nodes, empty when unknown.

  /// Returns the sum of the VCs' GPUs.
  [[nodiscard]] std::uint64_t total_gpus() const noexcept;
  /// Returns the VC named `vc`, or nullptr.
  [[nodiscard]] const vc_quota* find(std::string_view vc) const noexcept;

  friend bool operator==(const vc_quota_table&, const vc_quota_table&) = default;
};

/// How a VC -> node table becomes GPUs.
struct vc_node_options {
  /// GPUs per node. 8 by default: Philly's and Helios's GPU servers as the QSSF and Lucid
  /// simulators model them.
  std::uint32_t gpus_per_node = 8;
  std::string gpu_type;  ///< Recorded in the table, e.g. "V100"; empty for unknown.
};

/// Returns the quotas of a two-column VC -> node-count CSV (a header row of any two names, e.g.
/// `vc,node num` or `,num`, then `<vc>,<nodes>` rows), gpus = nodes * gpus_per_node.
/// Errors (invalid_argument) "<source>:<line>: field '<name>': <problem>": no header, a row with
/// other than two fields, an empty or repeated VC name, a node count outside [0, 1000000], GPUs
/// above 2^32 - 1; gpus_per_node outside [1, 1024] (line 0, field 'gpus_per_node').
[[nodiscard]] result<vc_quota_table> parse_vc_node_table(std::string_view text,
                                                         std::string_view source,
                                                         const vc_node_options& options = {});

/// Which quotas of a daily VC -> GPU table to use.
struct vc_day_selector {
  enum class kind : std::uint8_t {
    latest,  ///< The last day of the file.
    date,    ///< The day `date`.
    max,     ///< Per VC, its largest GPU count over all days (the sum may exceed every day's).
    mean,    ///< Per VC, its mean over all days, rounded half up (sum x 2 + days) / (2 x days).
  };
  kind which = kind::latest;
  std::string date;  ///< For kind::date.

  friend bool operator==(const vc_day_selector&, const vc_day_selector&) = default;
};

/// Returns the selector written `text`: "latest", "max", "mean", or a date as in the table
/// ("2020-06-01"). Errors: empty text (invalid_argument).
[[nodiscard]] result<vc_day_selector> parse_vc_day_selector(std::string_view text);

/// One day of a daily VC -> GPU table.
struct vc_gpu_day {
  std::string date;                 ///< As written, e.g. "2020-04-01".
  std::vector<std::uint32_t> gpus;  ///< Per VC, in the order of vc_gpu_history::vcs.

  friend bool operator==(const vc_gpu_day&, const vc_gpu_day&) = default;
};

/// A daily VC -> GPU table (Helios `<cluster>_gpu_number.csv`).
struct vc_gpu_history {
  std::vector<std::string> vcs;  ///< VC names in column order.
  std::vector<vc_gpu_day> days;  ///< In file order.

  /// Returns the quotas of `date` (gpus_per_node 0, no node counts), or not_found naming it.
  [[nodiscard]] result<vc_quota_table> quota_on(std::string_view date) const;
  /// Returns the quotas of the last day; invalid_argument if there are no days.
  [[nodiscard]] result<vc_quota_table> latest() const;
  /// Returns the quotas `day` selects (see vc_day_selector); errors of quota_on() and latest().
  [[nodiscard]] result<vc_quota_table> select(const vc_day_selector& day) const;

  friend bool operator==(const vc_gpu_history&, const vc_gpu_history&) = default;
};

/// Returns the daily table of `text`: header `date,<vc>...[,total]`, then one row per day. When a
/// `total` column is present (last), each row's total must equal the sum of its VCs.
/// Errors (invalid_argument) "<source>:<line>: field '<name>': <problem>": a first column not
/// named date, an empty or repeated VC name, a wrong field count, an empty or repeated date, a GPU
/// count outside [0, 1000000], a total that differs from the sum.
[[nodiscard]] result<vc_gpu_history> parse_vc_gpu_history(std::string_view text,
                                                          std::string_view source);

/// Returns the quota table of a VC quota file of either kind: a daily VC -> GPU table when the
/// header's first field is `date` (parse_vc_gpu_history(), then history.select(day)), otherwise a
/// VC -> node table (parse_vc_node_table() with `nodes`). Errors: those of the reader, and of
/// select() prefixed with `source`.
[[nodiscard]] result<vc_quota_table> parse_vc_quota_file(std::string_view text,
                                                         std::string_view source,
                                                         const vc_day_selector& day = {},
                                                         const vc_node_options& nodes = {});

}  // namespace hetsched::workload
