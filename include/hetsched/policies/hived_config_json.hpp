// SPDX-License-Identifier: MIT
// HiveD configuration as JSON text: microsoft/hivedscheduler's config shape plus hetsched's
// options under the extension key "hetsched".
//
// Document (every member optional unless marked required; unknown members are errors):
//   {
//     "physicalCluster": {                                   (required)
//       "cellTypes": { NAME: {"childCellType": T (required), "childCellNumber": N >= 0
//                            (required), "isNodeLevel": bool (default false)}, ... },
//       "physicalCells": [ {"cellType": T, "cellAddress": A, "pinnedCellId": P,
//                           "cellChildren": [ same shape ... ],
//                           "hetsched": {"absoluteAddress": bool}}, ... ]
//     },
//     "virtualClusters": { VC: {"virtualCells": [{"cellType": "CHAIN[.T2...].TYPE" (required),
//                                                 "cellNumber": N >= 0 (required)}],
//                               "pinnedCells": [{"pinnedCellId": P (required)}]}, ... },
//     "hetsched": {"chainOrder": {LEAF_TYPE: [CHAIN, ...]}, "multiCellPods": bool,
//                  "cellTypeRequests": bool}
//   }
// Object members keep document order: cell types, VCs and chain-order entries are listed in the
// order they appear. The importer checks shapes and types only; scheduler::create checks the
// structure (unknown types, child counts, pinned ids, the initial VC assignment).
#pragma once

#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/hived_config.hpp>

namespace hetsched::hived {

/// Returns the config of the JSON text `text` (shape above). Errors: invalid_argument naming the
/// JSON path and what is wrong ("virtualClusters.VC1.extra: unknown member",
/// "physicalCluster.cellTypes.X.isNodeLevel: expected a boolean, got string", a missing required
/// member), including malformed JSON ("line L, column C: ..."); out_of_range for a count outside
/// 0..INT_MAX ("physicalCluster.cellTypes.X.childCellNumber: -1 is below the minimum 0") and for
/// input beyond the JSON parser's size or depth limits.
[[nodiscard]] result<config> parse_config_json(std::string_view text);

/// Returns `cfg` as JSON text in the shape above; parse_config_json reads it back to an equal
/// config (empty strings and default values are omitted). Deterministic, two-space indented. JSON
/// objects cannot hold a name twice: of cell types or VCs sharing a name (which create() rejects)
/// only the first is written.
[[nodiscard]] std::string to_json(const config& cfg);

}  // namespace hetsched::hived
