// SPDX-License-Identifier: MIT
// Bindings of the topology layer: node templates, importers (nvidia-smi, NCCL XML, JSON), the
// derived views (relations, bandwidths, NCCL paths, affinity groups) and cluster topologies.
#include <memory>

#include <hetsched/topology/cluster_builder.hpp>
#include <hetsched/topology/graph.hpp>
#include <hetsched/topology/import.hpp>
#include <hetsched/topology/json.hpp>
#include <hetsched/topology/templates.hpp>
#include <hetsched/topology/views.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

constexpr std::string_view level_names[] = {
    "gpu",  "pcie_switch",   "host_bridge", "numa_node",    "socket",
    "node", "nvlink_domain", "rack",        "network_tier", "cluster"};
constexpr std::string_view network_names[] = {"internal", "pcie",       "nvlink",
                                              "smp",      "infiniband", "ethernet"};

py::dict link_to_py(const topo_link& l) {
  py::dict d;
  d["kind"] = std::string(to_string(l.kind));
  d["count"] = l.count;
  d["generation"] = l.generation;
  d["width"] = l.width;
  d["bandwidth_mb_s"] = l.bandwidth_mb_s;
  return d;
}

py::list vertex_rows(const node_topology& t) {
  py::list rows;
  for (std::uint32_t i = 0; i < t.vertex_count(); ++i) {
    const topo_vertex& v = t.vertex(vertex_id(i));
    py::dict r;
    r["id"] = i;
    r["kind"] = std::string(to_string(v.kind));
    r["name"] = v.name;
    r["parent"] = v.parent.valid() ? py::object(py::int_(v.parent.value())) : py::none();
    r["index"] = v.index;
    r["pci_bus_id"] = v.pci_bus_id;
    r["model"] = std::string(v.model.name());
    r["memory_mib"] = v.memory_mib;
    r["numa"] = v.numa;
    r["cpuset"] = v.cpuset;
    rows.append(r);
  }
  return rows;
}

py::list link_rows(const node_topology& t) {
  py::list rows;
  for (const link_ref& l : t.links()) {
    py::dict r = link_to_py(l.link);
    r["a"] = l.a.value();
    r["b"] = l.b.value();
    r["a_name"] = t.vertex(l.a).name;
    r["b_name"] = t.vertex(l.b).name;
    rows.append(r);
  }
  return rows;
}

py::list endpoint_names(const node_topology& t) {
  py::list names;
  for (const vertex_id v : t.views().endpoints()) names.append(t.vertex(v).name);
  return names;
}

py::list group_rows(const node_views& v) {
  py::list rows;
  const auto groups = v.affinity_groups();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const affinity_group& g = groups[i];
    py::dict r;
    r["index"] = i;
    r["level"] = std::string(to_string(g.level));
    r["parent"] = g.parent;
    r["children"] = g.children;
    r["gpus"] = g.gpus;
    r["vertex"] = g.vertex.valid() ? py::object(py::int_(g.vertex.value())) : py::none();
    rows.append(r);
  }
  return rows;
}

oversubscription ratio_from(py::handle obj, std::string_view what) {
  if (obj.is_none()) return {};
  try {
    const auto p = obj.cast<std::pair<std::uint32_t, std::uint32_t>>();
    return oversubscription{p.first, p.second};
  } catch (const py::cast_error&) {
    raise(errc::invalid_argument, fmt::format("{}: expected (down, up)", what));
  }
}

cluster_topology build_cluster(const std::string& name, const py::iterable& nodes,
                               std::size_t nodes_per_rack, const py::object& rack_ratio,
                               std::string_view rack_network, const py::object& tiers,
                               std::size_t nodes_per_domain, std::int64_t domain_gpu_mb_s) {
  cluster_builder b(name);
  for_each_item(nodes, "nodes", [&](py::handle item, const std::string& what) {
    fields f(item, what);
    const py::object tpl = f.object("template");
    std::size_t count = 1;
    f.get("count", count);
    std::string prefix;
    f.get("prefix", prefix);
    std::int64_t uplink = -1;
    f.get("uplink_mb_s", uplink);
    f.finish();
    if (py::isinstance<node_topology>(tpl)) {
      b.add_nodes(tpl.cast<const node_topology&>(), count, prefix, uplink);
    } else if (py::isinstance<py::str>(tpl)) {
      b.add_nodes(template_from(tpl.cast<std::string>(), f.path("template")), count, prefix,
                  uplink);
    } else {
      raise(errc::invalid_argument,
            fmt::format("{}: expected a template name or a NodeTopology", f.path("template")));
    }
  });
  if (nodes_per_rack > 0)
    b.racks(nodes_per_rack, ratio_from(rack_ratio, "rack_oversubscription"),
            parse_enum<link_kind>(rack_network, network_names, "rack_network"));
  for_each_item(tiers, "tiers", [&](py::handle item, const std::string& what) {
    fields f(item, what);
    const auto tier_name = f.required<std::string>("name");
    const auto members = f.required<std::size_t>("members");
    const oversubscription r = ratio_from(f.object("oversubscription"), f.path("oversubscription"));
    f.finish();
    b.tier(tier_name, members, r);
  });
  if (nodes_per_domain > 0) b.nvlink_domains(nodes_per_domain, domain_gpu_mb_s);
  return unwrap(b.build());
}

