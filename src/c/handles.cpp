// SPDX-License-Identifier: MIT
// C API: the registry of live handles and the quarantine of freed ones (handles.hpp).
#include "handles.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace hetsched::capi {
namespace {

/// Addresses are stored XOR this mask: not pointers to LeakSanitizer, so a handle the caller
/// never frees is still reported as leaked.
constexpr std::uintptr_t disguise_mask = static_cast<std::uintptr_t>(0xa5c3'5a3c'9e1f'e1f9ULL);

std::uintptr_t disguise(const void* address) noexcept {
  return reinterpret_cast<std::uintptr_t>(address) ^ disguise_mask;
}

struct entry {
  handle_kind kind = handle_kind::cluster;
  bool live = true;
};

struct quarantined {
  void* memory = nullptr;
  std::size_t size = 0;
};

class registry {
 public:
  void add(const void* address, handle_kind kind) {
    const std::unique_lock lock(mutex_);
    // A quarantined address is never handed out again while its entry exists, so an existing
    // entry here would be a bug; overwrite it rather than keep a wrong type.
    entries_.insert_or_assign(disguise(address), entry{kind, true});
  }

  handle_lookup find(const void* address, handle_kind kind) const noexcept {
    const std::shared_lock lock(mutex_);
    return classify(address, kind);
  }

  handle_lookup retire(const void* address, handle_kind kind) noexcept {
    const std::unique_lock lock(mutex_);
    const handle_lookup found = classify(address, kind);
    if (found.state == handle_state::live) entries_.find(disguise(address))->second.live = false;
    return found;
  }

  void quarantine(void* memory, std::size_t size) noexcept {
    quarantined evicted{memory, size};  // freed below unless the quarantine takes it
    {
      const std::unique_lock lock(mutex_);
      bool held = false;
      try {
        held_.push_back(evicted);
        held = true;
      } catch (const std::bad_alloc&) {
        // No room to remember it: free it now (its address may then be reused sooner).
      }
      if (held) {
        if (held_.size() <= quarantine_capacity) return;
        evicted = held_.front();
        held_.pop_front();
      }
      entries_.erase(disguise(evicted.memory));
    }
    ::operator delete(evicted.memory, evicted.size);
  }

 private:
  handle_lookup classify(const void* address, handle_kind kind) const noexcept {
    const auto it = entries_.find(disguise(address));
    if (it == entries_.end()) return {handle_state::unknown, kind};
    if (!it->second.live) return {handle_state::freed, it->second.kind};
    if (it->second.kind != kind) return {handle_state::mistyped, it->second.kind};
    return {handle_state::live, kind};
  }

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::uintptr_t, entry> entries_;
  std::deque<quarantined> held_;  ///< Oldest first.
};

registry& the_registry() {
  // Never destroyed: hs_*_free called from a static destructor still finds it.
  static registry* const instance = new registry();
  return *instance;
}

}  // namespace

const char* type_name(handle_kind kind) noexcept {
  switch (kind) {
    case handle_kind::cluster: return "hs_cluster_t";
    case handle_kind::decision: return "hs_decision_t";
    case handle_kind::packer: return "hs_packer_t";
    case handle_kind::hived_config: return "hs_hived_config_t";
    case handle_kind::hived: return "hs_hived_t";
    case handle_kind::capacity_spec: return "hs_capacity_spec_t";
    case handle_kind::capacity: return "hs_capacity_t";
    case handle_kind::state: return "hs_state_t";
    case handle_kind::policy: return "hs_policy_t";
  }
  return "hs_handle";
}

void register_handle(const void* address, handle_kind kind) { the_registry().add(address, kind); }

handle_lookup lookup_handle(const void* address, handle_kind kind) noexcept {
  return the_registry().find(address, kind);
}

handle_lookup retire_handle(const void* address, handle_kind kind) noexcept {
  return the_registry().retire(address, kind);
}

void quarantine_memory(void* memory, std::size_t size) noexcept {
  the_registry().quarantine(memory, size);
}

hs_status invalid_handle(const char* name, handle_kind expected, const handle_lookup& found) {
  std::string why;
  switch (found.state) {
    case handle_state::freed: why = "was already freed"; break;
    case handle_state::mistyped:
      why = fmt::format("is an {}, not an {}", type_name(found.actual), type_name(expected));
      break;
    case handle_state::unknown:
      why = fmt::format("is not a live {} (freed, or never returned by hetsched)",
                        type_name(expected));
      break;
    case handle_state::live: why = "is live"; break;
  }
  return fail(HS_INVALID_HANDLE,
              fmt::format("{}: argument '{}' {}", current_function_name(), name, why));
}

void report_invalid_handle(const char* function, const char* name, handle_kind expected,
                           const handle_lookup& found) noexcept {
  set_function(function);
  try {
    static_cast<void>(invalid_handle(name, expected, found));
  } catch (...) {
    static_cast<void>(fail(HS_INVALID_HANDLE, std::string()));
  }
}

}  // namespace hetsched::capi
