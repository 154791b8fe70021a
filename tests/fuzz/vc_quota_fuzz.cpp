// SPDX-License-Identifier: MIT
// libFuzzer target for parse_vc_node_table(), parse_vc_gpu_history() and parse_vc_quota_file().
//
// Accepted tables must be self-consistent: node tables give nodes * gpus_per_node GPUs per VC,
// and every day of a history has one count per VC and yields a quota table with those counts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <hetsched/workload/vc_quota.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto t = hetsched::workload::parse_vc_node_table(text, "fuzz.csv")) {
    if (t->vcs.empty()) std::abort();  // an empty table (or one cut after its header) is refused
    std::uint64_t sum = 0;
    for (const auto& v : t->vcs) {
      if (!v.nodes || v.gpus != *v.nodes * 8u || v.vc.empty()) std::abort();
      sum += v.gpus;
    }
    if (sum != t->total_gpus()) std::abort();
  }
  if (auto h = hetsched::workload::parse_vc_gpu_history(text, "fuzz.csv")) {
    if (h->days.empty()) std::abort();
    for (const auto& day : h->days) {
      if (day.gpus.size() != h->vcs.size()) std::abort();
      auto q = h->quota_on(day.date);
      if (!q || q->vcs.size() != h->vcs.size()) std::abort();
    }
    if (!h->days.empty() && !h->latest()) std::abort();
    using selector = hetsched::workload::vc_day_selector;
    for (auto which : {selector::kind::max, selector::kind::mean}) {
      auto q = h->select(selector{which, {}});
      if (h->days.empty() ? q.has_value() : (!q || q->vcs.size() != h->vcs.size())) std::abort();
    }
  }
  (void)hetsched::workload::parse_vc_quota_file(text, "fuzz.csv");
  return 0;
}
