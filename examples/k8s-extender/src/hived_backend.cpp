// SPDX-License-Identifier: MIT
// The HiveD backend: hivedscheduler's pod-scheduling-spec annotation on hived::scheduler.
//
// The annotation is hivedscheduler's PodSchedulingSpec in YAML or JSON (pod_scheduling_spec.hpp);
// its v2 fields (cellType, affinityGroup.withinOneCell and .childGroups) are read only when the
// config enables options::cell_type_requests.
// A pod is known to HiveD by its UID (hived::pod_request::name), so HiveD's victims are pod UIDs,
// which is what ExtenderPreemptionResult carries. Without an affinityGroup the pod is a one-pod
// group named "namespace/name", as in hivedscheduler. filter: schedule(Filtering) over the
// candidates; a bind result passes only HiveD's node (hivedscheduler does the same), a preempt
// result fails every candidate in FailedNodes (so kube-scheduler calls preempt) and a wait
// fails them all with HiveD's reason. prioritize: HiveD's node scores 10, the others 0.
// preempt: schedule(Preempting), which creates HiveD's preemption state; victims on the
// candidate nodes only. bind: schedule(Filtering) on the bind node must give a bind there, then
// add_allocated(); the bind info is hivedscheduler's PodBindInfo as JSON. Node health from Node
// objects: a node seen unschedulable or not Ready is set_node_bad(), and set_node_healthy() when
// seen Ready again; HiveD then avoids it (a placement reaching a bad node waits).
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include <hetsched/policies/hived.hpp>

#include "backend.hpp"
#include "pod_scheduling_spec.hpp"
#include "try_assign.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

/// Parses and validates the annotation (YAML or JSON) as hivedscheduler's ExtractPodSchedulingSpec
/// does; see pod_scheduling_spec.hpp.
result<hived::pod_request> parse_spec(const pod_info& pod, spec_options opts) {
  auto it = pod.annotations.find(std::string(hived_spec_annotation));
  if (it == pod.annotations.end())
    return make_error(errc::invalid_argument, "pod {}/{} has no {} annotation", pod.name_space,
                      pod.name, hived_spec_annotation);
  auto spec = parse_pod_scheduling_spec(it->second, opts);
  if (!spec)
    return make_error(errc::invalid_argument, "pod {}/{} annotation {}: {}", pod.name_space,
                      pod.name, hived_spec_annotation, spec.error().message);
  return to_pod_request(*spec, pod.uid, pod.name_space, pod.name);
}

json bind_info_json(const hived::bind_info& b) {
  json groups = json::array();
  for (const auto& [leaves, pods] : b.group_placements) {
    json placements = json::array();
    for (const auto& p : pods)
      placements.push_back(json{{"physicalNode", p.node},
                                {"physicalLeafCellIndices", p.leaf_cells},
                                {"preassignedCellTypes", p.preassigned_types}});
    groups.push_back(json{{"podPlacements", std::move(placements)}});
  }
  return json{{"node", b.node},
              {"leafCellIsolation", b.leaf_cells},
              {"cellChain", b.chain},
              {"affinityGroupBindInfo", std::move(groups)}};
}

result<std::vector<std::string>> strings_of(const json& j, std::string_view field) {
  std::vector<std::string> out;
  if (j.is_null()) return out;
  if (!j.is_array()) return make_error(errc::invalid_argument, "{} must be an array", field);
  for (const auto& v : j) {
    if (!v.is_string()) return make_error(errc::invalid_argument, "{}: not a string", field);
    out.push_back(v.get<std::string>());
  }
  return out;
}

result<std::vector<int>> ints_of(const json& j, std::string_view field) {
  std::vector<int> out;
  if (j.is_null()) return out;
  if (!j.is_array()) return make_error(errc::invalid_argument, "{} must be an array", field);
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1'000'000)
      return make_error(errc::invalid_argument, "{}: not an index", field);
    out.push_back(static_cast<int>(v.get<std::int64_t>()));
  }
  return out;
}

/// The inverse of bind_info_json: hivedscheduler's PodBindInfo as JSON. The placements of an
/// affinityGroupBindInfo entry are keyed by their leaf count.
result<hived::bind_info> bind_info_of(const json& j) {
  if (!j.is_object()) return make_error(errc::invalid_argument, "bind info must be an object");
  hived::bind_info b;
  const auto node = j.find("node");
  const auto chain = j.find("cellChain");
  if (node == j.end() || !node->is_string() || chain == j.end() || !chain->is_string())
    return make_error(errc::invalid_argument, "bind info needs node and cellChain strings");
  b.node = node->get<std::string>();
  b.chain = chain->get<std::string>();
  K8S_TRY_ASSIGN(b.leaf_cells, ints_of(j.value("leafCellIsolation", json()), "leafCellIsolation"));
  const json groups = j.value("affinityGroupBindInfo", json::array());
  if (!groups.is_array())
    return make_error(errc::invalid_argument, "affinityGroupBindInfo must be an array");
  for (const auto& g : groups) {
    const json placements = g.is_object() ? g.value("podPlacements", json()) : json();
    if (!placements.is_array())
      return make_error(errc::invalid_argument, "affinityGroupBindInfo[].podPlacements missing");
    for (const auto& p : placements) {
      if (!p.is_object() || !p.contains("physicalNode") || !p["physicalNode"].is_string())
        return make_error(errc::invalid_argument, "podPlacements[].physicalNode missing");
      hived::pod_placement pp;
      pp.node = p["physicalNode"].get<std::string>();
      K8S_TRY_ASSIGN(pp.leaf_cells, ints_of(p.value("physicalLeafCellIndices", json()),
                                            "physicalLeafCellIndices"));
      K8S_TRY_ASSIGN(pp.preassigned_types,
                     strings_of(p.value("preassignedCellTypes", json()), "preassignedCellTypes"));
      b.group_placements[static_cast<int>(pp.leaf_cells.size())].push_back(std::move(pp));
    }
  }
  return b;
}

