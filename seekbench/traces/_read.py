"""Reading trace files of any supported format into validated canonical traces."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pandas as pd

from .._errors import UserInputError
from ._io import paused_gc
from ._validate import validate_trace
from .importers._detect import detect_format, importer_for


@dataclass
class ReadResult:
    """Traces read from one or more files, and what was skipped and why."""

    traces: list[dict] = field(default_factory=list)
    skipped: list[UserInputError] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)

    @property
    def n_skipped(self) -> int:
        return len(self.skipped)


def iter_traces(path: str | os.PathLike, *, format: str | None = None,
                **options) -> Iterator[tuple[int | None, dict | UserInputError]]:
    """Stream ``(line, trace_or_error)`` from one file, each trace validated against the schema."""
    file = str(path)
    fmt = format or detect_format(path)
    seen: dict[str, int | None] = {}
    for rec in importer_for(fmt).iter_records(path, **options):
        if rec.error is not None:
            yield rec.line, rec.error
            continue
        try:
            validate_trace(rec.trace, file=file, line=rec.line)
            tid = rec.trace["trace_id"]
            if tid in seen:
                where = f"line {seen[tid]}" if seen[tid] is not None else "an earlier record"
                raise UserInputError(f"duplicate trace_id (first seen at {where}); trace ids must be unique",
                                     file=file, line=rec.line, trace_id=tid, path="$.trace_id")
            seen[tid] = rec.line
        except UserInputError as e:
            yield rec.line, e
            continue
        yield rec.line, rec.trace


def _valid_traces(paths: list, out: ReadResult, *, format: str | None, skip_invalid: bool,
                  **options) -> Iterator[dict]:
    """Stream the valid traces of ``paths``, noting formats and skipped records in ``out``."""
    seen: set[str] = set()
    for path in paths:
        file = str(path)
        fmt = format or detect_format(path)
        out.formats[file] = fmt
        for line, item in iter_traces(path, format=fmt, **options):
            if isinstance(item, dict) and item["trace_id"] in seen:
                item = UserInputError("duplicate trace_id across input files; trace ids must be unique",
                                      file=file, line=line, trace_id=item["trace_id"], path="$.trace_id")
            if isinstance(item, UserInputError):
                if not skip_invalid:
                    raise item
                out.skipped.append(item)
                continue
            seen.add(item["trace_id"])
            yield item


def _paths(paths) -> list:
    return [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)


def _check_found(out: ReadResult, n_traces: int, paths: list) -> None:
    if not n_traces and not out.skipped:
        raise UserInputError("no traces found; the file holds no records", file=", ".join(map(str, paths)))


def read_traces(paths: str | os.PathLike | Iterable[str | os.PathLike], *, format: str | None = None,
                skip_invalid: bool = False, **options) -> ReadResult:
    """Read and validate traces from one or more files.

    Parameters
    ----------
    paths : path or list of paths
    format : str, optional
        Force an importer (``seekbench``, ``search_r1``, ``openai_chat``, ``atif``, ``canonical``,
        ``parquet``); auto-detected per file by default.
    skip_invalid : bool, default False
        Keep going past bad records, collecting their errors in ``skipped``.
        Without it the first bad record raises :class:`UserInputError`.

    Returns
    -------
    ReadResult
    """
    paths = _paths(paths)
    out = ReadResult()
    with paused_gc():
        out.traces = list(_valid_traces(paths, out, format=format, skip_invalid=skip_invalid, **options))
    _check_found(out, len(out.traces), paths)
    return out


def read_tables(paths: str | os.PathLike | Iterable[str | os.PathLike], *, format: str | None = None,
                skip_invalid: bool = False, **options) -> tuple[ReadResult, pd.DataFrame, pd.DataFrame]:
    """Read, validate and tabulate traces in one streaming pass, without keeping the traces.

    The same checks and errors as :func:`read_traces` followed by ``build_tables``, but
    each trace is dropped once it is in the tables, so memory holds the tables only (the
    returned ``ReadResult`` lists formats and skipped records; its ``traces`` stay empty).
    Parquet inputs (:mod:`.importers._parquet`) are tabulated straight from their columns.

    Parameters
    ----------
    paths, format, skip_invalid, **options
        As for :func:`read_traces`. The step table carries the inline labels; apply an
        annotation set with ``attach_labels``.

    Returns
    -------
    (ReadResult, steps, traces)
    """
    from ._tables import build_tables

    paths = _paths(paths)
    out = ReadResult()
    tables = None
    if paths and not options and all((format or detect_format(p)) == "parquet" for p in paths):
        from .importers._parquet_tables import read_tables as parquet_tables

        tables = parquet_tables(paths, out.formats)
    if tables is None:
        out.formats.clear()
        with paused_gc():
            tables = build_tables(_valid_traces(paths, out, format=format, skip_invalid=skip_invalid, **options))
    steps, traces = tables
    _check_found(out, len(traces), paths)
    return out, steps, traces
