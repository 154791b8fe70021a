// SPDX-License-Identifier: MIT
// Tests of import_nccl_xml() on the Azure NCCL topology files and on synthetic and malformed XML.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <hetsched/topology/import.hpp>
#include <hetsched/topology/views.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::testing::AllOf;

std::string read_nccl(const std::string& file) {
  return ::hetsched::testing::read_shared("data/topologies/nccl-topo-xml/" + file);
}

std::string relation(const node_topology& t, std::size_t i, std::size_t j) {
  return t.views().relation(i, j).token();
}

std::vector<link_ref> links_of_kind(const node_topology& t, link_kind kind) {
  std::vector<link_ref> out;
  for (const auto& l : t.links()) {
    if (l.link.kind == kind) out.push_back(l);
  }
  return out;
}

TEST(NcclImport, AzureNdv2) {
  const std::string xml = read_nccl("azure-ndv2-topo.xml");
  EXPECT_EQ(detect_topology_format(xml), topology_format::nccl_xml);
  auto t = import_nccl_xml(xml);
  ASSERT_THAT(t, IsOk());
  const auto& v = t->views();
  ASSERT_EQ(v.gpu_count(), 8u);
  ASSERT_EQ(v.nic_count(), 1u);
  EXPECT_EQ(t->vertices_of(vertex_kind::numa_node).size(), 2u);
  EXPECT_EQ(t->vertices_of(vertex_kind::package).size(), 2u);
  // GPUs numbered in bus-id order: GPU0 = 0001:00:00.0 .. GPU7 = 0008:00:00.0
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& gpu = t->vertex(t->gpus()[i]);
    EXPECT_EQ(gpu.pci_bus_id, fmt::format("{:04x}:00:00.0", i + 1));
    EXPECT_EQ(gpu.numa, i < 4 ? 0 : 1);
    EXPECT_EQ(v.gpu_socket(i), i < 4 ? 0 : 1);
    EXPECT_EQ(t->uplink(t->gpus()[i]), pcie_link(4, 16));
  }
  EXPECT_EQ(relation(*t, 0, 1), "NODE");  // each GPU under its own host bridge of one CPU
  EXPECT_EQ(relation(*t, 0, 4), "SYS");
  EXPECT_EQ(relation(*t, 5, 7), "NODE");
  EXPECT_EQ(relation(*t, 0, 8), "NODE");  // the IB NIC sits on CPU 0
  EXPECT_EQ(relation(*t, 4, 8), "SYS");
  EXPECT_EQ(t->vertex(t->nics()[0]).pci_bus_id, "0101:00:00.0");
  EXPECT_EQ(t->vertex(t->nics()[0]).name, "NIC0");
  // The affinity masks "00000000,000fffff" and "000000ff,fff00000" as CPU lists.
  EXPECT_EQ(t->vertex(*t->find("NUMA0")).cpuset, "0-19");
  EXPECT_EQ(t->vertex(*t->find("NUMA1")).cpuset, "20-39");
  EXPECT_EQ(t->vertex(t->gpus()[5]).cpuset, "20-39");
  // Skylake (family 6, model 85 = 0x55): NCCL's 10 GB/s between the CPUs
  const auto smp = links_of_kind(*t, link_kind::smp);
  ASSERT_EQ(smp.size(), 1u);
  EXPECT_EQ(smp[0].link.bandwidth_mb_s, 10000);
  EXPECT_TRUE(links_of_kind(*t, link_kind::nvlink).empty());  // VM skeleton: no NVLinks listed
}

