// SPDX-License-Identifier: MIT
// queue_placement: the admission cycle of the capacity queues, per scheduling pass, with the
// indexed packer binding what it admits; and its registry factory.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include <hetsched/model/job.hpp>
#include <hetsched/policies/queue_placement.hpp>

namespace hetsched {

queue_placement::queue_placement(indexed_packer packer, capacity_state queues,
                                 queue_placement_params params)
    : packer_(std::move(packer)),
      queues_(std::make_unique<capacity_state>(std::move(queues))),
      params_(std::move(params)) {}

result<queue_placement> queue_placement::create(const cluster& description,
                                                const cluster_topology* topology,
                                                queue_placement_params params) {
  queue_tree_document& doc = params.document;
  // User weights by name -> by tenant index (names no tenant has are never met).
  for (capacity_node_spec& n : doc.tree.nodes) {
    const auto it = doc.user_weight_names.find(n.name);
    if (!n.user_limit || it == doc.user_weight_names.end()) continue;
    for (const auto& [name, w] : it->second)
      for (std::size_t t = 0; t < params.tenants.size(); ++t)
        if (params.tenants[t] == name)
          n.user_limit->user_weights[tenant_id(static_cast<std::uint32_t>(t))] = w;
  }
  auto tree = capacity_tree::build(doc.tree);
  if (!tree) return make_error(tree.error().code, "capacity: tree: {}", tree.error().message);
  std::optional<queue_id> fallback;
  if (!doc.default_queue.empty()) {
    fallback = tree->find(doc.default_queue);
    if (!fallback || !tree->is_queue(*fallback))
      return make_error(errc::not_found, "capacity: tree: default_queue '{}' is not a queue",
                        doc.default_queue);
  }
  std::vector<std::optional<queue_id>> by_tenant;
  for (const std::string& name : params.tenants) {
    std::optional<queue_id> q;
    if (const auto it = doc.tenant_queue.find(name); it != doc.tenant_queue.end()) {
      q = tree->find(it->second);
      if (!q || !tree->is_queue(*q))
        return make_error(errc::invalid_argument,
                          "capacity: tree: tenant '{}' is listed by '{}', which is not a queue",
                          name, it->second);
    } else if (const auto own = tree->find(name); own && tree->is_queue(*own)) {
      q = own;
    } else {
      q = fallback;
    }
    if (!q)
      return make_error(errc::invalid_argument,
                        "capacity: tree: tenant '{}' maps to no queue (list it in a queue's "
                        "\"tenants\", name a queue after it, or set \"default_queue\")",
                        name);
    by_tenant.push_back(q);
  }
  indexed_packer packer = topology != nullptr ? indexed_packer(description, *topology, {params.fit})
                                              : indexed_packer(description, {params.fit});
  queue_placement out(std::move(packer), capacity_state(std::move(*tree)), std::move(params));
  out.tenant_queue_ = std::move(by_tenant);
  const capacity_tree& built = out.queues_->tree();
  out.queue_resources_.resize(built.size());
  for (std::size_t n = 0; n < built.size(); ++n)
    for (const auto& [name, frs] : built.resources_by_name())
      if (std::any_of(frs.begin(), frs.end(), [&](std::uint32_t fr) {
            return built.declares(queue_id(static_cast<std::uint32_t>(n)), fr);
          }))
        out.queue_resources_[n].push_back(name);  // alphabetical: resources_by_name's order
  out.default_queue_ = fallback;
  for (std::size_t d = 0; d < description.device_count(); ++d) {
    const gpu_type t = description.device(device_id(static_cast<std::uint32_t>(d))).type;
    if (t.empty()) continue;
    const std::string name(t.name());
    if (std::find(out.cluster_types_.begin(), out.cluster_types_.end(), name) ==
        out.cluster_types_.end())
      out.cluster_types_.push_back(name);
  }
  return out;
}

std::optional<queue_id> queue_placement::queue_of(std::uint32_t t) const {
  if (t < tenant_queue_.size()) return tenant_queue_[t];
  return default_queue_;
}

gpu_type queue_placement::flavor_type(std::string_view flavor) const {
  if (std::find(cluster_types_.begin(), cluster_types_.end(), flavor) == cluster_types_.end())
    return gpu_type{};
  return gpu_type(flavor);
}

result<pending_workload> queue_placement::workload(const job_record& rec) const {
  auto w = workload_of(rec.spec, now_ms_);
  if (!w) return std::move(w).error();
  const std::optional<queue_id> q = queue_of(rec.spec.tenant.value());
  if (!q)
    return make_error(errc::not_found, "capacity: tenant {} has no queue in the tree",
                      rec.spec.tenant.value());
  w->queue = *q;
  const capacity_tree& tree = queues_->tree();
  const std::vector<std::string>& covered = queue_resources_[q->value()];
  for (auto it = w->request.begin(); it != w->request.end();)
    it = std::binary_search(covered.begin(), covered.end(), it->first) ? std::next(it)
                                                                       : w->request.erase(it);
  if (!w->flavors.empty() && !tree.has_flavor(w->flavors.front())) w->flavors.clear();
  return w;
}

void queue_placement::sync(const cluster_state& state, capacity_state& queues, book& books) const {
  // Pending workloads whose jobs left the queue (bound elsewhere, cancelled, forgotten).
  std::vector<job_id> gone;
  for (std::size_t q = 0; q < queues.tree().size(); ++q) {
    if (!queues.tree().is_queue(queue_id(static_cast<std::uint32_t>(q)))) continue;
    queues.queue(queue_id(static_cast<std::uint32_t>(q))).pending.for_each([&](const auto& e) {
      const job_record* rec = state.find_job(e.key.job);
      if (rec == nullptr || rec->status.state != job_state::queued) gone.push_back(e.key.job);
    });
  }
  for (const job_id j : gone) static_cast<void>(queues.release(j));
  for (const auto& [id, rec] : state.jobs()) {
    if (rec.status.state != job_state::queued) continue;
    if (queues.is_pending(id) || queues.is_admitted(id) || books.free.contains(id.value()) ||
        books.refused.contains(id.value()))
      continue;
    auto w = workload(rec);
    if (!w) {
      books.refused.emplace(id.value(), std::move(w).error().message);
      continue;
    }
    if (w->request.empty()) {
      books.free.insert(id.value());
      continue;
    }
    if (auto s = queues.submit(*w); !s)
      books.refused.emplace(id.value(), std::move(s).error().message);
  }
}

result<queue_placement::pass> queue_placement::plan(const capacity_state& queues) const {
  capacity_cycle_options o;
  o.now = now_ms_;
  o.fair_sharing = params_.document.fair_sharing;
  o.preemption = params_.document.preemption;
  o.min_runtime = params_.document.min_runtime_s * 1000;
  auto p = plan_admission(queues, o);
  if (!p) return make_error(p.error().code, "capacity: admission cycle: {}", p.error().message);
  pass out;
  out.now = now_ms_;
  out.version = version_;
  out.plan = std::move(*p);
  for (std::size_t i = 0; i < out.plan.admitted.size(); ++i)
    out.admitted.emplace(out.plan.admitted[i].job.value(), static_cast<std::uint32_t>(i));
  for (std::size_t i = 0; i < out.plan.preemptions.size(); ++i)
    out.preemptors.emplace(out.plan.preemptions[i].preemptor.value(),
                           static_cast<std::uint32_t>(i));
  const auto& deferrals = out.plan.decision.deferrals;
  for (std::size_t i = 0; i < deferrals.size(); ++i)
    out.deferred.emplace(deferrals[i].job.value(), static_cast<std::uint32_t>(i));
  return out;
}

result<decision> queue_placement::answer(const cluster_state& state, const pass& p,
                                         const book& books, job_id job) {
  const std::uint32_t j = job.value();
  if (books.free.contains(j)) return packer_.place(state, job);
  decision d;
  if (const auto it = books.refused.find(j); it != books.refused.end()) {
    d.deferrals.push_back({job, defer_reason::topology_unsatisfiable, it->second});
    return d;
  }
  if (const auto it = p.admitted.find(j); it != p.admitted.end())
    return packer_.place(state, job, flavor_type(p.plan.admitted[it->second].flavor));
  const auto deferred = p.deferred.find(j);
  if (deferred != p.deferred.end()) {
    d.deferrals.push_back(p.plan.decision.deferrals[deferred->second]);
  } else {
    d.deferrals.push_back(
        {job, defer_reason::quota_exceeded, "capacity: not planned by the admission cycle"});
  }
  if (const auto it = p.preemptors.find(j); it != p.preemptors.end()) {
    for (const preemption_target& v : p.plan.preemptions[it->second].victims)
      d.preemptions.push_back(
          preemption{v.victim, fmt::format("{} by job {}", to_string(v.reason), j)});
  }
  return d;
}

result<bool> queue_placement::pass_is_current(const cluster_state& state, job_id job) const {
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "capacity: unknown job {}", job);
  if (rec->status.state != job_state::queued)
    return make_error(errc::failed_precondition, "capacity: job {} is {}, not queued", job,
                      rec->status.state);
  const std::uint32_t j = job.value();
  const bool known =
      queues_->is_pending(job) || books_.free.contains(j) || books_.refused.contains(j);
  return pass_ && pass_->now == now_ms_ && pass_->version == version_ && known;
}

