# SPDX-License-Identifier: MIT
"""HiveD: configuration from dicts, schedule, commit and release."""

import pytest

import hetsched

# Chain RACK(2 NODE) -> NODE(2 PCIE, node level) -> PCIE(2 GPU): one rack of two 4-GPU nodes
# (n1's leaves permuted 3, 2, 1, 0) and a second top-level NODE cell n2. VC "a" owns one NODE
# of chain RACK, VC "b" one NODE cell of chain NODE.
CONFIG = {
    "cell_types": {
        "PCIE": {"child_type": "GPU", "child_count": 2},
        "NODE": {"child_type": "PCIE", "child_count": 2, "node_level": True},
        "RACK": {"child_type": "NODE", "child_count": 2},
    },
    "physical_cells": [
        {"cell_type": "RACK", "children": [
            {"address": "n0"},
            {"address": "n1", "children": [
                {"children": [{"address": "3"}, {"address": "2"}]},
                {"children": [{"address": "1"}, {"address": "0"}]}]}]},
        {"cell_type": "NODE", "address": "n2"},
    ],
    "virtual_clusters": {
        "a": {"virtual_cells": [{"cell_type": "RACK.NODE", "count": 1}]},
        "b": {"virtual_cells": [{"cell_type": "NODE", "count": 1}]},
    },
}


def pod(name, vc, priority, leaves, **extra):
    p = {"name": name, "vc": vc, "priority": priority, "leaf_type": "GPU", "leaf_cells": leaves,
         "ignore_suggested_nodes": False}
    p.update(extra)
    return p


def test_config_and_queries():
    s = hetsched.HivedScheduler(CONFIG)
    assert s.nodes() == ["n0", "n1", "n2"]
    assert s.free_list("RACK", 4) == ["0"]
    assert s.free_list("NODE", 3) == ["n2"]
    cells = s.node_level_cells()
    assert [c["nodes"] for c in cells] == [["n0"], ["n1"], ["n2"]]
    assert cells[1]["leaf_indices"] == [3, 2, 1, 0]


def test_schedule_commit_release():
    s = hetsched.HivedScheduler(CONFIG)
    p = pod("p1", "a", 1, 2)
    r = s.schedule(p)
    assert r["outcome"] == "bind"
    assert (r["node"], r["leaf_cells"], r["chain"]) == ("n0", [0, 1], "RACK")
    assert s.group("p1") is None  # scheduling alone changes nothing
    s.commit(p, r)
    g = s.group("p1")
    assert g["state"] == "allocated" and g["physical_placement"] == {"n0": [0, 1]}
    assert s.free_list("RACK", 3) == ["0/n1"]
    s.release(p, r)
    assert s.group("p1") is None
    assert s.free_list("RACK", 4) == ["0"]


def test_opportunistic_pod_on_permuted_leaves():
    s = hetsched.HivedScheduler(CONFIG)
    r = s.schedule(pod("o1", "b", hetsched.HIVED_OPPORTUNISTIC_PRIORITY, 4), nodes=["n1"])
    assert r["outcome"] == "bind" and r["node"] == "n1"
    assert r["leaf_cells"] == [3, 2, 1, 0]
    assert r["group_placements"][4][0]["preassigned_types"] == ["", "", "", ""]


def test_errors_leave_state_alone():
    s = hetsched.HivedScheduler(CONFIG)
    with pytest.raises(hetsched.Error):
        s.schedule(pod("x", "zzz", 1, 1))
    with pytest.raises(hetsched.InvalidArgument):
        s.schedule(pod("x", "a", 1, 1, colour="red"))
    bad = dict(CONFIG, virtual_clusters={"a": {"virtual_cells": [{"cell_type": "RACK.NODE",
                                                                  "count": 3}]}})
    with pytest.raises(hetsched.FailedPrecondition) as e:
        hetsched.HivedScheduler(bad)
    assert "Illegal initial VC assignment" in str(e.value)
    assert s.free_list("RACK", 4) == ["0"]


JSON = """{
  "physicalCluster": {
    "cellTypes": {
      "PCIE": {"childCellType": "GPU", "childCellNumber": 2},
      "NODE": {"childCellType": "PCIE", "childCellNumber": 2, "isNodeLevel": true}
    },
    "physicalCells": [{"cellType": "NODE", "cellAddress": "w0"},
                      {"cellType": "NODE", "cellAddress": "w1", "pinnedCellId": "PIN"}]
  },
  "virtualClusters": {
    "prod": {"virtualCells": [{"cellType": "NODE", "cellNumber": 1}]},
    "research": {"pinnedCells": [{"pinnedCellId": "PIN"}]}
  }
}"""


