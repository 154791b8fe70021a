// SPDX-License-Identifier: MIT
// The state file: records round-trip, a torn last write is dropped, corruption in the middle is
// a named error, compaction keeps the live bindings; replay never double-books a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "bind_journal.hpp"
#include "extender.hpp"
#include "fixtures.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

binding_record packer_record(const std::string& uid, const std::string& node,
                             std::vector<std::int64_t> gpus) {
  binding_record rec;
  rec.pod.name = "pod-" + uid;
  rec.pod.name_space = "ns";
  rec.pod.uid = uid;
  rec.pod.gpus = static_cast<std::int64_t>(gpus.size());
  rec.args = binding_args{rec.pod.name, rec.pod.name_space, uid, node};
  rec.where.node = node;
  rec.where.gpus = std::move(gpus);
  rec.where.bind_info = nullptr;
  return rec;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class K8sExtenderJournal : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hetsched-journal-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    ASSERT_NE(made, nullptr);
    dir_ = made;
    path_ = (dir_ / "state").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(K8sExtenderJournal, RecordsRoundTrip) {
  bind_journal::contents read;
  {
    auto j = bind_journal::open(path_, "packer", read);
    ASSERT_TRUE(j.has_value()) << j.error().message;
    EXPECT_TRUE(read.live.empty());
    binding_record a = packer_record("a", "v100-0", {0, 1});
    a.pod.annotations["hivedscheduler.microsoft.com/pod-scheduling-spec"] = "vc: x";
    a.pod.annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{...}";
    a.pod.node_selector["zone"] = "west";
    a.pod.priority = 7;
    ASSERT_TRUE((*j)->append_bind(a).has_value());
    ASSERT_TRUE((*j)->append_bind(packer_record("b", "v100-0", {2, 3})).has_value());
    ASSERT_TRUE((*j)->append_bind(packer_record("c", "v100-1", {0})).has_value());
    ASSERT_TRUE((*j)->append_release("b").has_value());
    ASSERT_TRUE((*j)->append_release("nobody").has_value());  // not live: nothing written
    ASSERT_TRUE((*j)->sync().has_value());
    EXPECT_EQ((*j)->records(), 4u);
    EXPECT_EQ((*j)->live(), 2u);
  }
  auto j = bind_journal::open(path_, "packer", read);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.live.size(), 2u);
  EXPECT_EQ(read.live[0].args, (binding_args{"pod-a", "ns", "a", "v100-0"}));
  EXPECT_EQ(read.live[0].where.gpus, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(read.live[0].pod.priority, 7);
  EXPECT_EQ(read.live[0].pod.node_selector.at("zone"), "west");
  // only the annotation a backend reads back is kept
  EXPECT_EQ(read.live[0].pod.annotations,
            (std::map<std::string, std::string>{
                {"hivedscheduler.microsoft.com/pod-scheduling-spec", "vc: x"}}));
  EXPECT_EQ(read.live[1].args.pod_uid, "c");
  // header, then one checksummed JSON line per record
  const std::string text = text_of(path_);
  EXPECT_EQ(text.rfind("hetsched-extender-journal v1 packer\n", 0), 0u);
  const std::string release_json = R"({"op":"release","uid":"b"})";
  EXPECT_NE(text.find(" " + release_json + "\n"), std::string::npos);
}

TEST_F(K8sExtenderJournal, TornLastWriteIsDroppedWithAWarning) {
  bind_journal::contents read;
  {
    auto j = bind_journal::open(path_, "packer", read);
    ASSERT_TRUE(j.has_value());
    ASSERT_TRUE((*j)->append_bind(packer_record("a", "v100-0", {0})).has_value());
  }
  const std::string whole = text_of(path_);
  // a complete line whose checksum does not match is as torn as a cut one when it is last
  for (const std::string& tail : {std::string("{\"op\":\"bind\",\"pod\":{"),
                                  std::string("00000000 {\"op\":\"release\"}\n")}) {
    std::ofstream(path_, std::ios::app) << tail;
    auto j = bind_journal::open(path_, "packer", read);
    ASSERT_TRUE(j.has_value()) << j.error().message;
    ASSERT_EQ(read.live.size(), 1u);
    ASSERT_EQ(read.warnings.size(), 1u);
    EXPECT_EQ(read.warnings[0].rfind(fmt::format("state file {}: dropped the last record, line 3 "
                                                 "(byte {}): ",
                                                 path_, whole.size()),
                                     0),
              0u)
        << read.warnings[0];
    EXPECT_EQ(text_of(path_), whole);
  }
}

TEST_F(K8sExtenderJournal, CorruptionIsANamedError) {
  bind_journal::contents read;
  {
    auto j = bind_journal::open(path_, "packer", read);
    ASSERT_TRUE(j.has_value());
    ASSERT_TRUE((*j)->append_bind(packer_record("a", "v100-0", {0})).has_value());
    ASSERT_TRUE((*j)->append_bind(packer_record("b", "v100-0", {1})).has_value());
  }
  std::string text = text_of(path_);
  const std::size_t second_line = text.find('\n') + 1;
  text[text.find("pod-a")] = 'P';
  std::ofstream(path_, std::ios::trunc) << text;
  auto bad = bind_journal::open(path_, "packer", read);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, errc::invalid_argument);
  EXPECT_EQ(bad.error().message,
            fmt::format("state file {}: line 2 (byte {}) is corrupt: checksum mismatch; later "
                        "records follow, so this is not a torn last write",
                        path_, second_line));
  auto other = bind_journal::open(path_, "hived", read);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().message,
            fmt::format("state file {}: line 1 is 'hetsched-extender-journal v1 packer', expected "
                        "'hetsched-extender-journal v1 hived' (another backend or version)",
                        path_));
}

