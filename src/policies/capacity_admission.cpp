// SPDX-License-Identifier: MIT
// The admission cycle of capacity queues: per-queue nomination (orderings, strict and best
// effort), a tournament per root with cached keys along the changed path, preemption planning
// for heads that do not fit, and apply_admission().
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include <hetsched/policies/capacity_preemption.hpp>

#include "capacity_internal.hpp"

namespace hetsched {
namespace {

using namespace capacity_detail;
__extension__ typedef unsigned __int128 u128;

struct nominee {
  const capacity_state::pending_rec* rec = nullptr;
  assignment a;
};

// Tournament key of a node: its best nominee and the comparison data at its parent.
struct node_key {
  queue_id best = queue_id::invalid();  // the queue whose nominee is best in the subtree
  bool preemptor = false;
  bool non_borrowing = false;
  drs_value drs;  // of this node with the nominee admitted (fair sharing only)
  std::int32_t priority = 0;
  std::int64_t submit = 0;
  job_id job;
};

// True if a beats b (the documented tie-break chain).
bool beats(const node_key& a, const node_key& b, bool fair) {
  if (a.preemptor != b.preemptor) return a.preemptor;
  if (a.non_borrowing != b.non_borrowing) return a.non_borrowing;
  if (fair) {
    const auto c = a.drs <=> b.drs;
    if (c != 0) return c < 0;
  }
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submit != b.submit) return a.submit < b.submit;
  return a.job < b.job;
}

class cycle {
 public:
  /// With `probe`, the cycle answers what_if() for it (probe_cycle()): it runs as if `probe`
  /// were submitted, only over the tree of its root, records no other decision and stops once
  /// the probe's decision is known.
  cycle(const capacity_state& state, const capacity_cycle_options& options,
        const pending_workload* probe = nullptr)
      : state_(state),
        tree_(state.tree()),
        opt_(options),
        usage_(state.usage()),
        queues_(tree_.size()),
        keys_(tree_.size()),
        excluded_(state.slots().size(), 0),
        avail_(tree_.size() * tree_.fr_count(), 0),
        avail_stamp_(tree_.size() * tree_.fr_count(), ~std::uint64_t{0}),
        messages_(tree_.size()) {
    if (probe != nullptr) set_probe(*probe);
  }

  result<admission_plan> run() {
    plan_.now = opt_.now;
    if (!probe_) plan_.decision.deferrals.reserve(state_.pending_count());
    // Initial nominations all read the starting usage, so their order does not matter: the
    // probe's queue goes first (its answer may be known at once).
    if (probe_) {
      HETSCHED_TRY(start_queue(probe_->w.queue));
      if (stop_) return std::move(plan_);
    }
    for (std::uint32_t i = 0; i < tree_.size(); ++i) {
      const queue_id q(i);
      if (!tree_.is_queue(q) || state_.queue(q).pending.empty()) continue;
      if (probe_ && (q == probe_->w.queue || tree_.path_to_root(q).back() != probe_->root))
        continue;
      HETSCHED_TRY(start_queue(q));
    }
    for (const queue_id root : tree_.roots()) {
      if (probe_ && root != probe_->root) continue;
      while (!stop_ && keys_[root.value()].best.valid()) {
        const queue_id q = keys_[root.value()].best;
        admit_or_retry(q);
        update_path(q);
      }
    }
    if (opt_.preemption && !stop_) plan_preemptions();
    return std::move(plan_);
  }

  /// The probe's decision (after run()).
  probe_outcome take_probe_outcome() { return std::move(probe_->out); }

