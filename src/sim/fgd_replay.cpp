// SPDX-License-Identifier: MIT
// The FGD experiment loop (arrivals in order, no departures), its curves, and the reference
// protocol's shuffle and inflation of a trace.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/sim/fgd_replay.hpp>

namespace hetsched::sim {
namespace {

/// splitmix64, the seeded stream of the shuffle and the inflation.
class stream {
 public:
  explicit stream(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
  }
  /// Returns a uniform integer in [0, bound), bound >= 1 (unbiased rejection).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (true) {
      const std::uint64_t x = next();
      if (x >= threshold) return x % bound;
    }
  }

 private:
  std::uint64_t state_;
};

std::int64_t demand(const fgd_task& t) {
  return t.gpu_milli * static_cast<std::int64_t>(t.num_gpu);
}

/// Returns round(num/den) with halves to even, for num >= 0 and den > 0.
std::int64_t round_half_even(std::int64_t num, std::int64_t den) {
  const std::int64_t q = num / den;
  const std::int64_t r2 = (num % den) * 2;
  if (r2 > den || (r2 == den && q % 2 == 1)) return q + 1;
  return q;
}

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

}  // namespace

double fgd_outcome::frag_ratio_pct() const noexcept { return pct(frag.fragment(), frag.idle()); }

double fgd_outcome::q124_pct() const noexcept { return pct(frag.q124(), frag.idle()); }

fgd_curves make_fgd_curves(std::span<const fgd_outcome> outcomes, std::int64_t total_gpus) {
  fgd_curves out;
  if (outcomes.empty() || total_gpus < 1) return out;
  const std::int64_t capacity = total_gpus * fgd_gpu_milli;
  std::size_t top = 0;
  for (const auto& o : outcomes) {
    top = std::max(top,
                   static_cast<std::size_t>(round_half_even(o.arrived_gpu_milli * 100, capacity)));
  }
  std::vector<double> sum_alloc(top + 1, 0.0);
  std::vector<double> sum_amount(top + 1, 0.0);
  std::vector<double> sum_ratio(top + 1, 0.0);
  std::vector<std::size_t> n(top + 1, 0);
  for (const auto& o : outcomes) {
    const auto k = static_cast<std::size_t>(round_half_even(o.arrived_gpu_milli * 100, capacity));
    sum_alloc[k] += pct(static_cast<double>(o.used_gpu_milli), static_cast<double>(capacity));
    sum_amount[k] += pct(o.frag.fragment(), static_cast<double>(capacity));
    sum_ratio[k] += o.frag_ratio_pct();
    ++n[k];
  }
  const auto fill = [&](const std::vector<double>& sum) {
    std::vector<std::optional<double>> c(top + 1);
    for (std::size_t k = 0; k <= top; ++k) {
      if (n[k] > 0) c[k] = sum[k] / static_cast<double>(n[k]);
    }
    std::vector<std::optional<double>> filled = c;
    for (std::size_t k = 0; k <= top; ++k) {
      if (c[k]) continue;
      double s = 0;
      int count = 0;
      if (k > 0 && c[k - 1]) s += *c[k - 1], ++count;
      if (k < top && c[k + 1]) s += *c[k + 1], ++count;
      if (count > 0) filled[k] = s / count;
    }
    return filled;
  };
  out.alloc_pct = fill(sum_alloc);
  out.frag_amount_pct = fill(sum_amount);
  out.frag_ratio_pct = fill(sum_ratio);
  return out;
}

result<fgd_replay_result> run_fgd_replay(std::vector<fgd_node_spec> nodes,
                                         std::span<const fgd_arrival> arrivals,
                                         const fgd_workload& w, fgd_policy policy,
                                         std::uint64_t seed) {
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    if (auto v = validate(arrivals[i].task); !v)
      return make_error(v.error().code, "arrival {} '{}': {}", i, arrivals[i].name,
                        v.error().message);
  }
  auto made = fgd_cluster::make(std::move(nodes));
  if (!made) return std::move(made).error();
  fgd_cluster cluster = std::move(*made);
  fgd_scheduler scheduler(policy, w, seed);

  std::vector<frag_breakdown> node_frag(cluster.size());
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    node_frag[n] =
        node_fragmentation(cluster.cpu_left(n), cluster.gpu_left(n), cluster.spec(n).model, w);
  }
  fgd_replay_result out;
  out.outcomes.reserve(arrivals.size());
  std::int64_t arrived = 0;
  for (const auto& a : arrivals) {
    fgd_outcome o;
    arrived += demand(a.task);
    if (auto choice = scheduler.choose(cluster, a.task)) {
      if (auto placed = cluster.place(choice->node, a.task, choice->gpus); !placed)
        return make_error(errc::internal, "arrival '{}': {}", a.name, placed.error().message);
      o.scheduled = true;
      o.node = choice->node;
      o.gpus = std::move(choice->gpus);
      node_frag[o.node] = node_fragmentation(cluster.cpu_left(o.node), cluster.gpu_left(o.node),
                                             cluster.spec(o.node).model, w);
    } else {
      ++out.failed;
    }
    o.arrived_gpu_milli = arrived;
    o.used_gpu_milli = cluster.used_gpu_milli();
    o.used_nodes = cluster.used_nodes();
    for (const auto& f : node_frag) o.frag += f;
    out.outcomes.push_back(std::move(o));
  }
  out.curves = make_fgd_curves(out.outcomes, cluster.total_gpus());
  return out;
}

