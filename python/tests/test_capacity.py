# SPDX-License-Identifier: MIT
"""Capacity queues: tree build, submit, admission cycles, preemption, what-if and shares."""

import pytest

import hetsched


def tree(reclaim="never"):
    return hetsched.CapacityQueues([
        {"name": "root", "kind": "cohort"},
        {"name": "a", "parent": "root", "quotas": [{"resource": "gpu", "nominal": 4}]},
        {"name": "b", "parent": "root", "quotas": [{"resource": "gpu", "nominal": 4}],
         "preemption": {"reclaim": reclaim}},
    ])


def test_borrowing_admission_and_status():
    q = tree()
    q.submit({"job": 1, "queue": "a", "request": {"gpu": 6}, "submit_time": 1})
    plan = q.cycle(now=10)
    assert plan["admitted"] == [{"job": 1, "queue": "a", "flavor": "default", "borrowing": True}]
    assert q.is_admitted(1) and q.admitted_count == 1
    st = q.status("a")
    line = st["lines"][0]
    assert (line["resource"], line["usage"], line["borrowed"]) == ("gpu", 6, 2)
    assert st["borrowing"] is True
    rows = {r["name"]: r for r in q.queues()}
    assert rows["a"]["borrowing"] and not rows["b"]["borrowing"]
    assert rows["root"]["kind"] == "cohort"


def test_quota_deferral_is_data_not_error():
    q = tree()
    q.submit({"job": 1, "queue": "a", "request": {"gpu": 9}})
    plan = q.plan()
    assert plan["admitted"] == []
    d = plan["decision"]["deferrals"]
    assert len(d) == 1 and d[0]["job"] == 1 and d[0]["reason"] == "quota_exceeded"
    assert q.is_pending(1)


def test_reclaim_preempts_the_borrower():
    q = tree(reclaim="any")
    q.submit({"job": 1, "queue": "a", "request": {"gpu": 6}})
    q.cycle()
    q.submit({"job": 2, "queue": "b", "request": {"gpu": 4}, "priority": 5})
    # what-if gives the next cycle's answer: job 2 (priority 5) goes first and takes job 1 as
    # its victim, so job 3 would wait with nothing left to preempt
    answer = q.what_if({"job": 3, "queue": "b", "request": {"gpu": 4}})
    assert answer["admissible_now"] is False and answer["needs_preemption"] is False
    assert answer["victims"] == []
    answer = q.what_if({"job": 2, "queue": "b", "request": {"gpu": 4}, "priority": 5})
    assert answer["admissible_now"] is False and answer["needs_preemption"] is True
    assert [v["victim"] for v in answer["victims"]] == [1]
    plan = q.cycle()
    assert plan["admitted"] == []
    pre = plan["preemptions"]
    assert len(pre) == 1 and pre[0]["preemptor"] == 2
    assert pre[0]["victims"] == [{"victim": 1, "queue": "a", "reason": "InCohortReclamation"}]
    assert q.in_flight(1)
    q.release(1)
    plan = q.cycle()
    assert [a["job"] for a in plan["admitted"]] == [2]


def test_plan_then_apply_round_trip():
    q = tree()
    q.submit({"job": 1, "queue": "b", "request": {"gpu": 2}})
    plan = q.plan(now=5)
    assert q.is_pending(1)
    q.apply(plan)
    assert q.is_admitted(1)


def test_errors_change_nothing():
    q = tree()
    with pytest.raises(hetsched.NotFound):
        q.submit({"job": 1, "queue": "nope", "request": {"gpu": 1}})
    with pytest.raises(hetsched.InvalidArgument):
        q.submit({"job": 1, "queue": "a", "request": {"gpu": 1}, "colour": 1})
    q.submit({"job": 1, "queue": "a", "request": {"gpu": 1}})
    with pytest.raises(hetsched.Error):
        q.submit({"job": 1, "queue": "a", "request": {"gpu": 1}})
    assert q.pending_count == 1
    with pytest.raises(hetsched.Error):
        hetsched.CapacityQueues([{"name": "x", "parent": "missing"}])


def test_yarn_queues():
    q = hetsched.CapacityQueues.from_yarn(
        [{"name": "root", "leaf": False}, {"name": "dev", "parent": "root", "capacity_percent": 25},
         {"name": "prod", "parent": "root", "capacity_percent": 75}],
        [{"resource": "gpu", "nominal": 8}])
    lines = {q.status(n)["queue"]: q.status(n)["lines"][0]["nominal"] for n in ("dev", "prod")}
    assert lines == {"dev": 2, "prod": 6}
