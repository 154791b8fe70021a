// SPDX-License-Identifier: MIT
// The HTTP server over loopback: kube-scheduler's request bodies replayed, bad input refused.
#include "server.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <httplib.h>
#include <string>
#include <thread>
#include <vector>

#include "extender.hpp"
#include "fixtures.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using test::data_json;
using test::read_data;

class K8sExtenderServer : public ::testing::Test {
 protected:
  void start(server_options opts = {}) {
    ex_ = std::make_unique<extender>(test::packer_cluster());
    server_ = std::make_unique<extender_server>(*ex_, opts);
    auto port = server_->start();
    ASSERT_TRUE(port.has_value()) << port.error().message;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
    client_->set_keep_alive(true);
  }
  void TearDown() override {
    client_.reset();
    if (server_) server_->stop();
  }
  httplib::Result post(const std::string& path, const std::string& body,
                       const std::string& type = "application/json") {
    return client_->Post(path.c_str(), body, type.c_str());
  }

  std::unique_ptr<extender> ex_;
  std::unique_ptr<extender_server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(K8sExtenderServer, ReplaysKubeSchedulerBodies) {
  server_options opts;
  opts.enable_release = true;
  start(opts);
  auto f = post("/filter", read_data("filter_nodenames.json"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 200);
  EXPECT_EQ(f->get_header_value("Content-Type"), "application/json");
  const json fj = json::parse(f->body);
  EXPECT_TRUE(fj["Nodes"].is_null());
  EXPECT_EQ(fj["NodeNames"], json::parse(R"(["v100-0", "v100-1", "v100-2"])"));
  EXPECT_EQ(fj["FailedNodes"], json::object());
  EXPECT_EQ(fj["FailedAndUnresolvableNodes"]["a100-0"],
            "node selector hetsched.io/gpu-type=V100 does not match (node has A100)");
  EXPECT_EQ(fj["Error"], "");

  auto p = post("/prioritize", read_data("filter_nodenames.json"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 200);
  // 4 GPUs on empty DGX-1 nodes: 7; the A100 node does not match the selector: 0
  EXPECT_EQ(json::parse(p->body), json::parse(R"([{"Host": "v100-0", "Score": 7},
      {"Host": "v100-1", "Score": 7}, {"Host": "v100-2", "Score": 7},
      {"Host": "a100-0", "Score": 0}])"));

  auto b = post("/bind", read_data("bind.json"));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->status, 200);
  EXPECT_EQ(json::parse(b->body), json::parse(R"({"Error": ""})"));

  auto pods = client_->Get("/pods");
  ASSERT_TRUE(pods);
  const json pj = json::parse(pods->body);
  const auto& rec = pj["6f0c7f5e-3b2a-4c1d-9e8f-000000000001"];
  EXPECT_EQ(rec["Node"], "v100-1");
  EXPECT_EQ(rec["GPUs"], json::parse("[0, 1, 2, 3]"));

  const std::string before = ex_->digest();
  auto again = post("/bind", read_data("bind.json"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(json::parse(again->body)["Error"],
            "pod team-a/train-0 (UID 6f0c7f5e-3b2a-4c1d-9e8f-000000000001) is already bound to "
            "v100-1");
  EXPECT_EQ(ex_->digest(), before);

  auto nodes = post("/filter", read_data("filter_nodes.json"));
  ASSERT_TRUE(nodes);
  const json nj = json::parse(nodes->body);
  EXPECT_TRUE(nj["NodeNames"].is_null());
  ASSERT_EQ(nj["Nodes"]["items"].size(), 2u);
  EXPECT_EQ(nj["Nodes"]["items"][1]["metadata"]["name"], "a100-0");

  auto rel = post("/release", R"({"PodUID": "6f0c7f5e-3b2a-4c1d-9e8f-000000000001"})");
  ASSERT_TRUE(rel);
  EXPECT_EQ(rel->status, 200);
  EXPECT_EQ(ex_->used_gpus(), 0);
}

TEST_F(K8sExtenderServer, BadInputIsRefusedWithoutStateChange) {
  server_options opts;
  opts.max_body_bytes = 4096;
  opts.enable_release = true;
  start(opts);
  ASSERT_EQ(post("/filter", read_data("filter_nodenames.json"))->status, 200);
  const std::string before = ex_->digest();

  auto malformed = post("/filter", R"({"Pod": {"metadata": )");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  EXPECT_NE(json::parse(malformed->body)["Error"].get<std::string>().find("malformed JSON"),
            std::string::npos);

  auto text = post("/filter", read_data("filter_nodenames.json"), "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);
  EXPECT_EQ(json::parse(text->body)["Error"],
            "Content-Type must be application/json, got 'text/plain'");

  json big = data_json("filter_nodenames.json");
  big["Pod"]["metadata"]["annotations"]["padding"] = std::string(8192, 'x');
  auto oversize = post("/filter", big.dump());
  ASSERT_TRUE(oversize);
  EXPECT_EQ(oversize->status, 413);
  EXPECT_EQ(json::parse(oversize->body)["Error"], "request body exceeds the limit of 4096 bytes");

  json unknown = data_json("filter_nodenames.json");
  unknown["NodeNames"].push_back("gpu-node-99");
  auto unk = post("/filter", unknown.dump());
  ASSERT_TRUE(unk);
  EXPECT_EQ(unk->status, 404);
  EXPECT_EQ(json::parse(unk->body)["Error"], "unknown node gpu-node-99: not in the packer cluster");
  auto unk_bind = post("/bind", R"({"PodName": "train-0", "PodNamespace": "team-a",
      "PodUID": "6f0c7f5e-3b2a-4c1d-9e8f-000000000001", "Node": "gpu-node-99"})");
  ASSERT_TRUE(unk_bind);
  EXPECT_EQ(unk_bind->status, 404);

  auto wrong_shape = post("/bind", R"({"PodName": "x"})");
  ASSERT_TRUE(wrong_shape);
  EXPECT_EQ(wrong_shape->status, 400);
  EXPECT_EQ(json::parse(wrong_shape->body)["Error"],
            "ExtenderBindingArgs: missing string field PodNamespace");
  auto not_object = post("/prioritize", "[1, 2]");
  EXPECT_EQ(not_object->status, 400);
  auto no_release = post("/release", R"({"PodUID": "nobody"})");
  EXPECT_EQ(no_release->status, 404);
  auto no_route = post("/nope", "{}");
  EXPECT_EQ(no_route->status, 404);

  EXPECT_EQ(ex_->digest(), before);
  // the connection still serves after the refusals
  auto ok = post("/filter", read_data("filter_nodenames.json"), "application/json; charset=utf-8");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(K8sExtenderServer, OverflowingNumbersAre400) {
  start();
  const std::string before = ex_->digest();
  json huge = data_json("filter_nodenames.json");
  huge["Pod"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] =
      json::parse("18446744073709551615");
  for (const char* verb : {"/filter", "/prioritize"}) {
    auto r = post(verb, huge.dump());
    ASSERT_TRUE(r);
    // was 200 and a bind with "GPUs": []
    EXPECT_EQ(r->status, 400) << verb;
    EXPECT_EQ(json::parse(r->body)["Error"],
              "spec.containers[0].resources.requests[nvidia.com/gpu]: quantity "
              "18446744073709551615 is above the limit of 1000000");
  }
  std::string text = read_data("filter_nodenames.json");
  text.insert(text.find('{') + 1, R"("x": 1e400, )");
  auto r = post("/filter", text);
  ASSERT_TRUE(r);
  // was 500
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["Error"],
            "malformed JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'");
  EXPECT_EQ(ex_->digest(), before);
}

TEST_F(K8sExtenderServer, ReleaseRouteIsOffByDefault) {
  start();
  ASSERT_EQ(post("/filter", read_data("filter_nodenames.json"))->status, 200);
  ASSERT_EQ(json::parse(post("/bind", read_data("bind.json"))->body)["Error"], "");
  const std::string before = ex_->digest();
  // a stranger released a bound 8-GPU pod and a second pod got the same GPUs
  auto r = post("/release", R"({"PodUID": "6f0c7f5e-3b2a-4c1d-9e8f-000000000001"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(json::parse(r->body)["Error"],
            "POST release is disabled; start the extender with --enable-release");
  EXPECT_EQ(ex_->digest(), before);
  EXPECT_EQ(ex_->used_gpus(), 4);
}

TEST_F(K8sExtenderServer, EmptyPostBodyIsMalformedJson) {
  start();
  auto r = post("/filter", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(json::parse(r->body)["Error"].get<std::string>().find("malformed JSON"),
            std::string::npos);
}

TEST_F(K8sExtenderServer, UrlPrefixAndProbes) {
  server_options opts;
  opts.url_prefix = "/hetsched";
  start(opts);
  EXPECT_EQ(post("/hetsched/filter", read_data("filter_nodenames.json"))->status, 200);
  EXPECT_EQ(post("/filter", read_data("filter_nodenames.json"))->status, 404);
  auto health = client_->Get("/hetsched/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");
  auto metrics = client_->Get("/hetsched/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("hetsched_extender_calls_total{kind=\"filter\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("hetsched_extender_gpus{state=\"total\"} 40"), std::string::npos);
}

class K8sExtenderConcurrency : public K8sExtenderServer {};

TEST_F(K8sExtenderConcurrency, ConcurrentBindsNeverOvercommit) {
  start();
  // 16 one-GPU pods race for the 8 GPUs of v100-3 over 16 connections: exactly 8 bind
  const int port = server_->port();
  std::atomic<int> bound{0};
  std::atomic<int> refused{0};
  std::atomic<int> other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", port);
      const std::string uid = fmt::format("race-{}", t);
      auto pod = test::gpu_pod(uid, uid, 1);
      auto f = c.Post("/filter", test::args_for(pod, {"v100-3"}).dump(), "application/json");
      if (!f || f->status != 200) {
        ++other;
        return;
      }
      auto b = c.Post("/bind", test::bind_for(pod, "v100-3").dump(), "application/json");
      if (!b || b->status != 200) {
        ++other;
      } else if (json::parse(b->body)["Error"].get<std::string>().empty()) {
        ++bound;
      } else {
        ++refused;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bound.load(), 8);
  EXPECT_EQ(refused.load(), 8);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(ex_->used_gpus(), 8);
  EXPECT_EQ(ex_->bindings().size(), 8u);
}

}  // namespace
}  // namespace hetsched::k8s
