// SPDX-License-Identifier: MIT
// Tests of the hwloc importer on the saved hwloc 2.x XML files and on the local machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/hwloc_import.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::hetsched::testing::read_shared;

const std::vector<std::string> kHwlocFiles = {
    "nvidiaDGX2.xml",  "32em64t-2n8c2t-pci-normalio.xml", "24em64t-2n6c2t-pci.xml",
    "devel09-pci.xml", "16amd64-4distances.xml",          "fakeheterodistances.xml",
};

std::string hwloc_file(const std::string& name) {
  return read_shared("data/topologies/hwloc/" + name);
}

node_topology load(const std::string& name) {
  auto t = import_hwloc_xml(hwloc_file(name), hwloc_import_options{name});
  EXPECT_THAT(t, IsOk());
  return t ? *t : node_topology();
}

// The vertex of kind `kind` above `v` in the locality tree, or invalid().
vertex_id ancestor(const node_topology& t, vertex_id v, vertex_kind kind) {
  for (vertex_id a = t.vertex(v).parent; a.valid(); a = t.vertex(a).parent) {
    if (t.vertex(a).kind == kind) return a;
  }
  return vertex_id::invalid();
}

std::vector<link_ref> links_of_kind(const node_topology& t, link_kind kind) {
  std::vector<link_ref> out;
  for (const auto& l : t.links()) {
    if (l.link.kind == kind) out.push_back(l);
  }
  return out;
}

// Replaces the first occurrence of `from` at or after the first `anchor` in `text`.
std::string replace_after(std::string text, const std::string& anchor, const std::string& from,
                          const std::string& to) {
  const auto at = text.find(from, text.find(anchor));
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// `bits` as hwloc writes a bitmap: 32-bit words, most significant first, zero words between
// others elided (an empty field) and a final zero word written "0x0".
std::string hwloc_bitmap_text(const std::vector<unsigned>& bits) {
  std::vector<std::uint32_t> words(1, 0);
  for (const unsigned b : bits) {
    if (b / 32 >= words.size()) words.resize(b / 32 + 1, 0);
    words[b / 32] |= std::uint32_t{1} << (b % 32);
  }
  std::string out;
  for (std::size_t i = words.size(); i-- > 0;) {
    if (i + 1 < words.size()) out += ',';
    if (words[i] != 0) {
      char word[11];
      std::snprintf(word, sizeof word, "0x%08x", static_cast<unsigned>(words[i]));
      out += word;
    } else if (i == 0) {
      out += "0x0";
    }
  }
  return out;
}

// A two-socket machine whose PU numbers have gaps (0,1,8,9,16,17,24,25 and 80,81,88,89,96,97,
// 104,105): its sets have elided zero words, e.g. the machine's "0x00000303,0x03030000,,
// 0x03030303", as hwloc 2.9 exports such a machine (checked with lstopo-no-graphics -i).
std::string gapped_machine_xml() {
  const std::vector<std::vector<unsigned>> packages = {{0, 1, 8, 9, 16, 17, 24, 25},
                                                       {80, 81, 88, 89, 96, 97, 104, 105}};
  std::vector<unsigned> all;
  for (const auto& p : packages) all.insert(all.end(), p.begin(), p.end());
  const auto sets = [](const std::string& cpuset, const std::string& nodeset) {
    return "cpuset=\"" + cpuset + "\" complete_cpuset=\"" + cpuset + "\" nodeset=\"" + nodeset +
           "\" complete_nodeset=\"" + nodeset + "\"";
  };
  const std::string machine = hwloc_bitmap_text(all);
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n  <object type=\"Machine\" os_index=\"0\" " +
      sets(machine, "0x00000003") + " allowed_cpuset=\"" + machine +
      "\" allowed_nodeset=\"0x00000003\" gp_index=\"1\">\n";
  int gp = 2;
  for (unsigned p = 0; p < packages.size(); ++p) {
    const std::string set = hwloc_bitmap_text(packages[p]);
    const std::string node = hwloc_bitmap_text({p});
    xml += "    <object type=\"Package\" os_index=\"" + std::to_string(p) + "\" " +
           sets(set, node) + " gp_index=\"" + std::to_string(gp++) + "\">\n";
    xml += "      <object type=\"NUMANode\" os_index=\"" + std::to_string(p) + "\" " +
           sets(set, node) + " gp_index=\"" + std::to_string(gp++) +
           "\" local_memory=\"1073741824\"/>\n";
    for (const unsigned pu : packages[p]) {
      xml += "      <object type=\"PU\" os_index=\"" + std::to_string(pu) + "\" " +
             sets(hwloc_bitmap_text({pu}), node) + " gp_index=\"" + std::to_string(gp++) + "\"/>\n";
    }
    xml += "    </object>\n";
  }
  return xml + "  </object>\n</topology>\n";
}

TEST(HwlocImport, LoadsEverySavedFile) {
  for (const auto& name : kHwlocFiles) {
    SCOPED_TRACE(name);
    auto t = import_hwloc_xml(hwloc_file(name), hwloc_import_options{name});
    ASSERT_THAT(t, IsOk());
    EXPECT_EQ(t->name(), name);
    EXPECT_EQ(t->vertex(t->root()).kind, vertex_kind::machine);
  }
}

TEST(HwlocImport, IsDeterministic) {
  for (const auto& name : kHwlocFiles) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(load(name) == load(name));
  }
}

