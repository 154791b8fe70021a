# SPDX-License-Identifier: MIT
"""Job orderings as objects: FIFO, SJF, Tiresias 2D-LAS and DRF over tenants."""

import pytest

import hetsched

JOBS = [
    {"id": 1, "submit_ms": 300, "duration_estimate_ms": 50},
    {"id": 2, "submit_ms": 100, "duration_estimate_ms": 500},
    {"id": 3, "submit_ms": 200},  # unknown estimate
    {"id": 4, "submit_ms": 100, "duration_estimate_ms": 50},
]


def test_fifo_and_sjf():
    fifo = hetsched.FifoOrder()
    assert fifo.name == "fifo"
    # submit time, ties to the lower id
    assert fifo.order(JOBS) == [2, 4, 3, 1]
    assert fifo.key(JOBS[0]) == [300, 0, 0]
    sjf = hetsched.SjfOrder()
    # estimate, then submit time; the unknown estimate goes last
    assert sjf.order(JOBS) == [4, 1, 2, 3]
    assert sjf.key(JOBS[2]) == [2**63 - 1, 200, 0]


def test_tiresias_las():
    las = hetsched.TiresiasLasOrder([1000, 5000])
    assert las.name == "tiresias" and las.thresholds_gpu_ms == [1000, 5000]
    assert [las.queue(x) for x in (0, 999, 1000, 4999, 5000)] == [0, 0, 1, 1, 2]
    jobs = [
        {"id": 1, "attained_gpu_ms": 0, "running": False, "submit_ms": 50},
        {"id": 2, "attained_gpu_ms": 1000, "running": True, "submit_ms": 10},
        {"id": 3, "attained_gpu_ms": 999, "running": True, "submit_ms": 80},
        {"id": 4, "attained_gpu_ms": 7000, "running": True, "submit_ms": 0},
        {"id": 5, "attained_gpu_ms": 4000, "running": False, "submit_ms": 5},
    ]
    # lower queue first; inside a queue running before waiting, then FIFO
    assert las.order(jobs) == [3, 1, 2, 5, 4]
    assert las.key(jobs[4]) == [1, 1, 5]
    rows = las.ranking(jobs)
    assert rows[0] == {"position": 0, "job": 3, "key": [0, 0, 80], "queue": 0}
    assert [r["queue"] for r in rows] == [0, 0, 1, 1, 2]
    assert hetsched.TiresiasLasOrder().thresholds_gpu_ms == [3_200_000]
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.TiresiasLasOrder([5000, 1000])


def test_drf_over_tenants():
    jobs = [
        {"id": 1, "tenant": 0, "submit_ms": 0, "milli_gpu": 4000},
        {"id": 2, "tenant": 0, "submit_ms": 1, "milli_gpu": 1000},
        {"id": 3, "tenant": 1, "submit_ms": 2, "milli_gpu": 2000},
        {"id": 4, "tenant": 1, "submit_ms": 3, "milli_gpu": 2000},
        {"id": 5, "tenant": 1, "submit_ms": 4, "milli_gpu": 2000},
    ]
    capacity = {"milli_gpu": 8000}
    # shares: t0 1/2 (job 1), t1 1/4 and 1/2 (jobs 3, 4), tie -> t0 (job 2), then job 5
    assert hetsched.DrfOrder(capacity).order(jobs) == [1, 3, 4, 2, 5]
    # weight 3 for t1: its shares are 1/12, 1/6, 1/4, all below t0's 1/2
    weighted = hetsched.DrfOrder(capacity, [{"weight": 1}, {"weight": 3}])
    assert weighted.order(jobs) == [1, 3, 4, 5, 2]
    # t0 already holds half the GPUs: t1 goes first until its share reaches 1/2, the tie goes to
    # t0 (job 1, share 1), then t1 (job 5, 3/4) and t0 again
    busy = hetsched.DrfOrder(capacity, [{"milli_gpu": 4000}, {}])
    assert busy.order(jobs) == [3, 4, 1, 5, 2]
    assert busy.ranking(jobs)[2] == {"position": 2, "job": 1, "tenant": 0}
    with pytest.raises(hetsched.NotFound):
        hetsched.DrfOrder(capacity, [{}]).order(jobs)


def test_rankings_load_into_pandas():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(hetsched.SjfOrder().ranking(JOBS))
    assert list(df.columns) == ["position", "job", "key"]
    assert list(df["job"]) == [4, 1, 2, 3]


def test_bad_jobs():
    with pytest.raises(hetsched.InvalidArgument, match="colour"):
        hetsched.FifoOrder().order([{"id": 1, "colour": "red"}])
    with pytest.raises(hetsched.InvalidArgument, match="repeats"):
        hetsched.FifoOrder().order([{"id": 1}, {"id": 1}])
    with pytest.raises(hetsched.InvalidArgument):
        hetsched.FifoOrder().order([{"submit_ms": 1}])
