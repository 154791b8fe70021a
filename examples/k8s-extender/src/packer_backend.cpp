// SPDX-License-Identifier: MIT
// The packer backend: per-node free GPU sets, go-gpuallocator's objective for the GPU choice.
//
// filter: a node passes when the pod's node selector matches its labels (configured labels, the
// Node object's labels when kube-scheduler sent full objects, hetsched.io/gpu-type and
// kubernetes.io/hostname) and it has at least as many free GPUs as the pod requests. Selector
// mismatches and nodes with fewer GPUs in total are unresolvable (preemption cannot help);
// too few free GPUs is a plain failure. prioritize: (topology + packing) / 20 on 0..10, where
// topology = 100 * score of the block allocate() would pick / score of the best block of that
// size on an empty node of the same template (100 if that is 0), and packing = 100 * GPUs in
// use after the placement / GPUs of the node (best fit first). A pod with no GPUs scores 0.
// bind: allocate(lexmax) on the node; ties as affinity_packer.hpp documents. A node last seen
// unschedulable or not Ready (Node objects only) fails the filter as unresolvable, scores 0 and
// refuses binds until it is seen Ready again. preempt: per candidate node, the minimal subset of
// the proposed victims this extender bound there that lets the pod pass the filter, by the
// order packer_preemption.hpp documents; nodes where no subset helps are left out. It only reads.
// A pod bound with GPUs is remembered (node, GPUs, spec.priority) until release().
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/graph.hpp>

#include "backend.hpp"
#include "packer_preemption.hpp"
#include "try_assign.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

struct template_info {
  pair_score_matrix scores;
  std::vector<std::int64_t> best_block;  // index = size
};

struct node_entry {
  packer_node spec;
  const template_info* tmpl = nullptr;
  packer_state state;
};

