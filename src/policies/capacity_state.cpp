// SPDX-License-Identifier: MIT
// capacity_state: admitted and pending workloads and their usage over a capacity_tree.
#include <algorithm>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched {

namespace {
// Rebuilds `main` as the sorted merge of its live entries and `recent`.
void merge_runs(std::vector<capacity_state::pending_entry>& main,
                std::vector<capacity_state::pending_entry>& recent) {
  std::vector<capacity_state::pending_entry> out;
  out.reserve(main.size() + recent.size());
  auto b = recent.begin();
  for (const auto& e : main) {
    if (e.rec == nullptr) continue;
    for (; b != recent.end() && b->key < e.key; ++b) out.push_back(*b);
    out.push_back(e);
  }
  out.insert(out.end(), b, recent.end());
  main.swap(out);
  recent.clear();
}

bool key_less(const capacity_state::pending_entry& e, const capacity_state::pending_key& k) {
  return e.key < k;
}
}  // namespace

void capacity_pending_order::insert(const capacity_pending_entry& entry) {
  const auto at = std::lower_bound(recent_.begin(), recent_.end(), entry.key, key_less);
  recent_.insert(at, entry);
  ++live_;
  std::size_t limit = 64;
  while (limit * limit < 4 * main_.size()) limit *= 2;  // about max(64, 2 * sqrt(main))
  if (recent_.size() > limit) {
    merge_runs(main_, recent_);
    dead_ = 0;
  }
}

void capacity_pending_order::erase(const capacity_pending_key& key) {
  if (const auto it = std::lower_bound(recent_.begin(), recent_.end(), key, key_less);
      it != recent_.end() && it->key == key) {
    recent_.erase(it);
    --live_;
    return;
  }
  const auto it = std::lower_bound(main_.begin(), main_.end(), key, key_less);
  if (it == main_.end() || it->key != key || it->rec == nullptr) return;
  it->rec = nullptr;
  --live_;
  if (++dead_ > 32 && dead_ > live_) {
    std::erase_if(main_, [](const capacity_pending_entry& e) { return e.rec == nullptr; });
    dead_ = 0;
  }
}

std::size_t capacity_pending_order::count_before(const capacity_pending_key& key) const {
  const auto in_recent = static_cast<std::size_t>(
      std::lower_bound(recent_.begin(), recent_.end(), key, key_less) - recent_.begin());
  const auto end = std::lower_bound(main_.begin(), main_.end(), key, key_less);
  const auto in_main = static_cast<std::size_t>(std::count_if(
      main_.begin(), end, [](const capacity_pending_entry& e) { return e.rec != nullptr; }));
  return in_recent + in_main;
}

capacity_state::capacity_state(capacity_tree tree)
    : tree_(std::move(tree)), usage_(tree_.size() * tree_.fr_count(), 0), queues_(tree_.size()) {}

capacity_state::capacity_state(const capacity_state& other)
    : tree_(other.tree_),
      usage_(other.usage_),
      slots_(other.slots_),
      free_slots_(other.free_slots_),
      admitted_index_(other.admitted_index_),
      pending_(other.pending_),
      shared_uses_(other.shared_uses_),
      queues_(other.queues_),
      tenant_usage_(other.tenant_usage_),
      in_flight_per_preemptor_(other.in_flight_per_preemptor_) {
  for (auto& [job, rec] : pending_) rec.uses = &shared_uses_.find(*rec.uses)->first;
  for (auto& qr : queues_)
    for (auto* run : {&qr.pending.main_, &qr.pending.recent_})
      for (auto& e : *run)
        if (e.rec != nullptr) {
          e.rec = &pending_.at(e.key.job);
          e.uses = e.rec->uses;
        }
}

capacity_state& capacity_state::operator=(const capacity_state& other) {
  if (this != &other) *this = capacity_state(other);
  return *this;
}

