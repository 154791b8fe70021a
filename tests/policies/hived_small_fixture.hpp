// SPDX-License-Identifier: MIT
// The small HiveD config most HiveD unit tests share, and helpers to build pods and schedulers.
//
// Chain RACK(2 NODE) -> NODE(2 PCIE, node level) -> PCIE(2 GPU): one rack of 4-GPU nodes n0 and
// n1 (n1's leaves permuted: tree order 3, 2, 1, 0), plus a top-level NODE cell n2 (chain NODE).
// VC "a" owns `a_nodes` RACK.NODE cells, VC "b" the NODE cell.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <hetsched/policies/hived.hpp>

namespace hetsched::hived::small_fixture {

/// The config above; `cell_type_requests` turns on options::cell_type_requests.
inline config small_config(int a_nodes = 1, bool cell_type_requests = false) {
  config cfg;
  cfg.cell_types = {
      {"PCIE", "GPU", 2, false}, {"NODE", "PCIE", 2, true}, {"RACK", "NODE", 2, false}};
  physical_cell_spec rack;
  rack.cell_type = "RACK";
  physical_cell_spec n0;
  n0.address = "n0";
  physical_cell_spec n1;
  n1.address = "n1";
  physical_cell_spec p0;
  p0.children = {physical_cell_spec{"", "3", "", {}}, physical_cell_spec{"", "2", "", {}}};
  physical_cell_spec p1;
  p1.children = {physical_cell_spec{"", "1", "", {}}, physical_cell_spec{"", "0", "", {}}};
  n1.children = {p0, p1};
  rack.children = {n0, n1};
  physical_cell_spec solo;
  solo.cell_type = "NODE";
  solo.address = "n2";
  cfg.physical_cells = {rack, solo};
  cfg.virtual_clusters = {{"a", {{"RACK.NODE", a_nodes}}, {}}, {"b", {{"NODE", 1}}, {}}};
  cfg.opts.cell_type_requests = cell_type_requests;
  return cfg;
}

/// A pod of `leaves` GPU leaves in `vc` at `prio`, honouring suggested nodes; `group` and
/// `members` make it part of an affinity group (the default: a group of its own).
inline pod_request pod(const std::string& name, const std::string& vc, int prio, int leaves,
                       const std::string& group = "", std::vector<member_spec> members = {}) {
  pod_request p;
  p.name = name;
  p.vc = vc;
  p.priority = prio;
  p.leaf_type = "GPU";
  p.leaf_cells = leaves;
  p.group = group;
  p.members = std::move(members);
  p.ignore_suggested_nodes = false;
  return p;
}

/// The scheduler of `cfg` with every node reported healthy.
inline scheduler make(const config& cfg = small_config()) {
  auto s = scheduler::create(cfg);
  EXPECT_TRUE(s.has_value()) << s.error().message;
  s->mark_all_nodes_healthy();
  return std::move(*s);
}

}  // namespace hetsched::hived::small_fixture
