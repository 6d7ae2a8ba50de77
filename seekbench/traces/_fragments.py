"""Trace inputs split into fragments: byte ranges of JSONL, row-group ranges of Parquet, whole files otherwise.

A fragment is the unit a worker reads on its own (a process of ``--jobs``, a Ray task), so
it names everything needed to read it: the file (a path or an fsspec URL such as
``s3://bucket/run/*.parquet`` or ``memory://c.jsonl``), its format and its range. Records are
never cut: a JSONL range starts after a newline and knows the number of its first line (so
errors name the same ``file:line`` as a sequential read), and a Parquet range owns the traces
whose first row lies in its row groups (reading on into the next group for the rest of its
last trace). Only canonical JSONL and seekbench Parquet split; other formats are one
fragment per file, read by their importer.

Inputs may be files, folders (the ``.parquet`` / ``.jsonl`` / ``.json`` files in them, sorted)
or glob patterns, locally or on any filesystem fsspec knows.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .._errors import UserInputError

#: File name endings a folder is searched for.
TRACE_SUFFIXES = (".parquet", ".pq", ".jsonl", ".json", ".ndjson")
#: Bytes of JSONL per fragment (about 3,000 paper-scale traces: small enough to balance cores).
JSONL_BYTES = 32 * 2**20
#: Parquet rows (steps) per fragment, at least (whole row groups are taken).
PARQUET_ROWS = 100_000
_BLOCK = 16 * 2**20


@dataclass(frozen=True)
class Fragment:
    """One independently readable piece of the input.

    ``start``/``stop`` are byte offsets (canonical JSONL) or row-group numbers (Parquet), stop
    exclusive; ``first_line`` is the line number at ``start`` (JSONL) or the 1-based number of the
    first row of row group ``start`` (Parquet); ``order`` is the fragment's place in the input.
    """

    file: str
    format: str
    start: int = 0
    stop: int | None = None
    first_line: int = 1
    order: int = 0


def is_url(name: str) -> bool:
    """True for ``scheme://...`` names (read through fsspec), False for local paths (``file://`` too)."""
    return "://" in name and not name.startswith("file://")


def local_path(name: str) -> str:
    return name.removeprefix("file://")


def _fsspec():
    try:
        import fsspec
    except ImportError as e:
        raise UserInputError("reading URLs needs fsspec: pip install 'seekbench[scale]'") from e
    return fsspec


def open_binary(name: str):
    """A binary file object for a local path or an fsspec URL."""
    if is_url(name):
        return _fsspec().open(name, "rb").open()
    return open(local_path(name), "rb")


def _size(name: str) -> int:
    if is_url(name):
        fs, path = _fsspec().core.url_to_fs(name)
        return int(fs.size(path))
    return os.path.getsize(local_path(name))


def expand_inputs(paths: Iterable[str | os.PathLike]) -> list[str]:
    """The files named by ``paths``: files as given, folders as their trace files (sorted), globs
    expanded (sorted); a folder or glob that names no file is a user error."""
    out: list[str] = []
    for p in paths:
        name = str(p)
        if is_url(name):
            out.extend(_expand_url(name))
            continue
        path = local_path(name)
        if glob.has_magic(path):
            found = sorted(f for f in glob.glob(path, recursive=True) if os.path.isfile(f))
            if not found:
                raise UserInputError("no file matches this pattern", file=name)
            out.extend(found)
        elif os.path.isdir(path):
            found = sorted(
                os.path.join(root, f)
                for root, _, files in os.walk(path)
                for f in files
                if f.endswith(TRACE_SUFFIXES) and not f.startswith(".")
            )
            if not found:
                raise UserInputError(f"folder holds no trace file ({', '.join(TRACE_SUFFIXES)})", file=name)
            out.extend(found)
        elif not os.path.exists(path):
            raise UserInputError("file not found", file=name)
        else:
            out.append(path)
    return out


def _expand_url(name: str) -> list[str]:
    try:
        fs, path = _fsspec().core.url_to_fs(name)
    except (ImportError, ValueError) as e:  # an unknown scheme, or its fsspec backend not installed
        raise UserInputError(f"cannot open this URL ({e})", file=name) from e
    proto = name.split("://", 1)[0]
    if glob.has_magic(path):
        found = sorted(fs.glob(path))
    elif fs.isdir(path):
        found = sorted(f for f in fs.find(path) if f.endswith(TRACE_SUFFIXES))
    elif fs.exists(path):
        return [name]
    else:
        raise UserInputError("file not found", file=name)
    if not found:
        raise UserInputError("names no trace file", file=name)
    return [f if "://" in f else f"{proto}://{f.lstrip('/') if proto == 'memory' else f}" for f in found]