class hived_backend final : public backend {
 public:
  hived_backend(hived::scheduler s, const hived::config& cfg)
      : s_(std::move(s)), opts_{cfg.opts.cell_type_requests} {
    for (const auto& n : s_.nodes()) nodes_.insert(n);
    for (const auto& c : s_.top_level_cells()) {
      if (std::find(chains_.begin(), chains_.end(), c.chain) == chains_.end())
        chains_.push_back(c.chain);
    }
    for (const auto& vc : cfg.virtual_clusters) vcs_.push_back(vc.name);
    for (const auto& c : s_.node_level_cells())
      total_ += static_cast<std::int64_t>(c.leaf_indices.size());
  }

  [[nodiscard]] std::string_view kind() const noexcept override { return "hived"; }
  [[nodiscard]] bool knows_node(const std::string& node) const override {
    return nodes_.count(node) != 0;
  }
  result<void> check_pod(const pod_info& pod) const override {
    HETSCHED_TRY(parse_spec(pod, opts_));
    return {};
  }

  result<filter_result> filter(const pod_info& pod, const std::vector<node_info>& nodes) override {
    K8S_TRY_ASSIGN(auto req, parse_spec(pod, opts_));
    K8S_TRY_ASSIGN(auto r, schedule(pod, req, suggested(nodes), hived::phase::filtering));
    filter_result out;
    for (const auto& n : nodes) {
      if (r.kind == hived::outcome::bind && n.name == r.bind.node) {
        out.node_names.push_back(n.name);
      } else if (r.kind == hived::outcome::bind) {
        out.failed_nodes.insert_or_assign(n.name,
                                          fmt::format("HiveD places the pod on {}", r.bind.node));
      } else if (r.kind == hived::outcome::preempt) {
        out.failed_nodes.insert_or_assign(
            n.name, fmt::format("HiveD needs to preempt pods on {} node(s) first",
                                r.victims_by_node.size()));
      } else {
        out.failed_nodes.insert_or_assign(n.name,
                                          fmt::format("HiveD: pod waits: {}", r.wait_reason));
      }
    }
    return out;
  }

  result<std::vector<host_priority>> prioritize(const pod_info& pod,
                                                const std::vector<node_info>& nodes) override {
    K8S_TRY_ASSIGN(auto req, parse_spec(pod, opts_));
    K8S_TRY_ASSIGN(auto r, schedule(pod, req, suggested(nodes), hived::phase::filtering));
    std::vector<host_priority> out;
    out.reserve(nodes.size());
    for (const auto& n : nodes)
      out.push_back(host_priority{n.name, r.kind == hived::outcome::bind && n.name == r.bind.node
                                              ? max_extender_priority
                                              : 0});
    return out;
  }

  result<preemption_result> preempt(
      const pod_info& pod, const std::map<std::string, meta_victims>& candidates) override {
    K8S_TRY_ASSIGN(auto req, parse_spec(pod, opts_));
    hived::node_filter f;
    if (!candidates.empty()) {
      f.all = false;
      for (const auto& [node, v] : candidates) f.nodes.push_back(node);
    }
    K8S_TRY_ASSIGN(auto r, schedule(pod, req, f, hived::phase::preempting));
    preemption_result out;
    if (r.kind != hived::outcome::preempt) return out;
    for (const auto& [node, victims] : r.victims_by_node) {
      if (!candidates.empty() && candidates.count(node) == 0) continue;
      out.node_victims[node].pod_uids = victims;
    }
    return out;
  }

