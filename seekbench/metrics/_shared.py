"""Work shared between the metrics of one group inside :func:`~seekbench.metrics.summarize`.

RQI, CE, the ERF and the coverage counts of a group all need the group's evidence
grid, its trace segments and its observations' evidence. Inside :func:`shared_work`
each is computed once per (table object, options) and reused; outside it (a metric
function called on its own) nothing is cached, so a table changed between calls is
always read afresh. Entries keep a reference to their table, so an id is never
confused with a later object's.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
_SCOPE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("seekbench_shared_work", default=None)


@contextlib.contextmanager
def shared_work() -> Iterator[None]:
    """Within this block, :func:`memo` reuses results computed on the same table objects."""
    token = _SCOPE.set({})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def memo(name: str, frames: tuple, options: tuple, compute: Callable[[], T]) -> T:
    """``compute()``, or its earlier result for the same ``frames`` (by identity) and ``options``."""
    cache = _SCOPE.get()
    if cache is None:
        return compute()
    key = (name, tuple(id(f) for f in frames), options)
    hit = cache.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], frames, strict=True)):
        return hit[1]
    value = compute()
    cache[key] = (frames, value)
    return value
