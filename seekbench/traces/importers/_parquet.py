"""Canonical traces as Parquet: the reader (an importer like the others) and the streaming writer.

The layout (one flat table: the step table with each trace's fields beside its steps)
is described in :mod:`._parquet_layout`. Reading yields the canonical dicts the JSONL
held (validated by the loader like any importer's output); :mod:`._parquet_tables`
builds the metric tables straight from the columns. A file is recognised by the
Parquet magic bytes ``PAR1``; error positions name the trace's first row (1-based) as
the line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..._errors import UserInputError
from ..._io import atomic_writer
from ..._limits import ReadLimits, check_row_groups
from ._base import ImportedRecord, starts_with_bytes

FORMAT = "parquet"
MAGIC = b"PAR1"
#: Traces per row group when writing.
BATCH = 4096


def is_parquet(path: str | os.PathLike) -> bool:
    """True for a file that starts with the Parquet magic bytes ``PAR1``."""
    return starts_with_bytes(path, MAGIC)


def sniff(path: str, head: str, first: object) -> bool:
    """True when the file starts with the Parquet magic bytes."""
    return head.startswith(MAGIC.decode())


def open_file(path: str | os.PathLike, limits: ReadLimits | None = None):
    """The ``pyarrow.parquet.ParquetFile`` at ``path``, checked to hold seekbench's columns in row groups
    within ``limits``."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid / OSError on a corrupt or truncated file
        raise UserInputError(
            f"unreadable Parquet file ({_first_line(e)}); rewrite it with `seekbench convert FILE --to parquet`",
            file=str(path),
        ) from e
    check_row_groups(pf.metadata, limits, file=str(path))
    check_columns(pf.schema_arrow.names, file=str(path))
    return pf


def check_columns(names: list[str], *, file: str) -> None:
    """A user error unless ``names`` (a Parquet file's columns) hold every column seekbench writes."""
    from ._parquet_layout import SCHEMA

    missing = [n for n in SCHEMA.names if n not in names]
    if missing:
        raise UserInputError(
            f"not a seekbench trace table: missing column(s) {', '.join(missing[:5])}"
            + (" ..." if len(missing) > 5 else "")
            + "; write one with `seekbench convert FILE --to parquet`",
            file=file,
        )


def _rows(groups) -> Iterator[dict]:
    from ._parquet_layout import SCHEMA

    for rg in range(groups.n):
        for batch in groups.read([rg], SCHEMA.names, decode=False).to_batches(max_chunksize=8192):
            yield from groups.decode(batch).to_pylist()


def _grouped(groups) -> Iterator[tuple[int, list[dict]]]:
    """``(line, rows)`` of each trace: its contiguous rows, in ``pos`` order (sorted in memory
    when the file is not stored in trace order, as seekbench writes it)."""
    rows = _rows(groups) if _in_trace_order(groups) else _sorted_rows(groups)
    current: list[dict] = []
    line = start = 0
    for row in rows:
        line += 1
        if current and row["trace_id"] != current[0]["trace_id"]:
            yield start, current
            current = []
        if not current:
            start = line
        current.append(row)
    if current:
        yield start, current


def _in_trace_order(groups) -> bool:
    import numpy as np
    import pandas as pd

    key = groups.read(range(groups.n), ["trace_id", "pos"]).to_pandas()
    if key.empty:
        return True
    codes = pd.factorize(key["trace_id"], sort=False)[0]
    pos = key["pos"].to_numpy(dtype=float)
    same = codes[1:] == codes[:-1]
    return bool((np.diff(codes) >= 0).all() and (~same | (np.diff(pos) > 0)).all())


def _sorted_rows(groups) -> Iterator[dict]:
    import numpy as np
    import pandas as pd

    from ._parquet_layout import SCHEMA

    table = groups.read(range(groups.n), SCHEMA.names)
    key = table.select(["trace_id", "pos"]).to_pandas()
    codes = pd.factorize(key["trace_id"], sort=False)[0]
    order = np.lexsort((key["pos"].to_numpy(dtype=float), codes))
    return iter(table.take(order).to_pylist())


def iter_records(path: str | os.PathLike, *, limits: ReadLimits | None = None) -> Iterator[ImportedRecord]:
    """Yield the canonical trace of each trace's rows, streaming a row group at a time (each at most
    ``limits.row_group_bytes``, as the file's metadata declares it and once decoded)."""
    from pyarrow import ArrowException

    from ._parquet_bounded import RowGroups
    from ._parquet_layout import decode_trace

    file = str(path)
    pf = open_file(path, limits)
    groups = _grouped(RowGroups(path, pf.metadata, file=file, limits=limits))
    while True:
        try:
            item = next(groups, None)
        except (OSError, ArrowException) as e:  # a damaged data page (the footer was readable)
            raise damaged(path, e) from e
        if item is None:
            return
        line, rows = item
        try:
            trace = decode_trace(rows)
        except (TypeError, ValueError, RecursionError) as e:  # JSON text that is not JSON, a null list
            yield ImportedRecord(
                line,
                error=UserInputError(
                    f"cannot rebuild the trace from its Parquet rows ({_first_line(e)})",
                    file=file,
                    line=line,
                    trace_id=rows[0].get("trace_id") if isinstance(rows[0].get("trace_id"), str) else None,
                ),
            )
            continue
        yield ImportedRecord(line, trace=trace, sources=_sources(trace))


