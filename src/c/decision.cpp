// SPDX-License-Identifier: MIT
// C API: reading decisions through index accessors.
#include <cstddef>

#include <hetsched/c/decision.h>

#include "c_internal.hpp"
#include "handles.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;

namespace {

template <typename Entries>
hs_status check_index(const Entries& entries, std::size_t index, const char* what) {
  if (index < entries.size()) return HS_OK;
  std::string message = "decision has ";
  message += std::to_string(entries.size());
  message += ' ';
  message += what;
  message += " entries; index ";
  message += std::to_string(index);
  message += " is out of range";
  return fail(HS_OUT_OF_RANGE, std::move(message));
}

/// Writes `value` into the caller's struct (see write_struct) or fails naming the type.
template <typename T>
hs_status write_out(T* out, T value, const char* type) {
  if (hetsched::capi::write_struct(out, value)) return HS_OK;
  std::string message = "out->struct_size is smaller than sizeof(";
  message += type;
  message += ")";
  return fail(HS_INVALID_ARGUMENT, std::move(message));
}

}  // namespace

extern "C" {

HS_API void hs_decision_free(hs_decision_t* decision) {
  hetsched::capi::destroy_handle(decision, __func__, "decision");
}

HS_API size_t hs_decision_bind_count(const hs_decision_t* decision) {
  return !hetsched::capi::readable(decision, __func__, "decision") ? 0 : decision->binds.size();
}
HS_API size_t hs_decision_admission_count(const hs_decision_t* decision) {
  return !hetsched::capi::readable(decision, __func__, "decision") ? 0
                                                                   : decision->admissions.size();
}
HS_API size_t hs_decision_preemption_count(const hs_decision_t* decision) {
  return !hetsched::capi::readable(decision, __func__, "decision") ? 0
                                                                   : decision->preemptions.size();
}
HS_API size_t hs_decision_deferral_count(const hs_decision_t* decision) {
  return !hetsched::capi::readable(decision, __func__, "decision") ? 0 : decision->deferrals.size();
}

HS_API size_t hs_decision_release_count(const hs_decision_t* decision) {
  return !hetsched::capi::readable(decision, __func__, "decision") ? 0 : decision->releases.size();
}

HS_API hs_status hs_decision_bind_at(const hs_decision_t* decision, size_t index, hs_bind_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_index(decision->binds, index, "bind"); s != HS_OK) return s;
    const auto& b = decision->binds[index];
    hs_bind_t v{};
    v.job_id = b.job;
    v.job_name = b.job_name.c_str();
    v.task = b.task;
    v.node = b.node;
    v.node_name = b.node_name.c_str();
    v.gpus = b.gpus.data();
    v.gpu_count = static_cast<std::uint32_t>(b.gpus.size());
    return write_out(out, v, "hs_bind_t");
  });
}

HS_API hs_status hs_decision_admission_at(const hs_decision_t* decision, size_t index,
                                          hs_admission_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_index(decision->admissions, index, "admission"); s != HS_OK) return s;
    const auto& a = decision->admissions[index];
    hs_admission_t v{};
    v.job_id = a.job;
    v.queue = a.queue.c_str();
    v.flavor = a.flavor.c_str();
    v.borrowing = a.borrowing ? 1 : 0;
    return write_out(out, v, "hs_admission_t");
  });
}

HS_API hs_status hs_decision_preemption_at(const hs_decision_t* decision, size_t index,
                                           hs_preemption_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_index(decision->preemptions, index, "preemption"); s != HS_OK) return s;
    const auto& p = decision->preemptions[index];
    hs_preemption_t v{};
    v.job_id = p.job;
    v.job_name = p.job_name.c_str();
    v.node_name = p.node_name.c_str();
    v.queue = p.queue.c_str();
    v.reason = p.reason.c_str();
    v.preemptor_id = p.preemptor;
    return write_out(out, v, "hs_preemption_t");
  });
}

HS_API hs_status hs_decision_deferral_at(const hs_decision_t* decision, size_t index,
                                         hs_deferral_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_index(decision->deferrals, index, "deferral"); s != HS_OK) return s;
    const auto& d = decision->deferrals[index];
    hs_deferral_t v{};
    v.job_id = d.job;
    v.job_name = d.job_name.c_str();
    v.reason = d.reason;
    v.message = d.message.c_str();
    return write_out(out, v, "hs_deferral_t");
  });
}

HS_API hs_status hs_decision_release_at(const hs_decision_t* decision, size_t index,
                                        hs_release_t* out) {
  return guard(__func__, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    if (auto s = check_index(decision->releases, index, "release"); s != HS_OK) return s;
    const auto& r = decision->releases[index];
    hs_release_t v{};
    v.job_id = r.job;
    v.job_name = r.job_name.c_str();
    v.task = r.task;
    v.node = r.node;
    v.node_name = r.node_name.c_str();
    v.gpus = r.gpus.data();
    v.gpu_count = static_cast<std::uint32_t>(r.gpus.size());
    return write_out(out, v, "hs_release_t");
  });
}

HS_API const char* hs_defer_reason_name(hs_defer_reason reason) {
  switch (reason) {
    case HS_DEFER_INSUFFICIENT_CAPACITY: return "insufficient_capacity";
    case HS_DEFER_QUOTA_EXCEEDED: return "quota_exceeded";
    case HS_DEFER_TOPOLOGY_UNSATISFIABLE: return "topology_unsatisfiable";
    case HS_DEFER_FRAGMENTED: return "fragmented";
    case HS_DEFER_WAIT: return "wait";
  }
  return "unknown";
}

}  // extern "C"
