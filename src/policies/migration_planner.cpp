// SPDX-License-Identifier: MIT
// migration_planner: gang consolidation and defragmentation moves over a working copy of the
// device occupancy.
//
// The working model keeps, per device, whether it is usable, free and how many tasks hold it; per
// node its free usable GPUs, its held devices (non-idle when > 0) and, lazily, its free CPU,
// memory and extended resources. Every occupancy change goes through release() / acquire(), which
// keep the (free GPUs, node) index and the fragmented count in step; an evacuation that fails is
// undone by the inverse calls.
#include <algorithm>
#include <limits>
#include <map>
#include <memory_resource>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>
#include <hetsched/policies/migration_planner.hpp>

namespace hetsched {

std::string_view to_string(move_kind k) noexcept {
  switch (k) {
    case move_kind::consolidate: return "consolidate";
    case move_kind::defragment: return "defragment";
  }
  return "unknown";
}

std::string_view to_string(migration_stop s) noexcept {
  switch (s) {
    case migration_stop::below_threshold: return "below_threshold";
    case migration_stop::no_benefit: return "no_benefit";
    case migration_stop::move_limit: return "move_limit";
  }
  return "unknown";
}

decision to_decision(const migration_plan& plan) {
  decision d;
  d.migrations.reserve(plan.moves.size());
  for (const migration_move& m : plan.moves) d.migrations.push_back(migration{m.job, m.to});
  return d;
}

namespace {

using free_key = std::pair<std::uint32_t, std::uint32_t>;  // (free GPUs, node id)

/// The device occupancy as the moves planned so far leave it.
class working_model {
 public:
  working_model(const cluster_state& state, const node_score_table& scores)
      : state_(state), c_(state.cluster()), scores_(scores) {
    const std::size_t nodes = c_.node_count();
    const std::size_t devices = c_.device_count();
    usable_.assign(devices, 0);
    free_.assign(devices, 0);
    holders_.assign(devices, 0);
    nfree_.assign(nodes, 0);
    busy_.assign(nodes, 0);
    usable_count_.assign(nodes, 0);
    healthy_.assign(nodes, 0);
    moved_in_.assign(nodes, 0);
    for (std::size_t i = 0; i < nodes; ++i) {
      const node_id n(static_cast<std::uint32_t>(i));
      const node_info& info = c_.node(n);
      healthy_[i] = state.node_health(n) == health::healthy ? 1 : 0;
      for (std::uint32_t k = 0; k < info.device_count; ++k) {
        const device_id d(info.first_device.value() + k);
        const auto h = static_cast<std::uint32_t>(state.device_used(d).holders.size());
        holders_[d.index()] = h;
        usable_[d.index()] = healthy_[i] != 0 && state.device_health(d) == health::healthy;
        if (usable_[d.index()] != 0) ++usable_count_[i];
        if (h > 0) ++busy_[i];
        if (h == 0 && usable_[d.index()] != 0) {
          free_[d.index()] = 1;
          ++nfree_[i];
        }
      }
      add_contribution(n);
    }
  }

  [[nodiscard]] std::uint32_t fragmented() const noexcept { return fragmented_; }
  [[nodiscard]] std::uint32_t nfree(node_id n) const noexcept { return nfree_[n.index()]; }
  [[nodiscard]] bool busy(node_id n) const noexcept { return busy_[n.index()] > 0; }
  [[nodiscard]] bool healthy(node_id n) const noexcept { return healthy_[n.index()] != 0; }
  [[nodiscard]] std::uint32_t usable_count(node_id n) const noexcept {
    return usable_count_[n.index()];
  }
  [[nodiscard]] bool moved_in(node_id n) const noexcept { return moved_in_[n.index()] != 0; }
  void set_moved_in(node_id n, bool v) noexcept { moved_in_[n.index()] = v ? 1 : 0; }
  [[nodiscard]] const std::pmr::set<free_key>& by_free() const noexcept { return by_free_; }

  /// Frees the devices and node resources of `p` (a task of `spec`).
  void release(const job_spec& spec, const task_placement& p) {
    remove_contribution(p.node);
    for (const device_share& s : p.devices) {
      const std::size_t d = s.device.index();
      if (--holders_[d] == 0) {
        --busy_[p.node.index()];
        if (usable_[d] != 0) {
          free_[d] = 1;
          ++nfree_[p.node.index()];
        }
      }
    }
    room(p.node) += request_of(spec, p.task);
    add_contribution(p.node);
  }

