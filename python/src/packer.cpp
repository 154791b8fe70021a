// SPDX-License-Identifier: MIT
// Bindings of the affinity packer (go-gpuallocator scores, exact best block, preferences,
// collective bandwidths) and of gang placement over a cluster topology.
#include <hetsched/policies/affinity_packer.hpp>
#include <hetsched/policies/gang_placement.hpp>
#include <hetsched/topology/graph.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

constexpr std::string_view metric_names[] = {"link_count", "bandwidth"};
constexpr std::string_view source_names[] = {"links", "nccl"};
constexpr std::string_view mode_names[] = {"lexmax", "compat"};
constexpr std::string_view status_names[] = {"allocated", "insufficient_gpus", "too_many_required",
                                             "required_unavailable", "padded_block"};
constexpr std::string_view locality_names[] = {"consolidate", "spread"};
constexpr std::string_view pcie_names[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
constexpr std::string_view defer_names[] = {"insufficient_capacity", "quota_exceeded",
                                            "topology_unsatisfiable", "fragmented"};

pair_terms terms_of(std::string_view metric, std::string_view source, std::int64_t same_numa) {
  return pair_terms{parse_enum<pair_metric>(metric, metric_names, "metric"),
                    parse_enum<bandwidth_source>(source, source_names, "source"), same_numa};
}

pair_score_matrix matrix_from_rows(py::handle obj, const char* what) {
  std::vector<std::vector<std::int64_t>> rows;
  try {
    rows = obj.cast<std::vector<std::vector<std::int64_t>>>();
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument,
          fmt::format("{}: expected a NodeTopology or a square list of int lists", what));
  }
  return unwrap(pair_score_matrix::from_rows(rows));
}

// A NodeTopology (scored under `terms`) or an explicit score matrix.
pair_score_matrix scores_arg(py::handle obj, const pair_terms& terms) {
  if (py::isinstance<node_topology>(obj))
    return pair_score_matrix::from_views(obj.cast<const node_topology&>().views(), terms);
  return matrix_from_rows(obj, "scores");
}

// A NodeTopology (its bandwidths under `source`) or an explicit bandwidth matrix.
pair_score_matrix bandwidths_arg(py::handle obj, std::string_view source) {
  if (py::isinstance<node_topology>(obj))
    return pair_score_matrix::bandwidths(
        obj.cast<const node_topology&>().views(),
        parse_enum<bandwidth_source>(source, source_names, "source"));
  return matrix_from_rows(obj, "bandwidths");
}

py::list matrix_to_list(const pair_score_matrix& m) {
  return matrix_to_py(m.size(), [&](std::size_t i, std::size_t j) { return m.score(i, j); });
}

py::dict answer_to_py(const packer_answer& a) {
  py::dict d;
  d["status"] = std::string(status_names[static_cast<std::size_t>(a.status)]);
  d["gpus"] = a.gpus;
  d["block_score"] = a.block_score;
  d["partition_score"] = a.partition_score;
  return d;
}

gang_request gang_of(std::uint32_t tasks, std::uint32_t gpus_per_task, std::string_view locality,
                     std::string_view max_level, std::uint32_t max_tier) {
  gang_request r;
  r.tasks = tasks;
  r.gpus_per_task = gpus_per_task;
  r.locality = parse_enum<locality_sensitivity>(locality, locality_names, "locality");
  r.max_level = level_from(max_level, "max_level");
  r.max_tier = max_tier;
  return r;
}

std::vector<std::vector<std::uint32_t>> free_arg(const gang_placer& p, const py::object& free) {
  if (!free.is_none()) {
    try {
      return free.cast<std::vector<std::vector<std::uint32_t>>>();
    } catch (const py::cast_error&) {
      raise(errc::invalid_argument, "free_gpus: expected one list of GPU indices per node");
    }
  }
  std::vector<std::vector<std::uint32_t>> out;
  for (const cluster_node& n : p.cluster().nodes()) {
    std::vector<std::uint32_t> all(n.gpu_count);
    for (std::uint32_t i = 0; i < n.gpu_count; ++i) all[i] = i;
    out.push_back(std::move(all));
  }
  return out;
}

py::dict gang_to_py(const gang_placement& g) {
  py::dict d;
  d["placed"] = g.placed();
  d["deferred"] =
      g.deferred
          ? py::object(py::str(std::string(defer_names[static_cast<std::size_t>(*g.deferred)])))
          : py::none();
  py::list tasks;
  for (const gang_task& t : g.tasks) {
    py::dict r;
    r["node"] = t.node.value();
    r["gpus"] = t.gpus;
    std::vector<std::uint32_t> devices;
    for (const device_id dev : t.devices) devices.push_back(dev.value());
    r["devices"] = devices;
    tasks.append(r);
  }
  d["tasks"] = tasks;
  d["group"] = g.group;
  d["level"] = std::string(to_string(g.level));
  d["nodes_used"] = g.nodes_used;
  return d;
}

