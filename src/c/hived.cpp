// SPDX-License-Identifier: MIT
// C API: HiveD config builder, scheduler, schedule / commit / release.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <hetsched/c/hived.h>
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config.hpp>
#include <hetsched/policies/hived_config_json.hpp>
#include <hetsched/policies/hived_topology.hpp>

#include "c_internal.hpp"
#include "handles.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;
using hetsched::capi::view;
namespace hived = hetsched::hived;

struct hs_hived_config {
  /// Physical cells as a flat list; children refer to their parent by index.
  struct flat_cell {
    std::int32_t parent = HS_HIVED_TOP_LEVEL;
    hived::physical_cell_spec spec;  ///< Without children (they come from the flat list).
  };
  hived::config cfg;  ///< cell_types and virtual_clusters; physical_cells built on demand.
  std::vector<flat_cell> cells;
  std::string json;  ///< The text last returned by hs_hived_config_to_json.

  /// Returns the config with the physical cell trees assembled from the flat list.
  [[nodiscard]] hived::config assemble() const {
    std::vector<std::vector<std::int32_t>> children(cells.size());
    std::vector<std::int32_t> tops;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const auto index = static_cast<std::int32_t>(i);
      if (cells[i].parent == HS_HIVED_TOP_LEVEL) {
        tops.push_back(index);
      } else {
        children[static_cast<std::size_t>(cells[i].parent)].push_back(index);
      }
    }
    // Children always come after their parent, so building bottom-up in reverse order works.
    std::vector<hived::physical_cell_spec> built(cells.size());
    for (std::size_t i = cells.size(); i-- > 0;) {
      built[i] = cells[i].spec;
      for (auto c : children[i]) built[i].children.push_back(built[static_cast<std::size_t>(c)]);
    }
    hived::config out = cfg;
    out.physical_cells.clear();
    for (auto t : tops) out.physical_cells.push_back(built[static_cast<std::size_t>(t)]);
    return out;
  }

  /// Replaces the flat list by the trees of `specs`.
  void flatten(const std::vector<hived::physical_cell_spec>& specs, std::int32_t parent) {
    for (const auto& s : specs) {
      flat_cell c;
      c.parent = parent;
      c.spec = s;
      c.spec.children.clear();
      cells.push_back(std::move(c));
      flatten(s.children, static_cast<std::int32_t>(cells.size() - 1));
    }
  }

  hived::virtual_cluster_spec& vc(std::string_view name) {
    for (auto& v : cfg.virtual_clusters) {
      if (v.name == name) return v;
    }
    cfg.virtual_clusters.push_back(hived::virtual_cluster_spec{std::string(name), {}, {}});
    return cfg.virtual_clusters.back();
  }
};

struct hs_hived {
  struct committed_pod {
    hived::pod_request pod;
    hived::bind_info bind;
  };
  hived::scheduler scheduler;
  std::vector<std::string> nodes;
  std::map<std::string, committed_pod, std::less<>> committed;
};