TEST(HwlocImport, Dgx2HasSixteenGpusTwelveNvswitchesTwoPackages) {
  const node_topology t = load("nvidiaDGX2.xml");
  // 16 V100-SXM3 (nvml0..15), 12 NVSwitch PCI devices, 2 sockets with one NUMA node each.
  EXPECT_EQ(t.gpus().size(), 16U);
  EXPECT_EQ(t.nvswitches().size(), 12U);
  EXPECT_EQ(t.vertices_of(vertex_kind::package).size(), 2U);
  EXPECT_EQ(t.vertices_of(vertex_kind::numa_node).size(), 2U);
  EXPECT_EQ(t.nics().size(), 0U);
  for (std::size_t i = 0; i < t.gpus().size(); ++i) {
    const topo_vertex& g = t.vertex(t.gpus()[i]);
    EXPECT_EQ(g.name, "GPU" + std::to_string(i));
    EXPECT_EQ(g.index, static_cast<std::int32_t>(i));
    EXPECT_EQ(g.model, normalize_gpu_model("Tesla V100-SXM3-32GB-H"));
  }
  EXPECT_EQ(t.vertex(t.gpus()[0]).pci_bus_id, "0000:34:00.0");
  EXPECT_EQ(t.vertex(t.gpus()[15]).pci_bus_id, "0000:e7:00.0");
  EXPECT_TRUE(t.find("NVSwitch0").has_value());
  EXPECT_TRUE(t.find("NVSwitch11").has_value());
  // NVSwitches in bus-id order: the first sits at 0000:61:00.0.
  EXPECT_EQ(t.vertex(*t.find("NVSwitch0")).pci_bus_id, "0000:61:00.0");
}

TEST(HwlocImport, Dgx2PcieRelationsFollowTheSwitchTree) {
  const node_topology t = load("nvidiaDGX2.xml");
  const node_views& v = t.views();
  ASSERT_EQ(v.gpu_count(), 16U);
  // {0,1} share a leaf switch, {0..3} one top switch, {0,4} two host bridges of socket 0,
  // {0,8} different sockets.
  EXPECT_EQ(v.relation(0, 1).pcie, pcie_relation::pix);
  EXPECT_EQ(v.relation(2, 3).pcie, pcie_relation::pix);
  EXPECT_EQ(v.relation(0, 2).pcie, pcie_relation::pxb);
  EXPECT_EQ(v.relation(1, 3).pcie, pcie_relation::pxb);
  EXPECT_EQ(v.relation(0, 4).pcie, pcie_relation::node);
  EXPECT_EQ(v.relation(0, 8).pcie, pcie_relation::sys);
  EXPECT_EQ(v.relation(8, 9).pcie, pcie_relation::pix);
  EXPECT_EQ(v.relation(0, 0).pcie, pcie_relation::self);
  // GPU0 and GPU1 are direct children of one pcie_switch.
  const vertex_id g0 = t.gpus()[0];
  const vertex_id g1 = t.gpus()[1];
  EXPECT_EQ(t.vertex(g0).parent, t.vertex(g1).parent);
  EXPECT_EQ(t.vertex(t.vertex(g0).parent).kind, vertex_kind::pcie_switch);
}

