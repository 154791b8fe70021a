// A consumer of the installed package: builds a built-in template and checks a derived view
// (hetsched::hetsched), makes a policy from the registry (hetsched::hetsched) and runs the
// simulator on an empty trace with it (hetsched::sim).
#include <cstdio>
#include <memory>

#include <hetsched/hetsched.hpp>
#include <hetsched/sim.hpp>
#include <hetsched/topology/hwloc_import.hpp>

int main() {
  auto topo = hetsched::make_node_template(hetsched::node_template::dgx_a100);
  if (!topo || topo->gpus().size() != 8) return 1;
  if (topo->views().relation(0, 1).token() != "NV12") return 2;
  auto built =
      hetsched::cluster_builder("c").add_nodes(hetsched::node_template::dgx_a100, 2, "n").build();
  if (!built) return 3;
  auto description = hetsched::to_cluster(*built);
  if (!description) return 3;
  auto shared = std::make_shared<const hetsched::cluster>(std::move(*description));
  auto policy = hetsched::make_policy("fifo+hived", *shared, &*built);
  if (!policy) return 4;
  auto run = hetsched::sim::simulate(shared, hetsched::workload::trace{}, *policy->order,
                                     *policy->place, hetsched::sim::sim_params{});
  if (!run) return 5;
  std::printf("hetsched %s: %zu GPUs, GPU0-GPU1 %s\n", hetsched::version(), topo->gpus().size(),
              topo->views().relation(0, 1).token().c_str());
  return 0;
}
