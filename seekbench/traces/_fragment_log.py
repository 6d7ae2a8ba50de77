"""The log of one fragment's read, and valid trace dicts turned into chunks of tidy tables.

Shared by the readers of every fragment kind (:mod:`._chunks` for JSONL and importers,
:mod:`.importers._parquet_fragments` for seekbench Parquet): validation record by record with
the sequential reader's errors, duplicate ids within the fragment, and tabulation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pandas as pd

from .._errors import UserInputError
from ._dict_columns import DictColumns
from ._fragments import Fragment
from ._read import duplicate_id_error
from ._tables import _Columns
from ._validate import validate_trace
from .importers._summary import ImportSummary

Tables = tuple[pd.DataFrame, pd.DataFrame]


@dataclass
class FragmentLog:
    """What reading a fragment found besides its tables.

    ``ids``/``lines``: the valid traces in order (those in the chunks); ``errors``: the
    invalid records as ``(line, error)`` in record order; ``summary``: counts for the import
    line (None: not counted).
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
    # Each valid trace's columns are gathered at once, while its dicts are fresh in the cache.
    chunk = DictColumns(use_inline=True)
    for line, obj in records:
        try:
            if isinstance(obj, UserInputError):
                raise obj
            if validate:
                validate_trace(obj, file=file, line=line)
            assert isinstance(obj, dict)  # validate_trace passed, or the importer's validated output
            tid = obj["trace_id"]
            if tid in seen:
                raise duplicate_id_error(tid, file=file, line=line, first_line=seen[tid])
        except UserInputError as e:
            log.errors.append((line, e))
            if not skip_invalid:
                break
            continue
        seen[tid] = line
        log.ids.append(tid)
        log.lines.append(line)
        log.found = (
            log.found
            or fragment.format != "search_r1"
            or any(st["kind"] in ("search", "search_result", "answer") for st in obj["steps"])
        )
        chunk.add(obj)
        del obj  # freed now, while in the cache, its memory reused by the next record's
        if len(chunk) == chunk_traces:
            yield _tables(chunk, log.summary)
    if len(chunk):
        yield _tables(chunk, log.summary)


def _tables(gathered: DictColumns, summary: ImportSummary | None) -> Tables:
    """The tables of the traces in ``gathered`` (which starts afresh), counted in ``summary``."""
    tcols, scols, counts, strings = gathered.take()
    if summary is not None:
        summary.add_columns(
            tcols["source_format"],
            tcols["question"],
            scols["kind"],
            scols["tool"],
            scols["n_documents"],
            counts,
        )
    cols = _Columns(use_inline=True)
    # Every trace here passed the schema (validated here, or by the importer that yielded it).
    cols.add_columns(tcols, scols, counts, strings=strings, schema_valid=True)
    return cols.frames()
