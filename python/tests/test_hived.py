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


# Chain ROW(2 RACK) -> RACK(2 NODE) -> NODE(2 PCIE, node level) -> PCIE(2 GPU): two rows of four
# 4-GPU nodes (r0n0, r0n1 | r1n0, r1n1 in row 0). VC "v" owns row 0; cell-type requests enabled.
ROW_CONFIG = {
    "cell_types": {
        "PCIE": {"child_type": "GPU", "child_count": 2},
        "NODE": {"child_type": "PCIE", "child_count": 2, "node_level": True},
        "RACK": {"child_type": "NODE", "child_count": 2},
        "ROW": {"child_type": "RACK", "child_count": 2},
    },
    "physical_cells": [
        {"cell_type": "ROW", "children": [
            {"children": [{"address": f"r{2 * row + k}n{n}"} for n in range(2)]}
            for k in range(2)]}
        for row in range(2)
    ],
    "virtual_clusters": {
        "v": {"virtual_cells": [{"cell_type": "ROW", "count": 1}]},
        "w": {"virtual_cells": [{"cell_type": "ROW.RACK.NODE", "count": 2}]},
    },
    "options": {"cell_type_requests": True},
}


def hold(s, name, node, leaves):
    """Commits a guaranteed pod of VC v on `leaves` of `node` (busy GPUs for the search)."""
    n = len(leaves)
    s.commit(pod(name, "v", 1, n),
             {"node": node, "leaf_cells": leaves, "chain": "ROW",
              "group_placements": {n: [{"node": node, "leaf_cells": leaves,
                                        "preassigned_types": ["ROW"] * n}]}})


def test_hierarchical_group_backtracks_into_racks():
    s = hetsched.HivedScheduler(ROW_CONFIG)
    # Free GPUs: r0n0 3, r0n1 1 (rack 0: 4), r1n0 2, r1n1 2 (rack 1: 4).
    hold(s, "h0", "r0n0", [0])
    hold(s, "h1", "r0n1", [0, 1, 2])
    hold(s, "h2", "r1n0", [0, 1])
    hold(s, "h3", "r1n1", [0, 1])
    # Child A: one 2-GPU pod inside a rack; child B: a 3-GPU and a 1-GPU pod inside a rack. A's
    # first choice (rack 0) leaves B no 3-GPU node, so A moves to rack 1 and B takes rack 0.
    children = [{"members": [{"pods": 1, "leaf_cells": 2}], "within_one_cell": "RACK"},
                {"members": [{"pods": 1, "leaf_cells": 3}, {"pods": 1, "leaf_cells": 1}],
                 "within_one_cell": "RACK", "child_groups": []}]
    a = pod("ha", "v", 1, 2, group="h", within_one_cell="ROW", child_groups=children,
            ignore_suggested_nodes=True)
    r = s.schedule(a)
    assert r["outcome"] == "bind", r["wait_reason"]
    assert (r["node"], r["leaf_cells"]) == ("r1n0", [2, 3])
    g = r["group_placements"]
    assert sorted(g) == [1, 2, 3]
    assert (g[2][0]["node"], g[2][0]["leaf_cells"]) == ("r1n0", [2, 3])
    assert (g[3][0]["node"], g[3][0]["leaf_cells"]) == ("r0n0", [1, 2, 3])
    assert (g[1][0]["node"], g[1][0]["leaf_cells"]) == ("r0n1", [3])
    s.commit(a, r)
    b = dict(a, name="hb3", leaf_cells=3)
    rb = s.schedule(b)
    assert (rb["outcome"], rb["node"], rb["leaf_cells"]) == ("bind", "r0n0", [1, 2, 3])
    s.commit(b, rb)
    assert s.group("h")["physical_placement"]["r0n0"] == [1, 2, 3]
    # Child B needing a whole 4-GPU node fits nowhere: the group waits, naming the constraint.
    q = pod("qa", "v", 1, 1, group="q", ignore_suggested_nodes=True, child_groups=[
        {"members": [{"pods": 1, "leaf_cells": 1}], "within_one_cell": "RACK"},
        {"members": [{"pods": 1, "leaf_cells": 4}], "within_one_cell": "NODE"}])
    w = s.schedule(q, phase="filtering")
    assert w["outcome"] == "wait"
    assert w["wait_reason"] == ("no placement meets the group's within-one-cell types when "
                                "scheduling in VC v")