#: Trace field -> the column of the trace's first row it is read from (``convert --explain``: a row is a record).
_COLUMNS = {
    "trace_id": "$.trace_id",
    "agent": "$.agent",
    "question": "$.question",
    "final_answer": "$.final_answer",
    "gold_answers": "$.gold_answers",
    "correct": "$.correct_value",
    "dataset": "$.dataset",
}


def _sources(trace: dict) -> dict[str, str]:
    correct = trace.get("correct")
    values = {**trace, "correct": correct.get("value") if isinstance(correct, dict) else None}
    return {name: col for name, col in _COLUMNS.items() if values.get(name) not in (None, [])}


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def damaged(path: str | os.PathLike, e: BaseException) -> UserInputError:
    """The user error for a Parquet file whose data pages cannot be read."""
    return UserInputError(
        f"unreadable Parquet file ({_first_line(e)}): a data page is damaged; rewrite it with "
        "`seekbench convert FILE --to parquet`",
        file=str(path),
    )


class ParquetTraceWriter:
    """Write canonical traces to a Parquet file, a row group per ``BATCH`` traces, atomically.

    Traces must be valid (``validate_trace``). The file is written beside the target and
    renamed over it on success, so a failure leaves any previous file intact.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> with ParquetTraceWriter(out) as w:
    ...     w.write({"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": []})
    >>> w.n_traces, open(out, "rb").read(4)
    (1, b'PAR1')
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.n_traces = 0
        self.n_steps = 0
        self._batch: list[dict] = []

    def __enter__(self) -> ParquetTraceWriter:
        import pyarrow.parquet as pq

        from ._parquet_layout import SCHEMA

        self._file_cm = atomic_writer(self.path, "wb")
        fh = self._file_cm.__enter__()
        self._writer = pq.ParquetWriter(fh, SCHEMA, compression="zstd")
        return self

    def write(self, trace: dict) -> None:
        """Add one trace (buffered; written a row group at a time)."""
        self._batch.append(trace)
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._batch:
            batch, self._batch = self._batch, []
            self._writer.write_table(rows_table(batch))
            self.n_traces += len(batch)
            self.n_steps += sum(len(t["steps"]) for t in batch)

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None:
                self._flush()
            self._writer.close()
        except BaseException as e:
            self._file_cm.__exit__(type(e), e, e.__traceback__)
            raise
        return bool(self._file_cm.__exit__(exc_type, exc, tb))


def rows_table(traces: list[dict]):
    """The Parquet rows (a ``pyarrow.Table``) of a list of valid canonical traces."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .._tables import build_tables
    from ._parquet_layout import SCHEMA, STEP_ONLY, TRACE_ONLY, step_row, trace_row

    steps, _ = build_tables(traces)
    counts = np.array([len(t["steps"]) for t in traces], dtype=np.int64)
    try:
        step_rows = [step_row(s) for t in traces for s in t["steps"]]
        trace_rows = [trace_row(t) for t in traces]
        table = pa.Table.from_pandas(
            steps, preserve_index=False, schema=pa.schema([SCHEMA.field(c) for c in steps.columns])
        )
        extra = pa.Table.from_pylist(step_rows, schema=pa.schema([SCHEMA.field(c) for c in STEP_ONLY]))
        per_trace = pa.Table.from_pylist(trace_rows, schema=pa.schema([SCHEMA.field(c) for c in TRACE_ONLY]))
    except (pa.ArrowException, OverflowError) as e:
        raise UserInputError(
            f"cannot store these traces as Parquet ({e}); is an integer beyond 64 bits?", trace_id=traces[0]["trace_id"]
        ) from e
    # One row per step; a trace without steps gets one row of nulls as its step.
    rows_per_trace = np.maximum(counts, 1)
    owner = np.repeat(np.arange(len(traces)), rows_per_trace)
    first = np.cumsum(rows_per_trace) - rows_per_trace
    is_step = np.ones(len(owner), dtype=bool)
    is_step[first[counts == 0]] = False
    step_index = np.full(len(owner), -1, dtype=np.int64)
    step_index[is_step] = np.arange(int(counts.sum()))
    trace_cols = {
        "trace_id": [t["trace_id"] for t in traces],
        "agent": [t["agent"] for t in traces],
        "dataset": [t.get("dataset") for t in traces],
        "question_id": [t.get("question_id") for t in traces],
    }
    take = pa.array(np.where(is_step, step_index, 0)) if len(owner) else pa.array([], pa.int64())
    mask = pa.array(~is_step)
    columns = []
    for field in SCHEMA:
        if field.name in trace_cols:
            col = pa.array(trace_cols[field.name], field.type).take(pa.array(owner))
        elif field.name in TRACE_ONLY:
            col = per_trace.column(field.name).combine_chunks().take(pa.array(owner))
        else:
            source = table if field.name in steps.columns else extra
            col = source.column(field.name).combine_chunks()
            col = col.take(take) if len(col) else pa.nulls(len(owner), field.type)
            if (~is_step).any():
                col = pc.if_else(mask, pa.nulls(len(owner), field.type), col)
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=SCHEMA)


def write_parquet(path: str | os.PathLike, traces: Iterable[dict]) -> tuple[int, int]:
    """Write valid canonical traces to a Parquet file, streaming; return (traces, steps)."""
    with ParquetTraceWriter(path) as w:
        for tr in traces:
            w.write(tr)
    return w.n_traces, w.n_steps
