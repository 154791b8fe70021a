# SPDX-License-Identifier: MIT
"""YARN's proportional capacity preemption (PCPP) planner from Python, checked against a scenario
derived by hand."""

from fractions import Fraction

import pytest

import hetsched


def snapshot():
    """A 12-unit cluster. prod (guaranteed 8) runs job 1 (4 containers) and wants 4 more; dev
    (guaranteed 4) runs job 10 (an AM, 101, and containers 102-105, started at 0-4) and the gang
    job 11 (containers 111-113, started at 6-8, submitted later). Every container has size 1."""
    containers = [{"id": i, "job": 1, "start_time": i - 1, "size": 1} for i in range(1, 5)]
    containers.append({"id": 101, "job": 10, "start_time": 0, "size": 1, "am": True})
    containers += [{"id": 100 + i, "job": 10, "start_time": i - 1, "size": 1} for i in range(2, 6)]
    containers += [{"id": 110 + i, "job": 11, "start_time": 5 + i, "size": 1} for i in range(1, 4)]
    return {
        "cluster": 12,
        "queues": [{"name": "prod", "guaranteed": 8, "pending": 4},
                   {"name": "dev", "guaranteed": 4}],
        "jobs": [{"id": 1, "queue": "prod"}, {"id": 10, "queue": "dev"},
                 {"id": 11, "queue": "dev", "submit_time": 5, "gang": True}],
        "containers": containers,
    }


def victims(plan):
    return [(v["container"], v["reason"]) for v in plan["victims"]]


def test_ideal_assignment_and_gang_victims():
    # Water-filling: prod starts at its use (4), dev at min(guaranteed, used) = 4; 4 units left.
    # prod is the most underserved (4/8 < 4/4): offered ceil(4 * 8/12) = 3, then ceil(1 * 8/12)
    # = 1, so ideal = prod 8, dev 4. dev must give back 8 - max(min(8, 4), 4) = 4. Jobs go in
    # reverse FIFO: the later gang (3 units, newest first) fits, then job 10's newest, 105.
    pcpp = hetsched.ProportionalPreemption(natural_termination_factor=1,
                                           total_preemption_per_round=1)
    plan = pcpp.plan(snapshot())
    prod, dev = plan["queues"]
    assert (prod["queue"], prod["used"], prod["ideal"], prod["to_obtain"]) == ("prod", 4, 8, 0)
    assert (dev["used"], dev["ideal"], dev["to_be_preempted"], dev["to_obtain"]) == (8, 4, 4, 4)
    assert dev["selected"] == 4 and dev["leaf"] is True
    assert (plan["root_ideal"], plan["preemption_allowed"]) == (12, 12)
    assert victims(plan) == [(113, "over_ideal"), (112, "gang_member"), (111, "gang_member"),
                             (105, "over_ideal")]
    assert [v["job"] for v in plan["victims"]] == [11, 11, 11, 10]
    assert {v["queue"] for v in plan["victims"]} == {"dev"}


def test_yarn_defaults_cap_the_round():
    # Per-round cap floor(12 * 0.1) = 1 < need 4: to_be_preempted = 4 * 1/4 = 1; natural
    # termination ceil(1 * 0.2) = 1. The 3-unit gang exceeds the cap; container 105 fits.
    plan = hetsched.plan_proportional_preemption(snapshot())
    dev = plan["queues"][1]
    assert plan["preemption_allowed"] == 1
    assert (dev["to_be_preempted"], dev["to_obtain"], dev["selected"]) == (1, 1, 1)
    assert victims(plan) == [(105, "over_ideal")]


def test_minimum_runtime_protects_young_units_and_ams_go_last():
    # now 10, min_runtime 7: the gang (latest start 8) and 105 (start 4) are too young; 104, 103,
    # 102 are taken, then the AM 101 in the last pass.
    pcpp = hetsched.ProportionalPreemption(natural_termination_factor=Fraction(1),
                                           total_preemption_per_round=(1, 1), min_runtime=7)
    plan = pcpp.plan(snapshot(), now=10)
    assert victims(plan) == [(104, "over_ideal"), (103, "over_ideal"), (102, "over_ideal"),
                             (101, "over_ideal_am")]
    # in-flight victims count against the need: nothing new is picked for it
    snap = snapshot()
    for c in snap["containers"]:
        if c["id"] in (101, 102, 103, 104):
            c["in_flight"] = True
    again = pcpp.plan(snap, now=10)
    assert again["victims"] == [] and again["queues"][1]["in_flight"] == 4


def test_vectors_and_params():
    snap = snapshot()
    snap["cluster"] = [12, 24]
    for q in snap["queues"]:
        q["guaranteed"] = [q["guaranteed"], 2 * q["guaranteed"]]
        q["pending"] = [q.get("pending", 0), 2 * q.get("pending", 0)]
    for c in snap["containers"]:
        c["size"] = [1, 2]
    plan = hetsched.ProportionalPreemption(natural_termination_factor=1,
                                           total_preemption_per_round=1).plan(snap)
    assert plan["queues"][1]["ideal"] == [4, 8]
    assert victims(plan)[0] == (113, "over_ideal") and len(plan["victims"]) == 4
    params = hetsched.ProportionalPreemption(max_ignored_over_capacity=0.1,
                                             natural_termination_factor="1/5").params
    assert (params["max_ignored_over_capacity_num"], params["max_ignored_over_capacity_den"]) \
        == (1, 10)
    assert params["natural_termination_factor"] == 0.2 and params["rounding"] == "up"
    assert params["total_preemption_per_round_den"] == 10


def test_plans_load_into_pandas():
    pd = pytest.importorskip("pandas")
    plan = hetsched.plan_proportional_preemption(snapshot())
    queues = pd.DataFrame(plan["queues"]).set_index("queue")
    assert queues.loc["dev", "to_obtain"] == 1
    assert list(pd.DataFrame(plan["victims"])["container"]) == [105]


def test_bad_input():
    pcpp = hetsched.ProportionalPreemption()
    snap = snapshot()
    snap["jobs"][0]["queue"] = "nope"
    with pytest.raises(hetsched.NotFound, match="nope"):
        pcpp.plan(snap)
    snap = snapshot()
    snap["containers"][0]["job"] = 99
    with pytest.raises(hetsched.NotFound, match="99"):
        pcpp.plan(snap)
    snap = snapshot()
    snap["queues"][0]["colour"] = "red"
    with pytest.raises(hetsched.InvalidArgument, match="colour"):
        pcpp.plan(snap)
    snap = snapshot()
    snap["containers"][0]["size"] = [1, 2]
    with pytest.raises(hetsched.InvalidArgument, match="size"):
        pcpp.plan(snap)
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.ProportionalPreemption(natural_termination_factor=-1)
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.ProportionalPreemption(rounding="sideways")
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.plan_proportional_preemption(snapshot(), params={"now": 1})
