// SPDX-License-Identifier: MIT
// A restart keeps every binding: the real hetsched-k8s-extender is killed with SIGKILL between a
// bind and the next filter and started again, with the state file (packer and HiveD) or with an
// API server whose bound pods carry the bind annotations (a fake on loopback). After the
// restart no GPU may be in two bindings.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <map>
#include <mutex>
#include <set>
#include <spawn.h>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "fixtures.hpp"

#include <sys/wait.h>

extern char** environ;

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

fs::path temp_dir() {
  char tmpl[] = "/tmp/hetsched-restart-XXXXXX";
  const char* made = ::mkdtemp(tmpl);
  return made == nullptr ? fs::path() : fs::path(made);
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The extender executable as a child process; its stderr goes to a file.
class extender_process {
 public:
  extender_process(const std::vector<std::string>& args, fs::path log) : log_(std::move(log)) {
    std::vector<std::string> all{K8S_EXTENDER_BINARY, "--listen", "127.0.0.1:0"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    // the start-up line names the ephemeral port
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pid_ > 0 && port_ == 0 && std::chrono::steady_clock::now() < until) {
      const std::string text = text_of(log_);
      const auto at = text.find("listening on http://127.0.0.1:");
      if (at != std::string::npos) {
        port_ = std::atoi(text.c_str() + at + std::string("listening on http://127.0.0.1:").size());
      } else if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
      } else {
        std::this_thread::sleep_for(milliseconds(20));
      }
    }
  }
  extender_process(const extender_process&) = delete;
  extender_process& operator=(const extender_process&) = delete;
  ~extender_process() { kill9(); }

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string log() const { return text_of(log_); }
  void kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  fs::path log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

json post(int port, const std::string& path, const json& body) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Post(path.c_str(), body.dump(), "application/json");
  if (!r) return json{{"transport error", httplib::to_string(r.error())}};
  auto j = json::parse(r->body, nullptr, false);
  return json{{"status", r->status}, {"body", j}};
}

json pods_of(int port) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/pods");
  return r ? json::parse(r->body, nullptr, false) : json();
}

// Returns "" if no (node, GPU) is in two bindings of GET /pods, else the GPU.
std::string double_booked(const json& pods) {
  std::set<std::pair<std::string, std::int64_t>> seen;
  for (const auto& [uid, rec] : pods.items())
    for (const auto& g : rec["GPUs"])
      if (!seen.emplace(rec["Node"].get<std::string>(), g.get<std::int64_t>()).second)
        return fmt::format("{} GPU {}", rec["Node"].get<std::string>(), g.get<std::int64_t>());
  return {};
}

// Filters `pod` on `nodes` and binds it to `node`; returns the bind's Error ("" = bound).
std::string filter_and_bind(int port, const json& pod, const std::vector<std::string>& nodes,
                            const std::string& node) {
  const json f = post(port, "/filter", test::args_for(pod, nodes));
  if (f.value("status", 0) != 200) return "filter failed: " + f.dump();
  const json b = post(port, "/bind", test::bind_for(pod, node));
  if (b.value("status", 0) != 200) return "bind answered " + b.dump();
  return b["body"]["Error"].get<std::string>();
}

class K8sExtenderRestart : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(K8sExtenderRestart, PackerStateFileSurvivesKill) {
  const std::vector<std::string> args{
      "--packer-cluster", std::string(K8S_EXTENDER_DATA_DIR) + "/packer_cluster.json",
      "--state-file", (dir_ / "state").string(), "--enable-release"};
  json a_gpus;
  {
    extender_process first(args, dir_ / "first.log");
    ASSERT_GT(first.port(), 0) << first.log();
    // a 4-GPU pod on v100-1, another bound and released, then kill -9 before the next filter
    EXPECT_EQ(filter_and_bind(first.port(), test::gpu_pod("a", "uid-a", 4), {"v100-1"}, "v100-1"),
              "");
    EXPECT_EQ(filter_and_bind(first.port(), test::gpu_pod("r", "uid-r", 2), {"v100-2"}, "v100-2"),
              "");
    EXPECT_EQ(post(first.port(), "/release", json{{"PodUID", "uid-r"}})["status"], 200);
    a_gpus = pods_of(first.port())["uid-a"]["GPUs"];
    ASSERT_EQ(a_gpus.size(), 4u);
    first.kill9();
  }
  extender_process second(args, dir_ / "second.log");
  ASSERT_GT(second.port(), 0) << second.log();
  EXPECT_NE(second.log().find("replayed 1 binding(s) from the state file"), std::string::npos)
      << second.log();
  // was {} after a restart
  const json pods = pods_of(second.port());
  ASSERT_TRUE(pods.contains("uid-a")) << pods.dump();
  EXPECT_EQ(pods["uid-a"]["Node"], "v100-1");
  EXPECT_EQ(pods["uid-a"]["GPUs"], a_gpus);
  EXPECT_FALSE(pods.contains("uid-r"));
  // an 8-GPU pod no longer fits v100-1 (it got GPUs 0-7 while 0-3 were held); a 4-GPU one takes
  // the other four
  EXPECT_EQ(filter_and_bind(second.port(), test::gpu_pod("b", "uid-b", 8), {"v100-1"}, "v100-1"),
            "pod default/b no longer fits on v100-1: 4 GPUs free, pod requests 8");
  EXPECT_EQ(filter_and_bind(second.port(), test::gpu_pod("c", "uid-c", 4), {"v100-1"}, "v100-1"),
            "");
  EXPECT_EQ(double_booked(pods_of(second.port())), "");
  EXPECT_EQ(pods_of(second.port()).size(), 2u);
}

