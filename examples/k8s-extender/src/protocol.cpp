// SPDX-License-Identifier: MIT
// JSON (de)serialisation of the scheduler extender v1 protocol.
#include "protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <utility>

#include "pod_spec_yaml.hpp"
#include "try_assign.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

constexpr std::string_view gpu_resource = "nvidia.com/gpu";

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

const json* member(const json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// Returns the integer `j` if it lies in [lo, hi]. A JSON number above INT64_MAX is unsigned in
// nlohmann and would read back negative as int64, so it is range-checked as unsigned.
result<std::int64_t> bounded_integer(const json& j, std::int64_t lo, std::int64_t hi,
                                     std::string_view field) {
  const bool in_range =
      j.is_number_unsigned()
          ? j.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)
          : j.is_number_integer() && j.get<std::int64_t>() >= lo && j.get<std::int64_t>() <= hi;
  if (!in_range)
    return make_error(errc::invalid_argument, "{} must be an integer in [{}, {}]", field, lo, hi);
  return j.get<std::int64_t>();
}

result<std::map<std::string, std::string>> string_map(const json* j, std::string_view field) {
  std::map<std::string, std::string> out;
  if (j == nullptr || j->is_null()) return out;
  if (!j->is_object()) return make_error(errc::invalid_argument, "{} must be an object", field);
  for (const auto& [k, v] : j->items()) {
    if (!v.is_string())
      return make_error(errc::invalid_argument, "{}[{}] must be a string", field, k);
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

result<std::string> required_string(const json& j, std::string_view key, std::string_view where) {
  const json* v = find_key(j, key);
  if (v == nullptr || !v->is_string())
    return make_error(errc::invalid_argument, "{}: missing string field {}", where, key);
  return v->get<std::string>();
}

// Returns the GPU count requested by one container (request, else limit).
result<std::int64_t> container_gpus(const json& c, std::string_view where) {
  const json* res = member(c, "resources");
  if (res == nullptr || res->is_null()) return std::int64_t{0};
  for (const char* part : {"requests", "limits"}) {
    const json* m = member(*res, part);
    if (m == nullptr) continue;
    const json* q = member(*m, gpu_resource);
    if (q == nullptr) continue;
    auto n = decode_gpu_quantity(*q);
    if (!n)
      return make_error(errc::invalid_argument, "{}.resources.{}[nvidia.com/gpu]: {}", where, part,
                        n.error().message);
    return *n;
  }
  return std::int64_t{0};
}

result<std::int64_t> sum_containers(const json* list, std::string_view field, bool take_max) {
  std::int64_t total = 0;
  if (list == nullptr || list->is_null()) return total;
  if (!list->is_array()) return make_error(errc::invalid_argument, "{} must be an array", field);
  std::size_t i = 0;
  for (const auto& c : *list) {
    std::string where(field);
    where.append("[").append(std::to_string(i++)).append("]");
    K8S_TRY_ASSIGN(auto n, container_gpus(c, where));
    // each n <= max_gpu_quantity, so the sum cannot overflow before this check stops it
    total = take_max ? std::max(total, n) : total + n;
    if (total > max_gpu_quantity)
      return make_error(errc::invalid_argument,
                        "{}: the nvidia.com/gpu quantities add up to {}, above the limit of {}",
                        field, total, max_gpu_quantity);
  }
  return total;
}

result<meta_victims> decode_meta_victims(const json& j, std::string_view where, bool full_pods) {
  meta_victims out;
  if (j.is_null()) return out;
  if (!j.is_object()) return make_error(errc::invalid_argument, "{} must be an object", where);
  if (const json* pods = find_key(j, "Pods"); pods != nullptr && !pods->is_null()) {
    if (!pods->is_array())
      return make_error(errc::invalid_argument, "{}.Pods must be an array", where);
    for (const auto& p : *pods) {
      if (full_pods) {
        const json* meta = member(p, "metadata");
        const json* uid = meta == nullptr ? nullptr : member(*meta, "uid");
        if (uid == nullptr || !uid->is_string())
          return make_error(errc::invalid_argument, "{}.Pods: a pod without metadata.uid", where);
        out.pod_uids.push_back(uid->get<std::string>());
      } else {
        K8S_TRY_ASSIGN(auto uid, required_string(p, "UID", where));
        out.pod_uids.push_back(std::move(uid));
      }
    }
  }
  if (const json* n = find_key(j, "NumPDBViolations"); n != nullptr && !n->is_null()) {
    K8S_TRY_ASSIGN(out.num_pdb_violations,
                   bounded_integer(*n, 0, std::numeric_limits<std::int32_t>::max(),
                                   fmt::format("{}.NumPDBViolations", where)));
  }
  return out;
}

result<void> decode_victim_map(const json* m, std::string_view field, bool full_pods,
                               std::map<std::string, meta_victims>& out) {
  if (m == nullptr || m->is_null()) return {};
  if (!m->is_object()) return make_error(errc::invalid_argument, "{} must be an object", field);
  for (const auto& [node, v] : m->items()) {
    std::string where(field);
    where.append("[").append(node).append("]");
    K8S_TRY_ASSIGN(auto victims, decode_meta_victims(v, where, full_pods));
    out.insert_or_assign(node, std::move(victims));
  }
  return {};
}

result<node_health> decode_node_health(const json& node, const std::string& name) {
  if (const json* spec = member(node, "spec"); spec != nullptr) {
    const json* u = member(*spec, "unschedulable");
    if (u != nullptr && !u->is_null() && !u->is_boolean())
      return make_error(errc::invalid_argument, "Node {}: spec.unschedulable must be a boolean",
                        name);
    if (u != nullptr && u->is_boolean() && u->get<bool>()) return node_health::unschedulable;
  }
  const json* status = member(node, "status");
  const json* conditions = status == nullptr ? nullptr : member(*status, "conditions");
  if (conditions == nullptr || conditions->is_null()) return node_health::unknown;
  if (!conditions->is_array())
    return make_error(errc::invalid_argument, "Node {}: status.conditions must be an array", name);
  for (const auto& c : *conditions) {
    const json* type = member(c, "type");
    const json* st = member(c, "status");
    if (type != nullptr && type->is_string() && type->get_ref<const std::string&>() == "Ready")
      return st != nullptr && st->is_string() && st->get_ref<const std::string&>() == "True"
                 ? node_health::ready
                 : node_health::not_ready;
  }
  return node_health::not_ready;
}

json encode_victims(const meta_victims& v) {
  json pods = json::array();
  for (const auto& uid : v.pod_uids) pods.push_back(json{{"UID", uid}});
  return json{{"Pods", std::move(pods)}, {"NumPDBViolations", v.num_pdb_violations}};
}

}  // namespace

const json* find_key(const json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  if (auto it = j.find(key); it != j.end()) return &*it;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (iequal(it.key(), key)) return &*it;
  return nullptr;
}

result<json> parse_json(std::string_view text) {
  // nlohmann reports the error position only through its exception.
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // parse_error for syntax, out_of_range (406) for a number beyond double such as 1e400
    return make_error(errc::invalid_argument, "malformed JSON: {}", ascii_only(e.what()));
  }
}

