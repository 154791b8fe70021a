/* SPDX-License-Identifier: MIT */
/* C API tests: capacity queues (spec builder, admission cycles, borrowing, what-if, preemption,
 * shares and errors). Cohort "org" with queues team-a and team-b, each with 8 H100 and 16 A100
 * GPUs of nominal quota (milli-GPU), H100 preferred. */
#include <stdint.h>
#include <string.h>

#include "c_test.h"

static hs_capacity_t* make_queues(void) {
  hs_capacity_spec_t* spec = NULL;
  hs_capacity_t* q = NULL;
  CHECK_OK(hs_capacity_spec_new(&spec));
  CHECK_OK(hs_capacity_spec_add_cohort(spec, "org", NULL));
  CHECK_OK(hs_capacity_spec_add_queue(spec, "team-a", "org", HS_ORDER_PRIORITY));
  CHECK_OK(hs_capacity_spec_add_queue(spec, "team-b", "org", HS_ORDER_PRIORITY));
  CHECK_OK(
      hs_capacity_spec_add_quota(spec, "team-a", "h100", "gpu", 8000, HS_NO_LIMIT, HS_NO_LIMIT));
  CHECK_OK(
      hs_capacity_spec_add_quota(spec, "team-a", "a100", "gpu", 16000, HS_NO_LIMIT, HS_NO_LIMIT));
  CHECK_OK(
      hs_capacity_spec_add_quota(spec, "team-b", "h100", "gpu", 8000, HS_NO_LIMIT, HS_NO_LIMIT));
  CHECK_OK(
      hs_capacity_spec_add_quota(spec, "team-b", "a100", "gpu", 16000, HS_NO_LIMIT, HS_NO_LIMIT));
  CHECK_OK(hs_capacity_spec_set_preemption(spec, "team-a", HS_WITHIN_QUEUE_LOWER_PRIORITY,
                                           HS_RECLAIM_ANY));
  CHECK_OK(hs_capacity_spec_set_preemption(spec, "team-b", HS_WITHIN_QUEUE_LOWER_PRIORITY,
                                           HS_RECLAIM_ANY));
  CHECK_OK(hs_capacity_new(spec, &q));
  hs_capacity_spec_free(spec); /* the state keeps its own tree */
  return q;
}

static const char* gpu_name[1] = {"gpu"};

/* A job asking for `milli_gpu` in `queue`, optionally pinned to `flavor`. */
static hs_capacity_job_t job(uint64_t id, const char* queue, const int64_t* milli_gpu,
                             const char* const* flavor) {
  hs_capacity_job_t j;
  memset(&j, 0, sizeof j);
  j.struct_size = sizeof j;
  j.job_id = id;
  j.queue = queue;
  j.resources = gpu_name;
  j.amounts = milli_gpu;
  j.resource_count = 1;
  j.flavors = flavor;
  j.flavor_count = flavor != NULL ? 1 : 0;
  return j;
}

static hs_admission_t admission_at(const hs_decision_t* d, size_t i) {
  hs_admission_t a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  CHECK_OK(hs_decision_admission_at(d, i, &a));
  return a;
}