result<decision> queue_placement::place(const cluster_state& state, job_id job) {
  auto current = pass_is_current(state, job);
  if (!current) return std::move(current).error();
  if (!*current) {
    sync(state, *queues_, books_);
    auto p = plan(*queues_);
    if (!p) return std::move(p).error();
    pass_ = std::move(*p);
  }
  return answer(state, *pass_, books_, job);
}

result<decision> queue_placement::what_if(const cluster_state& state, job_id job) {
  auto current = pass_is_current(state, job);
  if (!current) return std::move(current).error();
  if (*current) return answer(state, *pass_, books_, job);
  // The cycle place() would plan now, on copies: nothing here changes.
  capacity_state queues(*queues_);
  book books = books_;
  sync(state, queues, books);
  auto p = plan(queues);
  if (!p) return std::move(p).error();
  return answer(state, *p, books, job);
}

void queue_placement::admit_anyway(const job_record& rec, const cluster_state& state) {
  const job_id id = rec.spec.id;
  auto w = workload(rec);
  if (!w) return;  // no queue: nothing to charge
  if (w->request.empty()) {
    books_.free.insert(id.value());
    return;
  }
  const capacity_tree& tree = queues_->tree();
  std::vector<std::string> flavors;
  for (const task_placement& t : rec.placement)
    for (const device_share& s : t.devices) {
      const std::string type(state.cluster().device(s.device).type.name());
      if (!type.empty() && tree.has_flavor(type)) flavors.push_back(type);
    }
  for (const std::uint32_t f : tree.flavor_order(w->queue)) flavors.push_back(tree.flavor_name(f));
  flavors.emplace_back("default");
  for (const std::string& f : flavors) {
    admitted_workload a{id, w->queue, w->tenant, w->priority, now_ms_, f, w->request};
    if (queues_->add_admitted(a, w->submit_time)) break;
  }
}

