// SPDX-License-Identifier: MIT
// fgd_cluster: node state of the FGD model (free CPU, memory, per-GPU milli, affinity tags).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <hetsched/policies/fgd.hpp>

namespace hetsched {
namespace {

constexpr std::uint32_t max_gpus_per_node = 64;
constexpr std::size_t affinity_slots = max_gpus_per_node + 1;

/// Returns the affinity slot of a GPU task: 0 for a sharing task, k for k whole GPUs.
std::size_t affinity_slot(const fgd_task& t) {
  return t.gpu_milli < fgd_gpu_milli ? 0 : static_cast<std::size_t>(t.num_gpu);
}

}  // namespace

result<void> validate(const fgd_task& t) {
  if (t.cpu_milli < 0) return make_error(errc::invalid_argument, "cpu_milli {} < 0", t.cpu_milli);
  if (t.memory_mib < 0)
    return make_error(errc::invalid_argument, "memory_mib {} < 0", t.memory_mib);
  if (t.num_gpu > max_gpus_per_node)
    return make_error(errc::out_of_range, "num_gpu {} > {}", t.num_gpu, max_gpus_per_node);
  if (t.num_gpu == 0 && t.gpu_milli != 0)
    return make_error(errc::invalid_argument, "gpu_milli {} with num_gpu 0", t.gpu_milli);
  if (t.num_gpu == 1 && (t.gpu_milli < 1 || t.gpu_milli > fgd_gpu_milli))
    return make_error(errc::out_of_range, "gpu_milli {} outside 1..1000 with num_gpu 1",
                      t.gpu_milli);
  if (t.num_gpu > 1 && t.gpu_milli != fgd_gpu_milli)
    return make_error(errc::invalid_argument, "gpu_milli {} with num_gpu {} (must be 1000)",
                      t.gpu_milli, t.num_gpu);
  return ok();
}

bool fgd_model_allowed(std::string_view model, std::string_view gpu_spec) noexcept {
  bool any_entry = false;
  while (true) {
    const auto bar = gpu_spec.find('|');
    const auto entry = gpu_spec.substr(0, bar);
    if (!entry.empty()) {
      any_entry = true;
      if (!model.empty() && entry == model) return true;
    }
    if (bar == std::string_view::npos) break;
    gpu_spec.remove_prefix(bar + 1);
  }
  return !any_entry;
}

result<fgd_cluster> fgd_cluster::make(std::vector<fgd_node_spec> nodes) {
  std::unordered_set<std::string_view> names;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (n.name.empty()) return make_error(errc::invalid_argument, "node {}: empty name", i);
    if (!names.insert(n.name).second)
      return make_error(errc::already_exists, "node {}: name '{}' defined twice", i, n.name);
    if (n.cpu_milli < 0 || n.memory_mib < 0)
      return make_error(errc::invalid_argument, "node '{}': negative capacity", n.name);
    if (n.gpus > max_gpus_per_node)
      return make_error(errc::out_of_range, "node '{}': {} GPUs > {}", n.name, n.gpus,
                        max_gpus_per_node);
    if (n.gpus > 0 && n.model.empty())
      return make_error(errc::invalid_argument, "node '{}': GPUs without model", n.name);
  }
  fgd_cluster c;
  c.specs_ = std::move(nodes);
  const std::size_t n = c.specs_.size();
  c.cpu_left_.reserve(n);
  c.mem_left_.reserve(n);
  c.gpu_offset_.reserve(n + 1);
  c.gpu_offset_.push_back(0);
  for (const auto& s : c.specs_) {
    c.cpu_left_.push_back(s.cpu_milli);
    c.mem_left_.push_back(s.memory_mib);
    c.gpu_offset_.push_back(c.gpu_offset_.back() + s.gpus);
    c.total_gpus_ += s.gpus;
  }
  c.gpu_left_.assign(c.gpu_offset_.back(), fgd_gpu_milli);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0U);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return c.specs_[a].name < c.specs_[b].name; });
  c.name_rank_.resize(n);
  for (std::uint32_t r = 0; r < n; ++r) c.name_rank_[order[r]] = r;
  c.affinity_.assign(n * affinity_slots, 0);
  c.tasks_on_node_.assign(n, 0);
  return c;
}

