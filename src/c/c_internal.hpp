// SPDX-License-Identifier: MIT
// Internals of the C API: the handle types, the thread-local last error and the guard that keeps
// every C++ exception on this side of the boundary.
//
// Each public hs_* entry that can fail runs its body through guard(): the last error is cleared
// first, hetsched errors are mapped to hs_status with their message, std::bad_alloc becomes
// HS_OUT_OF_MEMORY and anything else HS_INTERNAL. Bodies validate everything before they change
// a handle, so a failed call changes nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <hetsched/c/capacity.h>
#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>
#include <hetsched/model/cluster.hpp>
#include <hetsched/model/cluster_state.hpp>
#include <hetsched/model/decision.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_queue.hpp>
#include <hetsched/policies/hived.hpp>
#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched::capi {

/// Returns `status` after storing `message` as this thread's last error.
hs_status fail(hs_status status, std::string message);
/// Clears this thread's last error.
void clear_error() noexcept;
/// Returns this thread's last error message ("" after a successful call).
const char* last_error_c_str() noexcept;
/// Returns the status of `e` (invalid_argument maps to `invalid_as`) after storing its message.
hs_status fail(const error& e, hs_status invalid_as = HS_INVALID_ARGUMENT);
/// Returns HS_INVALID_ARGUMENT naming the NULL argument `name` of the running public function.
hs_status null_argument(const char* name);

/// Records the public function being run, for messages about NULL arguments.
void set_function(const char* function) noexcept;
/// Returns the public function being run (set_function), e.g. "hs_packer_place".
const char* current_function_name() noexcept;

