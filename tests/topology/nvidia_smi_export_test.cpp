// SPDX-License-Identifier: MIT
// to_nvidia_smi_topo: every template prints a matrix that the importer reads back unchanged.
#include <gtest/gtest.h>

#include <string>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;

TEST(NvidiaSmiExport, EveryTemplateRoundTripsThroughTheImporter) {
  for (node_template t : all_node_templates()) {
    auto topo = make_node_template(t);
    ASSERT_THAT(topo, IsOk());
    auto text = to_nvidia_smi_topo(*topo);
    ASSERT_THAT(text, IsOk());
    auto back = import_nvidia_smi_topo(*text);
    ASSERT_THAT(back, IsOk()) << to_string(t);
    const auto& a = topo->views();
    const auto& b = back->views();
    ASSERT_EQ(a.endpoints().size(), b.endpoints().size()) << to_string(t);
    for (std::size_t i = 0; i < a.endpoints().size(); ++i) {
      for (std::size_t j = 0; j < a.endpoints().size(); ++j) {
        EXPECT_EQ(a.relation(i, j).token(), b.relation(i, j).token())
            << to_string(t) << " " << i << "," << j;
      }
    }
    for (std::size_t g = 0; g < a.gpu_count(); ++g) {
      EXPECT_EQ(a.gpu_numa(g), b.gpu_numa(g)) << to_string(t) << " GPU" << g;
    }
    // The NIC Legend carries the NICs' names back.
    for (std::size_t n = 0; n < a.nic_count(); ++n) {
      EXPECT_EQ(topo->vertex(topo->nics()[n]).name, back->vertex(back->nics()[n]).name);
    }
  }
}

TEST(NvidiaSmiExport, PrintsTheDgxA100Row) {
  auto topo = make_node_template(node_template::dgx_a100);
  ASSERT_THAT(topo, IsOk());
  auto text = to_nvidia_smi_topo(*topo, false);
  ASSERT_THAT(text, IsOk());
  // GPU0: NV12 to every GPU, PXB to its two NICs, SYS to the rest, cores 48-63,176-191 on NUMA 3.
  EXPECT_NE(text->find("GPU0\t X \tNV12\tNV12\tNV12\tNV12\tNV12\tNV12\tNV12\tPXB\tPXB\tSYS"),
            std::string::npos);
  EXPECT_NE(text->find("\t48-63,176-191\t3\n"), std::string::npos);
  EXPECT_EQ(text->find("Legend"), std::string::npos);
}

TEST(NvidiaSmiExport, RefusesPairsNoTokenCanSay) {
  // 300 bonded NVLinks: topo -m tokens stop at NV255.
  node_topology_builder b("wide");
  topo_vertex g;
  g.kind = vertex_kind::gpu;
  g.parent = b.root();
  g.name = "GPU0";
  g.index = 0;
  const auto g0 = b.add(g, pcie_link(4, 16));
  g.name = "GPU1";
  g.index = 1;
  const auto g1 = b.add(g, pcie_link(4, 16));
  b.connect(g0, g1, nvlink_link(200, 4));
  b.connect(g0, g1, nvlink_link(100, 4));
  auto t = std::move(b).build();
  ASSERT_THAT(t, IsOk());
  EXPECT_THAT(to_nvidia_smi_topo(*t), HasErrc(errc::failed_precondition));
}

}  // namespace
}  // namespace hetsched