 private:
  struct queue_cursor {
    bool active = false;
    bool blocked = false;
    // Two-way merge of the queue's pending runs (capacity_state::pending_order).
    const capacity_state::pending_entry *main = nullptr, *main_end = nullptr;
    const capacity_state::pending_entry *recent = nullptr, *recent_end = nullptr;
    // what-if: the probe's entry, merged into its queue's walk, and the pending workload it
    // replaces (same job id), skipped wherever it is. Either makes the walk take the slow path.
    const capacity_state::pending_entry* probe = nullptr;
    job_id skip = job_id::invalid();
    std::vector<const capacity_state::pending_entry*> custom;  // custom order
    capacity_state::pending_entry drf_next;                    // drf: the last one returned
    std::size_t custom_pos = 0;
    struct drf_tenant {
      std::set<capacity_state::pending_key>::const_iterator next, end;
      bool probe = false;  // the probe is the tenant's and has not been returned yet
    };
    std::map<tenant_id, drf_tenant> tenants;  // drf
    // drf: the queue's pending preemptors, returned first, then skipped by the tenant walk.
    std::vector<capacity_state::pending_entry> preemptors_first;
    std::size_t preemptors_pos = 0;
    std::set<job_id> preemptor_jobs;
    std::optional<nominee> nom;
    const capacity_state::pending_rec* first_nonfit = nullptr;
    std::size_t first_nonfit_deferral = 0;
    bool user_limited = false;      // the queue has a YARN user limit
    double active_user_weight = 0;  // YARN user limits: of active_users
    std::set<tenant_id> active_users;
  };

  result<void> start_queue(queue_id q) {
    HETSCHED_TRY(init_queue(q));
    nominate(q);
    update_path(q);
    return ok();
  }

  result<void> init_queue(queue_id q) {
    auto& c = queues_[q.value()];
    const auto& qr = state_.queue(q);
    const auto order = tree_.spec(q).order;
    c.active = true;
    c.main = qr.pending.main().data();
    c.main_end = c.main + qr.pending.main().size();
    c.recent = qr.pending.recent().data();
    c.recent_end = c.recent + qr.pending.recent().size();
    if (probe_) {
      if (q == probe_->w.queue) c.probe = &probe_->entry;
      if (q == probe_->replaced_queue) c.skip = probe_->replaced;
    }
    if (order == queue_order::custom) {
      if (!opt_.custom_order)
        return make_error(errc::invalid_argument,
                          "queue '{}' has a custom order but no custom_order was given",
                          tree_.name(q));
      c.custom.reserve(qr.pending.size() + 1);
      qr.pending.for_each([&](const auto& e) {
        if (c.probe != nullptr && c.probe->key < e.key) {
          c.custom.push_back(c.probe);  // at its key position, as submit() would put it
          c.probe = nullptr;
        }
        if (e.key.job != c.skip) c.custom.push_back(&e);
      });
      if (c.probe != nullptr) c.custom.push_back(c.probe);
      std::stable_sort(c.custom.begin(), c.custom.end(), [&](const auto* a, const auto* b) {
        return opt_.custom_order(a->rec->w, b->rec->w);
      });
      // Preemptors first: the quota their victims free is theirs (the order may put a victim,
      // back in the queue, before them).
      std::stable_partition(c.custom.begin(), c.custom.end(),
                            [](const auto* e) { return e->rec->preemptor; });
    } else if (order == queue_order::drf) {
      for (const auto& [t, keys] : qr.by_tenant) c.tenants[t] = {keys.begin(), keys.end(), false};
      const bool probe_here = c.probe != nullptr;
      if (probe_here) {
        const auto [it, fresh] = c.tenants.try_emplace(probe_->w.tenant);
        if (fresh) it->second = {no_keys_.end(), no_keys_.end(), true};
        it->second.probe = true;
      }
      for (const auto& key : qr.preemptors) {
        if (key.job == c.skip) continue;
        const auto& rec = state_.pending_record(key.job);
        c.preemptors_first.push_back({rec.key, &rec, rec.uses});
        c.preemptor_jobs.insert(key.job);
      }
      if (probe_here && probe_->rec.preemptor) {
        const auto at = std::lower_bound(
            c.preemptors_first.begin(), c.preemptors_first.end(), probe_->entry.key,
            [](const capacity_state::pending_entry& e, const auto& k) { return e.key < k; });
        c.preemptors_first.insert(at, probe_->entry);
        c.tenants[probe_->w.tenant].probe = false;
      }
    }
    if (const auto& ul = tree_.spec(q).user_limit) {
      c.user_limited = true;
      // The active users: the queue's pending tenants (with a what-if probe submitted and the
      // workload it replaces gone).
      qr.pending.for_each([&](const auto& e) {
        if (e.key.job != c.skip) c.active_users.insert(e.rec->w.tenant);
      });
      if (probe_ && q == probe_->w.queue) c.active_users.insert(probe_->w.tenant);
      for (const tenant_id u : c.active_users) c.active_user_weight += user_weight(*ul, u);
    }
    return ok();
  }