class packer_backend final : public backend {
 public:
  explicit packer_backend(std::map<node_template, template_info> templates,
                          std::vector<node_entry> nodes)
      : templates_(std::move(templates)), nodes_(std::move(nodes)) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      nodes_[i].tmpl = &templates_.at(nodes_[i].spec.tmpl);
      index_.emplace(nodes_[i].spec.name, i);
      total_ += static_cast<std::int64_t>(nodes_[i].tmpl->scores.size());
      max_node_gpus_ =
          std::max(max_node_gpus_, static_cast<std::int64_t>(nodes_[i].tmpl->scores.size()));
    }
  }

  [[nodiscard]] std::string_view kind() const noexcept override { return "packer"; }
  [[nodiscard]] bool knows_node(const std::string& node) const override {
    return index_.count(node) != 0;
  }

  result<void> check_pod(const pod_info& pod) const override {
    if (pod.gpus > max_node_gpus_)
      return make_error(errc::invalid_argument,
                        "pod {}/{} requests {} GPUs; the largest node has {}", pod.name_space,
                        pod.name, pod.gpus, max_node_gpus_);
    return {};
  }

  result<filter_result> filter(const pod_info& pod, const std::vector<node_info>& nodes) override {
    filter_result out;
    for (const auto& n : nodes) {
      const node_entry& e = nodes_[index_.at(n.name)];
      std::string why;
      if (const char* bad = health_.why_bad(n.name); bad != nullptr) {
        out.failed_and_unresolvable.insert_or_assign(n.name, bad);
        continue;
      }
      if (!selector_matches(pod, e, n, why)) {
        out.failed_and_unresolvable.insert_or_assign(n.name, std::move(why));
        continue;
      }
      const auto total = static_cast<std::int64_t>(e.tmpl->scores.size());
      const auto free = static_cast<std::int64_t>(e.state.available().size());
      if (pod.gpus > total) {
        out.failed_and_unresolvable.insert_or_assign(
            n.name, fmt::format("node has {} GPUs, pod requests {}", total, pod.gpus));
      } else if (pod.gpus > free) {
        out.failed_nodes.insert_or_assign(
            n.name, fmt::format("{} of {} GPUs free, pod requests {}", free, total, pod.gpus));
      } else {
        out.node_names.push_back(n.name);
      }
    }
    return out;
  }

  result<std::vector<host_priority>> prioritize(const pod_info& pod,
                                                const std::vector<node_info>& nodes) override {
    std::vector<host_priority> out;
    for (const auto& n : nodes) {
      const node_entry& e = nodes_[index_.at(n.name)];
      std::string why;
      std::int64_t score = 0;
      const auto free = static_cast<std::int64_t>(e.state.available().size());
      if (pod.gpus > 0 && pod.gpus <= free && health_.why_bad(n.name) == nullptr &&
          selector_matches(pod, e, n, why)) {
        const auto size = static_cast<std::size_t>(pod.gpus);
        K8S_TRY_ASSIGN(auto ans, hetsched::allocate(e.tmpl->scores, e.state.available(), {}, size));
        const std::int64_t best = e.tmpl->best_block[size];
        const std::int64_t topo = best == 0 ? 100 : ans.block_score * 100 / best;
        const auto total = static_cast<std::int64_t>(e.tmpl->scores.size());
        const std::int64_t packing = (total - free + pod.gpus) * 100 / total;
        score = std::clamp<std::int64_t>((topo + packing) / 20, 0, max_extender_priority);
      }
      out.push_back(host_priority{n.name, score});
    }
    return out;
  }

  result<preemption_result> preempt(
      const pod_info& pod, const std::map<std::string, meta_victims>& candidates) override {
    preemption_result out;
    for (const auto& [node, proposed] : candidates) {
      const node_entry& e = nodes_[index_.at(node)];
      std::string why;
      const auto total = static_cast<std::int64_t>(e.tmpl->scores.size());
      if (health_.why_bad(node) != nullptr || pod.gpus > total ||
          !selector_matches(pod, e, node_info{node, {}}, why))
        continue;
      std::vector<gpu_victim> gpu_victims;
      for (const auto& uid : proposed.pod_uids) {
        auto it = bound_pods_.find(uid);
        if (it != bound_pods_.end() && it->second.node == node)
          gpu_victims.push_back(gpu_victim{uid, it->second.gpus, it->second.priority});
      }
      const auto free = static_cast<std::int64_t>(e.state.available().size());
      auto chosen = choose_gpu_victims(pod.gpus - free, std::move(gpu_victims));
      if (!chosen) continue;
      meta_victims kept;
      for (const auto& uid : proposed.pod_uids) {
        auto it = bound_pods_.find(uid);
        const bool gpu_victim_here = it != bound_pods_.end() && it->second.node == node;
        if (!gpu_victim_here || std::binary_search(chosen->begin(), chosen->end(), uid))
          kept.pod_uids.push_back(uid);
      }
      kept.num_pdb_violations =
          std::min(proposed.num_pdb_violations, static_cast<std::int64_t>(kept.pod_uids.size()));
      out.node_victims.emplace(node, std::move(kept));
    }
    return out;
  }

  result<placement> bind(const pod_info& pod, const std::string& node) override {
    node_entry& e = nodes_[index_.at(node)];
    std::string why;
    if (const char* bad = health_.why_bad(node); bad != nullptr)
      return make_error(errc::failed_precondition, "pod {}/{} cannot bind to {}: {}",
                        pod.name_space, pod.name, node, bad);
    if (!selector_matches(pod, e, node_info{node, {}}, why))
      return make_error(errc::failed_precondition, "pod {}/{} cannot bind to {}: {}",
                        pod.name_space, pod.name, node, why);
    placement p;
    p.node = node;
    p.bind_info = nullptr;
    if (pod.gpus == 0) return p;
    const auto free = static_cast<std::int64_t>(e.state.available().size());
    if (pod.gpus > free)
      return make_error(errc::failed_precondition,
                        "pod {}/{} no longer fits on {}: {} GPUs free, pod requests {}",
                        pod.name_space, pod.name, node, free, pod.gpus);
    K8S_TRY_ASSIGN(auto ans, e.state.allocate(static_cast<std::size_t>(pod.gpus)));
    if (ans.status != packer_status::allocated)
      return make_error(errc::failed_precondition, "pod {}/{} no longer fits on {}", pod.name_space,
                        pod.name, node);
    for (auto g : ans.gpus) p.gpus.push_back(static_cast<std::int64_t>(g));
    used_ += pod.gpus;
    bound_pods_.insert_or_assign(pod.uid, bound_pod{node, pod.gpus, pod.priority});
    return p;
  }

  result<void> release(const pod_info& pod, const placement& p) override {
    node_entry& e = nodes_[index_.at(p.node)];
    std::vector<std::uint32_t> gpus;
    for (auto g : p.gpus) gpus.push_back(static_cast<std::uint32_t>(g));
    HETSCHED_TRY(e.state.release(gpus));
    used_ -= static_cast<std::int64_t>(gpus.size());
    bound_pods_.erase(pod.uid);
    return {};
  }

  result<void> restore(const pod_info& pod, const placement& p) override {
    node_entry& e = nodes_[index_.at(p.node)];
    const auto total = static_cast<std::int64_t>(e.tmpl->scores.size());
    std::set<std::uint32_t> taken;
    for (auto g : p.gpus) {
      if (g < 0 || g >= total)
        return make_error(errc::invalid_argument, "pod {}/{}: GPU {} is not a GPU of {} (0..{})",
                          pod.name_space, pod.name, g, p.node, total - 1);
      if (!taken.insert(static_cast<std::uint32_t>(g)).second)
        return make_error(errc::invalid_argument, "pod {}/{}: GPU {} of {} is listed twice",
                          pod.name_space, pod.name, g, p.node);
    }
    std::vector<std::uint32_t> rest;
    for (auto g : e.state.available()) {
      if (taken.erase(g) == 0) rest.push_back(g);
    }
    if (!taken.empty())
      return make_error(errc::failed_precondition, "pod {}/{}: GPU {} of {} is not free",
                        pod.name_space, pod.name, *taken.begin(), p.node);
    K8S_TRY_ASSIGN(e.state, packer_state::make(e.state.scores(), rest));
    const auto gpus = static_cast<std::int64_t>(p.gpus.size());
    used_ += gpus;
    if (gpus > 0) bound_pods_.insert_or_assign(pod.uid, bound_pod{p.node, gpus, pod.priority});
    return {};
  }

  std::vector<node_info> observe_health(const std::vector<node_info>& nodes) override {
    std::vector<std::string> went_bad;
    std::vector<std::string> went_ready;
    return health_.apply(nodes, went_bad, went_ready);
  }

  void forget(const pod_info&) override {}
  [[nodiscard]] std::int64_t used_gpus() const override { return used_; }
  [[nodiscard]] std::int64_t total_gpus() const override { return total_; }

  [[nodiscard]] std::string digest() const override {
    std::string out;
    for (const auto& e : nodes_) {
      out.append(e.spec.name).append("=");
      for (auto g : e.state.available()) out.append(std::to_string(g)).append(",");
      out.append(";");
    }
    return out.append(health_.digest());
  }

 private:
  static bool selector_matches(const pod_info& pod, const node_entry& e, const node_info& n,
                               std::string& why) {
    return node_selector_matches(pod, e.spec, n, why);
  }

  std::map<node_template, template_info> templates_;
  std::vector<node_entry> nodes_;
  std::map<std::string, std::size_t> index_;
  std::int64_t total_ = 0;
  std::int64_t used_ = 0;
  std::int64_t max_node_gpus_ = 0;
  node_health_map health_;
  /// The pods bound with GPUs, by UID: preempt's candidates (see packer_preemption.hpp).
  struct bound_pod {
    std::string node;
    std::int64_t gpus = 0;
    std::int64_t priority = 0;
  };
  std::map<std::string, bound_pod> bound_pods_;
};

