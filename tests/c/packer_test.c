/* SPDX-License-Identifier: MIT */
/* C API tests: the gang packer on 4 DGX A100 in racks of 2 (place, commit, release, conflicts). */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

static hs_cluster_t* make_cluster(void) {
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 4;
  o.nodes_per_rack = 2;
  o.name_prefix = "n";
  CHECK_OK(hs_cluster_from_template("dgx-a100", &o, &c));
  return c;
}

static hs_gang_t gang(uint64_t job, uint32_t tasks, uint32_t gpus) {
  hs_gang_t g;
  memset(&g, 0, sizeof g);
  g.struct_size = sizeof g;
  g.job_id = job;
  g.tasks = tasks;
  g.gpus_per_task = gpus;
  g.locality = HS_LOCALITY_CONSOLIDATE;
  return g;
}

/* Returns 1 if bind `index` of `d` is on `node` with exactly `gpus`. */
static int bind_is(const hs_decision_t* d, size_t index, const char* node, const uint32_t* gpus,
                   uint32_t count) {
  hs_bind_t b;
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  if (hs_decision_bind_at(d, index, &b) != HS_OK) return 0;
  if (strcmp(b.node_name, node) != 0 || b.gpu_count != count) return 0;
  return memcmp(b.gpus, gpus, count * sizeof(uint32_t)) == 0;
}

/* Places and commits `g`; returns the decision (caller frees). */
static hs_decision_t* place_commit(hs_packer_t* p, hs_gang_t g) {
  hs_decision_t* d = NULL;
  CHECK_OK(hs_packer_place(p, &g, &d));
  CHECK_OK(hs_packer_commit(p, d));
  return d;
}

static uint32_t free_on(const hs_packer_t* p, uint32_t node) {
  uint32_t n = 99;
  CHECK_OK(hs_packer_free_gpu_count(p, node, &n));
  return n;
}

static void test_gang_lifecycle(void) {
  static const uint32_t all8[] = {0, 1, 2, 3, 4, 5, 6, 7};
  static const uint32_t g01[] = {0, 1};
  static const uint32_t g23[] = {2, 3};
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_decision_t* d = NULL;
  hs_deferral_t def;
  hs_bind_t b;
  CHECK_OK(hs_packer_new(c, &p));
  hs_cluster_free(c); /* the packer keeps its own reference */

  /* 2 x 8 GPUs: nodes n-0 and n-1 (rack 0, the first of two equal racks), GPUs 0-7 each */
  d = place_commit(p, gang(1, 2, 8));
  CHECK(hs_decision_bind_count(d) == 2);
  CHECK(hs_decision_deferral_count(d) == 0);
  CHECK(bind_is(d, 0, "n-0", all8, 8));
  CHECK(bind_is(d, 1, "n-1", all8, 8));
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK_OK(hs_decision_bind_at(d, 1, &b));
  CHECK(b.job_id == 1 && b.task == 1 && b.node == 1);
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_decision_bind_at(d, 2, &b));
  {
    /* a caller built against a newer header (a larger struct) gets the fields this library
     * knows; the bytes past them are left alone */
    struct {
      hs_bind_t b;
      uint64_t newer_field;
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.b.struct_size = (uint32_t)sizeof newer;
    newer.newer_field = 0x5eedu;
    CHECK_OK(hs_decision_bind_at(d, 0, &newer.b));
    CHECK(newer.b.job_id == 1 && newer.b.gpu_count == 8);
    CHECK(newer.b.struct_size == (uint32_t)sizeof newer && newer.newer_field == 0x5eedu);
    /* one smaller than this version's first struct is refused */
    newer.b.struct_size = 8;
    CHECK_STATUS(HS_INVALID_ARGUMENT, hs_decision_bind_at(d, 0, &newer.b));
    CHECK_CONTAINS(hs_last_error(), "struct_size");
  }
  hs_decision_free(d);
  CHECK(free_on(p, 0) == 0 && free_on(p, 1) == 0);

  /* 1 x 2: n-2 (best fit among the free nodes, lowest index), the PCIe-switch pair 0,1 */
  d = place_commit(p, gang(2, 1, 2));
  CHECK(bind_is(d, 0, "n-2", g01, 2));
  hs_decision_free(d);
  /* another 1 x 2 goes next to it (n-2 has 6 free, fewer than n-3's 8): GPUs 2,3 */
  d = place_commit(p, gang(3, 1, 2));
  CHECK(bind_is(d, 0, "n-2", g23, 2));
  hs_decision_free(d);
  /* 1 x 6 on n-3 leaves 4 free on n-2 and 2 on n-3 */
  d = place_commit(p, gang(4, 1, 6));
  CHECK(hs_decision_bind_count(d) == 1);
  hs_decision_free(d);
  CHECK(free_on(p, 2) == 4 && free_on(p, 3) == 2);

  /* 1 x 6: 6 GPUs free in total but no node has 6: fragmented, nothing changes */
  {
    hs_gang_t g = gang(5, 1, 6);
    CHECK_OK(hs_packer_place(p, &g, &d));
  }
  CHECK(hs_decision_bind_count(d) == 0);
  CHECK(hs_decision_deferral_count(d) == 1);
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  CHECK_OK(hs_decision_deferral_at(d, 0, &def));
  CHECK(def.job_id == 5 && def.reason == HS_DEFER_FRAGMENTED);
  CHECK_CONTAINS(def.message, "fragmented");
  CHECK_OK(hs_packer_commit(p, d)); /* no binds: a no-op */
  hs_decision_free(d);
  /* 1 x 8: fewer free GPUs than asked */
  {
    hs_gang_t g = gang(6, 1, 8);
    CHECK_OK(hs_packer_place(p, &g, &d));
  }
  CHECK_OK(hs_decision_deferral_at(d, 0, &def));
  CHECK(def.reason == HS_DEFER_INSUFFICIENT_CAPACITY);
  hs_decision_free(d);

  /* release job 1: n-0 and n-1 are free again and an 8-GPU task fits on n-0 */
  CHECK_OK(hs_packer_release(p, 1));
  CHECK(free_on(p, 0) == 8 && free_on(p, 1) == 8);
  d = place_commit(p, gang(6, 1, 8));
  CHECK(bind_is(d, 0, "n-0", all8, 8));
  hs_decision_free(d);
  CHECK_STATUS(HS_NOT_FOUND, hs_packer_release(p, 1));
  CHECK_CONTAINS(hs_last_error(), "job 1");
  hs_packer_free(p);
}