result<std::vector<fgd_arrival>> shuffle_and_inflate(std::span<const fgd_arrival> trace,
                                                     std::int64_t total_gpus, std::uint64_t seed,
                                                     std::int64_t ratio_percent) {
  if (total_gpus < 1) return make_error(errc::invalid_argument, "total_gpus {} < 1", total_gpus);
  if (ratio_percent < 100)
    return make_error(errc::out_of_range, "ratio_percent {} < 100", ratio_percent);
  if (trace.empty()) return make_error(errc::invalid_argument, "empty trace");
  if (std::none_of(trace.begin(), trace.end(),
                   [](const fgd_arrival& a) { return demand(a.task) > 0; }))
    return make_error(errc::invalid_argument, "no pod of the trace asks for GPUs");
  std::vector<fgd_arrival> out(trace.begin(), trace.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const fgd_arrival& a, const fgd_arrival& b) { return a.name < b.name; });
  stream rng(seed);
  for (std::size_t i = out.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i));
    std::swap(out[i - 1], out[j]);
  }
  // Demands are compared with the target as demand·100 against GPUs·1000·ratio_percent, exactly.
  const std::int64_t target = total_gpus * fgd_gpu_milli * ratio_percent;
  std::int64_t arrived = 0;
  for (const auto& a : out) arrived += demand(a.task);
  if (arrived * 100 > target) {
    // Tune down: drop pods drawn uniformly from the shuffled list until the demand fits.
    while (arrived * 100 > target) {
      const auto k = static_cast<std::size_t>(rng.below(out.size()));
      arrived -= demand(out[k].task);
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return out;
  }
  if (arrived * 100 == target) return out;
  // Tune up (the reference's loop has no other exit: at exactly the target, CPU-only copies are
  // still appended until a GPU pod is drawn).
  const std::size_t originals = out.size();
  for (std::size_t copy = 0;; ++copy) {
    const auto& pick = out[static_cast<std::size_t>(rng.below(originals))];
    // The reference tests the per-GPU request (not the pod's total) against the target, so a
    // multi-GPU copy may overshoot it by up to (k-1)·1000 milli.
    if ((arrived + pick.task.gpu_milli) * 100 > target) break;
    arrived += demand(pick.task);
    fgd_arrival a = pick;
    a.name += "-tuned-";
    a.name += std::to_string(copy);
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<fgd_arrival> fgd_arrivals_from_openb(std::span<const workload::openb_pod> pods) {
  std::vector<fgd_arrival> out;
  out.reserve(pods.size());
  for (const auto& p : pods) {
    out.push_back(fgd_arrival{
        p.name, fgd_task{p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli, p.gpu_spec}});
  }
  return out;
}

std::vector<fgd_node_spec> fgd_nodes_from_openb(std::span<const workload::openb_node> nodes,
                                                std::optional<std::uint64_t> seed) {
  std::vector<fgd_node_spec> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) {
    out.push_back(fgd_node_spec{n.name, n.cpu_milli, n.memory_mib, n.gpus, n.model});
  }
  if (seed) {
    stream rng(*seed ^ 0x6E6F646573ULL);
    for (std::size_t i = out.size(); i > 1; --i) {
      std::swap(out[i - 1], out[static_cast<std::size_t>(rng.below(i))]);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].name = fmt::format("{:04d}-{}", i, out[i].name);
  }
  return out;
}

result<fgd_workload> fgd_workload_of(std::span<const fgd_arrival> trace, int popularity_pct) {
  std::vector<fgd_task> tasks;
  tasks.reserve(trace.size());
  for (const auto& a : trace) tasks.push_back(a.task);
  return make_fgd_workload(tasks, popularity_pct);
}

}  // namespace hetsched::sim
