// SPDX-License-Identifier: MIT
// The first-fit and random placement baselines and their registry factories.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/policies/baseline_placement.hpp>

namespace hetsched {
namespace {

constexpr std::uint64_t golden_gamma = 0x9E3779B97F4A7C15ULL;

/// splitmix64's output function (finalizer).
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

/// A splitmix64 stream; below(n) draws uniformly without bias.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t state) noexcept : state_(state) {}
  std::uint64_t next() noexcept { return mix64(state_ += golden_gamma); }
  /// Returns a uniform draw in [0, n). Precondition: n > 0. Rejects the draws below 2^64 mod n,
  /// which leaves a multiple of n equally likely values.
  std::uint64_t below(std::uint64_t n) noexcept {
    const std::uint64_t limit = (std::uint64_t{0} - n) % n;
    while (true) {
      const std::uint64_t r = next();
      if (r >= limit) return r % n;
    }
  }

 private:
  std::uint64_t state_;
};

/// The seed of the stream of one place() call: mix64 folded over (seed, job, events).
std::uint64_t stream_seed(std::uint64_t seed, job_id job, std::uint64_t events) noexcept {
  std::uint64_t h = mix64(seed + golden_gamma);
  h = mix64(h + golden_gamma + job.value());
  return mix64(h + golden_gamma + events);
}

bool type_ok(const gpu_type& want, const gpu_type& have) { return want.empty() || want == have; }

std::string_view name_of(baseline_mode m) {
  return m == baseline_mode::random ? "random" : "first-fit";
}

/// What earlier tasks of the job being placed take: per node and per device.
struct pending {
  std::vector<std::pair<node_id, resource_vector>> nodes;
  std::vector<std::pair<device_id, device_capacity>> devices;

  [[nodiscard]] resource_vector room(const cluster_state& state, node_id n) const {
    resource_vector free = state.node_free(n);
    for (const auto& [id, used] : nodes)
      if (id == n) free -= used;
    return free;
  }
  [[nodiscard]] device_capacity device_free(const cluster_state& state, device_id d) const {
    device_capacity free = state.device_free(d);
    for (const auto& [id, used] : devices) {
      if (id != d) continue;
      free.milli_gpu -= used.milli_gpu;
      free.gpu_memory_mib -= used.gpu_memory_mib;
    }
    return free;
  }
};

/// Returns the local indices (ascending) of node `n`'s devices that one task of `role` may use
/// (see the class comment), or nullopt when the node itself does not fit the task.
std::optional<std::vector<std::uint32_t>> feasible_devices(const cluster_state& state, node_id n,
                                                           const task_role& role,
                                                           const pending& taken) {
  if (state.node_health(n) != health::healthy) return std::nullopt;
  if (!fits(task_request(role), taken.room(state, n))) return std::nullopt;
  std::vector<std::uint32_t> out;
  if (role.gpu.count == 0) return out;
  const cluster& c = state.cluster();
  const node_info& info = c.node(n);
  const bool fractional = role.gpu.is_fractional();
  for (std::uint32_t i = 0; i < info.device_count; ++i) {
    const device_id d(info.first_device.value() + i);
    if (state.device_health(d) != health::healthy) continue;
    if (!type_ok(role.gpu.type, c.device(d).type)) continue;
    const device_capacity free = taken.device_free(state, d);
    if (free.gpu_memory_mib < role.gpu.memory_mib) continue;
    if (fractional ? free.milli_gpu < role.gpu.milli_per_gpu : free.milli_gpu < milli_per_gpu_unit)
      continue;
    out.push_back(i);
  }
  return out;
}

}  // namespace

baseline_placement::baseline_placement(const cluster& description, baseline_placement_params params)
    : params_(params), node_count_(description.node_count()) {}

