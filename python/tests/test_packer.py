# SPDX-License-Identifier: MIT
"""Affinity packer (go-gpuallocator scores, exact best block) and gang placement."""

import pytest

import hetsched


def test_best_pair_on_dgx1_uses_double_nvlink():
    t = hetsched.node_template("dgx1-v100")
    scores = hetsched.pair_scores(t)
    r = hetsched.packer_allocate(t, available=list(range(8)), size=2)
    assert r["status"] == "allocated"
    a, b = r["gpus"]
    assert t.relations()[a][b] == "NV2"
    assert r["block_score"] == scores[a][b]
    four = hetsched.packer_allocate(t, available=list(range(8)), size=4)
    assert four["gpus"] in ([0, 1, 2, 3], [4, 5, 6, 7])
    short = hetsched.packer_allocate(t, available=[0, 1], size=3)
    assert short["status"] == "insufficient_gpus" and short["gpus"] == []
    with pytest.raises(hetsched.OutOfRange):
        hetsched.packer_allocate(t, available=[0, 9], size=1)


def test_explicit_matrix_and_state():
    m = [[0, 5, 1], [5, 0, 1], [1, 1, 0]]
    st = hetsched.PackerState(m)
    r = st.allocate(2)
    assert r["gpus"] == [0, 1] and r["block_score"] == 5
    assert st.available == [2]
    with pytest.raises(hetsched.AlreadyExists):
        st.release([2])
    assert st.available == [2]
    st.release([0, 1])
    assert st.available == [0, 1, 2]
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.PackerState([[0, 1], [2, 0]])


def test_collective_bandwidth_and_scores():
    t = hetsched.node_template("dgx-a100")
    bw = hetsched.collective_bandwidth(t, [0, 1, 2, 3])
    assert bw["ring_mb_s"] == 300000 and bw["pair_min_mb_s"] == 300000
    assert hetsched.bandwidth_node_score(t, [0, 1]) == 33
    assert hetsched.packer_node_score(t, [0]) == 0


def test_gang_placement_stays_in_a_rack():
    c = hetsched.builtin_cluster("demo")
    placer = hetsched.GangPlacer(c)
    # Two 8-GPU tasks fit one DGX-2 (16 GPUs): the gang stays on one node.
    two = placer.place(tasks=2, gpus_per_task=8)
    assert two["placed"] and two["deferred"] is None
    assert two["nodes_used"] == 1 and two["level"] == "node"
    assert c.nodes()[two["tasks"][0]["node"]]["template"] == "dgx2"
    # Three need a rack; the DGX A100 rack (32 GPUs) is the best fit of the two racks.
    g = placer.place(tasks=3, gpus_per_task=8)
    assert g["nodes_used"] == 3 and g["level"] == "rack"
    assert [t["node"] for t in g["tasks"]] == [0, 1, 2]
    assert [t["gpus"] for t in g["tasks"]] == [list(range(8))] * 3
    one = placer.place(tasks=1, gpus_per_task=4, max_level="node")
    assert one["level"] == "node" and len(one["tasks"][0]["devices"]) == 4
    free = [[] for _ in range(c.node_count)]
    free[0] = [0, 1]
    none = placer.place(tasks=1, gpus_per_task=4, free_gpus=free)
    assert none["placed"] is False and none["deferred"] == "insufficient_capacity"
    scores = placer.node_scores(tasks=1, gpus_per_task=8)
    assert len(scores) == c.node_count and max(scores) == 100
    with pytest.raises(hetsched.InvalidArgument):
        placer.place(tasks=0, gpus_per_task=1)
