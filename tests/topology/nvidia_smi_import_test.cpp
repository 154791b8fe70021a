// SPDX-License-Identifier: MIT
// Tests of import_nvidia_smi_topo() on the published matrices in data/topologies/nvidia-smi-topo
// and on synthetic and malformed inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <set>
#include <sstream>
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

const std::vector<std::string> kFiles = {
    "a100-pcie-8x-nvlink-bridge-pairs_k8s-device-plugin-issue546.txt",
    "dgx-a100-320gb_dcgm-issue149_PARTIAL.txt",
    "dgx1v-like_v100-sxm2x8_dlperf.txt",
    "dgx2_nccl-tests-issue78_PARTIAL.txt",
    "hgx-h100-sxm_nccl-issue1264.txt",
    "pcie-only-8x-rtx4090_go-gpuallocator-issue17.txt",
};

std::string read_topo(const std::string& file) {
  return ::hetsched::testing::read_shared("data/topologies/nvidia-smi-topo/" + file);
}

result<node_topology> import_partial(const std::string& text) {
  nvidia_smi_import_options options;
  options.allow_partial = true;
  return import_nvidia_smi_topo(text, options);
}

// An independent reading of a topo -m matrix: (row device, column device) -> token, for the rows
// the text has.
struct expected_matrix {
  std::vector<std::string> columns;
  std::map<std::pair<std::string, std::string>, std::string> cells;
};

expected_matrix read_expected(const std::string& text) {
  expected_matrix m;
  std::istringstream in(text);
  std::string line;
  bool header = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    if (tokens.empty() || tokens[0][0] == '#') continue;
    if (tokens[0] == "Legend:") break;
    if (!header) {
      for (const auto& t : tokens) {
        if (t == "CPU" || t == "NUMA" || t == "GPU") break;
        m.columns.push_back(t);
      }
      header = true;
      continue;
    }
    for (std::size_t j = 0; j < m.columns.size(); ++j) {
      m.cells[{tokens[0], m.columns[j]}] = tokens[j + 1];
    }
  }
  return m;
}

// Returns endpoint index by vertex name.
std::map<std::string, std::size_t> endpoint_index(const node_topology& t) {
  std::map<std::string, std::size_t> out;
  const auto endpoints = t.views().endpoints();
  for (std::size_t k = 0; k < endpoints.size(); ++k) out[t.vertex(endpoints[k]).name] = k;
  return out;
}

// Checks that the views reproduce every cell the text gives; returns the number checked.
std::size_t expect_round_trip(const node_topology& t, const std::string& text) {
  const auto expected = read_expected(text);
  const auto index = endpoint_index(t);
  EXPECT_EQ(index.size(), expected.columns.size());
  std::size_t checked = 0;
  for (const auto& [pair, token] : expected.cells) {
    const auto a = index.find(pair.first);
    const auto b = index.find(pair.second);
    if (a == index.end() || b == index.end()) {
      ADD_FAILURE() << "no endpoint " << pair.first << " or " << pair.second;
      continue;
    }
    EXPECT_EQ(t.views().relation(a->second, b->second).token(), token)
        << pair.first << "/" << pair.second;
    ++checked;
  }
  return checked;
}

std::string relation(const node_topology& t, std::size_t i, std::size_t j) {
  return t.views().relation(i, j).token();
}

unsigned nvlink_generation(const node_topology& t) {
  for (const auto& l : t.links()) {
    if (l.link.kind == link_kind::nvlink) return l.link.generation;
  }
  return 0;
}

TEST(NvidiaSmiImport, EveryFileRoundTripsThroughTheViews) {
  for (const auto& file : kFiles) {
    SCOPED_TRACE(file);
    const std::string text = read_topo(file);
    EXPECT_EQ(detect_topology_format(text), topology_format::nvidia_smi_topo);
    auto t = import_partial(text);
    ASSERT_THAT(t, IsOk());
    const std::size_t checked = expect_round_trip(*t, text);
    EXPECT_GE(checked, 16u);
  }
}

