/* SPDX-License-Identifier: MIT */
/* C API tests: HiveD config builder, schedule / commit / release, waits, preemption, errors,
 * cells derived from a cluster, and the side-effect-free what-if. */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

/* Chain RACK(2 NODE) -> NODE(2 PCIE, node level) -> PCIE(2 GPU): one rack of nodes n0 and n1
 * (n1's leaves permuted 3,2,1,0), plus a top-level NODE cell n2. VC "a" owns one RACK.NODE cell,
 * VC "b" one NODE cell. */
static hs_hived_config_t* small_config(void) {
  hs_hived_config_t* cfg = NULL;
  int32_t rack = -1;
  int32_t n1 = -1;
  int32_t p0 = -1;
  int32_t p1 = -1;
  CHECK_OK(hs_hived_config_new(&cfg));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "PCIE", "GPU", 2, 0));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "NODE", "PCIE", 2, 1));
  CHECK_OK(hs_hived_config_add_cell_type(cfg, "RACK", "NODE", 2, 0));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, HS_HIVED_TOP_LEVEL, "RACK", NULL, &rack));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, rack, NULL, "n0", NULL));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, rack, NULL, "n1", &n1));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, n1, NULL, NULL, &p0));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, p0, NULL, "3", NULL));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, p0, NULL, "2", NULL));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, n1, NULL, NULL, &p1));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, p1, NULL, "1", NULL));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, p1, NULL, "0", NULL));
  CHECK_OK(hs_hived_config_add_physical_cell(cfg, HS_HIVED_TOP_LEVEL, "NODE", "n2", NULL));
  CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "a", "RACK.NODE", 1));
  CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "b", "NODE", 1));
  return cfg;
}

static hs_hived_t* make_scheduler(void) {
  hs_hived_config_t* cfg = small_config();
  hs_hived_t* h = NULL;
  CHECK_OK(hs_hived_new(cfg, &h));
  hs_hived_config_free(cfg); /* the scheduler does not keep the config */
  return h;
}

static hs_hived_pod_t pod(const char* name, const char* vc, int32_t priority, int32_t leaves) {
  hs_hived_pod_t p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.name = name;
  p.vc = vc;
  p.priority = priority;
  p.leaf_type = "GPU";
  p.leaf_cells = leaves;
  return p;
}

static hs_bind_t bind_of(const hs_decision_t* d) {
  hs_bind_t b;
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK_OK(hs_decision_bind_at(d, 0, &b));
  return b;
}

static void test_nodes(void) {
  hs_hived_t* h = make_scheduler();
  const char* s = NULL;
  /* nodes in first-appearance order */
  CHECK(hs_hived_node_count(h) == 3);
  CHECK_OK(hs_hived_node_name(h, 1, &s));
  CHECK_STR(s, "n1");
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_hived_node_name(h, 3, &s));
  hs_hived_free(h);
}

static void test_bind_commit_release(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t p1 = pod("p1", "a", 1, 2);
  hs_hived_pod_t p2 = pod("p2", "a", 1, 2);
  hs_decision_t* d = NULL;
  hs_decision_t* again = NULL;
  hs_bind_t b;
  CHECK_OK(hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &d));
  CHECK(hs_decision_bind_count(d) == 1);
  CHECK(hs_decision_preemption_count(d) == 0 && hs_decision_deferral_count(d) == 0);
  b = bind_of(d);
  /* buddy allocation splits the rack; n0 gets the pod on its first PCIe switch: GPUs 0, 1 */
  CHECK_STR(b.node_name, "n0");
  CHECK_STR(b.job_name, "p1");
  CHECK(b.node == UINT32_MAX && b.gpu_count == 2 && b.gpus[0] == 0 && b.gpus[1] == 1);
  CHECK_OK(hs_hived_commit(h, d));
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_hived_commit(h, d));
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &again));
  CHECK(again == NULL);
  hs_decision_free(d);
  /* the second pod takes the other PCIe switch of n0: GPUs 2, 3 */
  CHECK_OK(hs_hived_schedule(h, &p2, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpu_count == 2 && b.gpus[0] == 2 && b.gpus[1] == 3);
  CHECK_OK(hs_hived_commit(h, d));
  hs_decision_free(d);
  /* releasing p1 frees GPUs 0, 1 again: a new pod lands there */
  CHECK_OK(hs_hived_release(h, "p1"));
  CHECK_STATUS(HS_NOT_FOUND, hs_hived_release(h, "p1"));
  CHECK_CONTAINS(hs_last_error(), "p1");
  p1.name = "p3";
  CHECK_OK(hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpus[0] == 0 && b.gpus[1] == 1);
  hs_decision_free(d);
  hs_hived_free(h);
}