TEST(HwlocImport, Dgx2EveryGpuPairHasSixNvlinksThroughTheFabric) {
  const node_topology t = load("nvidiaDGX2.xml");
  const node_views& v = t.views();
  ASSERT_EQ(v.gpu_count(), 16U);
  for (std::size_t i = 0; i < 16; ++i) {
    for (std::size_t j = 0; j < 16; ++j) {
      if (i == j) continue;
      SCOPED_TRACE(::testing::Message() << "GPU" << i << "-GPU" << j);
      // 6 NVSwitch links of 25000 MB/s per GPU: NV6 and 150000 MB/s for every pair.
      EXPECT_EQ(v.relation(i, j).nvlinks, 6);
      EXPECT_EQ(v.relation(i, j).token(), "NV6");
      EXPECT_EQ(v.bandwidth_mb_s(i, j), 150000);
    }
  }
  // 16 GPUs x 6 NVSwitches, one NVLink2 sub-link each.
  const auto nvlinks = links_of_kind(t, link_kind::nvlink);
  EXPECT_EQ(nvlinks.size(), 96U);
  for (const auto& l : nvlinks) EXPECT_EQ(l.link, nvlink_link(1, 2));
}

TEST(HwlocImport, Dgx2GpusFollowTheirSocket) {
  const node_topology t = load("nvidiaDGX2.xml");
  const vertex_id numa0 = *t.find("NUMA0");
  const vertex_id numa1 = *t.find("NUMA1");
  for (std::size_t i = 0; i < 16; ++i) {
    SCOPED_TRACE(i);
    const vertex_id g = t.gpus()[i];
    // GPUs 0-7 on NUMA 0 / socket 0, GPUs 8-15 on NUMA 1 / socket 1.
    const std::int32_t numa = i < 8 ? 0 : 1;
    EXPECT_EQ(t.vertex(g).numa, numa);
    EXPECT_EQ(t.views().gpu_numa(i), numa);
    EXPECT_EQ(t.views().gpu_socket(i), numa);
    EXPECT_EQ(ancestor(t, g, vertex_kind::numa_node), i < 8 ? numa0 : numa1);
  }
  EXPECT_EQ(t.vertex(numa0).parent, *t.find("Package0"));
  // local_memory 810234351616 bytes.
  EXPECT_EQ(t.vertex(numa0).memory_mib, 772699);
  EXPECT_EQ(t.vertex(numa0).cpuset, "0-1");
}

TEST(HwlocImport, Dgx2LinksCarryPcieAndSmpBandwidth) {
  const node_topology t = load("nvidiaDGX2.xml");
  // pci_link_speed 15.753846 GB/s = gen3 x16.
  EXPECT_EQ(t.uplink(t.gpus()[0]), pcie_link(3, 16));
  // Four host bridges, each under its socket's NUMA node.
  const auto bridges = t.vertices_of(vertex_kind::host_bridge);
  EXPECT_EQ(bridges.size(), 4U);
  for (vertex_id b : bridges) {
    EXPECT_EQ(t.vertex(t.vertex(b).parent).kind, vertex_kind::numa_node);
    EXPECT_EQ(t.uplink(b), internal_link());
  }
  // Xeon Platinum 8174 (family 6, model 85 = Skylake): NCCL's 10 GB/s inter-CPU figure.
  const auto smp = links_of_kind(t, link_kind::smp);
  ASSERT_EQ(smp.size(), 1U);
  EXPECT_EQ(smp[0].link.bandwidth_mb_s, 10000);
}

