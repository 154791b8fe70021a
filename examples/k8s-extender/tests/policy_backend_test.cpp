// SPDX-License-Identifier: MIT
// The policy backend (--policy SPEC): registry policies through the contract, compared with the
// library's own answers on the same state.
#include "policy_backend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <hetsched/model/cluster_state.hpp>
#include <hetsched/policies/registry.hpp>

#include "cli.hpp"
#include "extender.hpp"
#include "fixtures.hpp"

namespace hetsched::k8s {
namespace {

using json = nlohmann::json;
using test::args_for;
using test::bind_for;
using test::data_json;
using test::gpu_pod;

/// FGD with a target workload of 1-GPU (3 in 4) and 4-GPU pods, no CPU.
constexpr const char* fgd_spec = "fifo+fgd:classes=0/1000/1/3/;0/1000/4/1/;total=4";

const std::vector<std::string> all_nodes = {"a100-0", "v100-0", "v100-1", "v100-2", "v100-3"};

std::vector<packer_node> cluster_nodes() {
  return parse_packer_cluster(data_json("packer_cluster.json")).value();
}

std::unique_ptr<backend> policy(std::string_view spec) {
  auto b = make_policy_backend(spec, cluster_nodes());
  if (!b) throw std::runtime_error(b.error().message);
  return std::move(*b);
}

extender_args args_of(const json& j) { return decode_extender_args(j).value(); }
binding_args bind_args(const json& pod, const std::string& node) {
  return decode_binding_args(bind_for(pod, node)).value();
}

/// The library's policy on its own cluster_state, fed the same pods: what the backend must equal.
class direct_policy {
 public:
  explicit direct_policy(std::string_view spec)
      : pc_(make_policy_cluster(cluster_nodes()).value()),
        inst_(make_policy(spec, *pc_.description, &pc_.topology).value()),
        state_(pc_.description) {}

  /// Returns the node name of what_if for a pod of `gpus` GPUs (nullopt for no plain bind).
  std::optional<std::string> choose(const json& pod) {
    const job_id id = submit(pod);
    auto d = inst_.place->what_if(state_, id);
    std::optional<std::string> out;
    if (d && d->binds.size() == 1)
      out = pc_.description->node(d->binds.front().tasks.front().node).name;
    EXPECT_TRUE(record(state_, id, job_event::cancel).has_value());
    EXPECT_TRUE(state_.forget(id).has_value());
    return out;
  }
  /// Places, applies and commits the pod; returns its node and GPU indices.
  std::pair<std::string, std::vector<std::int64_t>> bind(const json& pod) {
    const job_id id = submit(pod);
    auto d = inst_.place->place(state_, id).value();
    EXPECT_TRUE(apply(state_, d).has_value());
    inst_.place->commit(state_, d);
    const auto& t = d.binds.at(0).tasks.at(0);
    std::vector<std::int64_t> gpus;
    for (const auto& s : t.devices) gpus.push_back(pc_.description->device(s.device).local_index);
    return {pc_.description->node(t.node).name, gpus};
  }

 private:
  job_id submit(const json& pod) {
    const job_id id(next_++);
    EXPECT_TRUE(state_.submit(pod_job_spec(decode_pod(pod).value(), id, 0)).has_value());
    EXPECT_TRUE(record(state_, id, job_event::enqueue).has_value());
    return id;
  }
  policy_cluster pc_;
  policy_instance inst_;
  cluster_state state_;
  std::uint32_t next_ = 1;
};

/// Filters `pod` over every node and returns the one passing node ("" if none).
std::string filtered(extender& ex, const json& pod,
                     const std::vector<std::string>& nodes = all_nodes) {
  auto r = ex.filter(args_of(args_for(pod, nodes)));
  EXPECT_TRUE(r.has_value()) << r.error().message;
  if (!r || r->node_names.size() != 1) return "";
  return r->node_names.front();
}

TEST(ExtenderPolicy, FifoPackerFilterPrioritizeBindAsThePolicy) {
  extender ex(policy("fifo+packer"));
  direct_policy lib("fifo+packer");
  const json a = gpu_pod("a", "u-a", 4);
  // best fit on an empty cluster: the first node of the fullest (all equal) bucket, a100-0
  EXPECT_EQ(lib.choose(a), "a100-0");
  auto r = ex.filter(args_of(args_for(a, all_nodes)));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->node_names, (std::vector<std::string>{"a100-0"}));
  EXPECT_EQ(r->failed_nodes.size(), 4u);
  EXPECT_EQ(r->failed_nodes.at("v100-2"), "policy fifo+packer places the pod on a100-0");
  EXPECT_TRUE(r->failed_and_unresolvable.empty());
  auto scores = ex.prioritize(args_of(args_for(a, all_nodes)));
  ASSERT_TRUE(scores.has_value());
  for (const auto& h : *scores) EXPECT_EQ(h.score, h.host == "a100-0" ? 10 : 0) << h.host;

