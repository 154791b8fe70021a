// SPDX-License-Identifier: MIT
// cluster_topology storage and cluster_builder.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include <hetsched/topology/cluster_builder.hpp>

namespace hetsched {

struct cluster_topology::data {
  std::string name;
  std::vector<node_topology> templates;
  std::vector<cluster_node> nodes;
  std::vector<cluster_group> groups;
  std::vector<std::uint32_t> depth;  // per group; the root has depth 0
  std::size_t gpu_count = 0;
  std::vector<std::pair<std::string_view, node_id>> by_name;  // sorted; views into nodes[].name
  graph_type graph;
};

cluster_topology::cluster_topology() : data_(std::make_shared<const data>()) {}

const std::string& cluster_topology::name() const noexcept { return data_->name; }
std::size_t cluster_topology::node_count() const noexcept { return data_->nodes.size(); }
std::size_t cluster_topology::gpu_count() const noexcept { return data_->gpu_count; }

const cluster_node& cluster_topology::node(node_id n) const noexcept {
  HETSCHED_ASSERT(n.index() < data_->nodes.size(), "node id out of range");
  return data_->nodes[n.index()];
}

std::span<const cluster_node> cluster_topology::nodes() const noexcept { return data_->nodes; }

const node_topology& cluster_topology::topology_of(node_id n) const noexcept {
  return data_->templates[node(n).template_index];
}

std::span<const node_topology> cluster_topology::templates() const noexcept {
  return data_->templates;
}

result<node_id> cluster_topology::find_node(std::string_view name) const {
  const auto& index = data_->by_name;
  auto it = std::lower_bound(index.begin(), index.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  if (it == index.end() || it->first != name) {
    return make_error(errc::not_found, "cluster '{}' has no node named '{}'", data_->name, name);
  }
  return it->second;
}

node_id cluster_topology::node_of_gpu(device_id gpu) const noexcept {
  HETSCHED_ASSERT(gpu.index() < data_->gpu_count, "GPU id out of range");
  const auto& nodes = data_->nodes;
  // The last node whose first GPU is <= gpu and that has GPUs.
  auto it = std::upper_bound(nodes.begin(), nodes.end(), gpu,
                             [](device_id g, const cluster_node& n) { return g < n.first_gpu; });
  std::size_t n = static_cast<std::size_t>(it - nodes.begin()) - 1;
  while (nodes[n].gpu_count == 0) --n;
  return node_id(static_cast<std::uint32_t>(n));
}

std::span<const cluster_group> cluster_topology::groups() const noexcept { return data_->groups; }

const cluster_group& cluster_topology::common_group(node_id a, node_id b) const noexcept {
  std::uint32_t ga = node(a).group;
  std::uint32_t gb = node(b).group;
  const auto& g = data_->groups;
  const auto& depth = data_->depth;
  while (depth[ga] > depth[gb]) ga = g[ga].parent;
  while (depth[gb] > depth[ga]) gb = g[gb].parent;
  while (ga != gb) {
    ga = g[ga].parent;
    gb = g[gb].parent;
  }
  return g[ga];
}

affinity_level cluster_topology::level_between(device_id a, device_id b) const noexcept {
  if (a == b) return affinity_level::gpu;
  return common_group(node_of_gpu(a), node_of_gpu(b)).level;
}

const cluster_topology::graph_type& cluster_topology::graph() const noexcept {
  return data_->graph;
}

// ---------------------------------------------------------------------------------------------

cluster_builder::cluster_builder(std::string name) : name_(std::move(name)) {}

cluster_builder& cluster_builder::add_nodes(const node_topology& topology, std::size_t count,
                                            std::string prefix, std::int64_t uplink_mb_s) {
  auto it = std::find_if(templates_.begin(), templates_.end(),
                         [&](const node_topology& t) { return t == topology; });
  if (it == templates_.end()) {
    templates_.push_back(topology);
    it = templates_.end() - 1;
  }
  if (prefix.empty()) prefix = topology.name();
  batches_.push_back(node_batch{static_cast<std::uint32_t>(it - templates_.begin()), count,
                                std::move(prefix), uplink_mb_s});
  return *this;
}

cluster_builder& cluster_builder::add_nodes(node_template t, std::size_t count, std::string prefix,
                                            std::int64_t uplink_mb_s) {
  auto topo = make_node_template(t);
  if (!topo) {
    if (!deferred_error_) deferred_error_ = topo.error();
    return *this;
  }
  return add_nodes(*topo, count, std::move(prefix), uplink_mb_s);
}

cluster_builder& cluster_builder::racks(std::size_t nodes_per_rack, oversubscription ratio,
                                        link_kind network) {
  racks_set_twice_ = racks_set_twice_ || nodes_per_rack_ != 0;
  nodes_per_rack_ = nodes_per_rack == 0 ? static_cast<std::size_t>(-1) : nodes_per_rack;
  rack_ratio_ = ratio;
  rack_network_ = network;
  return *this;
}

cluster_builder& cluster_builder::tier(std::string name, std::size_t members_per_group,
                                       oversubscription ratio) {
  tier_before_racks_ = tier_before_racks_ || nodes_per_rack_ == 0;
  tiers_.push_back(tier_spec{std::move(name), members_per_group, ratio});
  return *this;
}

cluster_builder& cluster_builder::nvlink_domains(std::size_t nodes_per_domain,
                                                 std::int64_t gpu_nvlink_mb_s) {
  nodes_per_domain_ = nodes_per_domain == 0 ? static_cast<std::size_t>(-1) : nodes_per_domain;
  domain_gpu_mb_s_ = gpu_nvlink_mb_s;
  return *this;
}

namespace {

std::int64_t scaled(std::int64_t total, oversubscription r) {
  return total * static_cast<std::int64_t>(r.up) / static_cast<std::int64_t>(r.down);
}

std::int64_t nic_total(const node_topology& t) {
  std::int64_t sum = 0;
  for (vertex_id v : t.nics()) sum += t.vertex(v).speed_mb_s;
  return sum;
}

}  // namespace

result<cluster_topology> cluster_builder::build() const {
  if (deferred_error_) return *deferred_error_;
  constexpr std::size_t unset_invalid = static_cast<std::size_t>(-1);
  if (nodes_per_rack_ == unset_invalid) {
    return make_error(errc::invalid_argument, "cluster '{}': racks of 0 nodes", name_);
  }
  if (nodes_per_domain_ == unset_invalid) {
    return make_error(errc::invalid_argument, "cluster '{}': NVLink domains of 0 nodes", name_);
  }
  if (racks_set_twice_) {
    return make_error(errc::invalid_argument, "cluster '{}': racks() was called twice", name_);
  }
  if (tier_before_racks_) {
    return make_error(errc::invalid_argument,
                      "cluster '{}': a network tier needs racks below it; call racks() first",
                      name_);
  }
  for (const auto& r : {rack_ratio_}) {
    if (r.down == 0 || r.up == 0) {
      return make_error(errc::invalid_argument,
                        "cluster '{}': rack oversubscription {}:{} has a zero", name_, r.down,
                        r.up);
    }
  }
  for (const auto& t : tiers_) {
    if (t.members == 0 || t.ratio.down == 0 || t.ratio.up == 0) {
      return make_error(errc::invalid_argument,
                        "cluster '{}': tier '{}' needs a positive group size and ratio", name_,
                        t.name);
    }
  }
  if (domain_gpu_mb_s_ < 0) {
    return make_error(errc::invalid_argument, "cluster '{}': negative NVLink domain bandwidth {}",
                      name_, domain_gpu_mb_s_);
  }
  std::size_t node_total = 0;
  std::size_t gpu_total = 0;
  for (const auto& b : batches_) {
    node_total += b.count;
    gpu_total += b.count * templates_[b.template_index].gpus().size();
    if (node_total > max_nodes || gpu_total > max_gpus) {
      return make_error(errc::out_of_range,
                        "cluster '{}' would have {} nodes and {} GPUs; the limits are {} and {}",
                        name_, node_total, gpu_total, max_nodes, max_gpus);
    }
  }
  if (node_total == 0)
    return make_error(errc::invalid_argument, "cluster '{}' has no nodes", name_);
  const std::size_t rack_size = nodes_per_rack_;
  const std::size_t domain_size = nodes_per_domain_;
  if (domain_size != 0 && rack_size != 0 && rack_size % domain_size != 0 &&
      domain_size % rack_size != 0) {
    return make_error(errc::invalid_argument,
                      "cluster '{}': NVLink domains of {} nodes straddle racks of {} nodes", name_,
                      domain_size, rack_size);
  }

  auto d = std::make_shared<cluster_topology::data>();
  d->name = name_;
  d->templates = templates_;
  d->nodes.reserve(node_total);
  d->gpu_count = gpu_total;

  // Nodes, numbered per prefix.
  std::map<std::string, std::size_t> next_of_prefix;
  std::uint32_t next_gpu = 0;
  for (const auto& b : batches_) {
    const auto& topo = templates_[b.template_index];
    const auto gpus = static_cast<std::uint32_t>(topo.gpus().size());
    const std::int64_t uplink = b.uplink_mb_s >= 0 ? b.uplink_mb_s : nic_total(topo);
    std::size_t& k = next_of_prefix[b.prefix];
    for (std::size_t i = 0; i < b.count; ++i, ++k) {
      cluster_node n;
      n.name = fmt::format("{}-{}", b.prefix, k);
      n.template_index = b.template_index;
      n.first_gpu = device_id(next_gpu);
      n.gpu_count = gpus;
      n.uplink_mb_s = uplink;
      d->nodes.push_back(std::move(n));
      next_gpu += gpus;
    }
  }
  d->by_name.reserve(node_total);
  for (std::size_t i = 0; i < node_total; ++i) {
    d->by_name.emplace_back(d->nodes[i].name, node_id(static_cast<std::uint32_t>(i)));
  }
  std::sort(d->by_name.begin(), d->by_name.end());
  for (std::size_t i = 1; i < d->by_name.size(); ++i) {
    if (d->by_name[i].first == d->by_name[i - 1].first) {
      return make_error(errc::already_exists, "cluster '{}': node name '{}' is used twice", name_,
                        d->by_name[i].first);
    }
  }

  // Groups: the root, one leaf per node, then each level bottom-up over consecutive members.
  auto& groups = d->groups;
  groups.reserve(1 + 2 * node_total);
  groups.push_back(cluster_group{affinity_level::cluster,
                                 0,
                                 name_,
                                 0,
                                 {},
                                 node_id(0),
                                 static_cast<std::uint32_t>(node_total),
                                 gpu_total,
                                 0,
                                 0});
  std::vector<std::uint32_t> current;
  current.reserve(node_total);
  for (std::size_t i = 0; i < node_total; ++i) {
    auto& n = d->nodes[i];
    n.group = static_cast<std::uint32_t>(groups.size());
    current.push_back(n.group);
    groups.push_back(cluster_group{affinity_level::node,
                                   0,
                                   n.name,
                                   0,
                                   {},
                                   node_id(static_cast<std::uint32_t>(i)),
                                   1,
                                   n.gpu_count,
                                   n.uplink_mb_s,
                                   0});
  }
  // Groups `current` into consecutive chunks; `by_nodes` chunks by node count, else by members.
  auto add_level = [&](affinity_level level, std::uint32_t tier, std::string_view prefix,
                       std::size_t size, bool by_nodes, oversubscription ratio) {
    std::vector<std::uint32_t> next;
    std::size_t k = 0;
    for (std::size_t c = 0; c < current.size(); ++k) {
      cluster_group grp;
      grp.level = level;
      grp.tier = tier;
      grp.name = fmt::format("{}-{}", prefix, k);
      grp.first_node = groups[current[c]].first_node;
      const auto index = static_cast<std::uint32_t>(groups.size());
      std::int64_t uplinks = 0;
      std::size_t taken = 0;
      while (c < current.size() && (by_nodes ? grp.node_count < size : taken < size)) {
        auto& child = groups[current[c]];
        child.parent = index;
        grp.children.push_back(current[c]);
        grp.node_count += child.node_count;
        grp.gpu_count += child.gpu_count;
        uplinks += child.uplink_mb_s;
        ++taken;
        ++c;
      }
      grp.uplink_mb_s = scaled(uplinks, ratio);
      next.push_back(index);
      groups.push_back(std::move(grp));
    }
    current = std::move(next);
  };
  const bool domain_below_rack = domain_size != 0 && (rack_size == 0 || domain_size <= rack_size);
  if (domain_below_rack) add_level(affinity_level::nvlink_domain, 0, "nvl", domain_size, true, {});
  if (rack_size != 0) add_level(affinity_level::rack, 0, "rack", rack_size, true, rack_ratio_);
  if (domain_size != 0 && !domain_below_rack) {
    add_level(affinity_level::nvlink_domain, 0, "nvl", domain_size, true, {});
  }
  for (std::size_t t = 0; t < tiers_.size(); ++t) {
    add_level(affinity_level::network_tier, static_cast<std::uint32_t>(t + 1), tiers_[t].name,
              tiers_[t].members, false, tiers_[t].ratio);
  }
  for (std::uint32_t c : current) groups[c].parent = 0;
  groups[0].children = current;

  // Depths (parents were created after their children, except the root).
  d->depth.assign(groups.size(), 0);
  std::vector<std::uint32_t> order{0};
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (std::uint32_t c : groups[order[k]].children) {
      d->depth[c] = d->depth[order[k]] + 1;
      order.push_back(c);
    }
  }

  // The cluster-level graph: one vertex per group, one edge per child-parent pair.
  d->graph = cluster_topology::graph_type(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    auto& grp = groups[g];
    grp.vertex = static_cast<std::uint32_t>(g);
    auto& v = d->graph[g];
    v.group = static_cast<std::uint32_t>(g);
    v.name = grp.name;
    switch (grp.level) {
      case affinity_level::node: v.kind = vertex_kind::node; break;
      case affinity_level::rack: v.kind = vertex_kind::rack; break;
      case affinity_level::nvlink_domain: v.kind = vertex_kind::nvlink_domain; break;
      case affinity_level::network_tier: v.kind = vertex_kind::network_tier; break;
      default: v.kind = vertex_kind::cluster; break;
    }
    if (g == 0) continue;
    topo_link link{rack_network_, 1, 0, 0, grp.uplink_mb_s};
    if (groups[grp.parent].level == affinity_level::nvlink_domain) {
      link = topo_link{link_kind::nvlink, 1, 0, 0,
                       domain_gpu_mb_s_ * static_cast<std::int64_t>(grp.gpu_count)};
    }
    boost::add_edge(g, grp.parent, link, d->graph);
  }

  cluster_topology out;
  out.data_ = std::move(d);
  return out;
}

namespace {
constexpr std::array<std::string_view, 4> builtin_clusters{"demo", "superpod-a100",
                                                           "h100-nvlink-pod", "a100-100k"};
}  // namespace

std::span<const std::string_view> builtin_cluster_names() noexcept { return builtin_clusters; }

result<cluster_topology> make_builtin_cluster(std::string_view name) {
  if (name == "demo") {
    return cluster_builder("demo")
        .add_nodes(node_template::dgx_a100, 4)
        .add_nodes(node_template::hgx_h100, 2)
        .add_nodes(node_template::dgx2, 2)
        .racks(4)
        .tier("pod", 2)
        .build();
  }
  if (name == "superpod-a100") {
    return cluster_builder("superpod-a100")
        .add_nodes(node_template::dgx_a100, 140)
        .racks(4)
        .tier("su", 5)
        .tier("spine", 7)
        .build();
  }
  if (name == "h100-nvlink-pod") {
    return cluster_builder("h100-nvlink-pod")
        .add_nodes(node_template::hgx_h100, 64)
        .racks(4)
        .nvlink_domains(32, 450000)
        .build();
  }
  if (name == "a100-100k") {
    return cluster_builder("a100-100k")
        .add_nodes(node_template::dgx_a100, 12500)
        .racks(8)
        .tier("pod", 16, oversubscription{2, 1})
        .tier("spine", 16)
        .build();
  }
  return make_error(errc::not_found, "no built-in cluster named '{}' (known: {})", name,
                    fmt::join(builtin_clusters, ", "));
}

}  // namespace hetsched
