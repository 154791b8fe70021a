// SPDX-License-Identifier: MIT
// The pod-scheduling-spec annotation in YAML (as hivedscheduler writes it) and JSON: the parsed
// spec, the same decisions for both forms, and every refused form answered 400 with its line.
#include "pod_spec_yaml.hpp"

#include <gtest/gtest.h>

#include <httplib.h>
#include <string>
#include <utility>

#include "extender.hpp"
#include "fixtures.hpp"
#include "pod_scheduling_spec.hpp"
#include "server.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

// As hivedscheduler's yaml.Marshal writes a full v1 spec (sequences at their key's indentation).
constexpr std::string_view full_yaml = R"(virtualCluster: vc1
priority: 10
pinnedCellId: ""
leafCellType: K80
leafCellNumber: 2
gangReleaseEnable: false
lazyPreemptionEnable: true
ignoreK8sSuggestedNodes: false
affinityGroup:
  name: default/job1
  members:
  - podNumber: 2
    leafCellNumber: 2
  - podNumber: 1
    leafCellNumber: 4
quota: {}
)";

pod_scheduling_spec parse_ok(std::string_view text) {
  auto r = parse_pod_scheduling_spec(text);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r.has_value() ? *r : pod_scheduling_spec{};
}

std::string parse_error(std::string_view text) {
  auto r = parse_pod_scheduling_spec(text);
  EXPECT_FALSE(r.has_value()) << "accepted: " << text;
  return r.has_value() ? std::string() : r.error().message;
}

TEST(PodSpecYaml, FullSpecAsHivedWritesIt) {
  const auto s = parse_ok(full_yaml);
  EXPECT_EQ(s.virtual_cluster, "vc1");
  EXPECT_EQ(s.priority, 10);
  EXPECT_EQ(s.pinned_cell_id, "");
  EXPECT_EQ(s.leaf_cell_type, "K80");
  EXPECT_EQ(s.leaf_cell_number, 2);
  EXPECT_FALSE(s.gang_release_enable);
  EXPECT_TRUE(s.lazy_preemption_enable);
  EXPECT_FALSE(s.ignore_k8s_suggested_nodes);
  ASSERT_TRUE(s.group.has_value());
  EXPECT_EQ(s.group->name, "default/job1");
  EXPECT_EQ(s.group->members,
            (std::vector<affinity_member>{affinity_member{2, 2}, affinity_member{1, 4}}));
  EXPECT_EQ(s.quota_tag, "");
  EXPECT_EQ(s.quota_count, 0);

  const auto r = to_pod_request(s, "uid-1", "default", "job1-0");
  EXPECT_EQ(r.name, "uid-1");
  EXPECT_EQ(r.group, "default/job1");
  ASSERT_EQ(r.members.size(), 2u);
  EXPECT_EQ(r.members[1].pods, 1);
  EXPECT_EQ(r.members[1].leaf_cells, 4);
}

TEST(PodSpecYaml, HivedExamplePodAnnotation) {
  // hivedscheduler's example/request/basic pod: the old key names and a null affinity group
  const auto s = parse_ok(
      "virtualCluster: VC1\npriority: 1000\ngpuType: K80\ngpuNumber: 1\n"
      "affinityGroup: null\n");
  EXPECT_EQ(s.virtual_cluster, "VC1");
  EXPECT_EQ(s.priority, 1000);
  EXPECT_EQ(s.leaf_cell_type, "K80");
  EXPECT_EQ(s.leaf_cell_number, 1);
  EXPECT_FALSE(s.group.has_value());
  EXPECT_TRUE(s.ignore_k8s_suggested_nodes);  // absent: hivedscheduler's default
  const auto r = to_pod_request(s, "u", "team-a", "demo1-a-0");
  EXPECT_EQ(r.group, "team-a/demo1-a-0");
  EXPECT_TRUE(r.members.empty());
}

