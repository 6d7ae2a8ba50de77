"""One fragment of the input read as chunks of complete traces in the tidy tables, in bounded memory.

:func:`iter_fragment_tables` yields ``(steps, traces)`` pairs (the columns of
``build_tables``) of at most ``chunk_traces`` traces each, holding one trace dict at a
time (each is dropped once its columns are gathered). Validation is the sequential reader's, record by record: the same
checks and the same one-line errors (file, line, trace id, field), collected in a
:class:`FragmentLog` in record order; without ``skip_invalid`` reading stops at the first.

The fast paths skip what a sequential read spends its time on: canonical JSONL lines are
parsed by orjson where it reads them as the standard reader does (:mod:`seekbench._fast_json`;
other lines go to the standard reader, which words the error), and seekbench Parquet goes from
columns to tables without trace dicts (:mod:`.importers._parquet_fragments`). Other formats
stream through their importer.
Duplicate trace ids within a fragment are found here; across fragments the caller finds
them from :attr:`FragmentLog.ids` and :attr:`FragmentLog.lines`.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator

from .._errors import UserInputError
from .._fast_json import SLOW, fast_loads
from .._io import BLANK, ZIP_NOT_TEXT, parse_jsonl_bytes
from .._limits import DEFAULT_LIMITS, ReadLimits, limit_error
from ._fragment_log import FragmentLog, Tables, dict_chunks
from ._fragments import Fragment, is_url, local_path, open_binary

#: Traces per chunk: bounds the tables made at once (a few MiB per thousand traces; no trace dicts
#: are held). Each chunk costs the chunk function a fixed overhead (``trace_statistics``: pandas
#: calls, about 10 ms), so chunks are large: a 32 MiB JSONL fragment of the 1x corpus (about 3,600
#: traces) is one chunk.
CHUNK_TRACES = 8192
#: Importer warnings kept per fragment (the rest are counted), as ``read_traces`` keeps per read.
MAX_WARNINGS = 100


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
        Importer options (``agent``, ``tags``, ...), for fragments read by their importer, and
        ``limits`` (:class:`~seekbench._limits.ReadLimits`), for every fragment.
    """
    limits = options.get("limits")
    importer = any(v is not None for k, v in options.items() if k != "limits")
    if fragment.format == "parquet" and not importer:
        # Imported here: it imports pyarrow, which a JSONL-only read never needs to load.
        from .importers._parquet_fragments import iter_parquet_tables

        log.found = True
        yield from iter_parquet_tables(
            fragment, log, skip_invalid=skip_invalid, chunk_traces=chunk_traces, limits=limits
        )
        return
    fast = fragment.format == "canonical" and not importer
    records = (
        _canonical_records(fragment, limits or DEFAULT_LIMITS)
        if fast
        else _imported_records(fragment, log, skip_invalid, **options)
    )
    yield from dict_chunks(records, log, fragment, skip_invalid=skip_invalid, chunk_traces=chunk_traces, validate=fast)


def _canonical_records(fragment: Fragment, limits: ReadLimits) -> Iterator[tuple[int | None, object]]:
    """``(line, value or error)`` of each non-blank line of a canonical JSONL byte range, as the
    canonical importer yields them (``source.file``/``source.line`` filled when both are null); a line
    past ``limits.record_bytes`` raises the limit's error, as a sequential read does."""
    file = fragment.file
    cap = limits.record_bytes
    buf, pos, stop = _fragment_bytes(fragment)
    # Lines are parsed from slices of one view of the range: no copy of the bytes line by line.
    view = memoryview(buf)
    find = buf.find
    line = fragment.first_line - 1
    while pos < stop:
        end = find(b"\n", pos, stop)
        if end < 0:
            end = stop
        line += 1
        if end - pos > cap:
            raise limit_error("record_bytes", limits, file=file, line=line)
        raw: bytes | memoryview = view[pos:end]
        pos = end + 1
        if line == 1:
            raw = bytes(raw).removeprefix(b"\xef\xbb\xbf")
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
        # Dropped here too, so the record is freed when the consumer drops it, before the next is parsed.
        obj = src = None


def _fragment_bytes(fragment: Fragment) -> tuple[bytes | mmap.mmap, int, int]:
    """``(buffer, start, stop)``: the fragment's bytes are ``buffer[start:stop]``.

    A local file is mapped read-only, not read: reading copies the range into fresh memory the
    kernel must zero first, which cost about a third as much as parsing it. Other sources (URLs,
    empty files, files that cannot be mapped) are read. The map closes when its last view goes.
    """
    if not is_url(fragment.file):
        with open(local_path(fragment.file), "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            try:
                mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else None
            except (OSError, ValueError):  # not a regular file (a pipe, a device)
                mapped = None
        if mapped is not None:
            stop = size if fragment.stop is None else min(fragment.stop, size)
            return mapped, min(fragment.start, stop), stop
    with open_binary(fragment.file) as fh:
        fh.seek(fragment.start)
        # A whole file (stop None) is read to its end: read(n) would allocate n bytes up front.
        data = fh.read() if fragment.stop is None else fh.read(fragment.stop - fragment.start)
    return data, 0, len(data)


def _loads(raw: bytes | memoryview, *, file: str, line: int) -> object:
    """A line's value by orjson where it reads the line as the standard reader does; else (a line it
    refuses or reads differently, or no orjson) by the standard reader, which words the error exactly."""
    raw = bytes(raw)  # one copy of the line: the check of :func:`fast_loads` translates bytes
    value = fast_loads(raw)
    return parse_jsonl_bytes(raw, file=file, line=line) if value is SLOW else value


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