  std::vector<std::int64_t>& tenant_use(queue_id q, tenant_id t) {
    auto [it, inserted] = tenant_use_.try_emplace({q.value(), t.value()});
    if (inserted) {
      if (const auto* u = state_.tenant_usage(q, t)) {
        it->second = *u;
      } else {
        it->second.assign(tree_.fr_count(), 0);
      }
    }
    return it->second;
  }

  // Lower dominant share of the queue's nominal quota first; ties to the lower tenant id.
  const capacity_state::pending_entry* next_drf(queue_id q, queue_cursor& c) {
    const std::size_t nf = tree_.fr_count();
    std::optional<tenant_id> best;
    std::int64_t bn = 0;
    std::int64_t bd = 1;
    for (auto& [t, range] : c.tenants) {
      while (range.next != range.end &&
             (range.next->job == c.skip || c.preemptor_jobs.contains(range.next->job)))
        ++range.next;
      if (range.next == range.end && !range.probe) continue;
      const auto& use = tenant_use(q, t);
      std::int64_t sn = 0;
      std::int64_t sd = 1;
      for (std::size_t f = 0; f < nf; ++f) {
        const std::int64_t nom = tree_.nominal(q, f);
        if (nom <= 0 || use[f] <= 0) continue;
        if (static_cast<u128>(use[f]) * static_cast<u128>(sd) >
            static_cast<u128>(sn) * static_cast<u128>(nom)) {
          sn = use[f];
          sd = nom;
        }
      }
      if (!best || static_cast<u128>(sn) * static_cast<u128>(bd) <
                       static_cast<u128>(bn) * static_cast<u128>(sd)) {
        best = t;
        bn = sn;
        bd = sd;
      }
    }
    if (!best) return nullptr;
    auto& range = c.tenants[*best];
    if (range.probe && (range.next == range.end || probe_->entry.key < *range.next)) {
      range.probe = false;
      return &probe_->entry;
    }
    const auto& rec = state_.pending_record(range.next->job);
    ++range.next;
    c.drf_next = {rec.key, &rec, rec.uses};
    return &c.drf_next;
  }

  // The queue's next pending workload in its order (valid until the next call), or nullptr.
  const capacity_state::pending_entry* next_pending(queue_id q, queue_cursor& c) {
    switch (tree_.spec(q).order) {
      case queue_order::custom:
        if (c.custom_pos == c.custom.size()) return nullptr;
        return c.custom[c.custom_pos++];
      case queue_order::drf:
        if (c.preemptors_pos < c.preemptors_first.size())
          return &c.preemptors_first[c.preemptors_pos++];
        return next_drf(q, c);
      default:
        if (c.probe != nullptr || c.skip.valid()) [[unlikely]]
          return next_merged(c);
        while (c.main != c.main_end && c.main->rec == nullptr) ++c.main;  // tombstones
        if (c.main == c.main_end) return c.recent == c.recent_end ? nullptr : c.recent++;
        if (c.recent == c.recent_end || c.main->key < c.recent->key) return c.main++;
        return c.recent++;
    }
  }

  // next_pending() of a queue holding the probe or the workload it replaces: a three-way merge
  // of the two runs and the probe's entry that skips the replaced workload.
  const capacity_state::pending_entry* next_merged(queue_cursor& c) {
    for (;;) {
      while (c.main != c.main_end && c.main->rec == nullptr) ++c.main;
      const capacity_state::pending_entry* e = nullptr;
      if (c.main != c.main_end) e = c.main;
      if (c.recent != c.recent_end && (e == nullptr || c.recent->key < e->key)) e = c.recent;
      if (c.probe != nullptr && (e == nullptr || c.probe->key < e->key)) e = c.probe;
      if (e == nullptr) return nullptr;
      if (e == c.probe) {
        c.probe = nullptr;
        return e;
      }
      (e == c.main ? c.main : c.recent)++;
      if (e->key.job != c.skip) return e;
    }
  }

  [[nodiscard]] bool strict(queue_id q) const { return strict_order(tree_.spec(q).order); }