TEST(NvidiaSmiImport, PartialFilesNeedAllowPartial) {
  // Complete matrices load as they are; excerpts name their first missing row.
  const std::map<std::string, std::string> first_missing = {
      {"dgx-a100-320gb_dcgm-issue149_PARTIAL.txt", "no row for GPU6"},
      {"dgx2_nccl-tests-issue78_PARTIAL.txt", "no row for GPU4"},
      {"hgx-h100-sxm_nccl-issue1264.txt", "no row for NIC3"},
  };
  for (const auto& file : kFiles) {
    SCOPED_TRACE(file);
    auto t = import_nvidia_smi_topo(read_topo(file));
    const auto it = first_missing.find(file);
    if (it == first_missing.end()) {
      EXPECT_THAT(t, IsOk());
    } else {
      EXPECT_THAT(t, AllOf(HasErrc(errc::invalid_argument), ErrorContains(it->second),
                           ErrorContains("allow_partial")));
    }
  }
}

TEST(NvidiaSmiImport, HgxH100) {
  auto t = import_partial(read_topo("hgx-h100-sxm_nccl-issue1264.txt"));
  ASSERT_THAT(t, IsOk());
  const auto& v = t->views();
  ASSERT_EQ(v.gpu_count(), 8u);
  ASSERT_EQ(v.nic_count(), 10u);
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      // every GPU pair: NV18 through the NVSwitches
      if (i != j) {
        EXPECT_EQ(relation(*t, i, j), "NV18") << i << "," << j;
      }
    }
    const auto& gpu = t->vertex(t->gpus()[i]);
    EXPECT_EQ(gpu.numa, i < 4 ? 0 : 1);
    EXPECT_EQ(v.gpu_numa(i), i < 4 ? 0 : 1);
    EXPECT_EQ(v.gpu_socket(i), i < 4 ? 0 : 1);
    EXPECT_EQ(gpu.cpuset, i < 4 ? "0-55,112-167" : "56-111,168-223");
  }
  EXPECT_EQ(relation(*t, 0, 8), "PIX");   // GPU0-NIC0
  EXPECT_EQ(relation(*t, 3, 13), "PIX");  // GPU3-NIC5
  EXPECT_EQ(relation(*t, 0, 9), "SYS");   // GPU0-NIC1
  EXPECT_EQ(relation(*t, 8, 9), "SYS");   // NIC0-NIC1
  EXPECT_EQ(nvlink_generation(*t), 4u);   // inferred from NV18
}

TEST(NvidiaSmiImport, PcieOnlyRtx4090) {
  auto t = import_nvidia_smi_topo(read_topo("pcie-only-8x-rtx4090_go-gpuallocator-issue17.txt"));
  ASSERT_THAT(t, IsOk());
  const auto& v = t->views();
  ASSERT_EQ(v.gpu_count(), 8u);
  ASSERT_EQ(v.nic_count(), 2u);
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      if (i != j) {
        EXPECT_EQ(relation(*t, i, j), "SYS") << i << "," << j;
      }
    }
    // the affinity columns still split the GPUs 4+4
    EXPECT_EQ(v.gpu_numa(i), i < 4 ? 0 : 1);
    EXPECT_EQ(v.gpu_socket(i), i < 4 ? 0 : 1);
  }
  EXPECT_EQ(relation(*t, 6, 8), "PHB");  // GPU6-NIC0
  EXPECT_EQ(relation(*t, 6, 9), "PHB");  // GPU6-NIC1
  EXPECT_EQ(relation(*t, 8, 9), "PIX");  // NIC0-NIC1
  EXPECT_EQ(relation(*t, 0, 8), "SYS");
  EXPECT_TRUE(t->links().size() > 0);
  EXPECT_EQ(nvlink_generation(*t), 0u);  // no NVLinks at all
}