result<decision> baseline_placement::place(const cluster_state& state, job_id job) const {
  const std::string_view name = name_of(params_.mode);
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "{}: unknown job {}", name, job);
  if (rec->status.state != job_state::queued)
    return make_error(errc::failed_precondition, "{}: job {} is {}, not queued", name, job,
                      rec->status.state);
  const cluster& c = state.cluster();
  if (c.node_count() != node_count_)
    return make_error(errc::invalid_argument, "{}: state has {} nodes, the placement {}", name,
                      c.node_count(), node_count_);
  const job_spec& spec = rec->spec;
  const bool random = params_.mode == baseline_mode::random;
  splitmix64 rng(stream_seed(params_.seed, job, events_));
  pending taken;
  binding bind{job, {}};
  bool failed = false;
  std::int64_t want_milli = 0;
  std::vector<std::uint32_t> candidates;

  for (std::size_t r = 0; r < spec.roles.size() && !failed; ++r) {
    const task_role& role = spec.roles[r];
    const std::size_t need =
        role.gpu.count == 0 ? 0 : (role.gpu.is_fractional() ? 1 : role.gpu.count);
    const std::uint32_t first = first_task(spec, r).value();
    for (std::uint32_t t = 0; t < role.task_count; ++t) {
      const task_id task(first + t);
      if (rec->placement[task.index()].node.valid()) continue;
      want_milli += role.gpu.total_milli_gpu();
      std::optional<node_id> chosen;
      std::vector<std::uint32_t> devices;
      if (random) {
        candidates.clear();
        for (std::size_t i = 0; i < node_count_; ++i) {
          const node_id n(static_cast<std::uint32_t>(i));
          const auto f = feasible_devices(state, n, role, taken);
          if (f && f->size() >= need) candidates.push_back(n.value());
        }
        if (!candidates.empty()) {
          chosen = node_id(candidates[rng.below(candidates.size())]);
          devices = *feasible_devices(state, *chosen, role, taken);
          // Partial Fisher-Yates: positions 0..need-1 become a uniform sample without replacement.
          for (std::size_t i = 0; i < need; ++i) {
            const std::size_t j = i + static_cast<std::size_t>(rng.below(devices.size() - i));
            std::swap(devices[i], devices[j]);
          }
          devices.resize(need);
          std::sort(devices.begin(), devices.end());
        }
      } else {
        for (std::size_t i = 0; i < node_count_ && !chosen; ++i) {
          const node_id n(static_cast<std::uint32_t>(i));
          auto f = feasible_devices(state, n, role, taken);
          if (!f || f->size() < need) continue;
          chosen = n;
          devices = std::move(*f);
          devices.resize(need);
        }
      }
      if (!chosen) {
        failed = true;
        break;
      }
      task_placement p{task, *chosen, {}};
      const std::uint32_t base = c.node(*chosen).first_device.value();
      for (const std::uint32_t local : devices) {
        const device_id d(base + local);
        p.devices.push_back(device_share{d, role.gpu.milli_per_gpu, role.gpu.memory_mib});
        taken.devices.emplace_back(d, device_capacity{role.gpu.milli_per_gpu, role.gpu.memory_mib});
      }
      taken.nodes.emplace_back(*chosen, task_request(role));
      bind.tasks.push_back(std::move(p));
    }
  }

  decision d;
  if (failed) {
    std::int64_t whole_free = 0;
    for (std::size_t i = 0; i < node_count_; ++i) {
      const node_id n(static_cast<std::uint32_t>(i));
      if (state.node_health(n) != health::healthy) continue;
      const node_info& info = c.node(n);
      for (std::uint32_t g = 0; g < info.device_count; ++g) {
        const device_id dev(info.first_device.value() + g);
        if (state.device_health(dev) == health::healthy && state.device_used(dev).milli_gpu == 0)
          ++whole_free;
      }
    }
    const defer_reason reason = whole_free * milli_per_gpu_unit < want_milli
                                    ? defer_reason::insufficient_capacity
                                    : defer_reason::fragmented;
    d.deferrals.push_back(
        deferral{job, reason,
                 fmt::format("{}: no placement for {} milli-GPU ({} whole GPUs free)", name,
                             want_milli, whole_free)});
  } else if (!bind.tasks.empty()) {
    d.binds.push_back(std::move(bind));
  }
  return d;
}

void baseline_placement::commit(const cluster_state& after, const decision& d) {
  static_cast<void>(after);
  static_cast<void>(d);
  ++events_;
}

void baseline_placement::release(const cluster_state& after, job_id job) {
  static_cast<void>(after);
  static_cast<void>(job);
  ++events_;
}

void baseline_placement::rebuild(const cluster_state& state) { static_cast<void>(state); }

result<std::unique_ptr<placement_policy>> make_first_fit_placement(
    const policy_params& params, const cluster& description, const cluster_topology* topology) {
  static_cast<void>(topology);
  if (!params.empty())
    return make_error(errc::invalid_argument,
                      "first-fit: unknown parameter {} (first-fit has no parameters)",
                      params.begin()->first);
  return std::unique_ptr<placement_policy>(std::make_unique<placement_adapter<baseline_placement>>(
      baseline_placement(description, {baseline_mode::first_fit, 1}), "first-fit",
      placement_traits{}));
}

result<std::unique_ptr<placement_policy>> make_random_placement(const policy_params& params,
                                                                const cluster& description,
                                                                const cluster_topology* topology) {
  static_cast<void>(topology);
  baseline_placement_params p{baseline_mode::random, 1};
  for (const auto& [key, value] : params) {
    if (key == "seed") {
      const char* const begin = value.data();
      const char* const end = begin + value.size();
      std::uint64_t seed = 0;
      const auto [ptr, ec] = std::from_chars(begin, end, seed);
      if (value.empty() || ec != std::errc{} || ptr != end)
        return make_error(errc::invalid_argument,
                          "random: parameter seed={} is not a 64-bit unsigned integer", value);
      p.seed = seed;
    } else {
      return make_error(errc::invalid_argument, "random: unknown parameter {} (known: seed)", key);
    }
  }
  return std::unique_ptr<placement_policy>(std::make_unique<placement_adapter<baseline_placement>>(
      baseline_placement(description, p), "random", placement_traits{}));
}

}  // namespace hetsched
