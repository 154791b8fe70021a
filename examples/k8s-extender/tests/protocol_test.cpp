// SPDX-License-Identifier: MIT
// The extender v1 JSON shapes: kube-scheduler's request bodies decode, results encode with the
// Go field names.
#include "protocol.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using test::data_json;

TEST(ExtenderProtocol, DecodesNodeNamesArgs) {
  auto args = decode_extender_args(data_json("filter_nodenames.json"));
  ASSERT_TRUE(args.has_value()) << args.error().message;
  EXPECT_EQ(args->pod.name, "train-0");
  EXPECT_EQ(args->pod.name_space, "team-a");
  EXPECT_EQ(args->pod.uid, "6f0c7f5e-3b2a-4c1d-9e8f-000000000001");
  // 4 GPUs in the trainer, none in the sidecar
  EXPECT_EQ(args->pod.gpus, 4);
  EXPECT_EQ(args->pod.node_selector.at("hetsched.io/gpu-type"), "V100");
  EXPECT_EQ(args->pod.annotations.at("example.com/owner"), "alice");
  EXPECT_FALSE(args->nodes_as_objects);
  ASSERT_EQ(args->nodes.size(), 4u);
  EXPECT_EQ(args->nodes[3].name, "a100-0");
}

TEST(ExtenderProtocol, DecodesNodeListArgs) {
  auto args = decode_extender_args(data_json("filter_nodes.json"));
  ASSERT_TRUE(args.has_value()) << args.error().message;
  EXPECT_TRUE(args->nodes_as_objects);
  // a numeric limit counts when there is no request
  EXPECT_EQ(args->pod.gpus, 2);
  ASSERT_EQ(args->nodes.size(), 3u);
  EXPECT_EQ(args->nodes[1].name, "v100-1");
  EXPECT_EQ(args->nodes[1].labels.at("zone"), "east");
  ASSERT_EQ(args->node_objects.size(), 3u);
  EXPECT_EQ(args->node_objects[0]["metadata"]["uid"], "node-uid-0");
}

TEST(ExtenderProtocol, KeysAreCaseInsensitiveLikeGo) {
  json j = data_json("filter_nodenames.json");
  json lower{{"pod", j["Pod"]}, {"nodenames", j["NodeNames"]}};
  auto args = decode_extender_args(lower);
  ASSERT_TRUE(args.has_value()) << args.error().message;
  EXPECT_EQ(args->nodes.size(), 4u);
  auto bind = decode_binding_args(
      json{{"podName", "p"}, {"podNamespace", "ns"}, {"podUID", "u"}, {"node", "n"}});
  ASSERT_TRUE(bind.has_value());
  EXPECT_EQ(bind->pod_uid, "u");
}

TEST(ExtenderProtocol, DecodesBindingArgs) {
  auto b = decode_binding_args(data_json("bind.json"));
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->pod_name, "train-0");
  EXPECT_EQ(b->pod_namespace, "team-a");
  EXPECT_EQ(b->node, "v100-1");
  EXPECT_EQ(encode(*b), data_json("bind.json"));
}

TEST(ExtenderProtocol, DecodesPreemptionArgs) {
  auto p = decode_preemption_args(data_json("hived_preempt.json"));
  ASSERT_TRUE(p.has_value()) << p.error().message;
  ASSERT_EQ(p->node_victims.size(), 2u);
  EXPECT_EQ(p->node_victims.at("n1").pod_uids, std::vector<std::string>{"kube-choice-1"});
  // NodeNameToVictims carries full pods: their metadata.uid is used
  json full{{"Pod", p->pod.uid.empty() ? json() : data_json("hived_preempt.json")["Pod"]},
            {"NodeNameToVictims",
             {{"n0",
               {{"Pods", json::array({{{"metadata", {{"name", "v"}, {"uid", "victim-uid"}}}}})},
                {"NumPDBViolations", 1}}}}}};
  auto q = decode_preemption_args(full);
  ASSERT_TRUE(q.has_value()) << q.error().message;
  EXPECT_EQ(q->node_victims.at("n0").pod_uids, std::vector<std::string>{"victim-uid"});
  EXPECT_EQ(q->node_victims.at("n0").num_pdb_violations, 1);
}

