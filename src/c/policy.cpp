// SPDX-License-Identifier: MIT
// C API: any policy of the registry by name (make_policy, policies/registry.hpp), driven through
// the policy contract (policies/policy.hpp) over an hs_state_t. Decisions are converted once by
// append_decision (decision.cpp) and keep the model decision for hs_state_apply and
// hs_policy_commit.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/c/policy.h>
#include <hetsched/policies/registry.hpp>

#include "c_internal.hpp"
#include "handles.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;

struct hs_policy {
  /// The cluster it was made for; placements may refer to it, so it outlives `inst`.
  std::shared_ptr<const hetsched::cluster> description;
  hetsched::cluster_topology topology;
  hetsched::policy_spec spec;
  hetsched::policy_instance inst;
  std::string ordering;   ///< inst.order->name(), NUL-terminated for hs_policy_describe.
  std::string placement;  ///< inst.place->name().
};

namespace {

/// Fails unless `state` is a state of the policy's cluster.
hs_status check_state(const hs_policy& p, const hs_state& state) {
  const auto& c = state.state.shared_cluster();
  if (c.get() == p.description.get() || *c == *p.description) return HS_OK;
  return fail(
      HS_INVALID_ARGUMENT,
      fmt::format("policy '{}': the state is of another cluster than the policy's", p.spec.text));
}

/// Fails unless `state` knows job `id`; sets `out` to it.
hs_status find_job(const hs_state& state, std::uint64_t id, hetsched::job_id& out) {
  const auto job = hetsched::capi::to_job_id(id);
  if (!job || state.state.find_job(*job) == nullptr) {
    return fail(HS_NOT_FOUND, fmt::format("job {}: unknown job", id));
  }
  out = *job;
  return HS_OK;
}

/// Wraps model decision `d`, made by `policy` over `state`, into a new C decision handle.
hs_decision_t* wrap(const hs_policy& policy, const hs_state& state, hetsched::decision d,
                    hs_decision_kind kind) {
  auto out = std::make_unique<hs_decision>();
  out->kind = kind;
  out->owner = &policy;
  hetsched::capi::append_decision(state.state, d, *out);
  out->model = std::move(d);
  return hetsched::capi::adopt(std::move(out));
}

/// place or what_if (`what_if`) of `job` as a new decision in *out.
hs_status decide(hs_policy* policy, const hs_state* state, std::uint64_t job, hs_decision_t** out,
                 bool what_if) {
  HS_CAPI_REQUIRE_HANDLE(policy);
  HS_CAPI_REQUIRE_HANDLE(state);
  HS_CAPI_REQUIRE(out);
  if (auto s = check_state(*policy, *state); s != HS_OK) return s;
  hetsched::job_id id;
  if (auto s = find_job(*state, job, id); s != HS_OK) return s;
  auto& place = *policy->inst.place;
  auto d = what_if ? place.what_if(state->state, id) : place.place(state->state, id);
  if (!d) return fail(d.error());
  *out = wrap(*policy, *state, std::move(*d),
              what_if ? hs_decision_kind::policy_what_if : hs_decision_kind::policy);
  return HS_OK;
}

/// Converts bind records `binds` (hs_bind_t as hs_decision_bind_at returns them) into the
/// model's bindings of `c`, one per job in order of first appearance, its tasks in record order.
/// Fails naming the record (binds[i]) for a struct too small, an id out of range, an unknown
/// node or GPU index, or gpus NULL with gpu_count > 0; whether the shares fit is apply()'s check.
hs_status to_bindings(const hetsched::cluster& c, const hs_bind_t* binds, std::size_t count,
                      std::vector<hetsched::binding>& out) {
  using namespace hetsched;
  for (std::size_t i = 0; i < count; ++i) {
    hs_bind_t b{};
    if (!capi::read_struct(binds[i], b, offsetof(hs_bind_t, milli_per_gpu))) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("binds[{}].struct_size is smaller than the first hs_bind_t", i));
    }
    const auto job = capi::to_job_id(b.job_id);
    if (!job)
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("binds[{}]: job id {} is out of range", i, b.job_id));
    const node_id node(b.node);
    if (!c.contains(node)) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("binds[{}]: job {} task {}: node {} is not a node "
                              "of the cluster ({} nodes)",
                              i, b.job_id, b.task, b.node, c.node_count()));
    }
    if (b.gpu_count > 0 && b.gpus == nullptr) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("binds[{}]: gpus is NULL with gpu_count {}", i, b.gpu_count));
    }
    task_placement t{task_id(b.task), node, {}};
    const std::int64_t milli = b.milli_per_gpu == 0 ? 1000 : b.milli_per_gpu;
    for (std::uint32_t k = 0; k < b.gpu_count; ++k) {
      const auto dev = c.device_at(node, b.gpus[k]);
      if (!dev) {
        return fail(HS_INVALID_ARGUMENT,
                    fmt::format("binds[{}]: job {} task {}: gpus[{}] = {} is not a GPU of node "
                                "'{}' ({} GPUs)",
                                i, b.job_id, b.task, k, b.gpus[k], c.node(node).name,
                                c.devices(node).size()));
      }
      t.devices.push_back(device_share{*dev, milli, b.gpu_memory_mib});
    }
    auto it = std::find_if(out.begin(), out.end(), [&](const binding& x) { return x.job == *job; });
    if (it == out.end()) it = out.insert(out.end(), binding{*job, {}});
    it->tasks.push_back(std::move(t));
  }
  return HS_OK;
}