std::span<const std::int64_t> fgd_cluster::gpu_left(std::size_t node) const {
  return std::span<const std::int64_t>(gpu_left_).subspan(
      gpu_offset_[node], gpu_offset_[node + 1] - gpu_offset_[node]);
}

std::span<const std::uint32_t> fgd_cluster::affinity(std::size_t node) const {
  return std::span<const std::uint32_t>(affinity_).subspan(node * affinity_slots, affinity_slots);
}

std::uint32_t fgd_cluster::affinity_kinds(std::size_t node) const {
  const auto a = affinity(node);
  return static_cast<std::uint32_t>(
      std::count_if(a.begin(), a.end(), [](std::uint32_t x) { return x > 0; }));
}

bool fgd_cluster::fits(std::size_t node, const fgd_task& t) const {
  if (t.cpu_milli > cpu_left_[node] || t.memory_mib > mem_left_[node]) return false;
  if (t.gpu_milli <= 0) return true;
  const auto& s = specs_[node];
  if (s.gpus == 0 || !fgd_model_allowed(s.model, t.gpu_spec)) return false;
  std::uint32_t room = 0;
  for (const auto left : gpu_left(node)) {
    if (left >= t.gpu_milli && ++room >= t.num_gpu) return true;
  }
  return false;
}

result<void> fgd_cluster::place(std::size_t node, const fgd_task& t,
                                std::span<const std::uint32_t> gpus) {
  HETSCHED_TRY(validate(t));
  if (node >= size()) return make_error(errc::not_found, "node index {} >= {}", node, size());
  const auto& s = specs_[node];
  if (gpus.size() != t.num_gpu)
    return make_error(errc::invalid_argument, "node '{}': {} devices given for num_gpu {}", s.name,
                      gpus.size(), t.num_gpu);
  if (t.cpu_milli > cpu_left_[node])
    return make_error(errc::failed_precondition, "node '{}': cpu {} > free {}", s.name, t.cpu_milli,
                      cpu_left_[node]);
  if (t.memory_mib > mem_left_[node])
    return make_error(errc::failed_precondition, "node '{}': memory {} > free {}", s.name,
                      t.memory_mib, mem_left_[node]);
  if (t.num_gpu > 0 && !fgd_model_allowed(s.model, t.gpu_spec))
    return make_error(errc::failed_precondition, "node '{}': model '{}' not in '{}'", s.name,
                      s.model, t.gpu_spec);
  const auto left = gpu_left(node);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i] >= left.size())
      return make_error(errc::not_found, "node '{}': device {} >= {}", s.name, gpus[i],
                        left.size());
    if (std::find(gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(i), gpus[i]) !=
        gpus.begin() + static_cast<std::ptrdiff_t>(i))
      return make_error(errc::invalid_argument, "node '{}': device {} given twice", s.name,
                        gpus[i]);
    if (left[gpus[i]] < t.gpu_milli)
      return make_error(errc::failed_precondition, "node '{}': device {} has {} < {} milli", s.name,
                        gpus[i], left[gpus[i]], t.gpu_milli);
  }
  cpu_left_[node] -= t.cpu_milli;
  mem_left_[node] -= t.memory_mib;
  for (const auto g : gpus) gpu_left_[gpu_offset_[node] + g] -= t.gpu_milli;
  used_gpu_milli_ += t.gpu_milli * static_cast<std::int64_t>(t.num_gpu);
  if (t.num_gpu > 0) ++affinity_[node * affinity_slots + affinity_slot(t)];
  if (tasks_on_node_[node]++ == 0) ++used_nodes_;
  return ok();
}

}  // namespace hetsched