TEST(PodSpecYaml, SubsetForms) {
  // document start, comments, quoting, indented sequences, flow collections, YAML 1.1 booleans
  const auto s = parse_ok(R"(---
# a comment line
virtualCluster: 'team #1'   # trailing comment
priority: -1
leafCellType: "DGX2-V100\u0021"
leafCellNumber: +4
lazyPreemptionEnable: yes
ignoreK8sSuggestedNodes: Off
gangReleaseEnable: ON
affinityGroup:
    name: g
    members:
        -   podNumber: 3
            leafCellNumber: 4
        - {podNumber: 1, leafCellNumber: 8}
...
)");
  EXPECT_EQ(s.virtual_cluster, "team #1");
  EXPECT_EQ(s.priority, -1);
  EXPECT_EQ(s.leaf_cell_type, "DGX2-V100!");
  EXPECT_EQ(s.leaf_cell_number, 4);
  EXPECT_TRUE(s.lazy_preemption_enable);
  EXPECT_FALSE(s.ignore_k8s_suggested_nodes);
  EXPECT_TRUE(s.gang_release_enable);
  ASSERT_TRUE(s.group.has_value());
  EXPECT_EQ(s.group->members,
            (std::vector<affinity_member>{affinity_member{3, 4}, affinity_member{1, 8}}));

  // a flow sequence of members, a null written as ~ (the zero value, as in yaml.v2), a plain
  // scalar that looks like a number taken as the VC's name
  const auto t = parse_ok(
      "virtualCluster: 42\nleafCellNumber: 1\nignoreK8sSuggestedNodes: ~\n"
      "affinityGroup: {name: x, members: [{podNumber: 1, leafCellNumber: 1}]}");
  EXPECT_EQ(t.virtual_cluster, "42");
  EXPECT_FALSE(t.ignore_k8s_suggested_nodes);
  EXPECT_EQ(t.group->members, (std::vector<affinity_member>{affinity_member{1, 1}}));
}

TEST(PodSpecYaml, TreeKeepsLines) {
  auto doc = parse_yaml_subset("a: 1\nb:\n  - x\n  - 'y'\n");
  ASSERT_TRUE(doc.has_value()) << doc.error().message;
  ASSERT_EQ(doc->members.size(), 2u);
  EXPECT_EQ(doc->members[1].key, "b");
  EXPECT_EQ(doc->members[1].line, 2);
  const auto& items = doc->members[1].value.items;
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].line, 3);
  EXPECT_TRUE(items[0].plain);
  EXPECT_EQ(items[1].text, "y");
  EXPECT_FALSE(items[1].plain);
  auto empty = parse_yaml_subset("# nothing\n\n");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->k, spec_value::kind::null);
}

TEST(PodSpecYaml, JsonAndYamlGiveTheSameSpec) {
  const std::string as_json =
      R"({"virtualCluster": "vc1", "priority": 10, "pinnedCellId": "", "leafCellType": "K80",
          "leafCellNumber": 2, "gangReleaseEnable": false, "lazyPreemptionEnable": true,
          "ignoreK8sSuggestedNodes": false,
          "affinityGroup": {"name": "default/job1", "members": [
            {"podNumber": 2, "leafCellNumber": 2}, {"podNumber": 1, "leafCellNumber": 4}]},
          "quota": {"tag": "", "count": 0}})";
  EXPECT_EQ(parse_ok(as_json), parse_ok(full_yaml));
  // the JSON reader refuses what the YAML reader refuses
  EXPECT_EQ(parse_error(R"({"virtualCluster": "a", "virtualCluster": "b", "leafCellNumber": 1})"),
            "duplicate key virtualCluster");
  EXPECT_EQ(parse_error(R"({"virtualCluster": "a", "leafCellNumber": "1"})"),
            "leafCellNumber must be an integer, got the string '1'");
  EXPECT_EQ(
      parse_error(R"({"virtualCluster": "a", "leafCellNumber": 1, "gpuCount": 2})").substr(0, 24),
      "unknown key 'gpuCount' (");
  // a parser message quoting part of a UTF-8 character stays ASCII (valid UTF-8 in the answer)
  const std::string broken = parse_error("{\xC3\xA9: 1}");
  EXPECT_EQ(broken.substr(0, 14), "malformed JSON");
  EXPECT_NE(broken.find("last read: '{?'"), std::string::npos) << broken;
  EXPECT_NO_THROW((void)json(broken).dump());
}

