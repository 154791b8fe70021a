// SPDX-License-Identifier: MIT
// import_topology (import.hpp): the one entry point for topology text detects each format and
// passes the options its importer has; hwloc XML needs the hwloc importer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/json.hpp>
#include <hetsched/topology/templates.hpp>
#ifdef HETSCHED_HAVE_HWLOC
#  include <hetsched/topology/hwloc_import.hpp>
#endif

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::hetsched::testing::read_shared;

TEST(ImportTopology, DetectsEachFormatAndPassesItsOptions) {
  topology_import_options o;
  o.name = "box";
  o.gpu_model = gpu_type("V100-SXM2-16GB");
  const std::string smi =
      read_shared("data/topologies/nvidia-smi-topo/dgx1v-like_v100-sxm2x8_dlperf.txt");
  auto a = import_topology(smi, o);
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->name(), "box");
  nvidia_smi_import_options so;
  so.name = "box";
  so.gpu_model = o.gpu_model;
  EXPECT_EQ(*a, import_nvidia_smi_topo(smi, so).value());

  const std::string nccl = read_shared("data/topologies/nccl-topo-xml/azure-ndv4-topo.xml");
  auto b = import_topology(nccl, {});
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->name(), "nccl");  // the importer's default name
  EXPECT_EQ(*b, import_nccl_xml(nccl).value());

  const node_topology dgx = make_node_template(node_template::dgx_a100).value();
  const std::string json = to_json(dgx);
  auto c = import_topology(json, o);  // a JSON document carries its own name
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(*c, dgx);
}

TEST(ImportTopology, PartialMatricesOnlyWithAllowPartial) {
  const std::string partial =
      read_shared("data/topologies/nvidia-smi-topo/dgx-a100-320gb_dcgm-issue149_PARTIAL.txt");
  EXPECT_THAT(import_topology(partial, {}), HasErrc(errc::invalid_argument));
  topology_import_options o;
  o.allow_partial = true;
  EXPECT_THAT(import_topology(partial, o), IsOk());
}

TEST(ImportTopology, UnknownTextAndHwlocWithoutItsImporterAreNamed) {
  EXPECT_THAT(import_topology("hello world", {}),
              ErrorContains("unrecognised topology text: expected hwloc XML"));
  const std::string hwloc = read_shared("data/topologies/hwloc/nvidiaDGX2.xml");
  auto r = import_topology(hwloc, {});
  EXPECT_THAT(r, HasErrc(errc::failed_precondition));
  EXPECT_THAT(r, ErrorContains("hwloc XML needs the hetsched::hwloc importer"));
#ifdef HETSCHED_HAVE_HWLOC
  topology_import_options o;
  o.name = "dgx2";
  auto h = import_topology_with_hwloc(hwloc, o);
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(*h, import_hwloc_xml(hwloc, {.name = "dgx2"}).value());
  EXPECT_THAT(import_topology_with_hwloc("hello world", {}),
              ErrorContains("unrecognised topology text"));
#endif
}

}  // namespace
}  // namespace hetsched