static void test_vc_b_gets_n2(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t p = pod("w", "b", 0, 4);
  hs_decision_t* d = NULL;
  hs_bind_t b;
  /* VC b's only cell is the top-level node n2: all four GPUs, in tree order */
  CHECK_OK(hs_hived_schedule(h, &p, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n2");
  CHECK(b.gpu_count == 4 && b.gpus[0] == 0 && b.gpus[1] == 1 && b.gpus[2] == 2 && b.gpus[3] == 3);
  hs_decision_free(d);
  hs_hived_free(h);
}

static void test_errors_change_nothing(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t bad_vc = pod("x", "zzz", 1, 1);
  hs_hived_pod_t bad_prio = pod("x", "a", 1001, 1);
  hs_hived_pod_t bad_type = pod("x", "a", 1, 1);
  hs_hived_pod_t ok = pod("p1", "a", 1, 2);
  hs_decision_t* d = NULL;
  hs_decision_t* other = NULL;
  hs_hived_t* h2 = make_scheduler();
  hs_bind_t b;
  CHECK_STATUS(HS_NOT_FOUND, hs_hived_schedule(h, &bad_vc, HS_HIVED_PREEMPTING, &d));
  CHECK_CONTAINS(hs_last_error(), "VC zzz");
  CHECK(d == NULL);
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_hived_schedule(h, &bad_prio, HS_HIVED_PREEMPTING, &d));
  bad_type.leaf_type = "TPU";
  CHECK(hs_hived_schedule(h, &bad_type, HS_HIVED_PREEMPTING, &d) != HS_OK);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(h, NULL, HS_HIVED_FILTERING, &d));
  CHECK_CONTAINS(hs_last_error(), "'pod'");
  ok.struct_size = 8;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_schedule(h, &ok, HS_HIVED_FILTERING, &d));
  ok.struct_size = sizeof ok;
  /* nothing changed: p1 still lands on n0 GPUs 0, 1 */
  CHECK_OK(hs_hived_schedule(h, &ok, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpus[0] == 0 && b.gpus[1] == 1);
  /* a decision commits only on the scheduler that made it */
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_commit(h2, d));
  CHECK_OK(hs_hived_schedule(h2, &ok, HS_HIVED_FILTERING, &other));
  CHECK_OK(hs_hived_commit(h2, other));
  CHECK_STATUS(HS_NOT_FOUND, hs_hived_set_node_health(h, "n9", 0));
  CHECK_CONTAINS(hs_last_error(), "n9");
  hs_decision_free(d);
  hs_decision_free(other);
  hs_hived_free(h);
  hs_hived_free(h2);
}

static void test_bad_node_is_avoided(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t p1 = pod("p1", "a", 1, 2);
  hs_decision_t* d = NULL;
  hs_bind_t b;
  /* n0 goes bad: VC a's node cell binds to n1, whose first PCIe switch holds leaves 3, 2 */
  CHECK_OK(hs_hived_set_node_health(h, "n0", 0));
  CHECK_OK(hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n1");
  CHECK(b.gpu_count == 2 && b.gpus[0] == 3 && b.gpus[1] == 2);
  hs_decision_free(d);
  /* healthy again: n0 is preferred once more */
  CHECK_OK(hs_hived_set_node_health(h, "n0", 1));
  CHECK_OK(hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpu_count == 2 && b.gpus[0] == 0 && b.gpus[1] == 1);
  hs_decision_free(d);
  hs_hived_free(h);
}

static void test_gang_waits(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_member_t members[1] = {{2, 4}};
  hs_hived_pod_t g = pod("g1", "a", 1, 4);
  hs_decision_t* d = NULL;
  hs_deferral_t w;
  g.group = "gang";
  g.members = members;
  g.member_count = 1;
  /* VC a has one 4-GPU node: a gang of two 4-GPU pods waits */
  CHECK_OK(hs_hived_schedule(h, &g, HS_HIVED_PREEMPTING, &d));
  CHECK(hs_decision_bind_count(d) == 0);
  CHECK(hs_decision_deferral_count(d) == 1);
  memset(&w, 0, sizeof w);
  w.struct_size = sizeof w;
  CHECK_OK(hs_decision_deferral_at(d, 0, &w));
  CHECK(w.reason == HS_DEFER_WAIT);
  CHECK_STR(w.job_name, "g1");
  CHECK_STR(w.message, "insufficient capacity when scheduling in VC a");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_commit(h, d));
  CHECK_CONTAINS(hs_last_error(), "no bind");
  hs_decision_free(d);
  hs_hived_free(h);
}

