// SPDX-License-Identifier: MIT
// DRF: exact shares, weights, fairness vectors and progressive filling (tasks and divisible).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <hetsched/policies/drf.hpp>

namespace hetsched {
namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// Checked exact rationals over __int128: every operation reduces and sets `overflow` instead of
// wrapping; the caller turns the sticky flag into out_of_range.
struct q128 {
  i128 num = 0;
  i128 den = 1;
};

i128 gcd128(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    const i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

struct exact {
  bool overflow = false;

  // Not __builtin_mul_overflow: on __int128 clang lowers it to __muloti4, absent from libgcc.
  i128 mul(i128 a, i128 b) {
    if (a == 0 || b == 0) return 0;
    const u128 ua = a < 0 ? u128{0} - static_cast<u128>(a) : static_cast<u128>(a);
    const u128 ub = b < 0 ? u128{0} - static_cast<u128>(b) : static_cast<u128>(b);
    const u128 limit = ~u128{0} >> 1;
    if (ua > limit / ub) {
      overflow = true;
      return 0;
    }
    const auto r = static_cast<i128>(ua * ub);
    return (a < 0) != (b < 0) ? -r : r;
  }
  i128 add_int(i128 a, i128 b) {
    i128 r = 0;
    if (__builtin_add_overflow(a, b, &r)) {
      overflow = true;
      return 0;
    }
    return r;
  }
  q128 make(i128 n, i128 d) {
    if (d == 0) {
      overflow = true;
      return {};
    }
    if (d < 0) {
      n = -n;
      d = -d;
    }
    const i128 g = gcd128(n, d);
    if (g > 1) {
      n /= g;
      d /= g;
    }
    return {n, d};
  }
  q128 add(q128 a, q128 b) {
    const i128 g = gcd128(a.den, b.den);
    const i128 bd = b.den / g;
    return make(add_int(mul(a.num, bd), mul(b.num, a.den / g)), mul(a.den, bd));
  }
  q128 sub(q128 a, q128 b) { return add(a, {-b.num, b.den}); }
  q128 mul(q128 a, q128 b) {
    const i128 g1 = gcd128(a.num, b.den);
    const i128 g2 = gcd128(b.num, a.den);
    const i128 d1 = g1 == 0 ? 1 : g1;
    const i128 d2 = g2 == 0 ? 1 : g2;
    return make(mul(a.num / d1, b.num / d2), mul(a.den / d2, b.den / d1));
  }
  q128 div(q128 a, q128 b) {
    if (b.num == 0) {
      overflow = true;
      return {};
    }
    return mul(a, q128{b.den, b.num});
  }
  int cmp(q128 a, q128 b) {
    const i128 l = mul(a.num, b.den);
    const i128 r = mul(b.num, a.den);
    return l < r ? -1 : (l > r ? 1 : 0);
  }
};

std::int64_t narrow(i128 v, bool& overflow) {
  if (v > std::numeric_limits<std::int64_t>::max() ||
      v < std::numeric_limits<std::int64_t>::min()) {
    overflow = true;
    return 0;
  }
  return static_cast<std::int64_t>(v);
}

result<void> check_vector(const drf_vector& v, std::string_view what) {
  for (const auto& [name, amount] : v) {
    if (amount < 0)
      return make_error(errc::invalid_argument, "{}: negative amount {} of '{}'", what, amount,
                        name);
    if (amount > max_resource_amount)
      return make_error(errc::out_of_range, "{}: amount {} of '{}' exceeds {}", what, amount, name,
                        max_resource_amount);
  }
  return ok();
}

std::int64_t amount_of(const drf_vector& v, std::string_view name) {
  const auto it = v.find(name);
  return it == v.end() ? 0 : it->second;
}

// The dense problem shared by both fillings: resources are the union of capacity and demands.
struct dense_problem {
  std::vector<std::string> names;
  std::vector<std::int64_t> cap;
  std::vector<bool> fair;                         // counts for shares (not excluded, capacity > 0)
  std::vector<std::vector<std::int64_t>> demand;  // [user][resource]
  std::vector<std::vector<drf_weight>> weight;    // [user][resource]
};

result<dense_problem> make_dense(const drf_vector& capacity, std::span<const drf_user> users,
                                 const drf_fill_options& options) {
  HETSCHED_TRY(check_vector(capacity, "capacity"));
  boost::container::flat_set<std::string, std::less<>> names;
  for (const auto& [name, amount] : capacity) names.insert(name);
  std::set<std::string_view> seen;
  for (const auto& u : users) {
    if (!seen.insert(u.name).second)
      return make_error(errc::invalid_argument, "user '{}' is listed twice", u.name);
    HETSCHED_TRY(check_vector(u.task_demand, fmt::format("user '{}'", u.name)));
    if (u.max_tasks && *u.max_tasks < 0)
      return make_error(errc::invalid_argument, "user '{}': negative max_tasks {}", u.name,
                        *u.max_tasks);
    if (u.max_tasks && *u.max_tasks > max_resource_amount)
      return make_error(errc::out_of_range, "user '{}': max_tasks {} exceeds {}", u.name,
                        *u.max_tasks, max_resource_amount);
    for (const auto& [name, amount] : u.task_demand) names.insert(name);
  }
  dense_problem p;
  p.names.assign(names.begin(), names.end());
  for (const auto& name : p.names) {
    p.cap.push_back(amount_of(capacity, name));
    p.fair.push_back(p.cap.back() > 0 && !drf_is_excluded(options.excluded, name));
  }
  for (const auto& u : users) {
    auto scalar = make_drf_weight(u.weight, u.name);
    if (!scalar) return std::move(scalar).error();
    std::vector<std::int64_t> d;
    std::vector<drf_weight> w;
    for (const auto& [name, value] : u.resource_weights) {
      auto rw = make_drf_weight(value, fmt::format("{}' resource '{}", u.name, name));
      if (!rw) return std::move(rw).error();
    }
    bool any = false;
    for (const auto& name : p.names) {
      d.push_back(amount_of(u.task_demand, name));
      any = any || d.back() > 0;
      const auto it = u.resource_weights.find(name);
      w.push_back(it == u.resource_weights.end() ? *scalar : *make_drf_weight(it->second, u.name));
    }
    if (!any && !u.max_tasks)
      return make_error(errc::invalid_argument,
                        "user '{}': an all-zero task demand needs max_tasks", u.name);
    p.demand.push_back(std::move(d));
    p.weight.push_back(std::move(w));
  }
  return p;
}

}  // namespace

std::string drf_gpu_resource(gpu_type type, gpu_grouping grouping) {
  if (grouping == gpu_grouping::fungible || type.empty()) return "gpu";
  return fmt::format("gpu/{}", type.name());
}

drf_vector to_drf_vector(const resource_vector& v, gpu_type type, gpu_grouping grouping) {
  drf_vector out;
  for (const auto& [name, amount] : v.extended)
    if (amount != 0) out.insert_or_assign(name, amount);
  const auto put = [&](std::string name, std::int64_t amount) {
    if (amount != 0) out.insert_or_assign(std::move(name), amount);
  };
  put(drf_gpu_resource(type, grouping), v.milli_gpu);
  put("cpu", v.milli_cpu);
  put("memory", v.memory_mib);
  put("gpu_memory", v.gpu_memory_mib);
  return out;
}

bool drf_is_excluded(const drf_exclusions& excluded, std::string_view name) noexcept {
  if (excluded.empty()) return false;
  if (excluded.find(name) != excluded.end()) return true;
  const auto slash = name.find('/');
  return slash != std::string_view::npos && name.substr(0, slash) == "gpu" &&
         excluded.find(std::string_view("gpu")) != excluded.end();
}

result<drf_weight> make_drf_weight(double w, std::string_view client) {
  if (std::isnan(w) || std::isinf(w) || w <= 0.0)
    return make_error(errc::invalid_argument, "client '{}': weight {} is not positive and finite",
                      client, w);
  if (w < 1e-6 || w > 1e6)
    return make_error(errc::out_of_range, "client '{}': weight {} is outside [1e-6, 1e6]", client,
                      w);
  // Continued-fraction convergents of w, kept while both terms stay <= 2^20.
  std::int64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;
  double x = w;
  drf_weight best{1, 1};
  double best_err = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 64; ++i) {
    const double a = std::floor(x);
    if (a > static_cast<double>(max_drf_weight_term)) break;
    const auto ai = static_cast<std::int64_t>(a);
    const std::int64_t p2 = ai * p1 + p0;
    const std::int64_t q2 = ai * q1 + q0;
    if (p2 > max_drf_weight_term || q2 > max_drf_weight_term) break;
    const double err = std::fabs(static_cast<double>(p2) / static_cast<double>(q2) - w);
    if (p2 > 0 && err < best_err) {
      best = {p2, q2};
      best_err = err;
    }
    p0 = p1;
    q0 = q1;
    p1 = p2;
    q1 = q2;
    if (x - a <= 0.0) break;
    x = 1.0 / (x - a);
  }
  return best;
}

