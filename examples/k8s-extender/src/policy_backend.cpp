// SPDX-License-Identifier: MIT
// The policy backend (policy_backend.hpp): a registry policy through the contract.
#include "policy_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/registry.hpp>
#include <hetsched/topology/templates.hpp>

#include "try_assign.hpp"

namespace hetsched::k8s {
namespace {

/// The model health of a node health seen in a Node object.
health model_health(node_health h) {
  switch (h) {
    case node_health::unschedulable: return health::cordoned;
    case node_health::not_ready: return health::unhealthy;
    case node_health::unknown:
    case node_health::ready: break;
  }
  return health::healthy;
}

/// What one decision means for the pod's job: the node of a plain bind, or why there is none.
struct verdict {
  std::optional<node_id> node;
  std::string why;
};

class policy_backend final : public backend {
 public:
  policy_backend(std::string spec, std::vector<packer_node> nodes, policy_cluster pc,
                 policy_instance inst, std::vector<std::string> tenants)
      : spec_(std::move(spec)),
        nodes_(std::move(nodes)),
        cluster_(std::move(pc)),
        inst_(std::move(inst)),
        state_(cluster_.description),
        tenants_(std::move(tenants)) {
    for (const auto& n : cluster_.description->nodes())
      max_node_gpus_ = std::max(max_node_gpus_, static_cast<std::int64_t>(n.device_count));
  }

  [[nodiscard]] std::string_view kind() const noexcept override { return "policy"; }
  [[nodiscard]] bool knows_node(const std::string& node) const override {
    return cluster_.description->find_node(node).has_value();
  }

  result<void> check_pod(const pod_info& pod) const override {
    if (pod.gpus > max_node_gpus_)
      return make_error(errc::invalid_argument,
                        "pod {}/{} requests {} GPUs; the largest node has {}", pod.name_space,
                        pod.name, pod.gpus, max_node_gpus_);
    return {};
  }

  std::vector<node_info> observe_health(const std::vector<node_info>& nodes) override {
    std::vector<std::string> went_bad;
    std::vector<std::string> went_ready;
    auto previous = health_.apply(nodes, went_bad, went_ready);
    std::set<std::string> changed;
    for (const auto& p : previous) changed.insert(p.name);
    for (const auto& n : nodes) {
      if (n.health == node_health::unknown || changed.count(n.name) == 0) continue;
      const node_id id = *cluster_.description->find_node(n.name);
      (void)state_.set_node_health(id, model_health(n.health));
      stale_ = true;
    }
    return previous;
  }

  result<filter_result> filter(const pod_info& pod, const std::vector<node_info>& nodes) override {
    filter_result out;
    auto eligible = screen(pod, nodes, &out.failed_and_unresolvable);
    if (!has_any(eligible)) return out;
    K8S_TRY_ASSIGN(auto v, decide(pod, eligible));
    for (const auto& n : nodes) {
      const node_id id = *cluster_.description->find_node(n.name);
      if (!eligible[id.index()]) continue;
      if (v.node && *v.node == id) {
        if (std::find(out.node_names.begin(), out.node_names.end(), n.name) == out.node_names.end())
          out.node_names.push_back(n.name);
      } else if (v.node) {
        out.failed_nodes.insert_or_assign(
            n.name, fmt::format("policy {} places the pod on {}", spec_, name_of(*v.node)));
      } else {
        out.failed_nodes.insert_or_assign(n.name, v.why);
      }
    }
    auto& memo = pending_[pod.uid];
    memo.candidates.clear();
    for (std::size_t i = 0; i < eligible.size(); ++i)
      if (eligible[i]) memo.candidates.emplace_back(static_cast<std::uint32_t>(i));
    return out;
  }

  result<std::vector<host_priority>> prioritize(const pod_info& pod,
                                                const std::vector<node_info>& nodes) override {
    auto eligible = screen(pod, nodes, nullptr);
    verdict v;
    if (has_any(eligible) && bound_.count(pod.uid) == 0) {
      K8S_TRY_ASSIGN(v, decide(pod, eligible));
    }
    std::vector<host_priority> out;
    out.reserve(nodes.size());
    for (const auto& n : nodes) {
      const bool chosen = v.node && name_of(*v.node) == n.name;
      out.push_back(host_priority{n.name, chosen ? max_extender_priority : 0});
    }
    return out;
  }

