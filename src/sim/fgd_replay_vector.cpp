// SPDX-License-Identifier: MIT
// The fgd_replay/1 vector format (recorded FGD simulator runs): reader and outcome comparison.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hetsched/sim/fgd_replay.hpp>

#include "jsonio/json.hpp"

namespace hetsched::sim {
namespace {

result<std::int64_t> int_of(const jsonio::json& v, std::string_view key, std::string_view where) {
  const auto& m = jsonio::member(v, key);
  if (!m.is_number_integer())
    return make_error(errc::invalid_argument, "{}: no integer \"{}\"", where, key);
  if (m.get<std::int64_t>() < 0)
    return make_error(errc::invalid_argument, "{}: \"{}\" is negative", where, key);
  return m.get<std::int64_t>();
}

std::string string_of(const jsonio::json& v, std::string_view key) {
  const auto& m = jsonio::member(v, key);
  return m.is_string() ? m.get_ref<const std::string&>() : std::string();
}

std::optional<double> number_of(const jsonio::json& v, std::string_view key) {
  const auto& m = jsonio::member(v, key);
  if (!m.is_number()) return std::nullopt;
  return m.get<double>();
}

const jsonio::json::array_t* array_of(const jsonio::json& v, std::string_view key) {
  const auto& m = jsonio::member(v, key);
  return m.is_array() ? &jsonio::as_array(m) : nullptr;
}

result<fgd_node_spec> read_node(const jsonio::json& n, const std::string& where) {
  fgd_node_spec s;
  s.name = string_of(n, "name");
  auto cpu = int_of(n, "cpu_milli", where);
  if (!cpu) return std::move(cpu).error();
  auto mem = int_of(n, "memory_mib", where);
  if (!mem) return std::move(mem).error();
  auto gpus = int_of(n, "gpus", where);
  if (!gpus) return std::move(gpus).error();
  if (*gpus > 64) return make_error(errc::out_of_range, "{}: more than 64 gpus", where);
  s.cpu_milli = *cpu;
  s.memory_mib = *mem;
  s.gpus = static_cast<std::uint32_t>(*gpus);
  s.model = string_of(n, "model");
  return s;
}

result<fgd_task> read_task(const jsonio::json& a, std::string_view where,
                           std::string_view spec_key) {
  fgd_task t;
  auto cpu = int_of(a, "cpu_milli", where);
  if (!cpu) return std::move(cpu).error();
  auto gpu = int_of(a, "gpu_milli", where);
  if (!gpu) return std::move(gpu).error();
  auto num = int_of(a, "num_gpu", where);
  if (!num) return std::move(num).error();
  if (*num > 64) return make_error(errc::out_of_range, "{}: more than 64 GPUs", where);
  t.cpu_milli = *cpu;
  t.gpu_milli = *gpu;
  t.num_gpu = static_cast<std::uint32_t>(*num);
  if (a.contains("memory_mib")) {
    auto mem = int_of(a, "memory_mib", where);
    if (!mem) return std::move(mem).error();
    t.memory_mib = *mem;
  }
  t.gpu_spec = string_of(a, spec_key);
  return t;
}

result<fgd_replay_expect> read_expect(const jsonio::json& a, std::string_view where) {
  const auto& e = jsonio::member(a, "expect");
  if (!e.is_object()) return make_error(errc::invalid_argument, "{}: no \"expect\" object", where);
  fgd_replay_expect x;
  const std::string status = string_of(e, "status");
  if (status != "scheduled" && status != "failed")
    return make_error(errc::invalid_argument, "{}: status '{}' is neither scheduled nor failed",
                      where, status);
  x.scheduled = status == "scheduled";
  x.node = string_of(e, "node");
  if (const auto* g = array_of(e, "gpu_index")) {
    for (const auto& i : *g) {
      if (!i.is_number_integer() || i.get<std::int64_t>() < 0)
        return make_error(errc::invalid_argument, "{}: bad gpu_index", where);
      x.gpus.push_back(static_cast<std::uint32_t>(i.get<std::int64_t>()));
    }
  }
  std::sort(x.gpus.begin(), x.gpus.end());
  auto used = int_of(e, "used_gpu_milli", where);
  if (!used) return std::move(used).error();
  auto nodes = int_of(e, "used_nodes", where);
  if (!nodes) return std::move(nodes).error();
  x.used_gpu_milli = *used;
  x.used_nodes = *nodes;
  const auto fm = number_of(e, "frag_milli");
  const auto fr = number_of(e, "frag_ratio_pct");
  const auto q = number_of(e, "q124_pct");
  if (!fm || !fr || !q)
    return make_error(errc::invalid_argument, "{}: missing frag_milli/frag_ratio_pct/q124_pct",
                      where);
  x.frag_milli = *fm;
  x.frag_ratio_pct = *fr;
  x.q124_pct = *q;
  return x;
}

}  // namespace

namespace {

result<fgd_replay_vector> read_fgd_replay_vector(const jsonio::json& doc) {
  fgd_replay_vector v;
  const std::string policy_name = string_of(doc, "policy");
  const auto policy = parse_fgd_policy(policy_name);
  if (!policy) return make_error(errc::invalid_argument, "unknown policy '{}'", policy_name);
  v.policy = *policy;
  if (doc.contains("seed")) {
    auto seed = int_of(doc, "seed", "document");
    if (!seed) return std::move(seed).error();
    v.seed = static_cast<std::uint64_t>(*seed);
  }
  const auto* nodes = array_of(doc, "nodes");
  if (nodes == nullptr) return make_error(errc::invalid_argument, "no \"nodes\" array");
  for (const auto& n : *nodes) {
    auto s = read_node(n, fmt::format("nodes[{}]", v.nodes.size()));
    if (!s) return std::move(s).error();
    v.nodes.push_back(std::move(*s));
  }
  const auto* arrivals = array_of(doc, "arrivals");
  if (arrivals == nullptr) return make_error(errc::invalid_argument, "no \"arrivals\" array");
  for (const auto& a : *arrivals) {
    const std::string where = fmt::format("arrivals[{}]", v.arrivals.size());
    auto t = read_task(a, where, "gpu_spec");
    if (!t) return std::move(t).error();
    auto x = read_expect(a, where);
    if (!x) return std::move(x).error();
    if (a.contains("arrived_gpu_milli")) {
      auto arrived = int_of(a, "arrived_gpu_milli", where);
      if (!arrived) return std::move(arrived).error();
      x->arrived_gpu_milli = *arrived;
    }
    v.arrivals.push_back(fgd_arrival{string_of(a, "pod"), std::move(*t)});
    v.expected.push_back(std::move(*x));
  }
  std::int64_t total = 0;
  if (doc.contains("total_pods")) {
    auto t = int_of(doc, "total_pods", "document");
    if (!t) return std::move(t).error();
    total = *t;
  } else {
    total = static_cast<std::int64_t>(std::count_if(
        v.arrivals.begin(), v.arrivals.end(),
        [](const fgd_arrival& a) { return a.name.find("-tuned-") == std::string::npos; }));
  }
  const auto* typical = array_of(doc, "typical_pods");
  if (typical == nullptr) return make_error(errc::invalid_argument, "no \"typical_pods\" array");
  std::vector<fgd_task_class> classes;
  for (const auto& p : *typical) {
    const std::string where = fmt::format("typical_pods[{}]", classes.size());
    auto t = read_task(p, where, "gpu_type");
    if (!t) return std::move(t).error();
    auto count = int_of(p, "count", where);
    if (!count) return std::move(count).error();
    classes.push_back(fgd_task_class{t->cpu_milli, t->gpu_milli, t->num_gpu, t->gpu_spec, *count});
  }
  std::int64_t sum = 0;
  for (const auto& c : classes) sum += c.count;
  auto w = fgd_workload_from_classes(std::move(classes), total >= sum ? total : 0);
  if (!w) return std::move(w).error();
  v.workload = std::move(*w);
  const auto& tolerances = jsonio::member(doc, "tolerances");
  v.tol_frag_milli = number_of(tolerances, "frag_milli").value_or(v.tol_frag_milli);
  v.tol_pct = number_of(tolerances, "pct").value_or(v.tol_pct);
  return v;
}

}  // namespace

result<fgd_replay_vector> parse_fgd_replay_vector(std::string_view json_text) {
  auto doc = jsonio::parse_json(json_text);
  if (!doc) return std::move(doc).error();
  return read_fgd_replay_vector(*doc);
}

std::optional<std::string> compare_fgd_outcome(const fgd_outcome& o, const fgd_replay_expect& x,
                                               std::span<const fgd_node_spec> nodes,
                                               double tol_frag_milli, double tol_pct) {
  if (o.scheduled != x.scheduled)
    return fmt::format("status {} (expected {})", o.scheduled ? "scheduled" : "failed",
                       x.scheduled ? "scheduled" : "failed");
  if (o.scheduled) {
    std::string_view name = "?";
    if (o.node < nodes.size()) name = nodes[o.node].name;
    if (name != x.node) return fmt::format("node {} (expected {})", name, x.node);
    auto gpus = o.gpus;
    std::sort(gpus.begin(), gpus.end());
    if (gpus != x.gpus) return fmt::format("gpu_index {} (expected {})", gpus, x.gpus);
  }
  if (x.arrived_gpu_milli && o.arrived_gpu_milli != *x.arrived_gpu_milli)
    return fmt::format("arrived_gpu_milli {} (expected {})", o.arrived_gpu_milli,
                       *x.arrived_gpu_milli);
  if (o.used_gpu_milli != x.used_gpu_milli)
    return fmt::format("used_gpu_milli {} (expected {})", o.used_gpu_milli, x.used_gpu_milli);
  if (o.used_nodes != x.used_nodes)
    return fmt::format("used_nodes {} (expected {})", o.used_nodes, x.used_nodes);
  if (std::fabs(o.frag_milli() - x.frag_milli) > tol_frag_milli)
    return fmt::format("frag_milli {:.4f} (expected {:.2f})", o.frag_milli(), x.frag_milli);
  if (std::fabs(o.frag_ratio_pct() - x.frag_ratio_pct) > tol_pct)
    return fmt::format("frag_ratio_pct {:.4f} (expected {:.2f})", o.frag_ratio_pct(),
                       x.frag_ratio_pct);
  if (std::fabs(o.q124_pct() - x.q124_pct) > tol_pct)
    return fmt::format("q124_pct {:.4f} (expected {:.2f})", o.q124_pct(), x.q124_pct);
  return std::nullopt;
}

}  // namespace hetsched::sim
