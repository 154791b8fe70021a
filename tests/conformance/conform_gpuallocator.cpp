// SPDX-License-Identifier: MIT
// Conformance runner for the gpuallocator vector family (affinity_packer.hpp).
//
// Every case is reported twice: "<id>/compat" must reproduce `expected` exactly (null =
// go-gpuallocator returned its padded block, which compat reports as packer_status::padded_block;
// [] = no answer),
// "<id>/lexmax" must return a member of `acceptable_lexmax` (else `acceptable`; [] = no answer).
// Every answer must also be feasible: GPUs from `available`, `size` of them, `required` included.
// Topology matrices are rebuilt from nvlink_count + pcie_relation (null = 0) with pair_weight()
// and checked against the recorded pair_score. sequential_allocate carries one packer_state
// through the steps in compat mode (its free list must equal each step's available_before); in
// lexmax mode each step starts from available_before, since `acceptable_lexmax` of a step assumes
// the earlier steps returned `expected`. node_score ranks nodes with go-gpuallocator's choice
// (compat) and with the lexmax choice.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/topology/views.hpp>

#include "conform.hpp"

namespace hetsched::conform {
namespace {

using gpu_list = std::vector<std::uint32_t>;

/// Reads an array of non-negative integers; nullopt if `v` is not one.
std::optional<gpu_list> read_gpus(const jsonio::json& v) {
  if (!v.is_array()) return std::nullopt;
  gpu_list out;
  for (const auto& x : jsonio::as_array(v)) {
    if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::int64_t>() > 0xFFFFFFFF)
      return std::nullopt;
    out.push_back(static_cast<std::uint32_t>(x.get<std::int64_t>()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Reads an array of GPU lists; nullopt if absent or malformed.
std::optional<std::vector<gpu_list>> read_gpu_lists(const jsonio::json& v) {
  if (!v.is_array()) return std::nullopt;
  std::vector<gpu_list> out;
  for (const auto& x : jsonio::as_array(v)) {
    auto l = read_gpus(x);
    if (!l) return std::nullopt;
    out.push_back(std::move(*l));
  }
  return out;
}

/// Reads a square integer matrix; an error message otherwise.
result<std::vector<std::vector<std::int64_t>>> read_int_matrix(const jsonio::json& v,
                                                               std::string_view what) {
  if (!v.is_array()) return make_error(errc::invalid_argument, "no {}", what);
  std::vector<std::vector<std::int64_t>> rows;
  for (const auto& row : jsonio::as_array(v)) {
    if (!row.is_array())
      return make_error(errc::invalid_argument, "{}: a row is not an array", what);
    auto& r = rows.emplace_back();
    for (const auto& cell : jsonio::as_array(row)) {
      if (!cell.is_number_integer())
        return make_error(errc::invalid_argument, "{}: non-integer", what);
      r.push_back(cell.get<std::int64_t>());
    }
  }
  return rows;
}

/// Returns the go-gpuallocator weight of a pcie_relation cell (null = no link = 0).
result<std::int64_t> pcie_cell_weight(const jsonio::json& cell) {
  if (cell.is_null()) return std::int64_t{0};
  if (!cell.is_string()) return make_error(errc::invalid_argument, "pcie cell is not a string");
  if (cell.get_ref<const std::string&>() == "SAMEBOARD") return packer_weight::same_board;
  auto rel = parse_relation_token(cell.get_ref<const std::string&>());
  if (!rel) return std::move(rel).error();
  return pcie_weight(rel->pcie);
}

/// Builds a topology's matrix from nvlink_count + pcie_relation and checks it against pair_score.
result<pair_score_matrix> read_topology(const jsonio::json& topo) {
  auto nvlinks = read_int_matrix(jsonio::member(topo, "nvlink_count"), "nvlink_count");
  if (!nvlinks) return std::move(nvlinks).error();
  auto recorded = read_int_matrix(jsonio::member(topo, "pair_score"), "pair_score");
  if (!recorded) return std::move(recorded).error();
  const auto& pcie = jsonio::member(topo, "pcie_relation");
  if (!pcie.is_array() || jsonio::as_array(pcie).size() != nvlinks->size()) {
    return make_error(errc::invalid_argument, "pcie_relation is missing or of the wrong size");
  }
  std::vector<std::vector<std::int64_t>> rows(nvlinks->size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& prow = jsonio::as_array(pcie)[i];
    if (!prow.is_array() || jsonio::as_array(prow).size() != (*nvlinks)[i].size()) {
      return make_error(errc::invalid_argument, "pcie_relation row {} has the wrong size", i);
    }
    for (std::size_t j = 0; j < (*nvlinks)[i].size(); ++j) {
      auto w = pcie_cell_weight(jsonio::as_array(prow)[j]);
      if (!w) return std::move(w).error();
      const std::int64_t links = (*nvlinks)[i][j];
      if (links < 0 || links > 1'000'000)
        return make_error(errc::invalid_argument, "nvlink_count[{}][{}] is outside 0..10^6", i, j);
      rows[i].push_back(i == j ? 0 : *w + packer_weight::nvlink * links);
    }
  }
  if (rows != *recorded) {
    return make_error(errc::internal, "computed pair scores {} differ from pair_score {}", rows,
                      *recorded);
  }
  return pair_score_matrix::from_rows(rows);
}

/// Returns the answer's GPUs, or nullopt when it has none (error or a non-allocated status).
std::optional<gpu_list> answer_gpus(const result<packer_answer>& a) {
  if (!a || a->status != packer_status::allocated) return std::nullopt;
  return a->gpus;
}

std::string describe(const result<packer_answer>& a) {
  if (!a) return fmt::format("error {}", a.error().message);
  switch (a->status) {
    case packer_status::allocated: return fmt::format("{}", a->gpus);
    case packer_status::insufficient_gpus: return "insufficient_gpus";
    case packer_status::too_many_required: return "too_many_required";
    case packer_status::required_unavailable: return "required_unavailable";
    case packer_status::padded_block: return "padded_block";
  }
  return "?";
}

/// Returns an empty string if `got` is feasible for the request, else what is wrong.
std::string feasibility(const gpu_list& got, const gpu_list& available, const gpu_list& required,
                        std::int64_t size) {
  if (static_cast<std::int64_t>(got.size()) != size) {
    return fmt::format("{} has {} GPUs, not {}", got, got.size(), size);
  }
  if (!std::includes(available.begin(), available.end(), got.begin(), got.end())) {
    return fmt::format("{} is not within available {}", got, available);
  }
  if (!std::includes(got.begin(), got.end(), required.begin(), required.end())) {
    return fmt::format("{} misses required {}", got, required);
  }
  return {};
}

/// One request and its three expectations.
struct request_check {
  gpu_list available;
  gpu_list required;
  std::int64_t size = 0;
  bool expected_null = false;
  gpu_list expected;
  std::vector<gpu_list> lexmax;
};

result<packer_answer> run_request(const pair_score_matrix& scores, const request_check& r,
                                  packer_mode mode) {
  if (r.size <= 0) return make_error(errc::invalid_argument, "size {}", r.size);
  return allocate(scores, r.available, r.required, static_cast<std::size_t>(r.size), mode);
}

/// Returns an empty string if the compat answer matches, else the difference.
std::string check_compat(const request_check& r, const result<packer_answer>& a) {
  if (r.expected_null) {
    if (a && a->status == packer_status::padded_block) return {};
    return fmt::format("expected padded_block (go-gpuallocator's null), got {}", describe(a));
  }
  const auto got = answer_gpus(a);
  if (r.expected.empty()) {
    return got ? fmt::format("expected no answer, got {}", *got) : std::string{};
  }
  if (!got) return fmt::format("expected {}, got {}", r.expected, describe(a));
  if (*got != r.expected) return fmt::format("expected {}, got {}", r.expected, *got);
  return feasibility(*got, r.available, r.required, r.size);
}

/// Returns an empty string if the lexmax answer is acceptable, else the difference.
std::string check_lexmax(const request_check& r, const result<packer_answer>& a) {
  const auto got = answer_gpus(a);
  if (r.lexmax.empty()) {
    return got ? fmt::format("expected no answer, got {}", *got) : std::string{};
  }
  if (!got) return fmt::format("expected one of {}, got {}", r.lexmax, describe(a));
  if (std::find(r.lexmax.begin(), r.lexmax.end(), *got) == r.lexmax.end()) {
    return fmt::format("{} is not one of {}", *got, r.lexmax);
  }
  return feasibility(*got, r.available, r.required, r.size);
}

/// Reads the expectations of a case or step; an error message if malformed.
result<request_check> read_check(const jsonio::json& item, const char* available_key) {
  request_check r;
  auto available = read_gpus(jsonio::member(item, available_key));
  if (!available) return make_error(errc::invalid_argument, "bad {}", available_key);
  r.available = std::move(*available);
  if (const auto& req = jsonio::member(item, "required"); !req.is_null()) {
    auto required = read_gpus(req);
    if (!required) return make_error(errc::invalid_argument, "bad required");
    r.required = std::move(*required);
  }
  const auto& size = jsonio::member(item, "size");
  if (!size.is_number_integer()) return make_error(errc::invalid_argument, "no size");
  r.size = size.get<std::int64_t>();
  // "expected": null is recorded (go-gpuallocator's padded block), so presence is tested.
  if (!item.contains("expected")) return make_error(errc::invalid_argument, "no expected");
  const auto& expected = jsonio::member(item, "expected");
  r.expected_null = expected.is_null();
  if (!r.expected_null) {
    auto e = read_gpus(expected);
    if (!e) return make_error(errc::invalid_argument, "bad expected");
    r.expected = std::move(*e);
  }
  auto lexmax = read_gpu_lists(jsonio::member(item, "acceptable_lexmax"));
  if (!lexmax) lexmax = read_gpu_lists(jsonio::member(item, "acceptable"));
  if (!lexmax) return make_error(errc::invalid_argument, "no acceptable_lexmax nor acceptable");
  r.lexmax = std::move(*lexmax);
  return r;
}

void report(reporter& out, const std::string& id, const std::string& problem) {
  if (problem.empty()) {
    out.pass(id);
  } else {
    out.fail(id, problem);
  }
}

void run_policy_allocate(const jsonio::json& item, const std::string& name,
                         const pair_score_matrix& scores, reporter& out) {
  auto r = read_check(item, "available");
  if (!r) {
    out.fail(name + "/compat", r.error().message);
    out.fail(name + "/lexmax", r.error().message);
    return;
  }
  report(out, name + "/compat", check_compat(*r, run_request(scores, *r, packer_mode::compat)));
  report(out, name + "/lexmax", check_lexmax(*r, run_request(scores, *r, packer_mode::lexmax)));
}

void run_sequential(const jsonio::json& item, const std::string& name,
                    const pair_score_matrix& scores, reporter& out) {
  const auto& steps = jsonio::member(item, "steps");
  if (!steps.is_array() || jsonio::as_array(steps).empty()) {
    out.fail(name + "/compat", "no steps");
    out.fail(name + "/lexmax", "no steps");
    return;
  }
  std::vector<request_check> checks;
  for (const auto& step : jsonio::as_array(steps)) {
    auto r = read_check(step, "available_before");
    if (!r) {
      out.fail(name + "/compat", r.error().message);
      out.fail(name + "/lexmax", r.error().message);
      return;
    }
    checks.push_back(std::move(*r));
  }
  std::string compat_problem;
  auto state = packer_state::make(scores, checks.front().available);
  if (!state) compat_problem = state.error().message;
  for (std::size_t i = 0; state && i < checks.size() && compat_problem.empty(); ++i) {
    const gpu_list free(state->available().begin(), state->available().end());
    if (free != checks[i].available) {
      compat_problem = fmt::format("step {}: free GPUs {} differ from available_before {}", i, free,
                                   checks[i].available);
      break;
    }
    const auto a = checks[i].size <= 0
                       ? result<packer_answer>(make_error(errc::invalid_argument, "size"))
                       : state->allocate(static_cast<std::size_t>(checks[i].size),
                                         checks[i].required, packer_mode::compat);
    if (auto p = check_compat(checks[i], a); !p.empty())
      compat_problem = fmt::format("step {}: {}", i, p);
  }
  report(out, name + "/compat", compat_problem);
  std::string lexmax_problem;
  for (std::size_t i = 0; i < checks.size() && lexmax_problem.empty(); ++i) {
    auto step_state = packer_state::make(scores, checks[i].available);
    if (!step_state) {
      lexmax_problem = step_state.error().message;
      break;
    }
    const auto a = checks[i].size <= 0
                       ? result<packer_answer>(make_error(errc::invalid_argument, "size"))
                       : step_state->allocate(static_cast<std::size_t>(checks[i].size),
                                              checks[i].required, packer_mode::lexmax);
    if (auto p = check_lexmax(checks[i], a); !p.empty())
      lexmax_problem = fmt::format("step {}: {}", i, p);
  }
  report(out, name + "/lexmax", lexmax_problem);
}

/// Returns the node score of one node's enum matrix with the `mode` choice; an error message.
result<std::int64_t> score_node(const jsonio::json& node, std::int64_t k, packer_mode mode) {
  auto enums = read_int_matrix(jsonio::member(node, "go_enum_matrix"), "go_enum_matrix");
  if (!enums) return std::move(enums).error();
  std::vector<std::vector<std::int64_t>> rows = *enums;
  for (auto& row : rows) {
    for (auto& cell : row) {
      auto w = go_link_weight(cell);
      if (!w) return std::move(w).error();
      cell = *w;
    }
  }
  auto scores = pair_score_matrix::from_rows(rows);
  if (!scores) return std::move(scores).error();
  if (k <= 0) return make_error(errc::invalid_argument, "request_gpus {}", k);
  gpu_list all(scores->size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint32_t>(i);
  auto a = allocate(*scores, all, {}, static_cast<std::size_t>(k), mode);
  if (!a) return std::move(a).error();
  return node_score(*scores, a->gpus);
}

void run_node_score(const jsonio::json& item, const std::string& name, reporter& out) {
  const auto& k = jsonio::member(item, "request_gpus");
  const auto& nodes = jsonio::member(item, "nodes");
  const auto& expected = jsonio::member(item, "expected_scores");
  if (!k.is_number_integer() || !nodes.is_object() || !expected.is_object()) {
    out.fail(name + "/compat", "malformed node_score case");
    out.fail(name + "/lexmax", "malformed node_score case");
    return;
  }
  for (const packer_mode mode : {packer_mode::compat, packer_mode::lexmax}) {
    std::string problem;
    for (const auto& [node, value] : jsonio::as_object(nodes)) {
      const auto& want = jsonio::member(expected, node);
      auto got = score_node(value, k.get<std::int64_t>(), mode);
      if (!want.is_number_integer()) {
        problem += fmt::format("{}: no expected score; ", node);
      } else if (!got) {
        problem += fmt::format("{}: {}; ", node, got.error().message);
      } else if (*got != want.get<std::int64_t>()) {
        problem += fmt::format("{}: expected {}, got {}; ", node, want.get<std::int64_t>(), *got);
      }
    }
    report(out, name + (mode == packer_mode::compat ? "/compat" : "/lexmax"), problem);
  }
}

}  // namespace

void run_gpuallocator(const vector_value& doc, reporter& out) {
  const auto cases = list_cases(doc, "cases", "gpuallocator", out);
  std::map<std::string, result<pair_score_matrix>, std::less<>> topologies;
  if (const auto& topos = jsonio::member(doc.json(), "topologies"); topos.is_object()) {
    for (const auto& [id, topo] : jsonio::as_object(topos))
      topologies.emplace(id, read_topology(topo));
  }
  for (const auto& c : cases) {
    const auto& item = c.json.json();
    const std::string& name = c.name;
    if (c.kind == "node_score") {
      run_node_score(item, name, out);
      continue;
    }
    const auto& topo = jsonio::member(item, "topology");
    const auto it =
        topo.is_string() ? topologies.find(topo.get_ref<const std::string&>()) : topologies.end();
    if (it == topologies.end() || !it->second) {
      const std::string why =
          it == topologies.end() ? std::string("unknown topology") : it->second.error().message;
      out.fail(name + "/compat", why);
      out.fail(name + "/lexmax", why);
      continue;
    }
    if (c.kind == "policy_allocate") {
      run_policy_allocate(item, name, *it->second, out);
    } else if (c.kind == "sequential_allocate") {
      run_sequential(item, name, *it->second, out);
    } else {
      out.fail(name, fmt::format("unknown kind \"{}\"", c.kind));
    }
  }
}

}  // namespace hetsched::conform
