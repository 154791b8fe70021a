// SPDX-License-Identifier: MIT
// C API: the cluster state (hetsched::cluster_state) that registry policies decide over: job
// submission from C job specs, platform events, health, apply and read-back.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>

#include <hetsched/c/state.h>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/gpu_type.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/lifecycle.hpp>

#include "c_internal.hpp"
#include "handles.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;
using hetsched::capi::view;

namespace {

/// Reads role `index` of the spec of job `job` into `out`.
hs_status read_role(const hs_task_role_t& in, std::size_t index, std::uint64_t job,
                    hetsched::task_role& out) {
  hs_task_role_t r;
  if (!hetsched::capi::read_struct(in, r)) {
    return fail(HS_INVALID_ARGUMENT,
                fmt::format("job {}: roles[{}].struct_size is smaller than sizeof(hs_task_role_t)",
                            job, index));
  }
  out.name = std::string(view(r.name));
  out.task_count = r.task_count;
  out.milli_cpu = r.milli_cpu;
  out.memory_mib = r.memory_mib;
  out.gpu.count = r.gpus;
  out.gpu.milli_per_gpu = r.milli_per_gpu == 0 ? 1000 : r.milli_per_gpu;
  out.gpu.memory_mib = r.gpu_memory_mib;
  if (!view(r.gpu_type).empty()) {
    auto type = hetsched::gpu_type::parse(r.gpu_type);
    if (!type) {
      return fail(HS_INVALID_ARGUMENT,
                  fmt::format("job {}: role '{}': {}", job, out.name, type.error().message));
    }
    out.gpu.type = *type;
  }
  return HS_OK;
}

/// Reads the caller's job spec into `out`; the model's validate() checks the rest on submit.
hs_status read_spec(const hs_job_spec_t& in, hetsched::job_spec& out) {
  hs_job_spec_t s;
  if (!hetsched::capi::read_struct(in, s)) {
    return fail(HS_INVALID_ARGUMENT, "spec->struct_size is smaller than sizeof(hs_job_spec_t)");
  }
  const auto id = hetsched::capi::to_job_id(s.job_id);
  if (!id) return fail(HS_INVALID_ARGUMENT, fmt::format("job id {} is out of range", s.job_id));
  if (s.role_count > 0 && s.roles == nullptr) {
    return fail(HS_INVALID_ARGUMENT,
                fmt::format("job {}: roles is NULL with role_count {}", s.job_id, s.role_count));
  }
  out.id = *id;
  out.name = std::string(view(s.name));
  if (s.tenant != HS_ID_NONE) out.tenant = hetsched::tenant_id(s.tenant);
  if (s.queue != HS_ID_NONE) out.queue = hetsched::queue_id(s.queue);
  out.priority = s.priority;
  out.gang = s.independent_tasks == 0;
  out.preemptible = s.preemptible != 0;
  out.retry_limit = s.retry_limit;
  if (s.duration_estimate_s != 0) out.duration_estimate_s = s.duration_estimate_s;
  out.image = std::string(view(s.image));
  out.command = std::string(view(s.command));
  for (std::size_t i = 0; i < s.role_count; ++i) {
    hetsched::task_role role;
    if (auto st = read_role(s.roles[i], i, s.job_id, role); st != HS_OK) return st;
    out.roles.push_back(std::move(role));
  }
  return HS_OK;
}

/// Returns the model health of a C health value, or fails naming it.
hs_status read_health(const hs_health& in, hetsched::health& out) {
  const auto raw = static_cast<std::int64_t>(hetsched::capi::enum_value(in));
  if (raw < 0 || raw > HS_UNHEALTHY) {
    return fail(HS_INVALID_ARGUMENT, fmt::format("unknown health value {}", raw));
  }
  out = static_cast<hetsched::health>(raw);
  return HS_OK;
}

hs_status check_node(const hs_state& state, std::uint32_t node) {
  const auto count = state.state.cluster().node_count();
  if (node < count) return HS_OK;
  return fail(HS_OUT_OF_RANGE,
              fmt::format("node index {} is out of range (cluster has {} nodes)", node, count));
}

}  // namespace

extern "C" {

HS_API hs_status hs_state_new(const hs_cluster_t* cluster, hs_state_t** out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(cluster);
    HS_CAPI_REQUIRE(out);
    auto model = hetsched::capi::model_of(*cluster);
    if (!model) return fail(model.error());
    *out = hetsched::capi::adopt(
        std::make_unique<hs_state>(hs_state{hetsched::cluster_state(std::move(*model))}));
    return HS_OK;
  });
}

HS_API void hs_state_free(hs_state_t* state) {
  hetsched::capi::destroy_handle(state, __func__, "state");
}

HS_API hs_status hs_state_submit(hs_state_t* state, const hs_job_spec_t* spec) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(state);
    HS_CAPI_REQUIRE(spec);
    hetsched::job_spec job;
    if (auto s = read_spec(*spec, job); s != HS_OK) return s;
    const hetsched::job_id id = job.id;
    if (auto r = state->state.submit(std::move(job)); !r) return fail(r.error());
    // A job just submitted is always allowed to enqueue.
    if (auto r = hetsched::record(state->state, id, hetsched::job_event::enqueue); !r) {
      return fail(HS_INTERNAL, "internal error: " + r.error().message);
    }
    return HS_OK;
  });
}

