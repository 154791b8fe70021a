/* SPDX-License-Identifier: MIT */
/* C API tests: HiveD pods with the API-version-2 fields (cell_type, within_one_cell, nested
 * child_groups) on a config with the cellTypeRequests option, old struct sizes, and errors. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "c_test.h"

/* Chain ROW(2 RACK) -> RACK(2 NODE) -> NODE(2 PCIE, node level) -> PCIE(2 GPU): two rows of four
 * 4-GPU nodes, r0n0 r0n1 | r1n0 r1n1 (row 0) and r2n0 ... r3n1 (row 1). VC v owns one ROW cell,
 * VC w two ROW.RACK.NODE cells. `requests` sets the cellTypeRequests option. */
static hs_hived_t* rows(int32_t requests) {
  hs_hived_config_t* cfg = NULL;
  hs_hived_t* h = NULL;
  int r;
  CHECK_OK(hs_hived_config_new(&cfg));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "PCIE", "GPU", 2, 0));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "NODE", "PCIE", 2, 1));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "RACK", "NODE", 2, 0));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "ROW", "RACK", 2, 0));
  for (r = 0; r < 2; ++r) {
    int32_t row = -1;
    int k;
    CHECK_OK(hs_hived_config_add_physical_cell(cfg, HS_HIVED_TOP_LEVEL, "ROW", NULL, &row));
    for (k = 0; k < 2; ++k) {
      int32_t rack = -1;
      int n;
      CHECK_OK(hs_hived_config_add_physical_cell(cfg, row, NULL, NULL, &rack));
      for (n = 0; n < 2; ++n) {
        char name[16];
        snprintf(name, sizeof name, "r%dn%d", r * 2 + k, n);
        CHECK_OK(hs_hived_config_add_physical_cell(cfg, rack, NULL, name, NULL));
      }
    }
  }
  CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "v", "ROW", 1));
  CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "w", "ROW.RACK.NODE", 2));
  CHECK_OK(hs_hived_config_set_option(cfg, "cellTypeRequests", requests));
  CHECK_STATUS(HS_NOT_FOUND, hs_hived_config_set_option(cfg, "cellTypes", 1));
  CHECK_CONTAINS(hs_last_error(), "unknown HiveD option 'cellTypes'");
  CHECK_OK(hs_hived_new(cfg, &h));
  hs_hived_config_free(cfg);
  return h;
}

static hs_hived_pod_t pod(const char* name, const char* vc, int32_t leaves) {
  hs_hived_pod_t p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.name = name;
  p.vc = vc;
  p.priority = 1;
  p.leaf_type = "GPU";
  p.leaf_cells = leaves;
  return p;
}

static hs_bind_t bind_of(const hs_decision_t* d) {
  hs_bind_t b;
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK(hs_decision_bind_count(d) == 1);
  CHECK_OK(hs_decision_bind_at(d, 0, &b));
  return b;
}

/* Group h inside one ROW: child a = one 2-GPU pod inside a RACK, child b = a 3-GPU and a 1-GPU
 * pod inside a RACK. */
static const hs_hived_member_t a_members[] = {{1, 2}};
static const hs_hived_member_t b_members[] = {{1, 3}, {1, 1}};
static const hs_hived_group_t children[] = {{a_members, 1, "RACK", NULL, 0},
                                            {b_members, 2, "RACK", NULL, 0}};

static hs_hived_pod_t group_pod(const char* name, int32_t leaves) {
  hs_hived_pod_t p = pod(name, "v", leaves);
  p.group = "h";
  p.within_one_cell = "ROW";
  p.child_groups = children;
  p.child_group_count = 2;
  return p;
}

