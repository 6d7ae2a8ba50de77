"""Reading trace files of any supported format into validated canonical traces."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .._errors import UserInputError
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


def read_traces(paths: str | os.PathLike | Iterable[str | os.PathLike], *, format: str | None = None,
                skip_invalid: bool = False, **options) -> ReadResult:
    """Read and validate traces from one or more files.

    Parameters
    ----------
    paths : path or list of paths
    format : str, optional
        Force an importer (``seekbench``, ``search_r1``, ``openai_chat``, ``atif``, ``canonical``);
        auto-detected per file by default.
    skip_invalid : bool, default False
        Keep going past bad records, collecting their errors in ``skipped``.
        Without it the first bad record raises :class:`UserInputError`.

    Returns
    -------
    ReadResult
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = ReadResult()
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
            out.traces.append(item)
    if not out.traces and not out.skipped:
        raise UserInputError("no traces found; the file holds no records", file=", ".join(map(str, paths)))
    return out