  // True if the deferral message of `job` is wanted: with explain, and in a what-if only the
  // probe's (always).
  [[nodiscard]] bool explain_for(job_id job) const {
    return probe_ ? job == probe_->w.job : opt_.explain;
  }

  // Inlined: it runs once per pending workload, and its what-if branch kept it out of line.
  [[gnu::always_inline]] void defer(job_id job, std::string message) {
    if (probe_) [[unlikely]] {
      if (job == probe_->w.job) probe_deferred(std::move(message));
      return;
    }
    auto& d = plan_.decision.deferrals.emplace_back();  // in place: no temporaries to move
    d.job = job;
    d.reason = defer_reason::quota_exceeded;
    if (opt_.explain) d.message = std::move(message);
  }

  // Returns an empty string if `w` stays within its YARN user limit with `a`, else why not.
  std::string user_limit_violation(const pending_workload& w, const assignment& a,
                                   const queue_cursor& c) {
    if (!tree_.spec(w.queue).user_limit) return {};
    return capacity_detail::user_limit_violation(
        tree_, usage_, w, a.use, tenant_use(w.queue, w.tenant), c.active_user_weight);
  }

  // available(q, fr), memoised until the next admission (usage only changes then).
  std::int64_t avail(queue_id q, std::uint32_t f) {
    const std::size_t i = q.value() * tree_.fr_count() + f;
    if (avail_stamp_[i] != stamp_) {
      avail_stamp_[i] = stamp_;
      avail_[i] = quota_available(tree_, usage_, q, f);
    }
    return avail_[i];
  }

  // A flavor choice without a copy of its use list (most pending workloads do not fit).
  struct choice {
    fit_mode mode = fit_mode::never;
    const std::pair<std::uint32_t, use_list>* option = nullptr;
  };

  // assign_flavor() for a workload of queue q over its pre-resolved uses and memoised
  // availability.
  choice choose(queue_id q, const capacity_state::flavor_uses& uses) {
    const std::pair<std::uint32_t, use_list>* preempt = nullptr;
    for (const auto& option : uses) {
      bool fit = true;
      bool possible = true;
      for (const auto& [f, a] : option.second) {
        if (a > avail(q, f)) fit = false;
        if (a > tree_.potential_available(q, f)) possible = false;
      }
      if (fit) return {fit_mode::fit, &option};
      if (possible && preempt == nullptr) preempt = &option;
    }
    if (preempt != nullptr) return {fit_mode::preempt, preempt};
    return {fit_mode::never, uses.empty() ? nullptr : &uses.front()};
  }

  assignment materialize(queue_id q, const choice& ch) const {
    if (ch.option == nullptr) return assignment{};
    assignment out{ch.mode, ch.option->first, ch.option->second, false};
    if (ch.mode == fit_mode::fit) {
      const std::size_t nf = tree_.fr_count();
      out.borrowing = std::any_of(out.use.begin(), out.use.end(), [&](const auto& fa) {
        return usage_[q.value() * nf + fa.first] + fa.second > tree_.subtree_quota(q, fa.first);
      });
    }
    return out;
  }

  // The deferral message of a workload that does not fit now: computed once per queue and
  // admission stamp, then shared by every such workload of the queue.
  std::string waiting_message(queue_id q, job_id job, const capacity_state::pending_rec& rec,
                              const choice& ch) {
    if (!explain_for(job)) return {};  // `job`, not rec.w.job: no visit to the record
    if (ch.mode == fit_mode::never) return explain_no_fit(tree_, usage_, rec.w, materialize(q, ch));
    auto& m = messages_[q.value()];
    if (m.first != stamp_ || m.second.empty()) {
      std::string text = "waiting for quota in queue '" + tree_.name(q) + "'; available now:";
      for (const std::uint32_t fl : tree_.flavor_order(q))
        for (std::size_t f = 0; f < tree_.fr_count(); ++f)
          if (tree_.declares(q, f) && tree_.fr(f).flavor == tree_.flavor_name(fl)) {
            text += ' ';
            text += tree_.fr(f).resource;
            text += '@';
            text += tree_.fr(f).flavor;
            text += '=';
            text += std::to_string(avail(q, static_cast<std::uint32_t>(f)));
          }
      m = {stamp_, std::move(text)};
    }
    return m.second;
  }