TEST(NcclImport, AzureNdv4) {
  auto t = import_nccl_xml(read_nccl("azure-ndv4-topo.xml"));
  ASSERT_THAT(t, IsOk());
  const auto& v = t->views();
  ASSERT_EQ(v.gpu_count(), 8u);
  ASSERT_EQ(v.nic_count(), 8u);
  EXPECT_EQ(t->vertices_of(vertex_kind::numa_node).size(), 4u);
  EXPECT_EQ(t->vertices_of(vertex_kind::pcie_switch).size(), 4u);
  // bus-id order pairs the GPUs and NICs of one switch: GPU0,1 + NIC0,1 on NUMA 1, ...
  const std::vector<std::int32_t> numa = {1, 1, 0, 0, 3, 3, 2, 2};
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(t->vertex(t->gpus()[i]).numa, numa[i]) << i;
    for (std::size_t j = 0; j < 8; ++j) {
      const bool same_switch = i / 2 == j / 2;
      if (i != j) {
        EXPECT_EQ(relation(*t, i, j), same_switch ? "PIX" : "SYS") << i << "," << j;
      }
      // GPU-NIC pairs below one switch are PIX too
      EXPECT_EQ(relation(*t, i, 8 + j), same_switch ? "PIX" : "SYS") << i << ",NIC" << j;
    }
  }
  // AMD: 16 GB/s between every pair of the four CPUs
  const auto smp = links_of_kind(*t, link_kind::smp);
  ASSERT_EQ(smp.size(), 6u);
  for (const auto& l : smp) EXPECT_EQ(l.link.bandwidth_mb_s, 16000);
}

// Four A100s (sm 80) each with 12 NVLinks to the NVSwitches; dev numbers run against bus order.
const char* const kNvswitchXml = R"(<?xml version="1.0"?>
<!-- synthetic HGX-like node -->
<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="3" sm="80" rank="3" gdr="1">
        <nvlink target="0000:c7:00.0" count="12" tclass="0x068000"/>
      </gpu>
    </pci>
    <pci busid="0000:0F:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="2" sm="80" rank="2" gdr="1">
        <nvlink target="0000:c7:00.0" count="12" tclass="0x068000"/>
      </gpu>
    </pci>
    <pci busid="0000:47:00.0" class='0x030200' link_speed="16 GT/s" link_width="16">
      <gpu dev="1" sm="80" rank="1" gdr="1">
        <nvlink target="0000:c7:00.0" count="6" tclass="0x068000"/>
        <nvlink target="0000:c8:00.0" count="6" tclass="0x068000"/>
      </gpu>
    </pci>
    <pci busid="0000:4e:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">
      <gpu dev="0" sm="80" rank="0" gdr="1">
        <nvlink target="0000:c7:00.0" count="12" tclass="0x068000"/>
      </gpu>
    </pci>
    <nic>
      <net name="mlx5_&#48;" dev="0" speed="200000" port="1" latency="0" guid="0x1" maxconn="131072" gdr="1"/>
    </nic>
  </cpu>
</system>
)";

TEST(NcclImport, NvswitchGivesNv12BetweenAllPairs) {
  EXPECT_EQ(detect_topology_format(kNvswitchXml), topology_format::nccl_xml);
  nccl_import_options options;
  options.name = "hgx4";
  auto t = import_nccl_xml(kNvswitchXml, options);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->name(), "hgx4");
  ASSERT_EQ(t->views().gpu_count(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      if (i != j) {
        EXPECT_EQ(relation(*t, i, j), "NV12") << i << "," << j;
      }
    }
  }
  // dev wins over bus order; bus ids are normalised to lower case
  EXPECT_EQ(t->vertex(t->gpus()[0]).pci_bus_id, "0000:4e:00.0");
  EXPECT_EQ(t->vertex(t->gpus()[2]).pci_bus_id, "0000:0f:00.0");
  // one synthetic NVSwitch, as NCCL models it
  ASSERT_EQ(t->nvswitches().size(), 1u);
  EXPECT_EQ(t->vertex(t->nvswitches()[0]).name, "NVSwitch0");
  const auto nv = links_of_kind(*t, link_kind::nvlink);
  ASSERT_EQ(nv.size(), 4u);
  for (const auto& l : nv) EXPECT_EQ(l.link, nvlink_link(12, 3));  // sm 80: NVLink 3
  // the NIC below the CPU: name, speed (200000 Mb/s = 25000 MB/s), NODE to the GPUs
  ASSERT_EQ(t->nics().size(), 1u);
  const auto& nic = t->vertex(t->nics()[0]);
  EXPECT_EQ(nic.name, "mlx5_0");
  EXPECT_EQ(nic.speed_mb_s, 25000);
  EXPECT_EQ(relation(*t, 0, 4), "NODE");
  EXPECT_TRUE(t->vertex(t->gpus()[0]).model.empty());

  options.gpu_model = gpu_type("A100-SXM4-80GB");
  t = import_nccl_xml(kNvswitchXml, options);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->vertex(t->gpus()[3]).model, gpu_type("A100-SXM4-80GB"));
  EXPECT_EQ(t->vertex(t->gpus()[3]).memory_mib, 81920);
}