/// A registry entry's strings, NUL-terminated.
struct entry_strings {
  std::string name;
  std::string summary;
};

template <typename Entry>
std::vector<entry_strings> copy_entries(std::span<const Entry> entries) {
  std::vector<entry_strings> out;
  for (const Entry& e : entries) out.push_back({std::string(e.name), std::string(e.summary)});
  return out;
}

const std::vector<entry_strings>& ordering_entries() {
  static const std::vector<entry_strings> table = copy_entries(hetsched::orderings());
  return table;
}

const std::vector<entry_strings>& placement_entries() {
  static const std::vector<entry_strings> table = copy_entries(hetsched::placements());
  return table;
}

hs_status entry_at(const std::vector<entry_strings>& table, std::size_t index, const char* what,
                   hs_policy_entry_t* out) {
  HS_CAPI_REQUIRE(out);
  if (index >= table.size()) {
    return fail(HS_OUT_OF_RANGE, fmt::format("the registry has {} {}; index {} is out of range",
                                             table.size(), what, index));
  }
  hs_policy_entry_t v{};
  v.name = table[index].name.c_str();
  v.summary = table[index].summary.c_str();
  return hetsched::capi::write_out(out, v, "hs_policy_entry_t");
}

}  // namespace

extern "C" {

HS_API hs_status hs_policy_new(const char* spec, const hs_cluster_t* cluster,
                               const hs_policy_param_t* params, size_t count, hs_policy_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE(spec);
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(out);
    if (count > 0 && params == nullptr) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("params is NULL with count {}", count));
    }
    auto parsed = hetsched::parse_policy_spec(spec);
    if (!parsed) return fail(parsed.error());
    for (std::size_t i = 0; i < count; ++i) {
      if (params[i].key == nullptr || params[i].value == nullptr) {
        return fail(HS_INVALID_ARGUMENT, fmt::format("policy '{}': params[{}].{} is NULL", spec, i,
                                                     params[i].key == nullptr ? "key" : "value"));
      }
      parsed->placement_params[params[i].key] = params[i].value;
    }
    auto model = hetsched::capi::model_of(*cluster);
    if (!model) return fail(model.error());
    auto p = std::make_unique<hs_policy>();
    p->description = std::move(*model);
    p->topology = cluster->topology;
    p->spec = std::move(*parsed);
    auto inst = hetsched::make_policy(p->spec, *p->description, &p->topology);
    if (!inst) return fail(inst.error());
    p->inst = std::move(*inst);
    p->ordering = std::string(p->inst.order->name());
    p->placement = std::string(p->inst.place->name());
    *out = hetsched::capi::adopt(std::move(p));
    return HS_OK;
  });
}

HS_API void hs_policy_free(hs_policy_t* policy) {
  hetsched::capi::destroy_handle(policy, __func__, "policy");
}

HS_API hs_status hs_policy_describe(const hs_policy_t* policy, hs_policy_info_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(policy);
    HS_CAPI_REQUIRE(out);
    const auto& place = *policy->inst.place;
    hs_policy_info_t v{};
    v.spec = policy->spec.text.c_str();
    v.ordering = policy->ordering.c_str();
    v.placement = policy->placement.c_str();
    v.oversubscribes = place.oversubscribes() ? 1 : 0;
    v.per_tenant = place.per_tenant() ? 1 : 0;
    v.preempts = place.preempts() ? 1 : 0;
    v.migrates = place.migrates() ? 1 : 0;
    return hetsched::capi::write_out(out, v, "hs_policy_info_t");
  });
}