def url_format(name: str) -> str:
    """The format of a file on object storage: Parquet by its magic bytes, else canonical JSONL
    (the formats read from URLs); anything else is a user error naming what to do."""
    with open_binary(name) as fh:
        head = fh.read(4)
        if head == b"PAR1":
            return "parquet"
        first = (head + fh.readline()).lstrip(b"\xef\xbb\xbf").lstrip()
    if first.startswith(b"{") and b'"schema_version"' in first:
        return "canonical"
    raise UserInputError(
        "only seekbench Parquet and canonical JSONL are read from URLs; convert it with "
        "`seekbench convert FILE --to parquet` or copy it to a local file",
        file=name,
    )


def plan_fragments(
    files: list[str], formats: list[str], *, jobs: int = 1, split: bool = True, jsonl_bytes: int | None = None
) -> list[Fragment]:
    """Fragments covering ``files`` (each of the format at the same position of ``formats``), in order.

    Parameters
    ----------
    files, formats : list of str
        The inputs (from :func:`expand_inputs`) and their formats (``detect_format`` or :func:`url_format`).
    jobs : int, default 1
        Workers that will read them: Parquet files are cut so each has several fragments.
    split : bool, default True
        False keeps each file whole (importer options apply to whole files).
    jsonl_bytes : int, optional
        Bytes of canonical JSONL per fragment (default :data:`JSONL_BYTES`).
    """
    return list(iter_fragments(files, formats, jobs=jobs, split=split, jsonl_bytes=jsonl_bytes))


def iter_fragments(
    files: list[str], formats: list[str], *, jobs: int = 1, split: bool = True, jsonl_bytes: int | None = None
) -> Iterator[Fragment]:
    """The fragments of :func:`plan_fragments`, each as soon as it is known.

    A JSONL file is cut in one pass that counts its lines (for the fragments' first line
    numbers): a worker can read the first fragment while the rest of the file is counted.
    """
    order = 0
    for file, fmt in zip(files, formats, strict=True):
        if not split:
            pieces: Iterable[Fragment] = [Fragment(file, fmt)]
        elif fmt == "canonical":
            pieces = _jsonl_pieces(file, fmt, jsonl_bytes or JSONL_BYTES)
        elif fmt == "parquet":
            pieces = _parquet_pieces(file, jobs)
        else:
            pieces = [Fragment(file, fmt)]
        for f in pieces:
            yield Fragment(f.file, f.format, f.start, f.stop, f.first_line, order=order)
            order += 1


def _jsonl_pieces(file: str, fmt: str, target: int) -> Iterator[Fragment]:
    """Byte ranges of about ``target`` bytes, each starting after a newline, with their first line numbers.

    One sequential pass counts the newlines before each cut (reading is far cheaper than parsing).
    """
    size = _size(file)
    if size <= target:
        yield Fragment(file, fmt, 0, size, 1)
        return
    start, start_line = 0, 1  # the current piece: its first byte and line
    pos, newlines = 0, 0  # the block's offset in the file; newlines counted so far
    with open_binary(file) as fh:
        while block := fh.read(_BLOCK):
            at = 0  # newlines of block[:at] are counted
            while (want := start + target - pos) < len(block):
                cut = block.find(b"\n", max(want, at))
                if cut < 0:  # the piece ends in a later block
                    break
                newlines += block.count(b"\n", at, cut + 1)
                yield Fragment(file, fmt, start, pos + cut + 1, start_line)
                start, start_line, at = pos + cut + 1, newlines + 1, cut + 1
            newlines += block.count(b"\n", at)
            pos += len(block)
    if start < size:
        yield Fragment(file, fmt, start, size, start_line)


def _parquet_pieces(file: str, jobs: int) -> list[Fragment]:
    """Runs of whole row groups of at least ``PARQUET_ROWS`` rows (fewer when that leaves a job idle)."""
    import pyarrow.parquet as pq

    with open_binary(file) as fh:
        meta = pq.ParquetFile(fh).metadata
    rows = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    if not rows:
        return [Fragment(file, "parquet", 0, 0, 1)]
    want = max(1, min(PARQUET_ROWS, sum(rows) // max(1, 4 * jobs)))
    pieces, start, first, acc = [], 0, 1, 0
    for i, n in enumerate(rows):
        acc += n
        if acc >= want or i == len(rows) - 1:
            pieces.append(Fragment(file, "parquet", start, i + 1, first))
            start, first, acc = i + 1, first + sum(rows[start : i + 1]), 0
    return pieces
