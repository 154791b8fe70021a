// SPDX-License-Identifier: MIT
// Bindings of HiveD: the configuration from Python dicts, schedule / commit / release, the
// side-effect-free what-if and the inspection queries of hived::scheduler.
#include <hetsched/policies/hived.hpp>
#include <hetsched/policies/hived_config.hpp>
#include <hetsched/policies/hived_config_json.hpp>

#include "convert.hpp"

namespace hetsched::python {
namespace {

using hived::scheduler;

// Calls f(name, item, what) for a list of dicts with a `name` key or a dict name -> dict.
template <typename F>
void named_items(py::handle obj, const std::string& what, F&& f) {
  if (py::isinstance<py::dict>(obj)) {
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(obj)) {
      const auto name = py::str(k).cast<std::string>();
      f(name, v, fmt::format("{}[{}]", what, name), false);
    }
    return;
  }
  for_each_item(obj, what, [&](py::handle item, const std::string& w) { f("", item, w, true); });
}

/// Reads a physical cell and its children; nesting is bounded (a dict nested 100,000 deep must
/// not exhaust the stack): no valid config nests deeper than a chain's levels.
hived::physical_cell_spec cell_from(py::handle obj, const std::string& what, int depth = 1) {
  if (const int limit = hived::config_limits{}.max_levels; depth > limit)
    raise(errc::out_of_range,
          fmt::format("{}: physical cells nested deeper than {} levels (no chain has more, "
                      "hived::config_limits::max_levels)",
                      what, limit));
  hived::physical_cell_spec c;
  fields f(obj, what);
  f.get("cell_type", c.cell_type);
  f.get("address", c.address);
  f.get("pinned_id", c.pinned_id);
  f.get("absolute_address", c.absolute_address);
  for_each_item(f.object("children"), f.path("children"),
                [&](py::handle item, const std::string& w) {
                  c.children.push_back(cell_from(item, w, depth + 1));
                });
  f.finish();
  return c;
}

hived::config config_from(const py::dict& obj) {
  hived::config cfg;
  fields f(obj, "config");
  named_items(f.object("cell_types"), f.path("cell_types"),
              [&](const std::string& key, py::handle item, const std::string& w, bool listed) {
                hived::cell_type_spec t;
                fields tf(item, w);
                if (listed) {
                  t.name = tf.required<std::string>("name");
                } else {
                  t.name = key;
                }
                tf.get("child_type", t.child_type);
                tf.get("child_count", t.child_count);
                tf.get("node_level", t.node_level);
                tf.finish();
                cfg.cell_types.push_back(std::move(t));
              });
  for_each_item(f.object("physical_cells"), f.path("physical_cells"),
                [&](py::handle item, const std::string& w) {
                  cfg.physical_cells.push_back(cell_from(item, w));
                });
  named_items(f.object("virtual_clusters"), f.path("virtual_clusters"),
              [&](const std::string& key, py::handle item, const std::string& w, bool listed) {
                hived::virtual_cluster_spec vc;
                fields vf(item, w);
                if (listed) {
                  vc.name = vf.required<std::string>("name");
                } else {
                  vc.name = key;
                }
                for_each_item(vf.object("virtual_cells"), vf.path("virtual_cells"),
                              [&](py::handle cell, const std::string& cw) {
                                fields cf(cell, cw);
                                hived::virtual_cell_spec s;
                                s.type_path = cf.required<std::string>("cell_type");
                                s.count = cf.required<int>("count");
                                cf.finish();
                                vc.virtual_cells.push_back(std::move(s));
                              });
                vf.get("pinned_cells", vc.pinned_cells);
                vf.finish();
                cfg.virtual_clusters.push_back(std::move(vc));
              });
  const py::object opts = f.object("options");
  if (!opts.is_none()) {
    fields of(opts, f.path("options"));
    of.get("chain_order", cfg.opts.chain_order);
    of.get("multi_cell_pods", cfg.opts.multi_cell_pods);
    of.get("cell_type_requests", cfg.opts.cell_type_requests);
    of.finish();
  }
  f.finish();
  return cfg;
}

py::dict cell_to_py(const hived::physical_cell_spec& c) {
  py::dict d;
  d["cell_type"] = c.cell_type;
  d["address"] = c.address;
  d["pinned_id"] = c.pinned_id;
  d["absolute_address"] = c.absolute_address;
  py::list children;
  for (const hived::physical_cell_spec& child : c.children) children.append(cell_to_py(child));
  d["children"] = children;
  return d;
}

// The config in the list form config_from() reads back.
py::dict config_to_py(const hived::config& cfg) {
  py::list types;
  for (const hived::cell_type_spec& t : cfg.cell_types) {
    py::dict r;
    r["name"] = t.name;
    r["child_type"] = t.child_type;
    r["child_count"] = t.child_count;
    r["node_level"] = t.node_level;
    types.append(r);
  }
  py::list cells;
  for (const hived::physical_cell_spec& c : cfg.physical_cells) cells.append(cell_to_py(c));
  py::list vcs;
  for (const hived::virtual_cluster_spec& vc : cfg.virtual_clusters) {
    py::dict r;
    r["name"] = vc.name;
    py::list vcells;
    for (const hived::virtual_cell_spec& v : vc.virtual_cells) {
      py::dict x;
      x["cell_type"] = v.type_path;
      x["count"] = v.count;
      vcells.append(x);
    }
    r["virtual_cells"] = vcells;
    r["pinned_cells"] = vc.pinned_cells;
    vcs.append(r);
  }
  py::dict opts;
  opts["chain_order"] = cfg.opts.chain_order;
  opts["multi_cell_pods"] = cfg.opts.multi_cell_pods;
  opts["cell_type_requests"] = cfg.opts.cell_type_requests;
  py::dict d;
  d["cell_types"] = types;
  d["physical_cells"] = cells;
  d["virtual_clusters"] = vcs;
  d["options"] = opts;
  return d;
}

std::vector<hived::member_spec> members_from(fields& f) {
  std::vector<hived::member_spec> out;
  for_each_item(f.object("members"), f.path("members"), [&](py::handle item, const std::string& w) {
    fields mf(item, w);
    hived::member_spec ms;
    mf.get("pods", ms.pods);
    mf.get("leaf_cells", ms.leaf_cells);
    mf.finish();
    out.push_back(ms);
  });
  return out;
}

// Child groups: [{members: [{pods, leaf_cells}], within_one_cell, child_groups: [...]}], nested.
std::vector<hived::group_spec> child_groups_from(fields& f) {
  std::vector<hived::group_spec> out;
  for_each_item(f.object("child_groups"), f.path("child_groups"),
                [&](py::handle item, const std::string& w) {
                  fields gf(item, w);
                  hived::group_spec g;
                  g.members = members_from(gf);
                  gf.get("within_one_cell", g.within_one_cell);
                  g.child_groups = child_groups_from(gf);
                  gf.finish();
                  out.push_back(std::move(g));
                });
  return out;
}

hived::pod_request pod_from(const py::dict& obj) {
  hived::pod_request p;
  fields f(obj, "pod");
  p.name = f.required<std::string>("name");
  p.vc = f.required<std::string>("vc");
  f.get("priority", p.priority);
  f.get("pinned_cell", p.pinned_cell);
  f.get("leaf_type", p.leaf_type);
  f.get("leaf_cells", p.leaf_cells);
  f.get("group", p.group);
  p.members = members_from(f);
  f.get("lazy_preemption", p.lazy_preemption);
  f.get("cell_type", p.cell_type);
  f.get("within_one_cell", p.within_one_cell);
  p.child_groups = child_groups_from(f);
  f.get("ignore_suggested_nodes", p.ignore_suggested_nodes);
  f.finish();
  return p;
}

py::dict bind_to_py(const hived::bind_info& b) {
  py::dict d;
  d["node"] = b.node;
  d["leaf_cells"] = b.leaf_cells;
  d["chain"] = b.chain;
  py::dict groups;
  for (const auto& [leaves, placements] : b.group_placements) {
    py::list pods;
    for (const hived::pod_placement& p : placements) {
      py::dict x;
      x["node"] = p.node;
      x["leaf_cells"] = p.leaf_cells;
      x["preassigned_types"] = p.preassigned_types;
      pods.append(x);
    }
    groups[py::int_(leaves)] = pods;
  }
  d["group_placements"] = groups;
  return d;
}

hived::bind_info bind_from(const py::dict& obj) {
  hived::bind_info b;
  fields f(obj, "bind");
  static_cast<void>(f.object("outcome"));
  static_cast<void>(f.object("victims_by_node"));
  static_cast<void>(f.object("wait_reason"));
  b.node = f.required<std::string>("node");
  f.get("leaf_cells", b.leaf_cells);
  f.get("chain", b.chain);
  const py::object groups = f.object("group_placements");
  if (!groups.is_none()) {
    if (!py::isinstance<py::dict>(groups))
      raise(errc::invalid_argument, "bind.group_placements: expected a dict leaf count -> list");
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(groups)) {
      int leaves = 0;
      try {
        leaves = py::int_(py::reinterpret_borrow<py::object>(k)).cast<int>();
      } catch (const py::error_already_set&) {
        raise(errc::invalid_argument, "bind.group_placements: keys must be leaf counts");
      }
      std::vector<hived::pod_placement>& out = b.group_placements[leaves];
      for_each_item(v, fmt::format("bind.group_placements[{}]", leaves),
                    [&](py::handle item, const std::string& w) {
                      fields pf(item, w);
                      hived::pod_placement p;
                      p.node = pf.required<std::string>("node");
                      pf.get("leaf_cells", p.leaf_cells);
                      pf.get("preassigned_types", p.preassigned_types);
                      pf.finish();
                      out.push_back(std::move(p));
                    });
    }
  }
  f.finish();
  return b;
}

