// SPDX-License-Identifier: MIT
// indexed_packer and its registry factory (with Gandiva's migration).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include <hetsched/model/assert.hpp>
#include <hetsched/policies/indexed_packer.hpp>
#include <hetsched/policies/migrating_placement.hpp>

namespace hetsched {
namespace {

constexpr std::uint32_t unindexed = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t no_matrix = std::numeric_limits<std::uint32_t>::max();

bool type_ok(const gpu_type& want, const gpu_type& have) { return want.empty() || want == have; }

}  // namespace

indexed_packer::indexed_packer(const cluster& description, packer_placement_params params)
    : params_(params) {
  init(description);
  matrix_of_.assign(description.node_count(), no_matrix);
}

indexed_packer::indexed_packer(const cluster& description, const cluster_topology& topology,
                               packer_placement_params params)
    : params_(params) {
  init(description);
  matrix_of_.assign(description.node_count(), no_matrix);
  const std::size_t templates = topology.templates().size();
  std::vector<std::uint32_t> template_matrix(templates, no_matrix);
  const std::size_t n = std::min(description.node_count(), topology.node_count());
  for (std::size_t i = 0; i < n; ++i) {
    const node_id id(static_cast<std::uint32_t>(i));
    const cluster_node& cn = topology.node(id);
    if (cn.gpu_count == 0 || cn.gpu_count > max_packer_gpus) continue;
    if (cn.gpu_count != description.node(id).device_count) continue;
    std::uint32_t& m = template_matrix[cn.template_index];
    if (m == no_matrix) {
      m = static_cast<std::uint32_t>(matrices_.size());
      matrices_.push_back(pair_score_matrix::from_topology(topology.topology_of(id)));
    }
    matrix_of_[i] = m;
  }
}

void indexed_packer::init(const cluster& description) {
  const std::size_t n = description.node_count();
  group_of_.assign(n, 0);
  group_type_.clear();
  max_gpus_ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const node_id id(static_cast<std::uint32_t>(i));
    const auto devices = description.devices(id);
    const gpu_type t = devices.empty() ? gpu_type{} : devices.front().type;
    const auto it = std::find(group_type_.begin(), group_type_.end(), t);
    group_of_[i] = static_cast<std::uint32_t>(it - group_type_.begin());
    if (it == group_type_.end()) group_type_.push_back(t);
    max_gpus_ = std::max(max_gpus_, static_cast<std::uint32_t>(devices.size()));
  }
  buckets_.assign(group_type_.size() * (std::size_t{max_gpus_} + 1), {});
  free_.assign(n, unindexed);
  total_free_ = 0;
  partial_free_.assign(description.device_count(), -1);
  partial_.clear();
  job_nodes_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const node_id id(static_cast<std::uint32_t>(i));
    if (description.node(id).health != health::healthy) continue;
    std::uint32_t healthy = 0;
    for (const device_info& d : description.devices(id))
      if (d.health == health::healthy) ++healthy;
    set_free(static_cast<std::uint32_t>(i), healthy);
  }
}

void indexed_packer::set_free(std::uint32_t node, std::uint32_t value) {
  const std::size_t base = std::size_t{group_of_[node]} * (std::size_t{max_gpus_} + 1);
  const std::uint32_t old = free_[node];
  if (old == value) return;
  if (old != unindexed) {
    buckets_[base + old].erase(node);
    total_free_ -= old;
  }
  free_[node] = value;
  if (value != unindexed) {
    buckets_[base + value].insert(node);
    total_free_ += value;
  }
}

void indexed_packer::refresh(const cluster_state& state, node_id n) {
  const cluster& c = state.cluster();
  const bool node_ok = state.node_health(n) == health::healthy;
  const node_info& info = c.node(n);
  std::uint32_t count = 0;
  for (std::uint32_t i = 0; i < info.device_count; ++i) {
    const device_id d(info.first_device.value() + i);
    const std::int64_t used = state.device_used(d).milli_gpu;
    const bool ok = node_ok && state.device_health(d) == health::healthy;
    if (ok && used == 0) ++count;
    std::int64_t& pf = partial_free_[d.index()];
    const std::int64_t want = (ok && used > 0 && used < milli_per_gpu_unit)
                                  ? milli_per_gpu_unit - used
                                  : std::int64_t{-1};
    if (pf != want) {
      if (pf >= 0) partial_.erase({pf, d.value()});
      pf = want;
      if (pf >= 0) partial_.insert({pf, d.value()});
    }
  }
  set_free(n.value(), node_ok ? count : unindexed);
}

