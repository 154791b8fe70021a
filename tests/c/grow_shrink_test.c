/* SPDX-License-Identifier: MIT */
/* C API tests: grow-shrink over the packer (hs_packer_grow_shrink) on 2 DGX A100 (8 GPUs each):
 * grow binds, shrink releases read through hs_decision_release_at, commits, stale decisions and
 * bad elastic entries. */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

static hs_cluster_t* make_cluster(void) {
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 2;
  o.nodes_per_rack = 2;
  o.name_prefix = "n";
  CHECK_OK(hs_cluster_from_template("dgx-a100", &o, &c));
  return c;
}

static void place_commit(hs_packer_t* p, uint64_t job, uint32_t gpus) {
  hs_gang_t g;
  hs_decision_t* d = NULL;
  memset(&g, 0, sizeof g);
  g.struct_size = sizeof g;
  g.job_id = job;
  g.tasks = 1;
  g.gpus_per_task = gpus;
  CHECK_OK(hs_packer_place(p, &g, &d));
  CHECK(hs_decision_bind_count(d) == 1);
  CHECK_OK(hs_packer_commit(p, d));
  hs_decision_free(d);
}

static hs_elastic_job_t elastic(uint64_t job, uint32_t base, uint32_t max) {
  hs_elastic_job_t e;
  memset(&e, 0, sizeof e);
  e.struct_size = sizeof e;
  e.job_id = job;
  e.base_tasks = base;
  e.max_tasks = max;
  return e;
}

static hs_grow_shrink_params_t params(uint32_t waiting, uint32_t reserve) {
  hs_grow_shrink_params_t q;
  memset(&q, 0, sizeof q);
  q.struct_size = sizeof q;
  q.waiting_gpus = waiting;
  q.reserve_gpus = reserve;
  return q;
}

static uint32_t free_on(const hs_packer_t* p, uint32_t node) {
  uint32_t n = 99;
  CHECK_OK(hs_packer_free_gpu_count(p, node, &n));
  return n;
}

static hs_bind_t bind_at(const hs_decision_t* d, size_t index) {
  hs_bind_t b;
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK_OK(hs_decision_bind_at(d, index, &b));
  return b;
}

static hs_release_t release_at(const hs_decision_t* d, size_t index) {
  hs_release_t r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  CHECK_OK(hs_decision_release_at(d, index, &r));
  return r;
}

static int same_gpus(const uint32_t* a, uint32_t na, const uint32_t* b, uint32_t nb) {
  return na == nb && memcmp(a, b, na * sizeof(uint32_t)) == 0;
}

static void test_grow_then_shrink(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_decision_t* grow = NULL;
  hs_decision_t* shrink = NULL;
  hs_elastic_job_t e = elastic(1, 1, 8);
  hs_grow_shrink_params_t q = params(0, 2);
  uint32_t grown_gpus[5][2];
  size_t i;
  CHECK_OK(hs_packer_new(c, &p));
  hs_cluster_free(c);
  /* job 1 (elastic, 1 task of 2 GPUs) and job 2 (4 GPUs, not elastic) both land on n-0 */
  place_commit(p, 1, 2);
  place_commit(p, 2, 4);
  CHECK(free_on(p, 0) == 2 && free_on(p, 1) == 8);

  /* Grow, keeping 2 GPUs in reserve: 10 free, so four 2-GPU tasks: task 1 on n-0 where the job
   * runs, tasks 2-4 on n-1; then 2 GPUs are left, not more than the reserve. */
  CHECK_OK(hs_packer_grow_shrink(p, &e, 1, &q, &grow));
  CHECK(hs_decision_bind_count(grow) == 4);
  CHECK(hs_decision_release_count(grow) == 0);
  CHECK(hs_decision_preemption_count(grow) == 0 && hs_decision_deferral_count(grow) == 0);
  for (i = 0; i < 4; ++i) {
    hs_bind_t b = bind_at(grow, i);
    CHECK(b.job_id == 1 && b.task == (uint32_t)(i + 1) && b.gpu_count == 2);
    CHECK_STR(b.node_name, i == 0 ? "n-0" : "n-1");
    CHECK(b.node == (i == 0 ? 0u : 1u));
    CHECK(b.gpu_count == 2 && b.gpus[0] != b.gpus[1]);
    grown_gpus[i + 1][0] = b.gpus[0] < b.gpus[1] ? b.gpus[0] : b.gpus[1];
    grown_gpus[i + 1][1] = b.gpus[0] < b.gpus[1] ? b.gpus[1] : b.gpus[0];
  }
  CHECK(free_on(p, 0) == 2 && free_on(p, 1) == 8); /* planning changes nothing */
  CHECK_OK(hs_packer_commit(p, grow));
  CHECK(free_on(p, 0) == 0 && free_on(p, 1) == 2);
  CHECK_STATUS(HS_CONFLICT, hs_packer_commit(p, grow)); /* tasks 1-4 are placed now */
  CHECK_CONTAINS(hs_last_error(), "job 1: task 1 is already placed");
  hs_decision_free(grow);

  /* 5 GPUs wait and 2 are free: job 1 gives back task 4, then task 3 (highest first), both on
   * n-1, reaching 6 free GPUs. The job keeps tasks 0-2. */
  q = params(5, 0);
  CHECK_OK(hs_packer_grow_shrink(p, &e, 1, &q, &shrink));
  CHECK(hs_decision_bind_count(shrink) == 0);
  CHECK(hs_decision_release_count(shrink) == 2);
  for (i = 0; i < 2; ++i) {
    hs_release_t r = release_at(shrink, i);
    const uint32_t task = (uint32_t)(4 - i);
    CHECK(r.job_id == 1 && r.task == task);
    CHECK_STR(r.job_name, "");
    CHECK(r.node == 1);
    CHECK_STR(r.node_name, "n-1");
    CHECK(same_gpus(r.gpus, r.gpu_count, grown_gpus[task], 2));
  }
  {
    hs_release_t r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    CHECK_STATUS(HS_OUT_OF_RANGE, hs_decision_release_at(shrink, 2, &r));
    CHECK_CONTAINS(hs_last_error(), "decision has 2 release entries; index 2 is out of range");
    r.struct_size = 8;
    CHECK_STATUS(HS_INVALID_ARGUMENT, hs_decision_release_at(shrink, 0, &r));
    CHECK_CONTAINS(hs_last_error(), "hs_release_t");
    CHECK_STATUS(HS_INVALID_ARGUMENT, hs_decision_release_at(shrink, 0, NULL));
  }
  CHECK(hs_decision_release_count(NULL) == 0);
  CHECK_OK(hs_packer_commit(p, shrink));
  CHECK(free_on(p, 0) == 0 && free_on(p, 1) == 6);
  /* committing it again: task 4 is gone; nothing changes */
  CHECK_STATUS(HS_CONFLICT, hs_packer_commit(p, shrink));
  CHECK_CONTAINS(hs_last_error(), "job 1: task 4 is no longer placed on node 'n-1'");
  CHECK(free_on(p, 1) == 6);
  hs_decision_free(shrink);

  /* Nothing optional left to give back beyond the base task... */
  q = params(100, 0);
  CHECK_OK(hs_packer_grow_shrink(p, &e, 1, &q, &shrink));
  CHECK(hs_decision_release_count(shrink) == 2); /* tasks 2 and 1 */
  CHECK(release_at(shrink, 0).task == 2 && release_at(shrink, 1).task == 1);
  CHECK_STR(release_at(shrink, 1).node_name, "n-0");
  CHECK_OK(hs_packer_commit(p, shrink));
  hs_decision_free(shrink);
  CHECK(free_on(p, 0) == 2 && free_on(p, 1) == 8);
  /* ... and the job runs on its base task until released as a whole */
  CHECK_OK(hs_packer_release(p, 1));
  CHECK_OK(hs_packer_release(p, 2));
  CHECK(free_on(p, 0) == 8);
  hs_packer_free(p);
}

