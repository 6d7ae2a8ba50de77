"""The local engine's worker processes: how many, and what starts them.

Workers are started by a fork server: a clean process, not a fork of the caller with its threads
and tables. Each imports what its work needs when the work arrives.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.context import BaseContext


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_context() -> BaseContext:
    """The fork server (Linux, macOS), else spawn (Windows: no fork server)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")
