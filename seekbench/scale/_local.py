"""The local engine: fragments reduced by ``jobs`` worker processes of this machine (in this process for 1)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager

from .._workers import default_jobs, worker_context
from ..traces import Fragment
from ._work import FragmentResult, FragmentWork

__all__ = ["default_jobs", "local_workers", "run_local"]


@contextmanager
def local_workers(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """A pool of ``jobs`` worker processes of this machine, or None (this process) for one job.

    Started by a fork server (a clean process, not a fork of this one with its threads and
    tables), so a command can read its fragments and then compute its groups' metrics in the same
    workers without starting or importing anything again.
    """
    if jobs <= 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=worker_context()) as pool:
        yield pool


def run_local(
    fragments: Iterable[Fragment], work: FragmentWork, *, jobs: int, executor: Executor | None = None
) -> Iterator[FragmentResult]:
    """The results of ``work`` on each fragment, in fragment order.

    With ``jobs > 1`` a pool of processes reads and reduces fragments side by side (``executor``,
    else one started by :func:`local_workers` for this call). Fragments are taken from
    ``fragments`` as they come: with ``executor``, each goes to a worker as soon as the one
    after it is known (a lone fragment is read here), so workers start while a large input is
    still being cut.
    """
    it = iter(fragments)
    ahead = list(itertools.islice(it, 2))
    if jobs <= 1 or len(ahead) <= 1:
        for fragment in itertools.chain(ahead, it):
            yield work(fragment)
        return
    if executor is not None:
        yield from executor.map(work, itertools.chain(ahead, it))
        return
    rest = [*ahead, *it]
    with local_workers(min(jobs, len(rest))) as pool:
        assert pool is not None
        yield from pool.map(work, rest)
