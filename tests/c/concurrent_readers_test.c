/* SPDX-License-Identifier: MIT */
/* C API tests: const calls on shared objects from several threads (docs/c_api.md "Threads").
 * Four threads place gangs on one packer, ask one HiveD scheduler and one capacity state what-if
 * questions, plan admissions and read one shared decision, while each also makes and frees its
 * own decisions (the handle registry is written concurrently) and fails a call of its own (the
 * last error is per thread). Every answer must equal the single-threaded one. Built and run under
 * ThreadSanitizer by the CI's tsan step. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "c_test.h"

enum { thread_count = 4, rounds = 12, answer_count = 12 };

/* FNV-1a over 64-bit words: a digest of a decision's entries. */
static uint64_t mix(uint64_t h, uint64_t v) {
  int i;
  for (i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xffu;
    h *= 1099511628211ull;
  }
  return h;
}

static uint64_t mix_str(uint64_t h, const char* s) {
  for (; s != NULL && *s != '\0'; ++s) h = mix(h, (uint64_t)(unsigned char)*s);
  return mix(h, 0xffu);
}

/* Digest of every bind (job, task, node, GPUs), admission, preemption and deferral of `d`. */
static uint64_t digest(const hs_decision_t* d) {
  uint64_t h = 1469598103934665603ull;
  size_t i;
  uint32_t g;
  for (i = 0; i < hs_decision_bind_count(d); ++i) {
    hs_bind_t b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    if (hs_decision_bind_at(d, i, &b) != HS_OK) return 0;
    h = mix(mix(mix(h, b.job_id), b.task), b.node);
    h = mix_str(mix_str(h, b.node_name), b.job_name);
    for (g = 0; g < b.gpu_count; ++g) h = mix(h, b.gpus[g]);
  }
  for (i = 0; i < hs_decision_admission_count(d); ++i) {
    hs_admission_t a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    if (hs_decision_admission_at(d, i, &a) != HS_OK) return 0;
    h = mix_str(mix_str(mix(mix(h, a.job_id), (uint64_t)a.borrowing), a.queue), a.flavor);
  }
  for (i = 0; i < hs_decision_preemption_count(d); ++i) {
    hs_preemption_t p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    if (hs_decision_preemption_at(d, i, &p) != HS_OK) return 0;
    h = mix_str(mix_str(mix(mix(h, p.job_id), p.preemptor_id), p.job_name), p.reason);
  }
  for (i = 0; i < hs_decision_release_count(d); ++i) {
    hs_release_t r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    if (hs_decision_release_at(d, i, &r) != HS_OK) return 0;
    h = mix(mix(mix(h, r.job_id), r.task), r.node);
    for (g = 0; g < r.gpu_count; ++g) h = mix(h, r.gpus[g]);
  }
  for (i = 0; i < hs_decision_deferral_count(d); ++i) {
    hs_deferral_t w;
    memset(&w, 0, sizeof w);
    w.struct_size = sizeof w;
    if (hs_decision_deferral_at(d, i, &w) != HS_OK) return 0;
    h = mix_str(mix(mix(h, w.job_id), (uint64_t)w.reason), w.message);
  }
  return h;
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

static hs_hived_pod_t hived_pod(const char* name, const char* vc, int32_t priority,
                                int32_t leaves) {
  hs_hived_pod_t p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.name = name;
  p.vc = vc;
  p.priority = priority;
  p.leaf_cells = leaves;
  return p;
}

static const char* gpu_resource[1] = {"gpu"};

static hs_capacity_job_t capacity_job(uint64_t id, const char* queue, const int64_t* milli_gpu) {
  hs_capacity_job_t j;
  memset(&j, 0, sizeof j);
  j.struct_size = sizeof j;
  j.job_id = id;
  j.queue = queue;
  j.resources = gpu_resource;
  j.amounts = milli_gpu;
  j.resource_count = 1;
  return j;
}

/* The shared objects and the single-threaded answers. */
struct shared {
  hs_cluster_t* cluster;
  hs_packer_t* packer;
  hs_hived_t* hived;
  hs_capacity_t* capacity;
  const hs_decision_t* decision; /* read by every thread */
  uint64_t hived_digest;
  uint64_t expected[answer_count];
};

/* The questions every thread asks; answer i goes to out[i] (0 for a failed call). */
static void ask(const struct shared* s, uint64_t out[answer_count]) {
  static const uint32_t sizes[3] = {1, 4, 8};
  static const int64_t large = 24000;
  hs_decision_t* d = NULL;
  size_t k;
  memset(out, 0, answer_count * sizeof out[0]);
  for (k = 0; k < 3; ++k) { /* packer: 1, 4 and 8 GPUs, 2 tasks each */
    hs_gang_t g = gang(100 + k, 2, sizes[k]);
    if (hs_packer_place(s->packer, &g, &d) == HS_OK) out[k] = digest(d);
    hs_decision_free(d);
    d = NULL;
  }
  {
    /* a 4-GPU pod binds, a 16-GPU gang of two pods waits (one of a's nodes is busy) */
    hs_hived_pod_t p = hived_pod("probe", "a", 1, 4);
    hs_hived_member_t member = {2, 8};
    if (hs_hived_what_if(s->hived, &p, HS_HIVED_PREEMPTING, &d) == HS_OK) out[3] = digest(d);
    hs_decision_free(d);
    d = NULL;
    p = hived_pod("gang-0", "a", 1, 8);
    p.group = "gang";
    p.members = &member;
    p.member_count = 1;
    if (hs_hived_what_if(s->hived, &p, HS_HIVED_FILTERING, &d) == HS_OK) out[4] = digest(d);
    hs_decision_free(d);
    d = NULL;
    out[5] = hs_hived_state_digest(s->hived);
  }
  {
    hs_capacity_job_t j = capacity_job(50, "team-a", &large);
    if (hs_capacity_what_if(s->capacity, &j, NULL, &d) == HS_OK) out[6] = digest(d);
    hs_decision_free(d);
    d = NULL;
    if (hs_capacity_plan(s->capacity, NULL, &d) == HS_OK) out[7] = digest(d);
    hs_decision_free(d);
    d = NULL;
  }
  {
    /* grow-shrink of job 1 (2 x 4 GPUs on n-0, up to 4 tasks): grow, then shrink for 28 GPUs */
    hs_elastic_job_t e;
    hs_grow_shrink_params_t params;
    memset(&e, 0, sizeof e);
    e.struct_size = sizeof e;
    e.job_id = 1;
    e.base_tasks = 1;
    e.max_tasks = 4;
    memset(&params, 0, sizeof params);
    params.struct_size = sizeof params;
    if (hs_packer_grow_shrink(s->packer, &e, 1, &params, &d) == HS_OK) out[10] = digest(d);
    hs_decision_free(d);
    d = NULL;
    params.waiting_gpus = 28;
    if (hs_packer_grow_shrink(s->packer, &e, 1, &params, &d) == HS_OK) out[11] = digest(d);
    hs_decision_free(d);
    d = NULL;
  }
  out[8] = digest(s->decision);
  {
    const char* name = NULL;
    if (hs_cluster_node_name(s->cluster, 3, &name) == HS_OK) out[9] = mix_str(out[8], name);
  }
}

struct worker {
  const struct shared* s;
  int index;
  int mismatches;
  int error_mixups;
};

static void* run_worker(void* arg) {
  struct worker* w = (struct worker*)arg;
  int r;
  for (r = 0; r < rounds; ++r) {
    uint64_t got[answer_count];
    int i;
    char node[32];
    uint32_t found = 0;
    ask(w->s, got);
    for (i = 0; i < answer_count; ++i) w->mismatches += got[i] != w->s->expected[i];
    /* this thread's own failure: its message names its own node, whatever the others do */
    snprintf(node, sizeof node, "missing-%d-%d", w->index, r);
    if (hs_cluster_find_node(w->s->cluster, node, &found) != HS_NOT_FOUND ||
        strstr(hs_last_error(), node) == NULL) {
      ++w->error_mixups;
    }
  }
  return NULL;
}

static void test_concurrent_const_calls(void) {
  hs_cluster_options_t o;
  hs_hived_config_t* cfg = NULL;
  hs_capacity_spec_t* spec = NULL;
  hs_decision_t* d = NULL;
  hs_decision_t* held = NULL;
  struct shared s;
  struct worker workers[thread_count];
  pthread_t threads[thread_count];
  int i;
  static const int64_t gpus8 = 8000;
  static const int64_t gpus12 = 12000;
  memset(&s, 0, sizeof s);
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = 4;
  o.nodes_per_rack = 2;
  o.name_prefix = "n";
  CHECK_OK(hs_cluster_from_template("dgx-a100", &o, &s.cluster));

  /* the packer holds one 2 x 4 GPU job (on n-0) */
  CHECK_OK(hs_packer_new(s.cluster, &s.packer));
  {
    hs_gang_t g = gang(1, 2, 4);
    CHECK_OK(hs_packer_place(s.packer, &g, &d));
    CHECK_OK(hs_packer_commit(s.packer, d));
    hs_decision_free(d);
  }

  /* HiveD on node cells derived from the same cluster: VCs a and b own two nodes each; one
   * 8-GPU pod of a runs */
  CHECK_OK(hs_hived_config_new(&cfg));
  CHECK_OK(hs_hived_config_derive_cells(cfg, s.cluster, 0));
  {
    const char* node_type = NULL;
    size_t t;
    for (t = 0; t < hs_hived_config_cell_type_count(cfg); ++t) {
      const char* name = NULL;
      CHECK_OK(hs_hived_config_cell_type_name(cfg, t, &name));
      if (strstr(name, "/node") != NULL) node_type = name;
    }
    CHECK(node_type != NULL);
    CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "a", node_type, 2));
    CHECK_OK(hs_hived_config_add_virtual_cells(cfg, "b", node_type, 2));
  }
  CHECK_OK(hs_hived_new(cfg, &s.hived));
  hs_hived_config_free(cfg);
  {
    hs_hived_pod_t p = hived_pod("running", "a", 1, 8);
    CHECK_OK(hs_hived_schedule(s.hived, &p, HS_HIVED_FILTERING, &d));
    CHECK(hs_decision_bind_count(d) == 1);
    CHECK_OK(hs_hived_commit(s.hived, d));
    hs_decision_free(d);
  }

  /* capacity: team-a runs 8 GPUs, team-b waits with 12 */
  CHECK_OK(hs_capacity_spec_new(&spec));
  CHECK_OK(hs_capacity_spec_add_cohort(spec, "org", NULL));
  CHECK_OK(hs_capacity_spec_add_queue(spec, "team-a", "org", HS_ORDER_PRIORITY));
  CHECK_OK(hs_capacity_spec_add_queue(spec, "team-b", "org", HS_ORDER_PRIORITY));
  CHECK_OK(
      hs_capacity_spec_add_quota(spec, "team-a", "a100", "gpu", 16000, HS_NO_LIMIT, HS_NO_LIMIT));
  CHECK_OK(
      hs_capacity_spec_add_quota(spec, "team-b", "a100", "gpu", 16000, HS_NO_LIMIT, HS_NO_LIMIT));
  CHECK_OK(hs_capacity_new(spec, &s.capacity));
  hs_capacity_spec_free(spec);
  {
    hs_capacity_job_t j = capacity_job(1, "team-a", &gpus8);
    CHECK_OK(hs_capacity_submit(s.capacity, &j));
    CHECK_OK(hs_capacity_plan(s.capacity, NULL, &d));
    CHECK_OK(hs_capacity_apply(s.capacity, d));
    hs_decision_free(d);
    j = capacity_job(2, "team-b", &gpus12);
    CHECK_OK(hs_capacity_submit(s.capacity, &j));
  }

  /* a decision every thread reads */
  {
    hs_gang_t g = gang(7, 3, 2);
    CHECK_OK(hs_packer_place(s.packer, &g, &held));
    CHECK(hs_decision_bind_count(held) == 3);
    s.decision = held;
  }

  /* the single-threaded answers, in the concrete */
  {
    hs_hived_pod_t p = hived_pod("probe", "a", 1, 4);
    hs_bind_t b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    CHECK_OK(hs_hived_what_if(s.hived, &p, HS_HIVED_PREEMPTING, &d));
    CHECK(hs_decision_bind_count(d) == 1);
    CHECK_OK(hs_decision_bind_at(d, 0, &b));
    CHECK_STR(b.node_name, "n-3");
    CHECK(b.gpu_count == 4);
    hs_decision_free(d);
  }
  {
    hs_hived_pod_t p = hived_pod("gang-0", "a", 1, 8);
    hs_hived_member_t member = {2, 8};
    p.group = "gang";
    p.members = &member;
    p.member_count = 1;
    CHECK_OK(hs_hived_what_if(s.hived, &p, HS_HIVED_FILTERING, &d));
    /* a's other node is free, but two 8-GPU pods need two: wait */
    CHECK(hs_decision_bind_count(d) == 0);
    CHECK(hs_decision_preemption_count(d) == 0);
    CHECK(hs_decision_deferral_count(d) == 1);
    hs_decision_free(d);
  }
  {
    static const int64_t large = 24000;
    hs_capacity_job_t j = capacity_job(50, "team-a", &large);
    hs_what_if_t w;
    memset(&w, 0, sizeof w);
    w.struct_size = sizeof w;
    CHECK_OK(hs_capacity_what_if(s.capacity, &j, NULL, &d));
    CHECK_OK(hs_decision_what_if(d, &w));
    /* the next cycle admits team-b's waiting 12 GPUs first (within its nominal quota), which
       leaves 12 of the cohort's 32 for 24: not admissible, and nothing to preempt */
    CHECK(w.admissible_now == 0 && w.needs_preemption == 0);
    CHECK(w.ahead_in_queue == 0);
    CHECK_STR(w.flavor, "a100");
    hs_decision_free(d);
    CHECK_OK(hs_capacity_plan(s.capacity, NULL, &d));
    /* team-b's waiting job 2 fits its own quota */
    CHECK(hs_decision_admission_count(d) == 1);
    CHECK(hs_decision_deferral_count(d) == 0);
    {
      hs_admission_t a;
      memset(&a, 0, sizeof a);
      a.struct_size = sizeof a;
      CHECK_OK(hs_decision_admission_at(d, 0, &a));
      CHECK(a.job_id == 2);
      CHECK_STR(a.queue, "team-b");
    }
    hs_decision_free(d);
  }

  {
    hs_elastic_job_t e;
    hs_grow_shrink_params_t params;
    hs_bind_t b;
    hs_release_t r;
    memset(&e, 0, sizeof e);
    e.struct_size = sizeof e;
    e.job_id = 1;
    e.base_tasks = 1;
    e.max_tasks = 4;
    memset(&params, 0, sizeof params);
    params.struct_size = sizeof params;
    CHECK_OK(hs_packer_grow_shrink(s.packer, &e, 1, &params, &d));
    /* grow: optional tasks 2 and 3 (4 GPUs each), the first on n-1 */
    CHECK(hs_decision_bind_count(d) == 2);
    CHECK(hs_decision_release_count(d) == 0);
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    CHECK_OK(hs_decision_bind_at(d, 0, &b));
    CHECK(b.task == 2 && b.gpu_count == 4);
    CHECK_STR(b.node_name, "n-1");
    hs_decision_free(d);
    params.waiting_gpus = 28;
    CHECK_OK(hs_packer_grow_shrink(s.packer, &e, 1, &params, &d));
    /* shrink: 24 GPUs are free, task 1 (4 GPUs on n-0) is given back for the 28 waiting */
    CHECK(hs_decision_bind_count(d) == 0);
    CHECK(hs_decision_release_count(d) == 1);
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    CHECK_OK(hs_decision_release_at(d, 0, &r));
    CHECK(r.task == 1 && r.gpu_count == 4);
    CHECK_STR(r.node_name, "n-0");
    hs_decision_free(d);
  }

  s.hived_digest = hs_hived_state_digest(s.hived);
  ask(&s, s.expected);
  for (i = 0; i < answer_count; ++i) CHECK(s.expected[i] != 0);
  CHECK(s.expected[5] == s.hived_digest);

  for (i = 0; i < thread_count; ++i) {
    workers[i].s = &s;
    workers[i].index = i;
    workers[i].mismatches = 0;
    workers[i].error_mixups = 0;
    CHECK(pthread_create(&threads[i], NULL, run_worker, &workers[i]) == 0);
  }
  for (i = 0; i < thread_count; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(workers[i].mismatches == 0);
    CHECK(workers[i].error_mixups == 0);
  }
  /* nothing changed */
  CHECK(hs_hived_state_digest(s.hived) == s.hived_digest);
  CHECK(hs_capacity_pending_count(s.capacity) == 1);
  CHECK(hs_capacity_admitted_count(s.capacity) == 1);
  {
    uint32_t free_gpus = 0;
    CHECK_OK(hs_packer_free_gpu_count(s.packer, 0, &free_gpus));
    CHECK(free_gpus == 0); /* job 1's two tasks fill n-0 */
    CHECK_OK(hs_packer_free_gpu_count(s.packer, 1, &free_gpus));
    CHECK(free_gpus == 8);
  }

  hs_decision_free(held);
  hs_capacity_free(s.capacity);
  hs_hived_free(s.hived);
  hs_packer_free(s.packer);
  hs_cluster_free(s.cluster);
}

int main(void) {
  RUN(test_concurrent_const_calls);
  return TEST_RESULT();
}