TEST(NvidiaSmiImport, Dgx1HybridCubeMesh) {
  auto t = import_nvidia_smi_topo(read_topo("dgx1v-like_v100-sxm2x8_dlperf.txt"));
  ASSERT_THAT(t, IsOk());
  // the 28 GPU pairs exactly as the file gives them
  const std::vector<std::vector<std::string>> expected = {
      {"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"},
      {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
      {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"},
      {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
      {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"},
      {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
      {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"},
      {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"},
  };
  ASSERT_EQ(t->views().gpu_count(), 8u);
  ASSERT_EQ(t->views().nic_count(), 1u);
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j)
      EXPECT_EQ(relation(*t, i, j), expected[i][j]) << i << "," << j;
  }
  const auto& nic = t->vertex(t->nics()[0]);
  EXPECT_EQ(nic.name, "mlx5_0");
  EXPECT_EQ(nic.index, 0);
  // mlx5_0: PIX to GPU2/GPU3, NODE to GPU0/GPU1, SYS to GPU4-7
  const std::vector<std::string> nic_row = {"NODE", "NODE", "PIX", "PIX",
                                            "SYS",  "SYS",  "SYS", "SYS"};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(relation(*t, 8, i), nic_row[i]) << i;
  EXPECT_EQ(t->vertex(t->gpus()[4]).cpuset, "12-23,36-47");
  EXPECT_EQ(nvlink_generation(*t), 2u);  // V100: NV2 at most
  // no NUMA column: two synthetic NUMA nodes from the two NODE classes
  EXPECT_EQ(t->vertices_of(vertex_kind::numa_node).size(), 2u);
}

TEST(NvidiaSmiImport, A100PcieBridgePairs) {
  auto t = import_nvidia_smi_topo(
      read_topo("a100-pcie-8x-nvlink-bridge-pairs_k8s-device-plugin-issue546.txt"));
  ASSERT_THAT(t, IsOk());
  const std::set<std::pair<std::size_t, std::size_t>> bridged = {{0, 2}, {1, 3}, {4, 5}, {6, 7}};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = i + 1; j < 8; ++j) {
      EXPECT_EQ(relation(*t, i, j), bridged.count({i, j}) ? "NV12" : "SYS") << i << "," << j;
    }
  }
  EXPECT_EQ(nvlink_generation(*t), 3u);
  EXPECT_EQ(t->views().gpu_numa(1), 0);
  EXPECT_EQ(t->views().gpu_numa(6), 1);
}

TEST(NvidiaSmiImport, PartialDgx2) {
  auto t = import_partial(read_topo("dgx2_nccl-tests-issue78_PARTIAL.txt"));
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->views().gpu_count(), 16u);
  ASSERT_EQ(t->views().nic_count(), 10u);
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 16; ++j) {
      if (i != j) {
        EXPECT_EQ(relation(*t, i, j), "NV6") << i << "," << j;
      }
    }
  }
  EXPECT_EQ(relation(*t, 0, 16), "PIX");   // GPU0-mlx5_0
  EXPECT_EQ(relation(*t, 0, 17), "PXB");   // GPU0-mlx5_1
  EXPECT_EQ(relation(*t, 2, 17), "PIX");   // GPU2-mlx5_1
  EXPECT_EQ(relation(*t, 3, 19), "NODE");  // GPU3-mlx5_3
  EXPECT_EQ(relation(*t, 1, 25), "SYS");   // GPU1-mlx5_9
  EXPECT_EQ(t->vertex(t->gpus()[2]).cpuset, "0-23,48-71");
  EXPECT_EQ(t->vertex(t->gpus()[9]).cpuset, "");  // no row: unknown
  EXPECT_EQ(nvlink_generation(*t), 2u);
}

TEST(NvidiaSmiImport, PartialDgxA100) {
  auto t = import_partial(read_topo("dgx-a100-320gb_dcgm-issue149_PARTIAL.txt"));
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->views().gpu_count(), 8u);
  ASSERT_EQ(t->views().nic_count(), 10u);
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      // rows GPU0-5 give NV12; GPU6/GPU7 have no rows, so their pair is unknown: no NVLink
      const bool known = i < 6 || j < 6;
      if (i != j) {
        EXPECT_EQ(t->views().relation(i, j).nvlinks, known ? 12 : 0) << i << "," << j;
      }
    }
  }
  EXPECT_EQ(relation(*t, 0, 8), "PXB");   // GPU0-NIC0
  EXPECT_EQ(relation(*t, 1, 9), "PXB");   // GPU1-NIC1
  EXPECT_EQ(relation(*t, 2, 10), "PXB");  // GPU2-NIC2
  EXPECT_EQ(relation(*t, 0, 10), "SYS");  // GPU0-NIC2
  const std::vector<std::int32_t> numa = {3, 3, 1, 1, 7, 7, -1, -1};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(t->vertex(t->gpus()[i]).numa, numa[i]) << i;
  EXPECT_EQ(nvlink_generation(*t), 3u);
}

