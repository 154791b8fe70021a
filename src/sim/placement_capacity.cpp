// SPDX-License-Identifier: MIT
// capacity_placement, parse_quota_list() and make_quota_placement().
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include <hetsched/sim/quota_placement.hpp>

namespace hetsched::sim {
namespace {

std::int64_t job_milli(const job_spec& spec) {
  std::int64_t m = 0;
  for (const task_role& r : spec.roles) m += std::int64_t{r.task_count} * r.gpu.total_milli_gpu();
  return m;
}

result<std::int64_t> parse_int(std::string_view placement, std::string_view key,
                               std::string_view v) {
  std::int64_t x = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size())
    return make_error(errc::invalid_argument, "{}: parameter {}: '{}' is not an integer", placement,
                      key, v);
  return x;
}

result<bool> parse_flag(std::string_view placement, std::string_view key, std::string_view v) {
  if (v == "0" || v == "false") return false;
  if (v == "1" || v == "true") return true;
  return make_error(errc::invalid_argument, "{}: parameter {}: '{}' is not 0 or 1", placement, key,
                    v);
}

}  // namespace

result<std::vector<std::uint32_t>> parse_quota_list(std::string_view text) {
  std::vector<std::uint32_t> out;
  while (!text.empty()) {
    const std::size_t slash = std::min(text.find('/'), text.size());
    const std::string_view item = text.substr(0, slash);
    std::uint32_t g = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), g);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      return make_error(errc::invalid_argument, "quota: '{}' is not a number of GPUs", item);
    out.push_back(g);
    text = slash < text.size() ? text.substr(slash + 1) : std::string_view{};
  }
  return out;
}

capacity_placement::capacity_placement(const cluster& description, const cluster_topology* topology,
                                       capacity_params params)
    : params_(std::move(params)),
      packer_(topology != nullptr ? indexed_packer(description, *topology, {params_.fit})
                                  : indexed_packer(description, {params_.fit})) {
  for (const std::uint32_t g : params_.quota) total_nominal_ += std::int64_t{g} * 1000;
}

std::int64_t capacity_placement::nominal(std::uint32_t t) const noexcept {
  return t < params_.quota.size() ? std::int64_t{params_.quota[t]} * 1000 : 0;
}

result<decision> capacity_placement::place(const cluster_state& state, job_id job) {
  const job_record* rec = state.find_job(job);
  if (rec == nullptr) return make_error(errc::not_found, "capacity: unknown job {}", job);
  const std::uint32_t t = rec->spec.tenant.value();
  const std::int64_t need = job_milli(rec->spec);
  const std::int64_t used = usage(t);
  bool admit = used + need <= nominal(t);
  if (!admit && params_.borrow) {
    const bool under_limit =
        params_.borrow_limit < 0 || used + need <= nominal(t) + params_.borrow_limit * 1000;
    admit = under_limit && total_usage_ + need <= total_nominal_;
  }
  if (!admit) {
    decision d;
    d.deferrals.push_back({job, defer_reason::quota_exceeded,
                           fmt::format("tenant {} uses {} of {} milli-GPU; job needs {}", t, used,
                                       nominal(t), need)});
    return d;
  }
  return packer_.place(state, job);
}

void capacity_placement::commit(const cluster_state& after, const decision& d) {
  packer_.commit(after, d);
  for (const binding& b : d.binds) {
    const job_record* rec = after.find_job(b.job);
    if (rec == nullptr) continue;
    const std::uint32_t t = rec->spec.tenant.value();
    const std::int64_t m = job_milli(rec->spec);
    if (usage_.size() <= t) usage_.resize(t + 1, 0);
    usage_[t] += m;
    total_usage_ += m;
    running_[b.job.value()] = {t, m};
  }
}

void capacity_placement::release(const cluster_state& after, job_id job) {
  packer_.release(after, job);
  const auto it = running_.find(job.value());
  if (it == running_.end()) return;
  usage_[it->second.first] -= it->second.second;
  total_usage_ -= it->second.second;
  running_.erase(it);
}

void capacity_placement::rebuild(const cluster_state& state) { packer_.rebuild(state); }

result<std::unique_ptr<placement>> make_quota_placement(std::string_view name,
                                                        const plugin_params& params,
                                                        const cluster& description,
                                                        const cluster_topology* topology) {
  if (name == "capacity") {
    capacity_params p;
    for (const auto& [k, v] : params) {
      if (k == "quota") {
        auto q = parse_quota_list(v);
        if (!q) return make_error(errc::invalid_argument, "capacity: {}", q.error().message);
        p.quota = std::move(*q);
      } else if (k == "borrow") {
        auto f = parse_flag(name, k, v);
        if (!f) return std::move(f).error();
        p.borrow = *f;
      } else if (k == "fit" && (v == "best" || v == "worst")) {
        p.fit = v == "best" ? node_fit::best : node_fit::worst;
      } else if (k == "borrow_limit") {
        auto x = parse_int(name, k, v);
        if (!x) return std::move(x).error();
        p.borrow_limit = *x;
      } else {
        return make_error(
            errc::invalid_argument,
            "capacity: unknown parameter '{}' or bad value (quota, borrow, borrow_limit, fit)", k);
      }
    }
    if (p.quota.empty()) {
      // No table: the whole cluster is one queue's nominal quota.
      p.quota.push_back(static_cast<std::uint32_t>(description.device_count()));
    }
    return std::unique_ptr<placement>(std::make_unique<placement_adapter<capacity_placement>>(
        capacity_placement(description, topology, std::move(p)), "capacity",
        placement_traits{.per_tenant = true}));
  }
  if (name == "hived") {
    hived_placement_params p;
    for (const auto& [k, v] : params) {
      if (k == "quota") {
        auto q = parse_quota_list(v);
        if (!q) return make_error(errc::invalid_argument, "hived: {}", q.error().message);
        p.quota = std::move(*q);
      } else if (k == "guaranteed_min_priority") {
        auto x = parse_int(name, k, v);
        if (!x) return std::move(x).error();
        p.guaranteed_min_priority = static_cast<std::int32_t>(*x);
      } else if (k == "top") {
        if (v == "rack") {
          p.top = hived::top_cell_level::rack;
        } else if (v == "node") {
          p.top = hived::top_cell_level::node;
        } else {
          return make_error(errc::invalid_argument,
                            "hived: parameter top: '{}' is not rack or node", v);
        }
      } else {
        return make_error(errc::invalid_argument,
                          "hived: unknown parameter '{}' (quota, guaranteed_min_priority, top)", k);
      }
    }
    auto h = hived_placement::create(description, topology, p);
    if (!h) return std::move(h).error();
    return std::unique_ptr<placement>(std::make_unique<placement_adapter<hived_placement>>(
        std::move(*h), "hived", placement_traits{.per_tenant = true}));
  }
  return std::unique_ptr<placement>{};
}

}  // namespace hetsched::sim