result<std::int64_t> decode_gpu_quantity(const json& q) {
  if (q.is_number_unsigned()) {
    const auto v = q.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(max_gpu_quantity))
      return make_error(errc::invalid_argument, "quantity {} is above the limit of {}", v,
                        max_gpu_quantity);
    return static_cast<std::int64_t>(v);
  }
  if (q.is_number_integer()) {
    auto v = q.get<std::int64_t>();
    if (v < 0) return make_error(errc::invalid_argument, "negative quantity {}", v);
    return v;
  }
  if (!q.is_string()) return make_error(errc::invalid_argument, "quantity must be a string");
  const std::string s = q.get<std::string>();
  std::string_view digits = s;
  bool milli = false;
  if (!digits.empty() && digits.back() == 'm') {
    milli = true;
    digits.remove_suffix(1);
  }
  if (digits.empty() || digits.size() > 15 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return make_error(errc::invalid_argument, "quantity '{}' is not a whole number", s);
  std::int64_t v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  if (milli) {
    if (v % 1000 != 0)
      return make_error(errc::invalid_argument, "quantity '{}' is not a whole number", s);
    v /= 1000;
  }
  if (v > max_gpu_quantity)
    return make_error(errc::invalid_argument, "quantity '{}' is above the limit of {}", s,
                      max_gpu_quantity);
  return v;
}

