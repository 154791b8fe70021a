// SPDX-License-Identifier: MIT
// The FGD target workload (popular task classes) and the fragmentation measure with its
// Q1-Q4/XL/XR/NoAccess breakdown, computed in the reference's order of double operations.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <hetsched/policies/fgd.hpp>

namespace hetsched {
namespace {

constexpr auto idx(frag_bucket b) { return static_cast<std::size_t>(b); }

/// Returns the weights (count/total)/(Σcount/total) of `classes`.
std::vector<double> weights_of(const std::vector<fgd_task_class>& classes, double total) {
  double cum = 0;
  for (const auto& c : classes) cum += static_cast<double>(c.count);
  std::vector<double> w;
  w.reserve(classes.size());
  for (const auto& c : classes) w.push_back((static_cast<double>(c.count) / total) / (cum / total));
  return w;
}

}  // namespace

std::string_view to_string(frag_bucket b) noexcept {
  switch (b) {
    case frag_bucket::q1_lack_both: return "Q1";
    case frag_bucket::q2_lack_gpu: return "Q2";
    case frag_bucket::q3_satisfied: return "Q3";
    case frag_bucket::q4_lack_cpu: return "Q4";
    case frag_bucket::xl_satisfied: return "XL";
    case frag_bucket::xr_lack_cpu: return "XR";
    case frag_bucket::no_access: return "NoAccess";
  }
  return "unknown";
}

double frag_breakdown::fragment() const noexcept {
  double out = 0;
  for (std::size_t i = 0; i < frag_bucket_count; ++i) {
    if (i != idx(frag_bucket::q3_satisfied)) out += milli[i];
  }
  return out;
}

double frag_breakdown::idle() const noexcept {
  double out = 0;
  for (const double v : milli) out += v;
  return out;
}

double frag_breakdown::q124() const noexcept {
  double out = 0;
  out += milli[idx(frag_bucket::q1_lack_both)];
  out += milli[idx(frag_bucket::q2_lack_gpu)];
  out += milli[idx(frag_bucket::q4_lack_cpu)];
  return out;
}

frag_breakdown& frag_breakdown::operator+=(const frag_breakdown& o) noexcept {
  for (std::size_t i = 0; i < frag_bucket_count; ++i) milli[i] += o.milli[i];
  return *this;
}

result<fgd_workload> make_fgd_workload(std::span<const fgd_task> tasks, int popularity_pct) {
  if (tasks.empty()) return make_error(errc::invalid_argument, "empty trace: no task classes");
  if (popularity_pct < 1 || popularity_pct > 100)
    return make_error(errc::out_of_range, "popularity_pct {} outside 1..100", popularity_pct);
  using key = std::tuple<std::int64_t, std::int64_t, std::uint32_t, std::string>;
  std::map<key, std::int64_t> counts;
  for (const auto& t : tasks)
    ++counts[key{fgd_class_cpu(t.cpu_milli), t.gpu_milli, t.num_gpu, t.gpu_spec}];
  std::vector<fgd_task_class> all;
  all.reserve(counts.size());
  for (const auto& [k, n] : counts) {
    all.push_back(
        fgd_task_class{std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), n});
  }
  // Most frequent first; equal counts: the larger (cpu, gpu_milli, num_gpu, spec) first.
  std::sort(all.begin(), all.end(), [](const fgd_task_class& a, const fgd_task_class& b) {
    if (a.count != b.count) return a.count > b.count;
    return std::tie(a.cpu_milli, a.gpu_milli, a.num_gpu, a.gpu_spec) >
           std::tie(b.cpu_milli, b.gpu_milli, b.num_gpu, b.gpu_spec);
  });
  const double total = static_cast<double>(tasks.size());
  const double expected = static_cast<double>(popularity_pct) * total / 100.0;
  double cum = 0;
  std::size_t keep = 0;
  while (cum < expected && keep < all.size()) cum += static_cast<double>(all[keep++].count);
  all.resize(keep);
  fgd_workload w;
  w.weights = weights_of(all, total);
  w.classes = std::move(all);
  return w;
}

result<fgd_workload> fgd_workload_from_classes(std::vector<fgd_task_class> classes,
                                               std::int64_t total_tasks) {
  if (classes.empty()) return make_error(errc::invalid_argument, "workload without classes");
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].count < 1)
      return make_error(errc::invalid_argument, "class {}: count {} < 1", i, classes[i].count);
    if (classes[i].num_gpu == 0 && classes[i].gpu_milli != 0)
      return make_error(errc::invalid_argument, "class {}: gpu_milli without GPUs", i);
    sum += classes[i].count;
  }
  if (total_tasks != 0 && total_tasks < sum)
    return make_error(errc::invalid_argument, "total_tasks {} < sum of class counts {}",
                      total_tasks, sum);
  fgd_workload w;
  w.weights = weights_of(classes, static_cast<double>(total_tasks == 0 ? sum : total_tasks));
  w.classes = std::move(classes);
  return w;
}

frag_breakdown node_fragmentation(std::int64_t cpu_left, std::span<const std::int64_t> gpu_left,
                                  std::string_view model, const fgd_workload& w) {
  frag_breakdown out;
  std::int64_t idle = 0;
  for (const auto g : gpu_left) idle += g;
  const double idle_d = static_cast<double>(idle);
  for (std::size_t m = 0; m < w.classes.size(); ++m) {
    const auto& c = w.classes[m];
    const double p = w.weights[m];
    const bool cpu_ok = cpu_left >= c.cpu_milli;
    if (c.gpu_milli == 0) {
      out.milli[idx(cpu_ok ? frag_bucket::xl_satisfied : frag_bucket::xr_lack_cpu)] += p * idle_d;
      continue;
    }
    if (!fgd_model_allowed(model, c.gpu_spec)) {
      out.milli[idx(frag_bucket::no_access)] += p * idle_d;
      continue;
    }
    std::uint32_t room = 0;
    std::int64_t small = 0;
    for (const auto g : gpu_left) {
      if (g >= c.gpu_milli) {
        ++room;
      } else {
        small += g;
      }
    }
    const bool gpu_ok = c.num_gpu == 0 || room >= c.num_gpu;
    if (gpu_ok && cpu_ok) {
      out.milli[idx(frag_bucket::q2_lack_gpu)] += p * static_cast<double>(small);
      out.milli[idx(frag_bucket::q3_satisfied)] += p * static_cast<double>(idle - small);
    } else if (gpu_ok) {
      out.milli[idx(frag_bucket::q4_lack_cpu)] += p * idle_d;
    } else {
      out.milli[idx(cpu_ok ? frag_bucket::q2_lack_gpu : frag_bucket::q1_lack_both)] += p * idle_d;
    }
  }
  return out;
}

frag_breakdown cluster_fragmentation(const fgd_cluster& c, const fgd_workload& w) {
  frag_breakdown out;
  for (std::size_t n = 0; n < c.size(); ++n) {
    out += node_fragmentation(c.cpu_left(n), c.gpu_left(n), c.spec(n).model, w);
  }
  return out;
}

}  // namespace hetsched
