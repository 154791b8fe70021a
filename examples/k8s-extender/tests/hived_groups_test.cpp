// SPDX-License-Identifier: MIT
// The v2 fields of the pod-scheduling-spec annotation (cellType, affinityGroup.withinOneCell and
// .childGroups) on a HiveD config with options::cell_type_requests: parsed specs, kube-scheduler
// request bodies replayed through filter and bind (in-process and over loopback), and refused
// forms (option off, bad shapes, HiveD's own spec errors) answered 400 with no state change.
#include <gtest/gtest.h>

#include <httplib.h>
#include <string>
#include <utility>
#include <vector>

#include "extender.hpp"
#include "fixtures.hpp"
#include "pod_scheduling_spec.hpp"
#include "server.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;

const std::vector<std::string> all_nodes = {"r0n0", "r0n1", "r1n0", "r1n1",
                                            "r2n0", "r2n1", "r3n0", "r3n1"};

// Group default/h in one ROW: child a (one 2-GPU pod in a RACK), child b (a 3-GPU and a 1-GPU
// pod in a RACK), as JSON for a pod of `leaves` GPUs.
std::string group_json(int leaves) {
  return json{
      {"virtualCluster", "v"},
      {"priority", 1},
      {"leafCellType", "GPU"},
      {"leafCellNumber", leaves},
      {"affinityGroup",
       {{"name", "default/h"},
        {"withinOneCell", "ROW"},
        {"childGroups",
         json::array({{{"name", "a"},
                       {"withinOneCell", "RACK"},
                       {"members", json::array({{{"podNumber", 1}, {"leafCellNumber", 2}}})}},
                      {{"name", "b"},
                       {"withinOneCell", "RACK"},
                       {"members", json::array({{{"podNumber", 1}, {"leafCellNumber", 3}},
                                                {{"podNumber", 1}, {"leafCellNumber", 1}}})}}})}}}}
      .dump();
}

// The same group in YAML, as a v2-aware writer would put it.
std::string group_yaml(int leaves) {
  return "virtualCluster: v\npriority: 1\nleafCellType: GPU\nleafCellNumber: " +
         std::to_string(leaves) + R"(
affinityGroup:
  name: default/h
  withinOneCell: ROW
  childGroups:
  - name: a
    withinOneCell: RACK
    members:
    - podNumber: 1
      leafCellNumber: 2
  - name: b
    withinOneCell: RACK
    members:
    - {podNumber: 1, leafCellNumber: 3}
    - {podNumber: 1, leafCellNumber: 1}
)";
}

spec_options with_groups() { return spec_options{true}; }

json filter_args(const std::string& name, const std::string& annotation) {
  return test::args_for(test::annotated_pod(name, "uid-" + name, annotation), all_nodes);
}

TEST(HivedGroupsSpec, ParsesTheV2FieldsIntoTheRequest) {
  auto json_spec = parse_pod_scheduling_spec(group_json(3), with_groups());
  ASSERT_TRUE(json_spec.has_value()) << json_spec.error().message;
  auto yaml_spec = parse_pod_scheduling_spec(group_yaml(3), with_groups());
  ASSERT_TRUE(yaml_spec.has_value()) << yaml_spec.error().message;
  EXPECT_EQ(*json_spec, *yaml_spec);
  const auto& g = *json_spec->group;
  EXPECT_EQ(g.within_one_cell, "ROW");
  EXPECT_TRUE(g.members.empty());
  ASSERT_EQ(g.child_groups.size(), 2u);
  EXPECT_EQ(g.child_groups[1].name, "b");
  EXPECT_EQ(g.child_groups[1].within_one_cell, "RACK");
  EXPECT_EQ(g.child_groups[1].members, (std::vector<affinity_member>{{1, 3}, {1, 1}}));
  const hived::pod_request r = to_pod_request(*json_spec, "uid", "default", "p");
  EXPECT_EQ(r.group, "default/h");
  EXPECT_EQ(r.within_one_cell, "ROW");
  ASSERT_EQ(r.child_groups.size(), 2u);
  EXPECT_EQ(r.child_groups[0].within_one_cell, "RACK");
  ASSERT_EQ(r.child_groups[0].members.size(), 1u);
  EXPECT_EQ(r.child_groups[0].members[0].leaf_cells, 2);
  EXPECT_EQ(r.child_groups[1].members[1].leaf_cells, 1);
  // cellType: whole cells of that type
  auto cells = parse_pod_scheduling_spec(
      R"({"virtualCluster": "v", "cellType": "NODE", "leafCellNumber": 1})", with_groups());
  ASSERT_TRUE(cells.has_value()) << cells.error().message;
  EXPECT_EQ(to_pod_request(*cells, "u", "default", "p").cell_type, "NODE");
}