TEST(NvidiaSmiImport, OptionsSetModelAndGeneration) {
  nvidia_smi_import_options options;
  options.allow_partial = true;
  options.gpu_model = gpu_type("H100-SXM5-80GB");
  options.name = "h100";
  auto t = import_nvidia_smi_topo(read_topo("hgx-h100-sxm_nccl-issue1264.txt"), options);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->name(), "h100");
  const auto& gpu = t->vertex(t->gpus()[5]);
  EXPECT_EQ(gpu.model, gpu_type("H100-SXM5-80GB"));
  EXPECT_EQ(gpu.memory_mib, 81920);
  EXPECT_EQ(t->uplink(t->gpus()[5]).generation, 5);  // the model's PCIe generation

  options.gpu_model = gpu_type();
  options.nvlink_generation = 5;
  t = import_nvidia_smi_topo(read_topo("hgx-h100-sxm_nccl-issue1264.txt"), options);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(nvlink_generation(*t), 5u);
  EXPECT_TRUE(t->vertex(t->gpus()[0]).model.empty());

  options.nvlink_generation = 9;
  EXPECT_THAT(import_nvidia_smi_topo(read_topo("hgx-h100-sxm_nccl-issue1264.txt"), options),
              AllOf(HasErrc(errc::invalid_argument), ErrorContains("nvlink_generation")));
}

TEST(NvidiaSmiImport, NicLegendRenamesNicsAndKeepsIndices) {
  const std::string text =
      "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
      "GPU0\t X \tNV4\tPIX\tSYS\t0-7\t0\t\tN/A\n"
      "GPU1\tNV4\t X \tSYS\tPIX\t8-15\t1\t\tN/A\n"
      "NIC0\tPIX\tSYS\t X \tSYS\n"
      "NIC1\tSYS\tPIX\tSYS\t X \n"
      "\n"
      "Legend:\n"
      "\n"
      "  X    = Self\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n"
      "\n"
      "NIC Legend:\n"
      "\n"
      "  NIC0: mlx5_2\n"
      "  NIC1: mlx5_3\n";
  auto t = import_nvidia_smi_topo(text);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->nics().size(), 2u);
  EXPECT_EQ(t->vertex(t->nics()[0]).name, "mlx5_2");
  EXPECT_EQ(t->vertex(t->nics()[0]).index, 0);
  EXPECT_EQ(t->vertex(t->nics()[1]).name, "mlx5_3");
  EXPECT_EQ(relation(*t, 0, 1), "NV4");
  EXPECT_EQ(relation(*t, 1, 3), "PIX");
  EXPECT_EQ(relation(*t, 0, 3), "SYS");
  EXPECT_EQ(t->vertex(t->gpus()[1]).numa, 1);

  EXPECT_THAT(import_nvidia_smi_topo(text + "  NIC7: mlx5_9\n"),
              AllOf(HasErrc(errc::not_found), ErrorContains("line 16"), ErrorContains("NIC7")));
  EXPECT_THAT(import_nvidia_smi_topo(text + "  NIC0: mlx5_3\n"),
              AllOf(HasErrc(errc::already_exists), ErrorContains("mlx5_3")));
}

TEST(NvidiaSmiImport, AnsiEscapesAndCarriageReturnsAreBlanks) {
  const std::string text =
      "\x1b[4m\tGPU0\tGPU1\tCPU Affinity\x1b[0m\r\n"
      "GPU0\t X \tPHB\t0-3\r\n"
      "GPU1\tPHB\t X \t0-3\r\n";
  EXPECT_EQ(detect_topology_format(text), topology_format::nvidia_smi_topo);
  auto t = import_nvidia_smi_topo(text);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(relation(*t, 0, 1), "PHB");
  EXPECT_EQ(t->vertex(t->gpus()[1]).cpuset, "0-3");
}

