/* SPDX-License-Identifier: MIT */
/* C API tests: hs_hived_commit refuses a decision whose GPUs another pod holds (two decisions
 * made before either was committed), naming the holder, and changes nothing (issue 17 §2). */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

/* One node n0 of 4 GPUs (NODE -> 2 PCIE -> 2 GPU); VC "a" owns it. */
static hs_hived_t* make_scheduler(void) {
  hs_hived_config_t* cfg = NULL;
  hs_hived_t* h = NULL;
  CHECK_OK(hs_hived_config_new(&cfg));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "PCIE", "GPU", 2, 0));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "NODE", "PCIE", 2, 1));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, HS_HIVED_TOP_LEVEL, "NODE", "n0", NULL));
  CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "a", "NODE", 1));
  CHECK_OK(hs_hived_new(cfg, &h));
  hs_hived_config_free(cfg);
  return h;
}

static hs_hived_pod_t pod(const char* name, int32_t priority, int32_t leaves) {
  hs_hived_pod_t p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.name = name;
  p.vc = "a";
  p.priority = priority;
  p.leaf_type = "GPU";
  p.leaf_cells = leaves;
  return p;
}

static void gpus_of(const hs_decision_t* d, uint32_t* first, uint32_t* second) {
  hs_bind_t b;
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK_OK(hs_decision_bind_at(d, 0, &b));
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpu_count == 2);
  *first = b.gpus[0];
  *second = b.gpus[1];
}

static void test_second_decision_for_the_same_gpus_is_refused(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t p1 = pod("p1", 1, 2);
  hs_hived_pod_t p2 = pod("p2", 1, 2);
  hs_decision_t* d1 = NULL;
  hs_decision_t* d2 = NULL;
  hs_decision_t* d3 = NULL;
  uint32_t a = 0;
  uint32_t b = 0;
  uint64_t digest = 0;
  /* Filtering changes nothing: both pods are given GPUs 0 and 1 */
  CHECK_OK(hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &d1));
  CHECK_OK(hs_hived_schedule(h, &p2, HS_HIVED_FILTERING, &d2));
  gpus_of(d1, &a, &b);
  CHECK(a == 0 && b == 1);
  gpus_of(d2, &a, &b);
  CHECK(a == 0 && b == 1);
  CHECK_OK(hs_hived_commit(h, d1));
  digest = hs_hived_state_digest(h);
  CHECK_STATUS(HS_FAILED_PRECONDITION, hs_hived_commit(h, d2));
  CHECK_STR(hs_last_error(),
            "[p2]: GPU 0 of node n0 is held by group p1 (pods p1; priority 1); a bind record may "
            "only name free cells (schedule the pod again)");
  CHECK(hs_hived_state_digest(h) == digest);
  /* p2 is not committed: it can be scheduled again, gets GPUs 2 and 3, and commits */
  CHECK_OK(hs_hived_schedule(h, &p2, HS_HIVED_FILTERING, &d3));
  gpus_of(d3, &a, &b);
  CHECK(a == 2 && b == 3);
  CHECK_OK(hs_hived_commit(h, d3));
  /* p1 released: its GPUs are free again, and p2's stale decision still names p2, committed */
  CHECK_OK(hs_hived_release(h, "p1"));
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_hived_commit(h, d2));
  hs_decision_free(d1);
  hs_decision_free(d2);
  hs_decision_free(d3);
  hs_hived_free(h);
}

int main(void) {
  RUN(test_second_decision_for_the_same_gpus_is_refused);
  return TEST_RESULT();
}
