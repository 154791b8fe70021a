// SPDX-License-Identifier: MIT
// Conformance runner for the drf_capacity vector family: the DRF kinds run against
// hetsched/policies/drf.hpp; the Kueue kinds are in conform_kueue.cpp, the YARN kinds in
// conform_yarn.cpp.
//
// Vector amounts may be fractional (3.5 cpus), so every amount is scaled by 1000 to an integer;
// shares are scale-invariant and expected allocations are scaled the same way.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <hetsched/policies/drf.hpp>

#include "conform.hpp"

namespace hetsched::conform {
namespace {

using detail::json_value;

constexpr double scale = 1000.0;
constexpr double tolerance = 1e-9;

// A failure description, or nullopt when the case passed.
using outcome = std::optional<std::string>;

std::optional<std::int64_t> scaled(const json_value& v) {
  if (!v.is_number()) return std::nullopt;
  const double x = v.as_double() * scale;
  const double r = std::round(x);
  if (std::fabs(x - r) > 1e-6 || std::fabs(r) > 1e15) return std::nullopt;
  return static_cast<std::int64_t>(r);
}

std::optional<drf_vector> vector_of(const json_value* v) {
  if (v == nullptr || !v->is_object()) return std::nullopt;
  drf_vector out;
  for (const auto& [name, amount] : v->as_object()) {
    const auto a = scaled(amount);
    if (!a) return std::nullopt;
    if (*a != 0) out.insert_or_assign(name, *a);
  }
  return out;
}

std::string show(const drf_vector& v) {
  std::string s = "{";
  for (const auto& [name, amount] : v)
    s += fmt::format("{}{}: {}", s.size() > 1 ? ", " : "", name,
                     static_cast<double>(amount) / scale);
  return s + "}";
}

bool near(double a, double b) { return std::fabs(a - b) <= tolerance; }

// Parses "p/q" or "p" into an exact share.
std::optional<drf_share> parse_fraction(const std::string& s) {
  const auto slash = s.find('/');
  try {
    if (slash == std::string::npos) return drf_share{std::stoll(s), 1};
    return drf_share{std::stoll(s.substr(0, slash)), std::stoll(s.substr(slash + 1))};
  } catch (...) {
    return std::nullopt;
  }
}

outcome run_progressive_filling(const json_value& c) {
  const json_value* input = c.find("input");
  const json_value* expected = c.find("expected");
  if (input == nullptr || expected == nullptr) return "missing input or expected";
  const auto capacity = vector_of(input->find("capacity"));
  const json_value* users_json = input->find("users");
  if (!capacity || users_json == nullptr || !users_json->is_array()) return "bad input";
  std::vector<drf_user> users;
  std::map<std::string, std::size_t> index;
  for (const auto& u : users_json->as_array()) {
    drf_user user;
    const json_value* name = u.find("name");
    const auto demand = vector_of(u.find("task_demand"));
    if (name == nullptr || !name->is_string() || !demand) return "bad user";
    user.name = name->as_string();
    user.task_demand = *demand;
    if (const json_value* w = u.find("weight"); w != nullptr && w->is_number())
      user.weight = w->as_double();
    if (const json_value* m = u.find("max_tasks"); m != nullptr && m->is_integer())
      user.max_tasks = m->as_int64();
    index[user.name] = users.size();
    users.push_back(std::move(user));
  }
  const auto got = drf_fill_tasks(*capacity, users);
  if (!got) return fmt::format("drf_fill_tasks failed: {}", got.error().message);
  std::string why;
  const auto user_of = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto it = index.find(name);
    if (it == index.end()) return std::nullopt;
    return it->second;
  };
  for (const auto& [key, value] : expected->as_object()) {
    if (key == "tasks") {
      for (const auto& [name, n] : value.as_object()) {
        const auto i = user_of(name);
        if (!i || !n.is_integer() || got->tasks[*i] != n.as_int64())
          why += fmt::format("tasks[{}] = {}; ", name, i ? got->tasks[*i] : -1);
      }
    } else if (key == "allocation") {
      for (const auto& [name, v] : value.as_object()) {
        const auto i = user_of(name);
        if (!i || vector_of(&v) != got->allocation[*i])
          why += fmt::format("allocation[{}] = {}; ", name, i ? show(got->allocation[*i]) : "?");
      }
    } else if (key == "dominant_resource") {
      for (const auto& [name, r] : value.as_object()) {
        const auto i = user_of(name);
        if (!i || !r.is_string() || got->dominant[*i].resource != r.as_string())
          why += fmt::format("dominant_resource[{}] = {}; ", name,
                             i ? got->dominant[*i].resource : "?");
      }
    } else if (key == "dominant_share" || key == "weighted_dominant_share") {
      for (const auto& [name, s] : value.as_object()) {
        const auto i = user_of(name);
        if (!i || !s.is_number() || !near(got->dominant[*i].share.to_double(), s.as_double()))
          why += fmt::format("{}[{}] = {}; ", key, name,
                             i ? got->dominant[*i].share.to_double() : -1.0);
      }
    } else if (key == "dominant_share_exact") {
      for (const auto& [name, s] : value.as_object()) {
        const auto i = user_of(name);
        const auto want = s.is_string() ? parse_fraction(s.as_string()) : std::nullopt;
        if (!i || !want || got->dominant[*i].share != *want)
          why += fmt::format("{}[{}] differs; ", key, name);
      }
    } else if (key == "total_used") {
      drf_vector total;
      for (const auto& a : got->allocation)
        for (const auto& [r, amount] : a) total[r] += amount;
      if (vector_of(&value) != total) why += fmt::format("total_used = {}; ", show(total));
    } else if (key == "continuous_lp_solution") {
      // x_tasks_<first user>, y_tasks_<second user>: the divisible DRF solution.
      const auto divisible = drf_fill_divisible(*capacity, users);
      if (!divisible)
        return fmt::format("drf_fill_divisible failed: {}", divisible.error().message);
      for (const auto& [name, n] : value.as_object()) {
        const auto us = name.rfind('_');
        if (us == std::string::npos || !n.is_number()) continue;
        const auto i = user_of(name.substr(us + 1));
        if (!i || !near(divisible->tasks[*i].to_double(), n.as_double()))
          why += fmt::format("continuous {} = {}; ", name,
                             i ? divisible->tasks[*i].to_double() : -1.0);
      }
    } else if (key == "trace_table2") {
      // The paper breaks the initial 0/0 tie toward B; hetsched breaks it toward the lower
      // input index (documented), so only the final state is compared (per the case's notes).
    } else {
      why += fmt::format("unknown expectation '{}'; ", key);
    }
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

outcome run_sorter_steps(const json_value& c) {
  const json_value* input = c.find("input");
  const json_value* steps = input != nullptr ? input->find("steps") : nullptr;
  if (steps == nullptr || !steps->is_array()) return "missing input.steps";
  drf_sorter sorter;
  std::size_t k = 0;
  for (const auto& step : steps->as_array()) {
    const std::string where = fmt::format("steps[{}]", k++);
    const json_value* op_json = step.find("op");
    if (op_json == nullptr || !op_json->is_string()) return where + ": no op";
    const std::string& op = op_json->as_string();
    const auto client = [&]() -> result<drf_client_id> {
      const json_value* name = step.find("client");
      if (name == nullptr || !name->is_string())
        return make_error(errc::invalid_argument, "no client");
      return sorter.find(name->as_string());
    };
    result<void> r = ok();
    if (op == "set_total") {
      const auto v = vector_of(step.find("resources"));
      if (!v) return where + ": bad resources";
      r = sorter.set_total(*v);
    } else if (op == "add") {
      const json_value* name = step.find("client");
      const json_value* active = step.find("active");
      if (name == nullptr || !name->is_string()) return where + ": no client";
      auto added = sorter.add(name->as_string(),
                              active == nullptr || !active->is_bool() || active->as_bool());
      if (!added) r = std::move(added).error();
    } else if (op == "set_weight") {
      const json_value* path = step.find("path");
      const json_value* w = step.find("weight");
      if (path == nullptr || !path->is_string() || w == nullptr || !w->is_number())
        return where + ": bad set_weight";
      r = sorter.set_weight(path->as_string(), w->as_double());
    } else if (op == "allocated" || op == "unallocated" || op == "update" || op == "remove" ||
               op == "activate" || op == "deactivate") {
      auto id = client();
      if (!id) return fmt::format("{}: {}", where, id.error().message);
      if (op == "allocated" || op == "unallocated") {
        const auto v = vector_of(step.find("resources"));
        if (!v) return where + ": bad resources";
        r = op == "allocated" ? sorter.allocated(*id, *v) : sorter.unallocated(*id, *v);
      } else if (op == "update") {
        const auto from = vector_of(step.find("from"));
        const auto to = vector_of(step.find("to"));
        if (!from || !to) return where + ": bad update";
        r = sorter.update(*id, *from, *to);
      } else if (op == "remove") {
        r = sorter.remove(*id);
      } else if (op == "activate") {
        r = sorter.activate(*id);
      } else {
        r = sorter.deactivate(*id);
      }
    } else if (op == "expect_sort") {
      const json_value* order = step.find("order");
      if (order == nullptr || !order->is_array()) return where + ": no order";
      std::vector<std::string> want;
      for (const auto& o : order->as_array())
        if (o.is_string()) want.push_back(o.as_string());
      std::vector<std::string> got;
      for (const auto id : sorter.sort()) got.push_back(sorter.path(id));
      if (got != want)
        return fmt::format("{}: sort() = [{}], expected [{}]", where, fmt::join(got, ", "),
                           fmt::join(want, ", "));
      if (const json_value* shares = step.find("shares"); shares != nullptr) {
        for (const auto& [name, s] : shares->as_object()) {
          auto id = sorter.find(name);
          if (!id) return fmt::format("{}: {}", where, id.error().message);
          const auto got_share = sorter.share(*id);
          if (!got_share || !s.is_number() || !near(got_share->to_double(), s.as_double()))
            return fmt::format("{}: share({}) = {}, expected {}", where, name,
                               got_share ? got_share->to_double() : -1.0, to_string(s));
        }
      }
    } else {
      return fmt::format("{}: unknown op '{}'", where, op);
    }
    if (!r) return fmt::format("{} ({}): {}", where, op, r.error().message);
  }
  return std::nullopt;
}

// Walks the Volcano-style nested tree {"root": {"sci": {"weight": 50}, "eng": {..."children"}}}.
bool collect_queues(const json_value& children, const std::string& prefix,
                    std::vector<hdrf_queue>& out) {
  if (!children.is_object()) return false;
  for (const auto& [name, q] : children.as_object()) {
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    hdrf_queue queue{path, 1.0};
    if (const json_value* w = q.find("weight"); w != nullptr && w->is_number())
      queue.weight = w->as_double();
    out.push_back(queue);
    if (const json_value* sub = q.find("children"); sub != nullptr) {
      if (!collect_queues(*sub, path, out)) return false;
    } else if (prefix.empty()) {
      // The top-level entry ("root") lists its children directly.
      json_value::object_type direct;
      for (const auto& member : q.as_object())
        if (member.first != "weight") direct.push_back(member);
      if (!collect_queues(json_value(std::move(direct)), path, out)) return false;
    }
  }
  return true;
}

outcome run_hdrf(const json_value& c) {
  const json_value* input = c.find("input");
  const json_value* expected = c.find("expected");
  if (input == nullptr || expected == nullptr) return "missing input or expected";
  const auto capacity = vector_of(input->find("capacity"));
  const json_value* tree = input->find("tree");
  const json_value* jobs_json = input->find("jobs");
  if (!capacity || tree == nullptr || jobs_json == nullptr || !jobs_json->is_object())
    return "bad input";
  std::vector<hdrf_queue> queues;
  if (!collect_queues(*tree, "", queues)) return "bad tree";
  std::vector<hdrf_job> jobs;
  for (const auto& [name, j] : jobs_json->as_object()) {
    const json_value* queue = j.find("queue");
    const json_value* tasks = j.find("tasks");
    const auto demand = vector_of(j.find("task_demand"));
    if (queue == nullptr || !queue->is_string() || !demand) return "bad job " + name;
    hdrf_job job{name, queue->as_string(), *demand, std::nullopt};
    if (tasks != nullptr && tasks->is_integer()) job.tasks = tasks->as_int64();
    jobs.push_back(std::move(job));
  }
  const auto got = hdrf_fill_tasks(*capacity, queues, jobs);
  if (!got) return fmt::format("hdrf_fill_tasks failed: {}", got.error().message);
  const json_value* allocation = expected->find("allocation");
  if (allocation == nullptr || !allocation->is_object()) return "no expected.allocation";
  std::string why;
  for (const auto& [name, v] : allocation->as_object()) {
    std::optional<std::size_t> i;
    for (std::size_t j = 0; j < jobs.size(); ++j)
      if (jobs[j].name == name) i = j;
    if (!i || vector_of(&v) != got->allocation[*i])
      why += fmt::format("allocation[{}] = {}; ", name, i ? show(got->allocation[*i]) : "?");
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

// Kueue-style cohorts and cluster queues with fair weights and infinite backlog: modelled as
// H-DRF over one resource, unit tasks, capacity = the sum of all nominal quotas.
outcome run_hierarchical_steady_state(const json_value& c) {
  const json_value* input = c.find("input");
  const json_value* expected = c.find("expected");
  if (input == nullptr || expected == nullptr) return "missing input or expected";
  struct entry {
    std::string parent;
    double weight = 1.0;
  };
  std::map<std::string, entry> nodes;
  drf_vector capacity;
  std::vector<std::string> cqs;
  for (const char* list : {"cohorts", "cluster_queues"}) {
    const json_value* items = input->find(list);
    if (items == nullptr || !items->is_array()) return fmt::format("no {}", list);
    for (const auto& q : items->as_array()) {
      const json_value* name = q.find("name");
      const json_value* parent = q.find("parent");
      const json_value* weight = q.find("fair_weight");
      const auto nominal = vector_of(q.find("nominal"));
      if (name == nullptr || !name->is_string() || !nominal) return "bad queue";
      entry e;
      if (parent != nullptr && parent->is_string()) e.parent = parent->as_string();
      if (weight != nullptr && weight->is_number()) e.weight = weight->as_double();
      nodes[name->as_string()] = e;
      for (const auto& [r, a] : *nominal) capacity[r] += a;
      if (std::string_view(list) == "cluster_queues") cqs.push_back(name->as_string());
    }
  }
  if (capacity.size() != 1) return "only single-resource steady states are supported";
  const std::string resource = capacity.begin()->first;
  const auto path_of = [&](std::string name) {
    std::string path = name;
    for (int guard = 0; guard < 64 && !nodes[name].parent.empty(); ++guard) {
      name = nodes[name].parent;
      path = name + "/" + path;
    }
    return path;
  };
  std::vector<hdrf_queue> queues;
  for (const auto& [name, e] : nodes) queues.push_back({path_of(name), e.weight});
  const json_value* demand = input->find("demand");
  if (demand == nullptr || !demand->is_object()) return "no demand";
  std::vector<hdrf_job> jobs;
  for (const auto& [name, d] : demand->as_object()) {
    hdrf_job job{name, path_of(name), drf_vector{{resource, static_cast<std::int64_t>(scale)}},
                 std::nullopt};
    if (d.is_integer()) {
      if (d.as_int64() == 0) continue;
      job.tasks = d.as_int64();
    } else if (!d.is_string() || d.as_string() != "inf") {
      return "bad demand for " + name;
    }
    jobs.push_back(std::move(job));
  }
  const auto got = hdrf_fill_tasks(capacity, queues, jobs);
  if (!got) return fmt::format("hdrf_fill_tasks failed: {}", got.error().message);
  std::string why;
  for (const auto& [r, per_node] : expected->as_object()) {
    for (const auto& [name, amount] : per_node.as_object()) {
      // A node's amount is the sum over jobs in its subtree.
      const std::string path = path_of(name);
      std::int64_t sum = 0;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const std::string& p = jobs[j].queue;
        if (p == path || p.starts_with(path + "/")) sum += got->tasks[j];
      }
      if (!amount.is_integer() || sum != amount.as_int64())
        why += fmt::format("{}[{}] = {}; ", r, name, sum);
    }
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

}  // namespace

void run_drf_capacity(const detail::json_value& doc, reporter& out) {
  for (const auto& c : list_cases(doc, "cases", "drf_capacity", out)) {
    const auto& item = *c.json;
    const std::string& name = c.name;
    const std::string& kind = c.kind;
    outcome result_of;
    if (kind == "drf_progressive_filling") {
      result_of = run_progressive_filling(item);
    } else if (kind == "drf_sorter_steps") {
      result_of = run_sorter_steps(item);
    } else if (kind == "hdrf_allocation") {
      result_of = run_hdrf(item);
    } else if (kind == "hierarchical_weighted_steady_state") {
      result_of = run_hierarchical_steady_state(item);
    } else if (kind.starts_with("kueue_")) {
      run_kueue_case(c, out);
      continue;
    } else if (kind.starts_with("yarn_")) {
      run_yarn_case(c, out);
      continue;
    } else {
      out.fail(name, fmt::format("kind '{}' is not supported", kind));
      continue;
    }
    if (result_of) {
      out.fail(name, *result_of);
    } else {
      out.pass(name, kind);
    }
  }
}

}  // namespace hetsched::conform