  auto bound = ex.bind(bind_args(a, "a100-0"));
  ASSERT_TRUE(bound.has_value()) << bound.error().message;
  const auto [lib_node, lib_gpus] = lib.bind(a);
  EXPECT_EQ(lib_node, "a100-0");
  EXPECT_EQ(bound->where.node, lib_node);
  EXPECT_EQ(bound->where.gpus, lib_gpus);
  EXPECT_EQ(bound->where.gpus.size(), 4u);
  EXPECT_EQ(ex.used_gpus(), 4);

  // best fit: the second 4-GPU pod fills a100-0
  const json b = gpu_pod("b", "u-b", 4);
  EXPECT_EQ(lib.choose(b), "a100-0");
  EXPECT_EQ(filtered(ex, b), "a100-0");
  auto second = ex.bind(bind_args(b, "a100-0"));
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(second->where.gpus, lib.bind(b).second);
  EXPECT_EQ(ex.used_gpus(), 8);
  // a100-0 is full: the next pod goes to the first V100 node
  const json c = gpu_pod("c", "u-c", 2);
  EXPECT_EQ(lib.choose(c), "v100-0");
  EXPECT_EQ(filtered(ex, c), "v100-0");
}

TEST(ExtenderPolicy, FifoFgdAndGandivaFilterAsThePolicy) {
  const std::vector<std::string> specs{fgd_spec, "fifo+gandiva:migrate=0", "drf+packer:fit=worst"};
  // where the four pods (1, 3, 1, 3 GPUs) land, as the library decides
  const std::map<std::string, std::string> placed_as{
      // FGD fills a100-0 first (least fragmentation growth for the target workload)
      {fgd_spec, "a100-0:0;a100-0:1,2,3;v100-0:0;v100-0:1,2,3;"},
      // Gandiva: 1-GPU jobs share a100-0, 3-GPU jobs go to a V100 node's best triple
      {"fifo+gandiva:migrate=0", "a100-0:0;v100-0:0,2,3;a100-0:1;v100-0:4,6,7;"},
      // worst fit: every pod on the emptiest node
      {"drf+packer:fit=worst", "a100-0:0;v100-0:0,2,3;v100-1:0;v100-2:0,2,3;"}};
  for (const std::string& spec : specs) {
    std::string placed;
    extender ex(policy(spec));
    direct_policy lib(spec);
    for (int i = 0; i < 4; ++i) {
      const json pod = gpu_pod(fmt::format("p{}", i), fmt::format("u-{}", i), 1 + 2 * (i % 2));
      const auto want = lib.choose(pod);
      ASSERT_TRUE(want.has_value()) << spec;
      EXPECT_EQ(filtered(ex, pod), *want) << spec << " pod " << i;
      auto bound = ex.bind(bind_args(pod, *want));
      ASSERT_TRUE(bound.has_value()) << spec << ": " << bound.error().message;
      const auto [node, gpus] = lib.bind(pod);
      EXPECT_EQ(bound->where.node, node) << spec;
      EXPECT_EQ(bound->where.gpus, gpus) << spec;
      placed += fmt::format("{}:{};", node, fmt::join(gpus, ","));
    }
    EXPECT_EQ(placed, placed_as.at(spec)) << spec;
    EXPECT_EQ(ex.used_gpus(), 1 + 3 + 1 + 3) << spec;
  }
}

TEST(ExtenderPolicy, WorstFitSpreadsAcrossNodes) {
  // drf+packer:fit=worst: each 1-GPU pod goes to the emptiest node, lowest id first
  extender ex(policy("drf+packer:fit=worst"));
  std::vector<std::string> got;
  for (int i = 0; i < 3; ++i) {
    const json pod = gpu_pod(fmt::format("w{}", i), fmt::format("u-w{}", i), 1);
    got.push_back(filtered(ex, pod));
    ASSERT_TRUE(ex.bind(bind_args(pod, got.back())).has_value());
  }
  EXPECT_EQ(got, (std::vector<std::string>{"a100-0", "v100-0", "v100-1"}));
}

TEST(ExtenderPolicy, WrongNodeIsRefusedAndChangesNothing) {
  extender ex(policy("fifo+packer"));
  const json a = gpu_pod("a", "u-a", 4);
  ASSERT_EQ(filtered(ex, a), "a100-0");
  const std::string before = ex.digest();
  auto refused = ex.bind(bind_args(a, "v100-1"));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, errc::failed_precondition);
  EXPECT_EQ(refused.error().message,
            "pod default/a: kube-scheduler binds it to v100-1 but policy fifo+packer places it on "
            "a100-0");
  EXPECT_EQ(ex.digest(), before);
  EXPECT_EQ(ex.used_gpus(), 0);
  // the right node still binds afterwards
  EXPECT_TRUE(ex.bind(bind_args(a, "a100-0")).has_value());
}

