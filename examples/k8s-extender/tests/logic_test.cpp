// SPDX-License-Identifier: MIT
// The extender logic without sockets: packer and HiveD backends, binding records, refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <hetsched/policies/hived_config_json.hpp>

#include "extender.hpp"
#include "fixtures.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using test::args_for;
using test::bind_for;
using test::data_json;
using test::gpu_pod;
using test::hived_pod;

extender_args args_of(const json& j) { return decode_extender_args(j).value(); }

std::int64_t score_of(const std::vector<host_priority>& list, const std::string& host) {
  for (const auto& h : list)
    if (h.host == host) return h.score;
  return -1;
}

TEST(ExtenderPacker, FilterHonoursSelectorAndFreeGpus) {
  extender ex(test::packer_cluster());
  auto r = ex.filter(args_of(data_json("filter_nodenames.json")));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->node_names, (std::vector<std::string>{"v100-0", "v100-1", "v100-2"}));
  EXPECT_TRUE(r->failed_nodes.empty());
  EXPECT_EQ(r->failed_and_unresolvable.at("a100-0"),
            "node selector hetsched.io/gpu-type=V100 does not match (node has A100)");
  // a 16-GPU pod fits no node at all: bad input
  auto huge = ex.filter(args_of(args_for(gpu_pod("huge", "u-huge", 16), {"v100-0"})));
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().code, errc::invalid_argument);
}

TEST(ExtenderPacker, NodeObjectsUseTheirLabels) {
  extender ex(test::packer_cluster());
  auto args = args_of(data_json("filter_nodes.json"));
  auto r = ex.filter(args);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  // zone=west: v100-0 (Node object label) and a100-0 (configured and object label)
  EXPECT_EQ(r->node_names, (std::vector<std::string>{"v100-0", "a100-0"}));
  EXPECT_EQ(r->failed_and_unresolvable.at("v100-1"),
            "node selector zone=west does not match (node has east)");
  const json out = encode(*r, args);
  ASSERT_EQ(out["Nodes"]["items"].size(), 2u);
  EXPECT_EQ(out["Nodes"]["items"][0]["metadata"]["uid"], "node-uid-0");
}

TEST(ExtenderPacker, PrioritizePrefersPackedNodes) {
  extender ex(test::packer_cluster());
  const std::vector<std::string> v100 = {"v100-0", "v100-1", "v100-2", "v100-3"};
  auto first = gpu_pod("a", "u-a", 4);
  auto s0 = ex.prioritize(args_of(args_for(first, v100)));
  ASSERT_TRUE(s0.has_value()) << s0.error().message;
  // empty nodes: best 4-GPU block (topology 100) and half the node used after (packing 50):
  // (100 + 50) / 20 = 7 everywhere
  for (const auto& h : *s0) EXPECT_EQ(h.score, 7) << h.host;
  ASSERT_TRUE(ex.filter(args_of(args_for(first, v100))).has_value());
  auto bound = ex.bind(decode_binding_args(bind_for(first, "v100-1")).value());
  ASSERT_TRUE(bound.has_value()) << bound.error().message;
  // lexmax best quad of the DGX-1 hybrid cube mesh
  EXPECT_EQ(bound->where.gpus, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ex.used_gpus(), 4);
  auto s1 = ex.prioritize(args_of(args_for(gpu_pod("b", "u-b", 4), v100)));
  ASSERT_TRUE(s1.has_value());
  // v100-1's remaining quad 4-7 is as well connected (100) and fills the node (100): 10
  EXPECT_EQ(score_of(*s1, "v100-1"), 10);
  EXPECT_EQ(score_of(*s1, "v100-0"), 7);
  // a pod without GPUs scores 0 everywhere
  auto s2 = ex.prioritize(args_of(args_for(gpu_pod("c", "u-c", 0), v100)));
  ASSERT_TRUE(s2.has_value());
  EXPECT_EQ(score_of(*s2, "v100-2"), 0);
}