void bind_node_topology(py::module_& m) {
  py::class_<node_topology>(
      m, "NodeTopology",
      "The immutable hardware topology of one server (GPUs, NVLinks, PCIe tree, NUMA, NICs)\n"
      "with derived views: nvidia-smi relation tokens, bandwidths, NCCL paths, affinity groups.")
      .def_property_readonly("name", &node_topology::name, "The topology's name.")
      .def_property_readonly(
          "gpu_count", [](const node_topology& t) { return t.views().gpu_count(); },
          "Number of GPUs.")
      .def_property_readonly(
          "nic_count", [](const node_topology& t) { return t.views().nic_count(); },
          "Number of NICs.")
      .def("vertices", &vertex_rows,
           "Returns one row per vertex: {id, kind, name, parent, index, pci_bus_id, model, "
           "memory_mib, numa, cpuset}.")
      .def("links", &link_rows,
           "Returns one row per link (tree and extra links): {a, b, a_name, b_name, kind, "
           "count,\ngeneration, width, bandwidth_mb_s}.")
      .def("endpoints", &endpoint_names,
           "Returns the endpoint names (GPUs then NICs), the order of relations() and "
           "bandwidths().")
      .def(
          "relations",
          [](const node_topology& t) {
            const node_views& v = t.views();
            return matrix_to_py(v.endpoints().size(), [&](std::size_t i, std::size_t j) {
              return v.relation(i, j).token();
            });
          },
          "Returns the `nvidia-smi topo -m` token matrix over endpoints ('X', 'NV12', 'PIX', "
          "'SYS', ...).")
      .def(
          "bandwidths",
          [](const node_topology& t) {
            const node_views& v = t.views();
            return matrix_to_py(
                static_cast<std::size_t>(v.bandwidth_matrix().rows()),
                [&](std::size_t i, std::size_t j) { return v.bandwidth_mb_s(i, j); });
          },
          "Returns the pair bandwidth matrix in MB/s over endpoints.")
      .def(
          "nccl_paths",
          [](const node_topology& t) {
            const node_views& v = t.views();
            return matrix_to_py(v.gpu_count(), [&](std::size_t i, std::size_t j) {
              return std::string(to_string(v.path_type(i, j)));
            });
          },
          "Returns NCCL's path type ('NVL', 'PIX', 'SYS', ...) for every GPU pair.")
      .def(
          "nccl_bandwidths",
          [](const node_topology& t) {
            const node_views& v = t.views();
            return matrix_to_py(v.gpu_count(), [&](std::size_t i, std::size_t j) {
              return v.nccl_bandwidth_mb_s(i, j);
            });
          },
          "Returns NCCL's path bandwidth in MB/s for every GPU pair.")
      .def(
          "gpu_numa",
          [](const node_topology& t) {
            std::vector<std::int32_t> out;
            for (std::size_t g = 0; g < t.views().gpu_count(); ++g)
              out.push_back(t.views().gpu_numa(g));
            return out;
          },
          "Returns each GPU's NUMA node (-1 if unknown).")
      .def(
          "gpu_socket",
          [](const node_topology& t) {
            std::vector<std::int32_t> out;
            for (std::size_t g = 0; g < t.views().gpu_count(); ++g)
              out.push_back(t.views().gpu_socket(g));
            return out;
          },
          "Returns each GPU's socket (-1 if unknown).")
      .def(
          "affinity_groups", [](const node_topology& t) { return group_rows(t.views()); },
          "Returns the affinity tree: one row per group {index, level, parent, children, gpus, "
          "vertex}.")
      .def(
          "to_json",
          [](const node_topology& t, bool pretty, bool include_views) {
            return to_json(t, topology_json_options{pretty, include_views});
          },
          py::arg("pretty") = true, py::arg("include_views") = true,
          "Returns the topology as hetsched's JSON document (import_topology_json reads it "
          "back).")
      .def(
          "to_nvidia_smi",
          [](const node_topology& t, bool legend) { return unwrap(to_nvidia_smi_topo(t, legend)); },
          py::arg("legend") = true, "Returns the topology as `nvidia-smi topo -m` text.")
      .def("__eq__",
           [](const node_topology& a, const node_topology& b) {
             return to_json(a, {false, false}) == to_json(b, {false, false});
           })
      .def("__repr__", [](const node_topology& t) {
        return fmt::format("<hetsched.NodeTopology '{}' {} GPUs, {} NICs>", t.name(),
                           t.views().gpu_count(), t.views().nic_count());
      });
}