TEST(ExtenderPolicy, OnlyOfferedHealthyMatchingNodesAreChosen) {
  auto b = policy("fifo+packer");
  backend& raw = *b;
  extender ex(std::move(b));
  // kube-scheduler offers two V100 nodes: the policy picks among them
  const json a = gpu_pod("a", "u-a", 2);
  const std::string empty = raw.digest();
  EXPECT_EQ(filtered(ex, a, {"v100-3", "v100-2"}), "v100-2");
  // the hidden nodes are back afterwards: over every node the policy picks a100-0 again
  EXPECT_EQ(raw.digest(), empty);
  EXPECT_EQ(filtered(ex, gpu_pod("q", "u-q", 2)), "a100-0");
  // bind decides over the pod's last filter: v100-2, not a100-0
  auto bound = ex.bind(bind_args(a, "v100-2"));
  ASSERT_TRUE(bound.has_value()) << bound.error().message;
  // a nodeSelector hides a100-0 (unresolvable, with the reason)
  json v = gpu_pod("v", "u-v", 2);
  v["spec"]["nodeSelector"] = json{{"hetsched.io/gpu-type", "V100"}};
  auto r = ex.filter(args_of(args_for(v, all_nodes)));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->node_names, (std::vector<std::string>{"v100-2"}));  // best fit: the used node
  EXPECT_EQ(r->failed_and_unresolvable.at("a100-0"),
            "node selector hetsched.io/gpu-type=V100 does not match (node has A100)");
  // an unhealthy node is never chosen
  (void)raw.observe_health({node_info{"v100-2", {}, node_health::not_ready}});
  auto r2 = ex.filter(args_of(args_for(v, all_nodes)));
  ASSERT_TRUE(r2.has_value());
  EXPECT_EQ(r2->node_names, (std::vector<std::string>{"v100-0"}));
  EXPECT_EQ(r2->failed_and_unresolvable.at("v100-2"), "node is not Ready");
  auto refused = ex.bind(bind_args(v, "v100-2"));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message, "pod default/v cannot bind to v100-2: node is not Ready");
}

