// SPDX-License-Identifier: MIT
// Conformance runner for the drf_capacity vector family: the DRF kinds run against
// hetsched/policies/drf.hpp; the Kueue kinds are in conform_kueue.cpp, the YARN kinds in
// conform_yarn.cpp. `supported_kinds` below is the one list of kinds with a runner: a case of
// any other kind is skipped (DESIGN.md §6), and a kind named in the file's "required_kinds" but
// missing from that list fails the run.
//
// Vector amounts may be fractional (3.5 cpus), so every amount is scaled by 1000 to an integer;
// shares are scale-invariant and expected allocations are scaled the same way.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <hetsched/policies/drf.hpp>

#include "conform.hpp"

namespace hetsched::conform {
namespace {

constexpr double scale = 1000.0;
constexpr double tolerance = 1e-9;

// A failure description, or nullopt when the case passed.
using outcome = std::optional<std::string>;

std::optional<std::int64_t> scaled(const vector_value& v) {
  if (!v.json().is_number()) return std::nullopt;
  const double x = v.number() * scale;
  const double r = std::round(x);
  if (std::fabs(x - r) > 1e-6 || std::fabs(r) > 1e15) return std::nullopt;
  return static_cast<std::int64_t>(r);
}

/// Returns the resource vector object `v` scaled; nullopt when absent, not an object or an
/// amount is not a number with at most 3 decimals.
std::optional<drf_vector> vector_of(const vector_value& v) {
  if (!v.json().is_object()) return std::nullopt;
  drf_vector out;
  for (const auto& [name, amount] : v.members()) {
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

// The filling algorithms hand out one task at a time, so a case whose capacity allows billions
// of tasks would run for hours: the runner refuses cases above this many tasks in total (the
// recorded cases allocate at most a few hundred).
constexpr std::int64_t max_case_tasks = 1'000'000;

// An upper bound on the tasks `demand` gets from `capacity` (or `max_tasks`), saturating.
std::int64_t task_bound(const drf_vector& capacity, const drf_vector& demand,
                        std::optional<std::int64_t> max_tasks) {
  std::int64_t bound = max_tasks.value_or(std::numeric_limits<std::int64_t>::max());
  bool demands = false;
  for (const auto& [resource, amount] : demand) {
    if (amount <= 0) continue;
    demands = true;
    const auto it = capacity.find(resource);
    bound = std::min(bound, it == capacity.end() ? 0 : it->second / amount);
  }
  // No positive demand and no max_tasks: the filling refuses it with its own error.
  return demands || max_tasks ? bound : 0;
}

std::optional<std::int64_t> max_tasks_of(const drf_user& u) { return u.max_tasks; }
std::optional<std::int64_t> max_tasks_of(const hdrf_job& j) { return j.tasks; }

// Returns a failure text when the users (jobs) may take more than max_case_tasks tasks in total.
template <typename T>
outcome check_task_count(const drf_vector& capacity, const std::vector<T>& users) {
  std::int64_t total = 0;
  for (const T& u : users) {
    const std::int64_t bound = task_bound(capacity, u.task_demand, max_tasks_of(u));
    total = bound > max_case_tasks - total ? max_case_tasks + 1 : total + bound;
  }
  if (total > max_case_tasks)
    return fmt::format("the case allows more than {} tasks; the runner does not run it",
                       max_case_tasks);
  return std::nullopt;
}

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

// The input of the progressive-filling kinds: the capacity and the users in file order.
struct fill_input {
  drf_vector capacity;
  std::vector<drf_user> users;
  std::map<std::string, std::size_t> index;  ///< User name -> position in `users`.
};

// Reads input.capacity and input.users (name, task_demand, weight, max_tasks). With
// input.agents = {"count": N, "resources": {...}} instead of a capacity, the capacity is N
// identical agents and a user without task_demand takes one whole agent per task (Mesos offers
// whole agents).
std::variant<fill_input, std::string> read_fill_input(const vector_value& input) {
  fill_input in;
  std::optional<drf_vector> agent;
  if (const vector_value agents = input["agents"]; agents.present()) {
    const auto& count = jsonio::member(agents.json(), "count");
    agent = vector_of(agents["resources"]);
    if (!count.is_number_integer() || count.get<std::int64_t>() <= 0 ||
        count.get<std::int64_t>() > 1'000'000 || !agent)
      return std::string("bad input.agents (needs a positive count and resources)");
    for (const auto& [name, amount] : *agent) {
      if (amount > std::numeric_limits<std::int64_t>::max() / count.get<std::int64_t>())
        return std::string("bad input.agents (the total overflows)");
      in.capacity[name] = amount * count.get<std::int64_t>();
    }
  } else if (const auto capacity = vector_of(input["capacity"]); capacity) {
    in.capacity = *capacity;
  } else {
    return std::string("bad input.capacity");
  }
  if (!input["users"].json().is_array()) return std::string("no input.users");
  for (const vector_value& u : input["users"].items()) {
    drf_user user;
    if (!u["name"].json().is_string()) return std::string("a user has no name");
    user.name = u["name"].string();
    const auto demand = u.has("task_demand") ? vector_of(u["task_demand"]) : agent;
    if (!demand) return fmt::format("bad task_demand of user '{}'", user.name);
    user.task_demand = *demand;
    user.weight = u["weight"].number_or(user.weight);
    if (const vector_value m = u["max_tasks"]; m.present()) user.max_tasks = m.integer();
    in.index[user.name] = in.users.size();
    in.users.push_back(std::move(user));
  }
  return in;
}

outcome run_progressive_filling(const vector_value& c) {
  const vector_value input = c["input"];
  const vector_value expected = c["expected"];
  if (!input.present() || !expected.present()) return "missing input or expected";
  auto read = read_fill_input(input);
  if (const auto* why = std::get_if<std::string>(&read)) return *why;
  const fill_input& in = std::get<fill_input>(read);
  const drf_vector* capacity = &in.capacity;
  const std::vector<drf_user>& users = in.users;
  const std::map<std::string, std::size_t>& index = in.index;
  if (auto too_many = check_task_count(*capacity, users)) return too_many;
  const auto got = drf_fill_tasks(*capacity, users);
  if (!got) return fmt::format("drf_fill_tasks failed: {}", got.error().message);
  std::string why;
  const auto user_of = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto it = index.find(name);
    if (it == index.end()) return std::nullopt;
    return it->second;
  };
  for (const auto& [key, value] : expected.members()) {
    if (key == "tasks") {
      for (const auto& [name, n] : value.members()) {
        const auto i = user_of(name);
        if (!i || got->tasks[*i] != n.integer())
          why += fmt::format("tasks[{}] = {}; ", name, i ? got->tasks[*i] : -1);
      }
    } else if (key == "allocation") {
      for (const auto& [name, v] : value.members()) {
        const auto i = user_of(name);
        if (!i || vector_of(v) != got->allocation[*i])
          why += fmt::format("allocation[{}] = {}; ", name, i ? show(got->allocation[*i]) : "?");
      }
    } else if (key == "dominant_resource") {
      for (const auto& [name, r] : value.members()) {
        const auto i = user_of(name);
        if (!i || got->dominant[*i].resource != r.string())
          why += fmt::format("dominant_resource[{}] = {}; ", name,
                             i ? got->dominant[*i].resource : "?");
      }
    } else if (key == "dominant_share" || key == "weighted_dominant_share") {
      for (const auto& [name, s] : value.members()) {
        const auto i = user_of(name);
        if (!i || !near(got->dominant[*i].share.to_double(), s.number()))
          why += fmt::format("{}[{}] = {}; ", key, name,
                             i ? got->dominant[*i].share.to_double() : -1.0);
      }
    } else if (key == "dominant_share_exact") {
      for (const auto& [name, s] : value.members()) {
        const auto i = user_of(name);
        const auto want = parse_fraction(s.string());
        if (!i || !want || got->dominant[*i].share != *want)
          why += fmt::format("{}[{}] differs; ", key, name);
      }
    } else if (key == "total_used") {
      drf_vector total;
      for (const auto& a : got->allocation)
        for (const auto& [r, amount] : a) total[r] += amount;
      if (vector_of(value) != total) why += fmt::format("total_used = {}; ", show(total));
    } else if (key == "continuous_lp_solution") {
      // x_tasks_<first user>, y_tasks_<second user>: the divisible DRF solution.
      const auto divisible = drf_fill_divisible(*capacity, users);
      if (!divisible)
        return fmt::format("drf_fill_divisible failed: {}", divisible.error().message);
      for (const auto& [name, n] : value.members()) {
        const auto us = name.rfind('_');
        if (us == std::string::npos || !n.json().is_number()) continue;
        const auto i = user_of(name.substr(us + 1));
        if (!i || !near(divisible->tasks[*i].to_double(), n.number()))
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

// weighted_indivisible_split: weighted DRF over indivisible tasks (or whole identical agents),
// where the split depends on how ties are broken, so the case lists every acceptable split:
//   "expected": {"acceptable": [{"A": 4, "B": 1}, {"A": 3, "B": 2}]}
// (or "tasks": {...} when only one split is acceptable). Each split names every user's task
// count; hetsched's split (its documented tie-break chain, drf.hpp) must equal one of them.
outcome run_weighted_split(const vector_value& c, std::string& detail) {
  const vector_value input = c["input"];
  const vector_value expected = c["expected"];
  if (!input.present() || !expected.present()) return "missing input or expected";
  auto read = read_fill_input(input);
  if (const auto* why = std::get_if<std::string>(&read)) return *why;
  const fill_input& in = std::get<fill_input>(read);
  std::vector<vector_value> splits;
  if (const vector_value acceptable = expected["acceptable"]; acceptable.present()) {
    if (!acceptable.json().is_array()) return "expected.acceptable is not an array";
    splits = acceptable.items();
  }
  if (const vector_value tasks = expected["tasks"]; tasks.present()) splits.push_back(tasks);
  if (splits.empty()) return "expected has neither 'acceptable' nor 'tasks'";
  std::vector<std::vector<std::int64_t>> wanted;
  for (std::size_t k = 0; k < splits.size(); ++k) {
    const vector_value& split = splits[k];
    if (!split.json().is_object() || jsonio::as_object(split.json()).size() != in.users.size())
      return fmt::format("acceptable split {} does not name each of the {} users", k,
                         in.users.size());
    std::vector<std::int64_t> counts(in.users.size(), 0);
    for (const auto& [name, n] : split.members()) {
      const auto it = in.index.find(name);
      if (it == in.index.end())
        return fmt::format("acceptable split {}: unknown user '{}'", k, name);
      if (!n.json().is_number_integer() || n.integer() < 0)
        return fmt::format("acceptable split {}: bad task count for '{}'", k, name);
      counts[it->second] = n.integer();
    }
    wanted.push_back(std::move(counts));
  }
  if (auto too_many = check_task_count(in.capacity, in.users)) return too_many;
  const auto got = drf_fill_tasks(in.capacity, in.users);
  if (!got) return fmt::format("drf_fill_tasks failed: {}", got.error().message);
  std::string split_text;
  for (std::size_t i = 0; i < in.users.size(); ++i)
    split_text += fmt::format("{}{}={}", i == 0 ? "" : " ", in.users[i].name, got->tasks[i]);
  const auto match = std::find(wanted.begin(), wanted.end(), got->tasks);
  if (match == wanted.end())
    return fmt::format("split {} is not one of the {} acceptable splits", split_text,
                       wanted.size());
  detail = fmt::format("{} (acceptable split {} of {})", split_text, match - wanted.begin() + 1,
                       wanted.size());
  return std::nullopt;
}

outcome run_sorter_steps(const vector_value& c) {
  const vector_value steps = c["input"]["steps"];
  if (!steps.json().is_array()) return "missing input.steps";
  drf_sorter sorter;
  std::size_t k = 0;
  for (const vector_value& step : steps.items()) {
    const std::string where = fmt::format("steps[{}]", k++);
    if (!step["op"].json().is_string()) return where + ": no op";
    const std::string op = step["op"].string();
    const auto client = [&]() -> result<drf_client_id> {
      if (!step["client"].json().is_string())
        return make_error(errc::invalid_argument, "no client");
      return sorter.find(step["client"].string());
    };
    result<void> r = ok();
    if (op == "set_total") {
      const auto v = vector_of(step["resources"]);
      if (!v) return where + ": bad resources";
      r = sorter.set_total(*v);
    } else if (op == "add") {
      if (!step["client"].json().is_string()) return where + ": no client";
      auto added = sorter.add(step["client"].string(), step["active"].boolean_or(true));
      if (!added) r = std::move(added).error();
    } else if (op == "set_weight") {
      if (!step["path"].json().is_string() || !step["weight"].json().is_number())
        return where + ": bad set_weight";
      r = sorter.set_weight(step["path"].string(), step["weight"].number());
    } else if (op == "allocated" || op == "unallocated" || op == "update" || op == "remove" ||
               op == "activate" || op == "deactivate") {
      auto id = client();
      if (!id) return fmt::format("{}: {}", where, id.error().message);
      if (op == "allocated" || op == "unallocated") {
        const auto v = vector_of(step["resources"]);
        if (!v) return where + ": bad resources";
        r = op == "allocated" ? sorter.allocated(*id, *v) : sorter.unallocated(*id, *v);
      } else if (op == "update") {
        const auto from = vector_of(step["from"]);
        const auto to = vector_of(step["to"]);
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
      if (!step["order"].json().is_array()) return where + ": no order";
      const std::vector<std::string> want = step["order"].strings();
      std::vector<std::string> got;
      for (const auto id : sorter.sort()) got.push_back(sorter.path(id));
      if (got != want)
        return fmt::format("{}: sort() = [{}], expected [{}]", where, fmt::join(got, ", "),
                           fmt::join(want, ", "));
      for (const auto& [name, s] : step["shares"].members()) {
        auto id = sorter.find(name);
        if (!id) return fmt::format("{}: {}", where, id.error().message);
        const auto got_share = sorter.share(*id);
        if (!got_share || !near(got_share->to_double(), s.number()))
          return fmt::format("{}: share({}) = {}, expected {}", where, name,
                             got_share ? got_share->to_double() : -1.0, s.number());
      }
    } else {
      return fmt::format("{}: unknown op '{}'", where, op);
    }
    if (!r) return fmt::format("{} ({}): {}", where, op, r.error().message);
  }
  return std::nullopt;
}

// Walks the Volcano-style nested tree {"root": {"sci": {"weight": 50}, "eng": {..."children"}}}.
// Nesting beyond this many levels is refused (the walk recurses once per level).
constexpr int max_queue_depth = 64;

bool collect_queues(const vector_value& children, const std::string& prefix,
                    std::vector<hdrf_queue>& out, int depth = 0) {
  if (!children.json().is_object() || depth > max_queue_depth) return false;
  for (const auto& [name, q] : children.members()) {
    if (!q.json().is_object()) return false;
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    hdrf_queue queue{path, 1.0};
    queue.weight = q["weight"].number_or(queue.weight);
    out.push_back(queue);
    if (q.has("children")) {
      if (!collect_queues(q["children"], path, out, depth + 1)) return false;
    } else if (prefix.empty()) {
      // The top-level entry ("root") lists its children directly.
      jsonio::json listed = jsonio::json::object();
      for (const auto& member : jsonio::as_object(q.json()))
        if (member.first != "weight") jsonio::add_member(listed, member.first, member.second);
      if (!collect_queues(vector_value(listed, q.path()), path, out, depth + 1)) return false;
    }
  }
  return true;
}

outcome run_hdrf(const vector_value& c) {
  const vector_value input = c["input"];
  const vector_value expected = c["expected"];
  if (!input.present() || !expected.present()) return "missing input or expected";
  const auto capacity = vector_of(input["capacity"]);
  const vector_value tree = input["tree"];
  const vector_value jobs_json = input["jobs"];
  if (!capacity || !tree.present() || !jobs_json.json().is_object()) return "bad input";
  std::vector<hdrf_queue> queues;
  if (!collect_queues(tree, "", queues)) return "bad tree";
  std::vector<hdrf_job> jobs;
  for (const auto& [name, j] : jobs_json.members()) {
    const auto demand = vector_of(j["task_demand"]);
    if (!j["queue"].json().is_string() || !demand) return "bad job " + name;
    hdrf_job job{name, j["queue"].string(), *demand, std::nullopt};
    if (const vector_value tasks = j["tasks"]; tasks.present()) job.tasks = tasks.integer();
    jobs.push_back(std::move(job));
  }
  if (auto too_many = check_task_count(*capacity, jobs)) return too_many;
  const auto got = hdrf_fill_tasks(*capacity, queues, jobs);
  if (!got) return fmt::format("hdrf_fill_tasks failed: {}", got.error().message);
  const vector_value allocation = expected["allocation"];
  if (!allocation.json().is_object()) return "no expected.allocation";
  std::string why;
  for (const auto& [name, v] : allocation.members()) {
    std::optional<std::size_t> i;
    for (std::size_t j = 0; j < jobs.size(); ++j)
      if (jobs[j].name == name) i = j;
    if (!i || vector_of(v) != got->allocation[*i])
      why += fmt::format("allocation[{}] = {}; ", name, i ? show(got->allocation[*i]) : "?");
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

// Kueue-style cohorts and cluster queues with fair weights and infinite backlog: modelled as
// H-DRF over one resource, unit tasks, capacity = the sum of all nominal quotas.
outcome run_hierarchical_steady_state(const vector_value& c) {
  const vector_value input = c["input"];
  const vector_value expected = c["expected"];
  if (!input.present() || !expected.present()) return "missing input or expected";
  struct entry {
    std::string parent;
    double weight = 1.0;
  };
  std::map<std::string, entry> nodes;
  drf_vector capacity;
  std::vector<std::string> cqs;
  for (const char* list : {"cohorts", "cluster_queues"}) {
    if (!input[list].json().is_array()) return fmt::format("no {}", list);
    for (const vector_value& q : input[list].items()) {
      const auto nominal = vector_of(q["nominal"]);
      if (!q["name"].json().is_string() || !nominal) return "bad queue";
      const std::string name = q["name"].string();
      entry e;
      e.parent = q["parent"].string_or("");
      e.weight = q["fair_weight"].number_or(e.weight);
      nodes[name] = e;
      for (const auto& [r, a] : *nominal) capacity[r] += a;
      if (std::string_view(list) == "cluster_queues") cqs.push_back(name);
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
  const vector_value demand = input["demand"];
  if (!demand.json().is_object()) return "no demand";
  std::vector<hdrf_job> jobs;
  for (const auto& [name, d] : demand.members()) {
    hdrf_job job{name, path_of(name), drf_vector{{resource, static_cast<std::int64_t>(scale)}},
                 std::nullopt};
    if (d.json().is_number_integer()) {
      if (d.integer() == 0) continue;
      job.tasks = d.integer();
    } else if (!d.json().is_string() || d.string() != "inf") {
      return "bad demand for " + name;
    }
    jobs.push_back(std::move(job));
  }
  if (auto too_many = check_task_count(capacity, jobs)) return too_many;
  const auto got = hdrf_fill_tasks(capacity, queues, jobs);
  if (!got) return fmt::format("hdrf_fill_tasks failed: {}", got.error().message);
  std::string why;
  for (const auto& [r, per_node] : expected.members()) {
    for (const auto& [name, amount] : per_node.members()) {
      // A node's amount is the sum over jobs in its subtree.
      const std::string path = path_of(name);
      std::int64_t sum = 0;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const std::string& p = jobs[j].queue;
        if (p == path || p.starts_with(path + "/")) sum += got->tasks[j];
      }
      if (sum != amount.integer()) why += fmt::format("{}[{}] = {}; ", r, name, sum);
    }
  }
  if (!why.empty()) return why;
  return std::nullopt;
}

// Reports a kind whose runner returns an outcome.
template <outcome (*run)(const vector_value&)>
void report(const vector_case& c, reporter& out) {
  run_guarded(out, c.name, [&] {
    if (const outcome failed = run(c.json); failed) {
      out.fail(c.name, *failed);
    } else {
      out.pass(c.name, c.kind);
    }
  });
}

void report_weighted_split(const vector_case& c, reporter& out) {
  run_guarded(out, c.name, [&] {
    std::string detail;
    if (const outcome failed = run_weighted_split(c.json, detail); failed) {
      out.fail(c.name, *failed);
    } else {
      out.pass(c.name, fmt::format("{}: {}", c.kind, detail));
    }
  });
}

using case_runner = void (*)(const vector_case&, reporter&);

struct kind_runner {
  std::string_view kind;
  case_runner run;
};

// Every kind of the drf_capacity family that hetsched supports, with its runner.
constexpr std::array supported_kinds{
    kind_runner{"drf_progressive_filling", &report<run_progressive_filling>},
    kind_runner{"weighted_indivisible_split", &report_weighted_split},
    kind_runner{"drf_sorter_steps", &report<run_sorter_steps>},
    kind_runner{"hdrf_allocation", &report<run_hdrf>},
    kind_runner{"hierarchical_weighted_steady_state", &report<run_hierarchical_steady_state>},
    kind_runner{"kueue_quota_accounting", &run_kueue_case},
    kind_runner{"kueue_max_admissible", &run_kueue_case},
    kind_runner{"kueue_drs", &run_kueue_case},
    kind_runner{"kueue_classical_preemption", &run_kueue_case},
    kind_runner{"kueue_fair_preemption", &run_kueue_case},
    kind_runner{"kueue_fair_admission", &run_kueue_case},
    kind_runner{"yarn_pcpp", &run_yarn_case},
    kind_runner{"yarn_user_limit", &run_yarn_case},
};

case_runner runner_of(std::string_view kind) {
  for (const auto& k : supported_kinds)
    if (k.kind == kind) return k.run;
  return nullptr;
}

// The file's "required_kinds" (issue 3 §5: every one is supported): a required kind without a
// runner, or a malformed list, is a failure of the pseudo-case "required_kinds". A required kind
// with no case in the file is noted, so that a reader sees it was not exercised here.
void check_required_kinds(const vector_value& doc, const std::vector<vector_case>& cases,
                          reporter& out) {
  const vector_value required = doc["required_kinds"];
  if (!required.present()) return;
  if (!required.json().is_array()) {
    out.fail("required_kinds", "\"required_kinds\" is not an array");
    return;
  }
  std::vector<std::string> unsupported;
  for (const vector_value& k : required.items()) {
    if (!k.json().is_string()) {
      out.fail("required_kinds",
               fmt::format("entry {} is not a string", jsonio::to_string(k.json())));
      continue;
    }
    const std::string kind = k.string();
    if (runner_of(kind) == nullptr) {
      unsupported.push_back(kind);
      continue;
    }
    const auto count = std::count_if(cases.begin(), cases.end(),
                                     [&](const vector_case& c) { return c.kind == kind; });
    if (count == 0)
      out.note(fmt::format("required kind {} is supported but has no case in this file", kind));
  }
  if (!unsupported.empty()) {
    out.fail("required_kinds",
             fmt::format("required kind(s) with no runner in hetsched-conform: {}",
                         fmt::join(unsupported, ", ")));
  } else {
    out.note(fmt::format("all {} required kinds are supported", required.items().size()));
  }
}

}  // namespace

void run_drf_capacity(const vector_value& doc, reporter& out) {
  const auto cases = list_cases(doc, "cases", "drf_capacity", out);
  check_required_kinds(doc, cases, out);
  for (const auto& c : cases) {
    if (const case_runner run = runner_of(c.kind); run != nullptr) {
      run(c, out);
    } else {
      // DESIGN.md §6: an unsupported kind is skipped, never passed (and not a failure unless the
      // file requires it, which check_required_kinds reports).
      out.skip(c.name, fmt::format("kind '{}' is not supported", c.kind));
    }
  }
}

}  // namespace hetsched::conform