TEST_F(K8sExtenderRestart, PolicyStateFileSurvivesKill) {
  // --policy: the journal is replayed through the backend's restore (apply + rebuild)
  const std::vector<std::string> args{
      "--packer-cluster", std::string(K8S_EXTENDER_DATA_DIR) + "/packer_cluster.json",
      "--policy",         "fifo+packer",
      "--state-file",     (dir_ / "state").string(),
      "--enable-release"};
  json a_gpus;
  {
    extender_process first(args, dir_ / "first.log");
    ASSERT_GT(first.port(), 0) << first.log();
    EXPECT_EQ(filter_and_bind(first.port(), test::gpu_pod("a", "uid-a", 4), {"v100-1"}, "v100-1"),
              "");
    EXPECT_EQ(filter_and_bind(first.port(), test::gpu_pod("r", "uid-r", 2), {"v100-2"}, "v100-2"),
              "");
    EXPECT_EQ(post(first.port(), "/release", json{{"PodUID", "uid-r"}})["status"], 200);
    a_gpus = pods_of(first.port())["uid-a"]["GPUs"];
    ASSERT_EQ(a_gpus.size(), 4u);
    first.kill9();
  }
  extender_process second(args, dir_ / "second.log");
  ASSERT_GT(second.port(), 0) << second.log();
  EXPECT_NE(second.log().find("replayed 1 binding(s) from the state file"), std::string::npos)
      << second.log();
  const json pods = pods_of(second.port());
  ASSERT_TRUE(pods.contains("uid-a")) << pods.dump();
  EXPECT_EQ(pods["uid-a"]["Node"], "v100-1");
  EXPECT_EQ(pods["uid-a"]["GPUs"], a_gpus);
  EXPECT_FALSE(pods.contains("uid-r"));
  // the policy knows the replayed GPUs: 8 no longer fit v100-1, 4 take the other half
  EXPECT_EQ(filter_and_bind(second.port(), test::gpu_pod("b", "uid-b", 8), {"v100-1"}, "v100-1"),
            "pod default/b cannot bind to v100-1: policy fifo+packer defers the pod: "
            "insufficient_capacity: packer: no placement for 8000 milli-GPU (4 whole GPUs free)");
  EXPECT_EQ(filter_and_bind(second.port(), test::gpu_pod("c", "uid-c", 4), {"v100-1"}, "v100-1"),
            "");
  EXPECT_EQ(double_booked(pods_of(second.port())), "");
  EXPECT_EQ(pods_of(second.port()).size(), 2u);
}