TEST(HivedGroupsSpec, RefusedFormsNameTheField) {
  const std::pair<std::string, std::string> off[] = {
      {"virtualCluster: v\ncellType: NODE\nleafCellNumber: 1\n",
       "line 2: cellType needs the HiveD option cellTypeRequests (hetsched.cellTypeRequests in "
       "the config)"},
      {group_yaml(2),
       "line 7: affinityGroup.withinOneCell needs the HiveD option "
       "cellTypeRequests"},
  };
  for (const auto& [text, want] : off) {
    auto r = parse_pod_scheduling_spec(text);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().message.substr(0, want.size()), want);
  }
  const std::pair<std::string, std::string> on[] = {
      {"virtualCluster: v\nleafCellNumber: 2\naffinityGroup:\n  name: g\n  childGroups:\n"
       "  - members:\n    - {podNumber: 0, leafCellNumber: 2}\n",
       "line 7: affinityGroup.childGroups[0].members[0].podNumber must be positive"},
      {"virtualCluster: v\nleafCellNumber: 2\naffinityGroup:\n  name: g\n  childGroups:\n"
       "  - members: [{podNumber: 1, leafCellNumber: 2}]\n    colour: red\n",
       "line 7: unknown key 'colour' in affinityGroup.childGroups[0] (keys are case-sensitive: "
       "name, withinOneCell, members, childGroups)"},
      {"virtualCluster: v\nleafCellNumber: 4\naffinityGroup:\n  name: g\n  childGroups:\n"
       "  - members: [{podNumber: 1, leafCellNumber: 2}]\n",
       "line 3: no affinityGroup member has this pod's leafCellNumber 4"},
      {"virtualCluster: v\nleafCellNumber: 2\naffinityGroup:\n  name: g\n  childGroups: 3\n",
       "line 5: affinityGroup.childGroups must be a sequence, got '3'"},
  };
  for (const auto& [text, want] : on) {
    auto r = parse_pod_scheduling_spec(text, with_groups());
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().message, want);
  }
  // nesting deeper than max_child_group_depth
  std::string deep = R"({"name": "leaf", "members": [{"podNumber": 1, "leafCellNumber": 1}]})";
  for (int i = 0; i < max_child_group_depth; ++i) deep = R"({"childGroups": [)" + deep + "]}";
  const std::string spec = R"({"virtualCluster": "v", "leafCellNumber": 1, "affinityGroup": )"
                           R"({"name": "g", "childGroups": [)" +
                           deep + "]}}";
  auto r = parse_pod_scheduling_spec(spec, with_groups());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("childGroups are nested deeper than 16 levels"),
            std::string::npos)
      << r.error().message;
}

TEST(HivedGroupsReplay, FilterAndBindPlaceTheHierarchicalGroup) {
  extender ex(test::hived_rows_cluster());
  // pod a (2 GPUs): the whole group is placed at once
  auto fa = ex.handle("filter", filter_args("a", group_json(2)));
  ASSERT_EQ(fa.status, 200) << fa.body.dump();
  ASSERT_EQ(fa.body["NodeNames"], json::array({"r0n1"}));
  EXPECT_EQ(fa.body["FailedNodes"]["r1n0"], "HiveD places the pod on r0n1");
  auto ba =
      ex.handle("bind", test::bind_for(test::annotated_pod("a", "uid-a", group_json(2)), "r0n1"));
  ASSERT_EQ(ba.status, 200);
  EXPECT_EQ(ba.body, json::parse(R"({"Error": ""})"));
  // pods b3 (3 GPUs) and b1 (1 GPU) follow the group's placement, one in YAML
  auto fb3 = ex.handle("filter", filter_args("b3", group_yaml(3)));
  ASSERT_EQ(fb3.status, 200) << fb3.body.dump();
  ASSERT_EQ(fb3.body["NodeNames"], json::array({"r0n0"}));
  auto b3 = ex.bind(decode_binding_args(
                        test::bind_for(test::annotated_pod("b3", "uid-b3", group_yaml(3)), "r0n0"))
                        .value());
  ASSERT_TRUE(b3.has_value()) << b3.error().message;
  EXPECT_EQ(b3->where.gpus, (std::vector<std::int64_t>{2, 3, 1}));
  // the group's bind info lists its pods by leaf count: 1 (r0n0), 2 (r0n1), 3 (r0n0)
  const json& groups = b3->where.bind_info["affinityGroupBindInfo"];
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[1]["podPlacements"][0]["physicalNode"], "r0n1");
  EXPECT_EQ(groups[1]["podPlacements"][0]["physicalLeafCellIndices"], json::array({0, 1}));
  auto fb1 = ex.handle("filter", filter_args("b1", group_json(1)));
  ASSERT_EQ(fb1.status, 200) << fb1.body.dump();
  ASSERT_EQ(fb1.body["NodeNames"], json::array({"r0n0"}));
  ASSERT_EQ(
      ex.handle("bind", test::bind_for(test::annotated_pod("b1", "uid-b1", group_json(1)), "r0n0"))
          .status,
      200);
  EXPECT_EQ(ex.used_gpus(), 6);
  // a pod of the group beyond its members is HiveD's bad request, nothing changes
  const std::string before = ex.digest();
  auto extra = ex.handle("filter", filter_args("b1x", group_json(1)));
  EXPECT_EQ(extra.status, 400);
  EXPECT_EQ(ex.digest(), before);
}

