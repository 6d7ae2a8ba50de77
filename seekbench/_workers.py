"""The local engine's worker processes: how many, what starts them, and starting that early.

Workers are started by a fork server (a clean process, not a fork of the caller with its threads
and tables) that has imported :data:`PRELOAD`. Only the standard library is imported here, so the
command line can start the server before its own imports of pandas and the metrics: the server
imports the same on another core meanwhile (``seekbench.cli._scale.start_workers_early``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from multiprocessing import forkserver
from multiprocessing.context import BaseContext

#: Imported once by the fork server, so every worker it starts has them: the fragment work and the
#: metrics (the reduction function, and the groups' metrics computed in the same workers). Not
#: scipy: the groups' metrics no longer import it at the usual confidence levels (the ERF bands'
#: normal quantile comes from a table), and importing it cost the server 0.2 CPU s.
PRELOAD = ["seekbench.scale._work", "seekbench.metrics"]


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def idle_core() -> bool:
    """Whether a core is idle now: fewer tasks ready to run (``/proc/loadavg``, this process among them)
    than cores. True where that cannot be read."""
    try:
        with open("/proc/loadavg") as fh:
            runnable = int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return True
    return runnable < (os.cpu_count() or 1)


def worker_context() -> BaseContext:
    """The fork server preloading :data:`PRELOAD` (Linux, macOS), else spawn (Windows: no fork server)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        multiprocessing.set_forkserver_preload(PRELOAD)
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


# multiprocessing has one fork server per process and no public way to ask whether it runs or to stop
# it; its own tests use these private names (CPython 3.11-3.13). Where they are missing, nothing is
# started early and the pool starts the server when it needs it, as it always did.
def _server():
    server = getattr(forkserver, "_forkserver", None)
    return server if hasattr(server, "_forkserver_pid") and hasattr(server, "_stop") else None


def start_fork_server() -> int | None:
    """Start the fork server now, without waiting for its imports; its process id, or None if one was
    already running (or this platform has none). Pools of :func:`worker_context` then use it."""
    server = _server()
    if server is None or "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    if server._forkserver_pid is not None:
        return None
    worker_context()
    forkserver.ensure_running()
    return server._forkserver_pid


def stop_fork_server(pid: int) -> None:
    """Stop the fork server ``pid`` that :func:`start_fork_server` returned, at once (even in the middle
    of its imports: it reads the request to stop only after them) and reap it; nothing if this process's
    server is no longer that one."""
    server = _server()
    if server is None or server._forkserver_pid != pid:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    try:
        server._stop()
    except ChildProcessError:  # reaped elsewhere: forget it, as stopping it would have
        server._forkserver_pid = None