  result<placement> bind(const pod_info& pod, const std::string& node) override {
    K8S_TRY_ASSIGN(auto req, parse_spec(pod, opts_));
    hived::node_filter f{false, {node}};
    K8S_TRY_ASSIGN(auto r, schedule(pod, req, f, hived::phase::filtering));
    if (r.kind != hived::outcome::bind)
      return make_error(
          errc::failed_precondition, "pod {}/{} no longer fits: HiveD {}", pod.name_space, pod.name,
          r.kind == hived::outcome::preempt ? "needs to preempt first"
                                            : fmt::format("waits: {}", r.wait_reason));
    if (r.bind.node != node)
      return make_error(errc::failed_precondition,
                        "pod {}/{} no longer fits on {}: HiveD places it on {}", pod.name_space,
                        pod.name, node, r.bind.node);
    HETSCHED_TRY(s_.add_allocated(req, r.bind));
    placement p;
    p.node = node;
    for (int g : r.bind.leaf_cells) p.gpus.push_back(g);
    p.bind_info = bind_info_json(r.bind);
    used_ += static_cast<std::int64_t>(p.gpus.size());
    infos_.insert_or_assign(pod.uid, r.bind);
    return p;
  }

  result<void> release(const pod_info& pod, const placement& p) override {
    K8S_TRY_ASSIGN(auto req, parse_spec(pod, opts_));
    auto it = infos_.find(pod.uid);
    if (it == infos_.end())
      return make_error(errc::not_found, "HiveD has no bind info for pod UID {}", pod.uid);
    HETSCHED_TRY(s_.delete_allocated(req, it->second));
    used_ -= static_cast<std::int64_t>(p.gpus.size());
    infos_.erase(it);
    return {};
  }

  result<void> restore(const pod_info& pod, const placement& p) override {
    K8S_TRY_ASSIGN(auto req, parse_spec(pod, opts_));
    auto info = bind_info_of(p.bind_info);
    if (!info)
      return make_error(errc::invalid_argument, "pod {}/{}: bind info: {}", pod.name_space,
                        pod.name, info.error().message);
    if (info->node != p.node)
      return make_error(errc::invalid_argument, "pod {}/{}: bind info names node {}, not {}",
                        pod.name_space, pod.name, info->node, p.node);
    if (!std::equal(info->leaf_cells.begin(), info->leaf_cells.end(), p.gpus.begin(), p.gpus.end()))
      return make_error(errc::invalid_argument,
                        "pod {}/{}: bind info leafCellIsolation differs from the GPUs",
                        pod.name_space, pod.name);
    if (auto added = s_.add_allocated(req, *info); !added)
      return make_error(added.error().code, "pod {}/{}: {}", pod.name_space, pod.name,
                        added.error().message);
    used_ += static_cast<std::int64_t>(info->leaf_cells.size());
    infos_.insert_or_assign(pod.uid, std::move(*info));
    return {};
  }

  void forget(const pod_info& pod) override {
    auto req = parse_spec(pod, opts_);
    if (req) s_.delete_unallocated(*req);
  }

  std::vector<node_info> observe_health(const std::vector<node_info>& nodes) override {
    std::vector<std::string> went_bad;
    std::vector<std::string> went_ready;
    auto previous = health_.apply(nodes, went_bad, went_ready);
    for (const auto& n : went_bad) s_.set_node_bad(n);
    for (const auto& n : went_ready) s_.set_node_healthy(n);
    return previous;
  }

  [[nodiscard]] std::int64_t used_gpus() const override { return used_; }
  [[nodiscard]] std::int64_t total_gpus() const override { return total_; }

  [[nodiscard]] std::string digest() const override {
    std::string out = health_.digest();
    for (const auto& chain : chains_) {
      out.append(chain).append(":");
      for (int n : s_.total_left_cells(chain)) out.append(std::to_string(n)).append(",");
      out.append(";");
    }
    for (const auto& vc : vcs_) {
      out.append(vc).append("{");
      for (const auto& c : s_.vc_cells_all(vc))
        out.append(c.address)
            .append("=")
            .append(std::to_string(c.priority))
            .append(c.bound_to)
            .append(c.healthy ? "" : "!")
            .append(",");
      out.append("}");
    }
    return out;
  }

 private:
  // HiveD's user errors (unknown VC, cell or leaf type, member mismatch) are bad requests.
  result<hived::schedule_result> schedule(const pod_info& pod, const hived::pod_request& req,
                                          const hived::node_filter& f, hived::phase ph) {
    auto r = s_.schedule(req, f, ph);
    if (!r)
      return make_error(errc::invalid_argument, "pod {}/{}: {}", pod.name_space, pod.name,
                        r.error().message);
    return r;
  }

  static hived::node_filter suggested(const std::vector<node_info>& nodes) {
    hived::node_filter f;
    f.all = false;
    for (const auto& n : nodes) f.nodes.push_back(n.name);
    return f;
  }

  hived::scheduler s_;
  spec_options opts_;
  std::set<std::string> nodes_;
  std::vector<std::string> chains_;
  std::vector<std::string> vcs_;
  std::map<std::string, hived::bind_info> infos_;
  std::int64_t total_ = 0;
  std::int64_t used_ = 0;
  node_health_map health_;
};

}  // namespace

result<std::unique_ptr<backend>> make_hived_backend(const hived::config& cfg) {
  K8S_TRY_ASSIGN(auto s, hived::scheduler::create(cfg));
  s.mark_all_nodes_healthy();
  return std::unique_ptr<backend>(std::make_unique<hived_backend>(std::move(s), cfg));
}

}  // namespace hetsched::k8s
