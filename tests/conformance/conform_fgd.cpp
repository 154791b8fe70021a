// SPDX-License-Identifier: MIT
// Conformance runner for the fgd vector family (fgd_replay/1, sim/fgd_replay.hpp).
//
// The file gives the policy, the nodes (in the seeded order, names prefixed NNNN-), the target
// workload ("typical_pods") and every arrival in order with what the reference recorded after
// it (parse_fgd_replay_vector()). The runner replays all arrivals once with run_fgd_replay() and
// reports one case per block of 100 arrivals ("arrivals[a..b]"): it passes when every arrival of
// the block agrees with its record (compare_fgd_outcome(): status, node, GPU set, used_gpu_milli
// and used_nodes exactly, frag_milli within 0.05 and the percentages within 0.01, the file's
// tolerances). A failed block names its first differing arrival and field.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include <hetsched/sim/fgd_replay.hpp>

#include "conform.hpp"

namespace hetsched::conform {

void run_fgd(const vector_value& doc, reporter& out) {
  if (list_cases(doc, "arrivals", "fgd", out).empty()) return;
  // The reader takes text; the runner has the document parsed already, so write it back.
  auto v = sim::parse_fgd_replay_vector(jsonio::to_string(doc.json()));
  if (!v) return out.fail("fgd", v.error().message);
  auto run = sim::run_fgd_replay(v->nodes, v->arrivals, v->workload, v->policy, v->seed);
  if (!run) return out.fail("fgd", run.error().message);
  constexpr std::size_t block_size = 100;
  for (std::size_t first = 0; first < v->arrivals.size(); first += block_size) {
    const std::size_t last = std::min(first + block_size, v->arrivals.size()) - 1;
    const std::string id = fmt::format("arrivals[{}..{}]", first, last);
    std::optional<std::string> diff;
    for (std::size_t i = first; i <= last && !diff; ++i) {
      if (auto d = sim::compare_fgd_outcome(run->outcomes[i], v->expected[i], v->nodes,
                                            v->tol_frag_milli, v->tol_pct))
        diff = fmt::format("arrival {} '{}': {}", i, v->arrivals[i].name, *d);
    }
    if (diff) {
      out.fail(id, *diff);
    } else {
      out.pass(id, fmt::format("{} arrivals", last - first + 1));
    }
  }
}

}  // namespace hetsched::conform
