// SPDX-License-Identifier: MIT
// make_capacity_placer(): the packer and HiveD as placers behind capacity admission.
#include <memory>
#include <utility>

#include <hetsched/sim/capacity_placer.hpp>
#include <hetsched/sim/quota_placement.hpp>

namespace hetsched::sim {

std::string_view to_string(capacity_placer_kind kind) noexcept {
  switch (kind) {
    case capacity_placer_kind::packer: return "packer";
    case capacity_placer_kind::hived: return "hived";
  }
  return "unknown";
}

result<std::unique_ptr<capacity_placer>> make_capacity_placer(capacity_placer_kind kind,
                                                              const cluster& description,
                                                              const cluster_topology* topology,
                                                              node_fit fit) {
  if (kind == capacity_placer_kind::hived) {
    if (topology == nullptr)
      return make_error(errc::invalid_argument,
                        "capacity: placer=hived needs the cluster topology");
    hived_placement_params p;
    p.placer = true;
    auto h = hived_placement::create(description, topology, p);
    if (!h) return make_error(h.error().code, "capacity: placer=hived: {}", h.error().message);
    return std::unique_ptr<capacity_placer>(
        std::make_unique<capacity_placer_adapter<hived_placement>>(std::move(*h), "hived"));
  }
  indexed_packer packer = topology != nullptr ? indexed_packer(description, *topology, {fit})
                                              : indexed_packer(description, {fit});
  return std::unique_ptr<capacity_placer>(
      std::make_unique<capacity_placer_adapter<indexed_packer>>(std::move(packer), "packer"));
}

}  // namespace hetsched::sim
