# SPDX-License-Identifier: MIT
"""FGD: fragmentation measure, scorers, the FGD cluster model and the openb replay."""

import pytest

import hetsched

NODES = [{"name": "a", "cpu_milli": 32000, "memory_mib": 131072, "gpus": 2, "model": "V100M16"},
         {"name": "b", "cpu_milli": 32000, "memory_mib": 131072, "gpus": 2, "model": "V100M16"}]
HALF = {"cpu_milli": 1000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 500}
WHOLE = {"cpu_milli": 1000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 1000}


def workload():
    return hetsched.fgd_workload([HALF, WHOLE, WHOLE])


def test_workload_classes():
    w = workload()
    classes = sorted(w["classes"], key=lambda c: c["gpu_milli"])
    assert [(c["gpu_milli"], c["count"]) for c in classes] == [(500, 1), (1000, 2)]
    assert sum(c["weight"] for c in classes) == pytest.approx(1.0)


def test_fragmentation_of_a_half_used_gpu():
    w = workload()
    # A node with one GPU half used: the 500 milli left cannot host WHOLE tasks (weight 2/3).
    f = hetsched.node_fragmentation(31000, [500, 1000], "V100M16", w)
    assert f["idle"] == pytest.approx(1500)
    assert f["fragment"] == pytest.approx(500 * 2 / 3)
    idle = hetsched.node_fragmentation(32000, [1000, 1000], "V100M16", w)
    assert idle["fragment"] == pytest.approx(0)


def test_fgd_packs_shares_onto_the_used_gpu():
    c = hetsched.FgdCluster(NODES)
    fgd = hetsched.FgdScheduler("fgd", workload())
    first = fgd.schedule(c, HALF)
    assert first is not None
    second = fgd.schedule(c, HALF)
    # The second half-GPU task fills the first one's GPU: fragmentation back to zero.
    assert (second["node"], second["gpus"]) == (first["node"], first["gpus"])
    assert c.used_gpu_milli == 1000
    assert hetsched.cluster_fragmentation(c, workload())["fragment"] == pytest.approx(0)
    rows = c.nodes()
    assert sorted(min(r["gpu_left"]) for r in rows) == [0, 1000]
    assert hetsched.FgdScheduler("best_fit").policy == "best_fit"
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.FgdScheduler("worst")
    with pytest.raises(hetsched.Error):
        c.place(0, WHOLE, [0, 1])
    assert c.used_gpu_milli == 1000


def test_replay_on_openb(shared):
    base = shared / "data/traces/alibaba_openb_v2023"
    nodes = hetsched.fgd_nodes_from_openb((base / "openb_node_list_gpu_node.csv").read_text())
    pods = (base / "openb_pod_list_default.csv").read_text().splitlines()
    arrivals = hetsched.fgd_arrivals_from_openb("\n".join(pods[:401]) + "\n")
    assert len(arrivals) == 400
    w = hetsched.fgd_workload(arrivals)
    r = hetsched.run_fgd_replay(nodes[:50], arrivals, w, policy="fgd")
    assert len(r["outcomes"]) == 400
    done = [o for o in r["outcomes"] if o["scheduled"]]
    assert len(done) + r["failed"] == 400
    last = r["outcomes"][-1]
    assert last["used_gpu_milli"] == sum(
        a["num_gpu"] * a["gpu_milli"] for a, o in zip(arrivals, r["outcomes"]) if o["scheduled"])
    assert len(r["curves"]["alloc_pct"]) == len(r["curves"]["frag_ratio_pct"])