TEST(ExtenderPolicy, DeferralFailsEveryNodeWithTheReason) {
  extender ex(policy("fifo+packer"));
  for (int i = 0; i < 5; ++i) {
    const json pod = gpu_pod(fmt::format("f{}", i), fmt::format("u-f{}", i), 8);
    const std::string node = filtered(ex, pod);
    ASSERT_FALSE(node.empty());
    ASSERT_TRUE(ex.bind(bind_args(pod, node)).has_value());
  }
  EXPECT_EQ(ex.used_gpus(), 40);
  const std::string before = ex.digest();
  auto r = ex.filter(args_of(args_for(gpu_pod("x", "u-x", 1), all_nodes)));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->node_names.empty());
  ASSERT_EQ(r->failed_nodes.size(), 5u);
  EXPECT_EQ(r->failed_nodes.at("v100-0"),
            "policy fifo+packer defers the pod: insufficient_capacity: packer: no placement for "
            "1000 milli-GPU (0 whole GPUs free)");
  // no preemption from a non-preempting placement; preempt only reads
  preemption_args pa{decode_pod(gpu_pod("x", "u-x", 1)).value(), {{"v100-0", meta_victims{}}}};
  auto p = ex.preempt(pa);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->node_victims.empty());
  EXPECT_NE(ex.digest(), before);  // preempt remembers the pod as pending, like filter
}

TEST(ExtenderPolicy, PreemptAnswersThePolicysVictims) {
  // capacity queues: namespace a (tenant 0) owns 8 GPUs, b (tenant 1) 32; a may borrow
  auto made = make_policy_backend("fifo+capacity:quota=8/32,borrow=1,preemption=classic",
                                  cluster_nodes(), {"a", "b"});
  ASSERT_TRUE(made.has_value()) << made.error().message;
  extender ex(std::move(*made));
  auto in_ns = [](json pod, const std::string& ns) {
    pod["metadata"]["namespace"] = ns;
    return pod;
  };
  std::vector<std::string> nodes_of_a;
  for (int i = 0; i < 5; ++i) {
    const json pod = in_ns(gpu_pod(fmt::format("a{}", i), fmt::format("u-a{}", i), 8), "a");
    nodes_of_a.push_back(filtered(ex, pod));
    ASSERT_TRUE(ex.bind(bind_args(pod, nodes_of_a.back())).has_value());
  }
  EXPECT_EQ(nodes_of_a,
            (std::vector<std::string>{"a100-0", "v100-0", "v100-1", "v100-2", "v100-3"}));
  // b asks for 8 GPUs within its quota: capacity preempts one of a's borrowed pods
  const json b = in_ns(gpu_pod("b0", "u-b0", 8), "b");
  auto r = ex.filter(args_of(args_for(b, all_nodes)));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->node_names.empty());
  EXPECT_EQ(r->failed_nodes.at("a100-0"),
            "policy fifo+capacity:quota=8/32,borrow=1,preemption=classic defers the pod: "
            "insufficient_capacity: packer: no placement for 8000 milli-GPU (0 whole GPUs free) "
            "(it would preempt 1 pod)");
  std::map<std::string, meta_victims> offered;
  for (const auto& n : all_nodes) offered.emplace(n, meta_victims{{}, 3});
  const std::string before = ex.digest();
  auto p = ex.preempt(preemption_args{decode_pod(b).value(), offered});
  ASSERT_TRUE(p.has_value()) << p.error().message;
  ASSERT_EQ(p->node_victims.size(), 1u);
  // classic preemption evicts the most recently admitted borrowed pod, a4 on v100-3
  EXPECT_EQ(p->node_victims.begin()->first, "v100-3");
  EXPECT_EQ(p->node_victims.begin()->second.pod_uids, (std::vector<std::string>{"u-a4"}));
  EXPECT_EQ(p->node_victims.begin()->second.num_pdb_violations, 1);
  EXPECT_EQ(ex.digest(), before);  // preempt only reads
  // the victim goes (kube-scheduler evicts it, the watcher releases it): b lands there
  ASSERT_TRUE(ex.release(p->node_victims.begin()->second.pod_uids.front()).has_value());
  EXPECT_EQ(filtered(ex, b), p->node_victims.begin()->first);
}

