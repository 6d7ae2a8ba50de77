"""The groups of a per-trace statistics table, one at a time, and the order their results come back in.

:func:`~seekbench.metrics.summarize_statistics` aggregates each group (agent, ...) from its
rows only, so it never needs the table copied or split all at once: :func:`group_codes`
numbers the groups (one small integer per row) and :func:`group_rows` hands out one group's
row positions at a time. A group's numbers depend on its rows and the seed only (each group
draws its resamples from a fresh ``default_rng(seed)``), so groups may be computed in any
process: :func:`in_order` runs them here or on a ``concurrent.futures.Executor`` and gives
the results back in group order, with the warnings each raised (:func:`caught_warnings`),
to be reported in that order as if computed here.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import NamedTuple, TypeVar

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning

T = TypeVar("T")

#: Groups handed to an executor ahead of the one awaited: enough to keep a few workers busy,
#: few enough that only that many groups' rows are in flight (memory stays bounded).
IN_FLIGHT = 4


def _column_codes(column: pd.Series) -> tuple[np.ndarray, int]:
    """Code of each value (missing: -1) and the number of codes: a categorical's own codes
    (no pass over its strings), else those of :func:`pandas.factorize`."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(dtype=np.int64), len(column.cat.categories)
    codes, uniques = pd.factorize(column.to_numpy(), use_na_sentinel=True)
    return codes.astype(np.int64), len(uniques)


def group_codes(stats: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """The group number of every row of ``stats`` and the groups' keys.

    Groups are the observed combinations of the ``by`` columns, missing values included,
    numbered as ``stats.groupby(by, sort=True, dropna=False).ngroup()`` numbers them when the
    columns hold objects: a categorical column groups as its values would (sorted by value, not
    by category order; unobserved categories make no group). The distinct combinations are
    found on integer codes and only they are sorted, so the table is never copied.

    Returns
    -------
    codes : ndarray of int64, one per row
    keys : DataFrame
        One row per group in group order: the ``by`` values (object dtype) of its first row.
    """
    key = np.zeros(len(stats), dtype=np.int64)
    for c in by:  # key stays below len(stats) after each factorize, so key * (n + 1) + code fits int64
        codes, n = _column_codes(stats[c])
        key = pd.factorize(key * (n + 1) + codes + 1)[0].astype(np.int64)
    # factorize numbers the combinations 0, 1, 2, ... as they first appear: the running maximum
    # steps up by one exactly at each combination's first row.
    first = np.flatnonzero(np.diff(np.maximum.accumulate(key), prepend=-1) > 0)
    keys = pd.DataFrame({c: stats[c].iloc[first].astype(object).to_numpy() for c in by})
    rank = keys.groupby(list(by), sort=True, dropna=False).ngroup().to_numpy()
    keys = keys.iloc[np.argsort(rank)].reset_index(drop=True)
    return rank[key].astype(np.int64), keys


def group_rows(codes: np.ndarray, n_groups: int) -> Iterator[np.ndarray]:
    """The row positions of group 0, 1, ... of :func:`group_codes`, in table order."""
    order = np.argsort(codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=n_groups))])
    for i in range(n_groups):
        yield order[bounds[i] : bounds[i + 1]]


class Caught(NamedTuple):
    """A warning raised while computing a group, to re-raise where the summary is made."""

    message: str
    category: type[Warning]
    filename: str
    lineno: int


@contextmanager
def caught_warnings() -> Iterator[list[Caught]]:
    """Record every warning raised inside (UndefinedMetricWarnings always, each time), in order."""
    out: list[Caught] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        yield out
    out.extend(Caught(str(w.message), w.category, w.filename, w.lineno) for w in caught)


def route_warnings(caught: Iterable[Caught], reasons: dict[str, list[str]], label: str) -> None:
    """Note each UndefinedMetricWarning's message with the group ``label`` (to report each reason
    once, with its groups); raise the other warnings again, here."""
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning):
            reasons.setdefault(w.message, []).append(label)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def in_order(calls: Iterable[Callable[[], T]], executor: Executor | None = None) -> Iterator[T]:
    """The results of ``calls`` in their order: computed here one after the other, or submitted
    to ``executor`` (picklable calls, e.g. a
    ``functools.partial`` of a module-level function for a process pool) with at most
    :data:`IN_FLIGHT` waiting beyond the one awaited; calls are taken from ``calls`` only as
    they are submitted, so a generator builds each call's data only then."""
    if executor is None:
        for call in calls:
            yield call()
        return
    pending: deque[Future[T]] = deque()
    try:
        for call in calls:
            pending.append(executor.submit(call))
            if len(pending) > IN_FLIGHT:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for fut in pending:  # an error or an abandoned iteration: do not run the rest
            fut.cancel()
