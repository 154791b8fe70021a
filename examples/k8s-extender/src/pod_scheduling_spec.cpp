// SPDX-License-Identifier: MIT
// PodSchedulingSpec decoding and validation (pod_scheduling_spec.hpp).
#include "pod_scheduling_spec.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include "try_assign.hpp"

namespace hetsched::k8s {
namespace {

using kind = spec_value::kind;

constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();

std::string at(int line) { return line > 0 ? fmt::format("line {}: ", line) : std::string(); }

error bad(int line, std::string_view msg) {
  return error{errc::invalid_argument, at(line).append(msg)};
}

std::string describe(const spec_value& v) {
  switch (v.k) {
    case kind::mapping: return "a mapping";
    case kind::sequence: return "a sequence";
    case kind::null: return "null";
    case kind::scalar: break;
  }
  return v.plain ? fmt::format("'{}'", excerpt(v.text))
                 : fmt::format("the string '{}'", excerpt(v.text));
}

result<std::string> as_string(const spec_value& v, std::string_view path) {
  if (v.k == kind::null) return std::string();
  if (v.k != kind::scalar)
    return bad(v.line, fmt::format("{} must be a string, got {}", path, describe(v)));
  return v.text;
}

result<std::int64_t> as_int(const spec_value& v, std::string_view path) {
  if (v.k == kind::null) return std::int64_t{0};
  if (v.k != kind::scalar || !v.plain)
    return bad(v.line, fmt::format("{} must be an integer, got {}", path, describe(v)));
  std::string_view digits = v.text;
  const bool negative = !digits.empty() && digits.front() == '-';
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
  bool ok = !digits.empty() && digits.size() <= 18 && (digits.size() == 1 || digits.front() != '0');
  for (char c : digits) ok = ok && c >= '0' && c <= '9';
  if (!ok)
    return bad(v.line, fmt::format("{} must be a decimal integer, got {}", path, describe(v)));
  std::int64_t n = 0;
  for (char c : digits) n = n * 10 + (c - '0');
  return negative ? -n : n;
}

result<bool> as_bool(const spec_value& v, std::string_view path) {
  if (v.k == kind::null) return false;
  if (v.k == kind::scalar && v.plain) {
    // yaml.v2 resolves YAML 1.1 booleans
    static constexpr std::array<std::string_view, 11> yes = {
        "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"};
    static constexpr std::array<std::string_view, 11> no = {
        "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"};
    for (auto s : yes)
      if (v.text == s) return true;
    for (auto s : no)
      if (v.text == s) return false;
  }
  return bad(v.line, fmt::format("{} must be a boolean, got {}", path, describe(v)));
}

result<int> as_int32(const spec_value& v, std::string_view path) {
  K8S_TRY_ASSIGN(auto n, as_int(v, path));
  if (n > int32_max || n < -int32_max)
    return bad(v.line, fmt::format("{} {} is out of range", path, n));
  return static_cast<int>(n);
}

// Source lines of the fields the validation names (0 = absent or JSON).
struct spec_lines {
  int vc = 0;
  int priority = 0;
  int leaf_number = 0;
  int group = 0;
  int group_name = 0;
  std::vector<int> members;
  /// Per child group in preorder: its path and its members' lines.
  std::vector<std::pair<std::string, std::vector<int>>> child_members;
};

// Refuses v2 field `key` unless the config enables cell-type requests.
result<void> allowed(const spec_options& opts, const spec_value::member& m, std::string_view key) {
  if (opts.cell_type_requests) return {};
  return bad(m.line, fmt::format("{} needs the HiveD option cellTypeRequests (hetsched."
                                 "cellTypeRequests in the config)",
                                 key));
}

// Marks `seen` for a key that may also be given under its old name.
result<void> once(bool& seen, const spec_value::member& m, std::string_view canonical) {
  if (seen)
    return bad(m.line,
               fmt::format("{} given twice (under its current and its old name)", canonical));
  seen = true;
  return {};
}

result<affinity_member> decode_member(const spec_value& v, const std::string& path, int& line) {
  line = v.line;
  affinity_member out;
  if (v.k == kind::null) return out;
  if (v.k != kind::mapping)
    return bad(v.line, fmt::format("{} must be a mapping, got {}", path, describe(v)));
  bool leaf_seen = false;
  for (const auto& m : v.members) {
    if (m.key == "podNumber") {
      K8S_TRY_ASSIGN(out.pod_number, as_int32(m.value, path + ".podNumber"));
    } else if (m.key == "leafCellNumber" || m.key == "gpuNumber") {
      HETSCHED_TRY(once(leaf_seen, m, "leafCellNumber"));
      K8S_TRY_ASSIGN(out.leaf_cell_number, as_int32(m.value, path + ".leafCellNumber"));
    } else {
      return bad(m.line, fmt::format("unknown key '{}' in {} (keys are case-sensitive: "
                                     "podNumber, leafCellNumber)",
                                     excerpt(m.key), path));
    }
  }
  return out;
}

// Reads the sequence `v` of members at `path` into `out`, their lines into `lines`.
result<void> decode_members(const spec_value& v, const std::string& path,
                            std::vector<affinity_member>& out, std::vector<int>& lines) {
  if (v.k == kind::null) return {};
  if (v.k != kind::sequence)
    return bad(v.line, fmt::format("{} must be a sequence, got {}", path, describe(v)));
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    int line = 0;
    K8S_TRY_ASSIGN(auto member, decode_member(v.items[i], fmt::format("{}[{}]", path, i), line));
    out.push_back(member);
    lines.push_back(line);
  }
  return {};
}

result<std::vector<child_group>> decode_child_groups(const spec_value& v, const std::string& path,
                                                     int depth, spec_lines& lines);

result<child_group> decode_child_group(const spec_value& v, const std::string& path, int depth,
                                       spec_lines& lines) {
  child_group out;
  if (v.k != kind::mapping)
    return bad(v.line, fmt::format("{} must be a mapping, got {}", path, describe(v)));
  const std::size_t at = lines.child_members.size();
  lines.child_members.emplace_back(path, std::vector<int>());
  for (const auto& m : v.members) {
    if (m.key == "name") {
      K8S_TRY_ASSIGN(out.name, as_string(m.value, path + ".name"));
    } else if (m.key == "withinOneCell") {
      K8S_TRY_ASSIGN(out.within_one_cell, as_string(m.value, path + ".withinOneCell"));
    } else if (m.key == "members") {
      std::vector<int> member_lines;
      HETSCHED_TRY(decode_members(m.value, path + ".members", out.members, member_lines));
      auto& mine = lines.child_members[at].second;
      mine.insert(mine.end(), member_lines.begin(), member_lines.end());
    } else if (m.key == "childGroups") {
      K8S_TRY_ASSIGN(out.child_groups,
                     decode_child_groups(m.value, path + ".childGroups", depth + 1, lines));
    } else {
      return bad(m.line, fmt::format("unknown key '{}' in {} (keys are case-sensitive: name, "
                                     "withinOneCell, members, childGroups)",
                                     excerpt(m.key), path));
    }
  }
  return out;
}

result<std::vector<child_group>> decode_child_groups(const spec_value& v, const std::string& path,
                                                     int depth, spec_lines& lines) {
  std::vector<child_group> out;
  if (v.k == kind::null) return out;
  if (v.k != kind::sequence)
    return bad(v.line, fmt::format("{} must be a sequence, got {}", path, describe(v)));
  if (depth > max_child_group_depth)
    return bad(v.line, fmt::format("{}: childGroups are nested deeper than {} levels", path,
                                   max_child_group_depth));
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    K8S_TRY_ASSIGN(auto g,
                   decode_child_group(v.items[i], fmt::format("{}[{}]", path, i), depth, lines));
    out.push_back(std::move(g));
  }
  return out;
}