void bind_packer_state(py::module_& m) {
  py::class_<packer_state>(m, "PackerState",
                           "The free GPUs of one node carried between allocations "
                           "(go-gpuallocator's Allocator).")
      .def(py::init([](const py::object& scores, const py::object& available,
                       std::string_view metric, std::string_view source, std::int64_t same_numa) {
             pair_score_matrix s = scores_arg(scores, terms_of(metric, source, same_numa));
             if (available.is_none()) return packer_state(std::move(s));
             return unwrap(packer_state::make(std::move(s), u32_list(available, "available")));
           }),
           py::arg("scores"), py::arg("available") = py::none(), py::arg("metric") = "link_count",
           py::arg("source") = "links", py::arg("same_numa") = 0,
           "Makes the state of a node (NodeTopology or score matrix) with `available` GPUs free "
           "(all\nby default).")
      .def_property_readonly(
          "available",
          [](const packer_state& s) {
            return std::vector<std::uint32_t>(s.available().begin(), s.available().end());
          },
          "The free GPUs, ascending.")
      .def(
          "allocate",
          [](packer_state& s, std::size_t size, const py::object& required, std::string_view mode) {
            return answer_to_py(
                unwrap(s.allocate(size, u32_list(required, "required"),
                                  parse_enum<packer_mode>(mode, mode_names, "mode"))));
          },
          py::arg("size"), py::arg("required") = py::none(), py::arg("mode") = "lexmax",
          "Allocates the best block of `size` GPUs and removes it from the free GPUs; returns\n"
          "{status, gpus, block_score, partition_score}.")
      .def(
          "release",
          [](packer_state& s, const py::object& gpus) { check(s.release(u32_list(gpus, "gpus"))); },
          py::arg("gpus"), "Returns `gpus` to the free GPUs.");
}

void bind_gang(py::module_& m) {
  py::class_<gang_placer>(
      m, "GangPlacer",
      "Places multi-node gangs (tasks of whole GPUs) on a ClusterTopology: the lowest group of\n"
      "the affinity tree that can hold the gang, then the best-connected GPUs per node.")
      .def(py::init([](const cluster_topology& c, std::string_view metric, std::string_view source,
                       std::int64_t same_numa) {
             return gang_placer::make(c, terms_of(metric, source, same_numa));
           }),
           py::arg("cluster"), py::arg("metric") = "link_count", py::arg("source") = "links",
           py::arg("same_numa") = 0, "Makes a placer for ClusterTopology `cluster`.")
      .def(
          "place",
          [](const gang_placer& p, std::uint32_t tasks, std::uint32_t gpus_per_task,
             const py::object& free, std::string_view locality, std::string_view max_level,
             std::uint32_t max_tier) {
            return gang_to_py(unwrap(p.place(
                free_arg(p, free), gang_of(tasks, gpus_per_task, locality, max_level, max_tier))));
          },
          py::arg("tasks"), py::arg("gpus_per_task"), py::arg("free_gpus") = py::none(),
          py::arg("locality") = "consolidate", py::arg("max_level") = "cluster",
          py::arg("max_tier") = 0,
          "Returns {placed, deferred, tasks: [{node, gpus, devices}], group, level, nodes_used} "
          "for a gang\ngiven each node's free GPU indices (`free_gpus`, all free by default).")
      .def(
          "node_scores",
          [](const gang_placer& p, std::uint32_t tasks, std::uint32_t gpus_per_task,
             const py::object& free, std::string_view locality, std::string_view max_level,
             std::uint32_t max_tier) {
            return unwrap(p.node_scores(
                free_arg(p, free), gang_of(tasks, gpus_per_task, locality, max_level, max_tier)));
          },
          py::arg("tasks"), py::arg("gpus_per_task"), py::arg("free_gpus") = py::none(),
          py::arg("locality") = "consolidate", py::arg("max_level") = "cluster",
          py::arg("max_tier") = 0, "Returns every node's score 0..100 for one task of the gang.");
}

}  // namespace

