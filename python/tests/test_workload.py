# SPDX-License-Identifier: MIT
"""Workload readers: Tiresias, Pollux, Gavel, openb, VC quotas, synthetic, merging."""

import pytest

import hetsched

TRACES = "data/traces"


def test_tiresias_and_pollux(shared):
    t = hetsched.parse_tiresias_jobs((shared / TRACES / "tiresias_sim/60_job.csv").read_text(),
                                     source="60_job.csv", tenant="lab")
    assert len(t) == 60
    assert all(j["tenant"] == "lab" and j["duration_ms"] > 0 for j in t)
    p = hetsched.load_trace(f"pollux:{shared / TRACES / 'pollux_osdi21/workloads/workload-1.csv'}")
    assert len(p) == 160
    spec = hetsched.parse_tiresias_cluster_spec(
        (shared / TRACES / "tiresias_sim/cluster_spec.csv").read_text())
    assert spec["gpus_per_node"] > 0


def test_gavel_tenant_from_file_stem(shared):
    path = shared / TRACES / "gavel_msr_philly_derived/seed0/23dbec.trace"
    jobs = hetsched.parse_trace("gavel", path.read_text(), source=str(path))
    assert jobs and {j["tenant"] for j in jobs} == {"23dbec"}
    assert hetsched.load_trace(f"gavel:{path}") == jobs


def test_openb_and_vc_table(shared):
    base = shared / TRACES / "alibaba_openb_v2023"
    lines = (base / "openb_pod_list_gpushare100.csv").read_text().splitlines()
    text = "\n".join(lines[:51]) + "\n"
    pods = hetsched.parse_openb_pods(text)
    assert len(pods) == 50
    trace = hetsched.parse_trace("openb", text)
    assert len(trace) == len([p for p in pods if p["creation_time"] is not None]) or len(trace) > 0
    table = hetsched.parse_vc_node_table(
        (shared / TRACES / "philly_vc_config/philly_vc_node_num.csv").read_text())
    assert table["gpus_per_node"] == 8
    assert table["total_gpus"] == sum(v["gpus"] for v in table["vcs"])
    assert all(v["gpus"] == 8 * v["nodes"] for v in table["vcs"])


def test_synthetic_is_seeded_and_merge():
    a = hetsched.synthesize(seed=3, jobs=50, cluster_gpus=64)
    assert a == hetsched.synthesize(seed=3, jobs=50, cluster_gpus=64)
    assert a != hetsched.synthesize(seed=4, jobs=50, cluster_gpus=64)
    assert len(a) == 50 and all(j["gpus_per_task"] <= 8 for j in a)
    x = [{"name": "x", "submit_ms": 5, "duration_ms": 10, "gpus_per_task": 1}]
    y = [{"name": "y", "submit_ms": 1, "duration_ms": 10, "gpus_per_task": 2}]
    merged = hetsched.merge_traces([x, y])
    assert [j["name"] for j in merged] == ["y", "x"]
    assert merged[0]["gpu_milli_per_task"] == 2000
    with pytest.raises(hetsched.AlreadyExists):
        hetsched.merge_traces([x, x])


def test_reader_errors_name_the_line():
    with pytest.raises(hetsched.Error) as e:
        hetsched.parse_trace("tiresias", "job_id,num_gpu,submit_time,iterations,model_name,"
                             "duration,interval\n1,x,0,1,m,10,1\n", source="bad.csv")
    assert "bad.csv" in str(e.value) or "line" in str(e.value)
    with pytest.raises(hetsched.NotFound):
        hetsched.parse_trace("nosuch", "", source="x")