TEST(ExtenderProtocol, EncodesGoFieldNames) {
  auto args = decode_extender_args(data_json("filter_nodenames.json")).value();
  filter_result r;
  r.node_names = {"v100-0"};
  r.failed_nodes = {{"v100-1", "busy"}};
  r.failed_and_unresolvable = {{"a100-0", "selector"}};
  const json j = encode(r, args);
  EXPECT_EQ(j, json::parse(R"({"Nodes": null, "NodeNames": ["v100-0"],
      "FailedNodes": {"v100-1": "busy"}, "FailedAndUnresolvableNodes": {"a100-0": "selector"},
      "Error": ""})"));
  EXPECT_EQ(encode(std::vector<host_priority>{{"a", 10}, {"b", 3}}),
            json::parse(R"([{"Host": "a", "Score": 10}, {"Host": "b", "Score": 3}])"));
  preemption_result p;
  p.node_victims["n0"].pod_uids = {"u1", "u2"};
  EXPECT_EQ(encode(p), json::parse(R"({"NodeNameToMetaVictims": {"n0": {"Pods": [{"UID": "u1"},
      {"UID": "u2"}], "NumPDBViolations": 0}}})"));
  EXPECT_EQ(encode(binding_result{"nope"}), json::parse(R"({"Error": "nope"})"));
}

TEST(ExtenderProtocol, NodeListResultEchoesPassingNodeObjects) {
  auto args = decode_extender_args(data_json("filter_nodes.json")).value();
  filter_result r;
  r.node_names = {"a100-0", "v100-0"};
  const json j = encode(r, args);
  EXPECT_TRUE(j["NodeNames"].is_null());
  ASSERT_EQ(j["Nodes"]["items"].size(), 2u);
  // request order is kept: v100-0 first
  EXPECT_EQ(j["Nodes"]["items"][0]["metadata"]["uid"], "node-uid-0");
  EXPECT_EQ(j["Nodes"]["items"][1]["metadata"]["name"], "a100-0");
  auto back = decode_filter_result(j);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->node_names, (std::vector<std::string>{"v100-0", "a100-0"}));
}

TEST(ExtenderProtocol, GpuQuantities) {
  EXPECT_EQ(decode_gpu_quantity(json("8")).value(), 8);
  EXPECT_EQ(decode_gpu_quantity(json(3)).value(), 3);
  EXPECT_EQ(decode_gpu_quantity(json("2000m")).value(), 2);
  EXPECT_FALSE(decode_gpu_quantity(json("1500m")).has_value());
  EXPECT_FALSE(decode_gpu_quantity(json("1Gi")).has_value());
  EXPECT_FALSE(decode_gpu_quantity(json(-1)).has_value());
  EXPECT_FALSE(decode_gpu_quantity(json("")).has_value());
}

TEST(ExtenderProtocol, ErrorsNameTheField) {
  auto no_uid = decode_pod(json::parse(R"({"metadata": {"name": "p"}})"));
  ASSERT_FALSE(no_uid.has_value());
  EXPECT_EQ(no_uid.error().message, "Pod p: missing metadata.uid");
  auto bad_q = decode_pod(json::parse(R"({"metadata": {"name": "p", "uid": "u"}, "spec":
      {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "x"}}}]}})"));
  ASSERT_FALSE(bad_q.has_value());
  EXPECT_EQ(bad_q.error().message,
            "spec.containers[0].resources.requests[nvidia.com/gpu]: quantity 'x' is not a whole "
            "number");
  auto no_nodes = decode_extender_args(json{{"Pod", json::parse(R"({"metadata": {"name": "p",
      "uid": "u"}})")}});
  ASSERT_FALSE(no_nodes.has_value());
  EXPECT_EQ(no_nodes.error().message, "ExtenderArgs: neither NodeNames nor Nodes");
  auto bad = parse_json("{\"Pod\": ");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("malformed JSON"), std::string::npos);
}