result<pod_info> decode_pod(const json& pod) {
  if (!pod.is_object()) return make_error(errc::invalid_argument, "Pod must be an object");
  const json* meta = member(pod, "metadata");
  if (meta == nullptr || !meta->is_object())
    return make_error(errc::invalid_argument, "Pod: missing metadata");
  pod_info out;
  const json* name = member(*meta, "name");
  const json* uid = member(*meta, "uid");
  if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty())
    return make_error(errc::invalid_argument, "Pod: missing metadata.name");
  if (uid == nullptr || !uid->is_string() || uid->get_ref<const std::string&>().empty())
    return make_error(errc::invalid_argument, "Pod {}: missing metadata.uid",
                      name->get<std::string>());
  out.name = name->get<std::string>();
  out.uid = uid->get<std::string>();
  out.name_space = "default";
  if (const json* ns = member(*meta, "namespace"); ns != nullptr && ns->is_string())
    out.name_space = ns->get<std::string>();
  K8S_TRY_ASSIGN(out.annotations, string_map(member(*meta, "annotations"), "metadata.annotations"));
  const json* spec = member(pod, "spec");
  if (spec != nullptr && spec->is_object()) {
    K8S_TRY_ASSIGN(out.node_selector,
                   string_map(member(*spec, "nodeSelector"), "spec.nodeSelector"));
    K8S_TRY_ASSIGN(auto regular,
                   sum_containers(member(*spec, "containers"), "spec.containers", false));
    K8S_TRY_ASSIGN(auto init,
                   sum_containers(member(*spec, "initContainers"), "spec.initContainers", true));
    out.gpus = std::max(regular, init);
    if (const json* prio = member(*spec, "priority"); prio != nullptr && !prio->is_null()) {
      using limits = std::numeric_limits<std::int32_t>;
      K8S_TRY_ASSIGN(out.priority, bounded_integer(*prio, limits::min(), limits::max(),
                                                   fmt::format("Pod {}: spec.priority", out.name)));
    }
  }
  return out;
}

result<extender_args> decode_extender_args(const json& j) {
  if (!j.is_object()) return make_error(errc::invalid_argument, "ExtenderArgs must be an object");
  extender_args out;
  const json* pod = find_key(j, "Pod");
  if (pod == nullptr || pod->is_null())
    return make_error(errc::invalid_argument, "ExtenderArgs: missing Pod");
  K8S_TRY_ASSIGN(out.pod, decode_pod(*pod));
  const json* names = find_key(j, "NodeNames");
  const json* nodes = find_key(j, "Nodes");
  if (names != nullptr && !names->is_null()) {
    if (!names->is_array())
      return make_error(errc::invalid_argument, "ExtenderArgs.NodeNames must be an array");
    for (const auto& n : *names) {
      if (!n.is_string())
        return make_error(errc::invalid_argument, "ExtenderArgs.NodeNames: non-string entry");
      out.nodes.push_back(node_info{n.get<std::string>(), {}});
    }
  } else if (nodes != nullptr && !nodes->is_null()) {
    const json* items = member(*nodes, "items");
    if (items == nullptr || !items->is_array())
      return make_error(errc::invalid_argument, "ExtenderArgs.Nodes: missing items array");
    out.nodes_as_objects = true;
    std::size_t i = 0;
    for (const auto& n : *items) {
      const json* meta = member(n, "metadata");
      const json* name = meta == nullptr ? nullptr : member(*meta, "name");
      if (name == nullptr || !name->is_string())
        return make_error(errc::invalid_argument, "ExtenderArgs.Nodes.items[{}]: missing name", i);
      node_info info{name->get<std::string>(), {}};
      K8S_TRY_ASSIGN(info.labels, string_map(member(*meta, "labels"), "Node metadata.labels"));
      K8S_TRY_ASSIGN(info.health, decode_node_health(n, info.name));
      out.nodes.push_back(std::move(info));
      out.node_objects.push_back(n);
      ++i;
    }
  } else {
    return make_error(errc::invalid_argument, "ExtenderArgs: neither NodeNames nor Nodes");
  }
  return out;
}

result<preemption_args> decode_preemption_args(const json& j) {
  if (!j.is_object())
    return make_error(errc::invalid_argument, "ExtenderPreemptionArgs must be an object");
  preemption_args out;
  const json* pod = find_key(j, "Pod");
  if (pod == nullptr || pod->is_null())
    return make_error(errc::invalid_argument, "ExtenderPreemptionArgs: missing Pod");
  K8S_TRY_ASSIGN(out.pod, decode_pod(*pod));
  HETSCHED_TRY(decode_victim_map(find_key(j, "NodeNameToVictims"), "NodeNameToVictims", true,
                                 out.node_victims));
  HETSCHED_TRY(decode_victim_map(find_key(j, "NodeNameToMetaVictims"), "NodeNameToMetaVictims",
                                 false, out.node_victims));
  return out;
}

