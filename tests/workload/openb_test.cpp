// SPDX-License-Identifier: MIT
// openb readers: the saved pod and node lists, every variant's columns, and errors that name the
// line and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <hetsched/workload/openb.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::workload {
namespace {

using testing::ErrorContains;
using testing::HasErrc;

const std::string dir = "data/traces/alibaba_openb_v2023/";

TEST(OpenbPods, ReadsTheDefaultTrace) {
  auto pods = parse_openb_pods(testing::read_shared(dir + "openb_pod_list_default.csv"));
  ASSERT_THAT(pods, testing::IsOk());
  ASSERT_EQ(pods->size(), 8152U);
  const auto& p = (*pods)[1];
  // openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
  EXPECT_EQ(p.name, "openb-pod-0001");
  EXPECT_EQ(p.cpu_milli, 6000);
  EXPECT_EQ(p.memory_mib, 12288);
  EXPECT_EQ(p.num_gpu, 1U);
  EXPECT_EQ(p.gpu_milli, 460);
  EXPECT_EQ(p.gpu_spec, "");
  EXPECT_EQ(p.qos, "LS");
  EXPECT_EQ(p.creation_time, 427061);
  EXPECT_EQ(p.deletion_time, 12902960);
  EXPECT_EQ(p.scheduled_time, 427061);
  std::int64_t gpu_milli = 0;
  std::size_t sharing = 0;
  std::size_t unscheduled = 0;
  for (const auto& x : *pods) {
    gpu_milli += x.gpu_milli * x.num_gpu;
    if (x.num_gpu == 1 && x.gpu_milli < 1000) ++sharing;
    if (!x.scheduled_time) ++unscheduled;
  }
  EXPECT_EQ(gpu_milli, 6086800);  // 6,086.8 GPUs
  EXPECT_EQ(sharing, 3078U);
  EXPECT_EQ(unscheduled, 897U);
}

TEST(OpenbPods, ReadsFiveColumnAndGpuSpecVariants) {
  auto multi = parse_openb_pods(testing::read_shared(dir + "openb_pod_list_multigpu50.csv"));
  ASSERT_THAT(multi, testing::IsOk());
  EXPECT_EQ(multi->size(), 9061U);
  EXPECT_EQ(multi->front().creation_time, std::nullopt);
  EXPECT_THAT(openb_to_trace(*multi), ErrorContains("openb-pod-0000"));
  auto spec = parse_openb_pods(testing::read_shared(dir + "openb_pod_list_gpuspec33.csv"));
  ASSERT_THAT(spec, testing::IsOk());
  std::size_t constrained = 0;
  for (const auto& p : *spec)
    if (!p.gpu_spec.empty()) ++constrained;
  EXPECT_EQ(constrained, 2388U);
}

TEST(OpenbNodes, ReadsTheGpuNodeList) {
  auto nodes = parse_openb_nodes(testing::read_shared(dir + "openb_node_list_gpu_node.csv"));
  ASSERT_THAT(nodes, testing::IsOk());
  ASSERT_EQ(nodes->size(), 1213U);
  EXPECT_EQ(nodes->front(), (openb_node{"openb-node-0000", 64000, 262144, 2, "P100"}));
  std::int64_t gpus = 0;
  for (const auto& n : *nodes) gpus += n.gpus;
  EXPECT_EQ(gpus, 6212);
  auto all = parse_openb_nodes(testing::read_shared(dir + "openb_node_list_all_node.csv"));
  ASSERT_THAT(all, testing::IsOk());
  EXPECT_EQ(all->size(), 1523U);
}

TEST(OpenbPods, ToTraceKeepsRequestsAndTimes) {
  auto pods = parse_openb_pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\r\n"
      "a,8000,100,8,1000,V100M16|V100M32,BE,Running,10,25,\r\n"
      "b,4000,50,1,250,,LS,Failed,7,7,7\r\n");
  ASSERT_THAT(pods, testing::IsOk());
  auto t = openb_to_trace(*pods);
  ASSERT_THAT(t, testing::IsOk());
  EXPECT_EQ((*t)[0].gpus_per_task, 8U);
  EXPECT_EQ((*t)[0].gpu_milli_per_task, 8000);
  EXPECT_EQ((*t)[0].submit_ms, 10000);
  EXPECT_EQ((*t)[0].duration_ms, 15000);
  EXPECT_EQ((*t)[0].gpu_type, "V100M16|V100M32");
  EXPECT_EQ((*t)[0].priority, 0);
  EXPECT_EQ((*t)[1].gpu_milli_per_task, 250);
  EXPECT_EQ((*t)[1].duration_ms, 1);  // deleted the second it was created
  EXPECT_EQ((*t)[1].priority, 1);
}

