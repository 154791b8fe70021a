// SPDX-License-Identifier: MIT
// The workloads a capacity_state (capacity_state.hpp) holds, and its internal records: what the
// admission cycle reads for every admitted and pending workload (src/policies/capacity_*.cpp).
// Callers need only pending_workload, admitted_workload and workload_of().
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <hetsched/model/ids.hpp>
#include <hetsched/model/job.hpp>
#include <hetsched/model/result.hpp>
#include <hetsched/policies/capacity_tree.hpp>
#include <hetsched/policies/drf.hpp>

namespace hetsched {

/// A workload waiting for admission. It is admitted whole (a gang is all or nothing), in one
/// flavor for all its resources.
struct pending_workload {
  job_id job;
  queue_id queue;
  tenant_id tenant;  ///< The user (YARN user limits, DRF order).
  std::int32_t priority = 0;
  std::int64_t submit_time = 0;
  drf_vector request;                ///< Resource name -> total amount of the whole gang.
  std::vector<std::string> flavors;  ///< Allowed flavors; empty: any flavor of the queue.
};

/// A workload holding quota.
struct admitted_workload {
  job_id job;
  queue_id queue;
  tenant_id tenant;
  std::int32_t priority = 0;
  std::int64_t admitted_at = 0;
  std::string flavor = "default";
  drf_vector request;
};

/// Returns the pending workload of `spec`: request "cpu" (milli-CPU), "memory" (MiB), "gpu"
/// (milli-GPU), "gpu_memory" (MiB) and extended resources, summed over all tasks; the allowed
/// flavor is the GPU type when every GPU role names the same type. Errors: those of
/// validate(job_spec); invalid_argument when GPU roles name different types.
[[nodiscard]] result<pending_workload> workload_of(const job_spec& spec, std::int64_t submit_time);

class capacity_state;

// ---- The state's internal records ----------------------------------------------------------

struct capacity_admitted_record {
  admitted_workload w;
  std::vector<std::pair<std::uint32_t, std::int64_t>> use;  ///< (fr, amount), amount > 0.
  job_id preemptor = job_id::invalid();                     ///< Valid while a victim in flight.
  std::uint64_t fr_mask = 0;    ///< Bit f set when it uses fr f (f >= 64 sets all bits).
  std::int64_t order_time = 0;  ///< Queue-order time (queue_order_time()).
  std::size_t pos_in_queue = 0;
  bool live = false;
};
struct capacity_pending_key {
  std::int64_t k1 = 0;  ///< 0 for FIFO orders, -priority otherwise.
  std::int64_t submit = 0;
  job_id job;
  friend auto operator<=>(const capacity_pending_key&, const capacity_pending_key&) = default;
};
/// (flavor, (fr, amount) list) for each allowed flavor declaring every resource, in the
/// queue's flavor order.
using capacity_flavor_uses =
    std::vector<std::pair<std::uint32_t, std::vector<std::pair<std::uint32_t, std::int64_t>>>>;
struct capacity_pending_record {
  pending_workload w;
  capacity_pending_key key;
  bool preemptor = false;  ///< Planned preemptions for it (Kueue's preemptor-in-progress).
  /// Resolved once at submit and shared by every pending workload with the same value (few
  /// distinct request shapes: the admission walk reads them for every pending workload).
  const capacity_flavor_uses* uses = nullptr;
};
/// A pending workload in its queue's order; rec is nullptr once it left (a tombstone). It
/// repeats what the admission walk reads for every pending workload (job id in the key, the
/// shared uses), so a workload that does not fit costs no visit to its record.
struct capacity_pending_entry {
  capacity_pending_key key;
  const capacity_pending_record* rec = nullptr;
  const capacity_flavor_uses* uses = nullptr;
};
/// The pending workloads of one queue in key order, stored flat so that an admission cycle
/// walks them sequentially (no tree nodes, no hash lookups): a sorted main run with tombstones
/// and a sorted run of recent insertions, merged into the main run once it holds more than
/// max(64, 2 * sqrt(main)) entries (O(sqrt(n)) amortised per insertion; removal O(log n) plus
/// a compaction when tombstones outnumber live entries). Read both runs with for_each() or a
/// two-way merge of main() and recent() that skips tombstones.
class capacity_pending_order {
 public:
  void insert(const capacity_pending_entry& entry);
  void erase(const capacity_pending_key& key);
  [[nodiscard]] std::size_t size() const noexcept { return live_; }
  [[nodiscard]] bool empty() const noexcept { return live_ == 0; }
  /// The sorted main run; entries with rec == nullptr are tombstones.
  [[nodiscard]] std::span<const capacity_pending_entry> main() const noexcept { return main_; }
  /// The sorted run of recent insertions (no tombstones).
  [[nodiscard]] std::span<const capacity_pending_entry> recent() const noexcept { return recent_; }
  /// Returns the number of entries whose key is below `key`.
  [[nodiscard]] std::size_t count_before(const capacity_pending_key& key) const;
  /// Calls fn(entry) for the entries in key order while it returns true.
  template <typename Fn>
  void for_each_while(Fn fn) const {
    auto a = main_.begin();
    auto b = recent_.begin();
    for (;;) {
      while (a != main_.end() && a->rec == nullptr) ++a;
      if (a == main_.end() && b == recent_.end()) return;
      if (b == recent_.end() || (a != main_.end() && a->key < b->key)) {
        if (!fn(*a++)) return;
      } else {
        if (!fn(*b++)) return;
      }
    }
  }
  /// Calls fn(entry) for every entry in key order.
  template <typename Fn>
  void for_each(Fn fn) const {
    for_each_while([&](const capacity_pending_entry& e) {
      fn(e);
      return true;
    });
  }

 private:
  friend class capacity_state;  // re-points the entries of a copy
  std::vector<capacity_pending_entry> main_, recent_;
  std::size_t live_ = 0;  ///< Entries that are not tombstones.
  std::size_t dead_ = 0;  ///< Tombstones in main_.
};
struct capacity_queue_record {
  std::vector<std::uint32_t> admitted;  ///< Slots of admitted workloads.
  capacity_pending_order pending;
  std::map<tenant_id, std::set<capacity_pending_key>> by_tenant;  ///< drf queues only.
  std::set<capacity_pending_key> preemptors;  ///< Pending workloads that planned preemptions.
};

}  // namespace hetsched