py::dict schedule_to_py(const hived::schedule_result& r) {
  py::dict d = r.kind == hived::outcome::bind ? bind_to_py(r.bind) : py::dict();
  constexpr std::string_view names[] = {"bind", "preempt", "wait"};
  d["outcome"] = std::string(names[static_cast<std::size_t>(r.kind)]);
  py::dict victims;
  for (const auto& [node, pods] : r.victims_by_node) victims[py::str(node)] = pods;
  d["victims_by_node"] = victims;
  d["wait_reason"] = r.wait_reason;
  return d;
}

constexpr std::string_view group_state_names[] = {"allocated", "preempting", "being_preempted"};

py::dict what_if_to_py(const hived::what_if_answer& a) {
  py::dict d;
  d["decision"] = schedule_to_py(a.decision);
  d["outcome"] = d["decision"]["outcome"];
  d["wait_reason"] = a.decision.wait_reason;
  d["group"] = a.group;
  d["existing_group"] = a.existing_group
                            ? py::object(py::str(std::string(
                                  group_state_names[static_cast<std::size_t>(*a.existing_group)])))
                            : py::object(py::none());
  d["chain"] = a.chain;
  py::list pods;
  for (const hived::what_if_pod& p : a.pods) {
    py::dict r;
    r["leaf_cells"] = p.leaf_cells;
    r["index"] = p.index;
    r["node"] = p.node;
    r["leaf_indices"] = p.leaf_indices;
    r["physical_cells"] = p.physical_cells;
    r["virtual_cells"] = p.virtual_cells;
    r["preassigned_types"] = p.preassigned_types;
    pods.append(r);
  }
  d["pods"] = pods;
  py::list victims;
  for (const hived::what_if_victim& v : a.victims) {
    py::dict r;
    r["pod"] = v.pod;
    r["node"] = v.node;
    r["group"] = v.group;
    r["vc"] = v.vc;
    r["priority"] = v.priority;
    r["guaranteed_placement"] = v.guaranteed_placement;
    victims.append(r);
  }
  d["victims"] = victims;
  d["lazy_preempted_groups"] = a.lazy_preempted_groups;
  d["cancelled_preemptions"] = a.cancelled_preemptions;
  d["starts_preemption"] = a.starts_preemption;
  return d;
}