double drf_share::to_double() const noexcept {
  return static_cast<double>(num) / static_cast<double>(den);
}

bool operator==(const drf_share& a, const drf_share& b) noexcept { return (a <=> b) == 0; }

std::strong_ordering operator<=>(const drf_share& a, const drf_share& b) noexcept {
  const i128 l = static_cast<i128>(a.num) * b.den;
  const i128 r = static_cast<i128>(b.num) * a.den;
  return l < r ? std::strong_ordering::less
               : (l > r ? std::strong_ordering::greater : std::strong_ordering::equal);
}

drf_share weighted_dominant_share(std::span<const std::int64_t> usage,
                                  std::span<const std::int64_t> capacity,
                                  drf_weight weight) noexcept {
  HETSCHED_ASSERT(usage.size() == capacity.size(), "usage and capacity of different sizes");
  drf_share best;
  for (std::size_t r = 0; r < usage.size(); ++r) {
    if (capacity[r] <= 0) continue;
    const drf_share s{usage[r] * weight.den, capacity[r] * weight.num};
    if (s > best) best = s;
  }
  return best;
}

double drf_rational::to_double() const noexcept {
  return static_cast<double>(num) / static_cast<double>(den);
}

result<drf_dominant> dominant_share(const drf_vector& usage, const drf_vector& capacity,
                                    const drf_client_weight& weight,
                                    const drf_exclusions& excluded) {
  HETSCHED_TRY(check_vector(usage, "usage"));
  HETSCHED_TRY(check_vector(capacity, "capacity"));
  const auto check_w = [](const drf_weight& w) {
    return w.num >= 1 && w.den >= 1 && w.num <= max_drf_weight_term && w.den <= max_drf_weight_term;
  };
  if (!check_w(weight.scalar))
    return make_error(errc::invalid_argument, "scalar weight {}/{} is outside 1..2^20",
                      weight.scalar.num, weight.scalar.den);
  for (const auto& [name, w] : weight.per_resource)
    if (!check_w(w))
      return make_error(errc::invalid_argument, "weight {}/{} of '{}' is outside 1..2^20", w.num,
                        w.den, name);
  drf_dominant best;
  for (const auto& [name, u] : usage) {
    if (u == 0 || drf_is_excluded(excluded, name)) continue;
    const std::int64_t cap = amount_of(capacity, name);
    const auto it = weight.per_resource.find(name);
    const drf_weight w = it == weight.per_resource.end() ? weight.scalar : it->second;
    const drf_share s = weighted_dominant_share(std::span(&u, 1), std::span(&cap, 1), w);
    if (s > best.share) best = {s, name};
  }
  return best;
}

