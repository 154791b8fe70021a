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
//
// Three fields of hivedscheduler's unmerged v2 API (PR #34, pkg/api/v2/types.go) extend the v1
// spec when the HiveD config enables options::cell_type_requests (hetsched.cellTypeRequests),
// under their v2 names: top-level `cellType` (v2 PodSchedulingSpec.cellType: each pod gets whole
// cells of that type; leafCellNumber and every member's leafCellNumber count them),
// `affinityGroup.withinOneCell` and `affinityGroup.childGroups` (v2 PodGroupSpec.withinOneCell and
// .childGroups). A child group is {name (read, unused), withinOneCell, members: [{podNumber,
// leafCellNumber}], childGroups}: v2's tree with v1's member shape (v2's pods/cellsPerPod/
// podMinNumber are not read), nested at most max_child_group_depth levels. With the option off a
// spec using any of them is refused naming the field. The v2 document shape itself (version: v2,
// podRootGroup) is not read. hived::pod_request's checks (docs/hived.md, "Options") apply on top.
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

/// The deepest nesting of childGroups read (a child group of the root is level 1).
inline constexpr int max_child_group_depth = 16;

/// A child group of a hierarchical affinity group (v2 PodGroupSpec with v1 members).
struct child_group {
  std::string name;  ///< Read, unused (as v2's child group names).
  std::string within_one_cell;
  std::vector<affinity_member> members;
  std::vector<child_group> child_groups;
  friend bool operator==(const child_group&, const child_group&) = default;
};

/// AffinityGroupSpec, plus v2's withinOneCell and childGroups.
struct affinity_group {
  std::string name;
  std::vector<affinity_member> members;
  std::string within_one_cell;
  std::vector<child_group> child_groups;
  friend bool operator==(const affinity_group&, const affinity_group&) = default;
};

/// What the HiveD config allows in a spec.
struct spec_options {
  /// options::cell_type_requests: cellType, withinOneCell and childGroups are accepted.
  bool cell_type_requests = false;
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
  std::string cell_type;                ///< v2 cellType; empty = leaves.
  friend bool operator==(const pod_scheduling_spec&, const pod_scheduling_spec&) = default;
};

/// Returns the spec held by the document tree, validated. Errors: invalid_argument naming the
/// key (and "line N: " for YAML input): wrong type, unknown key, out-of-range value, empty
/// virtualCluster or affinityGroup.name, non-positive counts, no member (in the whole group
/// tree) with this pod's leafCellNumber, a v2 field while `opts` does not allow it, childGroups
/// nested deeper than max_child_group_depth.
[[nodiscard]] result<pod_scheduling_spec> decode_pod_scheduling_spec(const spec_value& doc,
                                                                     spec_options opts = {});

/// Returns the spec of the annotation text: JSON if its first non-space character is '{', else
/// the YAML subset. Errors: those of parse_spec_document and decode_pod_scheduling_spec.
[[nodiscard]] result<pod_scheduling_spec> parse_pod_scheduling_spec(std::string_view annotation,
                                                                    spec_options opts = {});

/// Returns HiveD's request for the pod: name = pod UID, group = the affinity group's name or
/// "namespace/name", cell_type, within_one_cell and child_groups from the v2 fields.
/// Precondition: `spec` was validated.
[[nodiscard]] hived::pod_request to_pod_request(const pod_scheduling_spec& spec,
                                                const std::string& uid,
                                                const std::string& name_space,
                                                const std::string& name);

}  // namespace hetsched::k8s