namespace {

hs_status empty_name(const char* function, const char* what) {
  return fail(HS_INVALID_ARGUMENT, fmt::format("{}: {} is empty", function, what));
}

/// Reads `count` members at `members` (`what` names them in errors).
hs_status read_members(const hs_hived_member_t* members, std::uint32_t count,
                       const std::string& pod, const std::string& what,
                       std::vector<hived::member_spec>& out) {
  if (count > 0 && members == nullptr) {
    return fail(HS_INVALID_ARGUMENT,
                fmt::format("[{}]: {}members is NULL with member_count {}", pod, what, count));
  }
  out.clear();
  for (std::uint32_t i = 0; i < count; ++i) {
    out.push_back(hived::member_spec{members[i].pods, members[i].leaf_cells});
  }
  return HS_OK;
}

/// Reads `count` child groups at `groups`, nested at most HS_HIVED_MAX_GROUP_DEPTH deep (so a
/// cycle of pointers is an error, not a crash).
hs_status read_groups(const hs_hived_group_t* groups, std::uint32_t count, const std::string& pod,
                      const std::string& path, int depth, std::vector<hived::group_spec>& out) {
  if (count == 0) return HS_OK;
  if (groups == nullptr) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("[{}]: {}child_groups is NULL with "
                                                 "child_group_count {}",
                                                 pod, path, count));
  }
  if (depth > HS_HIVED_MAX_GROUP_DEPTH) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("[{}]: child groups are nested deeper than {} "
                                                 "levels",
                                                 pod, HS_HIVED_MAX_GROUP_DEPTH));
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    const hs_hived_group_t& g = groups[i];
    const std::string here = fmt::format("{}child_groups[{}].", path, i);
    hived::group_spec spec;
    if (auto s = read_members(g.members, g.member_count, pod, here, spec.members); s != HS_OK) {
      return s;
    }
    spec.within_one_cell = view(g.within_one_cell);
    if (auto s = read_groups(g.child_groups, g.child_group_count, pod, here, depth + 1,
                             spec.child_groups);
        s != HS_OK) {
      return s;
    }
    out.push_back(std::move(spec));
  }
  return HS_OK;
}

hs_status read_pod(const hs_hived_pod_t* in, hived::pod_request& out) {
  hs_hived_pod_t p;
  // Version 1 of the struct ended before cell_type.
  if (!hetsched::capi::read_struct(*in, p, offsetof(hs_hived_pod_t, cell_type))) {
    return fail(HS_INVALID_ARGUMENT,
                "pod->struct_size is smaller than the first version of hs_hived_pod_t");
  }
  if (view(p.name).empty()) return fail(HS_INVALID_ARGUMENT, "pod->name is NULL or empty");
  if (p.vc == nullptr)
    return fail(HS_INVALID_ARGUMENT, fmt::format("[{}]: pod->vc is NULL", p.name));
  std::vector<hived::member_spec> members;
  if (auto s = read_members(p.members, p.member_count, p.name, "pod->", members); s != HS_OK) {
    return s;
  }
  std::vector<hived::group_spec> child_groups;
  if (auto s = read_groups(p.child_groups, p.child_group_count, p.name, "pod->", 1, child_groups);
      s != HS_OK) {
    return s;
  }
  out.name = p.name;
  out.vc = p.vc;
  out.priority = p.priority;
  out.pinned_cell = view(p.pinned_cell);
  out.leaf_type = view(p.leaf_type);
  out.leaf_cells = p.leaf_cells;
  out.group = view(p.group);
  out.members = std::move(members);
  out.lazy_preemption = p.lazy_preemption != 0;
  out.cell_type = view(p.cell_type);
  out.within_one_cell = view(p.within_one_cell);
  out.child_groups = std::move(child_groups);
  return HS_OK;
}

/// Reads the pod of a schedule or what-if call and checks the phase and that it is not committed.
hs_status read_request(const hs_hived_t* hived, const hs_hived_pod_t* pod,
                       const hs_hived_phase& phase, hived::pod_request& out) {
  const auto raw = hetsched::capi::enum_value(phase);
  if (raw != HS_HIVED_FILTERING && raw != HS_HIVED_PREEMPTING) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("unknown phase {}", raw));
  }
  if (auto s = read_pod(pod, out); s != HS_OK) return s;
  if (hived->committed.contains(out.name)) {
    return fail(HS_ALREADY_EXISTS, fmt::format("[{}]: pod is already committed", out.name));
  }
  return HS_OK;
}

hived::phase to_phase(hs_hived_phase phase) {
  return phase == HS_HIVED_PREEMPTING ? hived::phase::preempting : hived::phase::filtering;
}