  // Finds the queue's next fitting workload; defers those that do not fit.
  void nominate(queue_id q) {
    auto& c = queues_[q.value()];
    c.nom.reset();
    if (c.blocked) return;
    // A workload that does not fit is decided from its queue entry alone (job id, shared
    // uses): its record is read only when it is nominated or explained.
    while (const auto* e = next_pending(q, c)) {
      const job_id job = e->key.job;
      if (const std::size_t n = state_.victims_in_flight(job); n > 0) {
        defer(job, explain_for(job) ? victims_in_flight_message(n) : std::string());
        if (stop_) return;
        if (strict(q)) return block(q, c, job);
        continue;
      }
      const choice ch = choose(q, *e->uses);
      if (ch.mode == fit_mode::fit) {
        assignment a = materialize(q, ch);
        if (auto why = user_limit_violation(e->rec->w, a, c); !why.empty()) {
          defer(job, std::move(why));
          if (stop_) return;
          if (strict(q)) return block(q, c, job);
          continue;
        }
        c.nom = nominee{e->rec, std::move(a)};
        return;
      }
      not_fitting(q, c, *e->rec, job, ch);
      if (stop_) return;
      if (strict(q)) return block(q, c, job);
    }
  }

  // Defers `job` (record `rec`, read only for a message that is not the queue's shared one).
  // A workload whose tenant would exceed its YARN user limit with the flavor preemption could
  // fit it in waits for the limit and is no preemption head (YARN counts only pending demand
  // within a user's limit for preemption): freeing quota it may not use would thrash.
  void not_fitting(queue_id q, queue_cursor& c, const capacity_state::pending_rec& rec, job_id job,
                   const choice& ch) {
    if (ch.mode == fit_mode::preempt && c.user_limited) [[unlikely]] {
      if (auto why = user_limit_violation(rec.w, materialize(q, ch), c); !why.empty()) {
        defer(job, std::move(why));
        return;
      }
    }
    if (c.first_nonfit == nullptr && ch.mode == fit_mode::preempt) {
      c.first_nonfit = &rec;
      c.first_nonfit_deferral = plan_.decision.deferrals.size();  // unused in a what-if
    }
    defer(job, waiting_message(q, job, rec, ch));
  }

  void block(queue_id q, queue_cursor& c, job_id head) {
    c.blocked = true;
    while (const auto* e = next_pending(q, c)) {
      defer(e->key.job,
            explain_for(e->key.job) ? behind_head_message(tree_, q, head) : std::string());
      if (stop_) return;
    }
  }

  void admit_or_retry(queue_id q) {
    auto& c = queues_[q.value()];
    nominee nom = std::move(*c.nom);
    c.nom.reset();
    const auto& w = nom.rec->w;
    if (!fits(tree_, usage_, q, nom.a.use, true)) {
      const choice ch = choose(q, *nom.rec->uses);
      if (ch.mode == fit_mode::fit) {
        nom.a = materialize(q, ch);
        if (user_limit_violation(w, nom.a, c).empty()) {
          c.nom = std::move(nom);  // another flavor still fits
          return;
        }
      }
      not_fitting(q, c, *nom.rec, w.job, ch);
      if (stop_) return;
      if (strict(q)) {
        block(q, c, w.job);
        return;
      }
      nominate(q);
      return;
    }
    const bool borrowing = borrows_with(tree_, usage_, q, nom.a.use);
    for (const auto& [f, amount] : nom.a.use) add_usage(tree_, usage_, q, f, amount);
    ++stamp_;
    if (probe_ && nom.rec == &probe_->rec) {
      auto& out = probe_->out;
      out.admitted = true;
      out.flavor = nom.a.flavor;
      out.borrowing = borrowing;
      out.drs_after = dominant_resource_share(tree_, usage_, q);
      stop_ = true;
      return;
    }
    if (tree_.spec(q).order == queue_order::drf || tree_.spec(q).user_limit) {
      auto& tu = tenant_use(q, w.tenant);
      for (const auto& [f, amount] : nom.a.use) tu[f] += amount;
    }
    plan_.admitted.push_back({w.job, q, tree_.flavor_name(nom.a.flavor), borrowing});
    nominate(q);
  }

