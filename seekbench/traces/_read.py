"""Reading trace files of any supported format into validated canonical traces."""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pandas as pd

from .._errors import UserInputError
from .._io import paused_gc
from .._limits import InputLimitError
from ._validate import validate_trace
from .importers._detect import detect_format, format_of, importer_for
from .importers._summary import ImportSummary

#: Importer warnings kept per read (the rest are counted): enough to show, bounded for huge files.
MAX_WARNINGS = 100


@dataclass
class ReadResult:
    """Traces read from one or more files, and what was skipped and why."""

    traces: list[dict] = field(default_factory=list)
    skipped: list[UserInputError] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    #: What was imported (counts for the one summary line), and the importers' notes and warnings.
    summary: ImportSummary | None = field(default_factory=ImportSummary)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the first MAX_WARNINGS; n_warnings counts them all
    n_warnings: int = 0

    @property
    def n_skipped(self) -> int:
        return len(self.skipped)


def importer_options(fmt: str, options: dict) -> tuple[dict, list[str]]:
    """The options the ``fmt`` importer takes, and the names of those it does not (None values dropped)."""
    given = {k: v for k, v in options.items() if v is not None}
    accepted = inspect.signature(importer_for(fmt).iter_records).parameters
    return ({k: v for k, v in given.items() if k in accepted}, sorted(k for k in given if k not in accepted))


def iter_traces(
    path: str | os.PathLike, *, format: str | None = None, skip_invalid: bool = False, **options
) -> Iterator[tuple[int | None, dict | UserInputError]]:
    """Stream ``(line, trace_or_error)`` from one file, each trace validated against the schema.

    ``options`` go to the importer (``agent``, ``tags``, ``field``, ...); those the file's format
    does not take are left out. ``skip_invalid`` lets detection pass over bad first lines.
    """
    yield from _iter_traces(path, format=format, skip_invalid=skip_invalid, out=None, **options)


def _iter_traces(
    path: str | os.PathLike, *, format: str | None, skip_invalid: bool, out: ReadResult | None, **options
) -> Iterator[tuple[int | None, dict | UserInputError]]:
    file = str(path)
    fmt = format_of(path, format, skip_invalid=skip_invalid, options=options)
    accepted, ignored = importer_options(fmt, options)
    if ignored and out is not None:
        out.notes.append(
            f"note: {file} is {fmt}, which does not take "
            f"{', '.join('--' + k.replace('_', '-') for k in ignored)}; ignored for this file"
        )
    seen: dict[str, int | None] = {}
    for rec in importer_for(fmt).iter_records(path, **accepted):
        if out is not None and (rec.notes or rec.warnings):  # most records have neither
            out.notes.extend(n for n in rec.notes if n not in out.notes)
            out.n_warnings += len(rec.warnings)  # kept up to a bound: streaming memory stays flat
            out.warnings.extend(rec.warnings[: max(0, MAX_WARNINGS - len(out.warnings))])
        if isinstance(rec.error, InputLimitError):
            raise rec.error  # past a limit, the rest cannot be read: never skipped
        if rec.error is not None:
            yield rec.line, rec.error
            continue
        try:
            if not rec.valid:  # valid by construction (see ImportedRecord.valid): checked as it was built
                validate_trace(rec.trace, file=file, line=rec.line)
            tid = rec.trace["trace_id"]
            if tid in seen:
                raise duplicate_id_error(tid, file=file, line=rec.line, first_line=seen[tid])
            seen[tid] = rec.line
        except UserInputError as e:
            yield rec.line, e
            continue
        yield rec.line, rec.trace


def valid_traces(paths: list, out: ReadResult, *, format: str | None, skip_invalid: bool, **options) -> Iterator[dict]:
    """Stream the valid traces of ``paths``, noting formats and skipped records in ``out``."""
    seen: set[str] = set()
    for path in paths:
        file = str(path)
        fmt = format_of(path, format, skip_invalid=skip_invalid, options=options)
        out.formats[file] = fmt
        found, records = False, 0  # a forced format must find something of its format in a file of records
        for line, item in _iter_traces(path, format=fmt, skip_invalid=skip_invalid, out=out, **options):
            records += 1
            if isinstance(item, dict) and item["trace_id"] in seen:
                item = UserInputError(
                    "duplicate trace_id across input files; trace ids must be unique",
                    file=file,
                    line=line,
                    trace_id=item["trace_id"],
                    path="$.trace_id",
                )
            if isinstance(item, UserInputError):
                if not skip_invalid:
                    raise item
                out.skipped.append(item)
                continue
            seen.add(item["trace_id"])
            if out.summary is not None:  # None only when the Parquet path read whole columns, never here
                out.summary.add(item)
            found = (
                found
                or fmt != "search_r1"
                or any(st["kind"] in ("search", "search_result", "answer") for st in item["steps"])
            )
            yield item
        if format is not None and records and not found:
            raise format_not_found_error(file, format, out)


