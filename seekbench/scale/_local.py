"""The local engine: fragments reduced by ``jobs`` worker processes of this machine (in this process for 1)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.context import BaseContext

from ..traces import Fragment
from ._work import FragmentResult, FragmentWork


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


#: Imported once by the fork server, so every worker it starts has them: the fragment work and the
#: metrics (the reduction function, and the groups' metrics computed in the same workers).
PRELOAD = ["seekbench.scale._work", "seekbench.metrics"]


def _context() -> BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        multiprocessing.set_forkserver_preload(PRELOAD)
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")  # Windows: no fork server


@contextmanager
def local_workers(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """A pool of ``jobs`` worker processes of this machine, or None (this process) for one job.

    Started by a fork server (a clean process, not a fork of this one with its threads and
    tables) that has imported :data:`PRELOAD`, so a command can read its fragments and then
    compute its groups' metrics in the same workers without starting or importing anything again.
    """
    if jobs <= 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
        yield pool


def run_local(
    fragments: Sequence[Fragment], work: FragmentWork, *, jobs: int, executor: Executor | None = None
) -> Iterator[FragmentResult]:
    """The results of ``work`` on each fragment, in fragment order.

    With ``jobs > 1`` a pool of processes reads and reduces fragments side by side (``executor``,
    else one started by :func:`local_workers` for this call).
    """
    if jobs <= 1 or len(fragments) <= 1:
        for fragment in fragments:
            yield work(fragment)
        return
    if executor is not None:
        yield from executor.map(work, fragments)
        return
    with local_workers(min(jobs, len(fragments))) as pool:
        assert pool is not None
        yield from pool.map(work, fragments)