TEST(HwlocImport, K40mFileHasTwoGpusWithComputeDevicesUnderSocketOne) {
  const node_topology t = load("32em64t-2n8c2t-pci-normalio.xml");
  // cuda0 (+ card0) on 0000:84:00.0 and opencl0d1 on 0000:84:00.1; the three Tesla M2075 PCI
  // devices have no OS device and are not GPUs.
  ASSERT_EQ(t.gpus().size(), 2U);
  const topo_vertex& k40 = t.vertex(t.gpus()[0]);
  const topo_vertex& radeon = t.vertex(t.gpus()[1]);
  EXPECT_EQ(k40.pci_bus_id, "0000:84:00.0");
  EXPECT_EQ(k40.model, normalize_gpu_model("Tesla K40m"));
  EXPECT_EQ(radeon.pci_bus_id, "0000:84:00.1");
  EXPECT_EQ(radeon.model, normalize_gpu_model("AMD Radeon R9 200 / HD 7900 Series"));
  // OpenCLGlobalMemorySize 3087360 KiB.
  EXPECT_EQ(radeon.memory_mib, 3015);
  const vertex_id package1 = *t.find("Package1");
  for (vertex_id g : t.gpus()) {
    EXPECT_EQ(t.vertex(g).numa, 1);
    EXPECT_EQ(ancestor(t, g, vertex_kind::package), package1);
    EXPECT_EQ(t.vertex(t.vertex(g).parent).kind, vertex_kind::host_bridge);
  }
  // Both behind root port 80:03.0 of one host bridge.
  EXPECT_EQ(t.views().relation(0, 1).pcie, pcie_relation::phb);
  // NICs in bus order: mlx5_0 (04:00.0, named after its OpenFabrics device), eth0, eth1.
  ASSERT_EQ(t.nics().size(), 3U);
  EXPECT_EQ(t.vertex(t.nics()[0]).name, "mlx5_0");
  EXPECT_EQ(t.vertex(t.nics()[1]).name, "eth0");
  EXPECT_EQ(t.vertex(t.nics()[2]).name, "eth1");
  EXPECT_FALSE(t.find("ib0").has_value());
}

TEST(HwlocImport, DisplayDevicesWithoutGpuOsDevicesAreNotGpus) {
  const node_topology t = load("24em64t-2n6c2t-pci.xml");
  // Three NVIDIA 3D controllers and one ATI VGA, none with an OS device.
  EXPECT_EQ(t.gpus().size(), 0U);
  EXPECT_EQ(t.vertices_of(vertex_kind::package).size(), 2U);
  const auto mlx4 = t.find("mlx4_0");
  ASSERT_TRUE(mlx4.has_value());
  EXPECT_EQ(t.vertex(*mlx4).kind, vertex_kind::nic);
  EXPECT_EQ(t.vertex(*mlx4).pci_bus_id, "0000:05:00.0");
}

TEST(HwlocImport, OldFilesNameNicsAfterTheirOpenFabricsDevice) {
  const node_topology t = load("devel09-pci.xml");
  // mlx4_0 is typed as a network device in this file; it still names the NIC.
  const auto mlx4 = t.find("mlx4_0");
  ASSERT_TRUE(mlx4.has_value());
  EXPECT_EQ(t.vertex(*mlx4).kind, vertex_kind::nic);
  EXPECT_EQ(t.gpus().size(), 0U);
  // Package os_index 1 holds NUMA node 0.
  EXPECT_EQ(t.vertex(*t.find("NUMA0")).parent, *t.find("Package1"));
}

TEST(HwlocImport, DistanceFilesLoadWithTheirPackages) {
  const node_topology amd = load("16amd64-4distances.xml");
  EXPECT_EQ(amd.gpus().size(), 0U);
  EXPECT_EQ(amd.vertices_of(vertex_kind::package).size(), 8U);
  EXPECT_EQ(amd.vertices_of(vertex_kind::numa_node).size(), 8U);
  // 8 AMD packages: 28 SMP links of 16 GB/s.
  const auto smp = links_of_kind(amd, link_kind::smp);
  EXPECT_EQ(smp.size(), 28U);
  for (const auto& l : smp) EXPECT_EQ(l.link.bandwidth_mb_s, 16000);

  const node_topology fake = load("fakeheterodistances.xml");
  EXPECT_EQ(fake.gpus().size(), 0U);
  EXPECT_EQ(fake.vertices_of(vertex_kind::package).size(), 4U);
  EXPECT_EQ(fake.vertices_of(vertex_kind::numa_node).size(), 8U);
  for (vertex_id n : fake.vertices_of(vertex_kind::numa_node)) {
    EXPECT_EQ(fake.vertex(fake.vertex(n).parent).kind, vertex_kind::package);
  }
}

TEST(HwlocImport, RejectsTruncatedXmlNamingTheLineAndElement) {
  // 5000 bytes end inside the tag of a Bridge <object> on line 54 of nvidiaDGX2.xml.
  const std::string truncated = hwloc_file("nvidiaDGX2.xml").substr(0, 5000);
  const auto t = import_hwloc_xml(truncated);
  EXPECT_THAT(t, HasErrc(errc::invalid_argument));
  EXPECT_THAT(t, ErrorContains("XML line 54: unexpected end of input in tag <object>"));
  // Cut after a complete tag instead: the innermost open element is named with its line.
  const std::string devel = hwloc_file("devel09-pci.xml");
  const std::string cut = devel.substr(0, devel.find('\n', devel.find("type=\"Core\"")) + 1);
  EXPECT_THAT(import_hwloc_xml(cut),
              ErrorContains("element <object> opened at line 33 is not closed (unexpected end of "
                            "input)"));
}