  void compute_key(queue_id x) {
    node_key& k = keys_[x.value()];
    if (tree_.is_queue(x)) {
      const auto& c = queues_[x.value()];
      if (!c.nom) {
        k = node_key{};
        return;
      }
      const auto& w = c.nom->rec->w;
      k.best = x;
      k.preemptor = c.nom->rec->preemptor;
      k.non_borrowing = !c.nom->a.borrowing;
      k.priority = w.priority;
      k.submit = w.submit_time;
      k.job = w.job;
    } else {
      const node_key* best = nullptr;
      for (const queue_id ch : tree_.children(x)) {
        const node_key& ck = keys_[ch.value()];
        if (!ck.best.valid()) continue;
        if (best == nullptr || beats(ck, *best, opt_.fair_sharing)) best = &ck;
      }
      if (best == nullptr) {
        k = node_key{};
        return;
      }
      const node_key copy = *best;
      k = copy;
    }
    if (opt_.fair_sharing && tree_.parent(x).valid()) {
      const queue_id bq = k.best;
      // x's DRS reads only x's own usage: add to it what admitting the nominee would propagate
      // up to x (as add_usage does), compute, and restore.
      const auto& use = queues_[bq.value()].nom->a.use;
      const std::size_t nf = tree_.fr_count();
      deltas_.clear();
      for (const auto& [f, amount] : use) {
        std::int64_t delta = amount;
        for (const queue_id y : tree_.path_to_root(bq)) {
          if (y == x || delta == 0) break;
          const std::int64_t u = usage_[y.value() * nf + f];
          const std::int64_t local = tree_.local_quota(y, f);
          delta =
              std::max<std::int64_t>(0, u + delta - local) - std::max<std::int64_t>(0, u - local);
        }
        deltas_.emplace_back(f, delta);
        usage_[x.value() * nf + f] += delta;
      }
      k.drs = dominant_resource_share(tree_, usage_, x);
      for (const auto& [f, delta] : deltas_) usage_[x.value() * nf + f] -= delta;
    }
  }

  void update_path(queue_id q) {
    for (const queue_id x : tree_.path_to_root(q)) compute_key(x);
  }

  void plan_preemptions() {
    std::vector<queue_id> heads;
    for (std::uint32_t i = 0; i < tree_.size(); ++i)
      if (queues_[i].first_nonfit != nullptr) heads.push_back(queue_id(i));
    // What-if: only the probe's tree runs (its heads are the only ones there).
    std::sort(heads.begin(), heads.end(), [&](queue_id a, queue_id b) {
      const auto& x = queues_[a.value()].first_nonfit->w;
      const auto& y = queues_[b.value()].first_nonfit->w;
      if (x.priority != y.priority) return x.priority > y.priority;
      if (x.submit_time != y.submit_time) return x.submit_time < y.submit_time;
      return x.job < y.job;
    });
    for (const queue_id q : heads) {
      auto& c = queues_[q.value()];
      const auto& w = c.first_nonfit->w;
      const assignment a = assign_flavor(tree_, usage_, w);
      auto victims = find_victims(state_, usage_, w, a, opt_, excluded_, &scratch_);
      if (!victims.empty() && tree_.spec(q).user_limit) {
        if (auto why = user_limit_after(c, w, a, victims); !why.empty()) {
          victims.clear();  // the plan would free quota its preemptor may not use
          if (probe_ && c.first_nonfit == &probe_->rec) probe_->out.message = why;
          if (!probe_ && opt_.explain)
            plan_.decision.deferrals[c.first_nonfit_deferral].message = std::move(why);
        }
      }
      if (probe_ && c.first_nonfit == &probe_->rec) {
        if (!victims.empty()) {
          describe_probe(a);
          probe_->out.victims = std::move(victims);
        }
        return;
      }
      if (victims.empty()) continue;
      for (const auto& v : victims) {
        const auto slot = slot_of(v.victim);
        excluded_[slot] = 1;
        exclude_slot(scratch_, state_, slot);
        if (probe_) continue;  // a what-if only needs the exclusions
        plan_.decision.preemptions.push_back(
            preemption{v.victim, fmt::format("{} by job {}", to_string(v.reason), w.job.value())});
      }
      if (probe_) continue;
      if (opt_.explain)
        plan_.decision.deferrals[c.first_nonfit_deferral].message =
            fmt::format("preempting {} workload(s) to fit in flavor '{}'", victims.size(),
                        tree_.flavor_name(a.flavor));
      plan_.preemptions.push_back(
          preemption_plan{w.job, q, tree_.flavor_name(a.flavor), std::move(victims)});
    }
  }

