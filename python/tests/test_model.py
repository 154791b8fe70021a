# SPDX-License-Identifier: MIT
"""The model: clusters, job specs, the lifecycle, decisions (check/apply) and error mapping."""

import pytest

import hetsched
from conftest import gpu_job


def bind_rows(job, node, devices, milli=1000):
    return [{"job": job, "task": 0, "node": node, "devices": devices, "milli_gpu": milli}]


def test_cluster_ids_and_capacity(two_nodes):
    assert two_nodes.node_count == 2
    assert two_nodes.device_count == 8
    devices = two_nodes.devices()
    assert [d["node"] for d in devices] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert devices[5]["local_index"] == 1
    assert devices[5]["type"] == "A100-SXM4-80GB"
    cap = two_nodes.total_capacity()
    assert cap["milli_gpu"] == 8000
    assert cap["milli_cpu"] == 64000
    assert cap["gpu_memory_mib"] == 8 * 81920
    assert two_nodes.find_node("n1") == 1
    assert two_nodes.find_node("nope") is None


def test_cluster_rejects_duplicate_node():
    with pytest.raises(hetsched.AlreadyExists) as e:
        hetsched.Cluster([{"name": "a", "gpus": 1}, {"name": "a", "gpus": 2}])
    assert "nodes[1]" in str(e.value)
    assert e.value.code == "already_exists"
    assert isinstance(e.value, ValueError)


def test_submit_apply_and_lifecycle(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    s.submit(gpu_job(1, 2))
    assert s.status(1) == {"state": "queued", "attempts": 0}
    s.apply({"binds": bind_rows(1, 1, [4, 5])})
    assert s.status(1)["state"] == "scheduled"
    assert s.node_used(1)["milli_gpu"] == 2000
    assert s.node_free(1)["milli_gpu"] == 2000
    assert s.device_used(5)["holders"] == [
        {"job": 1, "task": 0, "milli_gpu": 1000, "gpu_memory_mib": 0}]
    assert s.placement(1) == [{"job": 1, "task": 0, "node": 1, "devices": [4, 5],
                               "milli_gpu": [1000, 1000], "gpu_memory_mib": [0, 0]}]
    s.record(1, "start")
    s.record(1, "succeed")
    assert s.status(1)["state"] == "succeeded"
    assert s.total_used()["milli_gpu"] == 0
    s.forget(1)
    with pytest.raises(hetsched.NotFound):
        s.status(1)


def test_failed_apply_changes_nothing(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    s.submit(gpu_job(1, 2))
    s.submit(gpu_job(2, 4))
    s.apply({"binds": bind_rows(1, 0, [0, 1])})
    before = s.copy()
    # Job 2 wants 4 GPUs of node 0 where 2 are taken: capacity fails at the whole decision.
    bad = {"binds": [{"job": 2, "task": 0, "node": 0, "devices": [0, 1, 2, 3], "milli_gpu": 1000}]}
    assert not s.is_feasible(bad)
    with pytest.raises(hetsched.FailedPrecondition) as e:
        s.apply(bad)
    assert isinstance(e.value, RuntimeError)
    assert s == before
    assert s.status(2)["state"] == "queued"
    # A device on the wrong node is an invalid argument.
    with pytest.raises(hetsched.InvalidArgument):
        s.check({"binds": bind_rows(2, 1, [0, 1, 2, 3])})
    assert s == before


def test_illegal_transition_and_bad_spec(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    s.submit(gpu_job(7, 1))
    with pytest.raises(hetsched.FailedPrecondition):
        s.record(7, "succeed")
    with pytest.raises(hetsched.InvalidArgument) as e:
        s.record(7, "explode")
    assert "explode" in str(e.value)
    with pytest.raises(hetsched.OutOfRange):
        s.submit({"id": 8, "roles": [{"name": "w", "gpus": 1, "milli_per_gpu": 1500}]})
    with pytest.raises(hetsched.InvalidArgument) as e:
        s.submit({"id": 9, "roles": [{"name": "w", "gpu": 1}]})
    assert "unknown key 'gpu'" in str(e.value)
    with pytest.raises(hetsched.AlreadyExists):
        s.submit(gpu_job(7, 1))
    assert [j["id"] for j in s.jobs()] == [7]


def test_fractional_gpu_sharing(two_nodes):
    s = hetsched.ClusterState(two_nodes)
    s.submit({"id": 1, "roles": [{"name": "w", "gpus": 1, "milli_per_gpu": 300}]})
    s.submit({"id": 2, "roles": [{"name": "w", "gpus": 1, "milli_per_gpu": 600}]})
    s.apply({"binds": bind_rows(1, 0, [0], 300) + bind_rows(2, 0, [0], 600)})
    assert s.device_free(0) == {"milli_gpu": 100, "gpu_memory_mib": 81920}
    assert [h["job"] for h in s.device_used(0)["holders"]] == [1, 2]


def test_next_status_retry_rule():
    assert hetsched.next_status("running", "fail", attempts=0, retry_limit=1) == {
        "state": "queued", "attempts": 1}
    assert hetsched.next_status("running", "fail", attempts=1, retry_limit=1) == {
        "state": "failed", "attempts": 2}
    with pytest.raises(hetsched.FailedPrecondition):
        hetsched.next_status("succeeded", "start")
    assert hetsched.is_terminal("cancelled")
    assert hetsched.job_states()[0] == "submitted"


def test_job_helpers():
    job = {"id": 3, "roles": [{"name": "ps", "tasks": 2, "milli_cpu": 500},
                              {"name": "w", "tasks": 4, "gpus": 2, "memory_mib": 100}]}
    assert hetsched.task_count(job) == 6
    total = hetsched.total_request(job)
    assert total["milli_gpu"] == 8000
    assert total["milli_cpu"] == 1000
    assert total["memory_mib"] == 400
    assert hetsched.task_request(job, 2)["milli_gpu"] == 2000
    norm = hetsched.normalize_job(job)
    assert norm["gang"] is True and norm["roles"][1]["milli_per_gpu"] == 1000
    assert hetsched.normalize_gpu_model("NVIDIA A100-SXM4-80GB") == "A100-SXM4-80GB"
    types = [g["type"] for g in hetsched.known_gpu_specs()]
    assert "H100-SXM5-80GB" in types and types == sorted(types)


def test_error_hierarchy():
    assert issubclass(hetsched.InvalidArgument, hetsched.Error)
    assert issubclass(hetsched.InvalidArgument, ValueError)
    assert issubclass(hetsched.NotFound, KeyError)
    assert issubclass(hetsched.OutOfRange, ValueError)
    assert issubclass(hetsched.FailedPrecondition, RuntimeError)
    assert issubclass(hetsched.InternalError, RuntimeError)


def test_rows_load_into_pandas(two_nodes):
    pd = pytest.importorskip("pandas")
    s = hetsched.ClusterState(two_nodes)
    for j in range(1, 4):
        s.submit(gpu_job(j, j))
    jobs = pd.DataFrame(s.jobs())
    assert list(jobs["milli_gpu"]) == [1000, 2000, 3000]
    nodes = pd.DataFrame(two_nodes.nodes())
    assert list(nodes["name"]) == ["n0", "n1"]
    assert nodes["gpus"].sum() == 8