void bind_packer(py::module_& m) {
  m.def(
      "pair_scores",
      [](const node_topology& t, std::string_view metric, std::string_view source,
         std::int64_t same_numa) {
        return matrix_to_list(
            pair_score_matrix::from_views(t.views(), terms_of(metric, source, same_numa)));
      },
      py::arg("topology"), py::arg("metric") = "link_count", py::arg("source") = "links",
      py::arg("same_numa") = 0,
      "Returns the GPU pair score matrix of a NodeTopology (go-gpuallocator link counts, or\n"
      "bandwidth-first scores with metric='bandwidth').");
  m.def(
      "packer_allocate",
      [](const py::object& scores, const py::object& available, std::size_t size,
         const py::object& required, std::string_view mode, const py::object& locality,
         const py::object& gpu_bonus, std::string_view metric, std::string_view source,
         std::int64_t same_numa) {
        const pair_score_matrix s = scores_arg(scores, terms_of(metric, source, same_numa));
        const auto avail = u32_list(available, "available");
        const auto req = u32_list(required, "required");
        if (locality.is_none() && gpu_bonus.is_none())
          return answer_to_py(unwrap(
              allocate(s, avail, req, size, parse_enum<packer_mode>(mode, mode_names, "mode"))));
        placement_preferences prefs;
        if (!locality.is_none())
          prefs.locality = parse_enum<locality_sensitivity>(locality.cast<std::string>(),
                                                            locality_names, "locality");
        if (!gpu_bonus.is_none()) prefs.gpu_bonus = gpu_bonus.cast<std::vector<std::int64_t>>();
        return answer_to_py(unwrap(allocate_with(s, avail, req, size, prefs)));
      },
      py::arg("scores"), py::arg("available"), py::arg("size"), py::arg("required") = py::none(),
      py::arg("mode") = "lexmax", py::arg("locality") = py::none(),
      py::arg("gpu_bonus") = py::none(), py::arg("metric") = "link_count",
      py::arg("source") = "links", py::arg("same_numa") = 0,
      "Returns the best block of `size` GPUs out of `available` holding `required` under "
      "`scores`\n(a NodeTopology or a matrix): {status, gpus, block_score, partition_score}. "
      "With `locality`\n('consolidate'/'spread') or `gpu_bonus`, uses the preference-aware "
      "variant.");
  m.def(
      "packer_node_score",
      [](const py::object& scores, const py::object& gpus) {
        const pair_score_matrix s = scores_arg(scores, pair_terms{});
        const auto g = u32_list(gpus, "gpus");
        for (const std::uint32_t x : g)
          if (x >= s.size()) raise(errc::out_of_range, fmt::format("gpus: GPU {} out of range", x));
        return node_score(s, g);
      },
      py::arg("scores"), py::arg("gpus"),
      "Returns the gputopologyaware node score 0..100 of GPU set `gpus`.");
  m.def(
      "collective_bandwidth",
      [](const py::object& bw, const py::object& gpus, std::string_view source) {
        const auto c =
            unwrap(collective_bandwidth_of(bandwidths_arg(bw, source), u32_list(gpus, "gpus")));
        py::dict d;
        d["ring_mb_s"] = c.ring_mb_s;
        d["tree_mb_s"] = c.tree_mb_s;
        d["pair_min_mb_s"] = c.pair_min_mb_s;
        return d;
      },
      py::arg("bandwidths"), py::arg("gpus"), py::arg("source") = "links",
      "Returns {ring_mb_s, tree_mb_s, pair_min_mb_s}: the bottleneck bandwidths of GPU set "
      "`gpus`\n(bandwidths from a NodeTopology or a matrix in MB/s).");
  m.def(
      "bandwidth_node_score",
      [](const py::object& bw, const py::object& gpus, std::string_view source,
         std::int64_t reference_mb_s) {
        return unwrap(bandwidth_node_score(bandwidths_arg(bw, source), u32_list(gpus, "gpus"),
                                           reference_mb_s));
      },
      py::arg("bandwidths"), py::arg("gpus"), py::arg("source") = "links",
      py::arg("reference_mb_s") = reference_bandwidth_mb_s,
      "Returns the bandwidth node score 0..100 of `gpus` (ring bandwidth over the reference).");
  m.def(
      "numa_bonus",
      [](const node_topology& t, std::int32_t numa, std::int64_t weight) {
        return numa_bonus(t.views(), numa, weight);
      },
      py::arg("topology"), py::arg("numa"), py::arg("weight"),
      "Returns a per-GPU bonus of `weight` for GPUs local to NUMA node `numa`.");
  m.def(
      "nic_bonus",
      [](const node_topology& t, std::int64_t weight, std::string_view level) {
        return nic_bonus(t.views(), weight, parse_enum<pcie_relation>(level, pcie_names, "level"));
      },
      py::arg("topology"), py::arg("weight"), py::arg("level") = "PXB",
      "Returns a per-GPU bonus of `weight` for GPUs with a NIC at PCIe `level` or closer.");
  bind_packer_state(m);
  bind_gang(m);
}

}  // namespace hetsched::python