const char* const kBridgesXml = R"(<system version="1">
  <cpu numaid="0" affinity="ff" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1">
    <pci busid="0000:10:00.0" class="0x060400" link_speed="32 GT/s" link_width="16">
      <pci busid="0000:11:00.0" class="0x060400" link_speed="32 GT/s" link_width="16">
        <pci busid="0000:12:00.0" class="0x030200" link_speed="32 GT/s" link_width="16">
          <gpu dev="0" sm="90" rank="0" gdr="1">
            <nvlink target="0000:22:00.0" count="4" tclass="0x030200"/>
          </gpu>
        </pci>
      </pci>
      <pci busid="0000:21:00.0" class="0x060400" link_speed="32 GT/s" link_width="16">
        <pci busid="0000:22:00.0" class="0x030200" link_speed="32 GT/s" link_width="16">
          <gpu dev="1" sm="90" rank="1" gdr="1">
            <nvlink target="0000:12:00.0" count="4" tclass="0x030200"/>
            <nvlink target="0000:99:00.0" count="4" tclass="0x030200"/>
            <nvlink target="0000:00:00.0" count="2" tclass="0x068001"/>
          </gpu>
        </pci>
      </pci>
      <pci busid="0000:31:00.0" class="0x020700" link_speed="32 GT/s" link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/>
          <net name="mlx5_0" dev="1" speed="400000" port="2" gdr="1"/>
        </nic>
      </pci>
    </pci>
    <pci busid="0000:41:00.0" class="0x030000" link_speed="8 GT/s" link_width="8">
      <gpu dev="2" sm="90"/>
    </pci>
  </cpu>
</system>
)";

TEST(NcclImport, NestedBridgesDirectNvlinksAndPorts) {
  auto t = import_nccl_xml(kBridgesXml);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->views().gpu_count(), 3u);
  ASSERT_EQ(t->views().nic_count(), 2u);
  EXPECT_EQ(relation(*t, 0, 1), "NV4");  // both directions listed once each, counted once
  EXPECT_EQ(t->views().relation(0, 1).pcie, pcie_relation::pxb);  // different child switches
  EXPECT_EQ(relation(*t, 0, 3), "PXB");   // GPU0 below a child switch, NIC port in the top one
  EXPECT_EQ(relation(*t, 3, 4), "PIX");   // the two ports of one adapter
  EXPECT_EQ(relation(*t, 0, 2), "NODE");  // the VGA-class GPU has its own host bridge
  EXPECT_EQ(t->vertex(t->nics()[0]).name, "mlx5_0:1");
  EXPECT_EQ(t->vertex(t->nics()[1]).name, "mlx5_0:2");
  EXPECT_EQ(t->vertex(t->nics()[1]).speed_mb_s, 50000);
  EXPECT_EQ(t->uplink(t->gpus()[2]), pcie_link(3, 8));
  // the link to a GPU missing from the file and the one to the CPU are ignored, as NCCL does
  const auto nv = links_of_kind(*t, link_kind::nvlink);
  ASSERT_EQ(nv.size(), 1u);
  EXPECT_EQ(nv[0].link, nvlink_link(4, 4));  // sm 90: NVLink 4
  EXPECT_TRUE(links_of_kind(*t, link_kind::smp).empty());
}