TEST_F(K8sExtenderRestart, HivedStateFileSurvivesKill) {
  const std::vector<std::string> args{"--hived-config",
                                      std::string(K8S_EXTENDER_DATA_DIR) + "/hived_config.json",
                                      "--state-file", (dir_ / "state").string()};
  std::string a_node;
  {
    extender_process first(args, dir_ / "first.log");
    ASSERT_GT(first.port(), 0) << first.log();
    const json a = test::hived_pod("a", "uid-a", "a", 10, 4);
    const json f = post(first.port(), "/filter", test::args_for(a, {"n0", "n1"}));
    ASSERT_EQ(f["body"]["NodeNames"].size(), 1u) << f.dump();
    a_node = f["body"]["NodeNames"][0];
    EXPECT_EQ(post(first.port(), "/bind", test::bind_for(a, a_node))["body"]["Error"], "");
    first.kill9();
  }
  extender_process second(args, dir_ / "second.log");
  ASSERT_GT(second.port(), 0) << second.log();
  const json pods = pods_of(second.port());
  ASSERT_TRUE(pods.contains("uid-a")) << pods.dump() << second.log();
  EXPECT_EQ(pods["uid-a"]["Node"], a_node);
  EXPECT_EQ(pods["uid-a"]["GPUs"], json::parse("[0, 1, 2, 3]"));
  EXPECT_EQ(pods["uid-a"]["BindInfo"]["node"], a_node);
  // VC a's one node is taken: another 4-leaf pod of VC a waits instead of sharing its GPUs
  const json b = test::hived_pod("b", "uid-b", "a", 10, 4);
  const json fb = post(second.port(), "/filter", test::args_for(b, {"n0", "n1"}));
  EXPECT_TRUE(fb["body"]["NodeNames"].empty()) << fb.dump();
  EXPECT_NE(post(second.port(), "/bind", test::bind_for(b, a_node))["body"]["Error"], "");
  // VC b still has its node
  const json c = test::hived_pod("c", "uid-c", "b", 10, 4);
  const json fc = post(second.port(), "/filter", test::args_for(c, {"n0", "n1"}));
  ASSERT_EQ(fc["body"]["NodeNames"].size(), 1u) << fc.dump();
  EXPECT_NE(fc["body"]["NodeNames"][0], a_node);
  EXPECT_EQ(
      post(second.port(), "/bind", test::bind_for(c, fc["body"]["NodeNames"][0]))["body"]["Error"],
      "");
  EXPECT_EQ(double_booked(pods_of(second.port())), "");
}

TEST_F(K8sExtenderRestart, TornLastRecordIsDroppedCorruptMiddleRefused) {
  const std::string state = (dir_ / "state").string();
  const std::vector<std::string> args{"--packer-cluster",
                                      std::string(K8S_EXTENDER_DATA_DIR) + "/packer_cluster.json",
                                      "--state-file", state};
  {
    extender_process first(args, dir_ / "first.log");
    ASSERT_GT(first.port(), 0) << first.log();
    EXPECT_EQ(filter_and_bind(first.port(), test::gpu_pod("a", "uid-a", 2), {"v100-0"}, "v100-0"),
              "");
    EXPECT_EQ(filter_and_bind(first.port(), test::gpu_pod("b", "uid-b", 2), {"v100-0"}, "v100-0"),
              "");
    first.kill9();
  }
  // a write torn by the crash: half a record at the end
  const std::string whole = text_of(state);
  std::ofstream(state, std::ios::app) << "0badc0de {\"op\": \"bind\", \"pod\": {\"na";
  {
    extender_process second(args, dir_ / "second.log");
    ASSERT_GT(second.port(), 0) << second.log();
    EXPECT_NE(second.log().find("dropped the last record, line 4"), std::string::npos)
        << second.log();
    EXPECT_EQ(pods_of(second.port()).size(), 2u);
    second.kill9();
  }
  EXPECT_EQ(text_of(state), whole);  // cut back to the last whole record
  // one byte changed in the middle record: a named start-up error, not a silent loss
  std::string corrupt = whole;
  corrupt[corrupt.find("uid-a")] = 'X';
  std::ofstream(state, std::ios::trunc) << corrupt;
  extender_process third(args, dir_ / "third.log");
  EXPECT_EQ(third.port(), 0);
  EXPECT_NE(third.log().find(fmt::format("state file {}: line 2 (byte {}) is corrupt: checksum "
                                         "mismatch; later records follow",
                                         state, corrupt.find('\n') + 1)),
            std::string::npos)
      << third.log();
}

