# SPDX-License-Identifier: MIT
"""The simulator and metrics: policy specs, clusters, workloads and figures equal to the CLI's."""

import pytest

import hetsched

OPENB = "data/traces/alibaba_openb_v2023/openb_pod_list_default.csv"

# hetsched-sim --nodes dgx-a100:2 --trace openb:<first 300 pods of openb_pod_list_default.csv>
#   --policy fifo+fgd --policy sjf+packer --policy tiresias+packer --out DIR
# (summary.json of the C++ simulator executable at this commit).
CLI = {
    "fifo+fgd": {"succeeded": 300, "jct_mean_s": 1362159.383, "jct_median_s": 1211769.0,
                 "jct_p95_s": 3940686.0, "queue_mean_s": 841897.443, "makespan_s": 14235317.0,
                 "utilisation": 0.558898, "jain": 0.377995, "preemptions": 0},
    "sjf+packer": {"succeeded": 300, "jct_mean_s": 589187.937, "jct_median_s": 21734.0,
                   "jct_p95_s": 4224260.0, "queue_mean_s": 68925.997, "makespan_s": 14236156.0,
                   "utilisation": 0.558865, "jain": 0.419680, "preemptions": 0},
    "tiresias+packer": {"succeeded": 300, "jct_mean_s": 1302050.273, "jct_median_s": 1202769.0,
                        "jct_p95_s": 3940686.0, "queue_mean_s": 774866.213,
                        "makespan_s": 14236186.0, "utilisation": 0.558867, "jain": 0.385017,
                        "preemptions": 31},
}


@pytest.fixture
def openb300(shared, tmp_path):
    lines = (shared / OPENB).read_text().splitlines()
    path = tmp_path / "openb300.csv"
    path.write_text("\n".join(lines[:301]) + "\n")
    return path


def test_figures_equal_the_cli(openb300):
    results = hetsched.compare(list(CLI), nodes="dgx-a100:2", trace_spec=f"openb:{openb300}")
    assert [r["policy"] for r in results] == list(CLI)
    for r in results:
        want = CLI[r["policy"]]
        got = r["summary"]
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=1e-3, rel=1e-6), (r["policy"], key)
        assert len(r["jobs"]) == 300
        assert r["counters"]["preemptions"] == want["preemptions"]
    # Tiresias evictions undone because the job they were for was not placed (engine.hpp).
    assert [r["counters"]["preemption_rollbacks"] for r in results] == [0, 0, 472]


def test_trace_rows_give_the_same_run(openb300):
    jobs = hetsched.load_trace(f"openb:{openb300}")
    a = hetsched.simulate("sjf+packer", nodes="dgx-a100:2", trace=jobs)
    b = hetsched.simulate("sjf+packer", nodes="dgx-a100:2", trace_spec=f"openb:{openb300}")
    assert a == b
    done = [j for j in a["jobs"] if j["state"] == "succeeded"]
    assert len(done) == 300
    assert all(j["jct_ms"] == j["finish_ms"] - j["submit_ms"] for j in done)
    mean = sum(j["jct_ms"] for j in done) / len(done) / 1000.0
    assert mean == pytest.approx(a["summary"]["jct_mean_s"])
    assert hetsched.describe([j["jct_ms"] / 1000.0 for j in done])["median"] == pytest.approx(
        CLI["sjf+packer"]["jct_median_s"])


def test_synthetic_workload_and_pandas():
    pd = pytest.importorskip("pandas")
    cluster = hetsched.ClusterTopology("two", [{"template": "dgx-a100", "count": 2}],
                                       nodes_per_rack=2)
    r = hetsched.simulate("fifo+gandiva", cluster=cluster,
                          synthetic={"jobs": 80, "seed": 7, "load": 1.5, "tenants": 3},
                          sample_s=600)
    jobs = pd.DataFrame(r["jobs"])
    assert len(jobs) == 80
    assert set(jobs["tenant"]) == {t["name"] for t in r["tenants"]}
    assert (jobs["state"] == "succeeded").sum() == r["summary"]["succeeded"]
    series = pd.DataFrame(r["series"])
    assert (series["allocated_milli_gpu"] <= 16000).all()
    summary = pd.DataFrame([r["summary"]])
    assert summary.loc[0, "policy"] == "fifo+gandiva"
    again = hetsched.simulate("fifo+gandiva", cluster=cluster,
                              synthetic={"jobs": 80, "seed": 7, "load": 1.5, "tenants": 3},
                              sample_s=600)
    assert again == r