result<std::vector<std::pair<std::uint32_t, std::int64_t>>> capacity_state::resolve(
    queue_id q, std::string_view flavor, const drf_vector& request, bool require_declared) const {
  std::vector<std::pair<std::uint32_t, std::int64_t>> use;
  for (const auto& [resource, amount] : request) {
    if (amount < 0)
      return make_error(errc::invalid_argument, "request of {} is negative ({})", resource, amount);
    if (amount > max_quota_amount)
      return make_error(errc::out_of_range, "request of {} is {} (above 2^40)", resource, amount);
    if (amount == 0) continue;
    const auto f = tree_.find_fr(flavor, resource);
    if (!f || (require_declared && !tree_.declares(q, *f)))
      return make_error(errc::not_found, "queue '{}' has no quota for {} in flavor '{}'",
                        tree_.name(q), resource, flavor);
    use.emplace_back(static_cast<std::uint32_t>(*f), amount);
  }
  return use;
}

void capacity_state::insert_admitted(admitted_workload w,
                                     std::vector<std::pair<std::uint32_t, std::int64_t>> use,
                                     std::int64_t order_time) {
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  auto& rec = slots_[slot];
  const queue_id q = w.queue;
  for (const auto& [f, a] : use) add_usage(tree_, usage_, q, f, a);
  if (tree_.spec(q).order == queue_order::drf || tree_.spec(q).user_limit) {
    auto& tu = tenant_usage_[{q.value(), w.tenant.value()}];
    tu.resize(tree_.fr_count(), 0);
    for (const auto& [f, a] : use) tu[f] += a;
  }
  rec.w = std::move(w);
  rec.fr_mask = 0;
  for (const auto& [f, a] : use) rec.fr_mask |= f < 64 ? std::uint64_t{1} << f : ~std::uint64_t{0};
  rec.use = std::move(use);
  rec.order_time = order_time;
  rec.preemptor = job_id::invalid();
  rec.live = true;
  auto& qa = queues_[q.value()].admitted;
  rec.pos_in_queue = qa.size();
  qa.push_back(slot);
  admitted_index_.emplace(rec.w.job, slot);
}

result<void> capacity_state::add_admitted(const admitted_workload& w,
                                          std::optional<std::int64_t> submit_time) {
  if (!w.job.valid()) return make_error(errc::invalid_argument, "admitted workload has no job id");
  if (!w.queue.valid() || w.queue.value() >= tree_.size())
    return make_error(errc::not_found, "job {}: queue {} does not exist", w.job.value(),
                      w.queue.value());
  if (!tree_.is_queue(w.queue))
    return make_error(errc::invalid_argument, "job {}: '{}' is a cohort, not a queue",
                      w.job.value(), tree_.name(w.queue));
  if (admitted_index_.contains(w.job) || pending_.contains(w.job))
    return make_error(errc::already_exists, "job {} is already known", w.job.value());
  auto use = resolve(w.queue, w.flavor, w.request, false);
  if (!use) return make_error(use.error().code, "job {}: {}", w.job.value(), use.error().message);
  for (const auto& [f, a] : *use)
    for (const queue_id x : tree_.path_to_root(w.queue))
      if (usage(x, f) + a > max_tree_amount)
        return make_error(errc::out_of_range, "job {}: usage of '{}' would exceed 2^42",
                          w.job.value(), tree_.name(x));
  insert_admitted(w, std::move(*use), submit_time.value_or(w.admitted_at));
  return ok();
}