TEST(PodSpecYaml, RefusedFormsNameTheLine) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"virtualCluster: a\n  priority: 1\nleafCellNumber: 1\n",
       "line 2: unexpected indentation: 2 spaces where the keys of this mapping have 0"},
      {"affinityGroup:\n    name: g\n  members: []\n",
       "line 3: unexpected indentation: 2 spaces where the keys of this mapping have 0"},
      {"virtualCluster: a\n\tleafCellNumber: 1\n",
       "line 2: tab in indentation (YAML forbids tabs there)"},
      {"virtualCluster: a\nleafcellNumber: 1\n", "line 2: unknown key 'leafcellNumber' (keys"},
      {"virtualCluster: a\nleafCellNumber: 1\nvirtualCluster: b\n",
       "line 3: duplicate key virtualCluster (first on line 1)"},
      {"virtualCluster: a\nleafCellNumber: two\n",
       "line 2: leafCellNumber must be a decimal integer, got 'two'"},
      {"virtualCluster: a\nleafCellNumber: 2.5\n",
       "line 2: leafCellNumber must be a decimal integer, got '2.5'"},
      {"virtualCluster: a\npriority: 1001\nleafCellNumber: 1\n",
       "line 2: priority 1001 is not in [-1, 1000]"},
      {"virtualCluster: &vc a\nleafCellNumber: 1\n",
       "line 1: anchors are not supported ('&vc a') (key virtualCluster)"},
      {"virtualCluster: *vc\n", "line 1: aliases are not supported ('*vc') (key virtualCluster)"},
      {"virtualCluster: !!str a\n",
       "line 1: tags are not supported ('!!str a') (key virtualCluster)"},
      {"virtualCluster: |\n  a\n", "line 1: block scalars (| and >) are not supported"},
      {"virtualCluster: a\n---\nleafCellNumber: 1\n",
       "line 2: a second document (---) is not supported"},
      {"virtualCluster: \"a\nleafCellNumber: 1\n", "line 1: unterminated quoted scalar"},
      {"virtualCluster: a: b\n", "line 1: 'a: b' holds ': ', which starts a mapping here"},
      {"virtualCluster: a\nleafCellNumber: 1\naffinityGroup:\n  name: g\n  members:\n"
       "  - podNumber: 0\n    leafCellNumber: 1\n",
       "line 6: affinityGroup.members[0].podNumber must be positive"},
      {"virtualCluster: a\nleafCellNumber: 3\naffinityGroup:\n  name: g\n  members:\n"
       "  - podNumber: 1\n    leafCellNumber: 1\n",
       "line 3: no affinityGroup member has this pod's leafCellNumber 3"},
      {"virtualCluster: a\nleafCellNumber: 010\n",
       "line 2: leafCellNumber must be a decimal integer, got '010'"},
      {"virtualCluster: a\nleafCellNumber: 1\nlazyPreemptionEnable: 'yes'\n",
       "line 3: lazyPreemptionEnable must be a boolean, got the string 'yes'"},
      {"leafCellNumber: 1\n", "virtualCluster is empty"},
      {"virtualCluster: a\n", "leafCellNumber must be positive"},
      {"virtualCluster: a\nleafCellNumber: 1\nversion: v2\n",
       "line 3: version 'v2' is not supported"},
      {"virtualCluster: a\ngpuNumber: 1\nleafCellNumber: 1\n",
       "line 3: leafCellNumber given twice"},
      {"- virtualCluster: a\n", "line 1: the annotation must be a mapping, got a sequence"},
  };
  for (const auto& [text, want] : cases) {
    const std::string got = parse_error(text);
    EXPECT_EQ(got.substr(0, want.size()), want) << text;
  }
}

TEST(PodSpecYaml, LargeInputsStayCheapAndMessagesShort) {
  // 50,000 keys: duplicate detection is O(n log n); the first unknown key is named
  std::string many = "virtualCluster: a\nleafCellNumber: 1\n";
  for (int i = 0; i < 50000; ++i) many.append("k").append(std::to_string(i)).append(": 1\n");
  EXPECT_EQ(parse_error(many).substr(0, 22), "line 3: unknown key 'k");
  many.append("k7: 2\n");
  EXPECT_EQ(parse_error(many), "line 50003: duplicate key k7 (first on line 10)");
  // a long offending value is cut in the message, at a UTF-8 boundary
  const std::string msg =
      parse_error("virtualCluster: &" + std::string(58, 'a') + "\xC3\xA9tail\n");
  EXPECT_EQ(msg, "line 1: anchors are not supported ('&" + std::string(58, 'a') +
                     "...') (key virtualCluster)");
}

// The fixture pod of tests/data/hived_filter.json with its annotation replaced.
json pod_with(const std::string& annotation, const std::string& uid) {
  json pod = test::data_json("hived_filter.json")["Pod"];
  pod["metadata"]["uid"] = uid;
  pod["metadata"]["annotations"][std::string(hived_spec_annotation)] = annotation;
  return pod;
}

constexpr std::string_view job_yaml = R"(virtualCluster: a
priority: 10
leafCellType: GPU
leafCellNumber: 2
affinityGroup:
  name: default/job1
  members:
  - podNumber: 2
    leafCellNumber: 2
)";

