/* SPDX-License-Identifier: MIT */
/* C API tests: registry policies by name (hs_policy_t) driven over a cluster state (hs_state_t)
 * on 2 DGX A100 nodes "n-0", "n-1" (8 GPUs each): place, what-if, apply, commit, release, and
 * the errors that change nothing. */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

static hs_cluster_t* make_cluster(uint32_t nodes) {
  hs_cluster_options_t o;
  hs_cluster_t* c = NULL;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.node_count = nodes;
  o.name_prefix = "n";
  CHECK_OK(hs_cluster_from_template("dgx-a100", &o, &c));
  return c;
}

static hs_policy_t* make_policy(const char* spec, const hs_cluster_t* c) {
  hs_policy_t* p = NULL;
  CHECK_OK(hs_policy_new(spec, c, NULL, 0, &p));
  return p;
}

/* Submits job `id`: `tasks` tasks of `gpus` whole GPUs, a gang, tenant 0. */
static hs_status submit(hs_state_t* s, uint64_t id, uint32_t tasks, uint32_t gpus) {
  hs_task_role_t r;
  hs_job_spec_t j;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  r.name = "worker";
  r.task_count = tasks;
  r.gpus = gpus;
  memset(&j, 0, sizeof j);
  j.struct_size = sizeof j;
  j.job_id = id;
  j.roles = &r;
  j.role_count = 1;
  return hs_state_submit(s, &j);
}

/* Returns 1 if bind `index` of `d` is task `task` of `job` on `node` with exactly `gpus`. */
static int bind_is(const hs_decision_t* d, size_t index, uint64_t job, uint32_t task, uint32_t node,
                   const uint32_t* gpus, uint32_t count) {
  hs_bind_t b;
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  if (hs_decision_bind_at(d, index, &b) != HS_OK) return 0;
  if (b.job_id != job || b.task != task || b.node != node || b.gpu_count != count) return 0;
  if (b.milli_per_gpu != 1000 || b.gpu_memory_mib != 0) return 0;
  return memcmp(b.gpus, gpus, count * sizeof(uint32_t)) == 0;
}

/* Returns 1 if `a` and `b` hold the same binds and deferrals. */
static int same_decision(const hs_decision_t* a, const hs_decision_t* b) {
  size_t i;
  if (hs_decision_bind_count(a) != hs_decision_bind_count(b)) return 0;
  if (hs_decision_deferral_count(a) != hs_decision_deferral_count(b)) return 0;
  if (hs_decision_preemption_count(a) != hs_decision_preemption_count(b)) return 0;
  for (i = 0; i < hs_decision_bind_count(a); ++i) {
    hs_bind_t x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    x.struct_size = y.struct_size = sizeof x;
    if (hs_decision_bind_at(a, i, &x) != HS_OK || hs_decision_bind_at(b, i, &y) != HS_OK) return 0;
    if (x.job_id != y.job_id || x.task != y.task || x.node != y.node ||
        x.gpu_count != y.gpu_count || memcmp(x.gpus, y.gpus, x.gpu_count * sizeof(uint32_t)) != 0)
      return 0;
  }
  return 1;
}

/* place, then apply and commit when it binds; returns the decision (caller frees). */
static hs_decision_t* run(hs_policy_t* p, hs_state_t* s, uint64_t job) {
  hs_decision_t* d = NULL;
  CHECK_OK(hs_policy_place(p, s, job, &d));
  if (hs_decision_bind_count(d) > 0) {
    CHECK_OK(hs_state_apply(s, d));
    CHECK_OK(hs_policy_commit(p, s, d));
  }
  return d;
}

static uint32_t idle_on(const hs_state_t* s, uint32_t node) {
  hs_node_usage_t u;
  memset(&u, 0, sizeof u);
  u.struct_size = sizeof u;
  CHECK_OK(hs_state_node_usage(s, node, &u));
  return u.idle_gpus;
}

static hs_job_state state_of(const hs_state_t* s, uint64_t job) {
  hs_job_status_t st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK_OK(hs_state_job_status(s, job, &st));
  return st.state;
}

