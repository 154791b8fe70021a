// SPDX-License-Identifier: MIT
// Node health from full Node objects (nodeCacheCapable: false): cordoned and NotReady nodes are
// avoided by the packer and marked bad in HiveD, and come back when Ready again.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extender.hpp"
#include "fixtures.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

// A v1.Node with a Ready condition of `ready` ("True", "False", "Unknown"; "" = no status) and
// spec.unschedulable = `cordoned`.
json node_obj(const std::string& name, const std::string& ready, bool cordoned = false) {
  json n{{"kind", "Node"},
         {"apiVersion", "v1"},
         {"metadata", {{"name", name}, {"uid", "uid-" + name}}},
         {"spec", json::object()}};
  if (cordoned) n["spec"]["unschedulable"] = true;
  if (!ready.empty())
    n["status"]["conditions"] =
        json::array({{{"type", "MemoryPressure"}, {"status", "False"}},
                     {{"type", "Ready"}, {"status", ready}, {"reason", "KubeletReady"}}});
  return n;
}

json args_with_nodes(const json& pod, const std::vector<json>& nodes) {
  return json{{"Pod", pod}, {"Nodes", {{"metadata", json::object()}, {"items", nodes}}}};
}

std::vector<std::string> names_of(const json& filter_body) {
  std::vector<std::string> out;
  for (const auto& n : filter_body["Nodes"]["items"]) out.push_back(n["metadata"]["name"]);
  return out;
}

TEST(NodeHealth, DecodedFromNodeObjects) {
  auto args = decode_extender_args(
      args_with_nodes(test::gpu_pod("p", "u-p", 1),
                      {node_obj("a", "True"), node_obj("b", "False"), node_obj("c", "True", true),
                       node_obj("d", ""), node_obj("e", "Unknown")}));
  ASSERT_TRUE(args.has_value()) << args.error().message;
  ASSERT_EQ(args->nodes.size(), 5u);
  EXPECT_EQ(args->nodes[0].health, node_health::ready);
  EXPECT_EQ(args->nodes[1].health, node_health::not_ready);
  EXPECT_EQ(args->nodes[2].health, node_health::unschedulable);
  EXPECT_EQ(args->nodes[3].health, node_health::unknown);
  EXPECT_EQ(args->nodes[4].health, node_health::not_ready);
  // NodeNames carry no health
  auto names = decode_extender_args(test::args_for(test::gpu_pod("p", "u-p", 1), {"a"}));
  EXPECT_EQ(names->nodes[0].health, node_health::unknown);
  json bad = args_with_nodes(test::gpu_pod("p", "u-p", 1), {node_obj("a", "True")});
  bad["Nodes"]["items"][0]["spec"]["unschedulable"] = "yes";
  EXPECT_EQ(decode_extender_args(bad).error().message,
            "Node a: spec.unschedulable must be a boolean");
}

TEST(NodeHealth, PackerAvoidsUnhealthyNodesUntilReady) {
  extender ex(test::packer_cluster());
  const json pod = test::gpu_pod("p", "u-p", 1);
  const auto f = ex.handle(
      "filter", args_with_nodes(pod, {node_obj("v100-0", "True", true), node_obj("v100-1", "False"),
                                      node_obj("v100-2", "True"), node_obj("a100-0", "")}));
  ASSERT_EQ(f.status, 200) << f.body.dump();
  EXPECT_EQ(names_of(f.body), (std::vector<std::string>{"v100-2", "a100-0"}));
  EXPECT_EQ(f.body["FailedAndUnresolvableNodes"]["v100-0"], "node is unschedulable (cordoned)");
  EXPECT_EQ(f.body["FailedAndUnresolvableNodes"]["v100-1"], "node is not Ready");

  // the health is remembered: NodeNames requests and binds see it too
  const auto p = ex.handle("prioritize", test::args_for(pod, {"v100-0", "v100-1", "v100-2"}));
  ASSERT_EQ(p.status, 200);
  EXPECT_EQ(p.body[0]["Score"], 0);
  EXPECT_EQ(p.body[1]["Score"], 0);
  EXPECT_EQ(p.body[2]["Score"], 5);  // 1 GPU on an empty DGX-1: (100 + 12) / 20
  const std::string before = ex.digest();
  const auto refused = ex.handle("bind", test::bind_for(pod, "v100-1"));
  EXPECT_EQ(refused.status, 200);
  EXPECT_EQ(refused.body["Error"], "pod default/p cannot bind to v100-1: node is not Ready");
  EXPECT_EQ(ex.digest(), before);

  // Ready again (and uncordoned): the node passes and binds
  const auto again = ex.handle(
      "filter", args_with_nodes(pod, {node_obj("v100-0", "True"), node_obj("v100-1", "True")}));
  ASSERT_EQ(again.status, 200);
  EXPECT_EQ(names_of(again.body), (std::vector<std::string>{"v100-0", "v100-1"}));
  EXPECT_NE(ex.digest(), before);
  EXPECT_EQ(ex.handle("bind", test::bind_for(pod, "v100-1")).body["Error"], "");
  EXPECT_EQ(ex.binding("u-p")->where.node, "v100-1");
}

