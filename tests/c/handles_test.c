/* SPDX-License-Identifier: MIT */
/* C API tests: handle safety. A second free, a use after free, a handle of the wrong type and a
 * pointer the library never returned are refused with HS_INVALID_HANDLE (or, for functions that
 * return no status, a no-op that sets hs_last_error()), never undefined behaviour; this runs
 * under AddressSanitizer too, so the checks must not read freed memory. */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

static hs_cluster_t* make_cluster(void) {
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 2;
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

/* One NODE cell n0 of 2 GPUs, owned by VC "a". */
static hs_hived_config_t* tiny_hived_config(void) {
  hs_hived_config_t* cfg = NULL;
  CHECK_OK(hs_hived_config_new(&cfg));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "NODE", "GPU", 2, 1));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, HS_HIVED_TOP_LEVEL, "NODE", "n0", NULL));
  CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "a", "NODE", 1));
  return cfg;
}

static hs_hived_pod_t hived_pod(const char* name, int32_t leaves) {
  hs_hived_pod_t p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.name = name;
  p.vc = "a";
  p.leaf_type = "GPU";
  p.leaf_cells = leaves;
  return p;
}

static hs_capacity_spec_t* tiny_capacity_spec(void) {
  hs_capacity_spec_t* spec = NULL;
  CHECK_OK(hs_capacity_spec_new(&spec));
  CHECK_OK(hs_capacity_spec_add_queue(spec, "q", NULL, HS_ORDER_PRIORITY));
  CHECK_OK(hs_capacity_spec_add_quota(spec, "q", "a100", "gpu", 8000, HS_NO_LIMIT, HS_NO_LIMIT));
  return spec;
}

/* Makes the next hs_last_error() read "" (a successful guarded call clears it). */
static void clear_last_error(void) {
  const char* name = NULL;
  hs_cluster_t* c = make_cluster();
  CHECK_OK(hs_cluster_name(c, &name));
  hs_cluster_free(c);
  CHECK_STR(hs_last_error(), "");
}

static void test_status_name(void) {
  CHECK(HS_INVALID_HANDLE == 11);
  CHECK_STR(hs_status_name(HS_INVALID_HANDLE), "HS_INVALID_HANDLE");
  CHECK(hs_api_version() == 4);
}

/* Freeing any handle twice: the second free does nothing and names the problem. */
static void test_double_free_of_every_type(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_decision_t* d = NULL;
  hs_hived_config_t* cfg = tiny_hived_config();
  hs_hived_t* h = NULL;
  hs_capacity_spec_t* spec = tiny_capacity_spec();
  hs_capacity_t* q = NULL;
  hs_gang_t g = gang(1, 1, 2);
  CHECK_OK(hs_packer_new(c, &p));
  CHECK_OK(hs_packer_place(p, &g, &d));
  CHECK_OK(hs_hived_new(cfg, &h));
  CHECK_OK(hs_capacity_new(spec, &q));

  hs_cluster_free(c);
  clear_last_error();
  hs_cluster_free(c);
  CHECK_STR(hs_last_error(), "hs_cluster_free: argument 'cluster' was already freed");

  hs_decision_free(d);
  hs_decision_free(d);
  CHECK_STR(hs_last_error(), "hs_decision_free: argument 'decision' was already freed");
  hs_packer_free(p);
  hs_packer_free(p);
  CHECK_STR(hs_last_error(), "hs_packer_free: argument 'packer' was already freed");
  hs_hived_free(h);
  hs_hived_free(h);
  CHECK_STR(hs_last_error(), "hs_hived_free: argument 'hived' was already freed");
  hs_hived_config_free(cfg);
  hs_hived_config_free(cfg);
  CHECK_STR(hs_last_error(), "hs_hived_config_free: argument 'config' was already freed");
  hs_capacity_free(q);
  hs_capacity_free(q);
  CHECK_STR(hs_last_error(), "hs_capacity_free: argument 'capacity' was already freed");
  hs_capacity_spec_free(spec);
  hs_capacity_spec_free(spec);
  CHECK_STR(hs_last_error(), "hs_capacity_spec_free: argument 'spec' was already freed");

  /* NULL stays a silent no-op */
  clear_last_error();
  hs_cluster_free(NULL);
  hs_decision_free(NULL);
  CHECK_STR(hs_last_error(), "");
}

/* Every kind of call on a freed handle: HS_INVALID_HANDLE naming the argument, out-parameters
 * untouched; functions returning counts or digests return 0 and set the message. */