result<drf_task_allocation> drf_fill_tasks(const drf_vector& capacity,
                                           std::span<const drf_user> users,
                                           const drf_fill_options& options) {
  auto problem = make_dense(capacity, users, options);
  if (!problem) return std::move(problem).error();
  const dense_problem& p = *problem;
  const std::size_t n = users.size();
  const std::size_t k = p.names.size();
  std::vector<std::int64_t> used(k, 0);
  drf_task_allocation out;
  out.tasks.assign(n, 0);
  // The weighted dominant share of user i holding `tasks` tasks; tasks * demand <= capacity.
  const auto share_of = [&](std::size_t i, std::int64_t tasks) {
    drf_share best;
    for (std::size_t r = 0; r < k; ++r) {
      if (!p.fair[r] || p.demand[i][r] == 0) continue;
      const drf_share s{tasks * p.demand[i][r] * p.weight[i][r].den, p.cap[r] * p.weight[i][r].num};
      if (s > best) best = s;
    }
    return best;
  };
  using entry = std::tuple<drf_share, std::int64_t, std::size_t>;
  std::set<entry> queue;
  for (std::size_t i = 0; i < n; ++i) queue.emplace(drf_share{}, 0, i);
  while (!queue.empty()) {
    const auto [s, tasks, i] = *queue.begin();
    queue.erase(queue.begin());
    if (users[i].max_tasks && tasks >= *users[i].max_tasks) continue;
    bool fits = true;
    for (std::size_t r = 0; r < k && fits; ++r) fits = used[r] + p.demand[i][r] <= p.cap[r];
    if (!fits) continue;
    for (std::size_t r = 0; r < k; ++r) used[r] += p.demand[i][r];
    out.tasks[i] = tasks + 1;
    out.order.push_back(i);
    queue.emplace(share_of(i, tasks + 1), tasks + 1, i);
  }
  for (std::size_t i = 0; i < n; ++i) {
    drf_vector alloc;
    for (std::size_t r = 0; r < k; ++r)
      if (p.demand[i][r] * out.tasks[i] != 0)
        alloc.insert_or_assign(p.names[r], p.demand[i][r] * out.tasks[i]);
    drf_client_weight w;  // per_resource covers every resource, so the scalar is unused
    for (std::size_t r = 0; r < k; ++r) w.per_resource.insert_or_assign(p.names[r], p.weight[i][r]);
    auto d = dominant_share(alloc, capacity, w, options.excluded);
    if (!d) return std::move(d).error();
    out.dominant.push_back(std::move(*d));
    out.allocation.push_back(std::move(alloc));
  }
  return out;
}

