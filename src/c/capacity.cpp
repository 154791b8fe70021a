// SPDX-License-Identifier: MIT
// C API: capacity queues (spec builder, submit, plan, apply, release, what-if, shares).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/c/capacity.h>
#include <hetsched/policies/capacity_queue.hpp>

#include "c_internal.hpp"
#include "handles.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;
using hetsched::capi::view;

struct hs_capacity_spec {
  hetsched::capacity_tree_spec spec;

  hetsched::capacity_node_spec* find(std::string_view name) {
    for (auto& n : spec.nodes) {
      if (n.name == name) return &n;
    }
    return nullptr;
  }
};

struct hs_capacity {
  hetsched::capacity_state state;
};

namespace {

hs_status unknown_node(std::string_view name) {
  return fail(HS_NOT_FOUND, fmt::format("unknown cohort or queue '{}'", name));
}

hs_status add_node(hs_capacity_spec_t* spec, const char* name, const char* parent,
                   hetsched::capacity_node_kind kind, const hs_queue_order& order_arg) {
  const auto order = hetsched::capi::enum_value(order_arg);
  if (*name == '\0') return fail(HS_INVALID_ARGUMENT, "cohort or queue name is empty");
  if (spec->find(name) != nullptr) {
    return fail(HS_ALREADY_EXISTS, fmt::format("cohort or queue '{}' defined twice", name));
  }
  if (!view(parent).empty()) {
    const auto* p = spec->find(view(parent));
    if (p == nullptr) return unknown_node(view(parent));
    if (p->kind != hetsched::capacity_node_kind::cohort) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("'{}': parent '{}' is a queue, not a cohort", name, parent));
    }
  }
  if (order < HS_ORDER_STRICT_FIFO || order > HS_ORDER_DRF) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("queue '{}': unknown order {}", name, order));
  }
  hetsched::capacity_node_spec n;
  n.name = name;
  n.parent = view(parent);
  n.kind = kind;
  n.order = static_cast<hetsched::queue_order>(order);
  spec->spec.nodes.push_back(std::move(n));
  return HS_OK;
}

hs_status read_options(const hs_capacity_options_t* in, hetsched::capacity_cycle_options& out) {
  if (in == nullptr) return HS_OK;
  hs_capacity_options_t o;
  if (!hetsched::capi::read_struct(*in, o)) {
    return fail(HS_INVALID_ARGUMENT,
                "options->struct_size is smaller than sizeof(hs_capacity_options_t)");
  }
  out.now = o.now;
  out.fair_sharing = o.fair_sharing != 0;
  out.preemption = o.no_preemption == 0;
  out.min_runtime = o.min_runtime;
  return HS_OK;
}

hs_status read_job(const hetsched::capacity_state& state, const hs_capacity_job_t* in,
                   hetsched::pending_workload& out) {
  hs_capacity_job_t j;
  if (!hetsched::capi::read_struct(*in, j)) {
    return fail(HS_INVALID_ARGUMENT, "job->struct_size is smaller than sizeof(hs_capacity_job_t)");
  }
  const auto id = hetsched::capi::to_job_id(j.job_id);
  if (!id) return fail(HS_INVALID_ARGUMENT, fmt::format("job id {} is out of range", j.job_id));
  if (j.queue == nullptr) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("job {}: job->queue is NULL", j.job_id));
  }
  const auto queue = state.tree().find(j.queue);
  if (!queue) {
    return fail(HS_NOT_FOUND, fmt::format("job {}: unknown queue '{}'", j.job_id, j.queue));
  }
  if (j.resource_count > 0 && (j.resources == nullptr || j.amounts == nullptr)) {
    return fail(HS_INVALID_ARGUMENT,
                fmt::format("job {}: resources or amounts is NULL with resource_count {}", j.job_id,
                            j.resource_count));
  }
  if (j.flavor_count > 0 && j.flavors == nullptr) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("job {}: flavors is NULL with flavor_count {}",
                                                 j.job_id, j.flavor_count));
  }
  out.job = *id;
  out.queue = *queue;
  out.tenant = hetsched::tenant_id(j.tenant);
  out.priority = j.priority;
  out.submit_time = j.submit_time;
  out.request.clear();
  for (std::uint32_t i = 0; i < j.resource_count; ++i) {
    if (view(j.resources[i]).empty()) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("job {}: resource {} has no name", j.job_id, i));
    }
    if (!out.request.emplace(j.resources[i], j.amounts[i]).second) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("job {}: resource '{}' listed twice", j.job_id, j.resources[i]));
    }
  }
  out.flavors.clear();
  for (std::uint32_t i = 0; i < j.flavor_count; ++i) out.flavors.emplace_back(view(j.flavors[i]));
  return HS_OK;
}