static void test_use_after_free(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_packer_t* p2 = NULL;
  hs_decision_t* d = NULL;
  hs_decision_t* out = NULL;
  hs_hived_config_t* cfg = tiny_hived_config();
  hs_hived_t* h = NULL;
  hs_capacity_spec_t* spec = tiny_capacity_spec();
  hs_capacity_t* q = NULL;
  hs_gang_t g = gang(1, 1, 2);
  hs_hived_pod_t pod = hived_pod("p", 1);
  hs_bind_t b;
  const char* name = "untouched";
  uint32_t count = 77;
  CHECK_OK(hs_packer_new(c, &p));
  CHECK_OK(hs_hived_new(cfg, &h));
  CHECK_OK(hs_capacity_new(spec, &q));

  hs_cluster_free(c);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_cluster_node_name(c, 0, &name));
  CHECK_STR(hs_last_error(), "hs_cluster_node_name: argument 'cluster' was already freed");
  CHECK_STR(name, "untouched");
  CHECK(hs_cluster_node_count(c) == 0);
  CHECK_STR(hs_last_error(), "hs_cluster_node_count: argument 'cluster' was already freed");
  CHECK_STATUS(HS_INVALID_HANDLE, hs_packer_new(c, &p2));
  CHECK(p2 == NULL);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_hived_config_derive_cells(cfg, c, 0));

  /* the packer keeps its own copy of the cluster: it still works */
  CHECK_OK(hs_packer_place(p, &g, &d));
  CHECK(hs_decision_bind_count(d) == 1);
  hs_decision_free(d);
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK_STATUS(HS_INVALID_HANDLE, hs_decision_bind_at(d, 0, &b));
  CHECK_STR(hs_last_error(), "hs_decision_bind_at: argument 'decision' was already freed");
  CHECK(b.node_name == NULL);
  CHECK(hs_decision_bind_count(d) == 0);
  CHECK(hs_decision_deferral_count(d) == 0);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_packer_commit(p, d));
  CHECK_CONTAINS(hs_last_error(), "argument 'decision' was already freed");

  hs_packer_free(p);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_packer_place(p, &g, &out));
  CHECK_STR(hs_last_error(), "hs_packer_place: argument 'packer' was already freed");
  CHECK(out == NULL);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_packer_release(p, 1));
  CHECK_STATUS(HS_INVALID_HANDLE, hs_packer_free_gpu_count(p, 0, &count));
  CHECK(count == 77);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_packer_grow_shrink(p, NULL, 0, NULL, &out));
  CHECK(out == NULL);

  hs_hived_config_free(cfg);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_hived_config_add_cell_type(cfg, "X", "GPU", 2, 0));
  CHECK_STR(hs_last_error(), "hs_hived_config_add_cell_type: argument 'config' was already freed");
  CHECK(hs_hived_config_cell_type_count(cfg) == 0);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_hived_new(cfg, &h));

  hs_hived_free(h);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_hived_schedule(h, &pod, HS_HIVED_FILTERING, &out));
  CHECK_STR(hs_last_error(), "hs_hived_schedule: argument 'hived' was already freed");
  CHECK_STATUS(HS_INVALID_HANDLE, hs_hived_what_if(h, &pod, HS_HIVED_FILTERING, &out));
  CHECK(out == NULL);
  CHECK(hs_hived_state_digest(h) == 0);
  CHECK_STR(hs_last_error(), "hs_hived_state_digest: argument 'hived' was already freed");
  CHECK(hs_hived_node_count(h) == 0);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_hived_release(h, "p"));
  CHECK_STATUS(HS_INVALID_HANDLE, hs_hived_set_node_health(h, "n0", 0));

  hs_capacity_spec_free(spec);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_capacity_spec_add_queue(spec, "r", NULL, HS_ORDER_PRIORITY));
  CHECK_STR(hs_last_error(), "hs_capacity_spec_add_queue: argument 'spec' was already freed");
  hs_capacity_free(q);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_capacity_plan(q, NULL, &out));
  CHECK_STR(hs_last_error(), "hs_capacity_plan: argument 'capacity' was already freed");
  CHECK(out == NULL);
  CHECK(hs_capacity_pending_count(q) == 0);
  CHECK(hs_capacity_admitted_count(q) == 0);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_capacity_release(q, 1));
}

/* A freed handle stays detected while new handles of the same type are made: its memory is
 * quarantined, so a new handle never gets its address while it is in the quarantine. */
