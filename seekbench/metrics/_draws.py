"""The multinomial resample counts of the exact bootstrap: drawn, shared, drawn ahead.

A resample of n clusters is one row of counts from ``multinomial(n, [1/n] * n)``; B rows come
in order from one ``numpy.random.default_rng(seed)``, in chunks of at most :data:`MAX_CELLS`
entries (so the draws do not depend on the chunk size). They depend only on the seed, n and
B: the statistics of one group share one draw (:func:`resample_counts`), and
:func:`prefetch_draws` draws the next groups' on threads while the caller computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeGuard

import numpy as np

#: Upper bound on the entries of one chunk of the resample-count matrix.
MAX_CELLS = 4_000_000


#: The last resample-count chunks drawn, keyed by (seed, n_clusters, n_boot): the statistics of
#: one group (RQI, CE, accuracy) resample the same traces with the same seed, so they share them.
_LAST_DRAW: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}


def int_seed(seed: object) -> TypeGuard[int | np.integer]:
    """Whether ``seed`` is an integer seed (not a bool): the draws of equal ones are equal, so they may be shared."""
    return isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)


def _draw(seed: int | None, n_clusters: int, n_boot: int) -> tuple[np.ndarray, ...]:
    """Multinomial resample counts, ``(B x n_clusters)`` as float row chunks of at most
    ``MAX_CELLS`` entries, drawn in order from one ``numpy.random.default_rng(seed)``
    (so the draws do not depend on the chunking)."""
    rng = np.random.default_rng(seed)
    p = np.full(n_clusters, 1.0 / n_clusters)
    chunk = max(1, MAX_CELLS // n_clusters)
    return tuple(
        rng.multinomial(n_clusters, p, size=min(chunk, n_boot - start)).astype(float)
        for start in range(0, n_boot, chunk)
    )


def resample_counts(seed: int | None, n_clusters: int, n_boot: int) -> tuple[np.ndarray, ...]:
    """The resample counts of :func:`_draw`, reused when they are already at hand.

    The counts depend only on the seed, the number of clusters and B. For an integer
    seed the last draw is kept for the next call with the same three values (the
    statistics of one group share it), and one drawn ahead by :func:`prefetch_draws`
    is taken when it matches: the same numbers as drawing again, without the wait.
    """
    key = (int(seed), n_clusters, n_boot) if int_seed(seed) else None
    if key is None:
        return _draw(seed, n_clusters, n_boot)
    if key in _LAST_DRAW:
        return _LAST_DRAW[key]
    ahead = _PREFETCH.get()
    draws = ahead.get(key) if ahead is not None else None
    if draws is None:
        draws = _draw(*key)
    _LAST_DRAW.clear()
    _LAST_DRAW[key] = draws
    return draws


class _Prefetcher:
    """Draws the resample counts of the next ``ahead`` groups on as many threads (numpy releases
    the GIL while it samples, and each draw has its own generator), while the caller computes
    the current group."""

    def __init__(self, keys: list[tuple[int, int, int]], ahead: int) -> None:
        self.keys = keys
        self.ahead = ahead
        self.pool = ThreadPoolExecutor(max_workers=max(1, ahead), thread_name_prefix="seekbench-bootstrap")
        self.futures: dict[tuple[int, int, int], Future] = {}

    def advance(self, group: int) -> None:
        """The caller is at ``group``: keep and start the draws of groups ``group .. group + ahead``."""
        wanted = dict.fromkeys(self.keys[group : group + self.ahead + 1])
        for key in [k for k in self.futures if k not in wanted]:
            self.futures.pop(key).cancel()
        for key in wanted:
            if key not in self.futures:
                self.futures[key] = self.pool.submit(_draw, *key)

    def get(self, key: tuple[int, int, int]) -> tuple[np.ndarray, ...] | None:
        fut = self.futures.get(key)
        return None if fut is None else fut.result()

    def close(self) -> None:
        for fut in self.futures.values():
            fut.cancel()
        self.pool.shutdown(wait=True)


_PREFETCH: ContextVar[_Prefetcher | None] = ContextVar("seekbench_bootstrap_prefetch", default=None)


@contextmanager
def prefetch_draws(
    group_sizes: Sequence[int], *, n_boot: int, seed: object, ahead: int = 1
) -> Iterator[Callable[[int], None]]:
    """Draw the resample counts of upcoming groups in the background.

    Yields ``advance(i)``, to call when group i starts; its draw (``group_sizes[i]``
    clusters) and those of the next ``ahead`` groups are then under way, on ``ahead``
    threads. Only for an integer seed and B > 0 (otherwise ``advance`` does nothing). At
    most ``ahead + 1`` draws are held, so memory stays bounded on large corpora.
    """
    if n_boot <= 0 or not int_seed(seed):
        yield lambda group: None
        return
    pre = _Prefetcher([(int(seed), int(n), int(n_boot)) for n in group_sizes], ahead)
    token = _PREFETCH.set(pre)
    try:
        yield pre.advance
    finally:
        _PREFETCH.reset(token)
        pre.close()
        _LAST_DRAW.clear()
