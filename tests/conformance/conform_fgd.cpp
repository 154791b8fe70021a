// SPDX-License-Identifier: MIT
// Conformance runner for the fgd vector family (fgd_replay/1, sim/fgd_replay.hpp).
//
// The file gives the nodes (in the seeded order, names prefixed NNNN-), the target workload
// ("typical_pods"), the policy and every arrival in order with what the reference recorded after
// it. The runner replays all arrivals once with run_fgd_replay() and reports one case per block of
// 100 arrivals ("arrivals[a..b]"): it passes when every arrival of the block has the recorded
// status, node, GPU indices (as a set), used_gpu_milli and used_nodes exactly, frag_milli within
// 0.05 and frag_ratio_pct / q124_pct within 0.01 (the file's tolerances; an optional
// "tolerances" object with keys frag_milli and pct overrides them). A failed block names its first
// differing arrival and field. The class weights use total = the original trace size: the file's
// "total_pods" when present, else the number of arrivals that are not inflation copies (names
// without "-tuned-").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/policies/fgd.hpp>
#include <hetsched/sim/fgd_replay.hpp>

#include "conform.hpp"

namespace hetsched::conform {
namespace {

constexpr std::size_t block_size = 100;

const detail::json_value* member(const detail::json_value& v, std::string_view key) {
  return v.is_object() ? v.find(key) : nullptr;
}

result<std::int64_t> int_of(const detail::json_value& v, std::string_view key,
                            std::string_view where) {
  const auto* m = member(v, key);
  if (m == nullptr || !m->is_integer())
    return make_error(errc::invalid_argument, "{}: no integer \"{}\"", where, key);
  return m->as_int64();
}

std::string string_of(const detail::json_value& v, std::string_view key) {
  const auto* m = member(v, key);
  return m != nullptr && m->is_string() ? m->as_string() : std::string();
}

std::optional<double> number_of(const detail::json_value& v, std::string_view key) {
  const auto* m = member(v, key);
  if (m == nullptr || !m->is_number()) return std::nullopt;
  return m->as_double();
}

result<std::vector<fgd_node_spec>> read_nodes(const detail::json_value& doc) {
  const auto* items = member(doc, "nodes");
  if (items == nullptr || !items->is_array())
    return make_error(errc::invalid_argument, "no \"nodes\" array");
  std::vector<fgd_node_spec> nodes;
  for (const auto& n : items->as_array()) {
    const std::string where = fmt::format("nodes[{}]", nodes.size());
    fgd_node_spec s;
    s.name = string_of(n, "name");
    auto cpu = int_of(n, "cpu_milli", where);
    if (!cpu) return std::move(cpu).error();
    auto mem = int_of(n, "memory_mib", where);
    if (!mem) return std::move(mem).error();
    auto gpus = int_of(n, "gpus", where);
    if (!gpus) return std::move(gpus).error();
    if (*gpus < 0) return make_error(errc::invalid_argument, "{}: negative gpus", where);
    s.cpu_milli = *cpu;
    s.memory_mib = *mem;
    s.gpus = static_cast<std::uint32_t>(*gpus);
    s.model = string_of(n, "model");
    nodes.push_back(std::move(s));
  }
  return nodes;
}

result<fgd_task> read_task(const detail::json_value& a, std::string_view where,
                           std::string_view spec_key) {
  fgd_task t;
  auto cpu = int_of(a, "cpu_milli", where);
  if (!cpu) return std::move(cpu).error();
  auto gpu = int_of(a, "gpu_milli", where);
  if (!gpu) return std::move(gpu).error();
  auto num = int_of(a, "num_gpu", where);
  if (!num) return std::move(num).error();
  if (*num < 0) return make_error(errc::invalid_argument, "{}: negative num_gpu", where);
  t.cpu_milli = *cpu;
  t.gpu_milli = *gpu;
  t.num_gpu = static_cast<std::uint32_t>(*num);
  if (const auto* m = member(a, "memory_mib"); m != nullptr && m->is_integer())
    t.memory_mib = m->as_int64();
  t.gpu_spec = string_of(a, spec_key);
  return t;
}

result<fgd_workload> read_workload(const detail::json_value& doc, std::int64_t total) {
  const auto* items = member(doc, "typical_pods");
  if (items == nullptr || !items->is_array())
    return make_error(errc::invalid_argument, "no \"typical_pods\" array");
  std::vector<fgd_task_class> classes;
  for (const auto& p : items->as_array()) {
    const std::string where = fmt::format("typical_pods[{}]", classes.size());
    auto t = read_task(p, where, "gpu_type");
    if (!t) return std::move(t).error();
    auto count = int_of(p, "count", where);
    if (!count) return std::move(count).error();
    classes.push_back(fgd_task_class{t->cpu_milli, t->gpu_milli, t->num_gpu, t->gpu_spec, *count});
  }
  return fgd_workload_from_classes(std::move(classes), total);
}

struct expectation {
  bool scheduled = false;
  std::string node;
  std::vector<std::uint32_t> gpus;
  std::int64_t used_gpu_milli = 0;
  std::int64_t used_nodes = 0;
  double frag_milli = 0;
  double frag_ratio_pct = 0;
  double q124_pct = 0;
};

result<expectation> read_expect(const detail::json_value& a, std::string_view where) {
  const auto* e = member(a, "expect");
  if (e == nullptr || !e->is_object())
    return make_error(errc::invalid_argument, "{}: no \"expect\" object", where);
  expectation x;
  x.scheduled = string_of(*e, "status") == "scheduled";
  x.node = string_of(*e, "node");
  if (const auto* g = member(*e, "gpu_index"); g != nullptr && g->is_array()) {
    for (const auto& i : g->as_array()) {
      if (!i.is_integer() || i.as_int64() < 0)
        return make_error(errc::invalid_argument, "{}: bad gpu_index", where);
      x.gpus.push_back(static_cast<std::uint32_t>(i.as_int64()));
    }
  }
  std::sort(x.gpus.begin(), x.gpus.end());
  auto used = int_of(*e, "used_gpu_milli", where);
  if (!used) return std::move(used).error();
  auto nodes = int_of(*e, "used_nodes", where);
  if (!nodes) return std::move(nodes).error();
  x.used_gpu_milli = *used;
  x.used_nodes = *nodes;
  const auto fm = number_of(*e, "frag_milli");
  const auto fr = number_of(*e, "frag_ratio_pct");
  const auto q = number_of(*e, "q124_pct");
  if (!fm || !fr || !q) return make_error(errc::invalid_argument, "{}: missing figures", where);
  x.frag_milli = *fm;
  x.frag_ratio_pct = *fr;
  x.q124_pct = *q;
  return x;
}

/// Returns what differs between the outcome and the record, or nothing.
std::optional<std::string> compare(const sim::fgd_outcome& o, const expectation& x,
                                   const std::vector<fgd_node_spec>& nodes, double tol_milli,
                                   double tol_pct) {
  if (o.scheduled != x.scheduled)
    return fmt::format("status {} (expected {})", o.scheduled ? "scheduled" : "failed",
                       x.scheduled ? "scheduled" : "failed");
  if (o.scheduled) {
    if (nodes[o.node].name != x.node)
      return fmt::format("node {} (expected {})", nodes[o.node].name, x.node);
    auto gpus = o.gpus;
    std::sort(gpus.begin(), gpus.end());
    if (gpus != x.gpus) return fmt::format("gpu_index {} (expected {})", gpus, x.gpus);
  }
  if (o.used_gpu_milli != x.used_gpu_milli)
    return fmt::format("used_gpu_milli {} (expected {})", o.used_gpu_milli, x.used_gpu_milli);
  if (o.used_nodes != x.used_nodes)
    return fmt::format("used_nodes {} (expected {})", o.used_nodes, x.used_nodes);
  if (std::fabs(o.frag_milli() - x.frag_milli) > tol_milli)
    return fmt::format("frag_milli {:.4f} (expected {:.2f})", o.frag_milli(), x.frag_milli);
  if (std::fabs(o.frag_ratio_pct() - x.frag_ratio_pct) > tol_pct)
    return fmt::format("frag_ratio_pct {:.4f} (expected {:.2f})", o.frag_ratio_pct(),
                       x.frag_ratio_pct);
  if (std::fabs(o.q124_pct() - x.q124_pct) > tol_pct)
    return fmt::format("q124_pct {:.4f} (expected {:.2f})", o.q124_pct(), x.q124_pct);
  return std::nullopt;
}

}  // namespace

void run_fgd(const detail::json_value& doc, reporter& out) {
  const auto cases = list_cases(doc, "arrivals", "fgd", out);
  if (cases.empty()) return;
  const auto fail_all = [&](const std::string& why) { out.fail("fgd", why); };
  const std::string policy_name = string_of(doc, "policy");
  const auto policy = parse_fgd_policy(policy_name);
  if (!policy) return fail_all(fmt::format("unknown policy '{}'", policy_name));
  auto nodes = read_nodes(doc);
  if (!nodes) return fail_all(nodes.error().message);
  double tol_milli = 0.05;
  double tol_pct = 0.01;
  if (const auto* t = member(doc, "tolerances"); t != nullptr) {
    tol_milli = number_of(*t, "frag_milli").value_or(tol_milli);
    tol_pct = number_of(*t, "pct").value_or(tol_pct);
  }
  std::vector<sim::fgd_arrival> arrivals;
  std::vector<expectation> expected;
  for (const auto& c : cases) {
    auto task = read_task(*c.json, c.name, "gpu_spec");
    if (!task) return fail_all(task.error().message);
    auto x = read_expect(*c.json, c.name);
    if (!x) return fail_all(x.error().message);
    arrivals.push_back(sim::fgd_arrival{string_of(*c.json, "pod"), std::move(*task)});
    expected.push_back(std::move(*x));
  }
  std::int64_t total = 0;
  if (const auto* t = member(doc, "total_pods"); t != nullptr && t->is_integer()) {
    total = t->as_int64();
  } else {
    total = static_cast<std::int64_t>(std::count_if(
        arrivals.begin(), arrivals.end(),
        [](const sim::fgd_arrival& a) { return a.name.find("-tuned-") == std::string::npos; }));
  }
  auto workload = read_workload(doc, total);
  if (!workload) return fail_all(workload.error().message);
  const std::uint64_t seed = member(doc, "seed") != nullptr && member(doc, "seed")->is_integer()
                                 ? static_cast<std::uint64_t>(member(doc, "seed")->as_int64())
                                 : 0;
  auto run = sim::run_fgd_replay(*nodes, arrivals, *workload, *policy, seed);
  if (!run) return fail_all(run.error().message);
  for (std::size_t first = 0; first < arrivals.size(); first += block_size) {
    const std::size_t last = std::min(first + block_size, arrivals.size()) - 1;
    const std::string id = fmt::format("arrivals[{}..{}]", first, last);
    std::optional<std::string> diff;
    for (std::size_t i = first; i <= last && !diff; ++i) {
      if (auto d = compare(run->outcomes[i], expected[i], *nodes, tol_milli, tol_pct))
        diff = fmt::format("arrival {} '{}': {}", i, arrivals[i].name, *d);
    }
    if (diff) {
      out.fail(id, *diff);
    } else {
      out.pass(id, fmt::format("{} arrivals", last - first + 1));
    }
  }
}

}  // namespace hetsched::conform