static void test_freed_address_is_not_reused(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_decision_t* first = NULL;
  hs_decision_t* later = NULL;
  hs_gang_t g = gang(1, 1, 8);
  int i;
  CHECK_OK(hs_packer_new(c, &p));
  CHECK_OK(hs_packer_place(p, &g, &first));
  hs_decision_free(first);
  for (i = 0; i < 100; ++i) {
    CHECK_OK(hs_packer_place(p, &g, &later));
    CHECK(later != first);
    /* the new decision works; the stale one is refused */
    CHECK(hs_decision_bind_count(later) == 1);
    CHECK(hs_decision_bind_count(first) == 0);
    hs_decision_free(later);
  }
  /* a fresh cluster never takes the stale cluster's place either */
  hs_cluster_free(c);
  {
    hs_cluster_t* again = make_cluster();
    CHECK(again != c);
    CHECK(hs_cluster_node_count(again) == 2);
    CHECK(hs_cluster_node_count(c) == 0);
    hs_cluster_free(again);
  }
  hs_packer_free(p);
}

/* A live handle passed as another type (a cast gone wrong, a mixed-up void* in a binding) is
 * refused naming both types, and the free that it reaches frees nothing. */
static void test_handle_of_another_type(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_decision_t* d = NULL;
  hs_gang_t g = gang(1, 1, 2);
  const char* name = NULL;
  CHECK_OK(hs_packer_new(c, &p));
  CHECK_STATUS(HS_INVALID_HANDLE, hs_cluster_name((const hs_cluster_t*)(const void*)p, &name));
  CHECK_STR(hs_last_error(),
            "hs_cluster_name: argument 'cluster' is an hs_packer_t, not an "
            "hs_cluster_t");
  hs_cluster_free((hs_cluster_t*)(void*)p);
  CHECK_STR(hs_last_error(),
            "hs_cluster_free: argument 'cluster' is an hs_packer_t, not an "
            "hs_cluster_t");
  /* the packer survived the refused free */
  CHECK_OK(hs_packer_place(p, &g, &d));
  CHECK(hs_decision_bind_count(d) == 1);
  CHECK_STATUS(HS_INVALID_HANDLE,
               hs_packer_commit((hs_packer_t*)(void*)c, (const hs_decision_t*)(const void*)p));
  CHECK_STR(hs_last_error(),
            "hs_packer_commit: argument 'packer' is an hs_cluster_t, not an "
            "hs_packer_t");
  CHECK_OK(hs_packer_commit(p, d));
  hs_decision_free(d);
  hs_packer_free(p);
  hs_cluster_free(c);
}

/* A pointer the library never returned is refused without being read. */
static void test_foreign_pointer(void) {
  uint64_t not_a_handle[8];
  const char* name = "untouched";
  memset(not_a_handle, 0, sizeof not_a_handle);
  CHECK_STATUS(HS_INVALID_HANDLE,
               hs_cluster_name((const hs_cluster_t*)(const void*)not_a_handle, &name));
  CHECK_STR(hs_last_error(),
            "hs_cluster_name: argument 'cluster' is not a live hs_cluster_t "
            "(freed, or never returned by hetsched)");
  CHECK_STR(name, "untouched");
  hs_decision_free((hs_decision_t*)(void*)not_a_handle);
  CHECK_STR(hs_last_error(),
            "hs_decision_free: argument 'decision' is not a live hs_decision_t "
            "(freed, or never returned by hetsched)");
}

/* A decision owns its data: it stays readable after the policy that made it is freed, and only
 * that (live) policy may commit it. */
static void test_decision_outlives_its_policy(void) {
  hs_cluster_t* c = make_cluster();
  hs_packer_t* p = NULL;
  hs_packer_t* other = NULL;
  hs_decision_t* d = NULL;
  hs_gang_t g = gang(1, 2, 8);
  hs_bind_t b;
  CHECK_OK(hs_packer_new(c, &p));
  CHECK_OK(hs_packer_new(c, &other));
  CHECK_OK(hs_packer_place(p, &g, &d));
  hs_packer_free(p);
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK_OK(hs_decision_bind_at(d, 1, &b));
  CHECK_STR(b.node_name, "n-1");
  CHECK(b.gpu_count == 8);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_packer_commit(p, d));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_packer_commit(other, d));
  CHECK_CONTAINS(hs_last_error(), "on this packer");
  hs_decision_free(d);
  hs_packer_free(other);
  hs_cluster_free(c);
}

int main(void) {
  RUN(test_status_name);
  RUN(test_double_free_of_every_type);
  RUN(test_use_after_free);
  RUN(test_freed_address_is_not_reused);
  RUN(test_handle_of_another_type);
  RUN(test_foreign_pointer);
  RUN(test_decision_outlives_its_policy);
  return TEST_RESULT();
}