  result<preemption_result> preempt(
      const pod_info& pod, const std::map<std::string, meta_victims>& candidates) override {
    preemption_result out;
    std::vector<node_info> offered;
    for (const auto& [node, victims] : candidates) offered.push_back(node_info{node, {}, {}});
    auto eligible = screen(pod, offered, nullptr);
    if (!has_any(eligible)) return out;
    decision d;
    K8S_TRY_ASSIGN(d, decide_raw(pod, eligible, nullptr));
    const job_id job = pending_job(pod.uid);
    const verdict v = interpret(d, job);
    if (v.node) {
      const std::string& name = name_of(*v.node);
      if (candidates.count(name) != 0) out.node_victims.emplace(name, meta_victims{});
      return out;
    }
    for (const auto& p : d.preemptions) {
      auto who = uid_of_job_.find(p.job);
      const auto where = state_.placement(p.job);
      if (who == uid_of_job_.end() || !where || where->empty() || !where->front().node.valid())
        continue;
      const std::string& name = name_of(where->front().node);
      auto c = candidates.find(name);
      if (c == candidates.end()) continue;
      auto& victims = out.node_victims[name];
      victims.pod_uids.push_back(who->second);
      victims.num_pdb_violations = std::min(c->second.num_pdb_violations,
                                            static_cast<std::int64_t>(victims.pod_uids.size()));
    }
    return out;
  }

  result<placement> bind(const pod_info& pod, const std::string& node) override {
    const node_id target = *cluster_.description->find_node(node);
    std::string why;
    if (const char* bad = health_.why_bad(node); bad != nullptr)
      return make_error(errc::failed_precondition, "pod {}/{} cannot bind to {}: {}",
                        pod.name_space, pod.name, node, bad);
    if (!node_selector_matches(pod, nodes_[target.index()], node_info{node, {}, {}}, why))
      return make_error(errc::failed_precondition, "pod {}/{} cannot bind to {}: {}",
                        pod.name_space, pod.name, node, why);
    std::vector<node_info> offered;
    if (auto memo = pending_.find(pod.uid);
        memo != pending_.end() && !memo->second.candidates.empty()) {
      for (node_id id : memo->second.candidates) offered.push_back(node_info{name_of(id), {}, {}});
    } else {
      for (const auto& n : nodes_) offered.push_back(node_info{n.name, {}, {}});
    }
    auto eligible = screen(pod, offered, nullptr);
    placement out;
    out.node = node;
    out.bind_info = nullptr;
    HETSCHED_TRY(decide_raw(pod, eligible, &target));
    const auto& b = bound_.at(pod.uid);
    for (const auto& share : state_.placement(b.job)->front().devices)
      out.gpus.push_back(cluster_.description->device(share.device).local_index);
    return out;
  }

  result<void> release(const pod_info& pod, const placement& p) override {
    auto it = bound_.find(pod.uid);
    if (it == bound_.end())
      return make_error(errc::not_found, "pod {}/{} (UID {}) is not bound by policy {}",
                        pod.name_space, pod.name, pod.uid, spec_);
    if (name_of(it->second.node) != p.node)
      return make_error(errc::invalid_argument, "pod {}/{} is bound to {}, not {}", pod.name_space,
                        pod.name, name_of(it->second.node), p.node);
    sync();
    const job_id job = it->second.job;
    HETSCHED_TRY(record(state_, job, job_event::cancel));
    inst_.place->release(state_, job);
    (void)state_.forget(job);
    uid_of_job_.erase(job);
    bound_.erase(it);
    pending_.erase(pod.uid);
    return {};
  }