/// A fake API server: pods registered by the test, bound by POST .../binding (nodeName and the
/// Binding's annotations copied onto the pod, as the API server does), listed by GET
/// /api/v1/pods two a page.
class fake_apiserver {
 public:
  fake_apiserver() {
    svr_.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
              [this](const httplib::Request& req, httplib::Response& res) {
                std::lock_guard lock(mu_);
                const json b = json::parse(req.body);
                for (auto& pod : pods_) {
                  if (pod["metadata"]["uid"] != b["metadata"]["uid"]) continue;
                  pod["spec"]["nodeName"] = b["target"]["name"];
                  const json annotations = b["metadata"].value("annotations", json::object());
                  for (const auto& [k, v] : annotations.items())
                    pod["metadata"]["annotations"][k] = v;
                  res.status = 201;
                  res.set_content(req.body, "application/json");
                  return;
                }
                res.status = 404;
              });
    svr_.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      ++lists_;
      selector_ = req.get_param_value("fieldSelector");
      const std::size_t from =
          req.has_param("continue") ? std::stoul(req.get_param_value("continue")) : 0;
      json items = json::array();
      std::size_t i = from;
      for (; i < pods_.size() && items.size() < 2; ++i)
        if (pods_[i]["spec"].contains("nodeName")) items.push_back(pods_[i]);
      json list{{"kind", "PodList"}, {"apiVersion", "v1"}, {"items", items}};
      list["metadata"]["continue"] = i < pods_.size() ? std::to_string(i) : "";
      res.set_content(list.dump(), "application/json");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::yield();
  }
  fake_apiserver(const fake_apiserver&) = delete;
  fake_apiserver& operator=(const fake_apiserver&) = delete;
  ~fake_apiserver() {
    svr_.stop();
    thread_.join();
  }
  void add_pod(json pod) {
    std::lock_guard lock(mu_);
    pods_.push_back(std::move(pod));
  }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] int lists() {
    std::lock_guard lock(mu_);
    return lists_;
  }
  [[nodiscard]] std::string selector() {
    std::lock_guard lock(mu_);
    return selector_;
  }

 private:
  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<json> pods_;
  int lists_ = 0;
  std::string selector_;
};

TEST_F(K8sExtenderRestart, ApiServerBoundPodsAreReplayed) {
  fake_apiserver api;
  const std::vector<std::string> args{
      "--packer-cluster", std::string(K8S_EXTENDER_DATA_DIR) + "/packer_cluster.json",
      "--apiserver-url", fmt::format("http://127.0.0.1:{}", api.port())};
  const json a = test::gpu_pod("a", "uid-a", 4);
  const json b = test::gpu_pod("b", "uid-b", 8);
  api.add_pod(a);
  api.add_pod(b);
  {
    extender_process first(args, dir_ / "first.log");
    ASSERT_GT(first.port(), 0) << first.log();
    EXPECT_EQ(filter_and_bind(first.port(), a, {"v100-1"}, "v100-1"), "");
    EXPECT_EQ(pods_of(first.port())["uid-a"]["GPUs"], json::parse("[0, 1, 2, 3]"));
    first.kill9();
  }
  // a pod claiming GPUs 2-5 of the same node (a forged or stale annotation), and a CPU pod
  json intruder = test::gpu_pod("intruder", "uid-i", 4);
  intruder["spec"]["nodeName"] = "v100-1";
  intruder["metadata"]["annotations"]["hetsched.io/bind-info"] =
      R"({"node":"v100-1","gpus":[2,3,4,5]})";
  api.add_pod(intruder);
  json cpu = test::gpu_pod("cpu", "uid-cpu", 0);
  cpu["spec"]["nodeName"] = "v100-2";
  api.add_pod(cpu);

  extender_process second(args, dir_ / "second.log");
  ASSERT_GT(second.port(), 0) << second.log();
  EXPECT_GE(api.lists(), 2);  // four pods, three bound, two a page
  EXPECT_EQ(api.selector(), "spec.nodeName!=");
  EXPECT_NE(second.log().find("replay: pod default/intruder (UID uid-i) skipped: GPU 2 of v100-1 "
                              "is already held by pod default/a (UID uid-a); not double-booked"),
            std::string::npos)
      << second.log();
  EXPECT_NE(second.log().find("replayed 1 binding(s) from the bound pods of the API server"),
            std::string::npos)
      << second.log();
  const json pods = pods_of(second.port());
  EXPECT_EQ(pods.size(), 1u) << pods.dump();
  EXPECT_EQ(pods["uid-a"]["GPUs"], json::parse("[0, 1, 2, 3]"));
  EXPECT_EQ(filter_and_bind(second.port(), b, {"v100-1"}, "v100-1"),
            "pod default/b no longer fits on v100-1: 4 GPUs free, pod requests 8");
  EXPECT_EQ(double_booked(pods_of(second.port())), "");
}

}  // namespace
}  // namespace hetsched::k8s