// A matrix for `n` devices named by `names` from a symmetric token table.
std::string make_matrix(const std::vector<std::string>& names,
                        const std::vector<std::vector<std::string>>& cells) {
  std::string out = "# synthetic\n";
  for (const auto& n : names) out += "\t" + n;
  out += "\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += names[i];
    for (std::size_t j = 0; j < names.size(); ++j) out += "\t" + cells[i][j];
    out += "\n";
  }
  return out;
}

TEST(NvidiaSmiImport, SiblingsOfOneSwitchStayPxb) {
  // Three devices pairwise PXB: no two may sit side by side below one switch.
  const auto text = make_matrix({"GPU0", "GPU1", "NIC0"},
                                {{"X", "PXB", "PXB"}, {"PXB", "X", "PXB"}, {"PXB", "PXB", "X"}});
  auto t = import_nvidia_smi_topo(text);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(expect_round_trip(*t, text), 9u);
}

TEST(NvidiaSmiImport, SysWithoutAffinityStillGivesSys) {
  // No NUMA column: SYS proves two NUMA nodes, which the importer creates.
  const auto text = make_matrix({"GPU0", "GPU1"}, {{"X", "SYS"}, {"SYS", "X"}});
  auto t = import_nvidia_smi_topo(text);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(relation(*t, 0, 1), "SYS");
  EXPECT_GE(t->vertices_of(vertex_kind::numa_node).size(), 2u);
}

// Random laminar matrices (nested classes at PIX, PXB, PHB, NODE) must round-trip exactly.
TEST(NvidiaSmiImport, RandomTreeMatricesRoundTrip) {
  std::mt19937 rng(20240611);
  const std::array<std::string, 6> tokens = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t gpus = 1 + rng() % 9;
    const std::size_t nics = rng() % 5;
    const std::size_t n = gpus + nics;
    // class[k][i]: label at level k (0 PIX .. 3 NODE); coarser levels merge finer ones.
    std::vector<std::array<std::size_t, 4>> label(n);
    for (std::size_t i = 0; i < n; ++i) {
      label[i][3] = rng() % 3;
      label[i][2] = label[i][3] * 10 + rng() % 2;
      label[i][1] = label[i][2] * 10 + rng() % 3;
      label[i][0] = label[i][1] * 10 + rng() % 3;
    }
    std::vector<std::string> names;
    for (std::size_t i = 0; i < gpus; ++i) names.push_back("GPU" + std::to_string(i));
    for (std::size_t i = 0; i < nics; ++i) names.push_back("mlx5_" + std::to_string(i));
    std::vector<std::vector<std::string>> cells(n, std::vector<std::string>(n));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        std::size_t level = 5;
        for (std::size_t k = 4; k >= 1; --k) {
          if (label[i][k - 1] == label[j][k - 1]) level = k;
        }
        cells[i][j] = i == j ? "X" : tokens[level];
      }
    }
    // some GPU pairs get NVLinks, which hide their PCIe cell
    for (std::size_t i = 0; i < gpus; ++i) {
      for (std::size_t j = i + 1; j < gpus; ++j) {
        if (rng() % 4 == 0) cells[i][j] = cells[j][i] = "NV" + std::to_string(1 + rng() % 18);
      }
    }
    const auto text = make_matrix(names, cells);
    SCOPED_TRACE(text);
    auto t = import_nvidia_smi_topo(text);
    ASSERT_THAT(t, IsOk());
    EXPECT_EQ(expect_round_trip(*t, text), n * n);
  }
}