  result<void> restore(const pod_info& pod, const placement& p) override {
    const auto node = cluster_.description->find_node(p.node);
    if (!node)
      return make_error(errc::invalid_argument, "pod {}/{}: node {} is not in the cluster",
                        pod.name_space, pod.name, p.node);
    if (bound_.count(pod.uid) != 0)
      return make_error(errc::failed_precondition, "pod {}/{} (UID {}) is already bound",
                        pod.name_space, pod.name, pod.uid);
    const auto total = static_cast<std::int64_t>(cluster_.description->node(*node).device_count);
    std::set<std::int64_t> seen;
    task_placement tp{task_id(0), *node, {}};
    for (auto g : p.gpus) {
      if (g < 0 || g >= total)
        return make_error(errc::invalid_argument, "pod {}/{}: GPU {} is not a GPU of {} (0..{})",
                          pod.name_space, pod.name, g, p.node, total - 1);
      if (!seen.insert(g).second)
        return make_error(errc::invalid_argument, "pod {}/{}: GPU {} of {} is listed twice",
                          pod.name_space, pod.name, g, p.node);
      const auto dev = cluster_.description->device_at(*node, static_cast<std::uint32_t>(g));
      tp.devices.push_back(device_share{*dev, milli_per_gpu_unit, 0});
    }
    pod_info as_recorded = pod;
    as_recorded.gpus = static_cast<std::int64_t>(p.gpus.size());
    const bool known = pending_.count(pod.uid) != 0;
    const job_id job = pending_job(pod.uid);
    if (auto submitted = submit(as_recorded, job); !submitted) {
      if (!known) pending_.erase(pod.uid);
      return std::move(submitted).error();
    }
    decision d;
    d.binds.push_back(binding{job, {std::move(tp)}});
    if (auto applied = apply(state_, d); !applied) {
      withdraw(job);
      if (!known) pending_.erase(pod.uid);
      return make_error(applied.error().code, "pod {}/{}: {}", pod.name_space, pod.name,
                        applied.error().message);
    }
    (void)record(state_, job, job_event::start);
    stale_ = true;
    keep(pod.uid, job, *node);
    return {};
  }

  void forget(const pod_info& pod) override {
    if (bound_.count(pod.uid) == 0) pending_.erase(pod.uid);
  }

  [[nodiscard]] std::int64_t used_gpus() const override {
    return state_.total_used().milli_gpu / milli_per_gpu_unit;
  }
  [[nodiscard]] std::int64_t total_gpus() const override {
    return static_cast<std::int64_t>(cluster_.description->device_count());
  }

  [[nodiscard]] std::string digest() const override {
    std::string out;
    const cluster& c = *cluster_.description;
    for (const auto& n : c.nodes()) {
      out.append(n.name).append("=");
      for (std::uint32_t i = 0; i < n.device_count; ++i) {
        const device_id d(n.first_device.value() + i);
        out.append(std::to_string(state_.device_used(d).milli_gpu)).append(",");
      }
      out.append(";");
    }
    out.append("pods:");
    for (const auto& [uid, b] : bound_) {
      out.append(uid).append("@").append(name_of(b.node)).append(":");
      for (const auto& share : state_.placement(b.job)->front().devices)
        out.append(std::to_string(c.device(share.device).local_index)).append(",");
      out.append(";");
    }
    return out.append(health_.digest());
  }

 private:
  struct bound_pod {
    job_id job;
    node_id node;
  };
  /// A pod seen but not bound: its job id (stable across calls) and its last filter's candidates.
  struct pending_pod {
    job_id job;
    std::vector<node_id> candidates;
  };

  [[nodiscard]] const std::string& name_of(node_id id) const {
    return cluster_.description->node(id).name;
  }

  static bool has_any(const std::vector<bool>& v) {
    return std::find(v.begin(), v.end(), true) != v.end();
  }

  /// Returns the candidate mask of `nodes` for `pod`; the nodes that can never take it go to
  /// `unresolvable` (when not null) with the reason.
  std::vector<bool> screen(const pod_info& pod, const std::vector<node_info>& nodes,
                           std::map<std::string, std::string>* unresolvable) const {
    const cluster& c = *cluster_.description;
    std::vector<bool> eligible(c.node_count(), false);
    for (const auto& n : nodes) {
      const node_id id = *c.find_node(n.name);
      std::string why;
      const auto total = static_cast<std::int64_t>(c.node(id).device_count);
      if (const char* bad = health_.why_bad(n.name); bad != nullptr) {
        why = bad;
      } else if (!node_selector_matches(pod, nodes_[id.index()], n, why)) {
        // why is set
      } else if (pod.gpus > total) {
        why = fmt::format("node has {} GPUs, pod requests {}", total, pod.gpus);
      } else {
        eligible[id.index()] = true;
        continue;
      }
      if (unresolvable != nullptr) unresolvable->insert_or_assign(n.name, std::move(why));
    }
    return eligible;
  }

  std::uint32_t tenant_of(const std::string& name_space) const {
    const auto it = std::find(tenants_.begin(), tenants_.end(), name_space);
    return static_cast<std::uint32_t>(it - tenants_.begin());
  }

  /// Returns the job id of pod `uid`, assigning the next one to a pod not seen yet.
  job_id pending_job(const std::string& uid) {
    if (auto b = bound_.find(uid); b != bound_.end()) return b->second.job;
    auto [it, fresh] = pending_.try_emplace(uid);
    if (fresh) it->second.job = job_id(next_job_++);
    return it->second.job;
  }