hs_status find_node(const hs_capacity_t* capacity, const char* name, hetsched::queue_id& out) {
  const auto found = capacity->state.tree().find(name);
  if (!found) return unknown_node(name);
  out = *found;
  return HS_OK;
}

}  // namespace

extern "C" {

HS_API hs_status hs_capacity_spec_new(hs_capacity_spec_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE(out);
    *out = hetsched::capi::adopt(std::make_unique<hs_capacity_spec>());
    return HS_OK;
  });
}

HS_API void hs_capacity_spec_free(hs_capacity_spec_t* spec) {
  hetsched::capi::destroy_handle(spec, __func__, "spec");
}

HS_API hs_status hs_capacity_spec_add_cohort(hs_capacity_spec_t* spec, const char* name,
                                             const char* parent) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(spec);
    HS_CAPI_REQUIRE(name);
    constexpr hs_queue_order unused_order = HS_ORDER_PRIORITY;
    return add_node(spec, name, parent, hetsched::capacity_node_kind::cohort, unused_order);
  });
}

HS_API hs_status hs_capacity_spec_add_queue(hs_capacity_spec_t* spec, const char* name,
                                            const char* parent, hs_queue_order order) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(spec);
    HS_CAPI_REQUIRE(name);
    return add_node(spec, name, parent, hetsched::capacity_node_kind::queue, order);
  });
}

HS_API hs_status hs_capacity_spec_add_quota(hs_capacity_spec_t* spec, const char* node,
                                            const char* flavor, const char* resource,
                                            int64_t nominal, int64_t borrowing_limit,
                                            int64_t lending_limit) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(spec);
    HS_CAPI_REQUIRE(node);
    HS_CAPI_REQUIRE(flavor);
    HS_CAPI_REQUIRE(resource);
    auto* n = spec->find(node);
    if (n == nullptr) return unknown_node(node);
    hetsched::quota_spec q;
    q.flavor = flavor;
    q.resource = resource;
    q.nominal = nominal;
    if (borrowing_limit != HS_NO_LIMIT) q.borrowing_limit = borrowing_limit;
    if (lending_limit != HS_NO_LIMIT) q.lending_limit = lending_limit;
    n->quotas.push_back(std::move(q));
    return HS_OK;
  });
}

HS_API hs_status hs_capacity_spec_set_preemption(hs_capacity_spec_t* spec, const char* queue,
                                                 hs_within_queue within_queue, hs_reclaim reclaim) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(spec);
    HS_CAPI_REQUIRE(queue);
    auto* n = spec->find(queue);
    if (n == nullptr) return unknown_node(queue);
    if (n->kind != hetsched::capacity_node_kind::queue) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("'{}' is a cohort, not a queue", queue));
    }
    const auto within = hetsched::capi::enum_value(within_queue);
    const auto reclaim_raw = hetsched::capi::enum_value(reclaim);
    if (within < HS_WITHIN_QUEUE_NEVER || within > HS_WITHIN_QUEUE_LOWER_OR_NEWER_EQUAL_PRIORITY ||
        reclaim_raw < HS_RECLAIM_NEVER || reclaim_raw > HS_RECLAIM_ANY) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("queue '{}': unknown preemption policy", queue));
    }
    n->preemption.within_queue = static_cast<hetsched::within_queue_preemption>(within);
    n->preemption.reclaim = static_cast<hetsched::cohort_reclaim>(reclaim_raw);
    return HS_OK;
  });
}

HS_API hs_status hs_capacity_spec_set_weight(hs_capacity_spec_t* spec, const char* node,
                                             uint32_t num, uint32_t den) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(spec);
    HS_CAPI_REQUIRE(node);
    auto* n = spec->find(node);
    if (n == nullptr) return unknown_node(node);
    if (den == 0) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("'{}': weight denominator is 0", node));
    }
    n->fair_weight = static_cast<double>(num) / static_cast<double>(den);
    return HS_OK;
  });
}

HS_API hs_status hs_capacity_new(const hs_capacity_spec_t* spec, hs_capacity_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(spec);
    HS_CAPI_REQUIRE(out);
    auto tree = hetsched::capacity_tree::build(spec->spec);
    if (!tree) return fail(tree.error());
    *out = hetsched::capi::adopt(
        std::make_unique<hs_capacity>(hs_capacity{hetsched::capacity_state(std::move(*tree))}));
    return HS_OK;
  });
}