// Each mutation of devel09-pci.xml (line 26: the first NUMANode, 27: its first <page_type>,
// 29: the NUMANode's </object>, 33: the first Core) is refused with the line and element.
TEST(HwlocImport, MalformedXmlErrorsNameTheLineAndElement) {
  const std::string devel = hwloc_file("devel09-pci.xml");
  const struct {
    std::string anchor, from, to, message;
  } cases[] = {
      {"<object type=\"Core\"", "type=\"Core\"", "type=\"Kore\"",
       "XML line 33: <object type=\"Kore\"> is not an hwloc object type"},
      {"<page_type", "<page_type", "<pagetype",
       "XML line 27: <pagetype> is not allowed inside <object type=\"NUMANode\"> (line 26)"},
      {"</object>", "</object>", "</objekt>",
       "XML line 29: end tag </objekt> does not match <object> opened at line 26"},
      {"<topology", "<topology version=\"2.0\">", "<topology version=\"2.0\"><foo/>",
       "XML line 3: <foo> comes before the root <object> of <topology>"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    const auto t = import_hwloc_xml(replace_after(devel, c.anchor, c.from, c.to));
    EXPECT_THAT(t, HasErrc(errc::invalid_argument));
    EXPECT_THAT(t, ErrorContains(c.message));
  }
  EXPECT_THAT(import_hwloc_xml("<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM"),
              ErrorContains("XML line 2: <!DOCTYPE is not closed"));
}

TEST(HwlocImport, RejectsEmptyAndNonXmlInput) {
  EXPECT_THAT(import_hwloc_xml(""), HasErrc(errc::invalid_argument));
  EXPECT_THAT(import_hwloc_xml(""), ErrorContains("empty"));
  EXPECT_THAT(import_hwloc_xml("not xml"), HasErrc(errc::invalid_argument));
  EXPECT_THAT(import_hwloc_xml("not xml"), ErrorContains("hwloc could not parse"));
  // A NUL byte would make libxml2 guess UCS-4 and leak (found by fuzzing).
  EXPECT_THAT(import_hwloc_xml(std::string("<\0\0\0topology", 11)), ErrorContains("NUL byte"));
  EXPECT_THAT(import_hwloc_xml("Lo\xA7\x94"), ErrorContains("does not start with '<'"));
}

TEST(HwlocImport, RejectsTopologyWithoutObjects) {
  const auto t = import_hwloc_xml("<topology version=\"2.0\"></topology>");
  EXPECT_THAT(t, HasErrc(errc::invalid_argument));
  EXPECT_THAT(t, ErrorContains("hwloc rejected the XML topology"));
  EXPECT_THAT(t, ErrorContains("XML line 1: <topology> has no <object>"));
  const auto foo = import_hwloc_xml("<?xml version=\"1.0\"?>\n<foo/>");
  EXPECT_THAT(foo, HasErrc(errc::invalid_argument));
  EXPECT_THAT(foo, ErrorContains("XML line 2: the root element is <foo>, not hwloc's <topology>"));
}

TEST(HwlocImport, RejectsOversizedBuffer) {
  const std::string huge(max_hwloc_xml_bytes + 1, ' ');
  const auto t = import_hwloc_xml(huge);
  EXPECT_THAT(t, HasErrc(errc::out_of_range));
  EXPECT_THAT(t, ErrorContains("larger than the limit"));
}

TEST(HwlocImport, RefusesObjectsWithUnpairedSetsThatCrashHwloc) {
  // hwloc 2.9.0 dereferences a null bitmap in hwloc_topology_load on these (found by fuzzing).
  const std::string pu =
      replace_after(hwloc_file("24em64t-2n6c2t-pci.xml"), "<object type=\"PU\" os_index=\"13\"",
                    "complete_cpuset=", "complete_cpqset=");
  const auto a = import_hwloc_xml(pu);
  EXPECT_THAT(a, HasErrc(errc::invalid_argument));
  EXPECT_THAT(a, ErrorContains("XML line 149: <object> #"));
  EXPECT_THAT(a, ErrorContains("of type \"PU\" has cpuset without complete_cpuset"));
  const std::string numa =
      replace_after(hwloc_file("24em64t-2n6c2t-pci.xml"), "<object type=\"NUMANode\"",
                    "complete_nodeset=", "complete_nodxset=");
  EXPECT_THAT(import_hwloc_xml(numa), ErrorContains("has nodeset without complete_nodeset"));
}

TEST(HwlocImport, ChecksObjectsAfterACommentOrCdataOpenedInAnAttribute) {
  // "<![CDATA[" inside an attribute value, never closed, used to end the guard's scan; hwloc's
  // parser reads on and crashed on the unpaired cpuset further down (found by fuzzing).
  for (const std::string opener : {"<![CDATA[", "<!--"}) {
    std::string xml = replace_after(hwloc_file("fakeheterodistances.xml"),
                                    "<info name=\"DMIProductName\"", "DRACHMA", opener);
    xml = replace_after(xml, "<object type=\"PU\" os_index=\"30\"",
                        "complete_cpuset=", "complete_cpuxet=");
    const auto t = import_hwloc_xml(xml);
    EXPECT_THAT(t, HasErrc(errc::invalid_argument));
    EXPECT_THAT(t, ErrorContains("of type \"PU\" has cpuset without complete_cpuset"));
  }
}

// hwloc 2.9 dereferences a null attribute value on a <topology> tag cut inside its attributes
// (found by tests/fuzz/hwloc_xml_fuzz); the importer refuses the malformed document first.
TEST(HwlocImport, RefusesATopologyTagCutInsideItsAttributes) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0 version=\"1c.";
  const auto t = import_hwloc_xml(xml);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, errc::invalid_argument);
  EXPECT_NE(t.error().message.find("XML line 3"), std::string::npos) << t.error().message;
}