TEST(ExtenderPacker, BindRefusalsChangeNothing) {
  std::vector<binding_record> forwarded;
  extender_options opts;
  opts.on_bind = [&](const binding_record& rec) -> result<void> {
    forwarded.push_back(rec);
    return {};
  };
  extender ex(test::packer_cluster(), opts);
  auto x = gpu_pod("x", "u-x", 8);
  auto y = gpu_pod("y", "u-y", 8);
  ASSERT_TRUE(ex.filter(args_of(args_for(x, {"v100-2"}))).has_value());
  ASSERT_TRUE(ex.filter(args_of(args_for(y, {"v100-2"}))).has_value());
  ASSERT_TRUE(ex.bind(decode_binding_args(bind_for(y, "v100-2")).value()).has_value());
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_EQ(forwarded[0].where.node, "v100-2");
  EXPECT_EQ(forwarded[0].where.gpus.size(), 8u);
  const std::string before = ex.digest();

  // x no longer fits on the node y took
  auto late = ex.bind(decode_binding_args(bind_for(x, "v100-2")).value());
  ASSERT_FALSE(late.has_value());
  EXPECT_EQ(late.error().code, errc::failed_precondition);
  EXPECT_EQ(late.error().message,
            "pod default/x no longer fits on v100-2: 0 GPUs free, pod requests 8");
  // y twice
  auto twice = ex.bind(decode_binding_args(bind_for(y, "v100-3")).value());
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().code, errc::already_exists);
  // a pod never filtered, an unknown node, a UID reused under another name
  auto never = ex.bind(decode_binding_args(bind_for(gpu_pod("z", "u-z", 1), "v100-0")).value());
  EXPECT_EQ(never.error().code, errc::not_found);
  auto nowhere = ex.bind(decode_binding_args(bind_for(x, "v100-9")).value());
  EXPECT_EQ(nowhere.error().code, errc::not_found);
  auto renamed = bind_for(x, "v100-0");
  renamed["PodName"] = "other";
  EXPECT_EQ(ex.bind(decode_binding_args(renamed).value()).error().code, errc::failed_precondition);
  EXPECT_EQ(ex.digest(), before);
  EXPECT_EQ(forwarded.size(), 1u);

  // through handle(): a refusal is HTTP 200 with ExtenderBindingResult.Error
  auto answer = ex.handle("bind", bind_for(y, "v100-3"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body["Error"], "pod default/y (UID u-y) is already bound to v100-2");
  EXPECT_EQ(ex.digest(), before);
}

TEST(ExtenderPacker, FailedForwardUndoesTheBind) {
  extender_options opts;
  opts.on_bind = [](const binding_record&) -> result<void> {
    return make_error(errc::internal, "API server unreachable");
  };
  extender ex(test::packer_cluster(), opts);
  auto p = gpu_pod("p", "u-p", 2);
  ASSERT_TRUE(ex.filter(args_of(args_for(p, {"v100-0"}))).has_value());
  const std::string before = ex.digest();
  auto r = ex.bind(decode_binding_args(bind_for(p, "v100-0")).value());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "binding pod default/p failed: API server unreachable");
  EXPECT_EQ(ex.digest(), before);
  EXPECT_EQ(ex.used_gpus(), 0);
}

TEST(ExtenderPacker, UnknownNodesAreRefusedOrTolerated) {
  extender strict(test::packer_cluster());
  const std::string before = strict.digest();
  auto args = args_of(args_for(gpu_pod("p", "u-p", 1), {"v100-0", "cpu-node-7"}));
  auto r = strict.filter(args);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::not_found);
  EXPECT_EQ(r.error().message, "unknown node cpu-node-7: not in the packer cluster");
  EXPECT_EQ(strict.digest(), before);

  extender_options opts;
  opts.tolerate_unknown_nodes = true;
  extender lenient(test::packer_cluster(), opts);
  auto ok = lenient.filter(args);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->node_names, std::vector<std::string>{"v100-0"});
  EXPECT_EQ(ok->failed_and_unresolvable.at("cpu-node-7"),
            "node cpu-node-7 is not managed by hetsched");
  auto scores = lenient.prioritize(args);
  ASSERT_TRUE(scores.has_value());
  EXPECT_EQ(score_of(*scores, "cpu-node-7"), 0);
}

