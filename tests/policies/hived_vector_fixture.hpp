// SPDX-License-Identifier: MIT
// Unit tests on hivedscheduler's own test config: the recorded config of
// ../shared/vectors/hived/hived_master.json (a config variant: base, backtrack, safe_relaxed,
// ...) and its pod specs pod1..pod46, so a test can replay a sequence of hivedscheduler's
// algorithm test that the vector file does not record step by step.
//
// Reminder of that config (reference/hived.md §12; addresses as inferred):
// - chain 4-DGX2-V100-NODE: top cells 7 = {7/14 = nodes 0.0.3.0, 0.0.3.1 (pinned VC1-YQW-DGX2),
//   7/15 = 0.0.3.2, 0.0.3.3} and 8 = {8/16 = 0.0.4.0, 0.0.4.1, 8/17 = 0.0.4.2, 0.0.4.3}; levels:
//   leaf 1, 2/4/8-GPU cells 2-4, node (16 GPUs) 5, 2-node cell 6, 4-node cell 7. After start-up
//   its free lists are level 6 [7/15] and level 7 [8] (7 is split by the pinned cell).
// - chain DGX2-V100-NODE: top-level nodes 0.0.1.0 and 0.0.5.0; chain 3-DGX2-V100-NODE: nodes
//   0.0.2.0-2. The chain search order for DGX2-V100 is DGX2-V100-NODE, 4-DGX2-V100-NODE,
//   3-DGX2-V100-NODE (the recorded order); a guaranteed pod skips a chain where its VC has no
//   non-pinned cell.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/hived.hpp>

#include "conformance/hived_vectors.hpp"
#include "jsonio/json.hpp"
#include "support/shared_data.hpp"

namespace hetsched::hived::vector_fixture {

/// The parsed vector file (read once).
inline const jsonio::json& vectors() {
  static const jsonio::json doc = [] {
    auto parsed =
        jsonio::parse_json(hetsched::testing::read_shared("vectors/hived/hived_master.json"));
    if (!parsed) throw std::runtime_error(parsed.error().message);
    return std::move(*parsed);
  }();
  return doc;
}

/// A scheduler on the recorded config variant, every node marked healthy (as every recorded
/// scenario starts).
inline scheduler recorded_scheduler(const std::string& variant) {
  auto cfg = conform::hived_vectors::variant_config(vectors(), variant);
  if (!cfg) throw std::runtime_error(cfg.error().message);
  auto s = scheduler::create(*cfg);
  if (!s) throw std::runtime_error(s.error().message);
  s->mark_all_nodes_healthy();
  return std::move(*s);
}

/// The recorded pod spec `name` (pod1..pod46): ignore_suggested_nodes is false in all of them.
inline pod_request spec(const std::string& name) {
  return conform::hived_vectors::read_pod(jsonio::member(vectors(), "pod_specs"), name);
}

inline node_filter only(std::vector<std::string> nodes) { return node_filter{false, nodes}; }

inline std::vector<int> leaves(int first, int count) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

/// Schedules `pod` in the Preempting phase with all nodes suggested, expects a bind and commits
/// it; returns the bind record.
inline bind_info bind_and_commit(scheduler& s, const pod_request& pod,
                                 const node_filter& nodes = {}) {
  auto r = s.schedule(pod, nodes, phase::preempting);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  if (!r) return {};
  EXPECT_EQ(r->kind, outcome::bind) << pod.name << ": " << r->wait_reason;
  auto added = s.add_allocated(pod, r->bind);
  EXPECT_TRUE(added.has_value()) << added.error().message;
  return r->bind;
}

/// The victims of a preemption answer, as one sorted list.
inline std::vector<std::string> victims(const schedule_result& r) {
  std::vector<std::string> out;
  for (const auto& [node, pods] : r.victims_by_node)
    out.insert(out.end(), pods.begin(), pods.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hetsched::hived::vector_fixture