TEST(NvidiaSmiImport, MalformedMatricesNameTheLine) {
  const std::string header = "\tGPU0\tGPU1\tNIC0\n";  // line 1
  auto with_rows = [&](const std::string& rows) { return import_nvidia_smi_topo(header + rows); };
  const std::string ok_rows = "GPU0\tX\tNV1\tPIX\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPXB\tX\n";
  ASSERT_THAT(with_rows(ok_rows), IsOk());

  // ragged row: NIC0 lacks a cell
  EXPECT_THAT(
      with_rows("GPU0\tX\tNV1\tPIX\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPXB\n"),
      AllOf(HasErrc(errc::invalid_argument), ErrorContains("line 4"), ErrorContains("ragged")));
  // non-square: a row with more cells than the header has columns
  EXPECT_THAT(with_rows("GPU0\tX\tNV1\tPIX\tSYS\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPXB\tX\n"),
              AllOf(ErrorContains("line 2"), ErrorContains("ragged")));
  // GPU row that lost a cell before its affinity value
  EXPECT_THAT(
      import_nvidia_smi_topo("\tGPU0\tGPU1\tCPU Affinity\nGPU0\tX\t0-3\nGPU1\tSYS\tX\t4-7\n"),
      AllOf(ErrorContains("line 2"), ErrorContains("ragged")));
  // asymmetric: GPU1/NIC0 PXB but NIC0/GPU1 PIX; both cells named
  EXPECT_THAT(with_rows("GPU0\tX\tNV1\tPIX\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPIX\tX\n"),
              AllOf(HasErrc(errc::invalid_argument), ErrorContains("line 3"),
                    ErrorContains("line 4"), ErrorContains("symmetric")));
  // unknown tokens, with line and column
  EXPECT_THAT(with_rows("GPU0\tX\tNVX\tPIX\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPXB\tX\n"),
              AllOf(HasErrc(errc::invalid_argument), ErrorContains("line 2"),
                    ErrorContains("column 3 (GPU1)"), ErrorContains("'NVX'")));
  EXPECT_THAT(
      with_rows("GPU0\tX\tNV1\tPIX\nGPU1\tNV1\tX\tFOO\nNIC0\tPIX\tPXB\tX\n"),
      AllOf(ErrorContains("line 3"), ErrorContains("column 4 (NIC0)"), ErrorContains("'FOO'")));
  EXPECT_THAT(with_rows("GPU0\tX\tNV0\tPIX\nGPU1\tNV0\tX\tPXB\nNIC0\tPIX\tPXB\tX\n"),
              ErrorContains("'NV0'"));
  // X placement and NVLinks to NICs
  EXPECT_THAT(with_rows("GPU0\tPIX\tNV1\tPIX\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPXB\tX\n"),
              AllOf(ErrorContains("line 2"), ErrorContains("diagonal")));
  EXPECT_THAT(with_rows("GPU0\tX\tX\tPIX\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPXB\tX\n"),
              AllOf(ErrorContains("line 2"), ErrorContains("off the diagonal")));
  EXPECT_THAT(with_rows("GPU0\tX\tNV1\tNV2\nGPU1\tNV1\tX\tPXB\nNIC0\tNV2\tPXB\tX\n"),
              AllOf(ErrorContains("line 2"), ErrorContains("GPUs only")));
  // duplicate row, unknown row device, missing row
  EXPECT_THAT(
      with_rows(ok_rows + "GPU1\tNV1\tX\tPXB\n"),
      AllOf(HasErrc(errc::already_exists), ErrorContains("line 5"), ErrorContains("line 3")));
  EXPECT_THAT(with_rows(ok_rows + "GPU\x01\tNV1\tX\tPXB\n"),
              AllOf(ErrorContains("line 5"), ErrorContains("0x01")));
  EXPECT_THAT(with_rows("GPU0\tX\tNV1\tP\x7fIX\nGPU1\tNV1\tX\tPXB\nNIC0\tPIX\tPXB\tX\n"),
              ErrorContains("'P\\x7fIX'"));
  EXPECT_THAT(with_rows(ok_rows + "GPU7\tNV1\tX\tPXB\n"),
              AllOf(HasErrc(errc::not_found), ErrorContains("line 5"), ErrorContains("GPU7")));
  EXPECT_THAT(with_rows("GPU0\tX\tNV1\tPIX\nNIC0\tPIX\tPXB\tX\n"),
              AllOf(HasErrc(errc::invalid_argument), ErrorContains("no row for GPU1")));
  // no PCIe tree gives PIX, PIX and SYS around a triangle
  EXPECT_THAT(with_rows("GPU0\tX\tPIX\tSYS\nGPU1\tPIX\tX\tPIX\nNIC0\tSYS\tPIX\tX\n"),
              AllOf(HasErrc(errc::invalid_argument), ErrorContains("no PCIe tree")));
}