void indexed_packer::refresh_job_nodes(const cluster_state& state, job_id job) {
  std::vector<std::uint32_t> nodes;
  const auto it = job_nodes_.find(job.value());
  if (it != job_nodes_.end()) nodes = it->second;
  std::vector<std::uint32_t> now;
  if (const job_record* rec = state.find_job(job)) {
    for (const task_placement& p : rec->placement)
      if (p.node.valid()) now.push_back(p.node.value());
  }
  std::sort(now.begin(), now.end());
  now.erase(std::unique(now.begin(), now.end()), now.end());
  nodes.insert(nodes.end(), now.begin(), now.end());
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  for (const std::uint32_t n : nodes) refresh(state, node_id(n));
  if (now.empty()) {
    if (it != job_nodes_.end()) job_nodes_.erase(it);
  } else {
    job_nodes_[job.value()] = std::move(now);
  }
}

void indexed_packer::commit(const cluster_state& after, const decision& d) {
  for (const preemption& p : d.preemptions) refresh_job_nodes(after, p.job);
  for (const suspension& s : d.suspensions) refresh_job_nodes(after, s.job);
  for (const migration& m : d.migrations) refresh_job_nodes(after, m.job);
  for (const binding& b : d.binds) refresh_job_nodes(after, b.job);
  for (const resumption& r : d.resumes) refresh_job_nodes(after, r.job);
  for (const partial_release& r : d.releases) refresh_job_nodes(after, r.job);
}

void indexed_packer::release(const cluster_state& after, job_id job) {
  refresh_job_nodes(after, job);
}

void indexed_packer::rebuild(const cluster_state& state) {
  const cluster& c = state.cluster();
  job_nodes_.clear();
  for (const auto& [id, rec] : state.jobs()) {
    std::vector<std::uint32_t> nodes;
    for (const task_placement& p : rec.placement)
      if (p.node.valid()) nodes.push_back(p.node.value());
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (!nodes.empty()) job_nodes_[id.value()] = std::move(nodes);
  }
  for (std::size_t i = 0; i < c.node_count(); ++i)
    refresh(state, node_id(static_cast<std::uint32_t>(i)));
}

std::optional<task_placement> indexed_packer::try_node(const cluster_state& state, node_id n,
                                                       const task_role& role, const gpu_type& type,
                                                       task_id task,
                                                       std::span<const pending_use> taken,
                                                       std::span<const device_id> taken_devices) {
  if (state.node_health(n) != health::healthy) return std::nullopt;
  resource_vector room = state.node_free(n);
  for (const pending_use& u : taken)
    if (u.node == n) room -= u.used;
  if (!fits(task_request(role), room)) return std::nullopt;
  task_placement out{task, n, {}};
  const std::uint32_t k = role.gpu.count;
  if (k == 0) return out;
  const cluster& c = state.cluster();
  const node_info& info = c.node(n);
  std::vector<std::uint32_t> avail;
  avail.reserve(info.device_count);
  for (std::uint32_t i = 0; i < info.device_count; ++i) {
    const device_id d(info.first_device.value() + i);
    if (state.device_health(d) != health::healthy) continue;
    if (state.device_used(d).milli_gpu != 0) continue;
    const device_info& di = c.device(d);
    if (!type_ok(type, di.type) || di.memory_mib < role.gpu.memory_mib) continue;
    if (std::find(taken_devices.begin(), taken_devices.end(), d) != taken_devices.end()) continue;
    avail.push_back(i);
  }
  if (avail.size() < k) return std::nullopt;
  std::vector<std::uint32_t> chosen;
  const std::uint32_t m = matrix_of_[n.index()];
  if (m != no_matrix) {
    // The packer's answer depends only on (topology, free set, size): memoize it.
    std::uint64_t mask = 0;
    for (const std::uint32_t local : avail) mask |= std::uint64_t{1} << local;
    const std::uint64_t memo_key = (std::uint64_t{m} << 32) | (mask << 8) | k;
    const auto hit = memo_.find(memo_key);
    if (hit != memo_.end()) {
      chosen = hit->second;
    } else {
      auto answer = allocate(matrices_[m], avail, {}, k, packer_mode::lexmax);
      if (answer && answer->status == packer_status::allocated) chosen = std::move(answer->gpus);
      memo_.emplace(memo_key, chosen);
    }
  }
  if (chosen.empty()) chosen.assign(avail.begin(), avail.begin() + k);
  for (const std::uint32_t local : chosen)
    out.devices.push_back(device_share{device_id(info.first_device.value() + local),
                                       role.gpu.milli_per_gpu, role.gpu.memory_mib});
  return out;
}