static void test_cycle_borrow_what_if(void) {
  static const int64_t g8 = 8000;
  static const int64_t g16 = 16000;
  static const int64_t g40 = 40000;
  static const int64_t g4 = 4000;
  static const char* const a100[1] = {"a100"};
  static const char* const h100[1] = {"h100"};
  hs_capacity_t* q = make_queues();
  hs_capacity_job_t j1 = job(1, "team-a", &g8, NULL);
  hs_capacity_job_t j2 = job(2, "team-a", &g16, a100);
  hs_capacity_job_t j3 = job(3, "team-b", &g40, h100);
  hs_capacity_job_t j4 = job(4, "team-a", &g4, h100);
  hs_capacity_job_t j8 = job(8, "team-b", &g8, h100);
  hs_decision_t* d = NULL;
  hs_deferral_t def;
  hs_preemption_t v;
  hs_what_if_t w;
  hs_quota_line_t line;
  hs_admission_t a;
  int64_t share = -1;
  int32_t admitted = 0;
  const char* flavor = NULL;
  hs_capacity_options_t at10;
  memset(&at10, 0, sizeof at10);
  at10.struct_size = sizeof at10;
  at10.now = 10;

  CHECK_OK(hs_capacity_submit(q, &j1));
  CHECK_OK(hs_capacity_submit(q, &j2));
  CHECK_OK(hs_capacity_submit(q, &j3));
  CHECK(hs_capacity_pending_count(q) == 3);
  CHECK_OK(hs_capacity_plan(q, NULL, &d));
  /* job 1 in h100 (first preference), job 2 in a100 (pinned), both within nominal quota; job 3
   * asks for 40 H100s, more than the cohort has: it waits */
  CHECK(hs_decision_admission_count(d) == 2);
  a = admission_at(d, 0);
  CHECK(a.job_id == 1 && a.borrowing == 0);
  CHECK_STR(a.flavor, "h100");
  CHECK_STR(a.queue, "team-a");
  a = admission_at(d, 1);
  CHECK(a.job_id == 2 && a.borrowing == 0);
  CHECK_STR(a.flavor, "a100");
  CHECK(hs_decision_preemption_count(d) == 0);
  CHECK(hs_decision_deferral_count(d) == 1);
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  CHECK_OK(hs_decision_deferral_at(d, 0, &def));
  CHECK(def.job_id == 3 && def.reason == HS_DEFER_QUOTA_EXCEEDED);
  CHECK(def.message[0] != '\0');
  /* planning is pure */
  CHECK(hs_capacity_admitted_count(q) == 0);
  CHECK_OK(hs_capacity_apply(q, d));
  CHECK(hs_capacity_admitted_count(q) == 2 && hs_capacity_pending_count(q) == 1);
  /* applying the same plan again is stale */
  CHECK_STATUS(HS_CONFLICT, hs_capacity_apply(q, d));
  hs_decision_free(d);
  CHECK_OK(hs_capacity_job_admitted(q, 2, &admitted, &flavor));
  CHECK(admitted == 1);
  CHECK_STR(flavor, "a100");
  CHECK_OK(hs_capacity_release(q, 3));

  memset(&line, 0, sizeof line);
  line.struct_size = sizeof line;
  CHECK_OK(hs_capacity_quota(q, "team-a", "h100", "gpu", &line));
  /* team-a uses its 8 H100s; 8 more (team-b's) are still available to it */
  CHECK(line.nominal == 8000 && line.usage == 8000 && line.available == 8000);
  CHECK(line.borrowed == 0);
  CHECK_OK(hs_capacity_share(q, "team-a", &share));
  CHECK(share == 0);

  /* job 4 borrows 4 of team-b's idle H100s; admitted at time 10, after jobs 1 and 2 (time 0),
   * so reclaiming takes it first (most recently admitted) */
  CHECK_OK(hs_capacity_submit(q, &j4));
  CHECK_OK(hs_capacity_plan(q, &at10, &d));
  CHECK(hs_decision_admission_count(d) == 1);
  a = admission_at(d, 0);
  CHECK(a.job_id == 4 && a.borrowing == 1);
  CHECK_STR(a.flavor, "h100");
  CHECK_OK(hs_capacity_apply(q, d));
  hs_decision_free(d);
  CHECK_OK(hs_capacity_quota(q, "team-a", "h100", "gpu", &line));
  CHECK(line.usage == 12000 && line.borrowed == 4000);
  /* DRS: 4000 borrowed * 1000 / lendable gpu (the cohort's 16000 H100 + 32000 A100) = 83.3 -> 84 */
  CHECK_OK(hs_capacity_share(q, "team-a", &share));
  CHECK(share == 84);

  /* what-if: team-b wants its 8 H100s back: only by reclaiming job 4; no side effects */
  CHECK_OK(hs_capacity_what_if(q, &j8, NULL, &d));
  memset(&w, 0, sizeof w);
  w.struct_size = sizeof w;
  CHECK_OK(hs_decision_what_if(d, &w));
  CHECK(w.admissible_now == 0 && w.needs_preemption == 1);
  CHECK_STR(w.flavor, "h100");
  CHECK(hs_decision_admission_count(d) == 0);
  CHECK(hs_decision_preemption_count(d) == 1);
  memset(&v, 0, sizeof v);
  v.struct_size = sizeof v;
  CHECK_OK(hs_decision_preemption_at(d, 0, &v));
  CHECK(v.job_id == 4 && v.preemptor_id == 8);
  CHECK_STR(v.queue, "team-a");
  CHECK_CONTAINS(v.reason, "InCohortReclamation");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_capacity_apply(q, d)); /* a what-if is no plan */
  hs_decision_free(d);
  CHECK(hs_capacity_pending_count(q) == 0 && hs_capacity_admitted_count(q) == 3);

  /* the same job in an admission cycle: the plan preempts job 4 */
  CHECK_OK(hs_capacity_submit(q, &j8));
  CHECK_OK(hs_capacity_plan(q, NULL, &d));
  CHECK(hs_decision_admission_count(d) == 0);
  CHECK(hs_decision_preemption_count(d) == 1);
  CHECK_OK(hs_decision_preemption_at(d, 0, &v));
  CHECK(v.job_id == 4 && v.preemptor_id == 8);
  CHECK_OK(hs_capacity_apply(q, d));
  hs_decision_free(d);
  /* once the victim is gone, job 8 is admitted in h100 */
  CHECK_OK(hs_capacity_release(q, 4));
  CHECK_OK(hs_capacity_plan(q, NULL, &d));
  CHECK(hs_decision_admission_count(d) == 1);
  a = admission_at(d, 0);
  CHECK(a.job_id == 8 && a.borrowing == 0);
  CHECK_STR(a.flavor, "h100");
  hs_decision_free(d);
  hs_capacity_free(q);
}

