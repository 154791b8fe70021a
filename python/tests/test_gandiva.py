# SPDX-License-Identifier: MIT
"""Gandiva: reactive placement, time slicing, migration and grow-shrink."""

import pytest

import hetsched
from conftest import gpu_job


def placed_node(decision):
    return {row["job"]: row["node"] for row in decision["binds"]}


def test_reactive_affinity_then_time_slicing(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    g = hetsched.GandivaReactive(two_nodes)
    for j, gpus in [(1, 2), (2, 2), (3, 4)]:
        s.submit(gpu_job(j, gpus, preemptible=True))
        d = g.place_and_apply(s, j)
        s.record(j, "start")
        assert d["deferrals"] == []
    assert s.placement(1)[0]["node"] == 0
    assert s.placement(2)[0]["node"] == 0  # same affinity (2 GPUs) before the empty node
    assert s.placement(3)[0]["node"] == 1
    assert g.affinity(0) == 2 and g.affinity(1) == 4
    assert g.free_gpus(0) == 0
    # Full cluster: job 4 (2 GPUs) time-slices with job 1 on node 0.
    s.submit(gpu_job(4, 2))
    d = g.place(s, 4)
    assert d["suspensions"] == [{"job": 1}]
    assert placed_node(d) == {4: 0}
    assert sorted(d["binds"][0]["devices"]) == sorted(s.placement(1)[0]["devices"])
    before = s.copy()
    s.apply(d)
    g.commit(d)
    assert s.status(1)["state"] == "suspended"
    assert g.time_sliced(0) == 1
    assert s != before
    with pytest.raises(hetsched.NotFound):
        g.affinity(5)


def test_reactive_commit_refuses_devices_outside_the_cluster(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    g = hetsched.GandivaReactive(two_nodes)
    s.submit(gpu_job(1, 2, preemptible=True))
    g.place_and_apply(s, 1)
    bad = {"binds": [{"job": 2, "task": 0, "node": 0, "devices": [100000, 100001]}]}
    with pytest.raises(hetsched.InvalidArgument, match="device 100000"):
        g.commit(bad)
    # Nothing changed: node 0 still hosts job 1's 2 GPUs and has 2 free.
    assert g.affinity(0) == 2 and g.free_gpus(0) == 2
    small = hetsched.ClusterState(hetsched.Cluster(
        [{"name": "n0", "gpus": 4, "gpu_type": "A100-SXM4-80GB", "gpu_memory_mib": 81920,
          "milli_cpu": 32000, "memory_mib": 262144}]))
    with pytest.raises(hetsched.InvalidArgument, match="1 nodes and 4 devices"):
        g.rebuild(small)


def test_time_slice_plan(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    g = hetsched.GandivaReactive(two_nodes)
    s.submit(gpu_job(1, 4, preemptible=True))
    g.place_and_apply(s, 1)
    s.record(1, "start")
    s.submit(gpu_job(2, 4, preemptible=True))
    g.place_and_apply(s, 2)
    s.record(2, "start")
    s.submit(gpu_job(3, 4, preemptible=True))
    d = g.place_and_apply(s, 3)
    assert d["suspensions"] == [{"job": 1}]
    s.record(3, "start")
    plan = hetsched.plan_time_slices(
        s, [{"job": 1, "attained_s": 30, "since_s": 60}, {"job": 2, "attained_s": 120, "since_s": 0},
            {"job": 3, "attained_s": 0, "since_s": 60}], now_s=120, quantum_s=60)
    assert plan["suspend"] == [3] and plan["resume"] == [1]
    assert plan["decision"]["resumes"] == [{"job": 1}]


def test_migration_defragments(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    for j, node, devs in [(1, 0, [0, 1]), (2, 1, [4])]:
        s.submit(gpu_job(j, len(devs), preemptible=True))
        s.apply({"binds": [{"job": j, "task": 0, "node": node, "devices": devs,
                            "milli_gpu": 1000}]})
        s.record(j, "start")
    plan = hetsched.MigrationPlanner(two_nodes).plan(s, threshold_num=1, threshold_den=4)
    assert len(plan["moves"]) == 1
    move = plan["moves"][0]
    assert move["kind"] == "defragment" and move["gpus"] == 1
    assert plan["servers_emptied"] == 1
    assert move["job"] == 2 and move["target"] == 0
    assert plan["fragmented_before"] == 5 and plan["fragmented_after"] == 1
    s.apply(plan["decision"])
    nodes = {s.placement(1)[0]["node"], s.placement(2)[0]["node"]}
    assert len(nodes) == 1


def test_grow_shrink(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    s.submit(gpu_job(1, 1, tasks=4, gang=False, preemptible=True))
    s.apply({"binds": [{"job": 1, "task": 0, "node": 0, "devices": [0], "milli_gpu": 1000}]})
    s.record(1, "start")
    plan = hetsched.GrowShrinkPlanner(two_nodes).plan(s, [{"job": 1, "base_tasks": 1}])
    assert plan["free_gpus"] == 7
    assert plan["offered_gpus"] == 3
    assert sorted(r["task"] for r in plan["grow"]) == [1, 2, 3]
    s.apply(plan["decision"])
    assert all(p["node"] is not None for p in s.placement(1))


def test_grow_shrink_releases_tasks_when_jobs_wait(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    s.submit(gpu_job(1, 1, tasks=8, gang=False, preemptible=True))
    s.apply({"binds": [{"job": 1, "task": 0, "node": 0, "devices": [0], "milli_gpu": 1000}]})
    s.record(1, "start")
    planner = hetsched.GrowShrinkPlanner(two_nodes)
    grown = planner.plan(s, [{"job": 1, "base_tasks": 1}])
    assert grown["offered_gpus"] == 7 and grown["decision"]["releases"] == []
    s.apply(grown["decision"])
    # Tasks 1-3 join task 0 on node 0 (servers the job runs on first), 4-7 fill node 1.
    assert [(p["task"], p["node"]) for p in s.placement(1)] == [
        (0, 0), (1, 0), (2, 0), (3, 0), (4, 1), (5, 1), (6, 1), (7, 1)]
    # A 3-GPU job waits: the elastic job gives back its three highest optional tasks.
    s.submit(gpu_job(2, 3))
    plan = planner.plan(s, [{"job": 1, "base_tasks": 1}])
    assert plan["waiting_gpus"] == 3 and plan["free_gpus"] == 0
    assert plan["shrink"] == [{"job": 1, "tasks": [7, 6, 5], "gpus": 3}]
    assert plan["reclaimed_gpus"] == 3 and plan["grow"] == []
    d = plan["decision"]
    assert d["releases"] == [{"job": 1, "task": 7}, {"job": 1, "task": 6},
                             {"job": 1, "task": 5}]
    assert d["preemptions"] == [] and d["binds"] == []
    s.apply(d)
    assert s.status(1)["state"] == "running"
    assert [p["task"] for p in s.placement(1) if p["node"] is None] == [5, 6, 7]
    assert s.device_free(7)["milli_gpu"] == 1000 and s.device_free(4)["milli_gpu"] == 0
    # The released tasks may be bound again.
    s.apply({"binds": [{"job": 1, "task": 6, "node": 1, "devices": [6], "milli_gpu": 1000}]})
    assert s.placement(1)[6]["devices"] == [6]


def test_release_rows_are_checked_and_applied_from_dicts(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    s.submit(gpu_job(1, 1, tasks=3, gang=False, preemptible=True))
    s.apply({"binds": [{"job": 1, "task": t, "node": 0, "devices": [t], "milli_gpu": 1000}
                       for t in range(3)]})
    s.record(1, "start")
    before = s.copy()
    # Releasing every placed task is refused (a partial release keeps one); nothing changes.
    with pytest.raises(hetsched.Error):
        s.apply({"releases": [{"job": 1, "task": t} for t in range(3)]})
    with pytest.raises(hetsched.InvalidArgument):
        s.apply({"releases": [{"job": 1, "task": 2, "gpus": 1}]})  # unknown key
    with pytest.raises(hetsched.InvalidArgument):
        s.apply({"releases": [{"job": 1}]})  # task missing
    assert s == before
    assert s.is_feasible({"releases": [{"job": 1, "task": 2}, {"job": 1, "task": 1}]})
    s.apply({"releases": [{"job": 1, "task": 2}, {"job": 1, "task": 1}]})
    assert [p["node"] for p in s.placement(1)] == [0, None, None]
    assert s.device_free(1)["milli_gpu"] == 1000


def test_packing_trial_and_verdict(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    for j in (1, 2):
        s.submit({"id": j, "preemptible": True,
                  "roles": [{"name": "w", "gpus": 1, "milli_per_gpu": 500}]})
    s.apply({"binds": [{"job": 1, "task": 0, "node": 0, "devices": [0], "milli_gpu": 500}]})
    s.record(1, "start")
    profiles = [{"job": 1, "gpu_util_milli": 300, "memory_mib": 2000, "rate": 100},
                {"job": 2, "gpu_util_milli": 200, "memory_mib": 1000, "rate": 100}]
    p = hetsched.propose_packing(s, profiles)
    assert len(p["trials"]) == 1
    trial = p["trials"][0]
    assert (trial["job"], trial["device"], trial["partners"]) == (2, 0, [1])
    assert trial["util_milli"] == 500 and trial["profiled_memory_mib"] == 3000
    assert [(b["job"], b["devices"]) for b in p["start"]["binds"]] == [(2, [0])]
    s.apply(p["start"])
    s.record(2, "start")
    good = hetsched.judge_packing(s, trial, profiles, [{"job": 1, "rate": 80},
                                                      {"job": 2, "rate": 70}])
    assert good["keep"] is True and good["packed_throughput_milli"] == 1500
    bad = hetsched.judge_packing(s, trial, profiles, [{"job": 1, "rate": 40},
                                                     {"job": 2, "rate": 30}])
    assert bad["keep"] is False and bad["packed_throughput_milli"] == 700
    # Job 2 came from the queue (no previous placement) and is preemptible: the undo preempts it.
    assert [p["job"] for p in bad["undo"]["preemptions"]] == [2]
    s.apply(bad["undo"])
    assert s.status(2)["state"] == "preempted"