  /// Takes the devices and node resources of `p` (a task of `spec`).
  void acquire(const job_spec& spec, const task_placement& p) {
    remove_contribution(p.node);
    for (const device_share& s : p.devices) {
      const std::size_t d = s.device.index();
      if (holders_[d]++ == 0) {
        ++busy_[p.node.index()];
        if (free_[d] != 0) {
          free_[d] = 0;
          --nfree_[p.node.index()];
        }
      }
    }
    room(p.node) -= request_of(spec, p.task);
    add_contribution(p.node);
  }

  /// Returns new placements on `target` for `tasks` of `spec`, or nullopt if they do not fit.
  [[nodiscard]] std::optional<std::vector<task_placement>> fit(
      node_id target, const job_spec& spec, std::span<const task_placement> tasks) {
    if (!healthy(target)) return std::nullopt;
    resource_vector need;
    for (const task_placement& p : tasks) need += request_of(spec, p.task);
    if (!fits(need, room(target))) return std::nullopt;
    const node_info& info = c_.node(target);
    std::vector<std::uint32_t> taken;
    std::vector<task_placement> out;
    out.reserve(tasks.size());
    for (const task_placement& p : tasks) {
      const task_role& role = spec.roles[role_index_of(spec, p.task).value_or(0)];
      std::vector<std::uint32_t> available;
      for (std::uint32_t k = 0; k < info.device_count; ++k) {
        const device_id d(info.first_device.value() + k);
        if (free_[d.index()] == 0) continue;
        if (std::find(taken.begin(), taken.end(), k) != taken.end()) continue;
        const device_info& dev = c_.device(d);
        if (!role.gpu.type.empty() && dev.type != role.gpu.type) continue;
        if (dev.memory_mib < role.gpu.memory_mib) continue;
        available.push_back(k);
      }
      if (available.size() < role.gpu.count) return std::nullopt;
      task_placement q{p.task, target, {}};
      for (const std::uint32_t k : pick_gpus(scores_.scores(target), available, role.gpu.count)) {
        taken.push_back(k);
        q.devices.push_back(
            device_share{device_id(info.first_device.value() + k), 1000, role.gpu.memory_mib});
      }
      out.push_back(std::move(q));
    }
    return out;
  }

 private:
  static resource_vector request_of(const job_spec& spec, task_id task) {
    const auto role = role_index_of(spec, task);
    return role ? task_request(spec.roles[*role]) : resource_vector{};
  }

  resource_vector& room(node_id n) {
    auto it = room_.find(n.value());
    if (it == room_.end()) it = room_.emplace(n.value(), state_.node_free(n)).first;
    return it->second;
  }

  void remove_contribution(node_id n) {
    const std::size_t i = n.index();
    if (healthy_[i] == 0) return;
    if (nfree_[i] > 0) by_free_.erase({nfree_[i], n.value()});
    if (busy_[i] > 0) fragmented_ -= nfree_[i];
  }
  void add_contribution(node_id n) {
    const std::size_t i = n.index();
    if (healthy_[i] == 0) return;
    if (nfree_[i] > 0) by_free_.insert({nfree_[i], n.value()});
    if (busy_[i] > 0) fragmented_ += nfree_[i];
  }