static void test_fifo_packer_loop(void) {
  static const uint32_t g0_3[] = {0, 1, 2, 3};
  static const uint32_t g0_7[] = {0, 1, 2, 3, 4, 5, 6, 7};
  hs_cluster_t* c = make_cluster(2);
  hs_state_t* s = NULL;
  hs_policy_t* p = make_policy("fifo+packer", c);
  hs_decision_t *probe = NULL, *d = NULL;
  hs_deferral_t def;
  hs_policy_info_t info;
  hs_node_usage_t u;
  hs_job_status_t st;
  CHECK_OK(hs_state_new(c, &s));
  hs_cluster_free(c); /* the state and the policy keep their own references */

  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_OK(hs_policy_describe(p, &info));
  CHECK_STR(info.spec, "fifo+packer");
  CHECK_STR(info.ordering, "fifo");
  CHECK_STR(info.placement, "packer");
  CHECK(info.oversubscribes == 0 && info.per_tenant == 0 && info.preempts == 0 &&
        info.migrates == 0);

  CHECK_OK(submit(s, 1, 1, 4));
  CHECK_OK(submit(s, 2, 1, 8));
  CHECK_OK(submit(s, 3, 1, 8));
  CHECK(hs_state_job_count(s) == 3);
  CHECK(state_of(s, 1) == HS_JOB_QUEUED);

  /* what_if answers what place will: job 1 -> n-0 GPUs 0-3. */
  CHECK_OK(hs_policy_what_if(p, s, 1, &probe));
  d = run(p, s, 1);
  CHECK(same_decision(probe, d));
  CHECK(hs_decision_bind_count(d) == 1 && bind_is(d, 0, 1, 0, 0, g0_3, 4));
  CHECK(hs_decision_migration_count(d) == 0 && hs_decision_suspension_count(d) == 0 &&
        hs_decision_resume_count(d) == 0 && hs_decision_release_count(d) == 0);
  CHECK(state_of(s, 1) == HS_JOB_SCHEDULED);
  CHECK(idle_on(s, 0) == 4 && idle_on(s, 1) == 8);
  /* A what-if decision is for reading only. */
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_state_apply(s, probe));
  CHECK_CONTAINS(hs_last_error(), "hs_policy_what_if");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_commit(p, s, probe));
  /* Applying the same decision again: job 1 is no longer queued; nothing changes. */
  CHECK_STATUS(HS_FAILED_PRECONDITION, hs_state_apply(s, d));
  CHECK_CONTAINS(hs_last_error(), "job 1");
  CHECK(idle_on(s, 0) == 4);
  hs_decision_free(probe);
  hs_decision_free(d);

  /* Job 2 (8 GPUs) -> n-1, all of it. */
  d = run(p, s, 2);
  CHECK(hs_decision_bind_count(d) == 1 && bind_is(d, 0, 2, 0, 1, g0_7, 8));
  hs_decision_free(d);
  CHECK(idle_on(s, 1) == 0);

  /* Job 3 (8 GPUs): 4 free in all; deferred, nothing bound. */
  d = run(p, s, 3);
  CHECK(hs_decision_bind_count(d) == 0 && hs_decision_deferral_count(d) == 1);
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  CHECK_OK(hs_decision_deferral_at(d, 0, &def));
  CHECK(def.job_id == 3 && def.reason == HS_DEFER_INSUFFICIENT_CAPACITY);
  hs_decision_free(d);
  CHECK(state_of(s, 3) == HS_JOB_QUEUED);

  /* Job 1 runs and finishes: its GPUs come back and job 3 takes all of n-0. */
  CHECK_OK(hs_state_record(s, 1, HS_JOB_START));
  CHECK(state_of(s, 1) == HS_JOB_RUNNING);
  CHECK_OK(hs_state_record(s, 1, HS_JOB_SUCCEED));
  CHECK_OK(hs_policy_release(p, s, 1));
  CHECK(state_of(s, 1) == HS_JOB_SUCCEEDED);
  CHECK(idle_on(s, 0) == 8);
  d = run(p, s, 3);
  CHECK(hs_decision_bind_count(d) == 1 && bind_is(d, 0, 3, 0, 0, g0_7, 8));
  hs_decision_free(d);

  memset(&u, 0, sizeof u);
  u.struct_size = sizeof u;
  CHECK_OK(hs_state_node_usage(s, 0, &u));
  CHECK(u.health == HS_HEALTHY && u.gpus == 8 && u.idle_gpus == 0 && u.free_milli_gpu == 0);
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK_OK(hs_state_job_status(s, 3, &st));
  CHECK(st.state == HS_JOB_SCHEDULED && st.task_count == 1 && st.placed_tasks == 1 &&
        st.attempts == 0);
  CHECK_STR(hs_job_state_name(st.state), "scheduled");

  hs_policy_free(p);
  hs_state_free(s);
}