/// Puts the bind, the victims or the wait of `answer` for pod `pod` into `d`.
void fill_decision(hs_decision& d, const std::string& pod, const hived::schedule_result& answer) {
  switch (answer.kind) {
    case hived::outcome::bind: {
      hs_decision::bind_entry b;
      b.job_name = pod;
      b.node_name = answer.bind.node;
      for (int leaf : answer.bind.leaf_cells) b.gpus.push_back(static_cast<std::uint32_t>(leaf));
      d.binds.push_back(std::move(b));
      break;
    }
    case hived::outcome::preempt:
      for (const auto& [node, pods] : answer.victims_by_node) {
        for (const auto& victim : pods) {
          hs_decision::preemption_entry p;
          p.job_name = victim;
          p.node_name = node;
          p.reason = "preempted by pod " + pod;
          d.preemptions.push_back(std::move(p));
        }
      }
      break;
    case hived::outcome::wait: {
      hs_decision::deferral_entry w;
      w.job_name = pod;
      w.reason = HS_DEFER_WAIT;
      w.message = answer.wait_reason;
      d.deferrals.push_back(std::move(w));
      break;
    }
  }
}

/// Points the payload's per-pod arrays at the strings of its answer.
void index_what_if(hs_decision::hived_what_if_payload& w) {
  for (const hived::what_if_pod& p : w.answer.pods) {
    auto& gpus = w.gpus.emplace_back();
    for (int leaf : p.leaf_indices) gpus.push_back(static_cast<std::uint32_t>(leaf));
    auto strings = [](const std::vector<std::string>& in, std::vector<const char*>& out) {
      for (const std::string& x : in) out.push_back(x.c_str());
    };
    strings(p.physical_cells, w.physical_cells.emplace_back());
    strings(p.virtual_cells, w.virtual_cells.emplace_back());
    strings(p.preassigned_types, w.preassigned_types.emplace_back());
  }
}

/// The what-if payload of `decision`, or nullptr after storing the error.
const hs_decision::hived_what_if_payload* what_if_of(const hs_decision_t* decision) {
  if (decision->kind != hs_decision_kind::hived_what_if || !decision->hived_what_if) {
    fail(HS_INVALID_ARGUMENT, "decision was not made by hs_hived_what_if");
    return nullptr;
  }
  return &*decision->hived_what_if;
}

hs_status out_of_range(const char* what, std::size_t index, std::size_t count) {
  return fail(HS_OUT_OF_RANGE,
              fmt::format("{} index {} is out of range ({} entries)", what, index, count));
}

using hived_payload = hs_decision::hived_what_if_payload;

/// The body of every hs_decision_hived_*_at (as decision.cpp's entry_at for the common lists):
/// checks the handle, `out`, that the decision is a what-if answer and `index` against
/// pick(payload), then writes convert(payload, index) into *out: a string pointer, or a struct
/// through write_out (at least its size, naming `type`).
template <typename Out, typename Pick, typename Convert>
hs_status what_if_entry_at(const char* function, const hs_decision_t* decision, std::size_t index,
                           Out* out, const char* what, const char* type, Pick pick,
                           Convert convert) {
  return guard(function, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    const hived_payload* w = what_if_of(decision);
    if (w == nullptr) return HS_INVALID_ARGUMENT;
    const std::size_t count = pick(*w).size();
    if (index >= count) return out_of_range(what, index, count);
    if constexpr (std::is_pointer_v<Out>) {
      static_cast<void>(type);
      *out = convert(*w, index);
      return HS_OK;
    } else {
      return hetsched::capi::write_out(out, convert(*w, index), type);
    }
  });
}

}  // namespace

extern "C" {

HS_API hs_status hs_hived_config_new(hs_hived_config_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE(out);
    *out = hetsched::capi::adopt(std::make_unique<hs_hived_config>());
    return HS_OK;
  });
}

HS_API void hs_hived_config_free(hs_hived_config_t* config) {
  hetsched::capi::destroy_handle(config, __func__, "config");
}