  /// Submits and enqueues the job of `pod`. Errors: those of cluster_state::submit.
  result<void> submit(const pod_info& pod, job_id job) {
    HETSCHED_TRY(state_.submit(pod_job_spec(pod, job, tenant_of(pod.name_space))));
    if (auto queued = record(state_, job, job_event::enqueue); !queued) {
      withdraw(job);
      return queued;
    }
    return {};
  }

  /// Takes job `job` out of the state again (cancel, forget).
  void withdraw(job_id job) {
    (void)record(state_, job, job_event::cancel);
    (void)state_.forget(job);
  }

  void keep(const std::string& uid, job_id job, node_id node) {
    bound_.insert_or_assign(uid, bound_pod{job, node});
    uid_of_job_.insert_or_assign(job, uid);
    pending_.erase(uid);
  }

  /// Brings the placement's indices to the state after restores and health changes.
  void sync() {
    if (!stale_) return;
    inst_.place->rebuild(state_);
    stale_ = false;
  }

  /// Returns what `d` means for `job`.
  verdict interpret(const decision& d, job_id job) const {
    verdict v;
    const bool plain = d.preemptions.empty() && d.migrations.empty() && d.suspensions.empty() &&
                       d.resumes.empty() && d.releases.empty();
    if (plain && d.binds.size() == 1 && d.binds.front().job == job &&
        d.binds.front().tasks.size() == 1) {
      v.node = d.binds.front().tasks.front().node;
      return v;
    }
    if (d.binds.empty() && !d.deferrals.empty()) {
      const deferral& f = d.deferrals.front();
      v.why = fmt::format("policy {} defers the pod: {}: {}", spec_, f.reason, f.message);
      if (!d.preemptions.empty())
        v.why += fmt::format(" (it would preempt {} pod{})", d.preemptions.size(),
                             d.preemptions.size() == 1 ? "" : "s");
      return v;
    }
    v.why = fmt::format(
        "policy {} answers {} binds, {} preemptions, {} migrations, {} suspensions, {} resumes "
        "and {} partial releases; the extender carries out a plain bind of the pod only",
        spec_, d.binds.size(), d.preemptions.size(), d.migrations.size(), d.suspensions.size(),
        d.resumes.size(), d.releases.size());
    return v;
  }

  result<verdict> decide(const pod_info& pod, const std::vector<bool>& eligible) {
    K8S_TRY_ASSIGN(auto d, decide_raw(pod, eligible, nullptr));
    return interpret(d, pending_job(pod.uid));
  }

  /// Runs what_if for `pod` over the candidates `eligible` (the other nodes cordoned for the call)
  /// and returns its decision. With `bind_to`, the decision must be a plain bind on that node; it
  /// is then placed, applied and committed and the pod is bound (errors: failed_precondition,
  /// nothing changed).
  result<decision> decide_raw(const pod_info& pod, const std::vector<bool>& eligible,
                              const node_id* bind_to) {
    sync();
    if (bound_.count(pod.uid) != 0)
      return make_error(errc::already_exists, "pod {}/{} (UID {}) is already bound", pod.name_space,
                        pod.name, pod.uid);
    const bool known = pending_.count(pod.uid) != 0;
    const job_id job = pending_job(pod.uid);
    if (auto submitted = submit(pod, job); !submitted) {
      if (!known) pending_.erase(pod.uid);
      return std::move(submitted).error();
    }
    std::vector<node_id> hidden;
    for (std::size_t i = 0; i < eligible.size(); ++i) {
      const node_id id(static_cast<std::uint32_t>(i));
      if (eligible[i] || state_.node_health(id) != health::healthy) continue;
      (void)state_.set_node_health(id, health::cordoned);
      hidden.push_back(id);
    }
    placement_policy& place = *inst_.place;
    if (!hidden.empty()) place.rebuild(state_);
    auto d = place.what_if(state_, job);
    bool bound = false;
    if (d && bind_to != nullptr) {
      auto committed = commit(pod, job, *d, *bind_to);
      if (!committed) d = std::move(committed).error();
      bound = static_cast<bool>(committed);
    }
    for (node_id id : hidden) (void)state_.set_node_health(id, health::healthy);
    if (!hidden.empty()) place.rebuild(state_);
    if (!bound) withdraw(job);
    if (!d && !bound && !known) pending_.erase(pod.uid);
    return d;
  }