std::vector<task_placement> indexed_packer::try_node_whole(
    const cluster_state& state, node_id n, const task_role& role, const gpu_type& type,
    std::span<const task_id> tasks, std::span<const pending_use> taken,
    std::span<const device_id> taken_devices) {
  std::vector<pending_use> uses(taken.begin(), taken.end());
  std::vector<device_id> devices(taken_devices.begin(), taken_devices.end());
  std::vector<task_placement> out;
  for (const task_id task : tasks) {
    auto got = try_node(state, n, role, type, task, uses, devices);
    if (!got) return {};
    uses.push_back({n, task_request(role)});
    for (const device_share& share : got->devices) devices.push_back(share.device);
    out.push_back(std::move(*got));
  }
  return out;
}

result<decision> indexed_packer::place(const cluster_state& state, job_id job) {
  return place(state, job, gpu_type{});
}

result<decision> indexed_packer::place(const cluster_state& state, job_id job,
                                       const gpu_type& only) {
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "packer: unknown job {}", job);
  if (rec->status.state != job_state::queued)
    return make_error(errc::failed_precondition, "packer: job {} is {}, not queued", job,
                      rec->status.state);
  if (free_.size() != state.cluster().node_count())
    return make_error(errc::invalid_argument, "packer: state has {} nodes, the packer {}",
                      state.cluster().node_count(), free_.size());
  const job_spec& spec = rec->spec;
  std::vector<pending_use> taken;
  std::vector<device_id> taken_devices;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> saved;  // node, old free
  binding bind{job, {}};
  bool failed = false;
  std::int64_t want_milli = 0;
  const std::size_t stride = std::size_t{max_gpus_} + 1;

  for (std::size_t r = 0; r < spec.roles.size() && !failed; ++r) {
    const task_role& role = spec.roles[r];
    const gpu_type& type = role.gpu.type.empty() ? only : role.gpu.type;
    const std::uint32_t first = first_task(spec, r).value();
    const auto record_task = [&](task_placement got) {
      const std::uint32_t n = got.node.value();
      taken.push_back({got.node, task_request(role)});
      std::uint32_t whole = 0;
      for (const device_share& s : got.devices) {
        taken_devices.push_back(s.device);
        if (state.device_used(s.device).milli_gpu == 0) ++whole;
      }
      if (whole > 0 && free_[n] != unindexed) {
        saved.emplace_back(n, free_[n]);
        set_free(n, free_[n] - whole);
      }
      bind.tasks.push_back(std::move(got));
    };
    if (params_.gang_together && role.gpu.count > 0 && !role.gpu.is_fractional()) {
      std::vector<task_id> open;
      for (std::uint32_t t = 0; t < role.task_count; ++t)
        if (!rec->placement[first + t].node.valid()) open.push_back(task_id(first + t));
      const std::uint64_t need = std::uint64_t{role.gpu.count} * open.size();
      std::vector<task_placement> together;
      if (open.size() > 1 && need <= max_gpus_) {
        const auto try_count = [&](std::uint32_t f) {
          for (std::size_t g = 0; g < group_type_.size() && together.empty(); ++g) {
            if (!type_ok(type, group_type_[g])) continue;
            for (const std::uint32_t n : buckets_[g * stride + f]) {
              together = try_node_whole(state, node_id(n), role, type, open, taken, taken_devices);
              if (!together.empty()) break;
            }
          }
        };
        const auto low = static_cast<std::uint32_t>(need);
        if (params_.fit == node_fit::best) {
          for (std::uint32_t f = low; f <= max_gpus_ && together.empty(); ++f) try_count(f);
        } else {
          for (std::uint32_t f = max_gpus_; f >= low && together.empty(); --f) try_count(f);
        }
      }
      if (!together.empty()) {
        want_milli += role.gpu.total_milli_gpu() * static_cast<std::int64_t>(open.size());
        for (task_placement& tp : together) record_task(std::move(tp));
        continue;
      }
    }
    for (std::uint32_t t = 0; t < role.task_count && !failed; ++t) {
      const task_id task(first + t);
      if (rec->placement[task.index()].node.valid()) continue;
      want_milli += role.gpu.total_milli_gpu();
      std::optional<task_placement> got;
      const std::uint32_t k = role.gpu.count;
      if (k == 0) {
        for (std::size_t i = 0; i < free_.size() && !got; ++i)
          got = try_node(state, node_id(static_cast<std::uint32_t>(i)), role, type, task, taken,
                         taken_devices);
      } else if (role.gpu.is_fractional()) {
        for (auto it = partial_.lower_bound({role.gpu.milli_per_gpu, 0});
             it != partial_.end() && !got; ++it) {
          const device_id d(it->second);
          if (std::find(taken_devices.begin(), taken_devices.end(), d) != taken_devices.end())
            continue;
          const device_info& di = state.cluster().device(d);
          if (!type_ok(type, di.type)) continue;
          if (state.device_free(d).gpu_memory_mib < role.gpu.memory_mib) continue;
          resource_vector room = state.node_free(di.node);
          for (const pending_use& u : taken)
            if (u.node == di.node) room -= u.used;
          if (!fits(task_request(role), room)) continue;
          got = task_placement{
              task, di.node, {device_share{d, role.gpu.milli_per_gpu, role.gpu.memory_mib}}};
        }
      }
      if (k > 0 && !got && k <= max_gpus_) {
        const auto try_count = [&](std::uint32_t f) {
          for (std::size_t g = 0; g < group_type_.size() && !got; ++g) {
            if (!type_ok(type, group_type_[g])) continue;
            for (const std::uint32_t n : buckets_[g * stride + f]) {
              got = try_node(state, node_id(n), role, type, task, taken, taken_devices);
              if (got) break;
            }
          }
        };
        if (params_.fit == node_fit::best) {
          for (std::uint32_t f = k; f <= max_gpus_ && !got; ++f) try_count(f);
        } else {
          for (std::uint32_t f = max_gpus_; f >= k && !got; --f) try_count(f);
        }
      }
      if (!got) {
        failed = true;
        break;
      }
      record_task(std::move(*got));
    }
  }
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) set_free(it->first, it->second);
  decision d;
  if (failed) {
    const std::int64_t free_milli = static_cast<std::int64_t>(total_free_) * milli_per_gpu_unit;
    const defer_reason reason =
        free_milli < want_milli ? defer_reason::insufficient_capacity : defer_reason::fragmented;
    d.deferrals.push_back(deferral{job, reason,
                                   fmt::format("packer: no placement for {} milli-GPU ({} whole "
                                               "GPUs free)",
                                               want_milli, total_free_)});
  } else if (!bind.tasks.empty()) {
    d.binds.push_back(std::move(bind));
  }
  return d;
}

