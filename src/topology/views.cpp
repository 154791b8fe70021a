// SPDX-License-Identifier: MIT
// Derived views of a node topology: relations, bandwidths, NCCL paths and affinity groups.
#include <algorithm>
#include <charconv>
#include <map>

#include <hetsched/model/gpu_type.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/views.hpp>

namespace hetsched {

std::string_view to_string(pcie_relation r) noexcept {
  switch (r) {
    case pcie_relation::self: return "X";
    case pcie_relation::pix: return "PIX";
    case pcie_relation::pxb: return "PXB";
    case pcie_relation::phb: return "PHB";
    case pcie_relation::node: return "NODE";
    case pcie_relation::sys: return "SYS";
    case pcie_relation::unknown: return "?";
  }
  return "?";
}

std::string pair_relation::token() const {
  if (nvlinks > 0 && pcie != pcie_relation::self) return fmt::format("NV{}", nvlinks);
  return std::string(to_string(pcie));
}

result<pair_relation> parse_relation_token(std::string_view token) {
  static constexpr std::array<std::pair<std::string_view, pcie_relation>, 6> names{{
      {"X", pcie_relation::self},
      {"PIX", pcie_relation::pix},
      {"PXB", pcie_relation::pxb},
      {"PHB", pcie_relation::phb},
      {"NODE", pcie_relation::node},
      {"SYS", pcie_relation::sys},
  }};
  for (const auto& [name, rel] : names) {
    if (token == name) return pair_relation{rel, 0};
  }
  if (token.size() > 2 && token.substr(0, 2) == "NV") {
    unsigned count = 0;
    const auto digits = token.substr(2);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && count >= 1 && count <= 255 &&
        digits.front() != '0') {
      return pair_relation{pcie_relation::unknown, static_cast<std::uint16_t>(count)};
    }
  }
  return make_error(errc::invalid_argument,
                    "unknown topology token '{}' (expected X, NV<n>, PIX, PXB, PHB, NODE or SYS)",
                    token);
}