result<void> capacity_state::validate_pending(const pending_workload& w) const {
  if (!w.queue.valid() || w.queue.value() >= tree_.size())
    return make_error(errc::not_found, "job {}: queue {} does not exist", w.job.value(),
                      w.queue.value());
  if (!tree_.is_queue(w.queue))
    return make_error(errc::invalid_argument, "job {}: '{}' is a cohort, not a queue",
                      w.job.value(), tree_.name(w.queue));
  for (const auto& f : w.flavors)
    if (!tree_.has_flavor(f))
      return make_error(errc::not_found, "job {}: no queue has flavor '{}'", w.job.value(), f);
  bool any = false;
  for (const std::uint32_t fl : tree_.flavor_order(w.queue)) {
    const auto& name = tree_.flavor_name(fl);
    if (!w.flavors.empty() &&
        std::find(w.flavors.begin(), w.flavors.end(), name) == w.flavors.end())
      continue;
    auto use = resolve(w.queue, name, w.request, true);
    if (use) {
      any = true;
    } else if (use.error().code != errc::not_found) {
      return make_error(use.error().code, "job {}: {}", w.job.value(), use.error().message);
    }
  }
  if (!any)
    return make_error(errc::invalid_argument,
                      "job {}: no allowed flavor of queue '{}' has quota for all its resources",
                      w.job.value(), tree_.name(w.queue));
  return ok();
}

result<void> capacity_state::submit(const pending_workload& w) {
  if (!w.job.valid()) return make_error(errc::invalid_argument, "pending workload has no job id");
  HETSCHED_TRY(validate_pending(w));
  if (admitted_index_.contains(w.job) || pending_.contains(w.job))
    return make_error(errc::already_exists, "job {} is already known", w.job.value());
  pending_rec rec;
  rec.w = w;
  flavor_uses uses;
  for (const std::uint32_t fl : tree_.flavor_order(w.queue)) {
    const auto& name = tree_.flavor_name(fl);
    if (!w.flavors.empty() &&
        std::find(w.flavors.begin(), w.flavors.end(), name) == w.flavors.end())
      continue;
    if (auto use = resolve(w.queue, name, w.request, true)) uses.emplace_back(fl, std::move(*use));
  }
  const auto shared = shared_uses_.try_emplace(std::move(uses), 0).first;
  ++shared->second;
  rec.uses = &shared->first;
  const auto order = tree_.spec(w.queue).order;
  const bool fifo = order == queue_order::strict_fifo || order == queue_order::best_effort_fifo;
  rec.key = pending_key{fifo ? 0 : -static_cast<std::int64_t>(w.priority), w.submit_time, w.job};
  auto& qr = queues_[w.queue.value()];
  if (order == queue_order::drf) qr.by_tenant[w.tenant].insert(rec.key);
  const auto it = pending_.emplace(w.job, std::move(rec)).first;
  // The record's address is stable: unordered_map never moves its elements.
  qr.pending.insert({it->second.key, &it->second, it->second.uses});
  return ok();
}

void capacity_state::erase_pending(std::unordered_map<job_id, pending_rec>::iterator it) {
  const pending_rec& rec = it->second;
  auto& qr = queues_[rec.w.queue.value()];
  qr.pending.erase(rec.key);
  if (rec.preemptor) qr.preemptors.erase(rec.key);
  if (const auto t = qr.by_tenant.find(rec.w.tenant); t != qr.by_tenant.end()) {
    t->second.erase(rec.key);
    if (t->second.empty()) qr.by_tenant.erase(t);
  }
  if (const auto u = shared_uses_.find(*rec.uses); --u->second == 0) shared_uses_.erase(u);
  in_flight_per_preemptor_.erase(it->first);
  pending_.erase(it);
}

result<void> capacity_state::release(job_id job) {
  if (const auto it = pending_.find(job); it != pending_.end()) {
    erase_pending(it);
    return ok();
  }
  const auto it = admitted_index_.find(job);
  if (it == admitted_index_.end())
    return make_error(errc::not_found, "job {} is neither pending nor admitted", job.value());
  const std::uint32_t slot = it->second;
  auto& rec = slots_[slot];
  const queue_id q = rec.w.queue;
  for (const auto& [f, a] : rec.use) add_usage(tree_, usage_, q, f, -a);
  if (const auto tu = tenant_usage_.find({q.value(), rec.w.tenant.value()});
      tu != tenant_usage_.end())
    for (const auto& [f, a] : rec.use) tu->second[f] -= a;
  if (rec.preemptor.valid()) {
    if (const auto c = in_flight_per_preemptor_.find(rec.preemptor);
        c != in_flight_per_preemptor_.end() && --c->second == 0)
      in_flight_per_preemptor_.erase(c);
  }
  auto& qa = queues_[q.value()].admitted;
  const std::size_t pos = rec.pos_in_queue;
  qa[pos] = qa.back();
  slots_[qa[pos]].pos_in_queue = pos;
  qa.pop_back();
  rec.live = false;
  rec.use.clear();
  free_slots_.push_back(slot);
  admitted_index_.erase(it);
  return ok();
}

