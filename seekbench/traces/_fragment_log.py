"""The log of one fragment's read, and valid trace dicts turned into chunks of tidy tables.

Shared by the readers of every fragment kind (:mod:`._chunks` for JSONL and importers,
:mod:`.importers._parquet_fragments` for seekbench Parquet): validation record by record with
the sequential reader's errors, duplicate ids within the fragment, and tabulation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._dict_columns import DictColumns
from ._fragments import Fragment
from ._tables import _Columns
from ._validate import validate_trace
from .importers._summary import ImportSummary

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
        log.found = (
            log.found
            or fragment.format != "search_r1"
            or any(st["kind"] in ("search", "search_result", "answer") for st in obj["steps"])
        )
        chunk.add(obj)
        if len(chunk) == chunk_traces:
            yield _tables(chunk, log.summary)
    if len(chunk):
        yield _tables(chunk, log.summary)


def tabulate(chunk: list[dict]) -> Tables:
    """The tables of a list of valid canonical traces (their inline labels kept)."""
    cols = _Columns(use_inline=True)
    cols.add(chunk)
    return cols.frames()


def _tables(gathered: DictColumns, summary: ImportSummary | None) -> Tables:
    """The tables of the traces in ``gathered`` (which starts afresh), counted in ``summary``."""
    if summary is not None:
        _count(summary, gathered)
    cols = _Columns(use_inline=True)
    cols.add_dicts(gathered)
    return cols.frames()


def _count(summary: ImportSummary, gathered: DictColumns) -> None:
    """:meth:`ImportSummary.add` of each gathered trace, from the gathered step columns (walking the
    step dicts again cost as much as gathering them)."""
    traces, kinds = gathered.traces, gathered.steps["kind"]
    summary.traces += len(traces)
    summary.formats.update((tr.get("source") or {}).get("format") or "?" for tr in traces)
    summary.steps.update(kinds)  # keys in order of first appearance, as counting step by step
    is_call = np.fromiter(kinds, dtype=object, count=len(kinds)) == "search"
    calls = np.bincount(np.repeat(np.arange(len(traces)), gathered.counts)[is_call], minlength=len(traces))
    summary.tool_calls += int(is_call.sum())
    if "other" in kinds:
        summary.action_calls += sum(
            k == "other" and t is not None for k, t in zip(kinds, gathered.steps["tool"], strict=True)
        )
    summary.documents += sum(gathered.steps["n_documents"])
    summary.empty_question += sum(not (tr.get("question") or "").strip() for tr in traces)
    summary.no_answer += sum(tr.get("final_answer") is None for tr in traces)
    summary.no_tool_call += int((calls == 0).sum())