def test_gandiva_grow_shrink_with_elastic_jobs():
    # One DGX A100: e (8 x 1 GPU, 400 s, preemptible) at 0 s, w (4 GPUs, 100 s) at 100 s.
    cluster = hetsched.ClusterTopology("one", [{"template": "dgx-a100", "count": 1}])
    jobs = [
        {"name": "e", "submit_ms": 0, "duration_ms": 400_000, "tasks": 8, "gpus_per_task": 1,
         "preemptible": True},
        {"name": "w", "submit_ms": 100_000, "duration_ms": 100_000, "tasks": 1,
         "gpus_per_task": 4},
    ]
    grow = hetsched.simulate("fifo+gandiva:grow=1", cluster=cluster, trace=jobs, elastic=True)
    # e shrinks to 4 tasks for w (100-200 s), runs at half speed meanwhile, grows back: 100 s
    # + 50 s of work by 200 s, 250 s left, ends at 450 s.
    assert [j["first_start_ms"] for j in grow["jobs"]] == [0, 100_000]
    assert [j["finish_ms"] for j in grow["jobs"]] == [450_000, 200_000]
    assert (grow["counters"]["shrinks"], grow["counters"]["grows"]) == (1, 1)
    still = hetsched.simulate("fifo+gandiva", cluster=cluster, trace=jobs, elastic=True)
    assert [j["finish_ms"] for j in still["jobs"]] == [400_000, 500_000]
    assert (still["counters"]["shrinks"], still["counters"]["grows"]) == (0, 0)


def test_quota_placements_get_default_quotas():
    runs = hetsched.compare(["fifo+capacity", "fifo+hived"], nodes="dgx-a100:2",
                            synthetic={"jobs": 60, "seed": 3, "tenants": 2})
    for r in runs:
        assert r["summary"]["jobs"] == 60
        assert r["summary"]["succeeded"] + r["summary"]["unplaceable"] + r["summary"][
            "rejected"] + r["summary"]["failed"] == 60


def test_bad_specs_and_knobs():
    with pytest.raises(hetsched.NotFound) as e:
        hetsched.simulate("nosuch+packer", synthetic={"jobs": 5})
    assert "nosuch" in str(e.value)
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.simulate("fifo+packer", synthetic={"jobs": 5}, round_minutes=3)
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.simulate("fifo+packer", nodes="dgx-a100", synthetic={"jobs": 5})
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.simulate("fifo+packer", trace=[{"name": "x", "duration_ms": -1,
                                                 "gpus_per_task": 1}])
    spec = hetsched.parse_policy_spec("tiresias:thresholds=3200/36000+packer:fit=worst")
    assert spec["order"] == "tiresias" and spec["order_params"] == {"thresholds": "3200/36000"}
    assert spec["placement_params"] == {"fit": "worst"}
    names = hetsched.policy_names()
    assert "fgd" in names["placements"] and "tiresias" in names["orderings"]