TEST(ExtenderPacker, ReleaseReturnsGpus) {
  extender ex(test::packer_cluster());
  const std::string empty = ex.digest();
  auto p = gpu_pod("p", "u-p", 2);
  ASSERT_TRUE(ex.filter(args_of(args_for(p, {"v100-0"}))).has_value());
  const std::string filtered = ex.digest();
  ASSERT_TRUE(ex.bind(decode_binding_args(bind_for(p, "v100-0")).value()).has_value());
  EXPECT_EQ(ex.used_gpus(), 2);
  ASSERT_TRUE(ex.release("u-p").has_value());
  EXPECT_EQ(ex.used_gpus(), 0);
  EXPECT_NE(ex.digest(), filtered);
  EXPECT_EQ(ex.release("u-p").error().code, errc::not_found);
  // a pending (filtered, never bound) pod is forgotten by release too
  ASSERT_TRUE(ex.filter(args_of(args_for(p, {"v100-0"}))).has_value());
  ASSERT_TRUE(ex.release("u-p").has_value());
  EXPECT_EQ(ex.digest(), empty);
}

TEST(ExtenderPacker, PendingCacheIsBounded) {
  extender_options opts;
  opts.pending_capacity = 2;
  extender ex(test::packer_cluster(), opts);
  for (const char* uid : {"u1", "u2", "u3"})
    ASSERT_TRUE(ex.filter(args_of(args_for(gpu_pod(uid, uid, 1), {"v100-0"}))).has_value());
  // u1 was dropped (oldest); u3 still binds
  EXPECT_EQ(
      ex.bind(decode_binding_args(bind_for(gpu_pod("u1", "u1", 1), "v100-0")).value()).error().code,
      errc::not_found);
  EXPECT_TRUE(
      ex.bind(decode_binding_args(bind_for(gpu_pod("u3", "u3", 1), "v100-0")).value()).has_value());
}

TEST(ExtenderHived, FilterPrioritizeBindFollowHived) {
  extender ex(test::hived_cluster());
  auto args = args_of(data_json("hived_filter.json"));
  auto r = ex.filter(args);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->node_names.size(), 1u);
  const std::string node = r->node_names[0];
  const std::string other = node == "n0" ? "n1" : "n0";
  EXPECT_EQ(r->failed_nodes.at(other), fmt::format("HiveD places the pod on {}", node));
  auto s = ex.prioritize(args);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(score_of(*s, node), 10);
  EXPECT_EQ(score_of(*s, other), 0);

  const json pod = data_json("hived_filter.json")["Pod"];
  auto b = ex.bind(decode_binding_args(bind_for(pod, node)).value());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->where.gpus.size(), 2u);
  EXPECT_EQ(b->where.bind_info["node"], node);
  EXPECT_EQ(b->where.bind_info["cellChain"], "NODE");
  EXPECT_EQ(b->where.bind_info["leafCellIsolation"].size(), 2u);
  // one member of 2 pods x 2 leaves: two placements recorded for the group
  ASSERT_EQ(b->where.bind_info["affinityGroupBindInfo"].size(), 1u);
  EXPECT_EQ(b->where.bind_info["affinityGroupBindInfo"][0]["podPlacements"].size(), 2u);
  EXPECT_EQ(ex.used_gpus(), 2);

  // the group's second pod goes where the group's placement says
  json second = pod;
  second["metadata"]["name"] = "job1-worker-1";
  second["metadata"]["uid"] = "hived-uid-2";
  auto r2 = ex.filter(args_of(args_for(second, {"n0", "n1"})));
  ASSERT_TRUE(r2.has_value());
  EXPECT_EQ(r2->node_names, std::vector<std::string>{node});
  auto b2 = ex.bind(decode_binding_args(bind_for(second, node)).value());
  ASSERT_TRUE(b2.has_value()) << b2.error().message;
  EXPECT_EQ(ex.used_gpus(), 4);
}