std::string_view to_string(nccl_path p) noexcept {
  static constexpr std::array<std::string_view, 12> names{"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                                          "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return names[static_cast<std::size_t>(p)];
}

std::string_view to_string(affinity_level level) noexcept {
  switch (level) {
    case affinity_level::gpu: return "gpu";
    case affinity_level::pcie_switch: return "pcie_switch";
    case affinity_level::host_bridge: return "host_bridge";
    case affinity_level::numa_node: return "numa_node";
    case affinity_level::socket: return "socket";
    case affinity_level::node: return "node";
    case affinity_level::nvlink_domain: return "nvlink_domain";
    case affinity_level::rack: return "rack";
    case affinity_level::network_tier: return "network_tier";
    case affinity_level::cluster: return "cluster";
  }
  return "unknown";
}

namespace {

constexpr std::size_t no_vertex = static_cast<std::size_t>(-1);

// Read-only helper over the locality tree of one topology.
class tree_walker {
 public:
  explicit tree_walker(const node_topology& t) : t_(t), depth_(t.vertex_count(), 0) {
    for (std::size_t v = 1; v < t.vertex_count(); ++v) {
      depth_[v] = depth_[parent(v)] + 1;  // parents precede children (builder order)
    }
    numa_count_.assign(t.vertex_count(), 0);
    for (std::size_t v = 1; v < t.vertex_count(); ++v) {
      if (kind(v) != vertex_kind::numa_node) continue;
      for (std::size_t a = parent(v);; a = parent(a)) {
        ++numa_count_[a];
        if (a == 0) break;
      }
    }
  }

  [[nodiscard]] std::size_t parent(std::size_t v) const {
    return t_.vertex(vertex_id(static_cast<std::uint32_t>(v))).parent.index();
  }
  [[nodiscard]] vertex_kind kind(std::size_t v) const { return vtx(v).kind; }
  [[nodiscard]] const topo_vertex& vtx(std::size_t v) const {
    return t_.vertex(vertex_id(static_cast<std::uint32_t>(v)));
  }
  [[nodiscard]] std::size_t lca(std::size_t a, std::size_t b) const {
    while (depth_[a] > depth_[b]) a = parent(a);
    while (depth_[b] > depth_[a]) b = parent(b);
    while (a != b) {
      a = parent(a);
      b = parent(b);
    }
    return a;
  }
  // Returns the nearest ancestor (or self) of kind `k`, or no_vertex.
  [[nodiscard]] std::size_t ancestor_of_kind(std::size_t v, vertex_kind k) const {
    for (std::size_t a = v;; a = parent(a)) {
      if (kind(a) == k) return a;
      if (a == 0) return no_vertex;
    }
  }
  [[nodiscard]] std::size_t numa_below(std::size_t v) const { return numa_count_[v]; }

  [[nodiscard]] pcie_relation relation(std::size_t a, std::size_t b) const {
    if (a == b) return pcie_relation::self;
    const std::size_t l = lca(a, b);
    switch (kind(l)) {
      case vertex_kind::pcie_switch:
        return parent(a) == l && parent(b) == l ? pcie_relation::pix : pcie_relation::pxb;
      case vertex_kind::host_bridge: return pcie_relation::phb;
      case vertex_kind::numa_node: return pcie_relation::node;
      case vertex_kind::package:
      case vertex_kind::machine:
        return numa_below(l) > 1 ? pcie_relation::sys : pcie_relation::node;
      default: return pcie_relation::unknown;
    }
  }

 private:
  const node_topology& t_;
  std::vector<std::size_t> depth_;
  std::vector<std::size_t> numa_count_;
};

// NCCL's app-level NVLink bandwidth per link (MB/s) by compute capability, else by generation.
std::int64_t nccl_nvlink_mb_s(const topo_vertex& gpu, unsigned generation) {
  if (auto spec = find_gpu_spec(gpu.model)) {
    switch (spec->compute_capability) {
      case 60: return 18000;
      case 70: return 20000;
      case 80: return 20000;
      case 86: return 12000;
      case 90: return 20600;
      case 100: return 40100;
      default: break;
    }
  }
  switch (generation) {
    case 1: return 18000;
    case 2:
    case 3: return 20000;
    case 4: return 20600;
    case 5: return 40100;
    default: return 20000;
  }
}

// NCCL's PCIe bandwidth: width * speed / 80 GB/s with speed per lane in 100 Mb/s units.
std::int64_t nccl_pcie_mb_s(const topo_link& l) {
  static constexpr std::array<std::int64_t, 7> speed{0, 15, 30, 60, 120, 240, 480};
  if (l.generation == 0 || l.generation >= speed.size() || l.width == 0) return 12000;  // PCI_BW
  return static_cast<std::int64_t>(l.width) * speed[l.generation] * 1000 / 80;
}

struct nvlink_tally {
  std::uint16_t count = 0;
  std::int64_t bandwidth = 0;
  unsigned generation = 0;
};

}  // namespace

node_views::node_views(const node_topology& t) {
  const tree_walker tree(t);
  const auto gpus = t.gpus();
  const auto nics = t.nics();
  gpu_count_ = gpus.size();
  endpoints_.assign(gpus.begin(), gpus.end());
  endpoints_.insert(endpoints_.end(), nics.begin(), nics.end());
  const std::size_t n = endpoints_.size();
  const std::size_t g = gpu_count_;

  // Direct GPU-GPU NVLinks, and each GPU's links into each NVSwitch fabric.
  std::vector<std::size_t> gpu_slot(t.vertex_count(), no_vertex);
  for (std::size_t i = 0; i < g; ++i) gpu_slot[gpus[i].index()] = i;
  std::vector<nvlink_tally> direct(g * g);
  std::vector<std::map<std::uint32_t, nvlink_tally>> fabric(g);
  std::vector<std::array<std::size_t, 2>> smp;  // package pairs
  std::map<std::pair<std::size_t, std::size_t>, std::int64_t> smp_bw;
  for (const auto& l : t.links()) {
    const auto& va = t.vertex(l.a);
    const auto& vb = t.vertex(l.b);
    if (l.link.kind == link_kind::smp) {
      const std::pair<std::size_t, std::size_t> key = std::minmax(l.a.index(), l.b.index());
      smp_bw[key] = std::max(smp_bw[key], l.link.bandwidth_mb_s);
      continue;
    }
    if (l.link.kind != link_kind::nvlink) continue;
    auto add = [](nvlink_tally& tally, const topo_link& link) {
      tally.count = static_cast<std::uint16_t>(tally.count + link.count);
      tally.bandwidth += link.bandwidth_mb_s;
      tally.generation = std::max<unsigned>(tally.generation, link.generation);
    };
    if (va.kind == vertex_kind::gpu && vb.kind == vertex_kind::gpu) {
      const std::size_t i = gpu_slot[l.a.index()];
      const std::size_t j = gpu_slot[l.b.index()];
      add(direct[i * g + j], l.link);
      add(direct[j * g + i], l.link);
    } else if (va.kind == vertex_kind::gpu && vb.kind == vertex_kind::nvswitch) {
      add(fabric[gpu_slot[l.a.index()]][vb.fabric], l.link);
    } else if (vb.kind == vertex_kind::gpu && va.kind == vertex_kind::nvswitch) {
      add(fabric[gpu_slot[l.b.index()]][va.fabric], l.link);
    }
  }
  // Pair NVLink count and bandwidth: direct links plus, per fabric, the smaller side.
  std::vector<nvlink_tally> pair_nv(g * g);
  for (std::size_t i = 0; i < g; ++i) {
    for (std::size_t j = 0; j < g; ++j) {
      if (i == j) continue;
      nvlink_tally tally = direct[i * g + j];
      for (const auto& [f, a] : fabric[i]) {
        auto it = fabric[j].find(f);
        if (it == fabric[j].end()) continue;
        tally.count = static_cast<std::uint16_t>(tally.count + std::min(a.count, it->second.count));
        tally.bandwidth += std::min(a.bandwidth, it->second.bandwidth);
        tally.generation =
            std::max(tally.generation, std::max(a.generation, it->second.generation));
      }
      pair_nv[i * g + j] = tally;
    }
  }

  // NVLink peers of each GPU, for the NVB search (keeps it O(g^2 * degree), not O(g^3)).
  std::vector<std::vector<std::size_t>> nv_peers(g);
  for (std::size_t i = 0; i < g; ++i) {
    for (std::size_t k = 0; k < g; ++k) {
      if (pair_nv[i * g + k].count > 0) nv_peers[i].push_back(k);
    }
  }

  // Relations over all endpoints.
  relations_.resize(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      pair_relation r;
      r.pcie = tree.relation(endpoints_[i].index(), endpoints_[j].index());
      if (i < g && j < g && i != j) r.nvlinks = pair_nv[i * g + j].count;
      relations_[i * n + j] = r;
    }
  }

  // NUMA and socket of each GPU: the reported affinity wins, else the tree position.
  gpu_numa_.assign(g, -1);
  gpu_socket_.assign(g, -1);
  std::vector<std::size_t> numa_vertex(g, no_vertex);
  std::vector<std::size_t> socket_vertex(g, no_vertex);
  for (std::size_t i = 0; i < g; ++i) {
    const std::size_t v = gpus[i].index();
    const std::size_t tree_numa = tree.ancestor_of_kind(v, vertex_kind::numa_node);
    std::int32_t numa = t.vertex(gpus[i]).numa;
    if (numa < 0 && tree_numa != no_vertex) numa = tree.vtx(tree_numa).index;
    gpu_numa_[i] = numa;
    if (tree_numa != no_vertex && tree.vtx(tree_numa).index == numa) {
      numa_vertex[i] = tree_numa;
    } else if (numa >= 0) {
      for (std::size_t u = 1; u < t.vertex_count(); ++u) {
        if (tree.kind(u) == vertex_kind::numa_node && tree.vtx(u).index == numa) {
          numa_vertex[i] = u;
          break;
        }
      }
    }
    std::size_t& pkg = socket_vertex[i];
    pkg = tree.ancestor_of_kind(v, vertex_kind::package);
    if (pkg == no_vertex && numa_vertex[i] != no_vertex) {
      pkg = tree.ancestor_of_kind(numa_vertex[i], vertex_kind::package);
    }
    if (pkg != no_vertex) gpu_socket_[i] = tree.vtx(pkg).index;
  }

  // PCIe/SMP tree path between two vertices: bottleneck of the nominal and NCCL bandwidths.
  auto tree_path = [&](std::size_t gpu_a, std::size_t gpu_b) {
    const std::size_t a = gpus[gpu_a].index();
    const std::size_t b = gpus[gpu_b].index();
    std::int64_t nominal = 0;
    std::int64_t nccl = 0;
    auto take = [](std::int64_t& acc, std::int64_t bw) {
      if (bw > 0) acc = acc == 0 ? bw : std::min(acc, bw);
    };
    const std::size_t l = tree.lca(a, b);
    for (std::size_t side : {a, b}) {
      for (std::size_t v = side; v != l; v = tree.parent(v)) {
        const auto& link = t.uplink(vertex_id(static_cast<std::uint32_t>(v)));
        if (link.kind != link_kind::pcie) continue;
        take(nominal, link.bandwidth_mb_s);
        take(nccl, nccl_pcie_mb_s(link));
      }
    }
    const std::size_t pa = socket_vertex[gpu_a];
    const std::size_t pb = socket_vertex[gpu_b];
    if (pa != no_vertex && pb != no_vertex && pa != pb) {
      auto it = smp_bw.find(std::minmax(pa, pb));
      if (it != smp_bw.end()) {
        take(nominal, it->second);
        take(nccl, it->second);
      }
    }
    if (nccl == 0) nccl = 12000;
    return std::pair{nominal, nccl};
  };

  bandwidth_ =
      bandwidth_matrix_type::Zero(static_cast<Eigen::Index>(g), static_cast<Eigen::Index>(g));
  paths_.assign(g * g, nccl_path::loc);
  nccl_bandwidth_.assign(g * g, 0);
  for (std::size_t i = 0; i < g; ++i) {
    const auto& gi = t.vertex(gpus[i]);
    for (std::size_t j = 0; j < g; ++j) {
      if (i == j) {
        nccl_bandwidth_[i * g + j] = 5000000;  // LOC_BW 5000 GB/s
        continue;
      }
      const auto& nv = pair_nv[i * g + j];
      const pcie_relation rel = relations_[i * n + j].pcie;
      const auto [pcie_nominal, pcie_nccl] = rel == pcie_relation::unknown
                                                 ? std::pair<std::int64_t, std::int64_t>{0, 0}
                                                 : tree_path(i, j);
      bandwidth_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
          std::max(nv.bandwidth, pcie_nominal);
      nccl_path type = nccl_path::dis;
      std::int64_t bw = 0;
      if (nv.count > 0) {
        type = nccl_path::nvl;
        bw = nv.count * nccl_nvlink_mb_s(gi, nv.generation);
      } else {
        // NVB: NVLink through one intermediate GPU; the better of the two hops' bottleneck.
        for (std::size_t k : nv_peers[i]) {
          const auto& a = pair_nv[i * g + k];
          const auto& b = pair_nv[k * g + j];
          if (k == i || k == j || a.count == 0 || b.count == 0) continue;
          const std::int64_t hop = std::min(a.count * nccl_nvlink_mb_s(gi, a.generation),
                                            b.count * nccl_nvlink_mb_s(gi, b.generation));
          if (type != nccl_path::nvb || hop > bw) {
            type = nccl_path::nvb;
            bw = hop;
          }
        }
        if (type != nccl_path::nvb) {
          switch (rel) {
            case pcie_relation::pix: type = nccl_path::pix; break;
            case pcie_relation::pxb: type = nccl_path::pxb; break;
            case pcie_relation::phb:
            case pcie_relation::node: type = nccl_path::phb; break;
            case pcie_relation::sys: type = nccl_path::sys; break;
            default: type = nccl_path::dis; break;
          }
          bw = type == nccl_path::dis ? 0 : pcie_nccl;
        }
      }
      paths_[i * g + j] = type;
      nccl_bandwidth_[i * g + j] = bw;
    }
  }

  // Affinity tree. Each GPU's chain: tree ancestors below the machine, then (if the tree does not
  // place it under its NUMA node) the NUMA node of its affinity and that node's package.
  std::vector<std::vector<std::size_t>> chains(g);
  for (std::size_t i = 0; i < g; ++i) {
    auto& chain = chains[i];
    bool has_numa = false;
    for (std::size_t a = tree.parent(gpus[i].index()); a != 0; a = tree.parent(a)) {
      chain.push_back(a);
      has_numa = has_numa || tree.kind(a) == vertex_kind::numa_node;
    }
    if (!has_numa && numa_vertex[i] != no_vertex) {
      for (std::size_t a = numa_vertex[i]; a != 0; a = tree.parent(a)) chain.push_back(a);
    }
  }
  std::map<std::size_t, std::vector<std::uint32_t>> members;  // vertex -> GPUs (ascending)
  for (std::size_t i = 0; i < g; ++i) {
    for (std::size_t a : chains[i]) members[a].push_back(static_cast<std::uint32_t>(i));
  }
  auto level_of = [&](std::size_t v) {
    switch (tree.kind(v)) {
      case vertex_kind::pcie_switch: return affinity_level::pcie_switch;
      case vertex_kind::host_bridge: return affinity_level::host_bridge;
      case vertex_kind::numa_node: return affinity_level::numa_node;
      default: return affinity_level::socket;
    }
  };
  // Collapse: keep a chain vertex only if it groups more GPUs than the one kept below it and fewer
  // than the whole node, and if it contains that one (laminar); a run of equal sets keeps its
  // lowest vertex, labelled socket if the run reaches a package.
  struct kept {
    std::size_t vertex;
    affinity_level level;
  };
  std::vector<std::vector<kept>> collapsed(g);
  for (std::size_t i = 0; i < g; ++i) {
    const std::vector<std::uint32_t>* below = nullptr;
    std::vector<std::uint32_t> self{static_cast<std::uint32_t>(i)};
    below = &self;
    for (std::size_t a : chains[i]) {
      const auto& set = members[a];
      if (!std::includes(set.begin(), set.end(), below->begin(), below->end())) continue;
      if (set == *below) {
        if (!collapsed[i].empty() && tree.kind(a) == vertex_kind::package &&
            collapsed[i].back().vertex != a) {
          collapsed[i].back().level = affinity_level::socket;
        }
        continue;
      }
      if (set.size() == g) break;
      collapsed[i].push_back(kept{a, level_of(a)});
      below = &set;
    }
  }
  // Build groups: the node, then every kept vertex, then the GPU leaves; renumber breadth-first.
  struct proto {
    affinity_level level;
    std::size_t vertex;
    std::vector<std::uint32_t> gpus;
    std::size_t parent;
    std::vector<std::size_t> children;
  };
  std::vector<proto> protos;
  std::map<std::size_t, std::size_t> proto_of_vertex;
  std::vector<std::uint32_t> all(g);
  for (std::size_t i = 0; i < g; ++i) all[i] = static_cast<std::uint32_t>(i);
  protos.push_back(proto{affinity_level::node, 0, all, 0, {}});
  for (std::size_t i = 0; i < g; ++i) {
    std::size_t child = protos.size();
    protos.push_back(
        proto{affinity_level::gpu, gpus[i].index(), {static_cast<std::uint32_t>(i)}, 0, {}});
    gpu_leaf_.push_back(0);  // fixed after renumbering
    for (const auto& k : collapsed[i]) {
      auto [it, inserted] = proto_of_vertex.try_emplace(k.vertex, protos.size());
      if (inserted) protos.push_back(proto{k.level, k.vertex, members[k.vertex], 0, {}});
      protos[child].parent = it->second;
      child = it->second;
    }
    protos[child].parent = 0;
  }
  for (std::size_t p = 1; p < protos.size(); ++p) {
    auto& siblings = protos[protos[p].parent].children;
    if (std::find(siblings.begin(), siblings.end(), p) == siblings.end()) siblings.push_back(p);
  }
  for (auto& p : protos) {
    std::sort(p.children.begin(), p.children.end(), [&](std::size_t a, std::size_t b) {
      return protos[a].gpus.front() < protos[b].gpus.front();
    });
  }
  std::vector<std::size_t> order{0};
  std::vector<std::uint32_t> new_index(protos.size(), 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    new_index[order[k]] = static_cast<std::uint32_t>(k);
    for (std::size_t c : protos[order[k]].children) order.push_back(c);
  }
  groups_.resize(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& p = protos[order[k]];
    auto& grp = groups_[k];
    grp.level = p.level;
    grp.parent = new_index[p.parent];
    grp.gpus = p.gpus;
    grp.vertex = vertex_id(static_cast<std::uint32_t>(p.vertex));
    for (std::size_t c : p.children) grp.children.push_back(new_index[c]);
    if (p.level == affinity_level::gpu) gpu_leaf_[p.gpus.front()] = static_cast<std::uint32_t>(k);
  }
}

bool operator==(const node_views& a, const node_views& b) {
  return a.gpu_count_ == b.gpu_count_ && a.endpoints_ == b.endpoints_ &&
         a.relations_ == b.relations_ && a.bandwidth_.rows() == b.bandwidth_.rows() &&
         a.bandwidth_.cols() == b.bandwidth_.cols() && a.bandwidth_ == b.bandwidth_ &&
         a.paths_ == b.paths_ && a.nccl_bandwidth_ == b.nccl_bandwidth_ &&
         a.gpu_numa_ == b.gpu_numa_ && a.gpu_socket_ == b.gpu_socket_ && a.groups_ == b.groups_ &&
         a.gpu_leaf_ == b.gpu_leaf_;
}

}  // namespace hetsched
