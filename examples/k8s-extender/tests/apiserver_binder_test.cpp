// SPDX-License-Identifier: MIT
// The API-server binder against a fake API server on loopback: the v1 Binding it posts, and a
// refusal or an unreachable server rolling the bind back.
#include "apiserver_binder.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <httplib.h>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "extender.hpp"
#include "fixtures.hpp"
#include "server.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using test::read_data;

/// Records every POST .../binding and answers with `status` (201 = created).
class fake_apiserver {
 public:
  fake_apiserver() {
    svr_.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
              [this](const httplib::Request& req, httplib::Response& res) {
                std::lock_guard lock(mu_);
                requests_.push_back({req.path, req.get_header_value("Content-Type"), req.body});
                res.status = status_.load();
                if (res.status == 201) {
                  res.set_content(req.body, "application/json");
                } else {
                  res.set_content(json{{"kind", "Status"},
                                       {"apiVersion", "v1"},
                                       {"status", "Failure"},
                                       {"message", message_},
                                       {"reason", "Conflict"},
                                       {"code", res.status}}
                                      .dump(),
                                  "application/json");
                }
              });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    // the socket already listens; wait for the accept loop so that stop() reaches it
    while (!svr_.is_running()) std::this_thread::yield();
  }
  ~fake_apiserver() {
    svr_.stop();
    thread_.join();
  }
  fake_apiserver(const fake_apiserver&) = delete;
  fake_apiserver& operator=(const fake_apiserver&) = delete;

  struct request {
    std::string path;
    std::string content_type;
    std::string body;
  };
  void refuse(int status, std::string message) {
    std::lock_guard lock(mu_);
    status_ = status;
    message_ = std::move(message);
  }
  void accept() { status_ = 201; }
  std::vector<request> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  [[nodiscard]] int port() const { return port_; }

 private:
  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::atomic<int> status_{201};
  std::string message_;
  std::vector<request> requests_;
};

// tests/data/bind.json binds team-a/train-0 (UID 6f0c7f5e-...-000000000001, 4 GPUs) to v100-1.
constexpr const char* train_uid = "6f0c7f5e-3b2a-4c1d-9e8f-000000000001";
constexpr const char* train_path = "/api/v1/namespaces/team-a/pods/train-0/binding";

class BinderTest : public ::testing::Test {
 protected:
  void start(const std::string& url) {
    auto binder = apiserver_binder::create(url);
    ASSERT_TRUE(binder.has_value()) << binder.error().message;
    extender_options opts;
    opts.on_bind = [b = *binder](const binding_record& rec) { return b.bind(rec); };
    ex_ = std::make_unique<extender>(test::packer_cluster(), std::move(opts));
    server_ = std::make_unique<extender_server>(*ex_, server_options{});
    auto port = server_->start();
    ASSERT_TRUE(port.has_value()) << port.error().message;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
    auto f = client_->Post("/filter", read_data("filter_nodenames.json"), "application/json");
    ASSERT_TRUE(f);
    ASSERT_EQ(f->status, 200);
  }
  void TearDown() override {
    client_.reset();
    if (server_) server_->stop();
  }
  json bind() {
    auto b = client_->Post("/bind", read_data("bind.json"), "application/json");
    EXPECT_TRUE(b);
    EXPECT_EQ(b->status, 200);
    return json::parse(b->body);
  }

  std::unique_ptr<extender> ex_;
  std::unique_ptr<extender_server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(BinderTest, PostsTheV1Binding) {
  fake_apiserver api;
  start(fmt::format("http://127.0.0.1:{}", api.port()));
  EXPECT_EQ(bind(), json::parse(R"({"Error": ""})"));
  const auto reqs = api.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, train_path);
  EXPECT_EQ(reqs[0].content_type, "application/json");
  // hetsched.io/bind-info carries what a restart replays (node and GPUs)
  EXPECT_EQ(json::parse(reqs[0].body), json::parse(R"({"apiVersion": "v1", "kind": "Binding",
      "metadata": {"name": "train-0", "namespace": "team-a",
                   "uid": "6f0c7f5e-3b2a-4c1d-9e8f-000000000001",
                   "annotations": {"hetsched.io/bind-info": "{\"gpus\":[0,1,2,3],\"node\":\"v100-1\"}"}},
      "target": {"apiVersion": "v1", "kind": "Node", "name": "v100-1"}})"));
  ASSERT_TRUE(ex_->binding(train_uid).has_value());
  EXPECT_EQ(ex_->used_gpus(), 4);
}

TEST_F(BinderTest, RefusalRollsTheBindBack) {
  fake_apiserver api;
  start(fmt::format("http://127.0.0.1:{}", api.port()));
  api.refuse(409, R"(Operation cannot be fulfilled on pods/binding "train-0": pod train-0 is )"
                  R"(already assigned to node "v100-2")");
  const std::string before = ex_->digest();
  EXPECT_EQ(bind()["Error"],
            "binding pod team-a/train-0 failed: API server answered 409 to POST "
            "/api/v1/namespaces/team-a/pods/train-0/binding: Operation cannot be fulfilled on "
            "pods/binding \"train-0\": pod train-0 is already assigned to node \"v100-2\"");
  EXPECT_EQ(ex_->digest(), before);
  EXPECT_FALSE(ex_->binding(train_uid).has_value());
  EXPECT_EQ(ex_->used_gpus(), 0);
  ASSERT_EQ(api.requests().size(), 1u);

  // kube-scheduler retries the bind once the API server accepts: the pod is still pending
  api.accept();
  EXPECT_EQ(bind()["Error"], "");
  EXPECT_EQ(api.requests().size(), 2u);
  EXPECT_EQ(ex_->used_gpus(), 4);
}