TEST_F(K8sExtenderJournal, CompactionKeepsTheLiveBindings) {
  bind_journal::contents read;
  {
    auto j = bind_journal::open(path_, "packer", read);
    ASSERT_TRUE(j.has_value());
    ASSERT_TRUE((*j)->append_bind(packer_record("keep", "v100-3", {7})).has_value());
    for (int i = 0; i < 600; ++i) {
      const std::string uid = fmt::format("u{}", i);
      ASSERT_TRUE((*j)->append_bind(packer_record(uid, "v100-0", {0, 1})).has_value());
      ASSERT_TRUE((*j)->append_release(uid).has_value());
    }
    // 1,201 records went past 1,024 with one live binding: rewritten to the live one, then
    // 176 more appended
    EXPECT_EQ((*j)->live(), 1u);
    EXPECT_EQ((*j)->records(), 1u + (1201 - 1025));
    EXPECT_FALSE(fs::exists(path_ + ".tmp"));
  }
  auto j = bind_journal::open(path_, "packer", read);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  ASSERT_EQ(read.live.size(), 1u);
  EXPECT_EQ(read.live[0].args.pod_uid, "keep");
  EXPECT_EQ(read.live[0].where.gpus, (std::vector<std::int64_t>{7}));
}

TEST(K8sExtenderConcurrency, JournalSyncsAreShared) {
  char tmpl[] = "/tmp/hetsched-journal-XXXXXX";
  const char* made = ::mkdtemp(tmpl);
  ASSERT_NE(made, nullptr);
  const std::string path = std::string(made) + "/state";
  bind_journal::contents read;
  {
    auto j = bind_journal::open(path, "packer", read);
    ASSERT_TRUE(j.has_value());
    bind_journal& journal = **j;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 20; ++i) {
          const auto rec = packer_record(fmt::format("t{}-{}", t, i), "v100-0", {0});
          if (!journal.append_bind(rec) || !journal.sync()) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    // 160 syncs, each waiting for its own record; concurrent ones share an fdatasync
    EXPECT_LT(journal.fsyncs(), 160u);
    EXPECT_GE(journal.fsyncs(), 1u);
  }
  auto j = bind_journal::open(path, "packer", read);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  EXPECT_EQ(read.live.size(), 160u);
  std::error_code ec;
  fs::remove_all(made, ec);
}

TEST(K8sExtenderReplay, ConflictingRecordsAreSkippedAndNamed) {
  extender ex(test::packer_cluster());
  auto notes =
      ex.restore({packer_record("a", "v100-1", {0, 1, 2, 3}),
                  packer_record("b", "v100-1", {3, 4}),  // GPU 3 is a's
                  packer_record("c", "v100-1", {4, 5}), packer_record("a", "v100-2", {0}),
                  packer_record("d", "gpu-node-99", {0}), packer_record("e", "v100-2", {8})});
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "pod ns/pod-b (UID b) skipped: GPU 3 of v100-1 is already held by pod "
                       "ns/pod-a (UID a); not double-booked",
                       "pod ns/pod-a (UID a) skipped: already bound to v100-1",
                       "pod ns/pod-d (UID d) skipped: node gpu-node-99 is not in the packer "
                       "cluster",
                       "pod ns/pod-e (UID e) skipped: pod ns/pod-e: GPU 8 is not a GPU of v100-2 "
                       "(0..7)"}));
  EXPECT_EQ(ex.bindings().size(), 2u);
  EXPECT_EQ(ex.used_gpus(), 6);
  // the restored GPUs are taken: a filter sees 2 free on v100-1
  const auto f = ex.handle("filter", test::args_for(test::gpu_pod("x", "x", 4), {"v100-1"}));
  EXPECT_EQ(f.body["FailedNodes"]["v100-1"], "2 of 8 GPUs free, pod requests 4");
  // and a release gives them back
  ASSERT_TRUE(ex.release("a").has_value());
  EXPECT_EQ(ex.used_gpus(), 2);
}

TEST(K8sExtenderReplay, HivedRecordsRebuildTheCells) {
  extender first(test::hived_cluster());
  const json a = test::hived_pod("a", "uid-a", "a", 10, 4);
  ASSERT_EQ(first.handle("filter", test::args_for(a, {"n0", "n1"})).status, 200);
  const std::string node =
      first.handle("filter", test::args_for(a, {"n0", "n1"})).body["NodeNames"][0];
  ASSERT_EQ(first.handle("bind", test::bind_for(a, node)).body["Error"], "");
  const binding_record rec = *first.binding("uid-a");

  extender second(test::hived_cluster());
  binding_record twin = rec;  // another pod claiming the same leaves
  twin.args.pod_uid = twin.pod.uid = "uid-twin";
  twin.args.pod_name = twin.pod.name = "twin";
  auto notes = second.restore({rec, twin});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], fmt::format("pod default/twin (UID uid-twin) skipped: GPU 0 of {} is "
                                  "already held by pod default/a (UID uid-a); not double-booked",
                                  node));
  EXPECT_EQ(second.used_gpus(), 4);
  EXPECT_EQ(second.digest(), first.digest());
  // VC a is full again: its next 4-leaf pod waits
  const json b = test::hived_pod("b", "uid-b", "a", 10, 4);
  const auto f = second.handle("filter", test::args_for(b, {"n0", "n1"}));
  EXPECT_TRUE(f.body["NodeNames"].empty()) << f.body.dump();
}

}  // namespace
}  // namespace hetsched::k8s