result<drf_divisible_allocation> drf_fill_divisible(const drf_vector& capacity,
                                                    std::span<const drf_user> users,
                                                    const drf_fill_options& options) {
  auto problem = make_dense(capacity, users, options);
  if (!problem) return std::move(problem).error();
  const dense_problem& p = *problem;
  const std::size_t n = users.size();
  const std::size_t k = p.names.size();
  exact ex;
  // Per-task weighted dominant share ds_i; a user at level t holds t / ds_i tasks.
  std::vector<q128> ds(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t r = 0; r < k; ++r) {
      if (!p.fair[r] || p.demand[i][r] == 0) continue;
      const q128 s = ex.make(static_cast<i128>(p.demand[i][r]) * p.weight[i][r].den,
                             static_cast<i128>(p.cap[r]) * p.weight[i][r].num);
      if (ex.cmp(s, ds[i]) > 0) ds[i] = s;
    }
    if (ds[i].num == 0 && !(users[i].max_tasks && *users[i].max_tasks == 0))
      return make_error(errc::invalid_argument, "user '{}' demands no fairness resource",
                        users[i].name);
  }
  std::vector<bool> frozen(n, false);
  std::vector<q128> tasks(n);
  std::vector<q128> frozen_used(k);
  for (std::size_t i = 0; i < n; ++i)
    if (ds[i].num == 0) frozen[i] = true;  // max_tasks == 0
  for (;;) {
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) any = any || !frozen[i];
    if (!any) break;
    // The level t at which the next resource saturates or the next user reaches its cap.
    std::optional<q128> t;
    std::vector<q128> rate(k);
    for (std::size_t r = 0; r < k; ++r) {
      for (std::size_t i = 0; i < n; ++i)
        if (!frozen[i] && p.demand[i][r] > 0)
          rate[r] = ex.add(rate[r], ex.div(q128{p.demand[i][r], 1}, ds[i]));
      if (rate[r].num == 0) continue;
      const q128 tr = ex.div(ex.sub(q128{p.cap[r], 1}, frozen_used[r]), rate[r]);
      if (!t || ex.cmp(tr, *t) < 0) t = tr;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i] || !users[i].max_tasks) continue;
      const q128 ti = ex.mul(q128{*users[i].max_tasks, 1}, ds[i]);
      if (!t || ex.cmp(ti, *t) < 0) t = ti;
    }
    if (ex.overflow) break;
    HETSCHED_ASSERT(t.has_value(), "an unfrozen user demands some resource");
    std::vector<bool> freeze(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      if (users[i].max_tasks && ex.cmp(ex.mul(q128{*users[i].max_tasks, 1}, ds[i]), *t) == 0)
        freeze[i] = true;
    }
    for (std::size_t r = 0; r < k; ++r) {
      if (rate[r].num == 0) continue;
      const q128 tr = ex.div(ex.sub(q128{p.cap[r], 1}, frozen_used[r]), rate[r]);
      if (ex.cmp(tr, *t) != 0) continue;
      for (std::size_t i = 0; i < n; ++i)
        if (!frozen[i] && p.demand[i][r] > 0) freeze[i] = true;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!freeze[i]) continue;
      frozen[i] = true;
      tasks[i] = ex.div(*t, ds[i]);
      for (std::size_t r = 0; r < k; ++r)
        if (p.demand[i][r] > 0)
          frozen_used[r] = ex.add(frozen_used[r], ex.mul(tasks[i], q128{p.demand[i][r], 1}));
    }
    if (ex.overflow) break;
  }
  drf_divisible_allocation out;
  for (std::size_t i = 0; i < n; ++i) {
    const q128 s = ex.mul(tasks[i], ds[i]);
    out.tasks.push_back({narrow(tasks[i].num, ex.overflow), narrow(tasks[i].den, ex.overflow)});
    out.dominant_share.push_back({narrow(s.num, ex.overflow), narrow(s.den, ex.overflow)});
  }
  if (ex.overflow)
    return make_error(errc::out_of_range, "divisible DRF: a fraction outgrew 128 bits");
  return out;
}