  const cluster_state& state_;
  const cluster& c_;
  const node_score_table& scores_;
  std::vector<std::uint8_t> usable_;
  std::vector<std::uint8_t> free_;
  std::vector<std::uint32_t> holders_;
  std::vector<std::uint32_t> nfree_;
  std::vector<std::uint32_t> busy_;
  std::vector<std::uint32_t> usable_count_;
  std::vector<std::uint8_t> healthy_;
  std::vector<std::uint8_t> moved_in_;
  // The ordered containers allocate from one arena released with the model (no per-node free).
  std::pmr::monotonic_buffer_resource arena_;
  std::pmr::map<std::uint32_t, resource_vector> room_{&arena_};
  std::pmr::set<free_key> by_free_{&arena_};
  std::uint32_t fragmented_ = 0;
};

bool is_movable(const job_record& rec, const migration_params& params) {
  const job_state s = rec.status.state;
  if (s != job_state::scheduled && s != job_state::running) return false;
  if (params.require_preemptible && !rec.spec.preemptible) return false;
  for (const task_role& role : rec.spec.roles)
    if (role.gpu.count == 0 || role.gpu.milli_per_gpu != 1000) return false;
  for (const task_placement& p : rec.placement)
    if (!p.node.valid() || p.devices.empty()) return false;
  return true;
}

std::uint32_t span_of(std::span<const task_placement> placement) {
  // Fast path: every placed task on one node (the common case) allocates nothing.
  node_id first = node_id::invalid();
  bool one = true;
  for (const task_placement& p : placement) {
    if (!p.node.valid()) continue;
    if (!first.valid()) first = p.node;
    one = one && p.node == first;
  }
  if (one) return first.valid() ? 1 : 0;
  std::vector<std::uint32_t> nodes;
  for (const task_placement& p : placement)
    if (p.node.valid()) nodes.push_back(p.node.value());
  std::sort(nodes.begin(), nodes.end());
  return static_cast<std::uint32_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

std::uint32_t gpus_of(std::span<const task_placement> placement) {
  std::uint32_t g = 0;
  for (const task_placement& p : placement) g += static_cast<std::uint32_t>(p.devices.size());
  return g;
}

/// Returns the job's placement with the tasks of `moved` replaced.
std::vector<task_placement> after_move(std::span<const task_placement> placement,
                                       std::span<const task_placement> moved) {
  std::vector<task_placement> out(placement.begin(), placement.end());
  for (const task_placement& m : moved)
    for (task_placement& p : out)
      if (p.task == m.task) p = m;
  return out;
}

struct planner_run {
  const cluster_state& state;
  const migration_params& params;
  working_model model;
  migration_plan plan;
  std::set<job_id> pinned;
  std::uint32_t emptied = 0;

  [[nodiscard]] bool below_threshold() const {
    return std::uint64_t{model.fragmented()} * params.threshold_den <
           std::uint64_t{params.threshold_num} * plan.server_gpus;
  }

  migration_move make_move(const job_record& rec, move_kind kind, node_id target,
                           std::vector<task_placement> from, std::vector<task_placement> to) {
    migration_move m;
    m.job = rec.spec.id;
    m.kind = kind;
    m.target = target;
    m.gpus = gpus_of(from);
    m.span_before = span_of(rec.placement);
    m.span_after = span_of(after_move(rec.placement, to));
    m.cost_s = params.checkpoint_restore_s;
    m.cost_gpu_s = m.cost_s * std::int64_t{gpus_of(rec.placement)};
    m.from = std::move(from);
    m.to = std::move(to);
    return m;
  }

  void apply_move(const job_spec& spec, const migration_move& m) {
    for (const task_placement& p : m.from) model.release(spec, p);
    for (const task_placement& p : m.to) model.acquire(spec, p);
  }
  void undo_move(const job_spec& spec, const migration_move& m) {
    for (const task_placement& p : m.to) model.release(spec, p);
    for (const task_placement& p : m.from) model.acquire(spec, p);
  }

  /// Movable jobs spread over several servers, in id order (from scan()).
  std::vector<const job_record*> spread;

  void consolidate() {
    for (const job_record* r : spread) {
      const job_record& rec = *r;
      const job_id id = rec.spec.id;
      if (params.max_moves != 0 && plan.moves.size() >= params.max_moves) return;
      std::map<std::uint32_t, std::uint32_t> held;  // node -> the job's GPUs there
      for (const task_placement& p : rec.placement)
        held[p.node.value()] += static_cast<std::uint32_t>(p.devices.size());
      // Own servers: most of the job's GPUs first, then fewest free GPUs, then lower id.
      std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> own;
      for (const auto& [n, g] : held)
        own.emplace_back(std::numeric_limits<std::uint32_t>::max() - g, model.nfree(node_id(n)), n);
      std::sort(own.begin(), own.end());
      std::optional<std::pair<node_id, std::vector<task_placement>>> chosen;
      for (const auto& entry : own) {
        const node_id target(std::get<2>(entry));
        std::vector<task_placement> from;
        for (const task_placement& p : rec.placement)
          if (p.node != target) from.push_back(p);
        if (auto to = model.fit(target, rec.spec, from)) {
          chosen.emplace(target, std::move(from));
          break;
        }
      }
      const std::uint32_t total = gpus_of(rec.placement);
      if (!chosen) {
        for (auto it = model.by_free().lower_bound({total, 0}); it != model.by_free().end(); ++it) {
          if (held.contains(it->second)) continue;
          if (model.fit(node_id(it->second), rec.spec, rec.placement)) {
            chosen.emplace(node_id(it->second), rec.placement);
            break;
          }
        }
      }
      if (!chosen) continue;
      const node_id target = chosen->first;
      std::vector<task_placement> to = model.fit(target, rec.spec, chosen->second).value();
      migration_move m =
          make_move(rec, move_kind::consolidate, target, std::move(chosen->second), std::move(to));
      apply_move(rec.spec, m);
      for (const auto& [n, g] : held)
        if (n != target.value() && !model.busy(node_id(n))) {
          m.idle_server_gpus += model.usable_count(node_id(n));
          ++emptied;
        }
      model.set_moved_in(target, true);
      pinned.insert(id);
      plan.moves.push_back(std::move(m));
    }
  }

  /// Jobs holding devices on each node (CSR over node ids), from the state.
  std::vector<std::uint32_t> offsets;
  std::vector<const job_record*> hosted;

  /// One pass over the jobs: the spread movable jobs and the per-node hosted index.
  void scan() {
    std::vector<std::pair<std::uint32_t, const job_record*>> pairs;
    pairs.reserve(state.jobs().size());
    for (const auto& [id, rec] : state.jobs()) {
      const job_state s = rec.status.state;
      if (s != job_state::scheduled && s != job_state::running) continue;
      const std::uint32_t span = span_of(rec.placement);
      if (span >= 2 && params.consolidate_gangs && is_movable(rec, params)) spread.push_back(&rec);
      std::uint32_t last = std::numeric_limits<std::uint32_t>::max();
      for (const task_placement& p : rec.placement) {
        if (!p.node.valid() || p.devices.empty()) continue;
        if (span == 1 && p.node.value() == last) continue;
        last = p.node.value();
        pairs.emplace_back(p.node.value(), &rec);
      }
    }
    // Jobs are visited in id order, so a stable sort by node keeps id order within a node.
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    const std::size_t nodes = state.cluster().node_count();
    offsets.assign(nodes + 1, 0);
    for (const auto& [n, j] : pairs) ++offsets[n + 1];
    for (std::size_t i = 0; i < nodes; ++i) offsets[i + 1] += offsets[i];
    hosted.reserve(pairs.size());
    for (const auto& [n, j] : pairs) hosted.push_back(j);
  }

  /// Plans the evacuation of `source`; returns its moves or nothing (model unchanged).
  std::optional<std::vector<migration_move>> evacuate(node_id source) {
    const std::uint32_t f = model.nfree(source);
    struct unit {
      std::uint32_t gpus;
      const job_record* rec;
      std::vector<task_placement> tasks;
    };
    std::vector<unit> units;
    for (std::uint32_t i = offsets[source.index()]; i < offsets[source.index() + 1]; ++i) {
      const job_record& rec = *hosted[i];
      if (pinned.contains(rec.spec.id)) {
        // Consolidated away earlier (a target would be marked moved_in and never a source).
        continue;
      }
      if (!is_movable(rec, params)) return std::nullopt;
      unit u{0, &rec, {}};
      for (const task_placement& p : rec.placement)
        if (p.node == source) u.tasks.push_back(p);
      u.gpus = gpus_of(u.tasks);
      units.push_back(std::move(u));
    }
    if (units.empty()) return std::nullopt;
    if (params.max_moves != 0 && plan.moves.size() + units.size() > params.max_moves)
      return std::nullopt;
    std::sort(units.begin(), units.end(), [](const unit& a, const unit& b) {
      if (a.gpus != b.gpus) return a.gpus > b.gpus;
      return a.rec->spec.id < b.rec->spec.id;
    });
    std::vector<migration_move> moves;
    std::vector<std::pair<node_id, bool>> marks;  // target, its moved_in flag before
    const auto undo = [&] {
      for (auto it = moves.rbegin(); it != moves.rend(); ++it)
        undo_move(state.find_job(it->job)->spec, *it);
      for (auto it = marks.rbegin(); it != marks.rend(); ++it)
        model.set_moved_in(it->first, it->second);
    };
    for (unit& u : units) {
      std::optional<std::pair<node_id, std::vector<task_placement>>> chosen;
      for (auto it = model.by_free().lower_bound({u.gpus, 0});
           it != model.by_free().end() && it->first < f; ++it) {
        const node_id t(it->second);
        if (t == source || !model.busy(t)) continue;
        if (auto to = model.fit(t, u.rec->spec, u.tasks)) {
          chosen.emplace(t, std::move(*to));
          break;
        }
      }
      if (!chosen) {
        undo();
        return std::nullopt;
      }
      migration_move m = make_move(*u.rec, move_kind::defragment, chosen->first, std::move(u.tasks),
                                   std::move(chosen->second));
      apply_move(u.rec->spec, m);
      marks.emplace_back(chosen->first, model.moved_in(chosen->first));
      model.set_moved_in(chosen->first, true);
      moves.push_back(std::move(m));
    }
    if (model.busy(source)) {
      undo();
      return std::nullopt;
    }
    moves.back().idle_server_gpus += model.usable_count(source);
    ++emptied;
    return moves;
  }

  void defragment() {
    // Sources: most free GPUs first, then lower id; each tried once.
    std::vector<free_key> sources;
    const std::size_t nodes = state.cluster().node_count();
    for (std::size_t i = 0; i < nodes; ++i) {
      const node_id n(static_cast<std::uint32_t>(i));
      if (model.healthy(n) && model.busy(n) && model.nfree(n) > 0 && !model.moved_in(n))
        sources.emplace_back(std::numeric_limits<std::uint32_t>::max() - model.nfree(n), n.value());
    }
    std::sort(sources.begin(), sources.end());
    std::size_t next = 0;
    while (true) {
      if (below_threshold()) {
        plan.stop = migration_stop::below_threshold;
        return;
      }
      if (params.max_moves != 0 && plan.moves.size() >= params.max_moves) {
        plan.stop = migration_stop::move_limit;
        return;
      }
      if (next == sources.size()) {
        plan.stop = migration_stop::no_benefit;
        return;
      }
      const node_id source(sources[next++].second);
      if (model.moved_in(source) || !model.busy(source)) continue;
      if (auto moves = evacuate(source)) {
        for (migration_move& m : *moves) {
          pinned.insert(m.job);
          plan.moves.push_back(std::move(m));
        }
      }
    }
  }
};

}  // namespace

migration_planner::migration_planner(const cluster& description)
    : scores_(description), devices_(description.device_count()) {}

migration_planner::migration_planner(const cluster& description, const cluster_topology& topology)
    : scores_(description, topology), devices_(description.device_count()) {}

result<migration_plan> migration_planner::plan(const cluster_state& state,
                                               const migration_params& params) const {
  const cluster& c = state.cluster();
  if (c.node_count() != scores_.size() || c.device_count() != devices_)
    return make_error(errc::invalid_argument,
                      "migration_planner: the state has {} nodes and {} devices, the planner {} "
                      "and {}",
                      c.node_count(), c.device_count(), scores_.size(), devices_);
  if (params.threshold_num == 0 || params.threshold_den == 0)
    return make_error(errc::invalid_argument,
                      "migration_planner: threshold {}/{} needs both terms > 0",
                      params.threshold_num, params.threshold_den);
  if (params.checkpoint_restore_s < 0)
    return make_error(errc::invalid_argument,
                      "migration_planner: checkpoint_restore_s is {}, must be >= 0",
                      params.checkpoint_restore_s);
  planner_run run{state, params, working_model(state, scores_), {}, {}, 0, {}, {}, {}};
  for (const node_info& info : c.nodes())
    run.plan.server_gpus = std::max(run.plan.server_gpus, info.device_count);
  run.plan.fragmented_before = run.model.fragmented();
  run.scan();
  if (params.consolidate_gangs) run.consolidate();
  run.plan.stop = migration_stop::no_benefit;
  if (params.max_moves != 0 && run.plan.moves.size() >= params.max_moves)
    run.plan.stop = migration_stop::move_limit;
  else if (params.defragment)
    run.defragment();
  else if (run.below_threshold())
    run.plan.stop = migration_stop::below_threshold;
  run.plan.fragmented_after = run.model.fragmented();
  run.plan.servers_emptied = run.emptied;
  for (const migration_move& m : run.plan.moves) run.plan.total_cost_gpu_s += m.cost_gpu_s;
  return std::move(run.plan);
}

}  // namespace hetsched