HS_API hs_status hs_hived_config_add_cell_type(hs_hived_config_t* config, const char* name,
                                               const char* child_type, int32_t child_count,
                                               int32_t node_level) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(name);
    HS_CAPI_REQUIRE(child_type);
    if (*name == '\0') return empty_name(__func__, "cell type name");
    if (*child_type == '\0') return empty_name(__func__, "child type");
    if (child_count < 1) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("cell type {}: child count {} is below 1", name, child_count));
    }
    for (const auto& t : config->cfg.cell_types) {
      if (t.name == name) {
        return fail(HS_ALREADY_EXISTS, fmt::format("cell type {} defined twice", name));
      }
    }
    config->cfg.cell_types.push_back(
        hived::cell_type_spec{name, child_type, child_count, node_level != 0});
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_add_physical_cell(hs_hived_config_t* config, int32_t parent,
                                                   const char* cell_type, const char* address,
                                                   int32_t* out_index) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    if (parent != HS_HIVED_TOP_LEVEL &&
        (parent < 0 || static_cast<std::size_t>(parent) >= config->cells.size())) {
      return fail(HS_NOT_FOUND, fmt::format("parent cell index {} does not exist (config has {} "
                                            "physical cells)",
                                            parent, config->cells.size()));
    }
    if (parent == HS_HIVED_TOP_LEVEL && view(cell_type).empty()) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("top-level cell {} needs a cell type", view(address)));
    }
    hs_hived_config::flat_cell c;
    c.parent = parent;
    c.spec.cell_type = view(cell_type);
    c.spec.address = view(address);
    config->cells.push_back(std::move(c));
    if (out_index != nullptr) *out_index = static_cast<std::int32_t>(config->cells.size() - 1);
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_pin_physical_cell(hs_hived_config_t* config, int32_t index,
                                                   const char* pinned_id) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(pinned_id);
    if (index < 0 || static_cast<std::size_t>(index) >= config->cells.size()) {
      return fail(HS_NOT_FOUND, fmt::format("physical cell index {} does not exist", index));
    }
    if (*pinned_id == '\0') return empty_name(__func__, "pinned id");
    config->cells[static_cast<std::size_t>(index)].spec.pinned_id = pinned_id;
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_add_virtual_cells(hs_hived_config_t* config, const char* vc,
                                                   const char* type_path, int32_t count) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(vc);
    if (*vc == '\0') return empty_name(__func__, "VC name");
    if (count < 0) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("VC {}: negative cell count {}", vc, count));
    }
    if (count > 0 && view(type_path).empty()) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("VC {}: empty cell type path", vc));
    }
    auto& spec = config->vc(vc);
    if (count > 0) spec.virtual_cells.push_back(hived::virtual_cell_spec{type_path, count});
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_add_pinned_cells(hs_hived_config_t* config, const char* vc,
                                                  const char* pinned_id) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(vc);
    HS_CAPI_REQUIRE(pinned_id);
    if (*vc == '\0') return empty_name(__func__, "VC name");
    if (*pinned_id == '\0') return empty_name(__func__, "pinned id");
    config->vc(vc).pinned_cells.emplace_back(pinned_id);
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_derive_cells(hs_hived_config_t* config,
                                              const hs_cluster_t* cluster, int32_t rack_cells) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE_HANDLE(cluster);
    hived::derive_options opts;
    opts.top = rack_cells != 0 ? hived::top_cell_level::rack : hived::top_cell_level::node;
    auto derived = hived::derive_cells(cluster->topology, opts);
    if (!derived) return fail(derived.error());
    std::vector<hs_hived_config::flat_cell> cells;
    std::swap(cells, config->cells);
    try {
      config->flatten(derived->physical_cells, HS_HIVED_TOP_LEVEL);
    } catch (...) {
      config->cells = std::move(cells);
      throw;
    }
    config->cfg.cell_types = std::move(derived->cell_types);
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_from_json(const char* text, size_t length,
                                           hs_hived_config_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE(text);
    HS_CAPI_REQUIRE(out);
    auto parsed = hived::parse_config_json(std::string_view(text, length));
    if (!parsed) return fail(parsed.error(), HS_PARSE_ERROR);
    auto config = std::make_unique<hs_hived_config>();
    config->flatten(parsed->physical_cells, HS_HIVED_TOP_LEVEL);
    parsed->physical_cells.clear();
    config->cfg = std::move(*parsed);
    *out = hetsched::capi::adopt(std::move(config));
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_to_json(hs_hived_config_t* config, const char** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(out);
    config->json = hived::to_json(config->assemble());
    *out = config->json.c_str();
    return HS_OK;
  });
}