HS_API hs_status hs_policy_place(hs_policy_t* policy, const hs_state_t* state, uint64_t job_id,
                                 hs_decision_t** out) {
  return guard(__func__, [&]() { return decide(policy, state, job_id, out, false); });
}

HS_API hs_status hs_policy_what_if(hs_policy_t* policy, const hs_state_t* state, uint64_t job_id,
                                   hs_decision_t** out) {
  return guard(__func__, [&]() { return decide(policy, state, job_id, out, true); });
}

HS_API hs_status hs_policy_plan_migrations(hs_policy_t* policy, const hs_state_t* state,
                                           hs_decision_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(policy);
    HS_CAPI_REQUIRE_HANDLE(state);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_state(*policy, *state); s != HS_OK) return s;
    auto d = policy->inst.place->plan_migrations(state->state);
    if (!d) return fail(d.error());
    *out = wrap(*policy, *state, std::move(*d), hs_decision_kind::policy);
    return HS_OK;
  });
}

HS_API hs_status hs_policy_commit(hs_policy_t* policy, const hs_state_t* state,
                                  const hs_decision_t* decision) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(policy);
    HS_CAPI_REQUIRE_HANDLE(state);
    HS_CAPI_REQUIRE_HANDLE(decision);
    if (auto s = check_state(*policy, *state); s != HS_OK) return s;
    if (decision->kind == hs_decision_kind::policy_what_if) {
      return fail(HS_INVALID_ARGUMENT,
                  "a decision of hs_policy_what_if cannot be committed; use hs_policy_place");
    }
    if (decision->kind != hs_decision_kind::policy || decision->owner != policy ||
        !decision->model) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("policy '{}': decision was not made by hs_policy_place or "
                              "hs_policy_plan_migrations on this policy",
                              policy->spec.text));
    }
    policy->inst.place->commit(state->state, *decision->model);
    return HS_OK;
  });
}

HS_API hs_status hs_policy_release(hs_policy_t* policy, const hs_state_t* state, uint64_t job_id) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(policy);
    HS_CAPI_REQUIRE_HANDLE(state);
    if (auto s = check_state(*policy, *state); s != HS_OK) return s;
    hetsched::job_id id;
    if (auto s = find_job(*state, job_id, id); s != HS_OK) return s;
    policy->inst.place->release(state->state, id);
    return HS_OK;
  });
}

HS_API hs_status hs_policy_rebuild(hs_policy_t* policy, const hs_state_t* state) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(policy);
    HS_CAPI_REQUIRE_HANDLE(state);
    if (auto s = check_state(*policy, *state); s != HS_OK) return s;
    policy->inst.place->rebuild(state->state);
    return HS_OK;
  });
}

HS_API hs_status hs_policy_replay(hs_policy_t* policy, hs_state_t* state, const hs_bind_t* binds,
                                  size_t count) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(policy);
    HS_CAPI_REQUIRE_HANDLE(state);
    if (count > 0 && binds == nullptr) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("binds is NULL with count {}", count));
    }
    if (auto s = check_state(*policy, *state); s != HS_OK) return s;
    std::vector<hetsched::binding> records;
    if (auto s = to_bindings(state->state.cluster(), binds, count, records); s != HS_OK) return s;
    auto done = hetsched::replay_bindings(state->state, *policy->inst.place, records);
    if (!done) return fail(done.error());
    return HS_OK;
  });
}

HS_API hs_status hs_policy_set_time(hs_policy_t* policy, int64_t now_ms) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(policy);
    policy->inst.place->set_time(now_ms);
    return HS_OK;
  });
}

HS_API size_t hs_policy_ordering_count(void) { return hetsched::orderings().size(); }

HS_API hs_status hs_policy_ordering_at(size_t index, hs_policy_entry_t* out) {
  return guard(__func__, [&]() { return entry_at(ordering_entries(), index, "orderings", out); });
}

HS_API size_t hs_policy_placement_count(void) { return hetsched::placements().size(); }

HS_API hs_status hs_policy_placement_at(size_t index, hs_policy_entry_t* out) {
  return guard(__func__, [&]() { return entry_at(placement_entries(), index, "placements", out); });
}

}  // extern "C"
