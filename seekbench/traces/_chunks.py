"""One fragment of the input read as chunks of complete traces in the tidy tables, in bounded memory.

:func:`iter_fragment_tables` yields ``(steps, traces)`` pairs (the columns of
``build_tables``) of at most ``chunk_traces`` traces each, never holding more than one
chunk of trace dicts. Validation is the sequential reader's, record by record: the same
checks and the same one-line errors (file, line, trace id, field), collected in a
:class:`FragmentLog` in record order; without ``skip_invalid`` reading stops at the first.

The fast paths skip what a sequential read spends its time on: canonical JSONL lines are
parsed by orjson (a line it refuses is parsed again by the standard reader, which words the
error), and seekbench Parquet goes from columns to tables without trace dicts
(:mod:`.importers._parquet_fragments`). Other formats stream through their importer.
Duplicate trace ids within a fragment are found here; across fragments the caller finds
them from :attr:`FragmentLog.ids` and :attr:`FragmentLog.lines`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pandas as pd

from .._errors import UserInputError
from .._io import BLANK, ZIP_NOT_TEXT, parse_jsonl_bytes
from ._fragments import Fragment, open_binary
from ._tables import _Columns
from ._validate import validate_trace
from .importers._summary import ImportSummary

try:  # the scale extra: about 4 times faster than the json module on trace lines
    import orjson as _orjson
except ImportError:  # pragma: no cover (the standard reader, line by line)
    _orjson = None  # type: ignore[assignment]

#: Traces per chunk: bounds the trace dicts alive at once (as ``build_tables`` does).
CHUNK_TRACES = 2048
#: Importer warnings kept per fragment (the rest are counted), as ``read_traces`` keeps per read.
MAX_WARNINGS = 100

Tables = tuple[pd.DataFrame, pd.DataFrame]


@dataclass
class FragmentLog:
    """What reading a fragment found besides its tables.

    ``ids``/``lines``: the valid traces in order (those in the chunks); ``errors``: the
    invalid records as ``(line, error)`` in record order; ``summary``: counts for the import
    line (None for Parquet, tabulated from columns as ``read_tables`` does).
    """

    fragment: Fragment
    ids: list[str] = field(default_factory=list)
    lines: list[int | None] = field(default_factory=list)
    errors: list[tuple[int | None, UserInputError]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_warnings: int = 0
    summary: ImportSummary | None = field(default_factory=ImportSummary)
    #: A forced --format found something of its format (only tagged text can find nothing).
    found: bool = False


def iter_fragment_tables(
    fragment: Fragment,
    log: FragmentLog,
    *,
    skip_invalid: bool = False,
    chunk_traces: int = CHUNK_TRACES,
    **options,
) -> Iterator[Tables]:
    """Yield the ``(steps, traces)`` tables of ``fragment``, a chunk of complete traces at a time.

    Parameters
    ----------
    fragment : Fragment
        From :func:`~seekbench.traces.plan_fragments`.
    log : FragmentLog
        Filled with the valid trace ids and lines, the record errors, notes and counts.
    skip_invalid : bool, default False
        Keep reading past invalid records (all are logged); else stop at the first.
    chunk_traces : int
        Traces per chunk at most.
    **options
        Importer options (``agent``, ``tags``, ...), for fragments read by their importer.
    """
    if fragment.format == "parquet" and not options:
        from .importers._parquet_fragments import iter_parquet_tables

        log.summary = None
        log.found = True
        yield from iter_parquet_tables(fragment, log, skip_invalid=skip_invalid, chunk_traces=chunk_traces)
        return
    fast = fragment.format == "canonical" and not options
    records = _canonical_records(fragment) if fast else _imported_records(fragment, log, skip_invalid, **options)
    yield from dict_chunks(records, log, fragment, skip_invalid=skip_invalid, chunk_traces=chunk_traces, validate=fast)


def dict_chunks(
    records: Iterator[tuple[int | None, object]],
    log: FragmentLog,
    fragment: Fragment,
    *,
    skip_invalid: bool,
    chunk_traces: int,
    validate: bool = True,
) -> Iterator[Tables]:
    """Validate ``(line, trace or error)`` records as the sequential reader does (``validate=False``: the
    importer path did) and tabulate the valid ones."""
    file = fragment.file
    seen: dict[str, int | None] = {}
    chunk: list[dict] = []
    for line, obj in records:
        try:
            if isinstance(obj, UserInputError):
                raise obj
            if validate:
                validate_trace(obj, file=file, line=line)
            assert isinstance(obj, dict)  # validate_trace passed, or the importer's validated output
            tid = obj["trace_id"]
            if tid in seen:
                where = f"line {seen[tid]}" if seen[tid] is not None else "an earlier record"
                raise UserInputError(
                    f"duplicate trace_id (first seen at {where}); trace ids must be unique",
                    file=file,
                    line=line,
                    trace_id=tid,
                    path="$.trace_id",
                )
        except UserInputError as e:
            log.errors.append((line, e))
            if not skip_invalid:
                break
            continue
        seen[tid] = line
        log.ids.append(tid)
        log.lines.append(line)
        if log.summary is not None:
            log.summary.add(obj)
        log.found = (
            log.found
            or fragment.format != "search_r1"
            or any(st["kind"] in ("search", "search_result", "answer") for st in obj["steps"])
        )
        chunk.append(obj)
        if len(chunk) == chunk_traces:
            yield tabulate(chunk)
            chunk = []
    if chunk:
        yield tabulate(chunk)


def tabulate(chunk: list[dict]) -> Tables:
    """The tables of a list of valid canonical traces (their inline labels kept)."""
    cols = _Columns(use_inline=True)
    cols.add(chunk)
    return cols.frames()


def _canonical_records(fragment: Fragment) -> Iterator[tuple[int | None, object]]:
    """``(line, value or error)`` of each non-blank line of a canonical JSONL byte range, as the
    canonical importer yields them (``source.file``/``source.line`` filled when both are null)."""
    file = fragment.file
    with open_binary(file) as fh:
        fh.seek(fragment.start)
        data = fh.read((fragment.stop if fragment.stop is not None else 1 << 62) - fragment.start)
    parts = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        parts.pop()
    del data
    line = fragment.first_line - 1
    for raw in parts:
        line += 1
        if line == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
            if raw.startswith(b"PK\x03\x04"):
                yield line, UserInputError(ZIP_NOT_TEXT, file=file)
                return
        obj = _loads(raw, file=file, line=line)
        if obj is BLANK:
            continue
        if not isinstance(obj, (dict, UserInputError)):
            obj = UserInputError("record must be a JSON object", file=file, line=line, path="$")
        elif isinstance(obj, dict):
            src = obj.get("source")
            if isinstance(src, dict) and src.get("line") is None and src.get("file") is None:
                src.update({"file": file, "line": line})
        yield line, obj


def _loads(raw: bytes, *, file: str, line: int) -> object:
    """A line's value by orjson; a line it refuses (or no orjson) goes to the standard reader, which
    words the error exactly (or reads what orjson does not: integers beyond 64 bits)."""
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass
    return parse_jsonl_bytes(raw, file=file, line=line)


def _imported_records(
    fragment: Fragment, log: FragmentLog, skip_invalid: bool, **options
) -> Iterator[tuple[int | None, object]]:
    """The records of a whole file through its importer: validated, within-file duplicates found."""
    from ._read import ReadResult, _iter_traces

    out = ReadResult()
    for line, item in _iter_traces(
        fragment.file, format=fragment.format, skip_invalid=skip_invalid, out=out, **options
    ):
        log.notes.extend(n for n in out.notes if n not in log.notes)
        log.n_warnings, log.warnings = out.n_warnings, out.warnings
        yield line, item
    log.notes.extend(n for n in out.notes if n not in log.notes)
    log.n_warnings, log.warnings = out.n_warnings, out.warnings