void queue_placement::commit(const cluster_state& after, const decision& d) {
  packer_.commit(after, d);
  for (const binding& b : d.binds) {
    const job_record* rec = after.find_job(b.job);
    if (rec == nullptr || books_.free.contains(b.job.value()) || queues_->is_admitted(b.job))
      continue;
    bool planned = false;
    if (queues_->is_pending(b.job) && pass_) {
      if (const auto it = pass_->admitted.find(b.job.value()); it != pass_->admitted.end()) {
        admission_plan one;
        one.now = now_ms_;
        one.admitted.push_back(pass_->plan.admitted[it->second]);
        planned = static_cast<bool>(apply_admission(*queues_, one));
      }
    }
    if (!planned) {
      if (queues_->is_pending(b.job)) static_cast<void>(queues_->release(b.job));
      admit_anyway(*rec, after);
      ++version_;
    }
    if (!rec->spec.preemptible && queues_->is_admitted(b.job)) queues_->mark_victim(b.job, b.job);
  }
  if (!d.binds.empty() || d.preemptions.empty() || d.deferrals.empty() || !pass_) return;
  // "Preempt now, start later": the planned victims go in flight for the preemptor.
  const job_id p = d.deferrals.front().job;
  const auto it = pass_->preemptors.find(p.value());
  if (it == pass_->preemptors.end() || !queues_->is_pending(p)) return;
  preemption_plan mine = pass_->plan.preemptions[it->second];
  std::erase_if(mine.victims, [&](const preemption_target& v) {
    const bool asked = std::any_of(d.preemptions.begin(), d.preemptions.end(),
                                   [&](const preemption& pr) { return pr.job == v.victim; });
    return !asked || !queues_->is_admitted(v.victim) || queues_->in_flight(v.victim);
  });
  if (mine.victims.empty()) return;
  admission_plan one;
  one.now = now_ms_;
  one.preemptions.push_back(std::move(mine));
  static_cast<void>(apply_admission(*queues_, one));
}