  // what-if -------------------------------------------------------------------------------

  struct probe_info {
    pending_workload w;
    capacity_state::pending_rec rec;
    capacity_state::flavor_uses uses;
    capacity_state::pending_entry entry;
    queue_id root;
    job_id replaced = job_id::invalid();            // w's job, when pending
    queue_id replaced_queue = queue_id::invalid();  // its queue
    probe_outcome out;
  };

  void set_probe(const pending_workload& w) {
    probe_ = std::make_unique<probe_info>();
    auto& p = *probe_;
    p.w = w;
    p.root = tree_.path_to_root(w.queue).back();
    for (const std::uint32_t fl : tree_.flavor_order(w.queue)) {
      if (!w.flavors.empty() &&
          std::find(w.flavors.begin(), w.flavors.end(), tree_.flavor_name(fl)) == w.flavors.end())
        continue;
      if (auto use = resolve_use(tree_, w.queue, fl, w.request)) p.uses.emplace_back(fl, *use);
    }
    const auto order = tree_.spec(w.queue).order;
    const bool fifo = order == queue_order::strict_fifo || order == queue_order::best_effort_fifo;
    p.rec.w = w;
    p.rec.key = {fifo ? 0 : -static_cast<std::int64_t>(w.priority), w.submit_time, w.job};
    p.rec.uses = &p.uses;
    if (const auto* old = state_.pending(w.job)) {
      p.replaced = w.job;
      p.replaced_queue = old->queue;
      p.rec.preemptor = state_.pending_record(w.job).preemptor;
    }
    p.entry = {p.rec.key, &p.rec, &p.uses};
  }

  // Fills the probe's flavor, borrowing and DRS for assignment `a` at the current usage.
  void describe_probe(const assignment& a) {
    auto& out = probe_->out;
    const queue_id q = probe_->w.queue;
    out.flavor = a.flavor;
    out.borrowing = borrows_with(tree_, usage_, q, a.use);
    for (const auto& [f, amount] : a.use) add_usage(tree_, usage_, q, f, amount);
    out.drs_after = dominant_resource_share(tree_, usage_, q);
    for (const auto& [f, amount] : a.use) add_usage(tree_, usage_, q, f, -amount);
  }

  // The probe was deferred with `message`: its answer is final unless it is its queue's first
  // workload that preemption could fit (the cycle then plans its victims after all admissions).
  void probe_deferred(std::string message) {
    probe_->out.message = std::move(message);
    describe_probe(assign_flavor(tree_, usage_, probe_->w));
    if (!opt_.preemption || queues_[probe_->w.queue.value()].first_nonfit != &probe_->rec)
      stop_ = true;
  }

  // The YARN user-limit check of preemption head w (queue c's, with assignment a) once its
  // victims are gone and those of its own queue are back there as pending workloads (Kueue
  // requeues victims): its queue then consumes less and has those tenants as active users too.
  // Returns the violation, or an empty string. Without this a head could preempt, then find its
  // limit lowered by the victims' return and watch a victim take the quota back, forever.
  std::string user_limit_after(const queue_cursor& c, const pending_workload& w,
                               const assignment& a, const std::vector<preemption_target>& victims) {
    const auto& ul = *tree_.spec(w.queue).user_limit;
    const std::size_t nf = tree_.fr_count();
    const std::size_t base = w.queue.value() * nf;
    std::vector<std::int64_t> tenant = tenant_use(w.queue, w.tenant);
    std::vector<std::int64_t> own(nf, 0);
    double weight = c.active_user_weight;
    std::set<tenant_id> users = c.active_users;
    for (const auto& v : victims) {
      if (v.queue != w.queue) continue;
      const auto& rec = state_.slots()[slot_of(v.victim)];
      for (const auto& [f, amount] : rec.use) {
        own[f] += amount;
        if (rec.w.tenant == w.tenant) tenant[f] -= amount;
      }
      if (users.insert(rec.w.tenant).second) weight += user_weight(ul, rec.w.tenant);
    }
    // user_limit_violation reads only the queue's own usage: lower it in place, then restore.
    for (std::size_t f = 0; f < nf; ++f) usage_[base + f] -= own[f];
    std::string why =
        capacity_detail::user_limit_violation(tree_, usage_, w, a.use, tenant, weight);
    for (std::size_t f = 0; f < nf; ++f) usage_[base + f] += own[f];
    return why;
  }