/// Runs `body` (returning hs_status) of public function `function` with the last error cleared
/// and every exception mapped.
template <typename Body>
hs_status guard(const char* function, Body&& body) noexcept {
  try {
    set_function(function);
    clear_error();
    return body();
  } catch (const std::bad_alloc&) {
    return fail(HS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    try {
      return fail(HS_INTERNAL, std::string("internal error: ") + e.what());
    } catch (...) {
      return HS_INTERNAL;
    }
  } catch (...) {
    return fail(HS_INTERNAL, "internal error: unknown exception");
  }
}

/// Copies a caller struct that starts with `uint32_t struct_size` into `out`: the first
/// min(struct_size, sizeof(T)) bytes, the rest zero (fields a caller built against an older header
/// does not know). Returns false, copying nothing, if struct_size is below `min_size`, the size of
/// the struct's first version.
template <typename T>
[[nodiscard]] bool read_struct(const T& in, T& out, std::size_t min_size = sizeof(T)) noexcept {
  if (in.struct_size < min_size) return false;
  T copy{};
  std::memcpy(&copy, &in, std::min<std::size_t>(in.struct_size, sizeof(T)));
  out = copy;
  return true;
}

/// Writes `value` into the caller struct `out` up to out->struct_size bytes, keeping
/// out->struct_size. Returns false, writing nothing, if struct_size is below `min_size`.
template <typename T>
[[nodiscard]] bool write_struct(T* out, T value, std::size_t min_size = sizeof(T)) noexcept {
  if (out->struct_size < min_size) return false;
  value.struct_size = out->struct_size;
  std::memcpy(out, &value, std::min<std::size_t>(out->struct_size, sizeof(T)));
  return true;
}

/// Returns the integer a caller stored in enum `e`, read as bytes: a C caller may pass any
/// integer in an enum parameter or field, and loading a C++ enum that holds a value outside its
/// enumerators' range is undefined behaviour (UBSan's -fsanitize=enum reports it). Validate
/// C enums through this before converting them.
template <typename E>
[[nodiscard]] std::underlying_type_t<E> enum_value(const E& e) noexcept {
  static_assert(std::is_enum_v<E>);
  std::underlying_type_t<E> raw{};
  std::memcpy(&raw, &e, sizeof raw);
  return raw;
}

/// Returns `s` as a string_view; NULL gives "".
[[nodiscard]] inline std::string_view view(const char* s) noexcept {
  return s == nullptr ? std::string_view() : std::string_view(s);
}

/// Returns the library's job id for `id`, or nullopt if it does not fit (the invalid id).
[[nodiscard]] inline std::optional<job_id> to_job_id(std::uint64_t id) noexcept {
  if (id >= job_id::invalid().value()) return std::nullopt;
  return job_id(static_cast<std::uint32_t>(id));
}

/// Returns HS_OUT_OF_RANGE naming `what` ("bind", "GPU", ...) unless index < count.
hs_status check_index(std::size_t count, std::size_t index, const char* what);

/// Returns HS_INVALID_ARGUMENT naming `type` for an output struct whose struct_size is too small.
hs_status struct_too_small(const char* type);

/// Writes `value` into the caller's output struct (write_struct: up to out->struct_size bytes,
/// at least `min_size`, the size of the struct's first version) or fails naming `type`.
template <typename T>
hs_status write_out(T* out, T value, const char* type, std::size_t min_size = sizeof(T)) {
  return write_struct(out, value, min_size) ? HS_OK : struct_too_small(type);
}

/// Checks NULL arguments: `return null_argument(...)` if `ptr` is NULL. Not for handles: those
/// take HS_CAPI_REQUIRE_HANDLE (handles.hpp), which also checks that they are live; using this
/// one on a handle does not compile.
#define HS_CAPI_REQUIRE(ptr)                                                  \
  static_assert(!::hetsched::capi::handle_pointer<decltype(ptr)>,             \
                "use HS_CAPI_REQUIRE_HANDLE(" #ptr ") for handle arguments"); \
  if ((ptr) == nullptr) return ::hetsched::capi::null_argument(#ptr)

}  // namespace hetsched::capi

struct hs_cluster {
  hetsched::cluster_topology topology;
  /// GPU model names per template of `topology` (NUL-terminated copies of gpu_type names).
  std::vector<std::vector<std::string>> gpu_types;
  /// The model description (to_cluster(topology)), made on the first hs_state_new or
  /// hs_policy_new and shared by every state and policy of the cluster (model_of()).
  mutable std::mutex model_mutex;
  mutable std::shared_ptr<const hetsched::cluster> model;
};

namespace hetsched::capi {
/// Returns the model description of `c`, making it on first use (thread-safe: const accessors of
/// a cluster may run concurrently). Errors: those of to_cluster().
[[nodiscard]] result<std::shared_ptr<const cluster>> model_of(const hs_cluster& c);
}  // namespace hetsched::capi

/// What made a decision; commit functions accept only their own kind from their own object.
enum class hs_decision_kind : std::uint8_t {
  packer,
  packer_grow_shrink,
  hived,
  capacity_plan,
  capacity_what_if,
  hived_what_if,
  policy,         ///< hs_policy_place / hs_policy_plan_migrations: carries the model decision.
  policy_what_if  ///< hs_policy_what_if: carries the model decision; never applied or committed.
};

struct hs_decision {
  struct bind_entry {
    std::uint64_t job = 0;
    std::string job_name;
    std::uint32_t task = 0;
    std::uint32_t node = UINT32_MAX;
    std::string node_name;
    std::vector<std::uint32_t> gpus;
    std::uint32_t milli_per_gpu = 1000;  ///< The share of each GPU (1000: whole GPUs).
    std::int64_t gpu_memory_mib = 0;     ///< GPU memory claimed per GPU (0: none).
  };
  struct admission_entry {
    std::uint64_t job = 0;
    std::string queue;
    std::string flavor;
    bool borrowing = false;
  };
  struct preemption_entry {
    std::uint64_t job = 0;
    std::string job_name;
    std::string node_name;
    std::string queue;
    std::string reason;
    std::uint64_t preemptor = 0;
  };
  struct deferral_entry {
    std::uint64_t job = 0;
    std::string job_name;
    hs_defer_reason reason = HS_DEFER_INSUFFICIENT_CAPACITY;
    std::string message;
  };
  /// One released task (binds' shape: the node and GPUs it frees).
  using release_entry = bind_entry;
  /// One moved task (binds' shape: where it goes).
  using migration_entry = bind_entry;
  struct what_if_summary {
    bool admissible_now = false;
    bool needs_preemption = false;
    bool borrowing = false;
    std::uint64_t ahead_in_queue = 0;
    std::string flavor;
    std::string reason;
  };

  hs_decision_kind kind = hs_decision_kind::packer;
  const void* owner = nullptr;
  std::vector<bind_entry> binds;
  std::vector<admission_entry> admissions;
  std::vector<preemption_entry> preemptions;
  std::vector<deferral_entry> deferrals;
  std::vector<release_entry> releases;
  std::vector<migration_entry> migrations;
  std::vector<std::uint64_t> suspensions;  ///< Jobs to suspend.
  std::vector<std::uint64_t> resumes;      ///< Jobs to resume.

  // Payloads the commit functions need.
  std::optional<hetsched::hived::pod_request> hived_pod;
  std::optional<hetsched::hived::bind_info> hived_bind;
  std::optional<hetsched::admission_plan> plan;
  std::optional<what_if_summary> what_if;

  /// A HiveD what-if: the answer and, per placed pod, the arrays its hs_hived_placed_pod_t points
  /// into (filled once the answer is in place; the decision never moves).
  struct hived_what_if_payload {
    hetsched::hived::what_if_answer answer;
    std::vector<std::vector<std::uint32_t>> gpus;
    std::vector<std::vector<const char*>> physical_cells;
    std::vector<std::vector<const char*>> virtual_cells;
    std::vector<std::vector<const char*>> preassigned_types;
  };
  std::optional<hived_what_if_payload> hived_what_if;
  /// The model decision the entries were converted from (hs_policy_*: what hs_state_apply
  /// applies and hs_policy_commit commits).
  std::optional<hetsched::decision> model;
};

namespace hetsched::capi {
/// Appends the entries of model decision `d`, made against `state` (before it is applied), to
/// `out`: binds and migrations one entry per task (node index and name, node-local GPU indices in
/// the task's device order, the per-GPU share), preemptions, deferrals, suspensions, resumes, and
/// partial releases one entry per task with the node and GPUs the task holds in `state`
/// (ascending). The one conversion from hetsched::decision to the C decision.
void append_decision(const cluster_state& state, const decision& d, hs_decision& out);
}  // namespace hetsched::capi

/// A cluster state (state.h); registry policies (policy.cpp) decide over it.
struct hs_state {
  hetsched::cluster_state state;
};