namespace {

struct hdrf_node {
  std::string name;
  bool job = false;
  std::size_t job_index = 0;
  drf_weight weight;
  std::vector<std::size_t> children;
};

struct hdrf_eval {
  std::vector<q128> vec;
  q128 share;
  bool saturated = false;
};

struct hdrf_tree {
  std::vector<hdrf_node> nodes;  // nodes[0] is the unnamed top
  std::map<std::string, std::size_t, std::less<>> queues;

  result<std::size_t> queue(std::string_view path) {
    if (const auto it = queues.find(path); it != queues.end()) return it->second;
    std::size_t parent = 0;
    std::size_t start = 0;
    for (;;) {
      const std::size_t slash = path.find('/', start);
      const std::string_view prefix = path.substr(0, slash);
      if (prefix.size() == start)
        return make_error(errc::invalid_argument, "queue '{}' has an empty segment", path);
      if (const auto it = queues.find(prefix); it != queues.end()) {
        parent = it->second;
      } else {
        nodes.push_back({std::string(prefix.substr(start)), false, 0, {}, {}});
        nodes[parent].children.push_back(nodes.size() - 1);
        parent = nodes.size() - 1;
        queues.emplace(std::string(prefix), parent);
      }
      if (slash == std::string_view::npos) return parent;
      start = slash + 1;
    }
  }
};

}  // namespace