  std::uint32_t slot_of(job_id j) const {
    const auto& slots = state_.slots();
    for (const std::uint32_t s : state_.queue(state_.admitted(j)->queue).admitted)
      if (slots[s].w.job == j) return s;
    return 0;
  }

  const capacity_state& state_;
  const capacity_tree& tree_;
  const capacity_cycle_options& opt_;
  capacity_usage usage_;
  std::vector<queue_cursor> queues_;
  std::vector<node_key> keys_;
  std::vector<char> excluded_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::int64_t>> tenant_use_;
  admission_plan plan_;
  std::uint64_t stamp_ = 0;  // admissions so far in this cycle
  std::vector<std::int64_t> avail_;
  std::vector<std::uint64_t> avail_stamp_;
  std::vector<std::pair<std::uint64_t, std::string>> messages_;
  ordering_scratch scratch_;
  use_list deltas_;  // compute_key's buffer
  std::unique_ptr<probe_info> probe_;
  bool stop_ = false;                              // what-if: the probe's decision is known
  std::set<capacity_state::pending_key> no_keys_;  // an empty key range (drf tenants)
};

}  // namespace

result<admission_plan> plan_admission(const capacity_state& state,
                                      const capacity_cycle_options& options) {
  HETSCHED_TRY(check_options(options));
  cycle c(state, options);
  return c.run();
}

namespace capacity_detail {

result<probe_outcome> probe_cycle(const capacity_state& state, const pending_workload& w,
                                  const capacity_cycle_options& options) {
  cycle c(state, options, &w);
  HETSCHED_TRY(c.run());
  return c.take_probe_outcome();
}

}  // namespace capacity_detail

result<void> apply_admission(capacity_state& state, const admission_plan& plan) {
  const auto& tree = state.tree();
  capacity_usage usage = state.usage();
  std::set<job_id> seen;
  std::vector<std::uint32_t> flavors;
  for (const auto& a : plan.admitted) {
    const auto* w = state.pending(a.job);
    if (w == nullptr || !seen.insert(a.job).second)
      return make_error(errc::failed_precondition, "job {} is not pending", a.job.value());
    std::optional<std::uint32_t> fl;
    for (const std::uint32_t f : tree.flavor_order(w->queue))
      if (tree.flavor_name(f) == a.flavor) fl = f;
    if (!fl)
      return make_error(errc::failed_precondition, "job {}: queue has no flavor '{}'",
                        a.job.value(), a.flavor);
    const auto use = resolve_use(tree, w->queue, *fl, w->request);
    if (!use || !fits(tree, usage, w->queue, *use, true))
      return make_error(errc::failed_precondition, "job {} no longer fits in flavor '{}'",
                        a.job.value(), a.flavor);
    for (const auto& [f, amount] : *use) add_usage(tree, usage, w->queue, f, amount);
    flavors.push_back(*fl);
  }
  for (const auto& p : plan.preemptions) {
    if (state.pending(p.preemptor) == nullptr)
      return make_error(errc::failed_precondition, "preemptor job {} is not pending",
                        p.preemptor.value());
    for (const auto& v : p.victims)
      if (!state.is_admitted(v.victim) || state.in_flight(v.victim) ||
          !seen.insert(v.victim).second)
        return make_error(errc::failed_precondition,
                          "victim job {} is not admitted or already in flight", v.victim.value());
  }
  for (std::size_t i = 0; i < plan.admitted.size(); ++i)
    state.admit_pending(plan.admitted[i].job, flavors[i], plan.now);
  for (const auto& p : plan.preemptions)
    for (const auto& v : p.victims) state.mark_victim(v.victim, p.preemptor);
  return ok();
}

}  // namespace hetsched
