"""The local engine's worker processes: how many, and what starts them.

Workers are started by a fork server (a clean process, not a fork of the caller with its threads
and tables) that has imported :data:`PRELOAD`.
"""

from __future__ import annotations

import multiprocessing
import os
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


def worker_context() -> BaseContext:
    """The fork server preloading :data:`PRELOAD` (Linux, macOS), else spawn (Windows: no fork server)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        multiprocessing.set_forkserver_preload(PRELOAD)
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")