static void test_conflicts_and_errors(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_packer_t* other = NULL;
  hs_decision_t* a = NULL;
  hs_decision_t* b = NULL;
  hs_gang_t ga = gang(10, 4, 8);
  hs_gang_t gb = gang(11, 4, 8);
  hs_gang_t bad = gang(12, 0, 8);
  CHECK_OK(hs_packer_new(c, &p));
  CHECK_OK(hs_packer_new(c, &other));
  /* two decisions made on the same free GPUs: the second commit is stale */
  CHECK_OK(hs_packer_place(p, &ga, &a));
  CHECK_OK(hs_packer_place(p, &gb, &b));
  CHECK(hs_decision_bind_count(a) == 4 && hs_decision_bind_count(b) == 4);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_commit(other, a));
  CHECK_CONTAINS(hs_last_error(), "this packer");
  CHECK_OK(hs_packer_commit(p, a));
  CHECK_STATUS(HS_CONFLICT, hs_packer_commit(p, b));
  CHECK_CONTAINS(hs_last_error(), "no longer free");
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_packer_commit(p, a));
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_packer_place(p, &ga, &b));
  /* the failed commits changed nothing: job 11 is unknown, job 10 holds all 32 GPUs */
  CHECK_STATUS(HS_NOT_FOUND, hs_packer_release(p, 11));
  CHECK(free_on(p, 0) == 0 && free_on(p, 3) == 0);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_place(p, &bad, &b));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_place(p, NULL, &b));
  CHECK_CONTAINS(hs_last_error(), "gang");
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_packer_free_gpu_count(p, 4, &(uint32_t){0}));
  hs_decision_free(a);
  hs_decision_free(b);
  hs_packer_free(p);
  hs_packer_free(other);
  hs_cluster_free(c);
}

static void test_level_limits_and_spread(void) {
  static const uint32_t g0[] = {0};
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_decision_t* d = NULL;
  hs_deferral_t def;
  hs_gang_t three = gang(1, 3, 8);
  hs_gang_t one = gang(2, 1, 1);
  CHECK_OK(hs_packer_new(c, &p));
  /* three whole nodes never fit in one rack of two */
  three.max_level = HS_LEVEL_RACK;
  CHECK_OK(hs_packer_place(p, &three, &d));
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  CHECK_OK(hs_decision_deferral_at(d, 0, &def));
  CHECK(def.reason == HS_DEFER_TOPOLOGY_UNSATISFIABLE);
  hs_decision_free(d);
  /* without the limit they span both racks: n-0, n-1, n-2 */
  three.max_level = HS_LEVEL_CLUSTER;
  CHECK_OK(hs_packer_place(p, &three, &d));
  CHECK(hs_decision_bind_count(d) == 3);
  hs_decision_free(d);
  /* the cluster has no NVLink domains: that limit is an error */
  three.max_level = HS_LEVEL_NVLINK_DOMAIN;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_place(p, &three, &d));
  /* a locality-insensitive single GPU: one GPU of the first node */
  one.locality = HS_LOCALITY_SPREAD;
  CHECK_OK(hs_packer_place(p, &one, &d));
  CHECK(hs_decision_bind_count(d) == 1);
  CHECK(bind_is(d, 0, "n-0", g0, 1));
  hs_decision_free(d);
  hs_packer_free(p);
  hs_cluster_free(c);
}

int main(void) {
  RUN(test_gang_lifecycle);
  RUN(test_conflicts_and_errors);
  RUN(test_level_limits_and_spread);
  return TEST_RESULT();
}