static void schedule_commit(hs_hived_t* h, hs_hived_pod_t p, const char* node, const uint32_t* gpus,
                            uint32_t count) {
  hs_decision_t* d = NULL;
  hs_bind_t b;
  CHECK_OK(hs_hived_schedule(h, &p, HS_HIVED_PREEMPTING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, node);
  CHECK(b.gpu_count == count && memcmp(b.gpus, gpus, count * sizeof(uint32_t)) == 0);
  CHECK_OK(hs_hived_commit(h, d));
  hs_decision_free(d);
}

static void test_hierarchical_group(void) {
  static const uint32_t a_gpus[] = {0, 1};
  static const uint32_t b3_gpus[] = {2, 3, 1};
  static const uint32_t b1_gpus[] = {0};
  hs_hived_t* h = rows(1);
  /* On an empty row both children fit in rack 0 (docs/hived.md, "Options", for the search order):
   * child a's pod on r0n1, child b's 3-GPU and 1-GPU pods together on r0n0. The answer matches
   * the Python binding's and the C++ library's for the same request. */
  schedule_commit(h, group_pod("pa", 2), "r0n1", a_gpus, 2);
  schedule_commit(h, group_pod("pb3", 3), "r0n0", b3_gpus, 3);
  schedule_commit(h, group_pod("pb1", 1), "r0n0", b1_gpus, 1);
  hs_hived_free(h);
}

static void test_cell_type_and_old_struct_size(void) {
  static const uint32_t whole[] = {0, 1, 2, 3};
  hs_hived_t* h = rows(1);
  hs_decision_t* d = NULL;
  hs_hived_pod_t p = pod("node-pod", "w", 1);
  hs_hived_pod_t old = group_pod("old", 2);
  /* one cell of type NODE: a whole 4-GPU node */
  p.leaf_type = NULL;
  p.cell_type = "NODE";
  CHECK_OK(hs_hived_schedule(h, &p, HS_HIVED_FILTERING, &d));
  CHECK(bind_of(d).gpu_count == 4);
  CHECK(memcmp(bind_of(d).gpus, whole, sizeof whole) == 0);
  hs_decision_free(d);
  /* a caller built against version 1: the new fields are not read, so the pod is a plain 2-GPU
   * pod of a one-pod group */
  old.struct_size = (uint32_t)offsetof(hs_hived_pod_t, cell_type);
  CHECK_OK(hs_hived_schedule(h, &old, HS_HIVED_FILTERING, &d));
  CHECK(bind_of(d).gpu_count == 2);
  hs_decision_free(d);
  old.struct_size = (uint32_t)offsetof(hs_hived_pod_t, cell_type) - 8u;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(h, &old, HS_HIVED_FILTERING, &d));
  CHECK_CONTAINS(hs_last_error(), "first version of hs_hived_pod_t");
  hs_hived_free(h);
}

static void test_errors_change_nothing(void) {
  hs_hived_t* off = rows(0);
  hs_hived_t* h = rows(1);
  hs_decision_t* d = NULL;
  hs_hived_pod_t p = group_pod("x", 2);
  hs_hived_group_t loop[1];
  hs_hived_group_t null_members[1];
  hs_hived_group_t grandchild[1];
  hs_hived_group_t with_empty[1];
  const uint64_t digest = hs_hived_state_digest(h);
  /* the option is off */
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(off, &p, HS_HIVED_FILTERING, &d));
  CHECK_CONTAINS(hs_last_error(), "disabled");
  /* a child group pointing at itself */
  loop[0].members = a_members;
  loop[0].member_count = 1;
  loop[0].within_one_cell = "RACK";
  loop[0].child_groups = loop;
  loop[0].child_group_count = 1;
  p.child_groups = loop;
  p.child_group_count = 1;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(h, &p, HS_HIVED_PREEMPTING, &d));
  CHECK_CONTAINS(hs_last_error(), "nested deeper than 64 levels");
  /* NULL members with a count */
  null_members[0] = children[0];
  null_members[0].members = NULL;
  p.child_groups = null_members;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(h, &p, HS_HIVED_PREEMPTING, &d));
  CHECK_CONTAINS(hs_last_error(), "[x]: pod->child_groups[0].members is NULL with member_count 1");
  /* a grandchild without pods (HiveD's own check) */
  grandchild[0].members = NULL;
  grandchild[0].member_count = 0;
  grandchild[0].within_one_cell = "NODE";
  grandchild[0].child_groups = NULL;
  grandchild[0].child_group_count = 0;
  with_empty[0] = children[0];
  with_empty[0].child_groups = grandchild;
  with_empty[0].child_group_count = 1;
  p.child_groups = with_empty;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(h, &p, HS_HIVED_PREEMPTING, &d));
  CHECK_CONTAINS(hs_last_error(), "group h.childGroups[0].childGroups[0] has no pods");
  /* NULL child_groups with a count */
  p.child_groups = NULL;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(h, &p, HS_HIVED_PREEMPTING, &d));
  CHECK(hs_hived_state_digest(h) == digest);
  hs_hived_free(off);
  hs_hived_free(h);
}

int main(void) {
  RUN(test_hierarchical_group);
  RUN(test_cell_type_and_old_struct_size);
  RUN(test_errors_change_nothing);
  return TEST_RESULT();
}