def test_config_from_hivedscheduler_json():
    cfg = hetsched.hived_config_from_json(JSON)
    assert [t["name"] for t in cfg["cell_types"]] == ["PCIE", "NODE"]
    assert cfg["virtual_clusters"][1] == {"name": "research", "virtual_cells": [],
                                          "pinned_cells": ["PIN"]}
    assert hetsched.hived_config_from_json(hetsched.hived_config_to_json(cfg)) == cfg
    s = hetsched.HivedScheduler.from_json(JSON)
    assert s.nodes() == ["w0", "w1"]
    r = s.schedule(pod("p", "research", 0, 2, pinned_cell="PIN"))
    assert (r["outcome"], r["node"], r["leaf_cells"]) == ("bind", "w1", [0, 1])
    r = s.schedule(pod("q", "prod", 0, 4))
    assert (r["outcome"], r["node"]) == ("bind", "w0")
    with pytest.raises(hetsched.InvalidArgument) as e:
        hetsched.HivedScheduler.from_json('{"physicalCluster": {}, "extra": 1}')
    assert "extra" in str(e.value)


def test_what_if_bind_changes_nothing_and_matches_schedule():
    s = hetsched.HivedScheduler(CONFIG)
    p = pod("p1", "a", 1, 2)
    before = s.state_digest()
    w = s.what_if(p, phase="filtering")
    assert s.state_digest() == before
    assert w["outcome"] == "bind" and w["wait_reason"] == ""
    assert (w["group"], w["existing_group"], w["chain"]) == ("p1", None, "RACK")
    assert w["pods"] == [{
        "leaf_cells": 2, "index": 0, "node": "n0", "leaf_indices": [0, 1],
        "physical_cells": ["0/n0/0/0", "0/n0/0/1"], "virtual_cells": ["a/0/0/0", "a/0/0/1"],
        "preassigned_types": ["NODE", "NODE"]}]
    assert w["victims"] == [] and w["lazy_preempted_groups"] == []
    assert w["cancelled_preemptions"] == [] and w["starts_preemption"] is False
    assert s.what_if(p, phase="filtering") == w
    # schedule() answers the same, and (unlike what_if) refreshes cached views
    assert s.schedule(p, phase="filtering") == w["decision"]
    assert s.state_digest() != before


def test_what_if_guaranteed_preempts_opportunistic():
    pd = pytest.importorskip("pandas")
    s = hetsched.HivedScheduler(CONFIG)
    o1 = pod("o1", "b", hetsched.HIVED_OPPORTUNISTIC_PRIORITY, 4)
    s.commit(o1, s.schedule(o1, nodes=["n2"]))
    g1 = pod("g1", "b", 0, 4)
    before = s.state_digest()
    w = s.what_if(g1)  # the preempting phase by default
    assert s.state_digest() == before and s.group("g1") is None
    assert w["outcome"] == "preempt" and w["decision"]["victims_by_node"] == {"n2": ["o1"]}
    assert w["victims"] == [{"pod": "o1", "node": "n2", "group": "o1", "vc": "b",
                             "priority": -1, "guaranteed_placement": False}]
    assert w["starts_preemption"] is True
    pods = pd.DataFrame(w["pods"])
    assert list(pods["node"]) == ["n2"] and pods.loc[0, "leaf_indices"] == [0, 1, 2, 3]
    assert pods.loc[0, "virtual_cells"] == ["b/0/0/0", "b/0/0/1", "b/0/1/2", "b/0/1/3"]
    assert s.schedule(g1) == w["decision"]
    assert s.group("g1")["state"] == "preempting"
    assert s.group("o1")["state"] == "being_preempted"
    # a higher-priority pod of VC b cancels g1's reservation and starts its own
    w2 = s.what_if(pod("g2", "b", 3, 4))
    assert w2["cancelled_preemptions"] == ["g1"] and w2["starts_preemption"] is True
    assert s.group("g1")["state"] == "preempting"


def test_what_if_reports_lazy_preemption_and_waits():
    s = hetsched.HivedScheduler(CONFIG)
    low = pod("low", "a", 0, 4, lazy_preemption=True)
    s.commit(low, s.schedule(low))
    high = pod("high", "a", 5, 4)
    w = s.what_if(high, phase="filtering")
    assert w["lazy_preempted_groups"] == ["low"]
    assert [v["pod"] for v in w["victims"]] == ["low"]
    assert s.group("low")["virtual_placement_dropped"] is False
    assert s.schedule(high, phase="filtering") == w["decision"]
    assert s.group("low")["virtual_placement_dropped"] is True
    wait = s.what_if(pod("big", "b", 0, 8))
    assert wait["outcome"] == "wait" and wait["pods"] == [] and wait["chain"] == ""
    assert wait["wait_reason"] == "insufficient capacity when scheduling in VC b"
    with pytest.raises(hetsched.NotFound):
        s.what_if(pod("x", "zzz", 1, 1))
    with pytest.raises(hetsched.InvalidArgument):
        s.what_if(pod("x", "a", 1, 1), phase="binding")
