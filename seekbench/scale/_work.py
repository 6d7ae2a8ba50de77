"""The per-fragment work both engines run: read a fragment in chunks and reduce each chunk to per-trace rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._io import paused_gc
from ..traces import Fragment, FragmentLog, iter_fragment_tables

#: ``fn(steps, traces)``: one row per trace of ``traces``, in its order (any numeric columns).
ChunkFunction = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]


@dataclass
class FragmentResult:
    """A fragment's per-trace rows (aligned with ``log.ids``) and what reading it found."""

    log: FragmentLog
    rows: pd.DataFrame | None


@dataclass(frozen=True)
class FragmentWork:
    """Read one fragment and apply ``fn`` to each chunk: a picklable callable (processes, Ray tasks)."""

    fn: ChunkFunction
    skip_invalid: bool = False
    options: tuple[tuple[str, object], ...] = ()
    chunk_traces: int | None = None

    def __call__(self, fragment: Fragment) -> FragmentResult:
        log = FragmentLog(fragment)
        parts: list[pd.DataFrame] = []
        extra: dict[str, Any] = dict(self.options)
        if self.chunk_traces is not None:
            extra["chunk_traces"] = self.chunk_traces
        with paused_gc():
            for steps, traces in iter_fragment_tables(fragment, log, skip_invalid=self.skip_invalid, **extra):
                parts.append(aligned(self.fn(steps, traces), traces))
        rows = pd.concat(parts, ignore_index=True) if parts else None
        return FragmentResult(log, rows)


def aligned(rows: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with a plain index, checked to hold one row per trace of ``traces`` in its order
    (a ``trace_id`` index or column is compared; a function breaking the contract is a bug, said so)."""
    ids = traces["trace_id"].to_numpy()
    if rows.index.name == "trace_id":
        rows = rows.reset_index()
    if len(rows) != len(ids) or ("trace_id" in rows.columns and not (rows["trace_id"].to_numpy() == ids).all()):
        raise ValueError(
            f"the chunk function returned {len(rows)} rows for {len(ids)} traces (or another order); "
            "it must return one row per trace, in the order of the trace table"
        )
    return rows.reset_index(drop=True)