/* A gang of 2 tasks x 2 GPUs under "drf+packer": both tasks on n-0 (GPUs 0,1 and 2,3); under
 * worst fit a later 2-GPU job goes to the emptier n-1. */
static void test_drf_packer_gang_and_worst_fit(void) {
  static const uint32_t g01[] = {0, 1};
  static const uint32_t g23[] = {2, 3};
  hs_cluster_t* c = make_cluster(2);
  hs_state_t* s = NULL;
  hs_policy_t* best = make_policy("drf+packer", c);
  hs_policy_t* worst = make_policy("drf+packer:fit=worst", c);
  hs_decision_t *d = NULL, *w = NULL;
  hs_policy_info_t info;
  CHECK_OK(hs_state_new(c, &s));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_OK(hs_policy_describe(best, &info));
  CHECK_STR(info.ordering, "drf");
  CHECK_STR(info.placement, "packer");

  CHECK_OK(submit(s, 10, 2, 2));
  d = run(best, s, 10);
  CHECK(hs_decision_bind_count(d) == 2);
  CHECK(bind_is(d, 0, 10, 0, 0, g01, 2));
  CHECK(bind_is(d, 1, 10, 1, 0, g23, 2));
  hs_decision_free(d);
  /* The worst-fit policy learns the state by rebuild, then spreads: job 11 -> n-1. */
  CHECK_OK(hs_policy_rebuild(worst, s));
  CHECK_OK(submit(s, 11, 1, 2));
  CHECK_OK(hs_policy_place(best, s, 11, &d));
  CHECK_OK(hs_policy_place(worst, s, 11, &w));
  CHECK(bind_is(d, 0, 11, 0, 0, (const uint32_t[]){4, 5}, 2));
  CHECK(bind_is(w, 0, 11, 0, 1, g01, 2));
  /* A decision is committed only to the policy that made it. */
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_commit(best, s, w));
  CHECK_CONTAINS(hs_last_error(), "drf+packer");
  hs_decision_free(d);
  hs_decision_free(w);

  hs_policy_free(best);
  hs_policy_free(worst);
  hs_state_free(s);
  hs_cluster_free(c);
}

/* Fractional GPUs under "fifo+fgd" (its target workload, which a spec's text cannot hold, given
 * as a parameter): the bind carries the share. */
static void test_fgd_fractional_share(void) {
  static const hs_policy_param_t classes[] = {{"classes", "4000/500/1/10"}};
  hs_cluster_t* c = make_cluster(1);
  hs_state_t* s = NULL;
  hs_policy_t* p = NULL;
  hs_decision_t* d = NULL;
  hs_task_role_t r;
  hs_job_spec_t j;
  hs_bind_t b;
  CHECK_OK(hs_policy_new("fifo+fgd", c, classes, 1, &p));
  CHECK_OK(hs_state_new(c, &s));
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  r.name = "infer";
  r.task_count = 1;
  r.gpus = 1;
  r.milli_per_gpu = 500;
  r.milli_cpu = 4000;
  r.memory_mib = 16384;
  memset(&j, 0, sizeof j);
  j.struct_size = sizeof j;
  j.job_id = 5;
  j.roles = &r;
  j.role_count = 1;
  CHECK_OK(hs_state_submit(s, &j));
  d = run(p, s, 5);
  CHECK(hs_decision_bind_count(d) == 1);
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  CHECK_OK(hs_decision_bind_at(d, 0, &b));
  CHECK(b.node == 0 && b.gpu_count == 1 && b.milli_per_gpu == 500);
  CHECK(idle_on(s, 0) == 7);
  hs_decision_free(d);
  hs_policy_free(p);
  hs_state_free(s);
  hs_cluster_free(c);
}

/* "fifo+gandiva:oversubscribe=1" on one node: its traits, a full node defers the next 8-GPU
 * job (the engine's time-slicing rounds, not place, suspend jobs), and migration planning over
 * the state gives an empty decision that applies and commits. */