result<std::map<std::string, std::string>> labels_of(const json& j, std::string_view where) {
  std::map<std::string, std::string> out;
  const auto it = j.find("labels");
  if (it == j.end()) return out;
  if (!it->is_object())
    return make_error(errc::invalid_argument, "{}: labels must be an object", where);
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string())
      return make_error(errc::invalid_argument, "{}: label {} must be a string", where, k);
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

result<packer_node> node_of(const json& j, std::string name, std::string_view where) {
  if (!j.is_object()) return make_error(errc::invalid_argument, "{} must be an object", where);
  const auto tmpl = j.find("template");
  if (tmpl == j.end() || !tmpl->is_string())
    return make_error(errc::invalid_argument, "{}: missing template", where);
  auto t = parse_node_template(tmpl->get<std::string>());
  if (!t)
    return make_error(errc::invalid_argument, "{}: unknown template {}", where,
                      tmpl->get<std::string>());
  packer_node n;
  n.name = std::move(name);
  n.tmpl = *t;
  if (auto g = j.find("gpuType"); g != j.end() && g->is_string())
    n.gpu_type = g->get<std::string>();
  K8S_TRY_ASSIGN(n.labels, labels_of(j, where));
  return n;
}

}  // namespace

bool node_selector_matches(const pod_info& pod, const packer_node& node, const node_info& seen,
                           std::string& why) {
  for (const auto& [key, want] : pod.node_selector) {
    const std::string* have = nullptr;
    if (auto it = seen.labels.find(key); it != seen.labels.end()) {
      have = &it->second;
    } else if (auto jt = node.labels.find(key); jt != node.labels.end()) {
      have = &jt->second;
    } else if (key == gpu_type_label) {
      have = &node.gpu_type;
    } else if (key == "kubernetes.io/hostname") {
      have = &node.name;
    }
    if (have == nullptr || *have != want) {
      why = fmt::format("node selector {}={} does not match (node has {})", key, want,
                        have == nullptr ? std::string("no such label") : *have);
      return false;
    }
  }
  return true;
}