TEST(ExtenderPolicy, ReleaseFreesAndRestoreReproducesTheState) {
  extender ex(policy(fgd_spec));
  std::vector<binding_record> records;
  for (int i = 0; i < 4; ++i) {
    const json pod = gpu_pod(fmt::format("r{}", i), fmt::format("u-r{}", i), 1 + i);
    const std::string node = filtered(ex, pod);
    auto bound = ex.bind(bind_args(pod, node));
    ASSERT_TRUE(bound.has_value()) << bound.error().message;
    records.push_back(*bound);
  }
  EXPECT_EQ(ex.used_gpus(), 10);
  ASSERT_TRUE(ex.release("u-r1").has_value());
  EXPECT_EQ(ex.used_gpus(), 8);
  records.erase(records.begin() + 1);

  extender restarted(policy(fgd_spec));
  EXPECT_TRUE(restarted.restore(records).empty());
  EXPECT_EQ(restarted.digest(), ex.digest());
  EXPECT_EQ(restarted.used_gpus(), 8);
  // both place the next pod alike
  const json next = gpu_pod("n", "u-n", 2);
  EXPECT_EQ(filtered(restarted, next), filtered(ex, next));
  // a record whose GPUs are taken is refused by the backend, nothing changes
  auto b = policy(fgd_spec);
  pod_info p = decode_pod(gpu_pod("z", "u-z", 2)).value();
  ASSERT_TRUE(b->restore(p, placement{"v100-0", {0, 1}, nullptr}).has_value());
  const std::string before = b->digest();
  auto again =
      b->restore(decode_pod(gpu_pod("y", "u-y", 1)).value(), placement{"v100-0", {1}, nullptr});
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, errc::failed_precondition);
  auto bad =
      b->restore(decode_pod(gpu_pod("w", "u-w", 1)).value(), placement{"v100-0", {8}, nullptr});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "pod default/w: GPU 8 is not a GPU of v100-0 (0..7)");
  EXPECT_EQ(b->digest(), before);
  ASSERT_TRUE(b->release(p, placement{"v100-0", {0, 1}, nullptr}).has_value());
  EXPECT_EQ(b->used_gpus(), 0);
}

TEST(ExtenderPolicy, BadSpecsAreNamed) {
  auto unknown = make_policy_backend("fifo+nope", cluster_nodes());
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, errc::not_found);
  EXPECT_NE(unknown.error().message.find("unknown placement 'nope'"), std::string::npos)
      << unknown.error().message;
  auto order = make_policy_backend("zzz+packer", cluster_nodes());
  ASSERT_FALSE(order.has_value());
  EXPECT_NE(order.error().message.find("unknown ordering 'zzz'"), std::string::npos);
  auto param = make_policy_backend("fifo+packer:fit=odd", cluster_nodes());
  ASSERT_FALSE(param.has_value());
  EXPECT_EQ(param.error().code, errc::invalid_argument);
  EXPECT_EQ(param.error().message,
            "policy 'fifo+packer:fit=odd': packer: fit=odd (expected best or worst)");
  auto twice = make_policy_backend("fifo+packer", cluster_nodes(), {"a", "a"});
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().message, "namespace a is listed twice among the tenants");
}

TEST(ExtenderPolicy, CommandLine) {
  auto ok = parse_extender_cli(
      {"x", "--demo", "--policy", "fifo+fgd:policy=best_fit", "--policy-tenants=a,b"});
  ASSERT_TRUE(std::holds_alternative<extender_cli>(ok));
  EXPECT_EQ(std::get<extender_cli>(ok).policy, "fifo+fgd:policy=best_fit");
  EXPECT_EQ(std::get<extender_cli>(ok).policy_tenants, (std::vector<std::string>{"a", "b"}));
  auto alone = parse_extender_cli({"x", "--policy", "fifo+packer"});
  ASSERT_TRUE(std::holds_alternative<cli_exit>(alone));
  EXPECT_EQ(std::get<cli_exit>(alone).code, 2);
  auto hived = parse_extender_cli({"x", "--hived-config", "h.json", "--policy", "fifo+packer"});
  ASSERT_TRUE(std::holds_alternative<cli_exit>(hived));
  EXPECT_EQ(std::get<cli_exit>(hived).code, 2);
}

}  // namespace
}  // namespace hetsched::k8s