static void test_errors_change_nothing(void) {
  static const int64_t g1 = 1000;
  static const int64_t neg = -5;
  static const char* const b200[1] = {"b200"};
  hs_capacity_t* q = make_queues();
  hs_capacity_job_t ok = job(1, "team-a", &g1, NULL);
  hs_capacity_job_t bad_queue = job(2, "team-zzz", &g1, NULL);
  hs_capacity_job_t bad_flavor = job(3, "team-a", &g1, b200);
  hs_capacity_job_t bad_amount = job(4, "team-a", &neg, NULL);
  hs_capacity_job_t cohort = job(5, "org", &g1, NULL);
  hs_capacity_spec_t* spec = NULL;
  hs_capacity_t* none = NULL;
  hs_decision_t* d = NULL;
  int64_t share = 0;
  CHECK_OK(hs_capacity_submit(q, &ok));
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_capacity_submit(q, &ok));
  CHECK_STATUS(HS_NOT_FOUND, hs_capacity_submit(q, &bad_queue));
  CHECK_CONTAINS(hs_last_error(), "team-zzz");
  CHECK_STATUS(HS_NOT_FOUND, hs_capacity_submit(q, &bad_flavor));
  CHECK_CONTAINS(hs_last_error(), "b200");
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_capacity_submit(q, &bad_amount));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_capacity_submit(q, &cohort));
  CHECK_STATUS(HS_NOT_FOUND, hs_capacity_what_if(q, &bad_queue, NULL, &d));
  CHECK(d == NULL);
  CHECK(hs_capacity_pending_count(q) == 1);
  CHECK_STATUS(HS_NOT_FOUND, hs_capacity_release(q, 99));
  CHECK_STATUS(HS_NOT_FOUND, hs_capacity_share(q, "nobody", &share));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_capacity_submit(q, NULL));
  CHECK_CONTAINS(hs_last_error(), "'job'");

  CHECK_OK(hs_capacity_spec_new(&spec));
  CHECK_OK(hs_capacity_spec_add_cohort(spec, "org", NULL));
  CHECK_STATUS(HS_ALREADY_EXISTS, hs_capacity_spec_add_queue(spec, "org", NULL, HS_ORDER_PRIORITY));
  CHECK_STATUS(HS_NOT_FOUND, hs_capacity_spec_add_queue(spec, "q", "nowhere", HS_ORDER_PRIORITY));
  CHECK_OK(hs_capacity_spec_add_queue(spec, "q", "org", HS_ORDER_STRICT_FIFO));
  CHECK_STATUS(HS_INVALID_ARGUMENT,
               hs_capacity_spec_set_preemption(spec, "org", HS_WITHIN_QUEUE_NEVER, HS_RECLAIM_ANY));
  /* a negative quota is refused when the tree is built, naming the queue */
  CHECK_OK(hs_capacity_spec_add_quota(spec, "q", "default", "gpu", -1, HS_NO_LIMIT, HS_NO_LIMIT));
  CHECK_STATUS(HS_INVALID_ARGUMENT, hs_capacity_new(spec, &none));
  CHECK_CONTAINS(hs_last_error(), "q");
  CHECK(none == NULL);
  hs_capacity_spec_free(spec);
  hs_capacity_free(q);
}

int main(void) {
  RUN(test_cycle_borrow_what_if);
  RUN(test_errors_change_nothing);
  return TEST_RESULT();
}