hived::node_filter filter_from(const py::object& nodes) {
  hived::node_filter filter;
  if (!nodes.is_none()) {
    filter.all = false;
    filter.nodes = nodes.cast<std::vector<std::string>>();
  }
  return filter;
}

hived::phase phase_from(std::string_view ph) {
  constexpr std::string_view phases[] = {"filtering", "preempting"};
  return parse_enum<hived::phase>(ph, phases, "phase");
}

py::list cells_to_py(const std::vector<hived::cell_info>& cells) {
  py::list rows;
  for (const hived::cell_info& c : cells) {
    py::dict r;
    r["address"] = c.address;
    r["type"] = c.type;
    r["chain"] = c.chain;
    r["level"] = c.level;
    r["nodes"] = c.nodes;
    r["leaf_indices"] = c.leaf_indices;
    r["vc"] = c.vc;
    r["pinned_id"] = c.pinned_id;
    rows.append(r);
  }
  return rows;
}

py::list vc_cells_to_py(const std::vector<hived::vc_cell_status>& cells) {
  py::list rows;
  for (const hived::vc_cell_status& c : cells) {
    py::dict r;
    r["address"] = c.address;
    r["priority"] = c.priority;
    r["healthy"] = c.healthy;
    r["bound_to"] = c.bound_to;
    rows.append(r);
  }
  return rows;
}

}  // namespace