TEST(PodSpecYaml, SameDecisionsForJsonAndYaml) {
  const std::string json_spec = test::data_json(
      "hived_filter.json")["Pod"]["metadata"]["annotations"][std::string(hived_spec_annotation)];
  extender from_json(test::hived_cluster());
  extender from_yaml(test::hived_cluster());
  const json pj = pod_with(json_spec, "u-1");
  const json py = pod_with(std::string(job_yaml), "u-1");
  const auto fj = from_json.handle("filter", test::args_for(pj, {"n0", "n1"}));
  const auto fy = from_yaml.handle("filter", test::args_for(py, {"n0", "n1"}));
  ASSERT_EQ(fj.status, 200) << fj.body.dump();
  ASSERT_EQ(fy.status, 200) << fy.body.dump();
  EXPECT_EQ(fy.body, fj.body);
  ASSERT_EQ(fy.body["NodeNames"].size(), 1u);
  const std::string node = fy.body["NodeNames"][0];
  EXPECT_EQ(from_yaml.handle("prioritize", test::args_for(py, {"n0", "n1"})).body,
            from_json.handle("prioritize", test::args_for(pj, {"n0", "n1"})).body);
  const json ok = json::parse(R"({"Error": ""})");
  EXPECT_EQ(from_yaml.handle("bind", test::bind_for(py, node)).body, ok);
  EXPECT_EQ(from_json.handle("bind", test::bind_for(pj, node)).body, ok);
  EXPECT_EQ(from_yaml.binding("u-1")->where.bind_info, from_json.binding("u-1")->where.bind_info);
  EXPECT_EQ(from_yaml.binding("u-1")->where.gpus.size(), 2u);
  EXPECT_EQ(from_yaml.digest(), from_json.digest());
}

TEST(PodSpecYaml, BadAnnotationsAre400WithoutStateChange) {
  extender ex(test::hived_cluster());
  ASSERT_EQ(
      ex.handle("filter", test::args_for(pod_with(std::string(job_yaml), "ok"), {"n0"})).status,
      200);
  const std::string before = ex.digest();
  const std::pair<std::string, std::string> cases[] = {
      {"virtualCluster: a\n  leafCellNumber: 2\n", "line 2: unexpected indentation"},
      {"virtualCluster: a\n\tleafCellNumber: 2\n", "line 2: tab in indentation"},
      {"virtualCluster: a\nleafCellNumber: 2\nLeafCellType: GPU\n",
       "line 3: unknown key 'LeafCellType'"},
      {"virtualCluster: a\nleafCellNumber: 2\nleafCellNumber: 4\n",
       "line 3: duplicate key leafCellNumber (first on line 2)"},
      {"virtualCluster: a\nleafCellNumber: many\n",
       "line 2: leafCellNumber must be a decimal integer, got 'many'"},
      {"virtualCluster: a\npriority: 5000\nleafCellNumber: 2\n",
       "line 2: priority 5000 is not in [-1, 1000]"},
      {"virtualCluster: &x a\nleafCellNumber: 2\n", "line 1: anchors are not supported"},
  };
  for (const auto& [annotation, want] : cases) {
    for (const char* verb : {"filter", "prioritize"}) {
      const auto r = ex.handle(verb, test::args_for(pod_with(annotation, "bad"), {"n0", "n1"}));
      EXPECT_EQ(r.status, 400) << annotation;
      const std::string prefix =
          "pod default/job1-worker-0 annotation "
          "hivedscheduler.microsoft.com/pod-scheduling-spec: ";
      EXPECT_EQ(r.body["Error"].get<std::string>().substr(0, prefix.size() + want.size()),
                prefix + want);
    }
    json pre{{"Pod", pod_with(annotation, "bad")}, {"NodeNameToMetaVictims", json::object()}};
    EXPECT_EQ(ex.handle("preempt", pre).status, 400);
    EXPECT_EQ(ex.digest(), before) << annotation;
  }
}

TEST(PodSpecYaml, ServerReplaysYamlAnnotation) {
  extender ex(test::hived_cluster());
  extender_server server(ex, server_options{});
  auto port = server.start();
  ASSERT_TRUE(port.has_value()) << port.error().message;
  httplib::Client client("127.0.0.1", *port);
  const json pod = pod_with(std::string(job_yaml), "yaml-uid");
  auto f = client.Post("/filter", test::args_for(pod, {"n0", "n1"}).dump(), "application/json");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 200);
  const json fj = json::parse(f->body);
  ASSERT_EQ(fj["NodeNames"].size(), 1u);
  auto b = client.Post("/bind", test::bind_for(pod, fj["NodeNames"][0]).dump(), "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(json::parse(b->body), json::parse(R"({"Error": ""})"));
  EXPECT_EQ(ex.used_gpus(), 2);
  const std::string before = ex.digest();
  auto bad = client.Post(
      "/filter",
      test::args_for(pod_with("virtualCluster: a\nleafCellNumber: *n\n", "u2"), {"n0"}).dump(),
      "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(json::parse(bad->body)["Error"].get<std::string>().find(
                "line 2: aliases are not supported ('*n') (key leafCellNumber)"),
            std::string::npos);
  EXPECT_EQ(ex.digest(), before);
  server.stop();
}

}  // namespace
}  // namespace hetsched::k8s
