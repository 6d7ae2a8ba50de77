"""The local engine: fragments reduced by ``jobs`` worker processes of this machine (in this process for 1)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext

from ..traces import Fragment
from ._work import FragmentResult, FragmentWork


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_local(fragments: Sequence[Fragment], work: FragmentWork, *, jobs: int) -> Iterator[FragmentResult]:
    """The results of ``work`` on each fragment, in fragment order.

    With ``jobs > 1`` a pool of processes reads and reduces fragments side by side (started by
    a fork server: a clean process, not a fork of this one with its threads and tables).
    """
    if jobs <= 1 or len(fragments) <= 1:
        for fragment in fragments:
            yield work(fragment)
        return
    ctx: BaseContext
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        multiprocessing.set_forkserver_preload(["seekbench.scale._work"])
    else:  # Windows: no fork server
        ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(fragments)), mp_context=ctx) as pool:
        yield from pool.map(work, fragments)