static void test_preemption(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t low = pod("low", "a", 0, 4);
  hs_hived_pod_t high = pod("high", "a", 5, 4);
  hs_decision_t* d = NULL;
  hs_preemption_t v;
  hs_bind_t b;
  CHECK_OK(hs_hived_schedule(h, &low, HS_HIVED_PREEMPTING, &d));
  CHECK_OK(hs_hived_commit(h, d));
  hs_decision_free(d);
  /* the higher-priority pod of the same VC preempts "low" on n0 */
  CHECK_OK(hs_hived_schedule(h, &high, HS_HIVED_PREEMPTING, &d));
  CHECK(hs_decision_bind_count(d) == 0);
  CHECK(hs_decision_preemption_count(d) == 1);
  memset(&v, 0, sizeof v);
  v.struct_size = sizeof v;
  CHECK_OK(hs_decision_preemption_at(d, 0, &v));
  CHECK_STR(v.job_name, "low");
  CHECK_STR(v.node_name, "n0");
  CHECK_CONTAINS(v.reason, "high");
  hs_decision_free(d);
  /* once the victim is released, the preemptor binds on n0 */
  CHECK_OK(hs_hived_release(h, "low"));
  CHECK_OK(hs_hived_schedule(h, &high, HS_HIVED_PREEMPTING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpu_count == 4);
  CHECK_OK(hs_hived_commit(h, d));
  hs_decision_free(d);
  hs_hived_free(h);
}

static void test_config_errors(void) {
  hs_hived_config_t* cfg = small_config();
  hs_hived_t* h = NULL;
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_hived_config_add_cell_type(cfg, "NODE", "PCIE", 2, 1));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_config_add_cell_type(cfg, "X", "GPU", 0, 0));
  CHECK_STATUS(HS_NOT_FOUND, hs_hived_config_add_physical_cell(cfg, 99, NULL, NULL, NULL));
  CHECK_STATUS(HS_INVALID_ARGUMENT,
               hs_hived_config_add_physical_cell(cfg, HS_HIVED_TOP_LEVEL, NULL, "n5", NULL));
  /* three RACK.NODE cells do not fit in one rack */
  CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "a", "RACK.NODE", 2));
  CHECK_STATUS(HS_FAILED_PRECONDITION, hs_hived_new(cfg, &h));
  CHECK_CONTAINS(hs_last_error(), "Illegal initial VC assignment");
  CHECK(h == NULL);
  hs_hived_config_free(cfg);
}

static void test_derived_cells(void) {
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  hs_hived_config_t* cfg = NULL;
  hs_hived_t* h = NULL;
  hs_decision_t* d = NULL;
  hs_hived_pod_t p = pod("p", "vc", 1, 8);
  const char* node_type = NULL;
  size_t i;
  hs_bind_t b;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 2;
  o.name_prefix = "n";
  CHECK_OK(hs_cluster_from_template("dgx1-v100", &o, &c));
  CHECK_OK(hs_hived_config_new(&cfg));
  CHECK_OK(hs_hived_config_derive_cells(cfg, c, 0));
  for (i = 0; i < hs_hived_config_cell_type_count(cfg); ++i) {
    const char* name = NULL;
    CHECK_OK(hs_hived_config_cell_type_name(cfg, i, &name));
    if (strstr(name, "/node") != NULL) node_type = name;
  }
  CHECK(node_type != NULL);
  if (node_type != NULL) {
    CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "vc", node_type, 2));
    CHECK_OK(hs_hived_new(cfg, &h));
    p.leaf_type = NULL; /* any leaf type */
    /* a whole 8-GPU node: the first node n-0, GPUs 0-7 */
    CHECK_OK(hs_hived_schedule(h, &p, HS_HIVED_FILTERING, &d));
    b = bind_of(d);
    CHECK_STR(b.node_name, "n-0");
    CHECK(b.gpu_count == 8);
    {
      uint32_t seen = 0;
      uint32_t k;
      for (k = 0; k < b.gpu_count; ++k) seen |= 1u << b.gpus[k];
      CHECK(seen == 0xffu);
    }
    hs_decision_free(d);
  }
  hs_hived_free(h);
  hs_hived_config_free(cfg);
  hs_cluster_free(c);
}