result<binding_args> decode_binding_args(const json& j) {
  if (!j.is_object())
    return make_error(errc::invalid_argument, "ExtenderBindingArgs must be an object");
  binding_args out;
  constexpr std::string_view where = "ExtenderBindingArgs";
  K8S_TRY_ASSIGN(out.pod_name, required_string(j, "PodName", where));
  K8S_TRY_ASSIGN(out.pod_namespace, required_string(j, "PodNamespace", where));
  K8S_TRY_ASSIGN(out.pod_uid, required_string(j, "PodUID", where));
  K8S_TRY_ASSIGN(out.node, required_string(j, "Node", where));
  if (out.pod_uid.empty() || out.node.empty())
    return make_error(errc::invalid_argument, "{}: empty PodUID or Node", where);
  return out;
}

result<filter_result> decode_filter_result(const json& j) {
  if (!j.is_object())
    return make_error(errc::invalid_argument, "ExtenderFilterResult must be an object");
  filter_result out;
  if (const json* names = find_key(j, "NodeNames"); names != nullptr && names->is_array()) {
    for (const auto& n : *names) out.node_names.push_back(n.get<std::string>());
  } else if (const json* nodes = find_key(j, "Nodes"); nodes != nullptr && nodes->is_object()) {
    if (const json* items = member(*nodes, "items"); items != nullptr && items->is_array())
      for (const auto& n : *items) out.node_names.push_back(n["metadata"]["name"]);
  }
  K8S_TRY_ASSIGN(out.failed_nodes, string_map(find_key(j, "FailedNodes"), "FailedNodes"));
  K8S_TRY_ASSIGN(out.failed_and_unresolvable, string_map(find_key(j, "FailedAndUnresolvableNodes"),
                                                         "FailedAndUnresolvableNodes"));
  if (const json* e = find_key(j, "Error"); e != nullptr && e->is_string())
    out.error = e->get<std::string>();
  return out;
}

result<std::vector<host_priority>> decode_host_priorities(const json& j) {
  if (!j.is_array()) return make_error(errc::invalid_argument, "HostPriorityList must be an array");
  std::vector<host_priority> out;
  for (const auto& h : j) {
    K8S_TRY_ASSIGN(auto host, required_string(h, "Host", "HostPriority"));
    const json* s = find_key(h, "Score");
    if (s == nullptr)
      return make_error(errc::invalid_argument, "HostPriority {}: missing Score", host);
    K8S_TRY_ASSIGN(auto score, bounded_integer(*s, 0, max_extender_priority,
                                               fmt::format("HostPriority {}: Score", host)));
    out.push_back(host_priority{std::move(host), score});
  }
  return out;
}

result<preemption_result> decode_preemption_result(const json& j) {
  if (!j.is_object())
    return make_error(errc::invalid_argument, "ExtenderPreemptionResult must be an object");
  preemption_result out;
  HETSCHED_TRY(decode_victim_map(find_key(j, "NodeNameToMetaVictims"), "NodeNameToMetaVictims",
                                 false, out.node_victims));
  return out;
}

result<binding_result> decode_binding_result(const json& j) {
  if (!j.is_object())
    return make_error(errc::invalid_argument, "ExtenderBindingResult must be an object");
  binding_result out;
  if (const json* e = find_key(j, "Error"); e != nullptr && e->is_string())
    out.error = e->get<std::string>();
  return out;
}

json encode(const filter_result& r, const extender_args& args) {
  json out = json::object();
  if (args.nodes_as_objects) {
    json items = json::array();
    for (std::size_t i = 0; i < args.nodes.size(); ++i)
      if (std::find(r.node_names.begin(), r.node_names.end(), args.nodes[i].name) !=
          r.node_names.end())
        items.push_back(args.node_objects[i]);
    out["Nodes"] = json{{"metadata", json::object()}, {"items", std::move(items)}};
    out["NodeNames"] = nullptr;
  } else {
    out["Nodes"] = nullptr;
    out["NodeNames"] = r.node_names;
  }
  out["FailedNodes"] = r.failed_nodes;
  out["FailedAndUnresolvableNodes"] = r.failed_and_unresolvable;
  out["Error"] = r.error;
  return out;
}

json encode(const std::vector<host_priority>& list) {
  json out = json::array();
  for (const auto& h : list) out.push_back(json{{"Host", h.host}, {"Score", h.score}});
  return out;
}

json encode(const preemption_result& r) {
  json m = json::object();
  for (const auto& [node, v] : r.node_victims) m[node] = encode_victims(v);
  return json{{"NodeNameToMetaVictims", std::move(m)}};
}

json encode(const binding_result& r) { return json{{"Error", r.error}}; }

json encode(const binding_args& a) {
  return json{{"PodName", a.pod_name},
              {"PodNamespace", a.pod_namespace},
              {"PodUID", a.pod_uid},
              {"Node", a.node}};
}

}  // namespace hetsched::k8s