TEST(NodeHealth, HivedMarksNodesBadAndHealthy) {
  // control: with both nodes Ready, HiveD binds VC a's cell to n0 first
  extender control(test::hived_cluster());
  const auto c =
      control.handle("filter", args_with_nodes(test::hived_pod("first", "u-first", "a", 10, 4),
                                               {node_obj("n0", "True"), node_obj("n1", "True")}));
  ASSERT_EQ(c.status, 200);
  EXPECT_EQ(names_of(c.body), std::vector<std::string>{"n0"});

  extender ex(test::hived_cluster());
  // VC a's one NODE cell: n0 is NotReady, so HiveD binds the cell to n1
  const json first = test::hived_pod("first", "u-first", "a", 10, 4);
  const auto f = ex.handle(
      "filter", args_with_nodes(first, {node_obj("n0", "False"), node_obj("n1", "True")}));
  ASSERT_EQ(f.status, 200) << f.body.dump();
  EXPECT_EQ(names_of(f.body), std::vector<std::string>{"n1"});
  EXPECT_EQ(f.body["FailedNodes"]["n0"], "HiveD places the pod on n1");
  ASSERT_EQ(ex.handle("bind", test::bind_for(first, "n1")).body["Error"], "");

  // n0 Ready again: VC b's pod takes it
  const json second = test::hived_pod("second", "u-second", "b", 10, 4);
  const auto g = ex.handle(
      "filter", args_with_nodes(second, {node_obj("n0", "True"), node_obj("n1", "True")}));
  ASSERT_EQ(g.status, 200) << g.body.dump();
  EXPECT_EQ(names_of(g.body), std::vector<std::string>{"n0"});
  ASSERT_EQ(ex.handle("bind", test::bind_for(second, "n0")).body["Error"], "");
  EXPECT_EQ(ex.used_gpus(), 8);
}

TEST(NodeHealth, HivedWaitsWhileItsOnlyFreeNodeIsCordoned) {
  extender ex(test::hived_cluster());
  const json pod = test::hived_pod("p", "u-p", "a", 10, 4);
  const auto f = ex.handle(
      "filter", args_with_nodes(pod, {node_obj("n0", "True", true), node_obj("n1", "Unknown")}));
  ASSERT_EQ(f.status, 200) << f.body.dump();
  EXPECT_TRUE(f.body["Nodes"]["items"].empty());
  EXPECT_NE(f.body["FailedNodes"]["n0"].get<std::string>().find("HiveD: pod waits: "),
            std::string::npos);
}

TEST(NodeHealth, FailedRequestKeepsTheOldHealth) {
  extender hived(test::hived_cluster());
  const std::string before = hived.digest();
  // unknown VC: HiveD refuses the pod after the health was applied; it is undone
  const auto r = hived.handle(
      "filter", args_with_nodes(test::hived_pod("p", "u-p", "zz", 1, 1),
                                {node_obj("n0", "False"), node_obj("n1", "True", true)}));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(hived.digest(), before);
  const auto s = hived.handle("prioritize",
                              args_with_nodes(test::hived_pod("p", "u-p", "zz", 1, 1),
                                              {node_obj("n0", "False"), node_obj("n1", "True")}));
  EXPECT_EQ(s.status, 400);
  EXPECT_EQ(hived.digest(), before);

  extender packer(test::packer_cluster());
  const std::string empty = packer.digest();
  const auto big = packer.handle(
      "filter", args_with_nodes(test::gpu_pod("big", "u-big", 16), {node_obj("v100-0", "False")}));
  EXPECT_EQ(big.status, 400);
  EXPECT_EQ(packer.digest(), empty);
}

}  // namespace
}  // namespace hetsched::k8s
