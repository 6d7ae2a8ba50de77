"""The local workers' fork server (seekbench._workers): started without waiting for its imports, reused
by the pools, and stopped at once, even in the middle of its imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# In a process of its own (multiprocessing has one fork server per process). The server preloads a
# module that does not end while the process lives: stopping it must not wait for that import.
CODE = """
import json, os, sys, time
from seekbench import _workers
from seekbench.scale import local_workers
_workers.PRELOAD = ["sleepy"]
pid = _workers.start_fork_server()
again = _workers.start_fork_server()
while not os.path.exists(sys.argv[1]):  # the server is in the middle of its imports
    time.sleep(0.05)
_workers.stop_fork_server(pid + 1)  # not this process's server: left alone
alive_after_other = os.waitpid(pid, os.WNOHANG) == (0, 0)
_workers.stop_fork_server(pid)
try:
    os.kill(pid, 0)
    gone = False
except ProcessLookupError:
    gone = True
_workers.PRELOAD = ["seekbench.scale._work"]
with local_workers(2) as pool:  # a new server for the pool, then its workers
    pids = {pool.submit(os.getpid).result() for _ in range(4)}
print(json.dumps({"pid": pid, "again": again, "alive_after_other": alive_after_other, "gone": gone,
                  "pool": bool(pids) and os.getpid() not in pids}))
"""


def test_the_server_starts_at_once_and_stops_at_once_even_while_it_imports(tmp_path):
    marker = tmp_path / "importing"
    # it imports for as long as its parent lives (so a failing test leaves nothing behind either)
    (tmp_path / "sleepy.py").write_text(
        f"import os, time\nparent = os.getppid()\nopen({str(marker)!r}, 'w').close()\n"
        "while os.getppid() == parent:\n    time.sleep(0.05)\n"
    )
    # on the server's path through the environment (CPython 3.11's server ignores its parent's sys.path)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", CODE, str(marker)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert isinstance(res["pid"], int) and res["again"] is None  # one server; the second call found it
    assert res["alive_after_other"] and res["gone"]
    assert res["pool"]  # a pool after it starts a server of its own: its workers ran


def test_a_core_is_idle_when_fewer_tasks_are_ready_than_cores(monkeypatch):
    from seekbench import _workers

    monkeypatch.setattr(os, "cpu_count", lambda: 100_000)
    assert _workers.idle_core()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # this process is ready to run: one core is taken
    assert not _workers.idle_core()


@pytest.mark.parametrize("module", ["seekbench.scale._work", "seekbench.metrics"])
def test_the_server_preloads_what_the_workers_import(module):
    # the fragment work and the metrics (the groups are computed in the same workers)
    from seekbench import _workers

    assert module in _workers.PRELOAD
    __import__(module)
