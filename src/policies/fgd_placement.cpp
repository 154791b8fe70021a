// SPDX-License-Identifier: MIT
// fgd_placement, make_fgd_placement() and the `classes` parameter format.
#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <span>
#include <utility>

#include <hetsched/policies/fgd_placement.hpp>

#include "placement_check.hpp"

namespace hetsched {
namespace {

template <typename T>
bool to_number(std::string_view s, T& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

std::string_view next_item(std::string_view& text, char sep) {
  const std::size_t at = std::min(text.find(sep), text.size());
  const std::string_view item = text.substr(0, at);
  text = at < text.size() ? text.substr(at + 1) : std::string_view{};
  return item;
}

}  // namespace

result<fgd_workload> parse_fgd_classes(std::string_view text) {
  std::vector<fgd_task_class> classes;
  std::int64_t total = 0;
  while (!text.empty()) {
    const std::string_view item = next_item(text, ';');
    if (item.starts_with("total=")) {
      if (!to_number(item.substr(6), total))
        return make_error(errc::invalid_argument, "fgd: classes: bad total '{}'", item);
      continue;
    }
    std::string_view rest = item;
    fgd_task_class c;
    const std::string_view cpu = next_item(rest, '/');
    const std::string_view milli = next_item(rest, '/');
    const std::string_view num = next_item(rest, '/');
    const std::string_view count = next_item(rest, '/');
    if (!to_number(cpu, c.cpu_milli) || !to_number(milli, c.gpu_milli) ||
        !to_number(num, c.num_gpu) || !to_number(count, c.count))
      return make_error(errc::invalid_argument,
                        "fgd: classes: '{}' is not CPU/MILLI/NUM/COUNT/SPEC", item);
    c.gpu_spec = std::string(rest);
    classes.push_back(std::move(c));
  }
  auto w = fgd_workload_from_classes(std::move(classes), total);
  if (!w) return make_error(w.error().code, "fgd: classes: {}", w.error().message);
  return w;
}

std::string format_fgd_classes(const fgd_workload& w, std::int64_t total_tasks) {
  std::string out;
  for (const fgd_task_class& c : w.classes) {
    out += fmt::format("{}/{}/{}/{}/{}", c.cpu_milli, c.gpu_milli, c.num_gpu, c.count, c.gpu_spec);
    out += ';';
  }
  out += fmt::format("total={}", total_tasks);
  return out;
}

fgd_task fgd_placement::task_of(const task_role& role) {
  fgd_task t;
  t.cpu_milli = role.milli_cpu;
  t.memory_mib = role.memory_mib;
  t.num_gpu = role.gpu.count;
  t.gpu_milli = role.gpu.count > 0 ? role.gpu.milli_per_gpu : 0;
  t.gpu_spec = std::string(role.gpu.type.name());
  return t;
}

result<fgd_placement> fgd_placement::create(const cluster& description, fgd_policy policy,
                                            fgd_workload workload, std::uint64_t seed) {
  std::vector<fgd_node_spec> nodes;
  for (std::size_t i = 0; i < description.node_count(); ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    const node_info& info = description.node(n);
    fgd_node_spec s;
    s.name = info.name;
    s.cpu_milli = info.allocatable.milli_cpu;
    s.memory_mib = info.allocatable.memory_mib;
    s.gpus = info.device_count;
    if (info.device_count > 0) s.model = std::string(description.devices(n)[0].type.name());
    nodes.push_back(std::move(s));
  }
  auto mirror = fgd_cluster::make(nodes);
  if (!mirror) return make_error(mirror.error().code, "fgd: {}", mirror.error().message);
  return fgd_placement(std::move(nodes), std::move(*mirror),
                       fgd_scheduler(policy, std::move(workload), seed));
}

result<fgd_cluster> fgd_placement::make_mirror() const {
  auto fresh = fgd_cluster::make(nodes_);
  if (!fresh) return std::move(fresh).error();
  for (const auto& [id, tasks] : running_)
    for (const placed_task& p : tasks) HETSCHED_TRY(fresh->place(p.node, p.task, p.gpus));
  // Broken hardware is filled after the running tasks (they were placed while it was healthy):
  // a node that is down loses its free CPU and memory, a broken device its free milli-GPU.
  for (std::size_t n = 0; n < broken_gpus_.size(); ++n) {
    if (node_down_[n] && (fresh->cpu_left(n) > 0 || fresh->memory_left(n) > 0)) {
      const fgd_task filler{fresh->cpu_left(n), fresh->memory_left(n), 0, 0, {}};
      HETSCHED_TRY(fresh->place(n, filler, {}));
    }
    for (const std::uint32_t g : broken_gpus_[n]) {
      const std::int64_t left = fresh->gpu_left(n)[g];
      if (left == 0) continue;
      const fgd_task filler{0, 0, 1, left, {}};
      HETSCHED_TRY(fresh->place(n, filler, std::span<const std::uint32_t>(&g, 1)));
    }
  }
  return fresh;
}

result<decision> fgd_placement::place(const cluster_state& state, job_id job) {
  std::vector<placed_task> placed;
  auto d = decide(sched_, state, job, placed);
  if (d && !d->binds.empty()) pending_[job.value()] = std::move(placed);
  return d;
}

result<decision> fgd_placement::what_if(const cluster_state& state, job_id job) {
  std::vector<placed_task> placed;
  // Only the random baseline's stream changes answers; the score cache and the mirror do not.
  if (sched_.policy() == fgd_policy::random) {
    fgd_scheduler trial = sched_;
    return decide(trial, state, job, placed);
  }
  return decide(sched_, state, job, placed);
}

result<decision> fgd_placement::decide(fgd_scheduler& sched, const cluster_state& state, job_id job,
                                       std::vector<placed_task>& placed) {
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "fgd: unknown job {}", job);
  if (dirty_) {
    auto fresh = make_mirror();
    if (!fresh) return std::move(fresh).error();
    mirror_ = std::move(*fresh);
    dirty_ = false;
  }
  const job_spec& spec = rec->spec;
  const bool gang = spec.roles.size() > 1 || spec.roles[0].task_count > 1;
  std::optional<fgd_cluster> scratch;
  if (gang) scratch = mirror_;
  const fgd_cluster& view = gang ? *scratch : mirror_;
  binding b{job, {}};
  for (std::size_t r = 0; r < spec.roles.size(); ++r) {
    const task_role& role = spec.roles[r];
    const std::uint32_t first = first_task(spec, r).value();
    const fgd_task t = task_of(role);
    for (std::uint32_t k = 0; k < role.task_count; ++k) {
      const auto choice = sched.choose(view, t);
      if (!choice) {
        decision d;
        d.deferrals.push_back(
            {job, defer_reason::insufficient_capacity, "no node passes the FGD filter"});
        return d;
      }
      if (gang) HETSCHED_TRY(scratch->place(choice->node, t, choice->gpus));
      const node_id n(choice->node);
      const device_id base = state.cluster().node(n).first_device;
      task_placement tp{task_id(first + k), n, {}};
      for (const std::uint32_t g : choice->gpus)
        tp.devices.push_back(
            {device_id(base.value() + g), role.gpu.milli_per_gpu, role.gpu.memory_mib});
      b.tasks.push_back(std::move(tp));
      placed.push_back({choice->node, t, choice->gpus});
    }
  }
  decision d;
  d.binds.push_back(std::move(b));
  return detail::checked_or_deferred(state, std::move(d), job);
}

void fgd_placement::commit(const cluster_state&, const decision& d) {
  for (const binding& b : d.binds) {
    const auto it = pending_.find(b.job.value());
    if (it == pending_.end()) continue;
    if (!dirty_)
      for (const placed_task& p : it->second)
        if (!mirror_.place(p.node, p.task, p.gpus)) dirty_ = true;
    running_[b.job.value()] = std::move(it->second);
    pending_.erase(it);
  }
}

void fgd_placement::release(const cluster_state&, job_id job) {
  pending_.erase(job.value());
  if (running_.erase(job.value()) > 0) dirty_ = true;
}

void fgd_placement::rebuild(const cluster_state& state) {
  const cluster& c = state.cluster();
  broken_gpus_.assign(c.node_count(), {});
  node_down_.assign(c.node_count(), false);
  for (std::size_t i = 0; i < c.node_count(); ++i) {
    const node_id n(static_cast<std::uint32_t>(i));
    node_down_[i] = state.node_health(n) != health::healthy;
    const device_id first = c.node(n).first_device;
    for (std::uint32_t g = 0; g < c.node(n).device_count; ++g)
      if (node_down_[i] || state.device_health(device_id(first.value() + g)) != health::healthy)
        broken_gpus_[i].push_back(g);
  }
  // Jobs the state no longer knows go; jobs it runs that were never committed here (bindings
  // replayed after a restart) come in, as their tasks were placed.
  std::erase_if(running_,
                [&](const auto& e) { return state.find_job(job_id(e.first)) == nullptr; });
  for (const auto& [id, rec] : state.jobs()) {
    if (!holds_resources(rec.status.state) || running_.contains(id.value())) continue;
    std::vector<placed_task> tasks;
    for (std::size_t r = 0; r < rec.spec.roles.size(); ++r) {
      const std::uint32_t first = first_task(rec.spec, r).value();
      for (std::uint32_t k = 0; k < rec.spec.roles[r].task_count; ++k) {
        if (first + k >= rec.placement.size()) continue;
        const task_placement& tp = rec.placement[first + k];
        if (!tp.node.valid()) continue;
        placed_task p{tp.node.value(), task_of(rec.spec.roles[r]), {}};
        const std::uint32_t base = c.node(tp.node).first_device.value();
        for (const device_share& d : tp.devices) p.gpus.push_back(d.device.value() - base);
        tasks.push_back(std::move(p));
      }
    }
    running_[id.value()] = std::move(tasks);
  }
  dirty_ = true;
}

result<std::unique_ptr<placement_policy>> make_fgd_placement(const policy_params& params,
                                                             const cluster& description,
                                                             const cluster_topology* topology) {
  static_cast<void>(topology);  // FGD reads node CPU, memory and GPUs only
  fgd_policy policy = fgd_policy::fgd;
  std::uint64_t seed = 0;
  fgd_workload workload;
  bool have_classes = false;
  for (const auto& [k, v] : params) {
    if (k == "policy") {
      constexpr std::pair<std::string_view, fgd_policy> names[] = {
          {"fgd", fgd_policy::fgd},
          {"best_fit", fgd_policy::best_fit},
          {"dot_product", fgd_policy::dot_product},
          {"gpu_packing", fgd_policy::gpu_packing},
          {"gpu_clustering", fgd_policy::gpu_clustering},
          {"random", fgd_policy::random}};
      bool found = false;
      for (const auto& [name, p] : names) {
        if (v == name) {
          policy = p;
          found = true;
        }
      }
      if (!found)
        return make_error(errc::invalid_argument,
                          "fgd: policy '{}' (expected fgd, best_fit, dot_product, gpu_packing, "
                          "gpu_clustering or random)",
                          v);
    } else if (k == "seed") {
      if (!to_number(std::string_view(v), seed))
        return make_error(errc::invalid_argument, "fgd: seed '{}' is not an integer", v);
    } else if (k == "classes") {
      auto w = parse_fgd_classes(v);
      if (!w) return std::move(w).error();
      workload = std::move(*w);
      have_classes = true;
    } else {
      return make_error(errc::invalid_argument,
                        "fgd: unknown parameter '{}' (policy, seed, classes)", k);
    }
  }
  if (policy == fgd_policy::fgd && !have_classes)
    return make_error(errc::invalid_argument,
                      "fgd: policy fgd needs the target workload (parameter classes)");
  auto p = fgd_placement::create(description, policy, std::move(workload), seed);
  if (!p) return std::move(p).error();
  return std::unique_ptr<placement_policy>(
      std::make_unique<placement_adapter<fgd_placement>>(std::move(*p), "fgd", false));
}

}  // namespace hetsched