static void test_gandiva_traits_and_migrations(void) {
  static const uint32_t g0_7[] = {0, 1, 2, 3, 4, 5, 6, 7};
  hs_cluster_t* c = make_cluster(1);
  hs_state_t* s = NULL;
  hs_policy_t* p = make_policy("fifo+gandiva:oversubscribe=1", c);
  hs_decision_t* d = NULL;
  hs_policy_info_t info;
  hs_deferral_t def;
  CHECK_OK(hs_state_new(c, &s));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_OK(hs_policy_describe(p, &info));
  CHECK_STR(info.placement, "gandiva");
  CHECK(info.oversubscribes == 1 && info.per_tenant == 0 && info.preempts == 0 &&
        info.migrates == 1);
  CHECK_OK(submit(s, 1, 1, 8));
  CHECK_OK(submit(s, 2, 1, 8));
  CHECK_OK(hs_policy_set_time(p, 1000));
  d = run(p, s, 1);
  CHECK(bind_is(d, 0, 1, 0, 0, g0_7, 8));
  hs_decision_free(d);
  CHECK_OK(hs_state_record(s, 1, HS_JOB_START));
  CHECK_OK(hs_policy_place(p, s, 2, &d));
  CHECK(hs_decision_bind_count(d) == 0 && hs_decision_suspension_count(d) == 0 &&
        hs_decision_deferral_count(d) == 1);
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  CHECK_OK(hs_decision_deferral_at(d, 0, &def));
  CHECK(def.job_id == 2 && def.reason == HS_DEFER_INSUFFICIENT_CAPACITY);
  CHECK_STR(def.message, "no server has 8 free GPUs for job 2 and none can be time-sliced");
  hs_decision_free(d);
  CHECK_OK(hs_policy_plan_migrations(p, s, &d));
  CHECK(hs_decision_migration_count(d) == 0 && hs_decision_bind_count(d) == 0);
  CHECK_OK(hs_state_apply(s, d));
  CHECK_OK(hs_policy_commit(p, s, d));
  hs_decision_free(d);
  CHECK(state_of(s, 1) == HS_JOB_RUNNING && state_of(s, 2) == HS_JOB_QUEUED);
  hs_policy_free(p);
  hs_state_free(s);
  hs_cluster_free(c);
}

/* Bad specs and parameters: the right status, the message names the problem, no policy. */
static void test_bad_specs(void) {
  hs_cluster_t* c = make_cluster(1);
  hs_policy_t* p = (hs_policy_t*)&c; /* sentinel: a failed call leaves *out alone */
  hs_policy_t* const sentinel = p;
  hs_policy_param_t bad[] = {{"fit", "tight"}};
  hs_policy_param_t null_value[] = {{"fit", NULL}};
  CHECK_STATUS(HS_NOT_FOUND, hs_policy_new("fifo+nosuch", c, NULL, 0, &p));
  CHECK_CONTAINS(hs_last_error(), "nosuch");
  CHECK_CONTAINS(hs_last_error(), "packer"); /* lists the valid names */
  CHECK_STATUS(HS_NOT_FOUND, hs_policy_new("lottery+packer", c, NULL, 0, &p));
  CHECK_CONTAINS(hs_last_error(), "lottery");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_new("fifo+packer:fit=tight", c, NULL, 0, &p));
  CHECK_CONTAINS(hs_last_error(), "fit");
  CHECK_CONTAINS(hs_last_error(), "tight");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_new("fifo+packer", c, bad, 1, &p));
  CHECK_CONTAINS(hs_last_error(), "tight");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_new("fifo+packer", c, null_value, 1, &p));
  CHECK_CONTAINS(hs_last_error(), "params[0].value is NULL");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_new("fifo+packer+fgd", c, NULL, 0, &p));
  CHECK_CONTAINS(hs_last_error(), "fifo+packer+fgd");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_new("fifo+packer", c, NULL, 2, &p));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_new(NULL, c, NULL, 0, &p));
  CHECK_CONTAINS(hs_last_error(), "'spec'");
  CHECK(p == sentinel);
  hs_cluster_free(c);
}

