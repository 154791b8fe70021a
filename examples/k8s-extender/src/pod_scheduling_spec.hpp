// SPDX-License-Identifier: MIT
// hivedscheduler's PodSchedulingSpec (v1) annotation: decoding and validation shared by its YAML
// and JSON forms.
//
// The document tree (pod_spec_yaml.hpp) is decoded as hivedscheduler does with Go's yaml.v2:
// keys are case-sensitive; a null value gives the field's zero value (so
// `ignoreK8sSuggestedNodes: null` is false; absent it defaults to true); a string field takes any
// scalar's text; an integer field needs a plain decimal integer; a boolean field a plain YAML 1.1
// boolean (true/false, yes/no, on/off, y/n in their three cases). The old key names gpuType and
// gpuNumber (hivedscheduler's convertOldAnnotation) are accepted for leafCellType and
// leafCellNumber. Stricter than hivedscheduler: unknown keys are refused (yaml.v2 ignores them),
// as are floats and non-decimal integers in integer fields (yaml.v2 truncates 2.5 and reads 010
// as octal) and `version` other than v1. Validation follows ExtractPodSchedulingSpec's order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hetsched/model/result.hpp>
#include <hetsched/policies/hived.hpp>

#include "pod_spec_yaml.hpp"

namespace hetsched::k8s {

/// AffinityGroupMemberSpec.
struct affinity_member {
  int pod_number = 0;
  int leaf_cell_number = 0;
  friend bool operator==(const affinity_member&, const affinity_member&) = default;
};

/// AffinityGroupSpec.
struct affinity_group {
  std::string name;
  std::vector<affinity_member> members;
  friend bool operator==(const affinity_group&, const affinity_group&) = default;
};

/// hivedscheduler's PodSchedulingSpec (v1), as read from the annotation.
struct pod_scheduling_spec {
  std::string virtual_cluster;
  int priority = 0;
  std::string pinned_cell_id;
  std::string leaf_cell_type;
  int leaf_cell_number = 0;
  bool gang_release_enable = false;  ///< Read as hivedscheduler does, which does not use it.
  bool lazy_preemption_enable = false;
  bool ignore_k8s_suggested_nodes = true;
  std::optional<affinity_group> group;  ///< nullopt: a one-pod group named namespace/name.
  std::string quota_tag;                ///< quota.tag, read and unused (as hivedscheduler).
  int quota_count = 0;                  ///< quota.count, read and unused.
  friend bool operator==(const pod_scheduling_spec&, const pod_scheduling_spec&) = default;
};

/// Returns the spec held by the document tree, validated. Errors: invalid_argument naming the
/// key (and "line N: " for YAML input): wrong type, unknown key, out-of-range value, empty
/// virtualCluster or affinityGroup.name, non-positive counts, no member with this pod's
/// leafCellNumber.
[[nodiscard]] result<pod_scheduling_spec> decode_pod_scheduling_spec(const spec_value& doc);

/// Returns the spec of the annotation text: JSON if its first non-space character is '{', else
/// the YAML subset. Errors: those of parse_spec_document and decode_pod_scheduling_spec.
[[nodiscard]] result<pod_scheduling_spec> parse_pod_scheduling_spec(std::string_view annotation);

/// Returns HiveD's request for the pod: name = pod UID, group = the affinity group's name or
/// "namespace/name". Precondition: `spec` was validated.
[[nodiscard]] hived::pod_request to_pod_request(const pod_scheduling_spec& spec,
                                                const std::string& uid,
                                                const std::string& name_space,
                                                const std::string& name);

}  // namespace hetsched::k8s
