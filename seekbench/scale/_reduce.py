"""Reduce every trace of the inputs to one row, fragment by fragment, and merge on the driver.

The driver plans the fragments, an engine (``local`` or ``ray``) runs the same
:class:`FragmentWork` on each, and the driver merges the results in input order. The
merge is where the sequential reader's cross-record rules are kept: a trace id seen in an
earlier fragment is a duplicate (worded as the sequential reader words it, within a file or
across files), and errors are taken in input order, so the first error without
``--skip-invalid``, or the list of skipped records with it, is the one a sequential read
gives. Only the per-trace rows stay in memory: a few numbers per trace, and the ids as Arrow strings.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._errors import UserInputError
from ..traces import (
    Fragment,
    ReadResult,
    detect_format,
    duplicate_id_error,
    expand_inputs,
    format_not_found_error,
    is_url,
    iter_fragments,
    plan_fragments,
    url_format,
)
from ..traces.importers import ImportSummary
from ._compact import STRINGS, CompactRows, Strings, join_rows, release_freed
from ._local import default_jobs, run_local
from ._work import ChunkFunction, FragmentResult, FragmentWork

ENGINES = ("local", "ray")
#: Importer warnings kept (the rest are counted), as ``read_traces`` keeps.
MAX_WARNINGS = 100


@dataclass
class Reduction:
    """The per-trace rows of every valid trace (input order), their trace ids, and what reading found
    (as ``read_tables``)."""

    rows: pd.DataFrame
    read: ReadResult
    n_fragments: int = 0
    #: CPU seconds the workers spent reading fragments to tables and reducing them, and their largest peak RSS.
    cost: dict[str, float] = dataclasses.field(default_factory=dict)
    #: The trace id of each row (Arrow strings, the buffers the duplicate check read).
    ids: pa.ChunkedArray = dataclasses.field(default_factory=lambda: pa.chunked_array([], type=pa.string()))


def reduce_traces(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    fn: ChunkFunction,
    *,
    engine: str = "local",
    jobs: int | None = None,
    executor: Executor | None = None,
    format: str | None = None,
    skip_invalid: bool = False,
    chunk_traces: int | None = None,
    strings: Strings = "object",
    **options,
) -> Reduction:
    """Apply ``fn`` to every chunk of complete traces of ``paths`` and gather its per-trace rows.

    Parameters
    ----------
    paths : path, URL, folder or glob, or a list of them
        Trace files; a folder means its ``.parquet``/``.jsonl``/``.json`` files, a glob its
        matches; ``scheme://`` names are read through fsspec (seekbench Parquet and canonical
        JSONL only).
    fn : callable
        ``fn(steps, traces) -> DataFrame`` with one row per trace of ``traces``, in its order;
        it sees each trace once, in a chunk of complete traces, so its rows must depend on
        that trace only. Picklable (a module-level function or a ``functools.partial`` of one).
    engine : {"local", "ray"}
        Worker processes of this machine, or Ray Data tasks (``RAY_ADDRESS`` names a cluster).
    jobs : int, optional
        Local worker processes (default: all cores).
    executor : Executor, optional
        The local engine's worker processes, when the caller keeps them for more work
        (:func:`~seekbench.scale.local_workers`); by default a pool of ``jobs`` is started for this call.
    format, skip_invalid, **options
        As for :func:`seekbench.traces.read_tables`.
    chunk_traces : int, optional
        Traces per chunk (default 8192).
    strings : {"object", "compact"}
        ``object``: string columns as ``fn`` returned them; ``compact``: columns of strings as
        categoricals (sorted categories) and no ``trace_id`` column (``ids`` has them): the
        same values in a fraction of the memory, no Python string per row.

    Returns
    -------
    Reduction
        ``rows`` (the concatenated rows, duplicates and invalid records left out), ``ids``
        (the trace id of each row) and ``read`` (formats, skipped records, notes, warnings,
        the import summary).

    Examples
    --------
    >>> from seekbench.data import sample_traces_path
    >>> def n_steps(steps, traces):
    ...     return traces[["trace_id", "n_steps"]]
    >>> red = reduce_traces(sample_traces_path(), n_steps, jobs=1)
    >>> int(red.rows["n_steps"].sum()) > 0
    True
    """
    if strings not in STRINGS:
        raise UserInputError(f"strings={strings!r}: choose one of {', '.join(STRINGS)}")
    if engine not in ENGINES:
        raise UserInputError(f"--engine {engine!r}: choose one of {', '.join(ENGINES)}")
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise UserInputError("--jobs must be >= 1")
    given = {k: v for k, v in options.items() if v is not None}
    files = expand_inputs([paths] if isinstance(paths, (str, os.PathLike)) else list(paths))
    formats = [
        "mapped"  # a mapping file (--map) reads every file as it says
        if given.get("mapping") is not None
        else format or (url_format(f) if is_url(f) else detect_format(f, skip_invalid=skip_invalid))
        for f in files
    ]
    work = FragmentWork(fn, skip_invalid, tuple(sorted(given.items())), chunk_traces)
    planned: list[Fragment] = []
    if engine == "ray":
        from ._ray import run_ray

        planned = plan_fragments(files, formats, jobs=jobs, split=not given)
        results: Iterator[FragmentResult] = run_ray(planned, work)
    else:  # cut as the workers read: the first fragments are read while a large file is still being cut
        fragments = iter_fragments(files, formats, jobs=jobs, split=not given)
        results = run_local(_kept(fragments, planned), work, jobs=jobs, executor=executor)
    cost = {"read_cpu_s": 0.0, "reduce_cpu_s": 0.0, "worker_peak_rss_mib": 0.0}

    def costed(results: Iterator[FragmentResult]) -> Iterator[FragmentResult]:
        for res in results:
            cost["read_cpu_s"] += res.read_cpu
            cost["reduce_cpu_s"] += res.reduce_cpu
            cost["worker_peak_rss_mib"] = max(cost["worker_peak_rss_mib"], res.worker_rss_mib)
            yield res

    red = merge(costed(results), skip_invalid=skip_invalid, forced=format, strings=strings)
    if not len(red.rows) and not red.read.skipped:
        raise UserInputError("no traces found; the file holds no records", file=", ".join(files))
    red.n_fragments, red.cost = len(planned), cost
    return red


def _kept(fragments: Iterator[Fragment], into: list[Fragment]) -> Iterator[Fragment]:
    """``fragments``, each appended to ``into`` as it is taken."""
    for f in fragments:
        into.append(f)
        yield f


def merge(
    results: Iterable[FragmentResult], *, skip_invalid: bool, forced: str | None, strings: Strings = "object"
) -> Reduction:
    """The rows, ids and read of fragment results taken in input order (see the module docstring)."""
    read = ReadResult()
    summary: ImportSummary | None = ImportSummary()
    parts: list[tuple[CompactRows | pd.DataFrame, pa.Array]] = []
    frags = _Sightings()
    errors: list[tuple[int, float, UserInputError]] = []
    found: dict[str, bool] = {}
    records: dict[str, int] = {}
    for res in results:
        log, frag = res.log, res.log.fragment
        read.formats[frag.file] = frag.format
        read.notes.extend(n for n in log.notes if n not in read.notes)
        read.n_warnings += log.n_warnings
        read.warnings.extend(log.warnings[: max(0, MAX_WARNINGS - len(read.warnings))])
        summary = None if summary is None or log.summary is None else _added(summary, log.summary)
        errors.extend((frag.order, _key(line), e) for line, e in log.errors)
        found[frag.file] = found.get(frag.file, False) or log.found
        records[frag.file] = records.get(frag.file, 0) + len(res.ids) + len(log.errors)
        if res.rows is not None:
            parts.append((res.rows, res.ids))
        frags.add(frag.order, frag.file, res.ids, res.lines)
    keep = frags.duplicates(errors)
    ids = pa.chunked_array(frags.ids, type=pa.string())
    del frags
    release_freed()
    errors.sort(key=lambda e: (e[0], e[1]))
    if errors and not skip_invalid:
        raise errors[0][2]
    read.skipped = [e for _, _, e in errors]
    read.summary = summary
    if forced is not None:
        for file, ok in found.items():
            if records[file] and not ok:
                raise format_not_found_error(file, forced, read)
    rows = join_rows(parts, keep, strings=strings)
    return Reduction(rows, read, ids=ids if keep.all() else ids.filter(pa.array(keep)))


def _key(line: int | None) -> float:
    return -1.0 if line is None else float(line)


class _Sightings:
    """The valid traces of every fragment in input order (ids as Arrow strings, lines as integers)."""

    def __init__(self) -> None:
        self.ids: list[pa.Array] = []
        self.lines: list[np.ndarray] = []
        self.frags: list[tuple[int, str]] = []

    def add(self, order: int, file: str, ids: pa.Array, lines: np.ndarray) -> None:
        self.ids.append(ids)
        self.lines.append(lines)
        self.frags.append((order, file))

    def duplicates(self, errors: list) -> np.ndarray:
        """Mark every trace id seen before (in input order) as a duplicate error; the mask of the first sightings."""
        ids = pa.chunked_array(self.ids, type=pa.string())
        first_of = _first_sightings(ids)
        if first_of is None:
            return np.ones(len(ids), dtype=bool)
        keep = first_of == np.arange(len(ids))
        starts = np.cumsum([0, *(len(x) for x in self.lines)])
        lines = np.concatenate(self.lines)
        for p in np.flatnonzero(~keep).tolist():
            f = int(first_of[p])
            (order, file), (_, file_f) = (self.frags[_fragment_of(starts, q)] for q in (p, f))
            line = None if lines[p] < 0 else int(lines[p])
            first_line = None if lines[f] < 0 else int(lines[f])
            err = duplicate_id_error(
                ids[p].as_py(), file=file, line=line, first_line=first_line, across_files=file != file_f
            )
            errors.append((order, _key(line), err))
        return keep


#: Sorted ids compared this many at a time (a few MB of strings).
_BLOCK = 1 << 17


def _first_sightings(ids: pa.ChunkedArray) -> np.ndarray | None:
    """For each id, the position of its first occurrence; None when the ids are unique.

    The ids are sorted (as positions) and neighbours compared: no hash table of millions of
    strings (Arrow's takes some 130 bytes an id).
    """
    n = len(ids)
    if n < 2:
        return None
    order = pc.sort_indices(ids).to_numpy()
    same = np.zeros(n, dtype=bool)  # same[i]: the i-th smallest id equals the one before it
    for a in range(1, n, _BLOCK):
        run = ids.take(order[a - 1 : a + _BLOCK])
        same[a : a + _BLOCK] = pc.equal(run[1:], run[:-1]).to_numpy(zero_copy_only=False)
    if not same.any():
        return None
    group = np.cumsum(~same) - 1
    first = np.minimum.reduceat(order, np.flatnonzero(~same))  # the earliest position of each distinct id
    first_of = np.empty(n, dtype=np.int64)
    first_of[order] = first[group]
    return first_of


def _fragment_of(starts: np.ndarray, position: int) -> int:
    return int(np.searchsorted(starts, position, side="right") - 1)


def _added(a: ImportSummary, b: ImportSummary) -> ImportSummary:
    """The counts of ``a`` and ``b`` together."""
    return ImportSummary(**{f.name: getattr(a, f.name) + getattr(b, f.name) for f in dataclasses.fields(a)})