result<affinity_group> decode_group(const spec_value& v, const spec_options& opts,
                                    spec_lines& lines) {
  affinity_group out;
  if (v.k != kind::mapping)
    return bad(v.line, fmt::format("affinityGroup must be a mapping, got {}", describe(v)));
  for (const auto& m : v.members) {
    if (m.key == "name") {
      lines.group_name = m.line;
      K8S_TRY_ASSIGN(out.name, as_string(m.value, "affinityGroup.name"));
    } else if (m.key == "members") {
      HETSCHED_TRY(decode_members(m.value, "affinityGroup.members", out.members, lines.members));
    } else if (m.key == "withinOneCell") {
      HETSCHED_TRY(allowed(opts, m, "affinityGroup.withinOneCell"));
      K8S_TRY_ASSIGN(out.within_one_cell, as_string(m.value, "affinityGroup.withinOneCell"));
    } else if (m.key == "childGroups") {
      HETSCHED_TRY(allowed(opts, m, "affinityGroup.childGroups"));
      K8S_TRY_ASSIGN(out.child_groups,
                     decode_child_groups(m.value, "affinityGroup.childGroups", 1, lines));
    } else {
      return bad(m.line,
                 fmt::format("unknown key '{}' in affinityGroup (keys are "
                             "case-sensitive: name, members{})",
                             excerpt(m.key),
                             opts.cell_type_requests ? ", withinOneCell, childGroups" : ""));
    }
  }
  return out;
}

