# SPDX-License-Identifier: MIT
"""Shared fixtures of the Python module tests: the shared data directory and small clusters."""

import os
import pathlib

import pytest

import hetsched


def shared_dir():
    """Returns the shared/ folder (HETSCHED_SHARED_DIR, else ../shared next to the worktree)."""
    env = os.environ.get("HETSCHED_SHARED_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parents[3] / "shared"


@pytest.fixture
def shared():
    path = shared_dir()
    if not (path / "data").is_dir():
        pytest.skip("shared data directory not available")
    return path


@pytest.fixture
def two_nodes():
    """Two nodes of 4 A100 GPUs, 32 cores and 256 GiB each."""
    return hetsched.Cluster(
        [
            {"name": f"n{i}", "gpus": 4, "gpu_type": "A100-SXM4-80GB", "gpu_memory_mib": 81920,
             "milli_cpu": 32000, "memory_mib": 262144}
            for i in range(2)
        ]
    )


def gpu_job(job_id, gpus, tasks=1, **extra):
    """A job spec dict of `tasks` tasks with `gpus` whole GPUs each."""
    spec = {"id": job_id, "name": f"j{job_id}",
            "roles": [{"name": "worker", "tasks": tasks, "gpus": gpus, "milli_cpu": 1000,
                       "memory_mib": 1024}]}
    spec.update(extra)
    return spec