const admitted_workload* capacity_state::admitted(job_id job) const {
  const auto it = admitted_index_.find(job);
  return it == admitted_index_.end() ? nullptr : &slots_[it->second].w;
}

const pending_workload* capacity_state::pending(job_id job) const {
  const auto it = pending_.find(job);
  return it == pending_.end() ? nullptr : &it->second.w;
}

std::optional<std::int64_t> capacity_state::queue_order_time(job_id job) const {
  const auto it = admitted_index_.find(job);
  if (it == admitted_index_.end()) return std::nullopt;
  return slots_[it->second].order_time;
}

bool capacity_state::in_flight(job_id job) const {
  const auto it = admitted_index_.find(job);
  return it != admitted_index_.end() && slots_[it->second].preemptor.valid();
}

std::size_t capacity_state::victims_in_flight(job_id preemptor) const {
  if (in_flight_per_preemptor_.empty()) return 0;  // no hashing per pending workload then
  const auto it = in_flight_per_preemptor_.find(preemptor);
  return it == in_flight_per_preemptor_.end() ? 0 : it->second;
}

const std::vector<std::int64_t>* capacity_state::tenant_usage(queue_id q, tenant_id t) const {
  const auto it = tenant_usage_.find({q.value(), t.value()});
  return it == tenant_usage_.end() ? nullptr : &it->second;
}

void capacity_state::admit_pending(job_id job, std::uint32_t flavor, std::int64_t now) {
  auto it = pending_.find(job);
  pending_workload w = std::move(it->second.w);
  erase_pending(it);
  admitted_workload a{
      w.job, w.queue, w.tenant, w.priority, now, tree_.flavor_name(flavor), std::move(w.request)};
  auto use = resolve(a.queue, a.flavor, a.request, true);
  insert_admitted(std::move(a), std::move(*use), w.submit_time);
}

void capacity_state::mark_victim(job_id victim, job_id preemptor) {
  auto& rec = slots_[admitted_index_.at(victim)];
  rec.preemptor = preemptor;
  ++in_flight_per_preemptor_[preemptor];
  if (auto it = pending_.find(preemptor); it != pending_.end()) {
    it->second.preemptor = true;
    queues_[it->second.w.queue.value()].preemptors.insert(it->second.key);
  }
}

result<pending_workload> workload_of(const job_spec& spec, std::int64_t submit_time) {
  HETSCHED_TRY(validate(spec));
  pending_workload w;
  w.job = spec.id;
  w.queue = spec.queue;
  w.tenant = spec.tenant;
  w.priority = spec.priority;
  w.submit_time = submit_time;
  std::optional<std::string> type;
  for (const auto& role : spec.roles) {
    const resource_vector r = task_request(role) * static_cast<std::int64_t>(role.task_count);
    const auto add = [&](const std::string& name, std::int64_t v) {
      if (v != 0) w.request[name] += v;
    };
    add("cpu", r.milli_cpu);
    add("memory", r.memory_mib);
    add("gpu", r.milli_gpu);
    add("gpu_memory", r.gpu_memory_mib);
    for (const auto& [name, v] : r.extended) add(name, v);
    if (role.gpu.count > 0 && !role.gpu.type.empty()) {
      const std::string t(role.gpu.type.name());
      if (type && *type != t)
        return make_error(errc::invalid_argument, "job {}: roles ask for GPU types {} and {}",
                          spec.id.value(), *type, t);
      type = t;
    }
  }
  if (type) w.flavors.push_back(*type);
  return w;
}

}  // namespace hetsched
