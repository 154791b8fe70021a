// SPDX-License-Identifier: MIT
// The C API's registry of live handles: what makes a double free, a use after free or a handle of
// the wrong type a named error (HS_INVALID_HANDLE) instead of undefined behaviour.
//
// Every object the library hands out (clusters, decisions, packers, HiveD configs and schedulers,
// capacity specs and states, cluster states, registry policies) is registered here when it is
// created and retired when it is freed; every entry point looks its handle arguments up before it
// touches them. The lookup compares addresses only: it never reads the memory a handle points to,
// so a stale handle is refused without a read of freed memory (ASan stays quiet). The memory of a
// freed handle is not given back to the allocator at once: the most recently freed handles
// (quarantine_capacity of them) keep their memory, so a new handle cannot get a stale one's
// address while it is quarantined.
// Limits: a handle freed longer ago, whose address the allocator later gives to a new handle of
// the same type, is indistinguishable from that new handle; and a free racing with another call
// on the same handle (a caller bug: free mutates) is not detected.
//
// The registry is the C API library's only global: a mutex-protected hash map, created on first
// use and never destroyed (calls made during static destruction still find it). It stores
// addresses disguised (XOR with a constant) so that LeakSanitizer still reports handles the
// caller never freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

#include <hetsched/c/capacity.h>
#include <hetsched/c/cluster.h>
#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>
#include <hetsched/c/hived.h>
#include <hetsched/c/packer.h>
#include <hetsched/c/policy.h>
#include <hetsched/c/state.h>

#include "c_internal.hpp"

namespace hetsched::capi {

/// The types of handle the library hands out.
enum class handle_kind : std::uint8_t {
  cluster,
  decision,
  packer,
  hived_config,
  hived,
  capacity_spec,
  capacity,
  state,
  policy
};

/// Returns the C type name of `kind`, e.g. "hs_cluster_t".
[[nodiscard]] const char* type_name(handle_kind kind) noexcept;

template <typename T>
struct handle_traits;
template <>
struct handle_traits<hs_cluster> {
  static constexpr handle_kind kind = handle_kind::cluster;
};
template <>
struct handle_traits<hs_decision> {
  static constexpr handle_kind kind = handle_kind::decision;
};
template <>
struct handle_traits<hs_packer> {
  static constexpr handle_kind kind = handle_kind::packer;
};
template <>
struct handle_traits<hs_hived_config> {
  static constexpr handle_kind kind = handle_kind::hived_config;
};
template <>
struct handle_traits<hs_hived> {
  static constexpr handle_kind kind = handle_kind::hived;
};
template <>
struct handle_traits<hs_capacity_spec> {
  static constexpr handle_kind kind = handle_kind::capacity_spec;
};
template <>
struct handle_traits<hs_capacity> {
  static constexpr handle_kind kind = handle_kind::capacity;
};
template <>
struct handle_traits<hs_state> {
  static constexpr handle_kind kind = handle_kind::state;
};
template <>
struct handle_traits<hs_policy> {
  static constexpr handle_kind kind = handle_kind::policy;
};

/// True for a pointer to a handle type (cv-qualified or not): what HS_CAPI_REQUIRE refuses.
template <typename P>
concept handle_pointer = std::is_pointer_v<P> && requires {
  handle_traits<std::remove_cv_t<std::remove_pointer_t<P>>>::kind;
};

/// How many freed handles keep their memory (see the file comment).
inline constexpr std::size_t quarantine_capacity = 1024;

/// What the registry knows about an address.
enum class handle_state : std::uint8_t {
  live,      ///< A live handle of the expected type.
  freed,     ///< A handle that was freed (and is still quarantined).
  mistyped,  ///< A live handle of another type (`actual`).
  unknown    ///< Nothing the library handed out, or freed long ago.
};

struct handle_lookup {
  handle_state state = handle_state::unknown;
  handle_kind actual = handle_kind::cluster;  ///< The type it has or had (live, freed, mistyped).
};

/// Registers `address` as a live handle of `kind`. Throws std::bad_alloc.
void register_handle(const void* address, handle_kind kind);
/// Returns what the registry knows about `address` as a handle of `kind`.
[[nodiscard]] handle_lookup lookup_handle(const void* address, handle_kind kind) noexcept;
/// Marks `address` freed if it is a live handle of `kind` (the caller then destroys the object and
/// quarantines its memory); returns what it was.
[[nodiscard]] handle_lookup retire_handle(const void* address, handle_kind kind) noexcept;
/// Keeps the memory of a destroyed handle (`size` bytes from operator new) out of the allocator;
/// frees the memory of the oldest quarantined handle beyond quarantine_capacity.
void quarantine_memory(void* memory, std::size_t size) noexcept;
/// Returns HS_INVALID_HANDLE after storing a message naming argument `name` of the running
/// function, the expected type and what the registry knows about the address.
hs_status invalid_handle(const char* name, handle_kind expected, const handle_lookup& found);

/// Registers the object of `object` and returns it, released, for the caller.
template <typename T>
[[nodiscard]] T* adopt(std::unique_ptr<T> object) {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  register_handle(object.get(), handle_traits<T>::kind);
  return object.release();
}

/// Stores the invalid_handle() message for argument `name` of public function `function`
/// (for functions that return no status: frees, counts, digests). Never throws.
void report_invalid_handle(const char* function, const char* name, handle_kind expected,
                           const handle_lookup& found) noexcept;

/// For functions that cannot fail (counts, digests): returns true for a live handle of type T;
/// false for NULL, and false after report_invalid_handle() for anything else.
template <typename T>
[[nodiscard]] bool readable(const T* handle, const char* function, const char* name) noexcept {
  if (handle == nullptr) return false;
  const handle_lookup found = lookup_handle(handle, handle_traits<T>::kind);
  if (found.state == handle_state::live) return true;
  report_invalid_handle(function, name, handle_traits<T>::kind, found);
  return false;
}

/// Returns HS_OK for a live handle, else HS_INVALID_ARGUMENT (NULL) or HS_INVALID_HANDLE, with
/// the message naming argument `name`.
template <typename T>
[[nodiscard]] hs_status check_handle(const T* handle, const char* name) {
  if (handle == nullptr) return null_argument(name);
  const handle_lookup found = lookup_handle(handle, handle_traits<T>::kind);
  if (found.state == handle_state::live) return HS_OK;
  return invalid_handle(name, handle_traits<T>::kind, found);
}

/// Frees `handle` for hs_*_free `function`: no-op for NULL; a handle that is not live of type T
/// is left alone and the thread's last error names the problem (HS_INVALID_HANDLE's message).
template <typename T>
void destroy_handle(T* handle, const char* function, const char* name) noexcept {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  if (handle == nullptr) return;
  const handle_lookup found = retire_handle(handle, handle_traits<T>::kind);
  if (found.state != handle_state::live) {
    report_invalid_handle(function, name, handle_traits<T>::kind, found);
    return;
  }
  handle->~T();
  quarantine_memory(handle, sizeof(T));
}

/// Checks a handle argument: `return` its error unless `ptr` is a live handle of its type.
#define HS_CAPI_REQUIRE_HANDLE(ptr)                                                       \
  if (auto hs_capi_s_ = ::hetsched::capi::check_handle((ptr), #ptr); hs_capi_s_ != HS_OK) \
  return hs_capi_s_

}  // namespace hetsched::capi