TEST(HwlocImport, RefusesSetsHwlocCannotParse) {
  // hwloc_bitmap_sscanf asserts on a leading comma (found by fuzzing).
  const std::string comma =
      replace_after(hwloc_file("devel09-pci.xml"), "<object type=\"NUMANode\"",
                    " nodeset=\"0x00000001\"", " nodeset=\",x00000001\"");
  EXPECT_THAT(import_hwloc_xml(comma),
              ErrorContains("XML line 26: <object> #3: nodeset=\",x00000001\" is not an hwloc "
                            "bitmap"));
  // An unparsable complete_cpuset on the root plus text inside it crashes hwloc 2.9.0's error
  // path (found by fuzzing).
  std::string xml = replace_after(hwloc_file("fakeheterodistances.xml"), "<object type=\"Machine\"",
                                  "complete_cpuset=\"0x00000410,0x41041041\"",
                                  "complete_cpuset=\"0x00000410,0x4104104=-1\"");
  xml = replace_after(xml, "<info name=\"Backend\"", "<info name=\"hwlocVersion\"", "text");
  const auto t = import_hwloc_xml(xml);
  EXPECT_THAT(t, HasErrc(errc::invalid_argument));
  EXPECT_THAT(t,
              ErrorContains("complete_cpuset=\"0x00000410,0x4104104=-1\" is not an hwloc bitmap"));
  // hwloc_bitmap_sscanf aborts on a leading comma followed by a word; it fails on trailing
  // garbage, a bare "0x" and non-hex digits (lstopo-no-graphics -i aborts or reports no PU).
  for (const std::string value : {",0x00000001", ",,0x1", "0x1 ", "0x", "0xg", "0x1;0x2"}) {
    SCOPED_TRACE(value);
    const std::string bad =
        replace_after(gapped_machine_xml(), "<object type=\"PU\" os_index=\"8\"",
                      "cpuset=\"0x00000100\"", "cpuset=\"" + value + "\"");
    const auto refused = import_hwloc_xml(bad);
    EXPECT_THAT(refused, HasErrc(errc::invalid_argument));
    EXPECT_THAT(refused, ErrorContains("XML line 9: <object> #6: cpuset=\"" + value +
                                       "\" is not an hwloc bitmap"));
  }
  // The infinite prefix hwloc writes for full sets is accepted.
  const std::string full =
      replace_after(hwloc_file("devel09-pci.xml"), "<object type=\"Machine\"",
                    "allowed_nodeset=\"0x00000003\"", "allowed_nodeset=\"0xf...f,0x00000003\"");
  EXPECT_THAT(import_hwloc_xml(full), IsOk());
}

