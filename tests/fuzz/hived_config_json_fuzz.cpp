// SPDX-License-Identifier: MIT
// libFuzzer target for the HiveD config JSON importer (hived_config_json.hpp) and the config
// builder behind it (scheduler::create).
//
// Any input must give a config or an error, never a crash, hang or sanitizer report. Accepted
// inputs must round-trip: a parsed config written by to_json and parsed again is equal, and
// writing it again gives the same text. Every accepted config then goes through
// scheduler::create (with small limits, so that an input of a few bytes asking for a million
// GPUs is a quick named error, as it is at the default limits, rather than a slow build), and a
// scheduler it builds schedules, commits and releases a one-GPU pod of each VC: a bind answer
// must commit, the commit of the same record again must be refused, and the release must
// succeed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config_json.hpp>

namespace {

using namespace hetsched;

/// Limits well below the defaults (the same checks, reached with small inputs).
hived::config_limits fuzz_limits() {
  hived::config_limits limits;
  limits.max_levels = 16;
  limits.max_leaf_cells = 4096;
  limits.max_cells = 16384;
  return limits;
}

void exercise(const hived::config& cfg) {
  auto created = hived::scheduler::create(cfg, fuzz_limits());
  if (!created) return;
  hived::scheduler& s = *created;
  s.mark_all_nodes_healthy();
  int n = 0;
  for (const auto& vc : cfg.virtual_clusters) {
    if (++n > 4) break;
    hived::pod_request pod;
    pod.name = "fuzz-" + std::to_string(n);
    pod.vc = vc.name;
    pod.priority = 0;
    auto r = s.schedule(pod, hived::node_filter{}, hived::phase::preempting);
    if (!r || r->kind != hived::outcome::bind) continue;
    if (!s.add_allocated(pod, r->bind)) std::abort();
    if (s.add_allocated(pod, r->bind)) std::abort();  // a pod commits once
    if (!s.delete_allocated(pod, r->bind)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto cfg = hived::parse_config_json(text)) {
    const std::string written = hived::to_json(*cfg);
    auto again = hived::parse_config_json(written);
    if (!again || !(*again == *cfg) || hived::to_json(*again) != written) std::abort();
    exercise(*cfg);
  }
  return 0;
}