void bind_cluster_topology(py::module_& m) {
  py::class_<cluster_topology>(
      m, "ClusterTopology",
      "An immutable cluster topology: nodes built from node topologies, grouped into racks,\n"
      "network tiers and NVLink domains (the cluster affinity tree).")
      .def(py::init(&build_cluster), py::arg("name"), py::arg("nodes"),
           py::arg("nodes_per_rack") = 0, py::arg("rack_oversubscription") = py::none(),
           py::arg("rack_network") = "infiniband", py::arg("tiers") = py::none(),
           py::arg("nodes_per_domain") = 0, py::arg("domain_gpu_mb_s") = 0,
           "Builds a cluster: `nodes` is a list of {template: name or NodeTopology, count, "
           "prefix,\nuplink_mb_s}; racks of `nodes_per_rack` (0: none) with oversubscription "
           "(down, up);\n`tiers` a list of {name, members, oversubscription}; NVLink domains of "
           "`nodes_per_domain`.")
      .def_property_readonly("name", &cluster_topology::name, "The cluster's name.")
      .def_property_readonly("node_count", &cluster_topology::node_count, "Number of nodes.")
      .def_property_readonly("gpu_count", &cluster_topology::gpu_count, "Number of GPUs.")
      .def(
          "nodes",
          [](const cluster_topology& c) {
            py::list rows;
            std::uint32_t i = 0;
            for (const cluster_node& n : c.nodes()) {
              py::dict r;
              r["id"] = i++;
              r["name"] = n.name;
              r["template"] = c.templates()[n.template_index].name();
              r["first_gpu"] = n.first_gpu.value();
              r["gpus"] = n.gpu_count;
              r["uplink_mb_s"] = n.uplink_mb_s;
              r["group"] = n.group;
              rows.append(r);
            }
            return rows;
          },
          "Returns one row per node: {id, name, template, first_gpu, gpus, uplink_mb_s, group}.")
      .def(
          "groups",
          [](const cluster_topology& c) {
            py::list rows;
            std::uint32_t i = 0;
            for (const cluster_group& g : c.groups()) {
              py::dict r;
              r["index"] = i++;
              r["level"] = std::string(to_string(g.level));
              r["tier"] = g.tier;
              r["name"] = g.name;
              r["parent"] = g.parent;
              r["children"] = g.children;
              r["first_node"] = g.first_node.value();
              r["nodes"] = g.node_count;
              r["gpus"] = g.gpu_count;
              r["uplink_mb_s"] = g.uplink_mb_s;
              rows.append(r);
            }
            return rows;
          },
          "Returns the cluster affinity tree, one row per group (group 0 is the cluster).")
      .def(
          "node_topology",
          [](const cluster_topology& c, std::uint32_t n) {
            if (n >= c.node_count())
              raise(errc::not_found, fmt::format("node {}: no such node", n));
            return c.topology_of(node_id(n));
          },
          py::arg("node"), "Returns the NodeTopology of node `node`.")
      .def(
          "find_node",
          [](const cluster_topology& c, std::string_view name) {
            return unwrap(c.find_node(name)).value();
          },
          py::arg("name"), "Returns the id of the node named `name`; NotFound otherwise.")
      .def(
          "level_between",
          [](const cluster_topology& c, std::uint32_t a, std::uint32_t b) {
            if (a >= c.gpu_count() || b >= c.gpu_count())
              raise(errc::not_found, fmt::format("GPU {} or {}: no such GPU", a, b));
            return std::string(to_string(c.level_between(device_id(a), device_id(b))));
          },
          py::arg("a"), py::arg("b"),
          "Returns the highest affinity level crossed between cluster-wide GPUs `a` and `b`\n"
          "('gpu', 'node', 'rack', 'nvlink_domain', 'network_tier' or 'cluster').")
      .def(
          "to_cluster",
          [](const cluster_topology& c) {
            return std::make_shared<cluster>(unwrap(to_cluster(c)));
          },
          "Returns the model Cluster of this topology (node and device ids agree).")
      .def("__repr__", [](const cluster_topology& c) {
        return fmt::format("<hetsched.ClusterTopology '{}' {} nodes, {} GPUs>", c.name(),
                           c.node_count(), c.gpu_count());
      });
}

}  // namespace

