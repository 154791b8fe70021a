// SPDX-License-Identifier: MIT
// hived_placement: HiveD's buddy-cell allocator as a placement policy, and its registry factory.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include <hetsched/policies/hived_placement.hpp>

#include "placement_check.hpp"

namespace hetsched {
namespace {

const hived::cell_type_spec* find_type(const hived::config& cfg, std::string_view name) {
  for (const hived::cell_type_spec& t : cfg.cell_types)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

hived_placement::hived_placement(hived::scheduler s, const cluster& description)
    : sched_(std::make_unique<hived::scheduler>(std::move(s))) {
  for (std::size_t i = 0; i < description.node_count(); ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    node_name_.push_back(description.node(n).name);
    first_device_.push_back(description.node(n).first_device.value());
    node_of_.emplace(description.node(n).name, n);
  }
}

result<hived_placement> hived_placement::create(const cluster& description,
                                                const cluster_topology* topology,
                                                const hived_placement_params& params) {
  if (topology == nullptr)
    return make_error(errc::invalid_argument, "hived: needs the cluster topology");
  hived::derive_options opts;
  opts.top = params.top;
  auto cfg = hived::derive_cells(*topology, opts);
  if (!cfg) return make_error(cfg.error().code, "hived: {}", cfg.error().message);

  // Chains in order of first appearance, with their node-level type and node count.
  struct chain_info {
    std::string name;
    std::string node_type;
    std::int64_t nodes = 0;
  };
  std::vector<chain_info> chains;
  for (const hived::physical_cell_spec& top : cfg->physical_cells) {
    auto it = std::find_if(chains.begin(), chains.end(),
                           [&](const chain_info& c) { return c.name == top.cell_type; });
    if (it == chains.end()) {
      chain_info c{top.cell_type, {}, 0};
      const hived::cell_type_spec* t = find_type(*cfg, top.cell_type);
      while (t != nullptr && !t->node_level) t = find_type(*cfg, t->child_type);
      if (t == nullptr)
        return make_error(errc::invalid_argument, "hived: chain {} has no node-level type",
                          top.cell_type);
      c.node_type = t->name;
      chains.push_back(std::move(c));
      it = chains.end() - 1;
    }
    std::int64_t per_top = 1;
    for (const hived::cell_type_spec* t = find_type(*cfg, top.cell_type);
         t != nullptr && !t->node_level; t = find_type(*cfg, t->child_type))
      per_top *= t->child_count;
    it->nodes += per_top;
  }

  // Placer mode: one VC owns everything (the code path of an empty quota table).
  std::vector<std::uint32_t> quota = params.placer ? std::vector<std::uint32_t>{} : params.quota;
  std::int64_t total = 0;
  for (const std::uint32_t q : quota) total += q;
  if (total == 0) {
    quota.assign(std::max<std::size_t>(1, quota.size()), 0);
    quota[0] = 1;
    total = 1;
  }
  std::vector<std::uint32_t> vc_nodes(quota.size(), 0);
  cfg->virtual_clusters.clear();
  for (std::size_t v = 0; v < quota.size(); ++v)
    cfg->virtual_clusters.push_back({fmt::format("vc{}", v), {}, {}});
  // Each VC's nodes over the whole cluster: floor of quota * nodes / total, then the leftover
  // nodes by largest remainder (ties to the lower index).
  std::int64_t all_nodes = 0;
  for (const chain_info& c : chains) all_nodes += c.nodes;
  std::vector<std::int64_t> share(quota.size());
  std::vector<std::size_t> order(quota.size());
  std::int64_t given = 0;
  for (std::size_t v = 0; v < quota.size(); ++v) {
    share[v] = std::int64_t{quota[v]} * all_nodes / total;
    given += share[v];
    order[v] = v;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::int64_t{quota[a]} * all_nodes % total > std::int64_t{quota[b]} * all_nodes % total;
  });
  for (std::size_t k = 0; given < all_nodes && k < order.size(); ++k, ++given) ++share[order[k]];
  // A gang cannot span chains, so each VC goes whole into one chain where it can: VCs by
  // descending share (ties to the lower index), each into the chain with the most nodes left
  // (ties to the earlier chain), spilling into the next such chain only when it does not fit.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return share[a] > share[b]; });
  std::vector<std::int64_t> room;
  for (const chain_info& c : chains) room.push_back(c.nodes);
  for (const std::size_t v : order) {
    std::int64_t left = share[v];
    while (left > 0) {
      std::size_t best = 0;
      for (std::size_t c = 1; c < room.size(); ++c)
        if (room[c] > room[best]) best = c;
      if (room[best] == 0) break;
      const std::int64_t take = std::min(left, room[best]);
      room[best] -= take;
      left -= take;
      cfg->virtual_clusters[v].virtual_cells.push_back(
          {fmt::format("{}.{}", chains[best].name, chains[best].node_type),
           static_cast<int>(take)});
      vc_nodes[v] += static_cast<std::uint32_t>(take);
    }
  }
  auto s = hived::scheduler::create(*cfg);
  if (!s) return make_error(s.error().code, "hived: {}", s.error().message);
  s->mark_all_nodes_healthy();
  hived_placement out(std::move(*s), description);
  out.vc_nodes_ = std::move(vc_nodes);
  out.guaranteed_min_priority_ = params.guaranteed_min_priority;
  out.preemption_ = params.preemption && !params.placer;
  out.placer_ = params.placer;
  out.node_cell_.assign(description.node_count(), {});
  for (const hived::cell_info& c : out.sched_->node_level_cells()) {
    out.total_leaves_ += static_cast<std::int64_t>(c.leaf_indices.size());
    if (c.nodes.empty()) continue;
    if (const auto it = out.node_of_.find(c.nodes.front()); it != out.node_of_.end())
      out.node_cell_[it->second.index()] = {c.chain, c.type};
  }
  return out;
}

hived::pod_request hived_placement::request(const job_record& rec, std::uint32_t pod) const {
  const job_spec& spec = rec.spec;
  hived::pod_request p;
  p.name = fmt::format("j{}-{}", spec.id.value(), pod);
  p.group = fmt::format("j{}", spec.id.value());
  const std::uint32_t t = placer_ ? 0 : spec.tenant.value();
  const bool has_cells = vc_nodes(t) > 0;
  p.vc = fmt::format("vc{}", t < vc_nodes_.size() ? t : 0);
  if (placer_) {
    p.priority = 0;
  } else {
    p.priority = has_cells && spec.priority >= guaranteed_min_priority_
                     ? std::clamp(spec.priority, 0, hived::max_guaranteed_priority)
                     : hived::opportunistic_priority;
  }
  std::uint32_t seen = 0;
  for (const task_role& r : spec.roles) {
    p.members.push_back({static_cast<int>(r.task_count), static_cast<int>(r.gpu.count)});
    if (pod >= seen && pod < seen + r.task_count) p.leaf_cells = static_cast<int>(r.gpu.count);
    seen += r.task_count;
  }
  return p;
}

result<decision> hived_placement::place(const cluster_state& state, job_id job) {
  std::vector<pod_record> pods;
  auto d = decide(*sched_, state, job, pods);
  if (d && !d->binds.empty()) pending_[job.value()] = std::move(pods);
  return d;
}

result<decision> hived_placement::what_if(const cluster_state& state, job_id job) {
  const hived::scheduler::trial undo(*sched_);
  std::vector<pod_record> pods;
  return decide(*sched_, state, job, pods);
}

result<decision> hived_placement::decide(hived::scheduler& sched, const cluster_state& state,
                                         job_id job, std::vector<pod_record>& pods) const {
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "hived: unknown job {}", job);
  decision d;
  for (const task_role& r : rec->spec.roles) {
    if (r.gpu.count == 0) {
      d.deferrals.push_back(
          {job, defer_reason::topology_unsatisfiable, "hived places GPU tasks only"});
      return d;
    }
  }
  const hived::pod_request first = request(*rec, 0);
  auto r = sched.schedule(first, hived::node_filter{}, hived::phase::filtering);
  if (!r) return make_error(r.error().code, "hived: job {}: {}", job, r.error().message);
  if (r->kind == hived::outcome::preempt && preemption_) {
    r = sched.schedule(first, hived::node_filter{}, hived::phase::preempting);
    if (!r) return make_error(r.error().code, "hived: job {}: {}", job, r.error().message);
    if (r->kind == hived::outcome::preempt) return preempt_for(sched, state, *rec, first, *r);
  }
  if (r->kind != hived::outcome::bind) {
    defer_reason reason =
        first.priority >= 0 ? defer_reason::quota_exceeded : defer_reason::insufficient_capacity;
    if (placer_) {
      std::int64_t leaves = 0;
      for (const task_role& role : rec->spec.roles)
        leaves += std::int64_t{role.task_count} * role.gpu.count;
      reason = free_leaf_cells() < leaves ? defer_reason::insufficient_capacity
                                          : defer_reason::fragmented;
    }
    d.deferrals.push_back({job, reason, r->wait_reason});
    return d;
  }
  std::map<int, std::size_t> used;  // leaf count -> placements consumed
  pods.clear();
  binding b{job, {}};
  std::uint32_t pod = 0;
  for (std::size_t ri = 0; ri < rec->spec.roles.size(); ++ri) {
    const task_role& role = rec->spec.roles[ri];
    const std::uint32_t first_id = first_task(rec->spec, ri).value();
    const int leaves = static_cast<int>(role.gpu.count);
    const auto git = r->bind.group_placements.find(leaves);
    for (std::uint32_t k = 0; k < role.task_count; ++k, ++pod) {
      std::size_t& next = used[leaves];
      if (git == r->bind.group_placements.end() || next >= git->second.size())
        return make_error(errc::internal, "hived: job {}: no placement for pod {}", job, pod);
      const hived::pod_placement& pp = git->second[next++];
      const auto nit = node_of_.find(pp.node);
      if (nit == node_of_.end())
        return make_error(errc::internal, "hived: job {}: unknown node {}", job, pp.node);
      const node_info& info = state.cluster().node(nit->second);
      task_placement tp{task_id(first_id + k), nit->second, {}};
      for (const int leaf : pp.leaf_cells)
        tp.devices.push_back(
            {device_id(info.first_device.value() + static_cast<std::uint32_t>(leaf)),
             role.gpu.milli_per_gpu, role.gpu.memory_mib});
      b.tasks.push_back(std::move(tp));
      hived::bind_info bi;
      bi.node = pp.node;
      bi.leaf_cells = pp.leaf_cells;
      bi.chain = r->bind.chain;
      bi.group_placements = r->bind.group_placements;
      pods.push_back({request(*rec, pod), std::move(bi)});
    }
  }
  d.binds.push_back(std::move(b));
  return detail::checked_or_deferred(state, std::move(d), job);
}

decision hived_placement::preempt_for(hived::scheduler& sched, const cluster_state& state,
                                      const job_record& rec, const hived::pod_request& first,
                                      const hived::schedule_result& r) const {
  const job_id job = rec.spec.id;
  decision d;
  d.deferrals.push_back(
      {job,
       first.priority >= 0 ? defer_reason::quota_exceeded : defer_reason::insufficient_capacity,
       "waits for HiveD's preemption victims"});
  std::set<std::uint32_t> victims;
  bool ok = true;
  for (const auto& [node, pods] : r.victims_by_node) {
    for (const std::string& pod : pods) {
      // Every victim is a pod committed here (HiveD's groups are this placement's jobs).
      const auto owner = pod_job_.find(pod);
      const job_record* vr =
          owner == pod_job_.end() ? nullptr : state.find_job(job_id(owner->second));
      if (vr == nullptr || !vr->spec.preemptible || !holds_resources(vr->status.state)) {
        ok = false;
        continue;
      }
      victims.insert(owner->second);
    }
  }
  if (!ok) {
    sched.delete_unallocated(first);  // cancels the preemption state just created
    d.deferrals.front().message = "HiveD's victims include a job that cannot be preempted";
    return d;
  }
  for (const std::uint32_t v : victims)
    d.preemptions.push_back(preemption{
        job_id(v), fmt::format("hived: job {} ({}) takes its cells", job.value(), first.vc)});
  return d;
}

void hived_placement::commit(const cluster_state&, const decision& d) {
  for (const binding& b : d.binds) {
    const auto it = pending_.find(b.job.value());
    if (it == pending_.end()) continue;
    for (const pod_record& p : it->second) {
      static_cast<void>(sched_->add_allocated(p.pod, p.bind));
      held_leaves_ += static_cast<std::int64_t>(p.bind.leaf_cells.size());
    }
    index_pods(b.job.value(), it->second, true);
    running_[b.job.value()] = std::move(it->second);
    pending_.erase(it);
  }
}

void hived_placement::release(const cluster_state&, job_id job) {
  pending_.erase(job.value());
  const auto it = running_.find(job.value());
  if (it == running_.end()) return;
  for (const pod_record& p : it->second) {
    static_cast<void>(sched_->delete_allocated(p.pod, p.bind));
    held_leaves_ -= static_cast<std::int64_t>(p.bind.leaf_cells.size());
  }
  index_pods(job.value(), it->second, false);
  running_.erase(it);
}

void hived_placement::index_pods(std::uint32_t job, const std::vector<pod_record>& pods, bool add) {
  for (const pod_record& p : pods) {
    if (add) {
      pod_job_.insert_or_assign(p.pod.name, job);
    } else {
      pod_job_.erase(p.pod.name);
    }
  }
}

void hived_placement::rebuild(const cluster_state& state) {
  for (std::size_t i = 0; i < node_name_.size(); ++i) {
    if (state.node_health(node_id(static_cast<std::uint32_t>(i))) == health::healthy) {
      sched_->set_node_healthy(node_name_[i]);
    } else {
      sched_->set_node_bad(node_name_[i]);
    }
  }
  // Jobs the allocator holds that the state no longer knows (forgotten without a release).
  for (auto it = running_.begin(); it != running_.end();) {
    if (state.find_job(job_id(it->first)) != nullptr) {
      ++it;
      continue;
    }
    for (const pod_record& p : it->second) {
      static_cast<void>(sched_->delete_allocated(p.pod, p.bind));
      held_leaves_ -= static_cast<std::int64_t>(p.bind.leaf_cells.size());
    }
    index_pods(it->first, it->second, false);
    it = running_.erase(it);
  }
  // Jobs the state runs that were never committed here (bindings replayed after a restart),
  // ascending id: committed as HiveD would have bound them.
  for (const auto& [id, rec] : state.jobs())
    if (holds_resources(rec.status.state) && !running_.contains(id.value())) adopt(rec);
}

void hived_placement::adopt(const job_record& rec) {
  std::vector<pod_record> pods;
  std::map<int, std::vector<hived::pod_placement>> groups;
  std::string chain;
  std::uint32_t pod = 0;
  for (std::size_t ri = 0; ri < rec.spec.roles.size(); ++ri) {
    const task_role& role = rec.spec.roles[ri];
    if (role.gpu.count == 0) return;  // never bound by HiveD (place() defers it)
    const std::uint32_t first = first_task(rec.spec, ri).value();
    for (std::uint32_t k = 0; k < role.task_count; ++k, ++pod) {
      if (first + k >= rec.placement.size() || !rec.placement[first + k].node.valid()) return;
      const task_placement& tp = rec.placement[first + k];
      const std::uint32_t n = tp.node.value();
      if (n >= node_cell_.size()) return;
      hived::pod_request req = request(rec, pod);
      hived::pod_placement pp;
      pp.node = node_name_[n];
      for (const device_share& d : tp.devices)
        pp.leaf_cells.push_back(static_cast<int>(d.device.value() - first_device_[n]));
      // A guaranteed pod's leaves lie in its VC's node-level cells; an opportunistic pod has none.
      pp.preassigned_types.assign(pp.leaf_cells.size(),
                                  req.priority >= 0 ? node_cell_[n].type : std::string());
      chain = node_cell_[n].chain;
      hived::bind_info bi;
      bi.node = pp.node;
      bi.leaf_cells = pp.leaf_cells;
      groups[static_cast<int>(role.gpu.count)].push_back(std::move(pp));
      pods.push_back({std::move(req), std::move(bi)});
    }
  }
  for (std::size_t i = 0; i < pods.size(); ++i) {
    pods[i].bind.chain = chain;
    pods[i].bind.group_placements = groups;
    if (auto ok = sched_->add_allocated(pods[i].pod, pods[i].bind); !ok) {
      // HiveD refuses the record (its cells are held): undo the pods added so far; the job stays
      // unknown to HiveD, and place() still checks every answer against the state.
      for (std::size_t j = 0; j < i; ++j)
        static_cast<void>(sched_->delete_allocated(pods[j].pod, pods[j].bind));
      return;
    }
  }
  for (const pod_record& p : pods)
    held_leaves_ += static_cast<std::int64_t>(p.bind.leaf_cells.size());
  index_pods(rec.spec.id.value(), pods, true);
  running_[rec.spec.id.value()] = std::move(pods);
}

result<std::unique_ptr<placement_policy>> make_hived_placement(const policy_params& params,
                                                               const cluster& description,
                                                               const cluster_topology* topology) {
  hived_placement_params p;
  for (const auto& [k, v] : params) {
    if (k == "quota") {
      auto q = parse_quota_list(v);
      if (!q) return make_error(errc::invalid_argument, "hived: {}", q.error().message);
      p.quota = std::move(*q);
    } else if (k == "guaranteed_min_priority") {
      auto x = parse_param_int("hived", k, v);
      if (!x) return std::move(x).error();
      p.guaranteed_min_priority = static_cast<std::int32_t>(*x);
    } else if (k == "preemption") {
      auto f = parse_param_flag("hived", k, v);
      if (!f) return std::move(f).error();
      p.preemption = *f;
    } else if (k == "top") {
      if (v == "rack") {
        p.top = hived::top_cell_level::rack;
      } else if (v == "node") {
        p.top = hived::top_cell_level::node;
      } else {
        return make_error(errc::invalid_argument, "hived: parameter top: '{}' is not rack or node",
                          v);
      }
    } else {
      return make_error(
          errc::invalid_argument,
          "hived: unknown parameter '{}' (quota, guaranteed_min_priority, top, preemption)", k);
    }
  }
  auto h = hived_placement::create(description, topology, p);
  if (!h) return std::move(h).error();
  return std::unique_ptr<placement_policy>(std::make_unique<placement_adapter<hived_placement>>(
      std::move(*h), "hived", placement_traits{.per_tenant = true, .preempts = p.preemption}));
}

}  // namespace hetsched