HS_API void hs_capacity_free(hs_capacity_t* capacity) {
  hetsched::capi::destroy_handle(capacity, __func__, "capacity");
}

HS_API hs_status hs_capacity_submit(hs_capacity_t* capacity, const hs_capacity_job_t* job) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    HS_CAPI_REQUIRE(job);
    hetsched::pending_workload w;
    if (auto s = read_job(capacity->state, job, w); s != HS_OK) return s;
    if (auto r = capacity->state.submit(w); !r) return fail(r.error());
    return HS_OK;
  });
}

HS_API hs_status hs_capacity_plan(const hs_capacity_t* capacity,
                                  const hs_capacity_options_t* options, hs_decision_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    HS_CAPI_REQUIRE(out);
    hetsched::capacity_cycle_options opts;
    if (auto s = read_options(options, opts); s != HS_OK) return s;
    auto plan = hetsched::plan_admission(capacity->state, opts);
    if (!plan) return fail(plan.error());
    const auto& tree = capacity->state.tree();
    auto d = std::make_unique<hs_decision>();
    d->kind = hs_decision_kind::capacity_plan;
    d->owner = capacity;
    for (const auto& a : plan->admitted) {
      d->admissions.push_back({a.job.value(), tree.name(a.queue), a.flavor, a.borrowing});
    }
    for (const auto& p : plan->preemptions) {
      for (const auto& v : p.victims) {
        hs_decision::preemption_entry e;
        e.job = v.victim.value();
        e.queue = tree.name(v.queue);
        e.reason = fmt::format("{} by job {}", hetsched::to_string(v.reason), p.preemptor);
        e.preemptor = p.preemptor.value();
        d->preemptions.push_back(std::move(e));
      }
    }
    for (const auto& f : plan->decision.deferrals) {
      hs_decision::deferral_entry e;
      e.job = f.job.value();
      e.reason = static_cast<hs_defer_reason>(static_cast<int>(f.reason));
      e.message = f.message;
      d->deferrals.push_back(std::move(e));
    }
    d->plan = std::move(*plan);
    *out = hetsched::capi::adopt(std::move(d));
    return HS_OK;
  });
}

HS_API hs_status hs_capacity_apply(hs_capacity_t* capacity, const hs_decision_t* decision) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    HS_CAPI_REQUIRE_HANDLE(decision);
    if (decision->kind != hs_decision_kind::capacity_plan || decision->owner != capacity ||
        !decision->plan) {
      return fail(HS_INVALID_ARGUMENT,
                  "decision was not made by hs_capacity_plan on this capacity state");
    }
    if (auto r = hetsched::apply_admission(capacity->state, *decision->plan); !r) {
      if (r.error().code == hetsched::errc::failed_precondition) {
        return fail(HS_CONFLICT, r.error().message);
      }
      return fail(r.error());
    }
    return HS_OK;
  });
}

HS_API hs_status hs_capacity_release(hs_capacity_t* capacity, uint64_t job_id) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    const auto id = hetsched::capi::to_job_id(job_id);
    if (!id) return fail(HS_NOT_FOUND, fmt::format("job {} is not known", job_id));
    if (auto r = capacity->state.release(*id); !r) return fail(r.error());
    return HS_OK;
  });
}

HS_API hs_status hs_capacity_what_if(const hs_capacity_t* capacity, const hs_capacity_job_t* job,
                                     const hs_capacity_options_t* options, hs_decision_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    HS_CAPI_REQUIRE(job);
    HS_CAPI_REQUIRE(out);
    hetsched::capacity_cycle_options opts;
    if (auto s = read_options(options, opts); s != HS_OK) return s;
    hetsched::pending_workload w;
    if (auto s = read_job(capacity->state, job, w); s != HS_OK) return s;
    auto answer = hetsched::what_if(capacity->state, w, opts);
    if (!answer) return fail(answer.error());
    const auto& tree = capacity->state.tree();
    auto d = std::make_unique<hs_decision>();
    d->kind = hs_decision_kind::capacity_what_if;
    d->owner = capacity;
    if (answer->admissible_now) {
      d->admissions.push_back({job->job_id, tree.name(w.queue), answer->flavor, answer->borrowing});
    }
    for (const auto& v : answer->victims) {
      hs_decision::preemption_entry e;
      e.job = v.victim.value();
      e.queue = tree.name(v.queue);
      e.reason = fmt::format("{} by job {}", hetsched::to_string(v.reason), job->job_id);
      e.preemptor = job->job_id;
      d->preemptions.push_back(std::move(e));
    }
    if (!answer->admissible_now) {
      hs_decision::deferral_entry e;
      e.job = job->job_id;
      e.reason = HS_DEFER_QUOTA_EXCEEDED;
      e.message = answer->needs_preemption && answer->reason.empty()
                      ? fmt::format("job {} fits in flavor {} only by preempting {} jobs",
                                    job->job_id, answer->flavor, answer->victims.size())
                      : answer->reason;
      d->deferrals.push_back(std::move(e));
    }
    d->what_if = hs_decision::what_if_summary{answer->admissible_now, answer->needs_preemption,
                                              answer->borrowing,      answer->ahead_in_queue,
                                              answer->flavor,         answer->reason};
    *out = hetsched::capi::adopt(std::move(d));
    return HS_OK;
  });
}