void bind_hived(py::module_& m) {
  py::class_<scheduler>(
      m, "HivedScheduler",
      "HiveD's buddy-cell allocator (Zhao et al., OSDI'20): virtual clusters own cells of cell\n"
      "chains; schedule() answers bind, preempt or wait for a pod; commit() and release() "
      "record\nbound pods. Config dict: {cell_types: [{name, child_type, child_count, "
      "node_level}] (or a\ndict by name), physical_cells: [{cell_type, address, pinned_id, "
      "children, absolute_address}],\nvirtual_clusters: [{name, virtual_cells: [{cell_type, "
      "count}], pinned_cells}] (or a dict by\nname), options: {chain_order, multi_cell_pods, "
      "cell_type_requests}}.")
      .def(py::init([](const py::dict& cfg, bool healthy) {
             scheduler s = unwrap(scheduler::create(config_from(cfg)));
             if (healthy) s.mark_all_nodes_healthy();
             return s;
           }),
           py::arg("config"), py::arg("mark_all_nodes_healthy") = true,
           "Builds the cells from config dict `config`; by default every node starts healthy.")
      .def_static(
          "from_json",
          [](std::string_view text, bool healthy) {
            scheduler s = unwrap(scheduler::create(unwrap(hived::parse_config_json(text))));
            if (healthy) s.mark_all_nodes_healthy();
            return s;
          },
          py::arg("text"), py::arg("mark_all_nodes_healthy") = true,
          "Builds the scheduler from hivedscheduler's JSON config text (physicalCluster,\n"
          "virtualClusters, and hetsched's options under \"hetsched\"; docs/hived.md).")
      .def(
          "schedule",
          [](scheduler& s, const py::dict& pod, const py::object& nodes, std::string_view ph) {
            const hived::pod_request request = pod_from(pod);
            const hived::node_filter filter = filter_from(nodes);
            return schedule_to_py(unwrap(s.schedule(request, filter, phase_from(ph))));
          },
          py::arg("pod"), py::arg("nodes") = py::none(), py::arg("phase") = "preempting",
          "Returns the decision for pod dict `pod` ({name, vc, priority, leaf_type, leaf_cells, "
          "group,\nmembers: [{pods, leaf_cells}], pinned_cell, lazy_preemption, "
          "ignore_suggested_nodes, cell_type,\nwithin_one_cell, child_groups: [{members, "
          "within_one_cell, child_groups}]}; the last three\nneed options.cell_type_requests):"
          "\n{outcome: 'bind'|'preempt'|'wait', node, leaf_cells, "
          "chain, group_placements, victims_by_node,\nwait_reason}. `nodes` limits the "
          "suggested nodes. Like hivedscheduler, it may lazily preempt groups\nand, in the "
          "'preempting' phase, record or cancel preemption state; what_if() changes nothing.")
      .def(
          "what_if",
          [](scheduler& s, const py::dict& pod, const py::object& nodes, std::string_view ph) {
            const hived::pod_request request = pod_from(pod);
            const hived::node_filter filter = filter_from(nodes);
            return what_if_to_py(unwrap(s.what_if(request, filter, phase_from(ph))));
          },
          py::arg("pod"), py::arg("nodes") = py::none(), py::arg("phase") = "preempting",
          "Returns what schedule(pod, nodes, phase) would answer and do now, changing nothing "
          "(state_digest()\nis unchanged): {decision: the dict schedule() returns, outcome, "
          "wait_reason, group,\nexisting_group: None (new) | 'allocated' | 'preempting' | "
          "'being_preempted', chain,\npods: [{leaf_cells, index, node, leaf_indices, "
          "physical_cells, virtual_cells,\npreassigned_types}] (every pod of the group; on "
          "'preempt' where it goes once the victims are\ngone), victims: [{pod, node, group, vc, "
          "priority, guaranteed_placement}],\nlazy_preempted_groups, cancelled_preemptions, "
          "starts_preemption}. `pods` and `victims` are\nrow lists for pandas. Errors: those of "
          "schedule().")
      .def("state_digest", &scheduler::state_digest,
           "Returns a 64-bit digest of the whole allocator state (cells, free lists, views and "
           "their\norders, groups, bind records); equal states give equal digests.")
      .def(
          "commit",
          [](scheduler& s, const py::dict& pod, const py::dict& bind) {
            check(s.add_allocated(pod_from(pod), bind_from(bind)));
          },
          py::arg("pod"), py::arg("bind"),
          "Records a bound pod from its bind record (a schedule() result with outcome 'bind').")
      .def(
          "release",
          [](scheduler& s, const py::dict& pod, const py::dict& bind) {
            check(s.delete_allocated(pod_from(pod), bind_from(bind)));
          },
          py::arg("pod"), py::arg("bind"),
          "Releases a bound pod; the group goes when all its pods are gone.")
      .def(
          "forget_unallocated",
          [](scheduler& s, const py::dict& pod) { s.delete_unallocated(pod_from(pod)); },
          py::arg("pod"), "Forgets an unbound pod (cancels a preemption with no pod left).")
      .def("set_node_bad", &scheduler::set_node_bad, py::arg("node"), "Marks a node bad.")
      .def("set_node_healthy", &scheduler::set_node_healthy, py::arg("node"),
           "Marks a node healthy.")
      .def("mark_all_nodes_healthy", &scheduler::mark_all_nodes_healthy,
           "Marks every configured node healthy.")
      .def(
          "group",
          [](const scheduler& s, const std::string& name) -> py::object {
            const auto g = s.group(name);
            if (!g) return py::none();
            py::dict d;
            d["state"] = std::string(group_state_names[static_cast<std::size_t>(g->state)]);
            d["virtual_placement_dropped"] = g->virtual_placement_dropped;
            d["physical_placement"] = g->physical_placement;
            return d;
          },
          py::arg("name"),
          "Returns {state, virtual_placement_dropped, physical_placement} of affinity group "
          "`name`, or None.")
      .def(
          "vc_cells",
          [](const scheduler& s, const std::string& vc, const py::object& chain, int level) {
            if (chain.is_none()) return vc_cells_to_py(s.vc_cells_all(vc));
            return vc_cells_to_py(s.vc_cells(vc, chain.cast<std::string>(), level));
          },
          py::arg("vc"), py::arg("chain") = py::none(), py::arg("level") = 0,
          "Returns the VC's preassigned cells {address, priority, healthy, bound_to} (all, or of "
          "one\nchain and level).")
      .def("free_list", &scheduler::free_list, py::arg("chain"), py::arg("level"),
           "Returns the free cells of `chain` at `level` as physical addresses.")
      .def("nodes", &scheduler::nodes, "Returns every node name, in first-appearance order.")
      .def(
          "top_level_cells", [](const scheduler& s) { return cells_to_py(s.top_level_cells()); },
          "Returns the top-level physical cells.")
      .def(
          "node_level_cells", [](const scheduler& s) { return cells_to_py(s.node_level_cells()); },
          "Returns every node-level physical cell with its node and leaf GPU indices.")
      .def(
          "pinned_physical_cells",
          [](const scheduler& s) { return cells_to_py(s.pinned_physical_cells()); },
          "Returns the pinned physical cells.")
      .def(
          "vc_preassigned_cells",
          [](const scheduler& s) { return cells_to_py(s.vc_preassigned_cells()); },
          "Returns every VC's preassigned virtual cells.")
      .def("total_left_cells", &scheduler::total_left_cells, py::arg("chain"),
           "Returns the chain's free cell counts by level (index 0 unused).")
      .def("all_vc_free_cells", &scheduler::all_vc_free_cells, py::arg("chain"),
           "Returns the chain's unbound VC cell counts by level (index 0 unused).");
  m.def(
      "hived_config_from_json",
      [](std::string_view text) { return config_to_py(unwrap(hived::parse_config_json(text))); },
      py::arg("text"),
      "Returns hivedscheduler's JSON config text as the config dict HivedScheduler() takes.");
  m.def(
      "hived_config_to_json", [](const py::dict& cfg) { return hived::to_json(config_from(cfg)); },
      py::arg("config"), "Returns a HiveD config dict as hivedscheduler's JSON config text.");
  m.attr("HIVED_OPPORTUNISTIC_PRIORITY") = hived::opportunistic_priority;
  m.attr("HIVED_MAX_GUARANTEED_PRIORITY") = hived::max_guaranteed_priority;
}

}  // namespace hetsched::python
