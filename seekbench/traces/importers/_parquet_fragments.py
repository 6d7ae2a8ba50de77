"""A range of row groups of a seekbench Parquet file as chunks of the tidy tables (one fragment).

The fragment owns the traces whose first row lies in its row groups: it skips the rows
that finish a trace begun in the row group before it, and reads on past its last row group
to finish its last trace. Each run of complete traces goes from columns to tables as in
:mod:`._parquet_tables` (no trace dicts); a run that would not pass those vectorised checks
(or a file not laid out as seekbench writes it) is decoded to dicts and validated record by
record, so every error is worded as the sequential reader words it, with the trace's first
row (1-based) as its line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..._limits import ReadLimits, check_row_groups
from .._fragment_log import dict_chunks
from .._fragments import Fragment, open_binary
from ._parquet import check_columns, damaged
from ._parquet_bounded import RowGroups
from ._parquet_layout import SCHEMA, decode_trace
from ._parquet_tables import _DICTIONARY, _STEP_READ, _TRACE_READ, _Invalid, _objects, _Reader
from ._summary import ImportSummary

if TYPE_CHECKING:
    import pandas as pd

    from .._fragment_log import FragmentLog


def _lead(t: pa.Table, tid: object) -> int:
    """Rows at the start of ``t`` that belong to trace ``tid``."""
    ids = _objects(t["trace_id"])
    other = np.flatnonzero(ids != tid)
    return int(other[0]) if len(other) else len(ids)


class _Groups:
    """Row groups of one file read with given columns (each within the limits once decoded), and their
    first rows."""

    def __init__(self, file: str, metadata, columns: list[str] | None, limits: ReadLimits | None) -> None:
        self.fh = open_binary(file)
        self.groups = RowGroups(self.fh, metadata, file=file, limits=limits, dictionary=_DICTIONARY)
        self.n = self.groups.n
        self.first_row = self.groups.first_row
        self.columns = columns

    def close(self) -> None:
        self.groups.pf.close()
        self.fh.close()

    def read(self, rg: int, columns: list[str] | None = None) -> pa.Table:
        return self.groups.read([rg], columns or self.columns)

    def rows(self, first: int, n: int) -> pa.Table:
        """Rows ``first .. first + n - 1`` (0-based in the file), every column."""
        lo = int(np.searchsorted(self.first_row, first, side="right") - 1)
        hi = int(np.searchsorted(self.first_row, first + n, side="left"))
        t = self.groups.read(range(lo, max(hi, lo + 1)), SCHEMA.names)
        return t.slice(first - int(self.first_row[lo]), n)


def _runs(groups: _Groups, fragment: Fragment) -> Iterator[tuple[pa.Table, int]]:
    """``(table, first row)`` of each run of complete traces the fragment owns (a row group's worth)."""
    start, stop = fragment.start, groups.n if fragment.stop is None else fragment.stop
    carry: pa.Table | None = None
    carry_row = 0
    skip: object = None  # the trace the previous fragment owns, while its rows go on
    if start > 0 and start < stop:
        before = groups.read(start - 1, ["trace_id"])
        skip = _objects(before["trace_id"])[-1] if before.num_rows else None
    for rg in range(start, stop):
        t, row = groups.read(rg), int(groups.first_row[rg])
        if skip is not None:  # rows finishing the previous fragment's last trace
            k = _lead(t, skip)
            t, row = t.slice(k), row + k
            if t.num_rows:
                skip = None
        if carry is not None:
            t, row = pa.concat_tables([carry, t], promote_options="permissive"), carry_row
            carry = None
        if not t.num_rows:
            continue
        ids = _objects(t["trace_id"])
        last = ids[-1]
        if rg < stop - 1:  # the last trace may go on in the next row group of this fragment
            cut = int(np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])[-1])
            t, carry, carry_row = t.slice(0, cut), t.slice(cut), row + cut
        else:  # the last trace may go on past the fragment: read on to its end
            nxt = rg + 1
            while nxt < groups.n:
                u = groups.read(nxt)
                k = _lead(u, last)
                t = pa.concat_tables([t, u.slice(0, k)], promote_options="permissive")
                if k < u.num_rows:
                    break
                nxt += 1
        if t.num_rows:
            yield t, row


def iter_parquet_tables(
    fragment: Fragment, log: FragmentLog, *, skip_invalid: bool, chunk_traces: int, limits: ReadLimits | None = None
) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    """The tables of the traces ``fragment`` owns; invalid ones logged (see :mod:`.._chunks`). A row
    group past ``limits.row_group_bytes`` (:mod:`seekbench._limits`) is a user error."""
    import pyarrow.parquet as pq

    from .._tables import _Columns

    with open_binary(fragment.file) as fh:
        probe = pq.ParquetFile(fh)  # the stored types (not read as dictionaries)
        have, schema, metadata = probe.schema_arrow, probe.schema, probe.metadata
        check_row_groups(metadata, limits, file=fragment.file)
    check_columns(have.names, file=fragment.file)  # else reading them as dictionaries raised KeyError
    layout = all(f.name in have.names and have.field(f.name).type.equals(f.type) for f in SCHEMA)
    rank = next(
        (
            p
            for p in (schema.column(i).path for i in range(len(schema)))
            if p.startswith("documents.") and p.endswith(".rank")
        ),
        None,
    )
    columns = [*_STEP_READ, *_TRACE_READ, rank] if layout and rank else SCHEMA.names
    groups = _Groups(fragment.file, metadata, columns, limits)
    reader = _Reader()
    # Counted here, from the columns as from the dicts of a run decoded record by record (the
    # caller leaves the fragment's counts to this reader).
    log.summary = reader.summary = ImportSummary()
    try:
        for t, row in _runs(groups, fragment):
            if layout and rank:
                reader.cols = _Columns(use_inline=True)
                try:
                    reader.chunk(t)
                except _Invalid:
                    pass
                else:
                    ids = _objects(t["trace_id"])
                    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
                    log.ids.extend(ids[starts].tolist())
                    log.lines.extend((starts + row + 1).tolist())
                    yield reader.cols.frames()
                    continue
            # Decode and validate record by record: the sequential reader's errors, word for word.
            full = groups.rows(row, t.num_rows) if columns is not SCHEMA.names else t
            records = _records(full, row, fragment.file)
            before = len(log.ids)
            yield from dict_chunks(records, log, fragment, skip_invalid=skip_invalid, chunk_traces=chunk_traces)
            reader.seen |= set(log.ids[before:])
            if log.errors and not skip_invalid:
                return
    except (OSError, pa.ArrowException) as e:  # a damaged data page (the footer was readable)
        raise damaged(fragment.file, e) from e
    finally:
        groups.close()


def _records(t: pa.Table, row: int, file: str) -> Iterator[tuple[int | None, object]]:
    """``(line, trace or error)`` of each trace's rows in ``t``, whose first row is row ``row`` (0-based)."""
    from ..._errors import UserInputError
    from ._parquet import _first_line

    rows = t.to_pylist()
    ids = [r["trace_id"] for r in rows]
    starts = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    for a, b in zip(starts, [*starts[1:], len(rows)], strict=True):
        line = row + a + 1
        try:
            yield line, decode_trace(rows[a:b])
        except (TypeError, ValueError, RecursionError) as e:
            tid = rows[a].get("trace_id")
            yield (
                line,
                UserInputError(
                    f"cannot rebuild the trace from its Parquet rows ({_first_line(e)})",
                    file=file,
                    line=line,
                    trace_id=tid if isinstance(tid, str) else None,
                ),
            )
