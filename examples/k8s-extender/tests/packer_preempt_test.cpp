// SPDX-License-Identifier: MIT
// The packer backend's preempt: the victim choice (packer_preemption.hpp) and kube-scheduler's
// ExtenderPreemptionArgs replayed over loopback.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <httplib.h>
#include <memory>
#include <string>
#include <vector>

#include "extender.hpp"
#include "fixtures.hpp"
#include "packer_preemption.hpp"
#include "server.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using strings = std::vector<std::string>;

TEST(PackerVictimChoice, LowestPriorityLevelFirst) {
  // one priority-2 pod would do, but the two priority-1 pods are enough
  auto c = choose_gpu_victims(4, {{"e3", 4, 2}, {"e2", 2, 1}, {"e1", 2, 1}});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, (strings{"e1", "e2"}));
}

TEST(PackerVictimChoice, FewestVictimsThenFewestGpusThenUids) {
  // criterion 2: one 4-GPU pod rather than two 2-GPU pods of the same priority
  EXPECT_EQ(choose_gpu_victims(3, {{"a", 2, 0}, {"b", 2, 0}, {"c", 4, 0}}).value(), strings{"c"});
  // criterion 3: 3 GPUs released rather than 4
  EXPECT_EQ(choose_gpu_victims(3, {{"big", 4, 0}, {"fit", 3, 0}, {"one", 1, 0}}).value(),
            strings{"fit"});
  // criterion 4: equal size and GPUs: smallest UID list
  EXPECT_EQ(choose_gpu_victims(2, {{"z", 2, 0}, {"m", 2, 0}, {"q", 2, 0}}).value(), strings{"m"});
  // a higher level is used only when the lower ones do not suffice; then fewest victims
  EXPECT_EQ(choose_gpu_victims(5, {{"l1", 1, 0}, {"l2", 1, 0}, {"h", 4, 7}, {"h2", 2, 7}}).value(),
            (strings{"h", "l1"}));
}

TEST(PackerVictimChoice, NothingNeededOrNotEnough) {
  EXPECT_EQ(choose_gpu_victims(0, {{"a", 2, 0}}).value(), strings{});
  EXPECT_EQ(choose_gpu_victims(-3, {}).value(), strings{});
  EXPECT_FALSE(choose_gpu_victims(5, {{"a", 2, 0}, {"b", 2, 9}}).has_value());
  EXPECT_FALSE(choose_gpu_victims(1, {}).has_value());
}

json prio_pod(const std::string& uid, int gpus, int priority) {
  json pod = test::gpu_pod(uid, uid, gpus);
  pod["spec"]["priority"] = priority;
  return pod;
}

// Packer cluster (tests/data/packer_cluster.json): v100-0..3 (8 GPUs each) and a100-0 (8).
// v100-0: low-a (4 GPUs, priority 1), low-b (2, 1), mid-c (2, 5)
// v100-1: e1 (2, 1), e2 (2, 1), e3 (4, 2)
// v100-2: x (2, 1), keep (6, 1000)
// a100-0: y (8, 0)
class PackerPreemptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ex_ = std::make_unique<extender>(test::packer_cluster());
    place("v100-0", prio_pod("low-a", 4, 1));
    place("v100-0", prio_pod("low-b", 2, 1));
    place("v100-0", prio_pod("mid-c", 2, 5));
    place("v100-1", prio_pod("e1", 2, 1));
    place("v100-1", prio_pod("e2", 2, 1));
    place("v100-1", prio_pod("e3", 4, 2));
    place("v100-2", prio_pod("x", 2, 1));
    place("v100-2", prio_pod("keep", 6, 1000));
    place("a100-0", prio_pod("y", 8, 0));
    ASSERT_EQ(ex_->used_gpus(), 32);
    // the preemptor: 4 V100 GPUs at priority 100; kube-scheduler filtered it (no node fits)
    urgent_ = prio_pod("urgent", 4, 100);
    urgent_["spec"]["nodeSelector"] = json{{"hetsched.io/gpu-type", "V100"}};
    ASSERT_EQ(ex_->handle("filter", test::args_for(urgent_, {"v100-0", "v100-1", "v100-2"}))
                  .body["FailedNodes"]
                  .size(),
              3u);
    server_options opts;
    opts.enable_release = true;  // the watcher's route
    server_ = std::make_unique<extender_server>(*ex_, opts);
    auto port = server_->start();
    ASSERT_TRUE(port.has_value()) << port.error().message;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
  }
  void TearDown() override {
    client_.reset();
    if (server_) server_->stop();
  }
  void place(const std::string& node, const json& pod) {
    ASSERT_EQ(ex_->handle("filter", test::args_for(pod, {node})).status, 200);
    auto b = ex_->handle("bind", test::bind_for(pod, node));
    ASSERT_EQ(b.body["Error"], "") << pod["metadata"]["uid"];
  }
  static json meta(const strings& uids, int pdb) {
    json pods = json::array();
    for (const auto& u : uids) pods.push_back(json{{"UID", u}});
    return json{{"Pods", std::move(pods)}, {"NumPDBViolations", pdb}};
  }
  httplib::Result preempt(const json& body) {
    return client_->Post("/preempt", body.dump(), "application/json");
  }

  std::unique_ptr<extender> ex_;
  std::unique_ptr<extender_server> server_;
  std::unique_ptr<httplib::Client> client_;
  json urgent_;
};