/* Unknown jobs, bad job specs, illegal events, another cluster's state: errors, state unchanged. */
static void test_errors_change_nothing(void) {
  hs_cluster_t* c = make_cluster(2);
  hs_cluster_t* other = make_cluster(1);
  hs_state_t *s = NULL, *s_other = NULL;
  hs_policy_t* p = make_policy("fifo+packer", c);
  hs_decision_t* d = NULL;
  hs_task_role_t r;
  hs_job_spec_t j;
  hs_job_status_t st;
  uint64_t job = 0;
  CHECK_OK(hs_state_new(c, &s));
  CHECK_OK(hs_state_new(other, &s_other));
  CHECK_OK(submit(s, 1, 1, 4));

  CHECK_STATUS(HS_NOT_FOUND, hs_policy_place(p, s, 99, &d));
  CHECK_STR(hs_last_error(), "job 99: unknown job");
  CHECK(d == NULL);
  CHECK_STATUS(HS_NOT_FOUND, hs_policy_what_if(p, s, 99, &d));
  CHECK_STATUS(HS_NOT_FOUND, hs_policy_release(p, s, 99));
  CHECK_STATUS(HS_NOT_FOUND, hs_state_record(s, 99, HS_JOB_START));
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK_STATUS(HS_NOT_FOUND, hs_state_job_status(s, 99, &st));
  /* An illegal transition: job 1 is queued, not running. */
  CHECK_STATUS(HS_FAILED_PRECONDITION, hs_state_record(s, 1, HS_JOB_SUCCEED));
  CHECK_CONTAINS(hs_last_error(), "job 1");
  CHECK(state_of(s, 1) == HS_JOB_QUEUED);
  /* A state of another cluster. */
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_place(p, s_other, 1, &d));
  CHECK_CONTAINS(hs_last_error(), "another cluster");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_rebuild(p, s_other));

  /* Bad job specs: nothing registered. */
  CHECK_STATUS(HS_ALREADY_EXISTS, submit(s, 1, 1, 1));
  CHECK_STATUS(HS_INVALID_ARGUMENT, submit(s, 2, 0, 1));
  CHECK_CONTAINS(hs_last_error(), "job 2");
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  r.name = "w";
  r.task_count = 1;
  r.gpus = 1;
  r.gpu_type = "not a gpu";
  memset(&j, 0, sizeof j);
  j.struct_size = sizeof j;
  j.job_id = 3;
  j.roles = &r;
  j.role_count = 1;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_state_submit(s, &j));
  CHECK_CONTAINS(hs_last_error(), "job 3: role 'w'");
  j.roles = NULL;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_state_submit(s, &j));
  j.job_id = UINT32_MAX;
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_state_submit(s, &j));
  CHECK(hs_state_job_count(s) == 1);
  CHECK(idle_on(s, 0) == 8 && idle_on(s, 1) == 8);

  /* Health: n-0 unhealthy and GPU 0 of n-1 cordoned, so after a rebuild job 1 goes to n-1,
   * GPUs 2-5 (the affinity packer's pick among 1-7); bad indices are refused. */
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_state_set_node_health(s, 2, HS_UNHEALTHY));
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_state_set_gpu_health(s, 1, 8, HS_UNHEALTHY));
  CHECK_CONTAINS(hs_last_error(), "n-1");
  CHECK_OK(hs_state_set_node_health(s, 0, HS_UNHEALTHY));
  CHECK_OK(hs_state_set_gpu_health(s, 1, 0, HS_CORDONED));
  CHECK(idle_on(s, 0) == 0 && idle_on(s, 1) == 7);
  CHECK_OK(hs_policy_rebuild(p, s));
  d = run(p, s, 1);
  CHECK(bind_is(d, 0, 1, 0, 1, (const uint32_t[]){2, 3, 4, 5}, 4));
  CHECK(hs_decision_suspension_count(d) == 0);
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_decision_suspension_at(d, 0, &job));
  CHECK_CONTAINS(hs_last_error(), "suspension");
  hs_decision_free(d);

  hs_policy_free(p);
  hs_state_free(s);
  hs_state_free(s_other);
  hs_cluster_free(c);
  hs_cluster_free(other);
}