HS_API hs_status hs_hived_config_set_option(hs_hived_config_t* config, const char* name,
                                            int32_t enabled) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(name);
    const std::string_view option(name);
    if (option == "multiCellPods") {
      config->cfg.opts.multi_cell_pods = enabled != 0;
    } else if (option == "cellTypeRequests") {
      config->cfg.opts.cell_type_requests = enabled != 0;
    } else {
      return fail(HS_NOT_FOUND, fmt::format("unknown HiveD option '{}' (options: multiCellPods, "
                                            "cellTypeRequests)",
                                            option));
    }
    return HS_OK;
  });
}

HS_API size_t hs_hived_config_cell_type_count(const hs_hived_config_t* config) {
  return hetsched::capi::readable(config, __func__, "config") ? config->cfg.cell_types.size() : 0;
}

HS_API hs_status hs_hived_config_cell_type_name(const hs_hived_config_t* config, size_t index,
                                                const char** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(out);
    if (index >= config->cfg.cell_types.size()) {
      return fail(HS_OUT_OF_RANGE, fmt::format("cell type index {} is out of range ({} types)",
                                               index, config->cfg.cell_types.size()));
    }
    *out = config->cfg.cell_types[index].name.c_str();
    return HS_OK;
  });
}

HS_API hs_status hs_hived_new(const hs_hived_config_t* config, hs_hived_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(config);
    HS_CAPI_REQUIRE(out);
    auto created = hived::scheduler::create(config->assemble());
    if (!created) return fail(created.error());
    created->mark_all_nodes_healthy();
    auto nodes = created->nodes();
    *out = hetsched::capi::adopt(
        std::make_unique<hs_hived>(hs_hived{std::move(*created), std::move(nodes), {}}));
    return HS_OK;
  });
}

HS_API void hs_hived_free(hs_hived_t* hived) {
  hetsched::capi::destroy_handle(hived, __func__, "hived");
}

HS_API hs_status hs_hived_schedule(hs_hived_t* hived, const hs_hived_pod_t* pod,
                                   hs_hived_phase phase, hs_decision_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(hived);
    HS_CAPI_REQUIRE(pod);
    HS_CAPI_REQUIRE(out);
    hived::pod_request request;
    if (auto s = read_request(hived, pod, phase, request); s != HS_OK) return s;
    auto answer = hived->scheduler.schedule(request, hived::node_filter{}, to_phase(phase));
    if (!answer) return fail(answer.error());
    auto d = std::make_unique<hs_decision>();
    d->kind = hs_decision_kind::hived;
    d->owner = hived;
    fill_decision(*d, request.name, *answer);
    if (answer->kind == hived::outcome::bind) d->hived_bind = std::move(answer->bind);
    d->hived_pod = std::move(request);
    *out = hetsched::capi::adopt(std::move(d));
    return HS_OK;
  });
}

HS_API hs_status hs_hived_what_if(const hs_hived_t* hived, const hs_hived_pod_t* pod,
                                  hs_hived_phase phase, hs_decision_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(hived);
    HS_CAPI_REQUIRE(pod);
    HS_CAPI_REQUIRE(out);
    hived::pod_request request;
    if (auto s = read_request(hived, pod, phase, request); s != HS_OK) return s;
    auto answer = hived->scheduler.what_if_on_copy(request, hived::node_filter{}, to_phase(phase));
    if (!answer) return fail(answer.error());
    auto d = std::make_unique<hs_decision>();
    d->kind = hs_decision_kind::hived_what_if;
    d->owner = hived;
    fill_decision(*d, request.name, answer->decision);
    d->hived_pod = std::move(request);
    auto& payload = d->hived_what_if.emplace();
    payload.answer = std::move(*answer);
    index_what_if(payload);
    *out = hetsched::capi::adopt(std::move(d));
    return HS_OK;
  });
}