TEST_F(PackerPreemptTest, MetaVictimsGiveTheMinimalSetPerNode) {
  // kube-scheduler's proposal (NodeNameToMetaVictims, as it sends it when the extender is
  // nodeCacheCapable): every lower-priority pod, plus a CPU-only pod it chose on v100-0
  json body{{"Pod", urgent_},
            {"NodeNameToVictims", nullptr},
            {"NodeNameToMetaVictims",
             {{"v100-0", meta({"low-a", "low-b", "mid-c", "cpu-only"}, 3)},
              {"v100-1", meta({"e3", "e2", "e1"}, 0)},
              {"v100-2", meta({"x"}, 1)},
              {"a100-0", meta({"y"}, 0)}}}};
  const std::string before = ex_->digest();
  auto r = preempt(body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  // v100-0: low-a alone frees 4 GPUs (priority 1 before mid-c's 5; one victim before two); the
  // CPU-only pod is kept as proposed; PDB violations capped at the 2 victims.
  // v100-1: e1 + e2 (priority 1) rather than e3 alone (priority 2).
  // v100-2: x frees only 2 GPUs (keep was not proposed): left out.
  // a100-0: the pod selects V100: left out.
  EXPECT_EQ(json::parse(r->body), json::parse(R"({"NodeNameToMetaVictims": {
      "v100-0": {"Pods": [{"UID": "low-a"}, {"UID": "cpu-only"}], "NumPDBViolations": 2},
      "v100-1": {"Pods": [{"UID": "e2"}, {"UID": "e1"}], "NumPDBViolations": 0}}})"));
  EXPECT_EQ(ex_->digest(), before);  // a query: nothing changed
  EXPECT_EQ(ex_->used_gpus(), 32);

  // kube-scheduler evicts low-a (the watcher releases it); the preemptor then binds on v100-0
  ASSERT_EQ(client_->Post("/release", R"({"PodUID": "low-a"})", "application/json")->status, 200);
  auto b = client_->Post("/bind", test::bind_for(urgent_, "v100-0").dump(), "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(json::parse(b->body)["Error"], "");
  EXPECT_EQ(ex_->binding("urgent")->where.gpus.size(), 4u);
}

TEST_F(PackerPreemptTest, FullVictimPodsGiveTheSameAnswer) {
  // NodeNameToVictims carries the victims as full v1.Pod objects (not nodeCacheCapable)
  json victims = json::array({prio_pod("e3", 4, 2), prio_pod("e2", 2, 1), prio_pod("e1", 2, 1)});
  json body{{"Pod", urgent_},
            {"NodeNameToVictims",
             {{"v100-1", {{"Pods", victims}, {"NumPDBViolations", 1}}},
              {"v100-2", {{"Pods", json::array({prio_pod("x", 2, 1)})}, {"NumPDBViolations", 0}}}}},
            {"NodeNameToMetaVictims", nullptr}};
  auto r = preempt(body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body), json::parse(R"({"NodeNameToMetaVictims": {
      "v100-1": {"Pods": [{"UID": "e2"}, {"UID": "e1"}], "NumPDBViolations": 1}}})"));
}

TEST_F(PackerPreemptTest, NodesThatCannotHelpAreLeftOut) {
  // victims on another node do not count; an empty proposal helps only where the pod fits
  json body{{"Pod", urgent_},
            {"NodeNameToMetaVictims",
             {{"v100-2", meta({"x", "low-a", "e3"}, 0)}, {"v100-3", meta({}, 0)}}}};
  auto r = preempt(body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  // v100-3 is empty: the pod fits without victims
  EXPECT_EQ(json::parse(r->body), json::parse(R"({"NodeNameToMetaVictims": {
      "v100-3": {"Pods": [], "NumPDBViolations": 0}}})"));
}

TEST_F(PackerPreemptTest, UnknownNodeIsRefusedWithoutStateChange) {
  json body{{"Pod", urgent_},
            {"NodeNameToMetaVictims",
             {{"v100-0", meta({"low-a"}, 0)}, {"gpu-node-9", meta({"low-a"}, 0)}}}};
  const std::string before = ex_->digest();
  auto r = preempt(body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json::parse(r->body)["Error"], "unknown node gpu-node-9: not in the packer cluster");
  EXPECT_EQ(ex_->digest(), before);
}

TEST(PackerPreemptTolerant, UnknownNodeIsLeftOut) {
  extender_options opts;
  opts.tolerate_unknown_nodes = true;
  extender ex(test::packer_cluster(), opts);
  json pod = prio_pod("low", 8, 0);
  ASSERT_EQ(ex.handle("filter", test::args_for(pod, {"v100-0"})).status, 200);
  ASSERT_EQ(ex.handle("bind", test::bind_for(pod, "v100-0")).body["Error"], "");
  json urgent = prio_pod("urgent", 8, 10);
  ASSERT_EQ(ex.handle("filter", test::args_for(urgent, {"v100-0"})).status, 200);
  json body{{"Pod", urgent},
            {"NodeNameToMetaVictims",
             {{"v100-0", {{"Pods", json::array({{{"UID", "low"}}})}, {"NumPDBViolations", 0}}},
              {"gpu-node-9", {{"Pods", json::array({{{"UID", "z"}}})}, {"NumPDBViolations", 0}}}}}};
  auto r = ex.handle("preempt", body);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, json::parse(R"({"NodeNameToMetaVictims": {
      "v100-0": {"Pods": [{"UID": "low"}], "NumPDBViolations": 0}}})"));
}

TEST(PackerPreemptProtocol, BadPriorityIsRefused) {
  json pod = prio_pod("p", 1, 0);
  pod["spec"]["priority"] = "high";
  auto d = decode_pod(pod);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().message,
            "Pod p: spec.priority must be an integer in [-2147483648, 2147483647]");
  pod["spec"]["priority"] = 2147483648LL;
  EXPECT_FALSE(decode_pod(pod).has_value());
  pod["spec"]["priority"] = -2000000000;
  EXPECT_EQ(decode_pod(pod).value().priority, -2000000000);
}

}  // namespace
}  // namespace hetsched::k8s