void queue_placement::release(const cluster_state& after, job_id job) {
  packer_.release(after, job);
  if (queues_->is_pending(job) || queues_->is_admitted(job))
    static_cast<void>(queues_->release(job));
  books_.free.erase(job.value());
  books_.refused.erase(job.value());
  ++version_;
}

void queue_placement::rebuild(const cluster_state& state) {
  packer_.rebuild(state);
  std::vector<job_id> gone;
  for (const auto& slot : queues_->slots()) {
    if (!slot.live) continue;
    const job_record* rec = state.find_job(slot.w.job);
    if (rec == nullptr || !holds_resources(rec->status.state)) gone.push_back(slot.w.job);
  }
  for (const job_id j : gone) static_cast<void>(queues_->release(j));
  std::erase_if(books_.free, [&](std::uint32_t j) { return state.find_job(job_id(j)) == nullptr; });
  books_.refused.clear();
  for (const auto& [id, rec] : state.jobs()) {
    if (!holds_resources(rec.status.state) || queues_->is_admitted(id) ||
        books_.free.contains(id.value()))
      continue;
    if (queues_->is_pending(id)) static_cast<void>(queues_->release(id));
    admit_anyway(rec, state);
    if (!rec.spec.preemptible && queues_->is_admitted(id)) queues_->mark_victim(id, id);
  }
  ++version_;
}

result<std::unique_ptr<placement_policy>> make_queue_placement(const policy_params& params,
                                                               const cluster& description,
                                                               const cluster_topology* topology) {
  queue_placement_params p;
  bool has_tree = false;
  for (const auto& [k, v] : params) {
    if (k == "tree") {
      auto doc = parse_queue_tree_json(v);
      if (!doc) return make_error(doc.error().code, "capacity: {}", doc.error().message);
      p.document = std::move(*doc);
      has_tree = true;
    } else if (k == "tenants") {
      // "a/b/c" -> a, b, c (an empty piece is the tenant with no name).
      for (std::size_t from = 0;;) {
        const std::size_t slash = v.find('/', from);
        p.tenants.emplace_back(v.substr(from, slash - from));
        if (slash == std::string::npos) break;
        from = slash + 1;
      }
    } else if (k == "fit" && (v == "best" || v == "worst")) {
      p.fit = v == "best" ? node_fit::best : node_fit::worst;
    } else if (k == "fit") {
      return make_error(errc::invalid_argument,
                        "capacity: parameter fit: '{}' is not best or "
                        "worst",
                        v);
    } else {
      return make_error(errc::invalid_argument,
                        "capacity: parameter '{}' does not apply with tree= (tree, tenants, fit; "
                        "quotas, borrowing and preemption come from the tree document)",
                        k);
    }
  }
  if (!has_tree) return make_error(errc::invalid_argument, "capacity: parameter tree is missing");
  const bool preempts = p.document.preemption;
  auto q = queue_placement::create(description, topology, std::move(p));
  if (!q) return std::move(q).error();
  const placement_traits traits{.per_tenant = true, .preempts = preempts};
  return std::unique_ptr<placement_policy>(
      std::make_unique<placement_adapter<queue_placement>>(std::move(*q), "capacity", traits));
}

}  // namespace hetsched
