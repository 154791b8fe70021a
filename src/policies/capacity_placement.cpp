// SPDX-License-Identifier: MIT
// capacity_placement, its placers and its registry factory.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <memory>
#include <utility>

#include <hetsched/model/job.hpp>
#include <hetsched/policies/capacity_placement.hpp>
#include <hetsched/policies/hived_placement.hpp>
#include <hetsched/policies/queue_placement.hpp>

namespace hetsched {
namespace {

/// Returns the decimal `v` ("0.1", "1", "0.25"; at most 9 decimals) as an exact ratio in
/// lo..hi (lo_open: above lo). Errors name the parameter and the value.
result<pcpp_ratio> parse_ratio(std::string_view key, std::string_view v, std::int64_t hi,
                               bool lo_open) {
  const std::size_t dot = std::min(v.find('.'), v.size());
  const std::string_view whole = v.substr(0, dot);
  const std::string_view frac = dot < v.size() ? v.substr(dot + 1) : std::string_view{};
  const bool digits =
      std::all_of(whole.begin(), whole.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      std::all_of(frac.begin(), frac.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || whole.empty() || (dot < v.size() && frac.empty()) || frac.size() > 9 ||
      whole.size() > 6)
    return make_error(errc::invalid_argument,
                      "capacity: parameter {}: '{}' is not a decimal number (e.g. 0.1)", key, v);
  pcpp_ratio r{0, 1};
  for (const char c : whole) r.num = r.num * 10 + (c - '0');
  for (const char c : frac) {
    r.num = r.num * 10 + (c - '0');
    r.den *= 10;
  }
  if (r.num > hi * r.den || (lo_open && r.num == 0))
    return make_error(errc::out_of_range, "capacity: parameter {}: {} is not in {}0..{}", key, v,
                      lo_open ? "(" : "", hi);
  return r;
}

/// Largest millisecond with stamps in 64 bits (about 278 years); later times share it.
constexpr std::int64_t max_stamp_ms =
    (std::numeric_limits<std::int64_t>::max() - (capacity_placement::stamps_per_ms - 1)) /
    capacity_placement::stamps_per_ms;

std::int64_t stamp_ms(std::int64_t now_ms) {
  return std::clamp<std::int64_t>(now_ms, 0, max_stamp_ms);
}

}  // namespace

std::string_view to_string(capacity_placer_kind kind) noexcept {
  switch (kind) {
    case capacity_placer_kind::packer: return "packer";
    case capacity_placer_kind::hived: return "hived";
  }
  return "unknown";
}

result<std::unique_ptr<placement_policy>> make_capacity_placer(capacity_placer_kind kind,
                                                               const cluster& description,
                                                               const cluster_topology* topology,
                                                               node_fit fit) {
  if (kind == capacity_placer_kind::hived) {
    if (topology == nullptr)
      return make_error(errc::invalid_argument,
                        "capacity: placer=hived needs the cluster topology");
    hived_placement_params p;
    p.placer = true;
    auto h = hived_placement::create(description, topology, p);
    if (!h) return make_error(h.error().code, "capacity: placer=hived: {}", h.error().message);
    return std::unique_ptr<placement_policy>(std::make_unique<placement_adapter<hived_placement>>(
        std::move(*h), "hived", placement_traits{}));
  }
  indexed_packer packer = topology != nullptr ? indexed_packer(description, *topology, {fit})
                                              : indexed_packer(description, {fit});
  return std::unique_ptr<placement_policy>(std::make_unique<placement_adapter<indexed_packer>>(
      std::move(packer), "packer", placement_traits{}));
}

capacity_placement::capacity_placement(const cluster& description, const cluster_topology* topology,
                                       capacity_params params)
    : capacity_placement(
          std::make_unique<placement_adapter<indexed_packer>>(
              topology != nullptr ? indexed_packer(description, *topology, {params.fit})
                                  : indexed_packer(description, {params.fit}),
              "packer", placement_traits{}),
          std::move(params)) {}

capacity_placement::capacity_placement(std::unique_ptr<placement_policy> placer,
                                       capacity_params params)
    : params_(std::move(params)), placer_(std::move(placer)) {
  for (const std::uint32_t g : params_.quota) total_nominal_ += std::int64_t{g} * 1000;
  if (kueue()) ensure_queues(0);
}

result<capacity_placement> capacity_placement::create(std::unique_ptr<placement_policy> placer,
                                                      capacity_params params) {
  if (placer == nullptr) return make_error(errc::invalid_argument, "capacity: no placer");
  return capacity_placement(std::move(placer), std::move(params));
}

std::int64_t capacity_placement::nominal(std::uint32_t t) const noexcept {
  return t < params_.quota.size() ? std::int64_t{params_.quota[t]} * 1000 : 0;
}

void capacity_placement::ensure_queues(std::uint32_t tenant) {
  if (!kueue()) return;  // proportional keeps held_ only
  const std::uint32_t want =
      std::max({static_cast<std::uint32_t>(params_.quota.size()), tenant + 1, 1u});
  if (mirror_ != nullptr && mirror_queues_ >= want) return;
  capacity_tree_spec spec;
  capacity_node_spec cohort;
  cohort.name = "cohort";
  cohort.kind = capacity_node_kind::cohort;
  spec.nodes.push_back(std::move(cohort));
  for (std::uint32_t t = 0; t < want; ++t) {
    capacity_node_spec q;
    q.name = fmt::format("t{}", t);
    q.parent = "cohort";
    q.kind = capacity_node_kind::queue;
    quota_spec qs;
    qs.resource = "gpu";
    qs.nominal = nominal(t);
    if (!params_.borrow) {
      qs.borrowing_limit = 0;
    } else if (params_.borrow_limit >= 0) {
      qs.borrowing_limit = params_.borrow_limit * 1000;
    }
    q.quotas.push_back(std::move(qs));
    q.preemption.within_queue = within_queue_preemption::lower_priority;
    q.preemption.reclaim = cohort_reclaim::any;
    spec.nodes.push_back(std::move(q));
  }
  auto tree = capacity_tree::build(spec);
  if (!tree) return;  // quotas are bounded by the cluster's GPUs: cannot fail
  mirror_ = std::make_unique<capacity_state>(std::move(*tree));
  mirror_queues_ = want;
  for (const auto& [j, m] : held_) mirror_add(job_id(j), m);
}

void capacity_placement::mirror_add(job_id job, const mirror_rec& m) {
  admitted_workload w;
  w.job = job;
  w.queue = queue_id(m.tenant + 1);
  w.tenant = tenant_id(m.tenant);
  w.priority = m.priority;
  w.admitted_at = m.admitted_at;
  w.request["gpu"] = m.milli;
  if (mirror_ == nullptr || !mirror_->add_admitted(w)) return;
  if (m.marked.valid()) mirror_->mark_victim(job, m.marked);
}

void capacity_placement::mirror_drop(job_id job) {
  if (held_.erase(job.value()) > 0 && mirror_ != nullptr) static_cast<void>(mirror_->release(job));
}

std::int64_t capacity_placement::admission_stamp() noexcept {
  const std::int64_t ms = stamp_ms(now_ms_);
  if (ms != stamp_ms_) {
    stamp_ms_ = ms;
    stamp_seq_ = 0;
  }
  const std::int64_t k = std::min(stamp_seq_, stamps_per_ms - 1);
  ++stamp_seq_;
  return ms * stamps_per_ms + k;
}

void capacity_placement::charge(job_id job, std::uint32_t t, std::int64_t m) {
  if (usage_.size() <= t) usage_.resize(t + 1, 0);
  usage_[t] += m;
  total_usage_ += m;
  running_[job.value()] = {t, m};
}

result<decision> capacity_placement::place(const cluster_state& state, job_id job) {
  return decide(state, job, false);
}

result<decision> capacity_placement::what_if(const cluster_state& state, job_id job) {
  // A PCPP round that place() would plan now is planned here too and then forgotten; the mirror's
  // queues for a new tenant (nominal 0) are a cache that changes no answer.
  const std::int64_t next_round = next_round_ms_;
  auto pool = pool_;
  auto ideal = ideal_;
  auto d = decide(state, job, true);
  next_round_ms_ = next_round;
  pool_ = std::move(pool);
  ideal_ = std::move(ideal);
  return d;
}

result<decision> capacity_placement::decide(const cluster_state& state, job_id job, bool trial) {
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "capacity: unknown job {}", job);
  const std::uint32_t t = rec->spec.tenant.value();
  const std::int64_t need = total_milli_gpu(rec->spec);
  const std::int64_t used = usage(t);
  // A preemptor's quota is already reserved (and counted in `used`).
  const bool reserved = reserved_.contains(job.value());
  bool admit = reserved || used + need <= nominal(t);
  if (!admit && params_.borrow) {
    const bool under_limit =
        params_.borrow_limit < 0 || used + need <= nominal(t) + params_.borrow_limit * 1000;
    admit = under_limit && total_usage_ + need <= total_nominal_;
  }
  // A proportional preemptor may ask again for what its victims do not cover.
  const bool proportional = params_.preemption == capacity_preemption_mode::proportional;
  const bool may_preempt = params_.preemption != capacity_preemption_mode::none && need > 0 &&
                           (!reserved || proportional);
  if (!admit) {
    decision d;
    d.deferrals.push_back({job, defer_reason::quota_exceeded,
                           fmt::format("tenant {} uses {} of {} milli-GPU; job needs {}", t, used,
                                       nominal(t), need)});
    if (!may_preempt) return d;
    return preempt_or_wait(state, std::move(d), *rec, need);
  }
  auto d = trial ? placer_->what_if(state, job) : placer_->place(state, job);
  if (!d) return d;
  if (!d->preemptions.empty() || !d->suspensions.empty() || !d->migrations.empty() ||
      !d->resumes.empty() || !d->releases.empty())
    return make_error(errc::internal,
                      "capacity: placer {} answered job {} with more than a bind or a deferral "
                      "(preemption is capacity's)",
                      placer_->name(), job);
  const bool never =
      !d->deferrals.empty() && d->deferrals.front().reason == defer_reason::topology_unsatisfiable;
  if (!d->binds.empty() || !may_preempt || never) return d;
  return preempt_or_wait(state, std::move(*d), *rec, need);
}

result<decision> capacity_placement::preempt_or_wait(const cluster_state& state, decision wait,
                                                     const job_record& rec, std::int64_t need) {
  if (params_.preemption == capacity_preemption_mode::proportional)
    return proportional_or_wait(state, std::move(wait), rec, need);
  const std::uint32_t t = rec.spec.tenant.value();
  ensure_queues(t);
  if (mirror_ == nullptr) return wait;
  pending_workload w;
  w.job = rec.spec.id;
  w.queue = queue_id(t + 1);
  w.tenant = tenant_id(t);
  w.priority = rec.spec.priority;
  const std::int64_t now = stamp_ms(now_ms_) * stamps_per_ms + (stamps_per_ms - 1);
  w.submit_time = now;
  w.request["gpu"] = need;
  capacity_cycle_options o;
  o.now = now;
  o.min_runtime = params_.min_runtime_s * 1000 * stamps_per_ms;
  o.fair_sharing = params_.preemption == capacity_preemption_mode::fair;
  o.explain = false;
  auto plan = plan_preemption(*mirror_, w, o);
  if (!plan)
    return make_error(plan.error().code, "capacity: job {}: {}", w.job, plan.error().message);
  for (const preemption_target& v : plan->victims)
    wait.preemptions.push_back(
        preemption{v.victim, fmt::format("{} by job {}", to_string(v.reason), w.job.value())});
  return wait;
}

void capacity_placement::commit(const cluster_state& after, const decision& d) {
  placer_->commit(after, d);
  for (const binding& b : d.binds) {
    const job_record* rec = after.find_job(b.job);
    if (rec == nullptr) continue;
    const std::uint32_t t = rec->spec.tenant.value();
    const std::int64_t m = total_milli_gpu(rec->spec);
    // A preemptor's usage was charged when its quota was reserved.
    if (reserved_.erase(b.job.value()) == 0) charge(b.job, t, m);
    issued_.erase(b.job.value());
    hold(*rec);
  }
  if (params_.preemption == capacity_preemption_mode::none || !d.binds.empty() ||
      d.preemptions.empty() || d.deferrals.empty())
    return;
  // "Preempt now, start later": the victims are in flight for the preemptor, whose quota is
  // reserved until it binds.
  const job_id p = d.deferrals.front().job;
  for (const preemption& pr : d.preemptions) {
    const auto it = held_.find(pr.job.value());
    if (it == held_.end() || it->second.marked.valid()) continue;
    it->second.marked = p;
    if (mirror_ != nullptr) mirror_->mark_victim(pr.job, p);
    if (!kueue()) issued_[p.value()] += it->second.milli;
  }
  const job_record* rec = after.find_job(p);
  if (rec == nullptr || reserved_.contains(p.value())) return;
  const std::uint32_t t = rec->spec.tenant.value();
  const std::int64_t m = total_milli_gpu(rec->spec);
  reserved_.insert(p.value());
  charge(p, t, m);
  if (!kueue()) return;  // proportional: held_ holds running jobs only
  ensure_queues(t);
  const mirror_rec held{t, m, rec->spec.priority, admission_stamp(), p};
  held_[p.value()] = held;
  mirror_add(p, held);
}

void capacity_placement::release(const cluster_state& after, job_id job) {
  placer_->release(after, job);
  mirror_drop(job);
  issued_.erase(job.value());
  const auto it = running_.find(job.value());
  if (it == running_.end()) return;
  usage_[it->second.first] -= it->second.second;
  total_usage_ -= it->second.second;
  running_.erase(it);
}

void capacity_placement::hold(const job_record& rec) {
  const std::uint32_t t = rec.spec.tenant.value();
  const std::int64_t m = total_milli_gpu(rec.spec);
  if (params_.preemption == capacity_preemption_mode::none || m == 0) return;
  ensure_queues(t);
  mirror_drop(rec.spec.id);
  const mirror_rec held{t, m, rec.spec.priority, admission_stamp(),
                        rec.spec.preemptible ? job_id::invalid() : rec.spec.id};
  held_[rec.spec.id.value()] = held;
  mirror_add(rec.spec.id, held);
}

void capacity_placement::rebuild(const cluster_state& state) {
  placer_->rebuild(state);
  // Jobs the state no longer knows are released; jobs it runs that were never committed here
  // (bindings replayed after a restart) are charged to their tenants and held, ascending id.
  std::vector<job_id> gone;
  for (const auto& [id, use] : running_)
    if (state.find_job(job_id(id)) == nullptr) gone.emplace_back(id);
  for (const auto& [id, h] : held_)
    if (state.find_job(job_id(id)) == nullptr && !running_.contains(id)) gone.emplace_back(id);
  for (const job_id j : gone) {
    mirror_drop(j);
    issued_.erase(j.value());
    reserved_.erase(j.value());
    if (const auto it = running_.find(j.value()); it != running_.end()) {
      usage_[it->second.first] -= it->second.second;
      total_usage_ -= it->second.second;
      running_.erase(it);
    }
  }
  for (const auto& [id, rec] : state.jobs()) {
    if (!holds_resources(rec.status.state) || running_.contains(id.value())) continue;
    charge(id, rec.spec.tenant.value(), total_milli_gpu(rec.spec));
    hold(rec);
  }
}

result<std::unique_ptr<placement_policy>> make_capacity_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology) {
  if (params.contains("tree")) return make_queue_placement(params, description, topology);
  capacity_params p;
  capacity_placer_kind placer = capacity_placer_kind::packer;
  bool fit_given = false;
  std::vector<std::string_view> pcpp_given;  // proportional-only parameters given
  for (const auto& [k, v] : params) {
    if (k == "placer") {
      if (v == "packer") {
        placer = capacity_placer_kind::packer;
      } else if (v == "hived") {
        placer = capacity_placer_kind::hived;
      } else {
        return make_error(errc::invalid_argument,
                          "capacity: parameter placer: '{}' is not packer or hived", v);
      }
    } else if (k == "quota") {
      auto q = parse_quota_list(v);
      if (!q) return make_error(errc::invalid_argument, "capacity: {}", q.error().message);
      p.quota = std::move(*q);
    } else if (k == "borrow") {
      auto f = parse_param_flag("capacity", k, v);
      if (!f) return std::move(f).error();
      p.borrow = *f;
    } else if (k == "fit" && (v == "best" || v == "worst")) {
      p.fit = v == "best" ? node_fit::best : node_fit::worst;
      fit_given = true;
    } else if (k == "preemption" && (v == "none" || v == "classic" || v == "fair" ||
                                     v == "proportional" || v == "pcpp")) {
      p.preemption = v == "none"      ? capacity_preemption_mode::none
                     : v == "classic" ? capacity_preemption_mode::classic
                     : v == "fair"    ? capacity_preemption_mode::fair
                                      : capacity_preemption_mode::proportional;
    } else if (k == "preemption") {
      return make_error(errc::invalid_argument,
                        "capacity: parameter preemption: '{}' is not one of "
                        "preemption=none|classic|fair|proportional (alias pcpp)",
                        v);
    } else if (k == "max_ignored_over_capacity" || k == "natural_termination_factor" ||
               k == "total_preemption_per_round") {
      const bool dead_zone = k == "max_ignored_over_capacity";
      auto r = parse_ratio(k, v, dead_zone ? 1000 : 1, !dead_zone);
      if (!r) return std::move(r).error();
      (dead_zone                           ? p.max_ignored_over_capacity
       : k == "natural_termination_factor" ? p.natural_termination_factor
                                           : p.total_preemption_per_round) = *r;
      pcpp_given.push_back(k);
    } else if (k == "monitoring_interval_ms") {
      auto x = parse_param_int("capacity", k, v);
      if (!x) return std::move(x).error();
      if (*x < 0 || *x > max_capacity_monitoring_interval_ms)
        return make_error(errc::out_of_range,
                          "capacity: parameter monitoring_interval_ms: {} is not in 0..{} ms", *x,
                          max_capacity_monitoring_interval_ms);
      p.monitoring_interval_ms = *x;
      pcpp_given.push_back(k);
    } else if (k == "min_runtime_s") {
      auto x = parse_param_int("capacity", k, v);
      if (!x) return std::move(x).error();
      if (*x < 0 || *x > max_capacity_min_runtime_s)
        return make_error(errc::out_of_range,
                          "capacity: parameter min_runtime_s: {} is not in 0..{} seconds", *x,
                          max_capacity_min_runtime_s);
      p.min_runtime_s = *x;
    } else if (k == "borrow_limit") {
      auto x = parse_param_int("capacity", k, v);
      if (!x) return std::move(x).error();
      p.borrow_limit = *x;
    } else {
      return make_error(
          errc::invalid_argument,
          "capacity: unknown parameter '{}' or bad value (quota, borrow, borrow_limit, "
          "placer=packer|hived, fit, preemption=none|classic|fair|proportional, "
          "min_runtime_s, max_ignored_over_capacity, natural_termination_factor, "
          "total_preemption_per_round, monitoring_interval_ms)",
          k);
    }
  }
  if (!pcpp_given.empty() && p.preemption != capacity_preemption_mode::proportional)
    return make_error(errc::invalid_argument,
                      "capacity: parameter {} needs preemption=proportional", pcpp_given.front());
  if (p.min_runtime_s > 0 && p.preemption == capacity_preemption_mode::none)
    return make_error(errc::invalid_argument,
                      "capacity: parameter min_runtime_s={} needs preemption=classic or fair, "
                      "or proportional",
                      p.min_runtime_s);
  if (p.quota.empty()) {
    // No table: the whole cluster is one queue's nominal quota.
    p.quota.push_back(static_cast<std::uint32_t>(description.device_count()));
  }
  if (fit_given && placer != capacity_placer_kind::packer)
    return make_error(errc::invalid_argument,
                      "capacity: parameter fit applies to placer=packer only, not placer={}",
                      to_string(placer));
  const placement_traits traits{.per_tenant = true,
                                .preempts = p.preemption != capacity_preemption_mode::none};
  auto pl = make_capacity_placer(placer, description, topology, p.fit);
  if (!pl) return std::move(pl).error();
  auto c = capacity_placement::create(std::move(*pl), std::move(p));
  if (!c) return std::move(c).error();
  return std::unique_ptr<placement_policy>(
      std::make_unique<placement_adapter<capacity_placement>>(std::move(*c), "capacity", traits));
}

}  // namespace hetsched