TEST_F(BinderTest, UnreachableApiServerRollsTheBindBack) {
  int dead_port = 0;
  {
    fake_apiserver gone;  // a port that was just closed
    dead_port = gone.port();
  }
  start(fmt::format("http://127.0.0.1:{}", dead_port));
  const std::string before = ex_->digest();
  const std::string error = bind()["Error"];
  EXPECT_EQ(error.rfind(fmt::format("binding pod team-a/train-0 failed: API server unreachable at "
                                    "http://127.0.0.1:{}: ",
                                    dead_port),
                        0),
            0u)
      << error;
  EXPECT_EQ(ex_->digest(), before);
  EXPECT_EQ(ex_->used_gpus(), 0);
}

TEST(ApiserverBinder, UrlsAreChecked) {
  auto ok = apiserver_binder::create("http://127.0.0.1:8001/");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->host(), "127.0.0.1");
  EXPECT_EQ(ok->port(), 8001);
  EXPECT_EQ(apiserver_binder::create("http://localhost").value().port(), 80);
  EXPECT_EQ(apiserver_binder::create("https://10.0.0.1:6443").error().message,
            "API server URL https://10.0.0.1:6443: https is not supported; run `kubectl proxy` (it "
            "handles authentication and TLS) and pass its http://127.0.0.1:8001");
  EXPECT_EQ(apiserver_binder::create("127.0.0.1:8001").error().message,
            "API server URL 127.0.0.1:8001: must start with http://");
  EXPECT_EQ(apiserver_binder::create("http://127.0.0.1:8001/api").error().message,
            "API server URL http://127.0.0.1:8001/api: a path is not supported");
  EXPECT_EQ(apiserver_binder::create("http://127.0.0.1:99999").error().message,
            "API server URL http://127.0.0.1:99999: bad port '99999'");
  EXPECT_EQ(apiserver_binder::create("http://127.0.0.1:").error().message,
            "API server URL http://127.0.0.1:: bad port ''");
  EXPECT_EQ(apiserver_binder::create("http://:8001").error().message,
            "API server URL http://:8001: no host");
  EXPECT_EQ(apiserver_binder::create("http://h", std::chrono::seconds(0)).error().message,
            "API server timeout must be positive");
}

TEST(ApiserverBinder, HivedBindInfoTravelsAsAnAnnotation) {
  binding_record rec;
  rec.args = binding_args{"job/0", "ns 1", "u-1", "n0"};
  rec.where.node = "n0";
  rec.where.gpus = {0, 1};
  rec.where.bind_info = json{{"node", "n0"}, {"leafCellIsolation", {0, 1}}};
  EXPECT_EQ(binding_path(rec.args), "/api/v1/namespaces/ns%201/pods/job%2F0/binding");
  EXPECT_EQ(binding_object(rec), json::parse(R"({"apiVersion": "v1", "kind": "Binding",
      "metadata": {"name": "job/0", "namespace": "ns 1", "uid": "u-1", "annotations":
        {"hivedscheduler.microsoft.com/pod-bind-info":
         "{\"leafCellIsolation\":[0,1],\"node\":\"n0\"}",
         "hetsched.io/bind-info": "{\"gpus\":[0,1],\"node\":\"n0\"}"}},
      "target": {"apiVersion": "v1", "kind": "Node", "name": "n0"}})"));
}

TEST(ApiserverBinder, BoundPodsGiveTheirRecords) {
  json pod = test::gpu_pod("train-0", "u-1", 4);
  // not bound yet, or bound by someone else: not ours
  EXPECT_FALSE(bound_pod_record(pod).value().has_value());
  pod["spec"]["nodeName"] = "v100-1";
  EXPECT_FALSE(bound_pod_record(pod).value().has_value());
  pod["metadata"]["annotations"]["hetsched.io/bind-info"] = R"({"node":"v100-1","gpus":[4,5,6,7]})";
  auto rec = bound_pod_record(pod);
  ASSERT_TRUE(rec.has_value()) << rec.error().message;
  ASSERT_TRUE(rec->has_value());
  EXPECT_EQ((*rec)->args, (binding_args{"train-0", "default", "u-1", "v100-1"}));
  EXPECT_EQ((*rec)->where.gpus, (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ((*rec)->pod.gpus, 4);
  // a finished pod holds no GPUs
  pod["status"]["phase"] = "Succeeded";
  EXPECT_FALSE(bound_pod_record(pod).value().has_value());
  pod["status"]["phase"] = "Running";
  pod["metadata"]["annotations"]["hetsched.io/bind-info"] = R"({"node":"v100-2","gpus":[0]})";
  EXPECT_EQ(bound_pod_record(pod).error().message,
            "pod default/train-0: the bind info names node v100-2, spec.nodeName is v100-1");
  pod["metadata"]["annotations"]["hetsched.io/bind-info"] = "node: v100-1";
  EXPECT_EQ(bound_pod_record(pod).error().message,
            "pod default/train-0: annotation hetsched.io/bind-info is not a JSON object");
}

}  // namespace
}  // namespace hetsched::k8s