TEST(NvidiaSmiImport, MalformedHeaders) {
  EXPECT_THAT(import_nvidia_smi_topo(""),
              AllOf(HasErrc(errc::invalid_argument), ErrorContains("no header")));
  EXPECT_THAT(import_nvidia_smi_topo("# only a comment\n\n"), ErrorContains("no header"));
  // header only: every row is missing
  EXPECT_THAT(import_nvidia_smi_topo("\tGPU0\tGPU1\n"), ErrorContains("no row for GPU0, GPU1"));
  // a matrix without its header line
  EXPECT_THAT(import_nvidia_smi_topo("GPU0\tX\tNV1\nGPU1\tNV1\tX\n"),
              AllOf(ErrorContains("line 1"), ErrorContains("header line is missing")));
  EXPECT_THAT(import_nvidia_smi_topo("\tGPU0\tGPU0\nGPU0\tX\tX\n"),
              AllOf(HasErrc(errc::already_exists), ErrorContains("line 1"), ErrorContains("GPU0")));
  EXPECT_THAT(import_nvidia_smi_topo("\tGPU0\tGPU2\nGPU0\tX\tSYS\nGPU2\tSYS\tX\n"),
              AllOf(ErrorContains("line 1"), ErrorContains("GPU2")));
  EXPECT_THAT(import_nvidia_smi_topo("\tGPU0\tCPU Affinity\tmlx5_0\n"),
              AllOf(ErrorContains("line 1"), ErrorContains("mlx5_0")));
  // absurd size: 1025 device columns
  std::string huge;
  for (int i = 0; i < 1025; ++i) huge += "\tGPU" + std::to_string(i);
  EXPECT_THAT(import_nvidia_smi_topo(huge + "\n"),
              AllOf(HasErrc(errc::out_of_range), ErrorContains("1024")));
  EXPECT_THAT(import_nvidia_smi_topo(std::string(max_topology_text_bytes + 1, ' ')),
              HasErrc(errc::out_of_range));
  // bad affinity values
  EXPECT_THAT(import_nvidia_smi_topo("\tGPU0\tNUMA Affinity\nGPU0\tX\tzero\n"),
              AllOf(ErrorContains("line 2"), ErrorContains("'zero'")));
  EXPECT_THAT(import_nvidia_smi_topo("\tGPU0\tCPU Affinity\nGPU0\tX\t0-3;7\n"),
              AllOf(ErrorContains("line 2"), ErrorContains("'0-3;7'")));
}

TEST(DetectTopologyFormat, ByContent) {
  EXPECT_EQ(
      detect_topology_format("<?xml version=\"1.0\"?>\n<!-- x -->\n<topology version=\"2.0\">"),
      topology_format::hwloc_xml);
  EXPECT_EQ(detect_topology_format("\xEF\xBB\xBF<system version=\"1\">"),
            topology_format::nccl_xml);
  EXPECT_EQ(detect_topology_format("  \n{\"nodes\": []}"), topology_format::json);
  EXPECT_EQ(detect_topology_format("# comment\n\tGPU0\tGPU1\n"), topology_format::nvidia_smi_topo);
  EXPECT_EQ(detect_topology_format("<html>"), topology_format::unknown);
  EXPECT_EQ(detect_topology_format("hello world"), topology_format::unknown);
  EXPECT_EQ(detect_topology_format(""), topology_format::unknown);
  EXPECT_EQ(to_string(topology_format::nvidia_smi_topo), "nvidia_smi_topo");
}

}  // namespace
}  // namespace hetsched