TEST(ExtenderHived, PreemptNamesVictimsByUid) {
  extender ex(test::hived_cluster());
  std::map<std::string, std::string> node_of;
  for (const char* uid : {"opp-0", "opp-1"}) {
    auto pod = hived_pod(uid, uid, "a", -1, 4);
    auto r = ex.filter(args_of(args_for(pod, {"n0", "n1"})));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_EQ(r->node_names.size(), 1u);
    ASSERT_TRUE(ex.bind(decode_binding_args(bind_for(pod, r->node_names[0])).value()));
    node_of[r->node_names[0]] = uid;
  }
  ASSERT_EQ(node_of.size(), 2u);  // one opportunistic pod per node
  const json urgent = data_json("hived_preempt.json")["Pod"];
  auto f = ex.filter(args_of(args_for(urgent, {"n0", "n1"})));
  ASSERT_TRUE(f.has_value()) << f.error().message;
  EXPECT_TRUE(f->node_names.empty());
  EXPECT_EQ(f->failed_nodes.at("n0"), "HiveD needs to preempt pods on 1 node(s) first");

  auto p = ex.preempt(decode_preemption_args(data_json("hived_preempt.json")).value());
  ASSERT_TRUE(p.has_value()) << p.error().message;
  ASSERT_EQ(p->node_victims.size(), 1u);
  const auto& [victim_node, victims] = *p->node_victims.begin();
  // HiveD's victim is the opportunistic pod on its chosen node, by UID
  EXPECT_EQ(victims.pod_uids, std::vector<std::string>{node_of.at(victim_node)});

  // kube-scheduler deletes the victim; the preemptor then binds there
  ASSERT_TRUE(ex.release(node_of.at(victim_node)).has_value());
  auto again = ex.filter(args_of(args_for(urgent, {"n0", "n1"})));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->node_names, std::vector<std::string>{victim_node});
  ASSERT_TRUE(ex.bind(decode_binding_args(bind_for(urgent, victim_node)).value()).has_value());
  EXPECT_EQ(ex.used_gpus(), 8);
}

TEST(ExtenderHived, ConfigFromHivedJson) {
  // tests/data/hived_config.json is the fixture cluster in hivedscheduler's config shape
  auto cfg = hived::parse_config_json(test::read_data("hived_config.json"));
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  auto b = make_hived_backend(*cfg);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  extender from_json(std::move(*b));
  extender from_structs(test::hived_cluster());
  EXPECT_EQ(from_json.total_gpus(), 8);
  EXPECT_EQ(from_json.digest(), from_structs.digest());
  auto r = from_json.filter(args_of(data_json("hived_filter.json")));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->node_names,
            from_structs.filter(args_of(data_json("hived_filter.json")))->node_names);
}

TEST(ExtenderHived, BadSpecsAreBadRequests) {
  extender ex(test::hived_cluster());
  const std::string before = ex.digest();
  auto plain = ex.handle("filter", args_for(gpu_pod("p", "u-p", 1), {"n0"}));
  EXPECT_EQ(plain.status, 400);
  EXPECT_EQ(plain.body["Error"],
            "pod default/p has no hivedscheduler.microsoft.com/pod-scheduling-spec annotation");
  auto high = ex.handle("filter", args_for(hived_pod("q", "u-q", "a", 5000, 1), {"n0"}));
  EXPECT_EQ(high.status, 400);
  EXPECT_NE(high.body["Error"].get<std::string>().find("priority 5000 is not in [-1, 1000]"),
            std::string::npos);
  auto no_vc = ex.handle("filter", args_for(hived_pod("v", "u-v", "zz", 1, 1), {"n0"}));
  EXPECT_EQ(no_vc.status, 400);
  EXPECT_NE(no_vc.body["Error"].get<std::string>().find("pod default/v: "), std::string::npos);
  EXPECT_EQ(ex.digest(), before);
}

}  // namespace
}  // namespace hetsched::k8s