  /// Binds `job` (queued, candidates hidden) on `target` if `planned` says so.
  result<void> commit(const pod_info& pod, job_id job, const decision& planned, node_id target) {
    const verdict v = interpret(planned, job);
    if (!v.node)
      return make_error(errc::failed_precondition, "pod {}/{} cannot bind to {}: {}",
                        pod.name_space, pod.name, name_of(target), v.why);
    if (*v.node != target)
      return make_error(errc::failed_precondition,
                        "pod {}/{}: kube-scheduler binds it to {} but policy {} places it on {}",
                        pod.name_space, pod.name, name_of(target), spec_, name_of(*v.node));
    placement_policy& place = *inst_.place;
    K8S_TRY_ASSIGN(auto d, place.place(state_, job));
    if (!(d == planned))
      return make_error(errc::internal, "policy {}: place() differs from what_if() for pod {}/{}",
                        spec_, pod.name_space, pod.name);
    if (auto applied = apply(state_, d); !applied)
      return make_error(errc::failed_precondition, "pod {}/{} cannot bind to {}: {}",
                        pod.name_space, pod.name, name_of(target), applied.error().message);
    place.commit(state_, d);
    (void)record(state_, job, job_event::start);
    keep(pod.uid, job, target);
    return {};
  }

  std::string spec_;
  std::vector<packer_node> nodes_;
  policy_cluster cluster_;
  policy_instance inst_;
  cluster_state state_;
  std::vector<std::string> tenants_;
  std::int64_t max_node_gpus_ = 0;
  node_health_map health_;
  std::uint32_t next_job_ = 1;
  bool stale_ = false;
  std::map<std::string, bound_pod> bound_;
  std::map<job_id, std::string> uid_of_job_;
  std::map<std::string, pending_pod> pending_;
};

}  // namespace

result<policy_cluster> make_policy_cluster(const std::vector<packer_node>& nodes) {
  if (nodes.empty()) return make_error(errc::invalid_argument, "packer cluster has no nodes");
  std::set<std::string> names;
  std::map<node_template, node_topology> templates;
  cluster_builder builder("k8s-extender");
  for (const auto& n : nodes) {
    if (!names.insert(n.name).second)
      return make_error(errc::invalid_argument, "duplicate node name {}", n.name);
    auto it = templates.find(n.tmpl);
    if (it == templates.end()) {
      K8S_TRY_ASSIGN(auto topo, make_node_template(n.tmpl));
      it = templates.emplace(n.tmpl, std::move(topo)).first;
    }
    builder.add_nodes(it->second, 1, n.name);
  }
  K8S_TRY_ASSIGN(auto topology, builder.build());
  cluster description;
  description.reserve(nodes.size(), topology.gpu_count());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const packer_node& n = nodes[i];
    node_spec spec = to_node_spec(templates.at(n.tmpl), n.name);
    for (const auto& [k, v] : n.labels) spec.labels.insert_or_assign(k, v);
    spec.labels.insert_or_assign(std::string(gpu_type_label), n.gpu_type);
    spec.labels.insert_or_assign("kubernetes.io/hostname", n.name);
    HETSCHED_TRY(description.add_node(std::move(spec)));
  }
  return policy_cluster{std::make_shared<const cluster>(std::move(description)),
                        std::move(topology)};
}

job_spec pod_job_spec(const pod_info& pod, job_id id, std::uint32_t tenant) {
  job_spec s;
  s.id = id;
  s.name = fmt::format("{}/{}", pod.name_space, pod.name);
  s.tenant = tenant_id(tenant);
  s.priority = static_cast<std::int32_t>(pod.priority);
  task_role role;
  role.name = "pod";
  role.task_count = 1;
  role.gpu.count = static_cast<std::uint32_t>(pod.gpus);
  s.roles.push_back(std::move(role));
  s.gang = true;
  s.preemptible = true;
  return s;
}

result<std::unique_ptr<backend>> make_policy_backend(std::string_view spec,
                                                     std::vector<packer_node> nodes,
                                                     std::vector<std::string> tenants) {
  std::set<std::string> seen;
  for (const auto& t : tenants)
    if (!seen.insert(t).second)
      return make_error(errc::invalid_argument, "namespace {} is listed twice among the tenants",
                        t);
  K8S_TRY_ASSIGN(auto pc, make_policy_cluster(nodes));
  K8S_TRY_ASSIGN(auto inst, make_policy(spec, *pc.description, &pc.topology));
  return std::unique_ptr<backend>(std::make_unique<policy_backend>(
      std::string(spec), std::move(nodes), std::move(pc), std::move(inst), std::move(tenants)));
}

}  // namespace hetsched::k8s