std::string two_cpus(const std::string& attributes) {
  return "<system><cpu numaid=\"0\" " + attributes + "/><cpu numaid=\"1\" " + attributes +
         "/></system>";
}

TEST(NcclImport, InterCpuBandwidthFollowsNccl) {
  struct row {
    std::string attributes;
    std::int64_t mb_s;
  };
  const std::vector<row> rows = {
      {R"(arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="79")", 6000},     // Broadwell
      {R"(arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85")", 10000},    // Skylake
      {R"(arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="0x8F")", 22000},  // SPR
      {R"(arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="207")", 40000},   // EMR
      {R"(arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="17")", 16000},
      {R"(arch="ppc64")", 32000},
      {R"(arch="arm64")", 6000},
      {R"(arch="riscv64")", 0},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.attributes);
    auto t = import_nccl_xml(two_cpus(r.attributes));
    ASSERT_THAT(t, IsOk());
    const auto smp = links_of_kind(*t, link_kind::smp);
    ASSERT_EQ(smp.size(), 1u);
    EXPECT_EQ(smp[0].link.bandwidth_mb_s, r.mb_s);
  }
}

TEST(NcclImport, MalformedXmlIsRefusedWithTheLine) {
  const std::string cpu = "<system>\n<cpu numaid=\"0\">\n";  // lines 1-2
  auto with = [&](const std::string& body) {
    return import_nccl_xml(cpu + body + "</cpu>\n</system>\n");
  };
  ASSERT_THAT(with(R"(<pci busid="0000:01:00.0" class="0x030200"/>)"), IsOk());

  EXPECT_THAT(import_nccl_xml(""), AllOf(HasErrc(errc::invalid_argument), ErrorContains("empty")));
  EXPECT_THAT(
      import_nccl_xml("<system>\n<cpu numaid=\"0\">\n<pci busid=\"0000:01:00.0\" class=\"0x03"),
      AllOf(HasErrc(errc::invalid_argument), ErrorContains("line 3")));
  EXPECT_THAT(import_nccl_xml(cpu), AllOf(ErrorContains("<cpu>"), ErrorContains("not closed")));
  EXPECT_THAT(import_nccl_xml("<topology version=\"2.0\"/>"),
              AllOf(ErrorContains("line 1"), ErrorContains("<system>")));
  EXPECT_THAT(import_nccl_xml("<system/>"), ErrorContains("no <cpu>"));
  EXPECT_THAT(import_nccl_xml("<system>\n<cpu numaid=\"0\" affinity=\"00zz\"/>\n</system>"),
              AllOf(ErrorContains("line 2"), ErrorContains("affinity \"00zz\"")));
  // unknown elements at every level, named with their line
  EXPECT_THAT(import_nccl_xml("<system>\n<gpu/>\n</system>"),
              AllOf(ErrorContains("line 2"), ErrorContains("<gpu>")));
  EXPECT_THAT(with("<foo/>\n"), AllOf(HasErrc(errc::invalid_argument), ErrorContains("line 3"),
                                      ErrorContains("<foo>")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x030200\">\n<gpu><bar/></gpu></pci>\n"),
              AllOf(ErrorContains("line 4"), ErrorContains("<bar>")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x060400\">\n<gpu/></pci>\n"),
              AllOf(ErrorContains("line 4"), ErrorContains("<gpu>")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x020700\"><nic><net/><x/></nic></pci>\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("<x>")));
  // required attributes
  EXPECT_THAT(with("<pci class=\"0x030200\"/>\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("<pci>"), ErrorContains("busid")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\"/>\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("class")));
  EXPECT_THAT(import_nccl_xml("<system>\n<cpu/>\n</system>"),
              AllOf(ErrorContains("line 2"), ErrorContains("numaid")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu>\n<nvlink "
                   "count=\"2\"/></gpu></pci>\n"),
              AllOf(ErrorContains("line 4"), ErrorContains("tclass")));
  // bad values
  EXPECT_THAT(with("<pci busid=\"0000:zz:00.0\" class=\"0x030200\"/>\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("0000:zz:00.0")));
  EXPECT_THAT(with("<pci busid=\"01:00.0\" class=\"0x030200\"/>\n"), ErrorContains("01:00.0"));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"VGA\"/>\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("VGA")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"fast\"/>\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("fast")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_width=\"x16\"/>\n"),
              ErrorContains("x16"));
  EXPECT_THAT(import_nccl_xml("<system><cpu numaid=\"-1\"/></system>"), ErrorContains("numaid"));
  EXPECT_THAT(
      with("<pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu>\n"
           "<nvlink target=\"0000:02:00.0\" count=\"0\" tclass=\"0x030200\"/></gpu></pci>\n"),
      AllOf(ErrorContains("line 4"), ErrorContains("count")));
  // duplicates
  EXPECT_THAT(
      with("<pci busid=\"0000:01:00.0\" class=\"0x030200\"/>\n"
           "<pci busid=\"0000:01:00.0\" class=\"0x020700\"/>\n"),
      AllOf(HasErrc(errc::already_exists), ErrorContains("line 4"), ErrorContains("line 3")));
  EXPECT_THAT(
      import_nccl_xml("<system>\n<cpu numaid=\"0\"/>\n<cpu numaid=\"0\"/>\n</system>"),
      AllOf(HasErrc(errc::already_exists), ErrorContains("line 3"), ErrorContains("line 2")));
  // GPU numbering
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"0\"/></pci>\n"
                   "<pci busid=\"0000:02:00.0\" class=\"0x030200\"><gpu/></pci>\n"),
              AllOf(ErrorContains("line 4"), ErrorContains("no dev")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"1\"/></pci>\n"
                   "<pci busid=\"0000:02:00.0\" class=\"0x030200\"><gpu dev=\"1\"/></pci>\n"),
              AllOf(HasErrc(errc::already_exists), ErrorContains("dev 1")));
  EXPECT_THAT(with("<pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"5\"/></pci>\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("dev 5")));
  // NVLink counts that disagree between the two ends
  EXPECT_THAT(
      with("<pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu>\n"
           "<nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/></gpu></pci>\n"
           "<pci busid=\"0000:02:00.0\" class=\"0x030200\"><gpu>\n"
           "<nvlink target=\"0000:01:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu></pci>\n"),
      AllOf(ErrorContains("line 4"), ErrorContains("line 6")));
  EXPECT_THAT(import_nccl_xml(std::string(max_topology_text_bytes + 1, ' ')),
              HasErrc(errc::out_of_range));
  // absurd sizes: more than 1024 CPUs, or GPUs plus NICs
  std::string cpus = "<system>";
  for (std::size_t i = 0; i <= max_import_devices; ++i) {
    cpus += fmt::format("<cpu numaid=\"{}\"/>", i);
  }
  EXPECT_THAT(import_nccl_xml(cpus + "</system>"),
              AllOf(HasErrc(errc::out_of_range), ErrorContains("1024 <cpu>")));
  std::string devices = "<system><cpu numaid=\"0\">";
  for (std::size_t i = 0; i <= max_import_devices; ++i) {
    devices +=
        fmt::format("<pci busid=\"0000:{:02x}:{:02x}.0\" class=\"0x030200\"/>", i / 32, i % 32);
  }
  EXPECT_THAT(import_nccl_xml(devices + "</cpu></system>"),
              AllOf(HasErrc(errc::out_of_range), ErrorContains("1025 GPUs and NICs")));
}

}  // namespace
}  // namespace hetsched