result<void> decode_quota(const spec_value& v, pod_scheduling_spec& out) {
  if (v.k == kind::null) return {};
  if (v.k != kind::mapping)
    return bad(v.line, fmt::format("quota must be a mapping, got {}", describe(v)));
  for (const auto& m : v.members) {
    if (m.key == "tag") {
      K8S_TRY_ASSIGN(out.quota_tag, as_string(m.value, "quota.tag"));
    } else if (m.key == "count") {
      K8S_TRY_ASSIGN(out.quota_count, as_int32(m.value, "quota.count"));
    } else {
      return bad(m.line, fmt::format("unknown key '{}' in quota (keys are case-sensitive: tag, "
                                     "count)",
                                     excerpt(m.key)));
    }
  }
  return {};
}

// Checks the members of the child groups (preorder, as their lines were recorded); sets `own` if
// one has the pod's size.
result<void> validate_children(const std::vector<child_group>& groups, int leaf_cells,
                               const spec_lines& l, std::size_t& next, bool& own) {
  for (const auto& g : groups) {
    const auto& [path, lines] = l.child_members[next++];
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      const auto& m = g.members[i];
      if (m.pod_number <= 0)
        return bad(lines[i], fmt::format("{}.members[{}].podNumber must be positive", path, i));
      if (m.leaf_cell_number <= 0)
        return bad(lines[i],
                   fmt::format("{}.members[{}].leafCellNumber must be positive", path, i));
      own = own || m.leaf_cell_number == leaf_cells;
    }
    HETSCHED_TRY(validate_children(g.child_groups, leaf_cells, l, next, own));
  }
  return {};
}

result<void> validate(const pod_scheduling_spec& s, std::int64_t priority, const spec_lines& l) {
  if (s.virtual_cluster.empty()) return bad(l.vc, "virtualCluster is empty");
  if (priority < hived::opportunistic_priority || priority > hived::max_guaranteed_priority)
    return bad(l.priority,
               fmt::format("priority {} is not in [{}, {}]", priority,
                           hived::opportunistic_priority, hived::max_guaranteed_priority));
  if (s.leaf_cell_number <= 0) return bad(l.leaf_number, "leafCellNumber must be positive");
  if (!s.group) return {};
  if (s.group->name.empty())
    return bad(l.group_name ? l.group_name : l.group, "affinityGroup.name is empty");
  bool own = false;
  for (std::size_t i = 0; i < s.group->members.size(); ++i) {
    const auto& m = s.group->members[i];
    if (m.pod_number <= 0)
      return bad(l.members[i],
                 fmt::format("affinityGroup.members[{}].podNumber must be positive", i));
    if (m.leaf_cell_number <= 0)
      return bad(l.members[i],
                 fmt::format("affinityGroup.members[{}].leafCellNumber must be positive", i));
    own = own || m.leaf_cell_number == s.leaf_cell_number;
  }
  std::size_t next = 0;
  HETSCHED_TRY(validate_children(s.group->child_groups, s.leaf_cell_number, l, next, own));
  if (!own)
    return bad(l.group, fmt::format("no affinityGroup member has this pod's leafCellNumber {}",
                                    s.leaf_cell_number));
  return {};
}

}  // namespace

