// SPDX-License-Identifier: MIT
// A queue tree as a JSON document: the cohorts and queues of capacity_queue.hpp, which queue each
// tenant's jobs go to, and the options of the admission cycle. hetsched-sim reads it with
// --queue-tree FILE and hands its text to the capacity placement (`capacity:tree=...`,
// queue_placement.hpp); docs/capacity_queues.md ("Queue trees as files") has a full example.
//
//   {
//     "fair_sharing": false,          // Kueue fair sharing (DRS tournament, fair preemption)
//     "preemption": true,             // plan preemptions per each queue's settings
//     "min_runtime_s": 0,             // a job is no victim before it has run this long
//     "default_queue": "shared",      // jobs of tenants no queue names (optional)
//     "nodes": [
//       {"name": "org", "kind": "cohort"},
//       {"name": "team-a", "parent": "org", "tenants": ["vc1", "vc2"],
//        "quotas": [{"flavor": "V100", "resource": "gpu", "nominal": 8,
//                    "borrowing_limit": 4, "lending_limit": 8}],
//        "order": "priority", "fair_weight": 1,
//        "preemption": {"within_queue": "lower_priority", "reclaim_within_cohort": "any",
//                       "borrow_within_cohort": {"max_priority_threshold": 0}},
//        "user_limit": {"minimum_user_limit_percent": 50, "user_limit_factor": 1,
//                       "user_weights": {"alice": 2}}}
//     ]
//   }
//
// Units: "gpu" in GPUs and "cpu" in cores (decimals allowed down to a thousandth; stored as
// milli, the units of workload_of()), "memory" and "gpu_memory" in MiB, any other resource as an
// integer count. A node is a queue unless "kind" is "cohort"; "parent" is absent for a root.
// Orders: strict_fifo, best_effort_fifo, strict_priority, priority (default), drf. Preemption
// names: within_queue never|lower_priority|lower_or_newer_equal_priority, reclaim_within_cohort
// never|lower_priority|any (Kueue's withinClusterQueue and reclaimWithinCohort; default never);
// borrow_within_cohort, when present, enables Kueue's borrowWithinCohort with an optional
// max_priority_threshold. A tenant is a trace's tenant name (its virtual cluster or user); a
// tenant no queue lists goes to the queue of its own name, else to default_queue.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched {

/// A parsed queue-tree document.
struct queue_tree_document {
  /// The cohorts and queues (amounts in the units of workload_of()). User weights of YARN user
  /// limits are by tenant name in user_weight_names, so tree.user_limit->user_weights is empty.
  capacity_tree_spec tree;
  /// Tenant name -> queue name, from the queues' "tenants" lists.
  std::map<std::string, std::string, std::less<>> tenant_queue;
  /// Queue for tenants no queue lists and that have no queue of their name; empty: none.
  std::string default_queue;
  /// Queue name -> (tenant name -> YARN user weight).
  std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>> user_weight_names;
  bool fair_sharing = false;
  bool preemption = true;
  std::int64_t min_runtime_s = 0;  ///< 0..max_capacity_min_runtime_s (capacity_placement.hpp).
};

/// The most nodes a document may declare.
inline constexpr std::size_t max_queue_tree_nodes = 65'536;

/// Returns the document of the JSON text `text`. Errors (invalid_argument unless said), each
/// naming the JSON path: malformed JSON (line and column), an unknown member, a wrong type, an
/// unknown order or preemption name, an amount that is negative, not a whole number of its unit's
/// thousandths ("gpu", "cpu") or of its unit, or above max_quota_amount (out_of_range), a tenant
/// listed by two queues (already_exists), tenants or user limits on a cohort, a default_queue that
/// is not a queue of the tree (not_found), more than max_queue_tree_nodes nodes (out_of_range);
/// and every error of capacity_tree::build (the tree is built once to check it).
[[nodiscard]] result<queue_tree_document> parse_queue_tree_json(std::string_view text);

}  // namespace hetsched