HS_API hs_status hs_decision_hived_what_if(const hs_decision_t* decision, hs_hived_what_if_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    const auto* w = what_if_of(decision);
    if (w == nullptr) return HS_INVALID_ARGUMENT;
    const hived::what_if_answer& a = w->answer;
    hs_hived_what_if_t v{};
    v.outcome = static_cast<std::int32_t>(a.decision.kind);
    v.group = a.group.c_str();
    v.existing_group =
        a.existing_group ? static_cast<std::int32_t>(*a.existing_group) + 1 : HS_HIVED_GROUP_NEW;
    v.chain = a.chain.c_str();
    v.wait_reason = a.decision.wait_reason.c_str();
    v.pod_count = static_cast<std::uint32_t>(a.pods.size());
    v.victim_count = static_cast<std::uint32_t>(a.victims.size());
    v.lazy_preempted_count = static_cast<std::uint32_t>(a.lazy_preempted_groups.size());
    v.cancelled_preemption_count = static_cast<std::uint32_t>(a.cancelled_preemptions.size());
    v.starts_preemption = a.starts_preemption ? 1 : 0;
    if (!hetsched::capi::write_struct(out, v)) {
      return fail(HS_INVALID_ARGUMENT,
                  "out->struct_size is smaller than sizeof(hs_hived_what_if_t)");
    }
    return HS_OK;
  });
}

HS_API hs_status hs_decision_hived_pod_at(const hs_decision_t* decision, size_t index,
                                          hs_hived_placed_pod_t* out) {
  return what_if_entry_at(
      __func__, decision, index, out, "pod", "hs_hived_placed_pod_t",
      [](const hived_payload& w) -> const auto& { return w.answer.pods; },
      [](const hived_payload& w, std::size_t i) {
        const hived::what_if_pod& p = w.answer.pods[i];
        hs_hived_placed_pod_t v{};
        v.leaf_cells = p.leaf_cells;
        v.index = p.index;
        v.node = p.node.c_str();
        v.gpus = w.gpus[i].data();
        v.gpu_count = static_cast<std::uint32_t>(w.gpus[i].size());
        v.physical_cells = w.physical_cells[i].data();
        v.virtual_cells = w.virtual_cells[i].data();
        v.preassigned_types = w.preassigned_types[i].data();
        return v;
      });
}

HS_API hs_status hs_decision_hived_victim_at(const hs_decision_t* decision, size_t index,
                                             hs_hived_victim_t* out) {
  return what_if_entry_at(
      __func__, decision, index, out, "victim", "hs_hived_victim_t",
      [](const hived_payload& w) -> const auto& { return w.answer.victims; },
      [](const hived_payload& w, std::size_t i) {
        const hived::what_if_victim& x = w.answer.victims[i];
        hs_hived_victim_t v{};
        v.pod = x.pod.c_str();
        v.node = x.node.c_str();
        v.group = x.group.c_str();
        v.vc = x.vc.c_str();
        v.priority = x.priority;
        v.guaranteed_placement = x.guaranteed_placement ? 1 : 0;
        return v;
      });
}

HS_API hs_status hs_decision_hived_lazy_preempted_at(const hs_decision_t* decision, size_t index,
                                                     const char** group) {
  return what_if_entry_at(
      __func__, decision, index, group, "lazy-preempted group", nullptr,
      [](const hived_payload& w) -> const auto& { return w.answer.lazy_preempted_groups; },
      [](const hived_payload& w, std::size_t i) {
        return w.answer.lazy_preempted_groups[i].c_str();
      });
}