/* small_config() as hivedscheduler's JSON config shape */
static const char small_json[] =
    "{\"physicalCluster\": {\n"
    "  \"cellTypes\": {\n"
    "    \"PCIE\": {\"childCellType\": \"GPU\", \"childCellNumber\": 2},\n"
    "    \"NODE\": {\"childCellType\": \"PCIE\", \"childCellNumber\": 2, \"isNodeLevel\": true},\n"
    "    \"RACK\": {\"childCellType\": \"NODE\", \"childCellNumber\": 2}},\n"
    "  \"physicalCells\": [\n"
    "    {\"cellType\": \"RACK\", \"cellChildren\": [\n"
    "      {\"cellAddress\": \"n0\"},\n"
    "      {\"cellAddress\": \"n1\", \"cellChildren\": [\n"
    "        {\"cellChildren\": [{\"cellAddress\": \"3\"}, {\"cellAddress\": \"2\"}]},\n"
    "        {\"cellChildren\": [{\"cellAddress\": \"1\"}, {\"cellAddress\": \"0\"}]}]}]},\n"
    "    {\"cellType\": \"NODE\", \"cellAddress\": \"n2\"}]},\n"
    " \"virtualClusters\": {\n"
    "  \"a\": {\"virtualCells\": [{\"cellType\": \"RACK.NODE\", \"cellNumber\": 1}]},\n"
    "  \"b\": {\"virtualCells\": [{\"cellType\": \"NODE\", \"cellNumber\": 1}]}}}\n";