TEST(HivedGroupsReplay, CellTypeRequestGetsAWholeNode) {
  extender ex(test::hived_rows_cluster());
  const std::string spec = "virtualCluster: w\npriority: 1\ncellType: NODE\nleafCellNumber: 1\n";
  auto f = ex.handle("filter", filter_args("n", spec));
  ASSERT_EQ(f.status, 200) << f.body.dump();
  ASSERT_EQ(f.body["NodeNames"].size(), 1u);
  const std::string node = f.body["NodeNames"][0];
  auto b = ex.bind(
      decode_binding_args(test::bind_for(test::annotated_pod("n", "uid-n", spec), node)).value());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->where.gpus, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(b->where.bind_info["leafCellIsolation"], json::array({0, 1, 2, 3}));
  EXPECT_EQ(ex.used_gpus(), 4);
}

TEST(HivedGroupsReplay, BadGroupsAre400WithoutStateChange) {
  extender off(test::hived_rows_cluster(false));
  extender on(test::hived_rows_cluster());
  ASSERT_EQ(on.handle("filter", filter_args("ok", group_json(2))).status, 200);
  const std::string off_before = off.digest();
  const std::string on_before = on.digest();
  const std::string prefix =
      "pod default/x annotation hivedscheduler.microsoft.com/pod-scheduling-spec: ";
  // nlohmann::json writes keys sorted, so childGroups comes before withinOneCell
  auto refused = off.handle("filter", filter_args("x", group_json(2)));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body["Error"],
            prefix +
                "affinityGroup.childGroups needs the HiveD option cellTypeRequests "
                "(hetsched.cellTypeRequests in the config)");
  // HiveD's own spec checks: a grandchild group without pods, an unknown within type
  const std::string no_pods =
      R"({"virtualCluster": "v", "leafCellType": "GPU", "leafCellNumber": 2, "affinityGroup": )"
      R"({"name": "g", "withinOneCell": "ROW", "childGroups": [{"withinOneCell": "RACK", )"
      R"("members": [{"podNumber": 1, "leafCellNumber": 2}], "childGroups": [{"withinOneCell": )"
      R"("NODE"}]}]}})";
  auto empty = on.handle("filter", filter_args("x", no_pods));
  EXPECT_EQ(empty.status, 400);
  EXPECT_NE(
      empty.body["Error"].get<std::string>().find("childGroups[0].childGroups[0] has no pods"),
      std::string::npos)
      << empty.body.dump();
  const std::string cabinet =
      R"({"virtualCluster": "v", "leafCellType": "GPU", "leafCellNumber": 2, "affinityGroup": )"
      R"({"name": "g", "withinOneCell": "CABINET", "members": [{"podNumber": 1, )"
      R"("leafCellNumber": 2}]}})";
  for (const char* verb : {"filter", "prioritize"}) {
    auto r = on.handle(verb, filter_args("x", cabinet));
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(
        r.body["Error"].get<std::string>().find("within-one-cell type CABINET is not a cell type"),
        std::string::npos)
        << r.body.dump();
  }
  json pre{{"Pod", test::annotated_pod("x", "uid-x", cabinet)},
           {"NodeNameToMetaVictims", json::object()}};
  EXPECT_EQ(on.handle("preempt", pre).status, 400);
  EXPECT_EQ(off.digest(), off_before);
  EXPECT_EQ(on.digest(), on_before);
}

TEST(HivedGroupsReplay, ServerReplaysGroupRequests) {
  extender ex(test::hived_rows_cluster());
  extender_server server(ex, server_options{});
  auto port = server.start();
  ASSERT_TRUE(port.has_value()) << port.error().message;
  httplib::Client client("127.0.0.1", *port);
  auto f = client.Post("/filter", filter_args("a", group_yaml(2)).dump(), "application/json");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 200);
  EXPECT_EQ(json::parse(f->body)["NodeNames"], json::array({"r0n1"}));
  auto b = client.Post(
      "/bind", test::bind_for(test::annotated_pod("a", "uid-a", group_yaml(2)), "r0n1").dump(),
      "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(json::parse(b->body), json::parse(R"({"Error": ""})"));
  EXPECT_EQ(ex.used_gpus(), 2);
  server.stop();
}

}  // namespace
}  // namespace hetsched::k8s