result<std::vector<packer_node>> parse_packer_cluster(const json& j) {
  if (!j.is_object()) return make_error(errc::invalid_argument, "cluster must be an object");
  std::vector<packer_node> out;
  if (auto nodes = j.find("nodes"); nodes != j.end()) {
    if (!nodes->is_array()) return make_error(errc::invalid_argument, "nodes must be an array");
    std::size_t i = 0;
    for (const auto& n : *nodes) {
      const std::string where = fmt::format("nodes[{}]", i++);
      const auto name = n.find("name");
      if (name == n.end() || !name->is_string() || name->get<std::string>().empty())
        return make_error(errc::invalid_argument, "{}: missing name", where);
      K8S_TRY_ASSIGN(auto node, node_of(n, name->get<std::string>(), where));
      out.push_back(std::move(node));
    }
  }
  if (auto groups = j.find("nodeGroups"); groups != j.end()) {
    if (!groups->is_array())
      return make_error(errc::invalid_argument, "nodeGroups must be an array");
    std::size_t i = 0;
    for (const auto& g : *groups) {
      const std::string where = fmt::format("nodeGroups[{}]", i++);
      const auto prefix = g.find("namePrefix");
      const auto count = g.find("count");
      if (prefix == g.end() || !prefix->is_string() || count == g.end() ||
          !count->is_number_unsigned() || count->get<std::uint64_t>() > 100000)
        return make_error(errc::invalid_argument, "{}: needs namePrefix and a count in 0..100000",
                          where);
      for (std::uint64_t k = 0; k < count->get<std::uint64_t>(); ++k) {
        std::string name = prefix->get<std::string>();
        name.append(std::to_string(k));
        K8S_TRY_ASSIGN(auto node, node_of(g, std::move(name), where));
        out.push_back(std::move(node));
      }
    }
  }
  return out;
}

result<std::unique_ptr<backend>> make_packer_backend(std::vector<packer_node> nodes) {
  if (nodes.empty()) return make_error(errc::invalid_argument, "packer cluster has no nodes");
  std::set<std::string> names;
  std::map<node_template, template_info> templates;
  std::vector<node_entry> entries;
  for (auto& n : nodes) {
    if (!names.insert(n.name).second)
      return make_error(errc::invalid_argument, "duplicate node name {}", n.name);
    auto it = templates.find(n.tmpl);
    if (it == templates.end()) {
      K8S_TRY_ASSIGN(auto topo, make_node_template(n.tmpl));
      template_info info{pair_score_matrix::from_topology(topo), {}};
      std::vector<std::uint32_t> all(info.scores.size());
      for (std::size_t g = 0; g < all.size(); ++g) all[g] = static_cast<std::uint32_t>(g);
      info.best_block.assign(all.size() + 1, 0);
      for (std::size_t size = 1; size <= all.size(); ++size) {
        K8S_TRY_ASSIGN(auto ans, hetsched::allocate(info.scores, all, {}, size));
        info.best_block[size] = ans.block_score;
      }
      it = templates.emplace(n.tmpl, std::move(info)).first;
    }
    entries.push_back(node_entry{std::move(n), nullptr, packer_state(it->second.scores)});
  }
  return std::unique_ptr<backend>(
      std::make_unique<packer_backend>(std::move(templates), std::move(entries)));
}

}  // namespace hetsched::k8s