static void test_stale_grow_and_bad_entries(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_decision_t* d = NULL;
  hs_elastic_job_t e = elastic(1, 1, 4);
  hs_elastic_job_t two[2];
  CHECK_OK(hs_packer_new(c, &p));
  hs_cluster_free(c);
  place_commit(p, 1, 8); /* n-0 whole */
  /* a grow decision made before another commit is stale: nothing changes */
  CHECK_OK(hs_packer_grow_shrink(p, &e, 1, NULL, &d));
  CHECK(hs_decision_bind_count(d) == 1 && bind_at(d, 0).node == 1);
  place_commit(p, 2, 8); /* n-1 whole */
  CHECK_STATUS(HS_CONFLICT, hs_packer_commit(p, d));
  CHECK_CONTAINS(hs_last_error(), "is no longer free");
  CHECK(free_on(p, 0) == 0 && free_on(p, 1) == 0);
  hs_decision_free(d);
  CHECK_OK(hs_packer_release(p, 2));

  e = elastic(7, 1, 4);
  CHECK_STATUS(HS_NOT_FOUND, hs_packer_grow_shrink(p, &e, 1, NULL, &d));
  CHECK_CONTAINS(hs_last_error(), "jobs[0]: job 7 is not committed");
  e = elastic(1, 0, 4);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_grow_shrink(p, &e, 1, NULL, &d));
  CHECK_CONTAINS(hs_last_error(), "base_tasks is 0");
  e = elastic(1, 2, 1);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_grow_shrink(p, &e, 1, NULL, &d));
  CHECK_CONTAINS(hs_last_error(), "max_tasks 1 is below base_tasks 2");
  e = elastic(1, 1, (1u << 20) + 1);
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_packer_grow_shrink(p, &e, 1, NULL, &d));
  two[0] = elastic(1, 1, 4);
  two[1] = elastic(1, 1, 4);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_grow_shrink(p, two, 2, NULL, &d));
  CHECK_CONTAINS(hs_last_error(), "jobs[1]: job 1 is listed twice");
  two[0].struct_size = 4;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_grow_shrink(p, two, 1, NULL, &d));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_grow_shrink(p, NULL, 1, NULL, &d));
  /* no elastic job: an empty decision */
  CHECK_OK(hs_packer_grow_shrink(p, NULL, 0, NULL, &d));
  CHECK(hs_decision_bind_count(d) == 0 && hs_decision_release_count(d) == 0);
  CHECK_OK(hs_packer_commit(p, d));
  hs_decision_free(d);
  CHECK(free_on(p, 0) == 0 && free_on(p, 1) == 8);
  hs_packer_free(p);
}

int main(void) {
  RUN(test_grow_then_shrink);
  RUN(test_stale_grow_and_bad_entries);
  return TEST_RESULT();
}