def duplicate_id_error(
    trace_id: str, *, file: str, line: int | None, first_line: int | None, across_files: bool = False
) -> UserInputError:
    """The error for a trace id seen before: in the same file (at ``first_line``, None when the
    earlier record has no line) or, ``across_files``, in an earlier input file.

    >>> duplicate_id_error("t1", file="a.jsonl", line=9, first_line=2).one_line()
    'a.jsonl:9, trace t1, at $.trace_id: duplicate trace_id (first seen at line 2); trace ids must be unique'
    """
    if across_files:
        msg = "duplicate trace_id across input files; trace ids must be unique"
    else:
        where = f"line {first_line}" if first_line is not None else "an earlier record"
        msg = f"duplicate trace_id (first seen at {where}); trace ids must be unique"
    return UserInputError(msg, file=file, line=line, trace_id=trace_id, path="$.trace_id")


def format_not_found_error(file: str, fmt: str, read: ReadResult) -> UserInputError:
    """The error for a forced ``--format`` that found no record of its format in ``file``.

    That is a user error: no valid record at all, or (tagged text, where any text imports) no
    tool call, result or answer. The first problem recorded for ``file`` in ``read.skipped``
    is named in the message.

    Parameters
    ----------
    file : str
        The file read.
    fmt : str
        The format the user forced.
    read : ReadResult
        What reading found so far (its ``skipped`` errors).

    Returns
    -------
    UserInputError
        For the caller to raise.
    """
    first = next((e for e in read.skipped if e.file == file), None)
    why = f"; first problem: {first.one_line()}" if first is not None else ""
    return UserInputError(
        f"--format {fmt} found nothing of its format here (no record with a tool call, result "
        f"or answer){why}; drop --format to detect the format, or pick the right one",
        file=file,
    )


def _paths(paths) -> list:
    return [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)


def _check_found(out: ReadResult, n_traces: int, paths: list) -> None:
    if not n_traces and not out.skipped:
        raise UserInputError("no traces found; the file holds no records", file=", ".join(map(str, paths)))


def read_traces(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    format: str | None = None,
    skip_invalid: bool = False,
    **options,
) -> ReadResult:
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
    **options
        Importer options: ``agent``, ``question``, ``field``, ``question_field``, ``answer_field``,
        ``tags``, ``search_tools``, ``answer_tool`` (see each importer); ``mapping``, a mapping file (TOML,
        docs/formats.md), reads every file as it says (:mod:`.importers._mapped`); a format that does not take one
        ignores it
        with a note in ``notes``. ``limits``, a :class:`~seekbench._limits.ReadLimits`, bounds the
        bytes of a record, an archive member and a Parquet row group (default
        :data:`~seekbench._limits.DEFAULT_LIMITS`); past one, :class:`UserInputError` even with
        ``skip_invalid``.

    Returns
    -------
    ReadResult
        Also ``summary`` (the counts of the one import line), ``notes`` and ``warnings``.
    """
    paths = _paths(paths)
    out = ReadResult()
    with paused_gc():
        out.traces = list(valid_traces(paths, out, format=format, skip_invalid=skip_invalid, **options))
    _check_found(out, len(out.traces), paths)
    return out


def read_tables(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    format: str | None = None,
    skip_invalid: bool = False,
    **options,
) -> tuple[ReadResult, pd.DataFrame, pd.DataFrame]:
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
    limits = options.get("limits")
    if (
        paths
        and not any(v is not None for k, v in options.items() if k != "limits")
        and all((format or detect_format(p, skip_invalid=skip_invalid, limits=limits)) == "parquet" for p in paths)
    ):
        from .importers._parquet_tables import read_tables as parquet_tables

        tables = parquet_tables(paths, out.formats, out.summary, limits=limits)
    if tables is None:
        out.formats.clear()
        with paused_gc():
            tables = build_tables(valid_traces(paths, out, format=format, skip_invalid=skip_invalid, **options))
    steps, traces = tables
    _check_found(out, len(traces), paths)
    return out, steps, traces