HS_API hs_status hs_state_record(hs_state_t* state, uint64_t job_id, hs_job_event event) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(state);
    using hetsched::job_event;
    static constexpr job_event events[] = {job_event::enqueue, job_event::start,
                                           job_event::succeed, job_event::fail,
                                           job_event::requeue, job_event::cancel};
    const auto raw = static_cast<std::int64_t>(hetsched::capi::enum_value(event));
    if (raw < 0 || raw > HS_JOB_CANCEL) {
      return fail(HS_INVALID_ARGUMENT, fmt::format("unknown job event {}", raw));
    }
    const auto id = hetsched::capi::to_job_id(job_id);
    if (!id) return fail(HS_NOT_FOUND, fmt::format("job {}: unknown job", job_id));
    if (auto r = hetsched::record(state->state, *id, events[static_cast<std::size_t>(raw)]); !r)
      return fail(r.error());
    return HS_OK;
  });
}

HS_API hs_status hs_state_apply(hs_state_t* state, const hs_decision_t* decision) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(state);
    HS_CAPI_REQUIRE_HANDLE(decision);
    if (decision->kind == hs_decision_kind::policy_what_if) {
      return fail(HS_INVALID_ARGUMENT,
                  "a decision of hs_policy_what_if cannot be applied; use hs_policy_place");
    }
    if (decision->kind != hs_decision_kind::policy || !decision->model) {
      return fail(HS_INVALID_ARGUMENT,
                  "decision was not made by hs_policy_place or hs_policy_plan_migrations");
    }
    if (auto r = hetsched::apply(state->state, *decision->model); !r) return fail(r.error());
    return HS_OK;
  });
}

HS_API hs_status hs_state_set_node_health(hs_state_t* state, uint32_t node, hs_health health) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(state);
    hetsched::health h{};
    if (auto s = read_health(health, h); s != HS_OK) return s;
    if (auto s = check_node(*state, node); s != HS_OK) return s;
    if (auto r = state->state.set_node_health(hetsched::node_id(node), h); !r) {
      return fail(r.error());
    }
    return HS_OK;
  });
}

HS_API hs_status hs_state_set_gpu_health(hs_state_t* state, uint32_t node, uint32_t gpu,
                                         hs_health health) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(state);
    hetsched::health h{};
    if (auto s = read_health(health, h); s != HS_OK) return s;
    if (auto s = check_node(*state, node); s != HS_OK) return s;
    const auto& c = state->state.cluster();
    const auto device = c.device_at(hetsched::node_id(node), gpu);
    if (!device) {
      return fail(HS_OUT_OF_RANGE,
                  fmt::format("GPU index {} is out of range (node '{}' has {} GPUs)", gpu,
                              c.node(hetsched::node_id(node)).name,
                              c.node(hetsched::node_id(node)).device_count));
    }
    if (auto r = state->state.set_device_health(*device, h); !r) return fail(r.error());
    return HS_OK;
  });
}

HS_API hs_status hs_state_job_status(const hs_state_t* state, uint64_t job_id,
                                     hs_job_status_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(state);
    HS_CAPI_REQUIRE(out);
    const auto id = hetsched::capi::to_job_id(job_id);
    const hetsched::job_record* rec = id ? state->state.find_job(*id) : nullptr;
    if (rec == nullptr) return fail(HS_NOT_FOUND, fmt::format("job {}: unknown job", job_id));
    hs_job_status_t v{};
    v.state = static_cast<hs_job_state>(static_cast<int>(rec->status.state));
    v.attempts = rec->status.attempts;
    v.task_count = hetsched::task_count(rec->spec);
    for (const auto& p : rec->placement) v.placed_tasks += p.node.valid() ? 1U : 0U;
    return hetsched::capi::write_out(out, v, "hs_job_status_t");
  });
}

HS_API hs_status hs_state_node_usage(const hs_state_t* state, uint32_t node, hs_node_usage_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(state);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_node(*state, node); s != HS_OK) return s;
    const hetsched::cluster_state& st = state->state;
    const hetsched::node_id n(node);
    const auto& info = st.cluster().node(n);
    hs_node_usage_t v{};
    v.health = static_cast<hs_health>(static_cast<int>(st.node_health(n)));
    v.gpus = info.device_count;
    for (std::uint32_t i = 0; i < info.device_count; ++i) {
      const hetsched::device_id d(info.first_device.value() + i);
      const bool usable = st.node_health(n) == hetsched::health::healthy &&
                          st.device_health(d) == hetsched::health::healthy;
      if (usable && st.device_used(d).milli_gpu == 0) ++v.idle_gpus;
    }
    const auto free = st.node_free(n);
    v.free_milli_gpu = free.milli_gpu;
    v.free_milli_cpu = free.milli_cpu;
    v.free_memory_mib = free.memory_mib;
    return hetsched::capi::write_out(out, v, "hs_node_usage_t");
  });
}

HS_API size_t hs_state_job_count(const hs_state_t* state) {
  return hetsched::capi::readable(state, __func__, "state") ? state->state.jobs().size() : 0;
}

HS_API const char* hs_job_state_name(hs_job_state state) {
  switch (state) {
    case HS_JOB_SUBMITTED: return "submitted";
    case HS_JOB_QUEUED: return "queued";
    case HS_JOB_SCHEDULED: return "scheduled";
    case HS_JOB_RUNNING: return "running";
    case HS_JOB_SUCCEEDED: return "succeeded";
    case HS_JOB_FAILED: return "failed";
    case HS_JOB_PREEMPTED: return "preempted";
    case HS_JOB_SUSPENDED: return "suspended";
    case HS_JOB_CANCELLED: return "cancelled";
  }
  return "unknown";
}

}  // extern "C"