result<hdrf_allocation> hdrf_fill_tasks(const drf_vector& capacity,
                                        std::span<const hdrf_queue> queues,
                                        std::span<const hdrf_job> jobs,
                                        const drf_fill_options& options) {
  std::vector<drf_user> users;
  for (const auto& j : jobs) {
    if (j.tasks && *j.tasks < 0)
      return make_error(errc::invalid_argument, "job '{}': negative tasks {}", j.name, *j.tasks);
    users.push_back({j.name, j.task_demand, 1.0, {}, j.tasks});
  }
  auto problem = make_dense(capacity, users, options);
  if (!problem) return std::move(problem).error();
  const dense_problem& p = *problem;
  const std::size_t k = p.names.size();
  hdrf_tree tree;
  tree.nodes.push_back({});
  std::set<std::string_view> listed;
  for (const auto& q : queues) {
    if (!listed.insert(q.path).second)
      return make_error(errc::invalid_argument, "queue '{}' is listed twice", q.path);
    auto w = make_drf_weight(q.weight, q.path);
    if (!w) return std::move(w).error();
    auto id = tree.queue(q.path);
    if (!id) return std::move(id).error();
    tree.nodes[*id].weight = *w;
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto id = tree.queue(jobs[i].queue);
    if (!id) return std::move(id).error();
    tree.nodes.push_back({jobs[i].name, true, i, {}, {}});
    tree.nodes[*id].children.push_back(tree.nodes.size() - 1);
  }
  // Siblings in tie-break order: queues before jobs, then by name.
  for (auto& n : tree.nodes) {
    std::sort(n.children.begin(), n.children.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(tree.nodes[a].job, tree.nodes[a].name) <
             std::tie(tree.nodes[b].job, tree.nodes[b].name);
    });
  }
  exact ex;
  std::vector<std::int64_t> used(k, 0);
  std::vector<std::int64_t> count(jobs.size(), 0);
  std::vector<hdrf_eval> eval(tree.nodes.size());
  const auto dominant = [&](const std::vector<q128>& v) {
    q128 best;
    for (std::size_t r = 0; r < k; ++r) {
      if (!p.fair[r] || v[r].num == 0) continue;
      const q128 s = ex.div(v[r], q128{p.cap[r], 1});
      if (ex.cmp(s, best) > 0) best = s;
    }
    return best;
  };
  const auto weighted = [&](std::size_t n) {
    const drf_weight w = tree.nodes[n].weight;
    return ex.mul(eval[n].share, q128{w.den, w.num});
  };
  // Children follow their parent in `nodes`, so a reverse sweep evaluates bottom-up.
  const auto evaluate = [&]() {
    for (std::size_t n = tree.nodes.size(); n-- > 0;) {
      const hdrf_node& node = tree.nodes[n];
      hdrf_eval& e = eval[n];
      e.vec.assign(k, q128{});
      if (node.job) {
        const std::size_t j = node.job_index;
        bool fits = !(jobs[j].tasks && count[j] >= *jobs[j].tasks);
        for (std::size_t r = 0; r < k; ++r) {
          e.vec[r] = q128{static_cast<i128>(count[j]) * p.demand[j][r], 1};
          fits = fits && used[r] + p.demand[j][r] <= p.cap[r];
        }
        e.share = dominant(e.vec);
        e.saturated = !fits;
        continue;
      }
      std::optional<q128> m;
      e.saturated = true;
      for (const std::size_t c : node.children) {
        e.saturated = e.saturated && eval[c].saturated;
        if (eval[c].saturated || eval[c].share.num == 0) continue;
        const q128 wc = weighted(c);
        if (!m || ex.cmp(wc, *m) < 0) m = wc;
      }
      for (const std::size_t c : node.children) {
        q128 scale{1, 1};
        if (!eval[c].saturated) {
          if (eval[c].share.num == 0) continue;
          const drf_weight w = tree.nodes[c].weight;
          scale = ex.div(ex.mul(*m, q128{w.num, w.den}), eval[c].share);
        }
        for (std::size_t r = 0; r < k; ++r)
          if (eval[c].vec[r].num != 0) e.vec[r] = ex.add(e.vec[r], ex.mul(eval[c].vec[r], scale));
      }
      e.share = dominant(e.vec);
    }
  };
  for (;;) {
    evaluate();
    if (ex.overflow) return make_error(errc::out_of_range, "H-DRF: a fraction outgrew 128 bits");
    std::size_t n = 0;
    while (!tree.nodes[n].job) {
      std::optional<std::size_t> best;
      for (const std::size_t c : tree.nodes[n].children) {
        if (eval[c].saturated) continue;
        if (!best || ex.cmp(weighted(c), weighted(*best)) < 0) best = c;
      }
      if (!best) break;
      n = *best;
    }
    if (!tree.nodes[n].job) break;
    const std::size_t j = tree.nodes[n].job_index;
    ++count[j];
    for (std::size_t r = 0; r < k; ++r) used[r] += p.demand[j][r];
  }
  hdrf_allocation out;
  out.tasks = count;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    drf_vector alloc;
    for (std::size_t r = 0; r < k; ++r)
      if (p.demand[j][r] * count[j] != 0)
        alloc.insert_or_assign(p.names[r], p.demand[j][r] * count[j]);
    out.allocation.push_back(std::move(alloc));
  }
  return out;
}

}  // namespace hetsched