static void test_json_config(void) {
  static const char bad[] =
      "{\"physicalCluster\": {\"cellTypes\": {\"X\": {\"childCellType\": \"GPU\",\n"
      "  \"childCellNumber\": \"two\"}}, \"physicalCells\": []}}";
  hs_hived_config_t* cfg = NULL;
  hs_hived_config_t* none = NULL;
  hs_hived_t* h = NULL;
  hs_hived_pod_t p1 = pod("p1", "a", 1, 2);
  hs_hived_pod_t w = pod("w", "b", 0, 4);
  hs_decision_t* d = NULL;
  const char* text = NULL;
  hs_bind_t b;
  CHECK_OK(hs_hived_config_from_json(small_json, strlen(small_json), &cfg));
  CHECK(hs_hived_config_cell_type_count(cfg) == 3);
  CHECK_OK(hs_hived_new(cfg, &h));
  /* the same answers as the builder-made config: p1 on n0 GPUs 0, 1; VC b's pod on n2 */
  CHECK_OK(hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpu_count == 2 && b.gpus[0] == 0 && b.gpus[1] == 1);
  hs_decision_free(d);
  CHECK_OK(hs_hived_schedule(h, &w, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n2");
  hs_decision_free(d);
  /* n1's permuted leaves survive the round trip through JSON */
  CHECK_OK(hs_hived_config_to_json(cfg, &text));
  CHECK_CONTAINS(text, "\"physicalCluster\"");
  CHECK_CONTAINS(text, "\"n1\"");
  CHECK_CONTAINS(text, "\"RACK.NODE\"");
  /* errors name the JSON path */
  CHECK_STATUS(HS_PARSE_ERROR, hs_hived_config_from_json(bad, strlen(bad), &none));
  CHECK_CONTAINS(hs_last_error(), "childCellNumber");
  CHECK(none == NULL);
  CHECK_STATUS(HS_PARSE_ERROR, hs_hived_config_from_json("{\"physicalCluster\": ", 20, &none));
  hs_hived_free(h);
  hs_hived_config_free(cfg);
}

static hs_hived_what_if_t summary_of(const hs_decision_t* d) {
  hs_hived_what_if_t w;
  memset(&w, 0, sizeof w);
  w.struct_size = sizeof w;
  CHECK_OK(hs_decision_hived_what_if(d, &w));
  return w;
}

static void test_what_if_bind(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t p1 = pod("p1", "a", 1, 2);
  hs_hived_pod_t bad_vc = pod("x", "zzz", 1, 1);
  hs_decision_t* w = NULL;
  hs_decision_t* d = NULL;
  hs_decision_t* none = NULL;
  hs_hived_what_if_t s;
  hs_hived_placed_pod_t pp;
  hs_bind_t b;
  const char* name = NULL;
  const uint64_t digest = hs_hived_state_digest(h);
  CHECK(digest != 0 && hs_hived_state_digest(NULL) == 0);
  CHECK_OK(hs_hived_what_if(h, &p1, HS_HIVED_FILTERING, &w));
  /* nothing changed, not even cached orders */
  CHECK(hs_hived_state_digest(h) == digest);
  /* the same entries as hs_hived_schedule: p1 on n0, GPUs 0, 1 */
  CHECK(hs_decision_bind_count(w) == 1 && hs_decision_preemption_count(w) == 0);
  b = bind_of(w);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpu_count == 2 && b.gpus[0] == 0 && b.gpus[1] == 1);
  s = summary_of(w);
  CHECK(s.outcome == HS_HIVED_BIND && s.existing_group == HS_HIVED_GROUP_NEW);
  CHECK_STR(s.group, "p1");
  CHECK_STR(s.chain, "RACK");
  CHECK_STR(s.wait_reason, "");
  CHECK(s.pod_count == 1 && s.victim_count == 0 && s.lazy_preempted_count == 0);
  CHECK(s.cancelled_preemption_count == 0 && s.starts_preemption == 0);
  memset(&pp, 0, sizeof pp);
  pp.struct_size = sizeof pp;
  CHECK_OK(hs_decision_hived_pod_at(w, 0, &pp));
  CHECK(pp.leaf_cells == 2 && pp.index == 0 && pp.gpu_count == 2);
  CHECK_STR(pp.node, "n0");
  CHECK(pp.gpus[0] == 0 && pp.gpus[1] == 1);
  CHECK_STR(pp.physical_cells[0], "0/n0/0/0");
  CHECK_STR(pp.physical_cells[1], "0/n0/0/1");
  CHECK_STR(pp.virtual_cells[0], "a/0/0/0");
  CHECK_STR(pp.virtual_cells[1], "a/0/0/1");
  CHECK_STR(pp.preassigned_types[1], "NODE");
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_decision_hived_pod_at(w, 1, &pp));
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_decision_hived_lazy_preempted_at(w, 0, &name));
  pp.struct_size = 8;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_decision_hived_pod_at(w, 0, &pp));
  /* a what-if is never committed */
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_commit(h, w));
  CHECK_CONTAINS(hs_last_error(), "hs_hived_what_if");
  /* schedule then answers exactly that */
  CHECK_OK(hs_hived_schedule(h, &p1, HS_HIVED_FILTERING, &d));
  b = bind_of(d);
  CHECK_STR(b.node_name, "n0");
  CHECK(b.gpu_count == 2 && b.gpus[0] == 0 && b.gpus[1] == 1);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_decision_hived_what_if(d, &s));
  CHECK_CONTAINS(hs_last_error(), "hs_hived_what_if");
  CHECK_OK(hs_hived_commit(h, d));
  /* errors: a committed pod, an unknown VC; nothing changed */
  {
    const uint64_t committed = hs_hived_state_digest(h);
    CHECK(committed != digest);
    CHECK_STATUS(HS_ALREADY_EXISTS, hs_hived_what_if(h, &p1, HS_HIVED_FILTERING, &none));
    CHECK_STATUS(HS_NOT_FOUND, hs_hived_what_if(h, &bad_vc, HS_HIVED_PREEMPTING, &none));
    CHECK_CONTAINS(hs_last_error(), "VC zzz");
    CHECK_STATUS(HS_INVALID_ARGUMENT, hs_hived_what_if(h, &p1, (hs_hived_phase)7, &none));
    CHECK(none == NULL);
    CHECK(hs_hived_state_digest(h) == committed);
  }
  hs_decision_free(w);
  hs_decision_free(d);
  hs_hived_free(h);
}