/* The registry's tables, and the first version of hs_bind_t (before milli_per_gpu). */
static void test_registry_and_old_bind_struct(void) {
  static const char* const orderings[] = {"fifo", "sjf", "tiresias", "drf"};
  static const char* const placements[] = {"packer", "gandiva",   "capacity", "hived",
                                           "fgd",    "first-fit", "random"};
  hs_policy_entry_t e;
  size_t i;
  hs_cluster_t* c = make_cluster(1);
  hs_state_t* s = NULL;
  hs_policy_t* p = make_policy("fifo+packer", c);
  hs_decision_t* d = NULL;
  hs_bind_t b;
  CHECK(hs_policy_ordering_count() == 4);
  CHECK(hs_policy_placement_count() == 7);
  memset(&e, 0, sizeof e);
  e.struct_size = sizeof e;
  for (i = 0; i < 4; ++i) {
    CHECK_OK(hs_policy_ordering_at(i, &e));
    CHECK_STR(e.name, orderings[i]);
    CHECK(e.summary != NULL && e.summary[0] != '\0');
  }
  for (i = 0; i < 7; ++i) {
    CHECK_OK(hs_policy_placement_at(i, &e));
    CHECK_STR(e.name, placements[i]);
  }
  CHECK_STATUS(HS_OUT_OF_RANGE, hs_policy_placement_at(7, &e));
  CHECK_CONTAINS(hs_last_error(), "7 placements");

  CHECK_OK(hs_state_new(c, &s));
  CHECK_OK(submit(s, 7, 1, 2));
  CHECK_OK(hs_policy_place(p, s, 7, &d));
  memset(&b, 0xff, sizeof b);
  b.struct_size = (uint32_t)offsetof(hs_bind_t, milli_per_gpu);
  CHECK_OK(hs_decision_bind_at(d, 0, &b));
  CHECK(b.job_id == 7 && b.gpu_count == 2);
  CHECK(b.milli_per_gpu == UINT32_MAX); /* beyond the caller's struct_size: untouched */
  b.struct_size = (uint32_t)offsetof(hs_bind_t, gpu_count);
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_decision_bind_at(d, 0, &b));
  CHECK_CONTAINS(hs_last_error(), "hs_bind_t");
  hs_decision_free(d);
  hs_policy_free(p);
  hs_state_free(s);
  hs_cluster_free(c);
}

/* A restart: the bind records of committed decisions, replayed into a new state and a new
 * policy, give the same state and the same next decision; bad records change nothing. */