result<std::unique_ptr<placement_policy>> make_packer_placement(const policy_params& params,
                                                                const cluster& description,
                                                                const cluster_topology* topology) {
  packer_placement_params p;
  migration_options mig;  // off by default
  for (const auto& [key, value] : params) {
    if (auto m = parse_migration_param("packer", key, value, mig)) {
      if (!*m) return std::move(*m).error();
    } else if (key == "fit" && value == "best") {
      p.fit = node_fit::best;
    } else if (key == "fit" && value == "worst") {
      p.fit = node_fit::worst;
    } else if (key == "fit") {
      return make_error(errc::invalid_argument, "packer: fit={} (expected best or worst)", value);
    } else if (key == "gang" && (value == "together" || value == "tasks")) {
      p.gang_together = value == "together";
    } else if (key == "gang") {
      return make_error(errc::invalid_argument, "packer: gang={} (expected together or tasks)",
                        value);
    } else {
      return make_error(errc::invalid_argument,
                        "packer: unknown parameter {} (known: fit, gang, {})", key, migration_keys);
    }
  }
  auto inner = topology != nullptr ? indexed_packer(description, *topology, p)
                                   : indexed_packer(description, p);
  return with_migration(std::move(inner), "packer", mig, placement_traits{}, description, topology);
}

}  // namespace hetsched
