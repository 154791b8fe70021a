# SPDX-License-Identifier: MIT
"""hetsched.Policy: any registry policy by name, driven through the policy contract."""
import json

import pytest

import hetsched
from conftest import gpu_job


def run(policy, state, job):
    """place + apply + commit, as an embedder does; returns the decision."""
    d = policy.place(state, job)
    if d["binds"]:
        state.apply(d)
        policy.commit(state, d)
    return d


def test_packer_places_commits_and_releases(two_nodes):
    p = hetsched.Policy("fifo+packer", two_nodes)
    assert (p.spec, p.ordering, p.placement) == ("fifo+packer", "fifo", "packer")
    assert p.traits == {"oversubscribes": False, "per_tenant": False, "preempts": False,
                        "migrates": False}
    s = hetsched.ClusterState(two_nodes)
    for j, gpus in ((1, 4), (2, 2), (3, 4)):
        s.submit(gpu_job(j, gpus))
    assert p.what_if(s, 1) == p.what_if(s, 1)
    probe = p.what_if(s, 1)
    d = run(p, s, 1)
    assert d == probe
    assert [b["node"] for b in d["binds"]] == [0] and len(d["binds"][0]["devices"]) == 4
    assert run(p, s, 2)["binds"][0]["node"] == 1
    late = p.place(s, 3)  # 2 GPUs free: deferred
    assert late["binds"] == [] and late["deferrals"][0]["reason"] == "insufficient_capacity"
    s.record(1, "start")
    s.record(1, "succeed")
    p.release(s, 1)
    assert run(p, s, 3)["binds"][0]["node"] == 0


def test_capacity_tree_by_params_preempts_for_its_nominal_quota(two_nodes):
    tree = {"nodes": [{"name": "org", "kind": "cohort"},
                      {"name": "t0", "parent": "org", "quotas": [{"resource": "gpu", "nominal": 4}],
                       "preemption": {"reclaim_within_cohort": "any"}},
                      {"name": "t1", "parent": "org", "quotas": [{"resource": "gpu", "nominal": 4}],
                       "preemption": {"reclaim_within_cohort": "any"}}]}
    p = hetsched.Policy("fifo+capacity", two_nodes,
                        params={"tree": json.dumps(tree), "tenants": "t0/t1"})
    assert p.traits["preempts"] and p.traits["per_tenant"]
    s = hetsched.ClusterState(two_nodes)
    s.submit(gpu_job(1, 4, tenant=1, preemptible=True))
    s.submit(gpu_job(2, 4, tenant=1, preemptible=True))
    assert run(p, s, 1)["binds"]
    p.set_time(1000)
    assert run(p, s, 2)["binds"]  # tenant 1 borrows t0's quota
    s.submit(gpu_job(3, 4, tenant=0))
    # Kueue takes the most recently admitted borrower first: job 2 (admitted at 1 s).
    d = p.place(s, 3)
    assert d["binds"] == []
    assert [(x["job"], x["reason"]) for x in d["preemptions"]] == [
        (2, "InCohortReclamation by job 3")]


def test_unknown_names_and_bad_parameters_raise(two_nodes):
    with pytest.raises(hetsched.NotFound) as e:
        hetsched.Policy("fifo+nosuch", two_nodes)
    assert "nosuch" in str(e.value)
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.Policy("fifo+packer:fit=tight", two_nodes)
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.Policy("fifo+capacity", two_nodes, params={"tree": "{}"})
    with pytest.raises(hetsched.InvalidArgument):  # HiveD needs the topology
        hetsched.Policy("fifo+hived", two_nodes)
    other = hetsched.Cluster([{"name": "x", "gpus": 1, "gpu_type": "A100-SXM4-80GB"}])
    p = hetsched.Policy("fifo+packer", two_nodes)
    with pytest.raises(hetsched.InvalidArgument):
        p.place(hetsched.ClusterState(other), 1)


def test_replay_restores_a_restarted_policy(two_nodes):
    a = hetsched.Policy("fifo+packer", two_nodes)
    sa = hetsched.ClusterState(two_nodes)
    sa.submit(gpu_job(1, 2))
    d = run(a, sa, 1)
    b = hetsched.Policy("fifo+packer", two_nodes)
    sb = hetsched.ClusterState(two_nodes)
    sb.submit(gpu_job(1, 2))
    b.replay(sb, {"binds": d["binds"]})
    assert sa == sb
    for s in (sa, sb):
        s.submit(gpu_job(2, 4))
    assert a.place(sa, 2) == b.place(sb, 2)