def test_child_groups_errors_change_nothing():
    s = hetsched.HivedScheduler(ROW_CONFIG)
    digest = s.state_digest()
    # A nested grandchild without pods is a spec error.
    bad = pod("x", "v", 1, 2, group="x", child_groups=[
        {"members": [{"pods": 1, "leaf_cells": 2}], "within_one_cell": "RACK",
         "child_groups": [{"within_one_cell": "NODE"}]}])
    with pytest.raises(hetsched.InvalidArgument, match=r"group x.childGroups\[0\].childGroups\[0\] has no pods"):
        s.schedule(bad)
    with pytest.raises(hetsched.InvalidArgument, match="colour"):
        s.schedule(pod("x", "v", 1, 2, group="x", child_groups=[
            {"members": [{"pods": 1, "leaf_cells": 2}], "colour": "red"}]))
    with pytest.raises(hetsched.NotFound):
        s.schedule(pod("x", "v", 1, 2, group="x", child_groups=[
            {"members": [{"pods": 1, "leaf_cells": 2}], "within_one_cell": "BLOCK"}]))
    assert s.state_digest() == digest
    # Without the option the field is refused.
    off = hetsched.HivedScheduler(dict(ROW_CONFIG, options={"cell_type_requests": False}))
    with pytest.raises(hetsched.InvalidArgument, match="disabled"):
        off.schedule(pod("x", "v", 1, 2, group="x", child_groups=[
            {"members": [{"pods": 1, "leaf_cells": 2}], "within_one_cell": "RACK"}]))


def test_commit_refuses_gpus_another_pod_holds():
    # issue 17: commit(p2, r) with p1's GPUs left both groups Allocated on n0 [0, 1]
    s = hetsched.HivedScheduler(CONFIG)
    p1, p2 = pod("p1", "a", 1, 2), pod("p2", "a", 1, 2)
    r1 = s.schedule(p1, phase="filtering")
    r2 = s.schedule(p2, phase="filtering")  # decided before p1 is committed: the same GPUs
    assert (r1["node"], r1["leaf_cells"]) == (r2["node"], r2["leaf_cells"]) == ("n0", [0, 1])
    s.commit(p1, r1)
    digest = s.state_digest()
    for record in (r1, r2):
        with pytest.raises(hetsched.FailedPrecondition,
                           match=r"^\[p2\]: GPU 0 of node n0 is held by group p1 \(pods p1; "
                                 r"priority 1\)"):
            s.commit(p2, record)
        assert s.state_digest() == digest
    assert s.group("p2") is None
    assert s.group("p1")["physical_placement"] == {"n0": [0, 1]}
    # committing p1 twice is refused as in the C API
    with pytest.raises(hetsched.AlreadyExists,
                       match=r"^\[p1\]: pod is already committed \(group p1\)$"):
        s.commit(p1, r1)
    assert s.state_digest() == digest
    r2 = s.schedule(p2, phase="filtering")
    assert r2["leaf_cells"] == [2, 3]
    s.commit(p2, r2)
    assert s.group("p2")["physical_placement"] == {"n0": [2, 3]}


def test_config_limits_are_named_errors():
    # issue 17: a 100,000-level cell-type chain crashed Python with SIGSEGV (stack overflow)
    types = [{"name": "T0", "child_type": "GPU", "child_count": 1, "node_level": True}]
    types += [{"name": f"T{i}", "child_type": f"T{i - 1}", "child_count": 1}
              for i in range(1, 99999)]
    types.reverse()
    deep = {"cell_types": types, "physical_cells": [{"cell_type": "T99998", "address": "n0"}]}
    with pytest.raises(hetsched.OutOfRange,
                       match=r"^cell type T99998 heads a chain of more than 64 levels"):
        hetsched.HivedScheduler(deep)
    # 65536 x 65536 GPUs overflowed an int and ran on
    wide = {"cell_types": {"NODE": {"child_type": "GPU", "child_count": 65536, "node_level": True},
                           "ROW": {"child_type": "NODE", "child_count": 65536}},
            "physical_cells": [{"cell_type": "ROW"}]}
    with pytest.raises(hetsched.OutOfRange, match=r"^cell type ROW holds 4294967296 leaf cells"):
        hetsched.HivedScheduler(wide)
    # a VC asking for 2^31-1 cells reached 4 GB and bad_alloc
    huge = dict(CONFIG)
    huge["virtual_clusters"] = {"a": {"virtual_cells": [{"cell_type": "NODE", "count": 2**31 - 1}]}}
    with pytest.raises(hetsched.FailedPrecondition,
                       match=r"2147483647 needed, 1 available$"):
        hetsched.HivedScheduler(huge)
    # physical cells nested 100,000 deep are refused before they exhaust the stack
    cell = {"address": "0"}
    for _ in range(100000):
        cell = {"children": [cell]}
    cell["cell_type"] = "NODE"
    nested = {"cell_types": CONFIG["cell_types"], "physical_cells": [cell]}
    with pytest.raises(hetsched.OutOfRange, match=r"nested deeper than 64 levels"):
        hetsched.HivedScheduler(nested)