node_template template_from(const std::string& name, std::string_view what) {
  const auto t = parse_node_template(name);
  if (!t) {
    std::string names;
    for (const node_template x : all_node_templates()) {
      if (!names.empty()) names += ", ";
      names += to_string(x);
    }
    raise(errc::not_found,
          fmt::format("{}: unknown node template '{}' (known: {})", what, name, names));
  }
  return *t;
}

affinity_level level_from(std::string_view name, std::string_view what) {
  return parse_enum<affinity_level>(name, level_names, what);
}

void bind_topology(py::module_& m) {
  bind_node_topology(m);
  bind_cluster_topology(m);
  m.def(
      "node_template_names",
      [] {
        std::vector<std::string> out;
        for (const node_template t : all_node_templates()) out.emplace_back(to_string(t));
        return out;
      },
      "Returns the built-in node template names ('dgx1-v100', 'dgx-a100', 'hgx-h100', ...).");
  m.def(
      "node_template",
      [](const std::string& name) {
        return unwrap(make_node_template(template_from(name, "name")));
      },
      py::arg("name"), "Returns the NodeTopology of built-in template `name`.");
  m.def(
      "builtin_cluster_names",
      [] {
        std::vector<std::string> out;
        for (const std::string_view n : builtin_cluster_names()) out.emplace_back(n);
        return out;
      },
      "Returns the built-in cluster names ('demo', 'superpod-a100', ...).");
  m.def(
      "builtin_cluster", [](std::string_view name) { return unwrap(make_builtin_cluster(name)); },
      py::arg("name"), "Returns the built-in ClusterTopology `name`; NotFound otherwise.");
  m.def(
      "detect_topology_format",
      [](std::string_view text) { return std::string(to_string(detect_topology_format(text))); },
      py::arg("text"),
      "Returns the format of topology `text`: 'hwloc_xml', 'nccl_xml', 'nvidia_smi_topo', "
      "'json' or 'unknown'.");
  m.def(
      "import_nvidia_smi_topo",
      [](std::string_view text, std::string name, std::string_view gpu_model,
         unsigned nvlink_generation, bool allow_partial) {
        nvidia_smi_import_options o;
        o.name = std::move(name);
        o.gpu_model = gpu_type_from(gpu_model, "gpu_model");
        o.nvlink_generation = nvlink_generation;
        o.allow_partial = allow_partial;
        return unwrap(import_nvidia_smi_topo(text, o));
      },
      py::arg("text"), py::arg("name") = "nvidia-smi", py::arg("gpu_model") = "",
      py::arg("nvlink_generation") = 0, py::arg("allow_partial") = false,
      "Returns the NodeTopology reconstructed from `nvidia-smi topo -m` output `text`.");
  m.def(
      "import_nccl_xml",
      [](std::string_view text, std::string name, std::string_view gpu_model) {
        nccl_import_options o;
        o.name = std::move(name);
        o.gpu_model = gpu_type_from(gpu_model, "gpu_model");
        return unwrap(import_nccl_xml(text, o));
      },
      py::arg("text"), py::arg("name") = "nccl", py::arg("gpu_model") = "",
      "Returns the NodeTopology described by NCCL topology XML `text`.");
  m.def(
      "import_topology_json",
      [](std::string_view text) { return unwrap(import_topology_json(text)); }, py::arg("text"),
      "Returns the NodeTopology of hetsched JSON document `text` (NodeTopology.to_json()).");
  m.def(
      "import_topology",
      [](std::string_view text, std::string_view gpu_model, std::string name,
         unsigned nvlink_generation, bool allow_partial) {
        topology_import_options o;
        o.name = std::move(name);
        o.gpu_model = gpu_type_from(gpu_model, "gpu_model");
        o.nvlink_generation = nvlink_generation;
        o.allow_partial = allow_partial;
        return unwrap(import_topology(text, o));
      },
      py::arg("text"), py::arg("gpu_model") = "", py::arg("name") = "",
      py::arg("nvlink_generation") = 0, py::arg("allow_partial") = false,
      "Returns the NodeTopology of `text`, detecting NCCL XML, nvidia-smi topo -m or hetsched "
      "JSON (import_topology; name empty: the importer's default). hwloc XML raises "
      "FailedPrecondition: the module does not link the hwloc importer.");
}

}  // namespace hetsched::python