TEST(ExtenderProtocol, InitContainersTakeTheMax) {
  auto pod = decode_pod(json::parse(R"({"metadata": {"name": "p", "uid": "u"}, "spec": {
      "initContainers": [{"resources": {"limits": {"nvidia.com/gpu": "3"}}}],
      "containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}},
                     {"resources": {"requests": {"nvidia.com/gpu": "1"}}}]}})"));
  ASSERT_TRUE(pod.has_value());
  // max(1 + 1, 3)
  EXPECT_EQ(pod->gpus, 3);
}

TEST(ExtenderProtocol, QuantitiesAreRangeChecked) {
  // 2^64-1 GPUs used to wrap to -1 and bind with "GPUs": []
  EXPECT_EQ(decode_gpu_quantity(json::parse("18446744073709551615")).error().message,
            "quantity 18446744073709551615 is above the limit of 1000000");
  EXPECT_EQ(decode_gpu_quantity(json("999999999999999")).error().message,
            "quantity '999999999999999' is above the limit of 1000000");
  EXPECT_EQ(decode_gpu_quantity(json(1000000)).value(), 1000000);
  json pod = test::gpu_pod("p", "u", 1);
  pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] =
      json::parse("18446744073709551615");
  auto huge = decode_pod(pod);
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().message,
            "spec.containers[0].resources.requests[nvidia.com/gpu]: quantity "
            "18446744073709551615 is above the limit of 1000000");
  // two containers of INT64_MAX each used to overflow the sum (signed overflow, UB)
  json two = test::gpu_pod("p", "u", 1);
  two["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = 600000;
  two["spec"]["containers"].push_back(two["spec"]["containers"][0]);
  EXPECT_EQ(decode_pod(two).error().message,
            "spec.containers: the nvidia.com/gpu quantities add up to 1200000, above the limit of "
            "1000000");
  two["spec"]["containers"][1]["resources"]["requests"]["nvidia.com/gpu"] =
      json::parse("9223372036854775807");
  EXPECT_EQ(decode_pod(two).error().message,
            "spec.containers[1].resources.requests[nvidia.com/gpu]: quantity "
            "9223372036854775807 is above the limit of 1000000");
  // an unsigned priority above INT64_MAX used to read back as -1
  json prio = test::gpu_pod("p", "u", 1);
  prio["spec"]["priority"] = json::parse("18446744073709551615");
  EXPECT_EQ(decode_pod(prio).error().message,
            "Pod p: spec.priority must be an integer in [-2147483648, 2147483647]");
  json victims = json::parse(R"({"Pod": {"metadata": {"name": "p", "uid": "u"}},
      "NodeNameToMetaVictims": {"n": {"Pods": [], "NumPDBViolations": 18446744073709551615}}})");
  EXPECT_EQ(decode_preemption_args(victims).error().message,
            "NodeNameToMetaVictims[n].NumPDBViolations must be an integer in [0, 2147483647]");
  EXPECT_EQ(decode_host_priorities(json::parse(R"([{"Host": "n", "Score": 11}])")).error().message,
            "HostPriority n: Score must be an integer in [0, 10]");
}

TEST(ExtenderProtocol, NumberOverflowIsMalformedJson) {
  // 1e400 was an uncaught out_of_range exception (HTTP 500)
  auto r = parse_json(R"({"Pod": {"spec": {"priority": 1e400}}})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::invalid_argument);
  EXPECT_EQ(r.error().message,
            "malformed JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'");
}

}  // namespace
}  // namespace hetsched::k8s