TEST(HwlocImport, ReadsBitmapsWithElidedZeroWords) {
  // hwloc writes a zero word between non-zero ones as an empty field ("0x00000303,0x03030000,,
  // 0x03030303"); such files were refused as "not an hwloc bitmap".
  const std::string xml = gapped_machine_xml();
  ASSERT_NE(xml.find("cpuset=\"0x00000303,0x03030000,,0x03030303\""), std::string::npos);
  ASSERT_NE(xml.find("cpuset=\"0x00000303,0x03030000,,0x0\""), std::string::npos);
  const auto t = import_hwloc_xml(xml, hwloc_import_options{"gapped"});
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->vertex(t->root()).cpuset, "0-1,8-9,16-17,24-25,80-81,88-89,96-97,104-105");
  const auto packages = t->vertices_of(vertex_kind::package);
  ASSERT_EQ(packages.size(), 2U);
  EXPECT_EQ(t->vertex(packages[0]).cpuset, "0-1,8-9,16-17,24-25");
  EXPECT_EQ(t->vertex(packages[1]).cpuset, "80-81,88-89,96-97,104-105");
  EXPECT_EQ(t->vertices_of(vertex_kind::numa_node).size(), 2U);
}

TEST(HwlocImport, AcceptsEveryBitmapFormHwlocReads) {
  // Each value below is read by hwloc_bitmap_sscanf and loaded by `lstopo-no-graphics -i` (hwloc
  // 2.9.0) as the machine's allowed_cpuset: the full set, the infinite prefix with an elided
  // word, unpadded and upper-case words, strtoul's sign and leading spaces, trailing commas and
  // the empty string. (",," is a bitmap too, but an empty allowed set: no PU to load.)
  for (const std::string value :
       {"0xf...f", "0xf...f,,0x00000001", "ff,ff", "0X3", "+3", " 0x3", "0x3,", "0x1,,0x2,", ""}) {
    SCOPED_TRACE(value);
    const std::string xml = replace_after(gapped_machine_xml(), "<object type=\"Machine\"",
                                          "allowed_cpuset=\"0x00000303,0x03030000,,0x03030303\"",
                                          "allowed_cpuset=\"" + value + "\"");
    EXPECT_THAT(import_hwloc_xml(xml), IsOk());
  }
}

TEST(HwlocImport, RefusesEncodingsOtherThanUtf8) {
  // libxml2 leaks on an unknown encoding name (found by fuzzing).
  const std::string xml = replace_after(hwloc_file("nvidiaDGX2.xml"), "<?xml", "encoding=\"UTF-8\"",
                                        "encoding=\"UTF-4\"");
  EXPECT_THAT(import_hwloc_xml(xml), HasErrc(errc::invalid_argument));
  EXPECT_THAT(import_hwloc_xml(xml), ErrorContains("encoding \"UTF-4\""));
  const std::string lower = replace_after(hwloc_file("nvidiaDGX2.xml"), "<?xml",
                                          "encoding=\"UTF-8\"", "encoding='utf-8'");
  EXPECT_THAT(import_hwloc_xml(lower), IsOk());
}

TEST(HwlocImport, ToleratesOutOfRangeTypeNumbers) {
  // hwloc stores bridge_type and osdev_type numbers from the XML unchecked.
  std::string xml = hwloc_file("nvidiaDGX2.xml");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"bridge_type=\"0-1\"", "bridge_type=\"7-1\""},
        {"osdev_type=\"5\"", "osdev_type=\"77\""}}) {
    for (auto at = xml.find(from); at != std::string::npos; at = xml.find(from, at)) {
      xml.replace(at, from.size(), to);
    }
  }
  const auto t = import_hwloc_xml(xml);
  ASSERT_THAT(t, IsOk());
  // No OS device is recognised as a GPU; bridges of an unknown type still act as host bridges.
  EXPECT_EQ(t->gpus().size(), 0U);
  EXPECT_EQ(t->nvswitches().size(), 12U);
  EXPECT_EQ(t->vertices_of(vertex_kind::host_bridge).size(), 2U);
}

TEST(HwlocImport, DiscoversTheLocalMachine) {
  const auto t = discover_local_topology(hwloc_import_options{"local"});
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->name(), "local");
  EXPECT_GE(
      t->vertices_of(vertex_kind::package).size() + t->vertices_of(vertex_kind::numa_node).size(),
      1U);
}

}  // namespace
}  // namespace hetsched
