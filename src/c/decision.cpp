// SPDX-License-Identifier: MIT
// C API: reading decisions through index accessors, and the one conversion from the model's
// decision (hetsched::decision) to the C decision.
//
// Every accessor is the same steps (handle, NULL out, index, copy into the caller's struct); they
// all go through entry_at() and count_of(), so each public function only names its list and how
// an entry becomes the C struct.
#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include <hetsched/c/decision.h>

#include "c_internal.hpp"
#include "handles.hpp"

using hetsched::capi::fail;
using hetsched::capi::guard;

namespace hetsched::capi {

hs_status check_index(std::size_t count, std::size_t index, const char* what) {
  if (index < count) return HS_OK;
  std::string message = "decision has ";
  message += std::to_string(count);
  message += ' ';
  message += what;
  message += " entries; index ";
  message += std::to_string(index);
  message += " is out of range";
  return fail(HS_OUT_OF_RANGE, std::move(message));
}

hs_status struct_too_small(const char* type) {
  std::string message = "out->struct_size is smaller than sizeof(";
  message += type;
  message += ")";
  return fail(HS_INVALID_ARGUMENT, std::move(message));
}

namespace {

/// The C entry of one task placement of job `job`: node index and name, node-local GPUs.
hs_decision::bind_entry placed_task(const cluster& c, job_id job, const task_placement& t) {
  hs_decision::bind_entry e;
  e.job = job.value();
  e.task = t.task.value();
  e.node = t.node.value();
  const node_info& node = c.node(t.node);
  e.node_name = node.name;
  e.gpus.reserve(t.devices.size());
  for (const device_share& s : t.devices) e.gpus.push_back(c.device(s.device).local_index);
  e.milli_per_gpu = t.devices.empty() ? 0 : static_cast<std::uint32_t>(t.devices.front().milli_gpu);
  e.gpu_memory_mib = t.devices.empty() ? 0 : t.devices.front().gpu_memory_mib;
  return e;
}

}  // namespace

void append_decision(const cluster_state& state, const decision& d, hs_decision& out) {
  const cluster& c = state.cluster();
  for (const binding& b : d.binds) {
    for (const task_placement& t : b.tasks) out.binds.push_back(placed_task(c, b.job, t));
  }
  for (const migration& m : d.migrations) {
    for (const task_placement& t : m.tasks) out.migrations.push_back(placed_task(c, m.job, t));
  }
  for (const preemption& p : d.preemptions) {
    hs_decision::preemption_entry e;
    e.job = p.job.value();
    e.reason = p.reason;
    out.preemptions.push_back(std::move(e));
  }
  for (const deferral& x : d.deferrals) {
    hs_decision::deferral_entry e;
    e.job = x.job.value();
    e.reason = static_cast<hs_defer_reason>(static_cast<int>(x.reason));
    e.message = x.message;
    out.deferrals.push_back(std::move(e));
  }
  for (const suspension& s : d.suspensions) out.suspensions.push_back(s.job.value());
  for (const resumption& r : d.resumes) out.resumes.push_back(r.job.value());
  for (const partial_release& r : d.releases) {
    const job_record* rec = state.find_job(r.job);
    for (const task_id task : r.tasks) {
      task_placement where{task, node_id::invalid(), {}};
      if (rec != nullptr && task.index() < rec->placement.size())
        where = rec->placement[task.index()];
      hs_decision::release_entry e;
      if (where.node.valid()) {
        e = placed_task(c, r.job, where);
        std::sort(e.gpus.begin(), e.gpus.end());
      } else {
        e.job = r.job.value();
        e.task = task.value();
      }
      out.releases.push_back(std::move(e));
    }
  }
}

}  // namespace hetsched::capi

namespace {

/// Returns the size of `list` of a live decision; 0 (with the last error set for an invalid
/// handle) otherwise. For the hs_decision_*_count functions.
template <typename List>
std::size_t count_of(const hs_decision_t* decision, List hs_decision::*list, const char* function) {
  return hetsched::capi::readable(decision, function, "decision") ? (decision->*list).size() : 0;
}

/// The body of every hs_decision_*_at: checks the handle, `out` and `index` against `list`,
/// then writes convert(entry) into *out (write_out: at least `min_size` bytes of struct_size).
template <typename Out, typename List, typename Convert>
hs_status entry_at(const char* function, const hs_decision_t* decision, List hs_decision::*list,
                   std::size_t index, Out* out, const char* what, const char* type,
                   std::size_t min_size, Convert convert) {
  return guard(function, [&]() -> hs_status {
    HS_CAPI_REQUIRE_HANDLE(decision);
    HS_CAPI_REQUIRE(out);
    const auto& entries = decision->*list;
    if (auto s = hetsched::capi::check_index(entries.size(), index, what); s != HS_OK) return s;
    if constexpr (std::is_same_v<Out, std::uint64_t>) {
      *out = convert(entries[index]);
      return HS_OK;
    } else {
      return hetsched::capi::write_out(out, convert(entries[index]), type, min_size);
    }
  });
}

/// The C view of a bind-shaped entry (binds, releases, migrations): T has the fields of hs_bind_t
/// except the job name, which hs_migration_t lacks.
template <typename T>
T placed_view(const hs_decision::bind_entry& b) {
  T v{};
  v.job_id = b.job;
  if constexpr (requires(T & x) { x.job_name; }) v.job_name = b.job_name.c_str();
  v.task = b.task;
  v.node = b.node;
  v.node_name = b.node_name.c_str();
  v.gpus = b.gpus.data();
  v.gpu_count = static_cast<std::uint32_t>(b.gpus.size());
  if constexpr (requires(T & x) { x.milli_per_gpu; }) {
    v.milli_per_gpu = b.milli_per_gpu;
    v.gpu_memory_mib = b.gpu_memory_mib;
  }
  return v;
}

std::uint64_t job_of(std::uint64_t job) { return job; }

}  // namespace

