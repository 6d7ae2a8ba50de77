"""The local workers (seekbench._workers, seekbench.scale.local_workers): processes of their own, started
by a fork server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# In a process of its own (multiprocessing has one fork server per process).
CODE = """
import json, os
from seekbench.scale import local_workers
with local_workers(2) as pool:
    pids = {pool.submit(os.getpid).result() for _ in range(4)}
print(json.dumps({"pids": len(pids), "here": os.getpid() in pids}))
"""


def test_a_pool_runs_its_work_in_other_processes():
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert 1 <= res["pids"] <= 2 and not res["here"]


def test_one_job_is_this_process():
    from seekbench.scale import local_workers

    with local_workers(1) as pool:
        assert pool is None


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux only")
def test_jobs_default_to_the_cores_this_process_may_use():
    from seekbench import _workers

    assert _workers.default_jobs() == len(os.sched_getaffinity(0))