def test_metrics_functions():
    d = hetsched.describe([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (d["count"], d["mean"], d["median"], d["max"]) == (5, 3.0, 3.0, 5.0)
    assert hetsched.percentile([10.0, 20.0, 30.0, 40.0], 50) == 20.0
    assert hetsched.jain_index([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert hetsched.jain_index([1.0, 0.0]) == pytest.approx(0.5)
    with pytest.raises(hetsched.OutOfRange):
        hetsched.percentile([1.0], 0)
    shared = {"tenants": [{"name": "a", "mean_queue_s": 50.0}, {"name": "b", "mean_queue_s": 5.0}]}
    private = [{"tenants": [{"name": "a", "mean_queue_s": 20.0}]},
               {"tenants": [{"name": "b", "mean_queue_s": 10.0}]}]
    rows = hetsched.sharing_anomaly(shared, private)
    assert [(r["name"], r["anomaly_s"]) for r in rows] == [("a", 30.0), ("b", -5.0)]


def test_private_vcs_anomaly_equals_the_cli():
    # hetsched-sim --nodes dgx-a100:2 --jobs 60 --seed 3 --tenants 2 --policy fifo+packer
    #   --private-vcs --out DIR (summary.json).
    r = hetsched.simulate("fifo+packer", nodes="dgx-a100:2",
                          synthetic={"jobs": 60, "seed": 3, "tenants": 2}, seed=3,
                          private_vcs=True)
    rows = r["sharing_anomaly"]
    assert [x["name"] for x in rows] == ["vc0", "vc1"]
    assert [x["shared_queue_s"] for x in rows] == pytest.approx([295.466, 888.847], abs=1e-3)
    # No quota table: demand shares of the 16 GPUs, 11 and 5, in whole 8-GPU nodes.
    assert [(x["quota_gpus"], x["private_gpus"], x["private_nodes"], x["quota_from"])
            for x in rows] == [(11, 16, 2, "demand_share"), (5, 8, 1, "demand_share")]
    assert [x["private_queue_s"] for x in rows] == pytest.approx([0.0, 2864.095], abs=1e-3)
    assert [x["anomaly_s"] for x in rows] == pytest.approx([295.466, -1975.248], abs=1e-3)
    assert "sharing_anomaly" not in hetsched.simulate("fifo+packer", nodes="dgx-a100:2",
                                                      synthetic={"jobs": 5})


def test_private_vcs_sized_by_the_quota_table(tmp_path):
    table = tmp_path / "vcs.csv"
    table.write_text("vc,nodes\nvc0,1\nvc1,1\n")
    r = hetsched.simulate("fifo+packer", nodes="dgx-a100:2",
                          synthetic={"jobs": 60, "seed": 3, "tenants": 2}, seed=3,
                          private_vcs=True, vc_quota=str(table))
    rows = r["sharing_anomaly"]
    assert [(x["name"], x["quota_gpus"], x["private_gpus"], x["quota_from"]) for x in rows] == [
        ("vc0", 8, 8, "quota_table"), ("vc1", 8, 8, "quota_table")]
    # vc1 gets the same 8 GPUs as without a table; vc0 now has one node instead of two.
    assert rows[1]["private_queue_s"] == pytest.approx(2864.095, abs=1e-3)
    assert rows[0]["private_queue_s"] > 0


def test_earth_daily_quota_table(shared):
    earth = str(shared / "data/traces/helios_summary/Earth_vc_gpu_number_daily.csv")
    trace = [{"name": f"j{i}", "tenant": vc, "submit_ms": i * 1000, "duration_ms": 60000,
              "gpus_per_task": 8} for i, vc in enumerate(["vchbv", "vc6YE", "vcvcM"])]
    rows = {}
    for day in ("2020-04-01", "max", "mean"):
        r = hetsched.simulate("fifo+capacity", nodes="dgx-a100:32", trace=trace,
                              vc_quota=earth, vc_quota_day=day, private_vcs=True)
        rows[day] = {x["name"]: x["quota_gpus"] for x in r["sharing_anomaly"]}
    # vcvcM has no GPU on 2020-04-01: no private baseline.
    assert rows["2020-04-01"] == {"vchbv": 112, "vc6YE": 128}
    assert rows["max"] == {"vchbv": 112, "vc6YE": 216, "vcvcM": 40}
    assert rows["mean"] == {"vchbv": 68, "vc6YE": 201, "vcvcM": 3}
    with pytest.raises(hetsched.NotFound):
        hetsched.simulate("fifo+capacity", nodes="dgx-a100:2", trace=trace, vc_quota=earth,
                          vc_quota_day="2031-01-01")


def test_fragmentation_series_and_openb_cluster(shared):
    nodes = "openb-nodes:" + str(shared / "data/traces/alibaba_openb_v2023/"
                                          "openb_node_list_gpu_node.csv")
    r = hetsched.simulate("fifo+fgd", cluster=nodes, synthetic={"jobs": 200, "seed": 2},
                          fragmentation=True)
    assert r["total_milli_gpu"] == 6212000
    series = r["series"]
    assert all(0 <= x["fragmented_milli_gpu"] <= x["idle_milli_gpu"] for x in series)
    assert all(x["busy_milli_gpu"] <= x["allocated_milli_gpu"] for x in series)
    arrived = [x["arrived_milli_gpu"] for x in series]
    assert arrived == sorted(arrived) and arrived[-1] > 0
    # Without the knob the series has no fragmentation.
    plain = hetsched.simulate("fifo+packer", nodes="dgx-a100:2", synthetic={"jobs": 5})
    assert "fragmented_milli_gpu" not in plain["series"][0]


def test_queue_tree_runs_the_capacity_queues(tmp_path):
    # Cohort r1 may not borrow: A's second 8-GPU job waits for its first although B is idle.
    tree = tmp_path / "tree.json"
    tree.write_text("""{"nodes": [{"name": "org", "kind": "cohort"},
      {"name": "r1", "kind": "cohort", "parent": "org",
       "quotas": [{"resource": "gpu", "nominal": 0, "borrowing_limit": 0}]},
      {"name": "q1", "parent": "r1", "tenants": ["A"], "quotas": [{"resource": "gpu", "nominal": 8}]},
      {"name": "q2", "parent": "org", "tenants": ["B"],
       "quotas": [{"resource": "gpu", "nominal": 8}]}]}""")
    trace = [{"name": f"a{i}", "tenant": "A", "submit_ms": 0, "duration_ms": 100000,
              "gpus_per_task": 8} for i in range(2)]
    trace.append({"name": "b0", "tenant": "B", "submit_ms": 500000, "duration_ms": 1000,
                  "gpus_per_task": 8})
    queues = hetsched.simulate("fifo+capacity", nodes="dgx-a100:2", trace=trace,
                               queue_tree=str(tree))
    flat = hetsched.simulate("fifo+capacity", nodes="dgx-a100:2", trace=trace)
    assert [j["finish_ms"] for j in queues["jobs"]] == [100000, 200000, 501000]
    assert [j["finish_ms"] for j in flat["jobs"]] == [100000, 100000, 501000]
    with pytest.raises(hetsched.NotFound):
        hetsched.simulate("fifo+capacity", nodes="dgx-a100:2", trace=trace,
                          queue_tree=str(tmp_path / "missing.json"))
    tree.write_text('{"nodes": [{"name": "q", "order": "lifo"}]}')
    with pytest.raises(hetsched.InvalidArgument) as e:
        hetsched.simulate("fifo+capacity", nodes="dgx-a100:2", trace=trace,
                          queue_tree=str(tree))
    assert "nodes[0].order: 'lifo'" in str(e.value)


def test_speed_model_prices_locality(shared):
    # Two tasks of 8 GPUs on two DGX-1s cross servers: LM (sensitivity 1) runs 5x slower,
    # ResNet-50 (0.02) 1.08x; with the model off both take their nominal 1000 s.
    trace = [{"name": "lm", "duration_ms": 1_000_000, "tasks": 2, "gpus_per_task": 8,
              "model": "LM (batch size 20)"},
             {"name": "rn", "submit_ms": 5_000_000, "duration_ms": 1_000_000, "tasks": 2,
              "gpus_per_task": 8, "model": "ResNet-50 (batch size 64)"}]
    off = hetsched.simulate("fifo+packer", nodes="dgx1-v100:2", trace=trace)
    assert [j["run_ms"] for j in off["jobs"]] == [1_000_000, 1_000_000]
    assert off["summary"]["placement_slowdown"] == 1.0
    on = hetsched.simulate("fifo+packer", nodes="dgx1-v100:2", trace=trace, speed_model=True)
    assert [j["run_ms"] for j in on["jobs"]] == [5_000_000, 1_080_000]
    assert on["jobs"][0]["ideal_run_ms"] == pytest.approx(1_000_000)
    assert on["summary"]["placement_slowdown"] == pytest.approx(6_080_000 / 2_000_000)
    table = shared / "data/traces/gavel_throughputs/simulation_throughputs.json"
    measured = hetsched.simulate("fifo+packer", nodes="dgx1-v100:2", trace=trace,
                                 throughput_table=f"gavel:{table}")
    # Gavel measures up to 8 GPUs: at 16 the formula stands, and both types run on V100, the
    # reference, so the figures are those of the model without a table.
    assert [j["run_ms"] for j in measured["jobs"]] == [5_000_000, 1_080_000]
    with pytest.raises(hetsched.NotFound) as e:
        hetsched.simulate("fifo+packer", nodes="dgx1-v100:2", trace=trace,
                          throughput_table="json:/nosuch")
    assert "unknown format 'json'" in str(e.value)