static void test_replay_bind_records(void) {
  static const char* const specs[] = {"fifo+packer", "fifo+hived", "fifo+gandiva", "fifo+fgd"};
  static const hs_policy_param_t classes[] = {{"classes", "4000/1000/1/10"}};
  size_t k;
  for (k = 0; k < sizeof specs / sizeof specs[0]; ++k) {
    const size_t params = strcmp(specs[k], "fifo+fgd") == 0 ? 1 : 0;
    hs_cluster_t* c = make_cluster(2);
    hs_state_t *s = NULL, *r = NULL;
    hs_policy_t *p = NULL, *q = NULL;
    hs_decision_t *d1 = NULL, *d2 = NULL, *next = NULL, *again = NULL;
    hs_bind_t records[3];
    uint32_t gpus[3][8];
    size_t n = 0, i;
    CHECK_OK(hs_policy_new(specs[k], c, classes, params, &p));
    CHECK_OK(hs_policy_new(specs[k], c, classes, params, &q));
    CHECK_OK(hs_state_new(c, &s));
    CHECK_OK(hs_state_new(c, &r));
    CHECK_OK(submit(s, 1, 1, 4));
    CHECK_OK(submit(s, 2, 2, 2));
    CHECK_OK(submit(s, 3, 1, 8));
    CHECK_OK(submit(r, 1, 1, 4));
    CHECK_OK(submit(r, 2, 2, 2));
    CHECK_OK(submit(r, 3, 1, 8));
    d1 = run(p, s, 1);
    d2 = run(p, s, 2);
    CHECK(hs_decision_bind_count(d1) == 1 && hs_decision_bind_count(d2) == 2);
    /* Keep the records as an embedder would: copies, job 2's entries first. */
    for (i = 0; i < 3; ++i) {
      const hs_decision_t* from = i < 2 ? d2 : d1;
      memset(&records[i], 0, sizeof records[i]);
      records[i].struct_size = sizeof records[i];
      CHECK_OK(hs_decision_bind_at(from, i < 2 ? i : 0, &records[i]));
      memcpy(gpus[i], records[i].gpus, records[i].gpu_count * sizeof(uint32_t));
      records[i].gpus = gpus[i];
      ++n;
    }

    /* Bad records: an unknown node, a GPU index past the node's GPUs, a repeated task. */
    records[0].node = 7;
    CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_replay(q, r, records, n));
    CHECK_CONTAINS(hs_last_error(), "binds[0]: job 2 task 0: node 7 is not a node");
    records[0].node = records[1].node;
    {
      const uint32_t kept = gpus[2][0];
      gpus[2][0] = 8;
      CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_replay(q, r, records, n));
      CHECK_CONTAINS(hs_last_error(), "binds[2]: job 1 task 0: gpus[0] = 8 is not a GPU of node");
      gpus[2][0] = kept;
    }
    records[1].task = 0; /* job 2 task 0 twice, task 1 never */
    CHECK(hs_policy_replay(q, r, records, n) != HS_OK);
    records[1].task = 1;
    CHECK_STATUS(HS_INVALID_ARGUMENT, hs_policy_replay(q, r, NULL, 1));
    CHECK_CONTAINS(hs_last_error(), "binds is NULL with count 1");
    CHECK(idle_on(r, 0) == 8 && idle_on(r, 1) == 8);
    CHECK(state_of(r, 1) == HS_JOB_QUEUED && state_of(r, 2) == HS_JOB_QUEUED);

    /* The good records restore both jobs, and the policy answers job 3 as the one that never
     * restarted. */
    CHECK_OK(hs_policy_replay(q, r, records, n));
    CHECK(state_of(r, 1) == HS_JOB_SCHEDULED && state_of(r, 2) == HS_JOB_SCHEDULED);
    CHECK(idle_on(r, 0) == idle_on(s, 0) && idle_on(r, 1) == idle_on(s, 1));
    CHECK(idle_on(r, 0) + idle_on(r, 1) == 8);
    CHECK_OK(hs_policy_place(p, s, 3, &next));
    CHECK_OK(hs_policy_place(q, r, 3, &again));
    CHECK(same_decision(next, again));
    CHECK(hs_decision_bind_count(again) == 1);
    /* Replaying the same records again is refused: their jobs are no longer waiting. */
    CHECK(hs_policy_replay(q, r, records, n) != HS_OK);
    CHECK(idle_on(r, 0) + idle_on(r, 1) == 8);

    hs_decision_free(d1);
    hs_decision_free(d2);
    hs_decision_free(next);
    hs_decision_free(again);
    hs_policy_free(p);
    hs_policy_free(q);
    hs_state_free(s);
    hs_state_free(r);
    hs_cluster_free(c);
  }
}

/* Handle safety for the new handles: a state passed as a policy, use after free, double free. */
static void test_handle_safety(void) {
  hs_cluster_t* c = make_cluster(1);
  hs_state_t* s = NULL;
  hs_policy_t* p = make_policy("fifo+packer", c);
  hs_decision_t* d = NULL;
  CHECK_OK(hs_state_new(c, &s));
  CHECK_OK(submit(s, 1, 1, 1));
  CHECK_STATUS(HS_INVALID_HANDLE, hs_policy_place((hs_policy_t*)(void*)s, s, 1, &d));
  CHECK_STR(hs_last_error(),
            "hs_policy_place: argument 'policy' is an hs_state_t, not an "
            "hs_policy_t");
  hs_policy_free(p);
  CHECK_STATUS(HS_INVALID_HANDLE, hs_policy_place(p, s, 1, &d));
  CHECK_STR(hs_last_error(), "hs_policy_place: argument 'policy' was already freed");
  CHECK(d == NULL);
  hs_policy_free(p);
  CHECK_STR(hs_last_error(), "hs_policy_free: argument 'policy' was already freed");
  hs_state_free(s);
  CHECK(hs_state_job_count(s) == 0);
  CHECK_STR(hs_last_error(), "hs_state_job_count: argument 'state' was already freed");
  hs_state_free(s);
  CHECK_STR(hs_last_error(), "hs_state_free: argument 'state' was already freed");
  hs_cluster_free(c);
}

int main(void) {
  RUN(test_fifo_packer_loop);
  RUN(test_drf_packer_gang_and_worst_fit);
  RUN(test_fgd_fractional_share);
  RUN(test_gandiva_traits_and_migrations);
  RUN(test_bad_specs);
  RUN(test_errors_change_nothing);
  RUN(test_registry_and_old_bind_struct);
  RUN(test_replay_bind_records);
  RUN(test_handle_safety);
  return TEST_RESULT();
}