HS_API hs_status hs_decision_hived_cancelled_preemption_at(const hs_decision_t* decision,
                                                           size_t index, const char** group) {
  return what_if_entry_at(
      __func__, decision, index, group, "cancelled preemption", nullptr,
      [](const hived_payload& w) -> const auto& { return w.answer.cancelled_preemptions; },
      [](const hived_payload& w, std::size_t i) {
        return w.answer.cancelled_preemptions[i].c_str();
      });
}

HS_API uint64_t hs_hived_state_digest(const hs_hived_t* hived) {
  return hetsched::capi::readable(hived, __func__, "hived") ? hived->scheduler.state_digest() : 0;
}

HS_API hs_status hs_hived_commit(hs_hived_t* hived, const hs_decision_t* decision) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(hived);
    HS_CAPI_REQUIRE_HANDLE(decision);
    if (decision->kind == hs_decision_kind::hived_what_if) {
      return fail(HS_INVALID_ARGUMENT,
                  "a decision of hs_hived_what_if cannot be committed; commit the decision of "
                  "hs_hived_schedule");
    }
    if (decision->kind != hs_decision_kind::hived || decision->owner != hived ||
        !decision->hived_pod) {
      return fail(HS_INVALID_ARGUMENT,
                  "decision was not made by hs_hived_schedule on this scheduler");
    }
    const auto& pod = *decision->hived_pod;
    if (!decision->hived_bind) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("[{}]: decision holds no bind", pod.name));
    }
    if (hived->committed.contains(pod.name)) {
      return fail(HS_ALREADY_EXISTS, fmt::format("[{}]: pod is already committed", pod.name));
    }
    // Reserve the map entry first so the commit below cannot be followed by a failed insert.
    auto [it, inserted] =
        hived->committed.emplace(pod.name, hs_hived::committed_pod{pod, *decision->hived_bind});
    if (auto r = hived->scheduler.add_allocated(pod, *decision->hived_bind); !r) {
      hived->committed.erase(it);
      return fail(r.error());
    }
    return HS_OK;
  });
}

HS_API hs_status hs_hived_release(hs_hived_t* hived, const char* pod_name) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(hived);
    HS_CAPI_REQUIRE(pod_name);
    auto it = hived->committed.find(std::string_view(pod_name));
    if (it == hived->committed.end()) {
      return fail(HS_NOT_FOUND, fmt::format("[{}]: pod is not committed", pod_name));
    }
    if (auto r = hived->scheduler.delete_allocated(it->second.pod, it->second.bind); !r) {
      return fail(r.error());
    }
    hived->committed.erase(it);
    return HS_OK;
  });
}

HS_API hs_status hs_hived_set_node_health(hs_hived_t* hived, const char* node, int32_t healthy) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(hived);
    HS_CAPI_REQUIRE(node);
    const std::string name(node);
    if (std::find(hived->nodes.begin(), hived->nodes.end(), name) == hived->nodes.end()) {
      return fail(HS_NOT_FOUND, fmt::format("node {} is not in the HiveD config", name));
    }
    if (healthy != 0) {
      hived->scheduler.set_node_healthy(name);
    } else {
      hived->scheduler.set_node_bad(name);
    }
    return HS_OK;
  });
}

HS_API size_t hs_hived_node_count(const hs_hived_t* hived) {
  return hetsched::capi::readable(hived, __func__, "hived") ? hived->nodes.size() : 0;
}

HS_API hs_status hs_hived_node_name(const hs_hived_t* hived, size_t index, const char** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(hived);
    HS_CAPI_REQUIRE(out);
    if (index >= hived->nodes.size()) {
      return fail(HS_OUT_OF_RANGE, fmt::format("node index {} is out of range ({} nodes)", index,
                                               hived->nodes.size()));
    }
    *out = hived->nodes[index].c_str();
    return HS_OK;
  });
}

}  // extern "C"