extern "C" {

HS_API void hs_decision_free(hs_decision_t* decision) {
  hetsched::capi::destroy_handle(decision, __func__, "decision");
}

HS_API size_t hs_decision_bind_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::binds, __func__);
}
HS_API size_t hs_decision_admission_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::admissions, __func__);
}
HS_API size_t hs_decision_preemption_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::preemptions, __func__);
}
HS_API size_t hs_decision_deferral_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::deferrals, __func__);
}
HS_API size_t hs_decision_release_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::releases, __func__);
}
HS_API size_t hs_decision_migration_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::migrations, __func__);
}
HS_API size_t hs_decision_suspension_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::suspensions, __func__);
}
HS_API size_t hs_decision_resume_count(const hs_decision_t* decision) {
  return count_of(decision, &hs_decision::resumes, __func__);
}

HS_API hs_status hs_decision_bind_at(const hs_decision_t* decision, size_t index, hs_bind_t* out) {
  return entry_at(__func__, decision, &hs_decision::binds, index, out, "bind", "hs_bind_t",
                  offsetof(hs_bind_t, milli_per_gpu), placed_view<hs_bind_t>);
}

HS_API hs_status hs_decision_admission_at(const hs_decision_t* decision, size_t index,
                                          hs_admission_t* out) {
  return entry_at(__func__, decision, &hs_decision::admissions, index, out, "admission",
                  "hs_admission_t", sizeof(hs_admission_t),
                  [](const hs_decision::admission_entry& a) {
                    hs_admission_t v{};
                    v.job_id = a.job;
                    v.queue = a.queue.c_str();
                    v.flavor = a.flavor.c_str();
                    v.borrowing = a.borrowing ? 1 : 0;
                    return v;
                  });
}

HS_API hs_status hs_decision_preemption_at(const hs_decision_t* decision, size_t index,
                                           hs_preemption_t* out) {
  return entry_at(__func__, decision, &hs_decision::preemptions, index, out, "preemption",
                  "hs_preemption_t", sizeof(hs_preemption_t),
                  [](const hs_decision::preemption_entry& p) {
                    hs_preemption_t v{};
                    v.job_id = p.job;
                    v.job_name = p.job_name.c_str();
                    v.node_name = p.node_name.c_str();
                    v.queue = p.queue.c_str();
                    v.reason = p.reason.c_str();
                    v.preemptor_id = p.preemptor;
                    return v;
                  });
}

HS_API hs_status hs_decision_deferral_at(const hs_decision_t* decision, size_t index,
                                         hs_deferral_t* out) {
  return entry_at(__func__, decision, &hs_decision::deferrals, index, out, "deferral",
                  "hs_deferral_t", sizeof(hs_deferral_t), [](const hs_decision::deferral_entry& d) {
                    hs_deferral_t v{};
                    v.job_id = d.job;
                    v.job_name = d.job_name.c_str();
                    v.reason = d.reason;
                    v.message = d.message.c_str();
                    return v;
                  });
}

HS_API hs_status hs_decision_release_at(const hs_decision_t* decision, size_t index,
                                        hs_release_t* out) {
  return entry_at(__func__, decision, &hs_decision::releases, index, out, "release", "hs_release_t",
                  sizeof(hs_release_t), placed_view<hs_release_t>);
}

HS_API hs_status hs_decision_migration_at(const hs_decision_t* decision, size_t index,
                                          hs_migration_t* out) {
  return entry_at(__func__, decision, &hs_decision::migrations, index, out, "migration",
                  "hs_migration_t", sizeof(hs_migration_t), placed_view<hs_migration_t>);
}

HS_API hs_status hs_decision_suspension_at(const hs_decision_t* decision, size_t index,
                                           uint64_t* out) {
  return entry_at(__func__, decision, &hs_decision::suspensions, index, out, "suspension", "", 0,
                  job_of);
}

HS_API hs_status hs_decision_resume_at(const hs_decision_t* decision, size_t index, uint64_t* out) {
  return entry_at(__func__, decision, &hs_decision::resumes, index, out, "resume", "", 0, job_of);
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
