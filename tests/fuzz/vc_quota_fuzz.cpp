// SPDX-License-Identifier: MIT
// libFuzzer target for parse_vc_node_table() and parse_vc_gpu_history().
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
    std::uint64_t sum = 0;
    for (const auto& v : t->vcs) {
      if (!v.nodes || v.gpus != *v.nodes * 8u || v.vc.empty()) std::abort();
      sum += v.gpus;
    }
    if (sum != t->total_gpus()) std::abort();
  }
  if (auto h = hetsched::workload::parse_vc_gpu_history(text, "fuzz.csv")) {
    for (const auto& day : h->days) {
      if (day.gpus.size() != h->vcs.size()) std::abort();
      auto q = h->quota_on(day.date);
      if (!q || q->vcs.size() != h->vcs.size()) std::abort();
    }
    if (!h->days.empty() && !h->latest()) std::abort();
  }
  return 0;
}
