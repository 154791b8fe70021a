// A consumer of the installed package: builds a built-in template and checks a derived view
// (hetsched::hetsched), and parses a simulator policy (hetsched::sim).
#include <cstdio>

#include <hetsched/hetsched.hpp>
#include <hetsched/sim.hpp>
#include <hetsched/topology/hwloc_import.hpp>

int main() {
  auto topo = hetsched::make_node_template(hetsched::node_template::dgx_a100);
  if (!topo || topo->gpus().size() != 8) return 1;
  if (topo->views().relation(0, 1).token() != "NV12") return 2;
  if (!hetsched::sim::parse_policy_spec("fifo+packer")) return 3;
  std::printf("hetsched %s: %zu GPUs, GPU0-GPU1 %s\n", hetsched::version(), topo->gpus().size(),
              topo->views().relation(0, 1).token().c_str());
  return 0;
}