static void test_what_if_preemption(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_pod_t low = pod("low", "a", 0, 4);
  hs_hived_pod_t high = pod("high", "a", 5, 4);
  hs_decision_t* d = NULL;
  hs_decision_t* w = NULL;
  hs_hived_what_if_t s;
  hs_hived_victim_t v;
  hs_hived_placed_pod_t pp;
  hs_preemption_t p;
  const char* name = NULL;
  uint64_t digest;
  low.lazy_preemption = 1;
  CHECK_OK(hs_hived_schedule(h, &low, HS_HIVED_PREEMPTING, &d));
  CHECK_OK(hs_hived_commit(h, d));
  hs_decision_free(d);
  digest = hs_hived_state_digest(h);
  /* "high" of the same VC drops low's guaranteed placement (lazy preemption), then still needs
   * n0, where "low" keeps running: low is the victim and high reserves n0 */
  CHECK_OK(hs_hived_what_if(h, &high, HS_HIVED_PREEMPTING, &w));
  CHECK(hs_hived_state_digest(h) == digest);
  CHECK(hs_decision_preemption_count(w) == 1 && hs_decision_bind_count(w) == 0);
  s = summary_of(w);
  CHECK(s.outcome == HS_HIVED_PREEMPT && s.starts_preemption == 1);
  CHECK(s.victim_count == 1 && s.lazy_preempted_count == 1 && s.pod_count == 1);
  memset(&v, 0, sizeof v);
  v.struct_size = sizeof v;
  CHECK_OK(hs_decision_hived_victim_at(w, 0, &v));
  CHECK_STR(v.pod, "low");
  CHECK_STR(v.node, "n0");
  CHECK_STR(v.group, "low");
  CHECK_STR(v.vc, "a");
  CHECK(v.priority == 0 && v.guaranteed_placement == 1);
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_decision_hived_victim_at(w, 1, &v));
  CHECK_OK(hs_decision_hived_lazy_preempted_at(w, 0, &name));
  CHECK_STR(name, "low");
  memset(&pp, 0, sizeof pp);
  pp.struct_size = sizeof pp;
  CHECK_OK(hs_decision_hived_pod_at(w, 0, &pp));
  CHECK_STR(pp.node, "n0");
  CHECK(pp.gpu_count == 4);
  /* schedule does it: the same victim */
  CHECK_OK(hs_hived_schedule(h, &high, HS_HIVED_PREEMPTING, &d));
  CHECK(hs_decision_preemption_count(d) == 1);
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  CHECK_OK(hs_decision_preemption_at(d, 0, &p));
  CHECK_STR(p.job_name, "low");
  hs_decision_free(d);
  hs_decision_free(w);
  /* asked again, "high" joins its own preemption, and low is no longer guaranteed */
  CHECK_OK(hs_hived_what_if(h, &high, HS_HIVED_PREEMPTING, &w));
  s = summary_of(w);
  CHECK(s.existing_group == HS_HIVED_GROUP_PREEMPTING && s.starts_preemption == 0);
  CHECK(s.lazy_preempted_count == 0 && s.victim_count == 1);
  CHECK_OK(hs_decision_hived_victim_at(w, 0, &v));
  CHECK(v.guaranteed_placement == 0);
  hs_decision_free(w);
  hs_hived_free(h);
}

static void test_what_if_wait(void) {
  hs_hived_t* h = make_scheduler();
  hs_hived_member_t members[1] = {{2, 4}};
  hs_hived_pod_t g = pod("g1", "a", 1, 4);
  hs_decision_t* w = NULL;
  hs_hived_what_if_t s;
  g.group = "gang";
  g.members = members;
  g.member_count = 1;
  CHECK_OK(hs_hived_what_if(h, &g, HS_HIVED_PREEMPTING, &w));
  CHECK(hs_decision_deferral_count(w) == 1);
  s = summary_of(w);
  CHECK(s.outcome == HS_HIVED_WAIT && s.pod_count == 0 && s.starts_preemption == 0);
  CHECK_STR(s.group, "gang");
  CHECK_STR(s.chain, "");
  CHECK_STR(s.wait_reason, "insufficient capacity when scheduling in VC a");
  s.struct_size = 4;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_decision_hived_what_if(w, &s));
  hs_decision_free(w);
  hs_hived_free(h);
}

int main(void) {
  RUN(test_nodes);
  RUN(test_bind_commit_release);
  RUN(test_vc_b_gets_n2);
  RUN(test_errors_change_nothing);
  RUN(test_bad_node_is_avoided);
  RUN(test_gang_waits);
  RUN(test_preemption);
  RUN(test_config_errors);
  RUN(test_derived_cells);
  RUN(test_json_config);
  RUN(test_what_if_bind);
  RUN(test_what_if_preemption);
  RUN(test_what_if_wait);
  return TEST_RESULT();
}
