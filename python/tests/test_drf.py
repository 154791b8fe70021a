# SPDX-License-Identifier: MIT
"""Dominant Resource Fairness: progressive filling, H-DRF and the DRF sorter."""

import pytest

import hetsched

# The NSDI'11 paper's example: 9 CPUs, 18 GB; A's tasks <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>.
CAPACITY = {"cpu": 9, "memory": 18}
USERS = [{"name": "A", "demand": {"cpu": 1, "memory": 4}},
         {"name": "B", "demand": {"cpu": 3, "memory": 1}}]


def test_paper_example_three_tasks_versus_two():
    r = hetsched.drf_fill_tasks(CAPACITY, USERS)
    a, b = r["users"]
    assert (a["tasks"], b["tasks"]) == (3, 2)
    assert a["allocation"] == {"cpu": 3, "memory": 12}
    assert b["allocation"] == {"cpu": 6, "memory": 2}
    assert a["dominant_resource"] == "memory" and b["dominant_resource"] == "cpu"
    assert a["dominant_share_num"] * 3 == a["dominant_share_den"] * 2
    assert b["dominant_share"] == pytest.approx(2 / 3)
    assert r["order"] == [0, 1, 0, 1, 0]


def test_divisible_and_weights():
    r = hetsched.drf_fill_divisible(CAPACITY, USERS)
    a, b = r["users"]
    # Divisible DRF equalizes dominant shares at 2/3: A 3 tasks, B 2 tasks exactly.
    assert (a["tasks_num"], a["tasks_den"]) == (3, 1)
    assert (b["tasks_num"], b["tasks_den"]) == (2, 1)
    # Weight 2 doubles B's entitlement: identical demands split 10 / 20.
    same = {"cpu": 1, "memory": 1}
    w = hetsched.drf_fill_tasks({"cpu": 30, "memory": 30},
                                [{"name": "A", "demand": same},
                                 {"name": "B", "demand": same, "weight": 2.0}])
    assert [u["tasks"] for u in w["users"]] == [10, 20]
    assert w["users"][1]["dominant_share_num"] * 3 == w["users"][1]["dominant_share_den"]


def test_bad_users_raise_and_name_the_user():
    with pytest.raises(hetsched.InvalidArgument) as e:
        hetsched.drf_fill_tasks(CAPACITY, [{"name": "A", "demand": {"cpu": -1}}])
    assert "A" in str(e.value)
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.drf_fill_tasks(CAPACITY, [{"name": "A", "demand": {"cpu": 1}, "wieght": 1}])


def test_dominant_share_and_vector():
    d = hetsched.dominant_share({"cpu": 3, "gpu": 2}, {"cpu": 12, "gpu": 4})
    assert d["resource"] == "gpu" and (d["share_num"], d["share_den"]) == (2, 4)
    v = hetsched.to_drf_vector({"milli_gpu": 2000, "milli_cpu": 500}, gpu_type="A100-SXM4-80GB",
                               per_type=True)
    assert v == {"gpu/A100-SXM4-80GB": 2000, "cpu": 500}


def test_hdrf():
    r = hetsched.hdrf_fill_tasks({"cpu": 10}, [{"path": "root/a"}, {"path": "root/b"}],
                                 [{"name": "x", "queue": "root/a", "demand": {"cpu": 1}},
                                  {"name": "y", "queue": "root/b", "demand": {"cpu": 1}}])
    assert [j["tasks"] for j in r["jobs"]] == [5, 5]


def test_sorter_orders_by_share_then_count():
    s = hetsched.DrfSorter()
    s.set_total({"cpu": 100, "mem": 100})
    a = s.add("a")
    b = s.add("b")
    assert s.sorted_paths() == ["a", "b"]
    s.allocated(a, {"cpu": 10})
    assert s.pick_next() == b
    s.allocated(b, {"mem": 10})
    # Equal shares 0.1: fewer allocations is equal too, so the smaller path wins.
    assert s.sort() == [a, b]
    assert s.share(a)["share"] == pytest.approx(0.1)
    s.set_weight("b", 2.0)
    assert s.pick_next() == b
    assert s.allocation_count(a) == 1
    assert len(s) == 2
    with pytest.raises(hetsched.FailedPrecondition):
        s.unallocated(a, {"cpu": 50})
    assert s.allocation(a) == {"cpu": 10}
    with pytest.raises(hetsched.NotFound):
        s.find("zzz")
    s.deactivate(b)
    assert s.sort() == [a]
