"""The per-fragment work both engines run: read a fragment in chunks and reduce each chunk to per-trace rows."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .._io import paused_gc
from ..traces import Fragment, FragmentLog, iter_fragment_tables
from ._compact import CompactRows, compact_rows

#: ``fn(steps, traces)``: one row per trace of ``traces``, in its order (any numeric columns).
ChunkFunction = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]


@dataclass
class FragmentResult:
    """A fragment's per-trace rows, what reading it found, and what it cost: CPU seconds reading
    (to tables) and reducing (``fn``), and the worker's peak RSS so far (MiB).

    The valid traces' ids and lines travel compactly as ``ids`` (Arrow strings) and ``lines``
    (line numbers, -1 where a record has none), not in ``log`` (whose lists are left empty);
    ``rows`` are aligned with them, as columns (see :mod:`._compact`).
    """

    log: FragmentLog
    rows: CompactRows | pd.DataFrame | None
    ids: pa.Array = dataclasses.field(default_factory=lambda: pa.array([], type=pa.string()))
    lines: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    read_cpu: float = 0.0
    reduce_cpu: float = 0.0
    worker_rss_mib: float = 0.0


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
        read_cpu = reduce_cpu = 0.0
        with paused_gc():
            chunks = iter_fragment_tables(fragment, log, skip_invalid=self.skip_invalid, **extra)
            while True:
                t0 = time.process_time()
                chunk = next(chunks, None)
                t1 = time.process_time()
                read_cpu += t1 - t0
                if chunk is None:
                    break
                parts.append(aligned(self.fn(*chunk), chunk[1]))
                reduce_cpu += time.process_time() - t1
        t0 = time.process_time()
        rows = pd.concat(parts, ignore_index=True) if parts else None
        del parts
        if rows is not None and len(rows) != len(log.ids):  # the merge aligns rows with ids: never guess
            raise RuntimeError(f"{fragment.file}: {len(rows)} rows for {len(log.ids)} traces read")
        ids = pa.array(log.ids, type=pa.string())
        lines = np.array([-1 if x is None else x for x in log.lines], dtype=np.int64)
        packed = None if rows is None else compact_rows(rows, log.ids)
        log.ids, log.lines = [], []  # they travel as ``ids`` and ``lines``
        reduce_cpu += time.process_time() - t0
        return FragmentResult(log, packed, ids, lines, read_cpu, reduce_cpu, _peak_rss_mib())


def _peak_rss_mib() -> float:
    try:
        import resource
    except ImportError:  # not on POSIX
        return float("nan")
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


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