result<pod_scheduling_spec> decode_pod_scheduling_spec(const spec_value& doc, spec_options opts) {
  if (doc.k == kind::null) return bad(doc.line, "the annotation is empty");
  if (doc.k != kind::mapping)
    return bad(doc.line, fmt::format("the annotation must be a mapping, got {}", describe(doc)));
  pod_scheduling_spec out;
  spec_lines lines;
  std::int64_t priority = 0;
  bool type_seen = false;
  bool number_seen = false;
  for (const auto& m : doc.members) {
    const std::string_view key = m.key;
    if (key == "virtualCluster") {
      lines.vc = m.line;
      K8S_TRY_ASSIGN(out.virtual_cluster, as_string(m.value, key));
    } else if (key == "priority") {
      lines.priority = m.line;
      K8S_TRY_ASSIGN(priority, as_int(m.value, key));
    } else if (key == "pinnedCellId") {
      K8S_TRY_ASSIGN(out.pinned_cell_id, as_string(m.value, key));
    } else if (key == "leafCellType" || key == "gpuType") {
      HETSCHED_TRY(once(type_seen, m, "leafCellType"));
      K8S_TRY_ASSIGN(out.leaf_cell_type, as_string(m.value, "leafCellType"));
    } else if (key == "leafCellNumber" || key == "gpuNumber") {
      HETSCHED_TRY(once(number_seen, m, "leafCellNumber"));
      lines.leaf_number = m.line;
      K8S_TRY_ASSIGN(out.leaf_cell_number, as_int32(m.value, "leafCellNumber"));
    } else if (key == "gangReleaseEnable") {
      K8S_TRY_ASSIGN(out.gang_release_enable, as_bool(m.value, key));
    } else if (key == "lazyPreemptionEnable") {
      K8S_TRY_ASSIGN(out.lazy_preemption_enable, as_bool(m.value, key));
    } else if (key == "ignoreK8sSuggestedNodes") {
      K8S_TRY_ASSIGN(out.ignore_k8s_suggested_nodes, as_bool(m.value, key));
    } else if (key == "affinityGroup") {
      lines.group = m.line;
      if (m.value.k == kind::null) {
        out.group.reset();
        continue;
      }
      K8S_TRY_ASSIGN(out.group, decode_group(m.value, opts, lines));
    } else if (key == "cellType") {
      HETSCHED_TRY(allowed(opts, m, key));
      K8S_TRY_ASSIGN(out.cell_type, as_string(m.value, key));
    } else if (key == "quota") {
      HETSCHED_TRY(decode_quota(m.value, out));
    } else if (key == "version") {
      K8S_TRY_ASSIGN(auto version, as_string(m.value, key));
      if (version != "v1")
        return bad(m.line, fmt::format("version '{}' is not supported (only v1 specs are read)",
                                       excerpt(version)));
    } else {
      return bad(m.line,
                 fmt::format("unknown key '{}' (keys are case-sensitive: virtualCluster, "
                             "priority, pinnedCellId, leafCellType, leafCellNumber, "
                             "gangReleaseEnable, lazyPreemptionEnable, ignoreK8sSuggestedNodes, "
                             "affinityGroup, quota, version{})",
                             excerpt(m.key), opts.cell_type_requests ? ", cellType" : ""));
    }
  }
  HETSCHED_TRY(validate(out, priority, lines));
  out.priority = static_cast<int>(priority);
  return out;
}

result<pod_scheduling_spec> parse_pod_scheduling_spec(std::string_view annotation,
                                                      spec_options opts) {
  K8S_TRY_ASSIGN(auto doc, parse_spec_document(annotation));
  return decode_pod_scheduling_spec(doc, opts);
}

namespace {

std::vector<hived::member_spec> to_members(const std::vector<affinity_member>& members) {
  std::vector<hived::member_spec> out;
  for (const auto& m : members) out.push_back(hived::member_spec{m.pod_number, m.leaf_cell_number});
  return out;
}

std::vector<hived::group_spec> to_groups(const std::vector<child_group>& groups) {
  std::vector<hived::group_spec> out;
  for (const auto& g : groups)
    out.push_back(
        hived::group_spec{to_members(g.members), g.within_one_cell, to_groups(g.child_groups)});
  return out;
}

}  // namespace

hived::pod_request to_pod_request(const pod_scheduling_spec& spec, const std::string& uid,
                                  const std::string& name_space, const std::string& name) {
  hived::pod_request r;
  r.name = uid;
  r.vc = spec.virtual_cluster;
  r.priority = spec.priority;
  r.pinned_cell = spec.pinned_cell_id;
  r.leaf_type = spec.leaf_cell_type;
  r.leaf_cells = spec.leaf_cell_number;
  r.lazy_preemption = spec.lazy_preemption_enable;
  r.ignore_suggested_nodes = spec.ignore_k8s_suggested_nodes;
  r.cell_type = spec.cell_type;
  if (spec.group) {
    r.group = spec.group->name;
    r.members = to_members(spec.group->members);
    r.within_one_cell = spec.group->within_one_cell;
    r.child_groups = to_groups(spec.group->child_groups);
  } else {
    r.group = fmt::format("{}/{}", name_space, name);
  }
  return r;
}

}  // namespace hetsched::k8s