TEST(OpenbPods, ErrorsNameLineAndField) {
  const std::string head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,1,500\nb,12x,1,1,500\n"),
              ErrorContains("line 3: field 'cpu_milli': '12x' is not an integer"));
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,2,500\n"),
              ErrorContains("line 2: field 'gpu_milli': 500 does not fit num_gpu 2"));
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,1,500\na,1,1,1,500\n"), HasErrc(errc::already_exists));
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,1\n"),
              ErrorContains("line 2: 4 fields, header has 5"));
  EXPECT_THAT(parse_openb_pods(head + "a,-1,1,1,500\n"), ErrorContains("field 'cpu_milli'"));
  EXPECT_THAT(parse_openb_pods(head + "\na,1,1,1,500\n"), ErrorContains("line 2: blank line"));
  EXPECT_THAT(parse_openb_pods(head + "\"a\",1,1,1,500\n"), ErrorContains("quoted"));
  EXPECT_THAT(parse_openb_pods("name,cpu_milli,memory_mib,num_gpu\n"),
              ErrorContains("missing column 'gpu_milli'"));
  EXPECT_THAT(parse_openb_pods(""), ErrorContains("line 1: missing header"));
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,65,1000\n"), HasErrc(errc::out_of_range));
  EXPECT_THAT(parse_openb_nodes("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,2,\n"),
              ErrorContains("line 2: field 'model' is empty on a GPU node"));
  EXPECT_THAT(parse_openb_nodes("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,2,T4,x\n"),
              ErrorContains("line 2: 6 fields, header has 5"));
}

TEST(OpenbPods, ErrorsNameTheSourceWhenGiven) {
  const std::string head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,1,500\nb,12x,1,1,500\n", "pods.csv"),
              ErrorContains("pods.csv:3: field 'cpu_milli': '12x' is not an integer"));
  EXPECT_THAT(parse_openb_nodes("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,2,\n", "nodes.csv"),
              ErrorContains("nodes.csv:2: field 'model' is empty on a GPU node"));
}

TEST(OpenbPods, ReportsAFileCutInsideItsLastLineOrAfterItsHeader) {
  // issue 17: a cut file was read without a word.
  const std::string text = testing::read_shared(dir + "openb_node_list_gpu_node.csv");
  ASSERT_TRUE(text.ends_with("openb-node-1212,96000,393216,8,G2\n"));
  const auto cut = parse_openb_nodes(text.substr(0, text.size() - 4), "nodes.csv");
  EXPECT_THAT(cut, HasErrc(errc::invalid_argument));
  EXPECT_THAT(cut, ErrorContains("nodes.csv:1214: field 'gpu': '8' ends the text without a line "
                                 "break: the file looks cut inside this line"));
  const std::string head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,1,50", "p.csv"),
              ErrorContains("p.csv:2: field 'gpu_milli': '50' ends the text without a line break"));
  EXPECT_THAT(parse_openb_pods(head, "p.csv"),
              ErrorContains("p.csv:2: field 'name': no pods after the header"));
  EXPECT_THAT(parse_openb_nodes("sn,cpu_milli,memory_mib,gpu,model\n", "n.csv"),
              ErrorContains("n.csv:2: field 'sn': no nodes after the header"));
}

TEST(OpenbPods, BoundsTimesAndOrdersThem) {
  // issue 17: creation times up to 2^50 s passed and overflowed the trace's milliseconds; a
  // deletion before the creation became a 1 ms pod.
  const std::string head =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n";
  const auto huge =
      parse_openb_pods(head + "a,1,1,1,500,1125899906842624,1125899906842625\n", "p.csv");
  EXPECT_THAT(huge, HasErrc(errc::out_of_range));
  EXPECT_THAT(huge, ErrorContains("p.csv:2: field 'creation_time': 1125899906842624 outside "
                                  "0..10000000000"));
  EXPECT_THAT(parse_openb_pods(head + "a,1,1,1,500,100,99\n", "p.csv"),
              ErrorContains("p.csv:2: field 'deletion_time': 99 is before creation_time 100"));
  // Pods without times (the multigpu lists) are named by line and field in openb_to_trace.
  const auto pods = parse_openb_pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nfirst,1,1,1,500\n", "multigpu20.csv");
  ASSERT_TRUE(pods.has_value());
  EXPECT_EQ(pods->front().line, 2u);
  EXPECT_THAT(openb_to_trace(*pods, "multigpu20.csv"),
              ErrorContains("multigpu20.csv:2: field 'creation_time': pod 'first' has none"));
  // Pods built in code are checked as well.
  openb_pod p;
  p.name = "coded";
  p.creation_time = 10;
  p.deletion_time = 5;
  EXPECT_THAT(
      openb_to_trace(std::vector<openb_pod>{p}),
      ErrorContains("pod 'coded': field 'deletion_time': pod 'coded' lives from 10 to 5 s"));
}

}  // namespace
}  // namespace hetsched::workload