HS_API hs_status hs_decision_what_if(const hs_decision_t* decision, hs_what_if_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    if (!decision->what_if) {
      return fail(HS_INVALID_ARGUMENT, "decision was not made by hs_capacity_what_if");
    }
    const auto& w = *decision->what_if;
    hs_what_if_t v{};
    v.admissible_now = w.admissible_now ? 1 : 0;
    v.needs_preemption = w.needs_preemption ? 1 : 0;
    v.borrowing = w.borrowing ? 1 : 0;
    v.ahead_in_queue = w.ahead_in_queue;
    v.flavor = w.flavor.c_str();
    v.reason = w.reason.c_str();
    return hetsched::capi::write_out(out, v, "hs_what_if_t");
  });
}

HS_API hs_status hs_capacity_quota(const hs_capacity_t* capacity, const char* node,
                                   const char* flavor, const char* resource, hs_quota_line_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    HS_CAPI_REQUIRE(node);
    HS_CAPI_REQUIRE(flavor);
    HS_CAPI_REQUIRE(resource);
    HS_CAPI_REQUIRE(out);
    if (out->struct_size < sizeof(hs_quota_line_t)) {
      return hetsched::capi::struct_too_small("hs_quota_line_t");
    }
    hetsched::queue_id id;
    if (auto s = find_node(capacity, node, id); s != HS_OK) return s;
    auto report = hetsched::queue_status(capacity->state, id);
    if (!report) return fail(report.error());
    for (const auto& line : report->lines) {
      if (line.flavor == flavor && line.resource == resource) {
        hs_quota_line_t v{};
        v.nominal = line.nominal;
        v.subtree_quota = line.subtree_quota;
        v.usage = line.usage;
        v.available = line.available;
        v.potential_available = line.potential_available;
        v.borrowed = line.borrowed;
        static_cast<void>(hetsched::capi::write_struct(out, v));  // size checked above
        return HS_OK;
      }
    }
    return fail(HS_NOT_FOUND, fmt::format("'{}' has no quota line for flavor '{}' resource '{}'",
                                          node, flavor, resource));
  });
}

HS_API hs_status hs_capacity_share(const hs_capacity_t* capacity, const char* node, int64_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    HS_CAPI_REQUIRE(node);
    HS_CAPI_REQUIRE(out);
    hetsched::queue_id id;
    if (auto s = find_node(capacity, node, id); s != HS_OK) return s;
    *out = hetsched::dominant_resource_share(capacity->state.tree(), capacity->state.usage(), id)
               .rounded();
    return HS_OK;
  });
}

HS_API size_t hs_capacity_pending_count(const hs_capacity_t* capacity) {
  return hetsched::capi::readable(capacity, __func__, "capacity") ? capacity->state.pending_count()
                                                                  : 0;
}

HS_API size_t hs_capacity_admitted_count(const hs_capacity_t* capacity) {
  return hetsched::capi::readable(capacity, __func__, "capacity") ? capacity->state.admitted_count()
                                                                  : 0;
}

HS_API hs_status hs_capacity_job_admitted(const hs_capacity_t* capacity, uint64_t job_id,
                                          int32_t* out, const char** flavor) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(capacity);
    HS_CAPI_REQUIRE(out);
    const auto id = hetsched::capi::to_job_id(job_id);
    const auto* admitted = id ? capacity->state.admitted(*id) : nullptr;
    *out = admitted != nullptr ? 1 : 0;
    if (flavor != nullptr) *flavor = admitted != nullptr ? admitted->flavor.c_str() : "";
    return HS_OK;
  });
}

}  // extern "C"
