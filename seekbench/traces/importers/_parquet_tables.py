"""The step and trace tables straight from Parquet columns: no trace dicts, a row group at a time.

``read_tables`` reads only the columns the tables need (never step or document
text), checks with vectorised tests what ``validate_trace`` would check of the
traces those rows decode to, and feeds the column builder of ``build_tables``, so
the tables equal ``build_tables(read_traces(path).traces)``. When a check fails, or
a file is not laid out as seekbench writes it (column types, trace order), it
returns None and the caller takes the dict path, which words any error exactly as
for JSONL.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..._limits import ReadLimits
from .._ontology import LABEL_FIELDS, LABEL_VALUES, STEP_KINDS
from ._parquet import open_file
from ._parquet_bounded import RowGroups
from ._parquet_layout import SCHEMA, STEP_KEYS, TRACE_KEYS, column
from ._summary import ImportSummary

#: Columns read as dictionaries: few distinct values, so the Python strings are shared.
_DICTIONARY = [
    "trace_id",
    "agent",
    "dataset",
    "question_id",
    "kind",
    "tool",
    *LABEL_FIELDS,
    "correct_source",
    "source_ref_format",
    "source_format",
    "env_belief",
    "inline_labels_kind",
    "schema_version",
]
_STEP_READ = [
    "trace_id",
    "pos",
    "step",
    "kind",
    "query",
    "url",
    "tool",
    *LABEL_FIELDS,
    "depends_on",
    "source_ref_format",
    "source_ref_line",
    "passage_ids",
    "completeness",
    "self_estimate",
    "step_keys_present",
]
_TRACE_READ = [
    "agent",
    "dataset",
    "question_id",
    "schema_version",
    "question",
    "gold_answers",
    "final_answer",
    "correct_value",
    "correct_source",
    "correct_detail",
    "source_format",
    "source_line",
    "env_document_id",
    "env_n_goal_passages",
    "env_belief",
    "env_max_steps",
    "env_theta",
    "env_embedder",
    "env_final_completeness",
    "env_seed",
    "metadata",
    "inline_labels_rater",
    "inline_labels_kind",
    "trace_keys_present",
]
_ENUMS = {
    "correct.source": ("em", "judge", "panel", "human", "source_data"),
    "env.belief": ("trajectory", "deduplicated", "oracle"),
    "inline_labels.kind": ("human", "judge", "rule"),
}


class _Invalid(Exception):
    """Something ``validate_trace`` would reject, or a layout the fast path does not handle."""


def _check(ok) -> None:
    if not bool(np.all(ok)):
        raise _Invalid


def _np(arr) -> np.ndarray:
    """A boolean or numeric Arrow result as numpy."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.to_numpy(zero_copy_only=False)


def _objects(arr) -> np.ndarray:
    """An Arrow column as an object array (None for null); dictionary columns share their strings."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        values = np.array(arr.dictionary.to_pylist() + [None], dtype=object)
        return values[_np(arr.indices.fill_null(len(arr.dictionary))).astype(np.int64)]
    out = np.empty(len(arr), dtype=object)
    out[:] = arr.to_pylist() if pa.types.is_list(arr.type) else arr.to_numpy(zero_copy_only=False)
    return out


def _ints(arr, fill: int = -1) -> np.ndarray:
    return _np(pc.fill_null(arr, fill)).astype(np.int64)


def _bit(bits: np.ndarray, keys: tuple[str, ...], key: str) -> np.ndarray:
    return (bits >> keys.index(key)) & 1 == 1


def _masked(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """``values`` where the key is present, None where it is absent."""
    out = values.copy()
    out[~present] = None
    return out


def _present(bits: np.ndarray, keys, key: str, arr, *, nullable: bool = False) -> np.ndarray:
    """Rows where ``key`` is present (its parent object too); a present non-nullable key holds a value."""
    present = _bit(bits, keys, key)
    if "." in key:
        present &= _bit(bits, keys, key.split(".")[0])
    if not nullable:
        _check(~present | ~_np(pc.is_null(arr)))
    return present


def _range(arr, present: np.ndarray, lo: float | None = None, hi: float | None = None) -> None:
    """jsonschema's minimum/maximum: a number outside [lo, hi] (NaN passes, as in jsonschema)."""
    v = _np(pc.fill_null(pc.cast(arr, pa.float64()), np.nan))
    with np.errstate(invalid="ignore"):
        bad = (v < lo if lo is not None else False) | (v > hi if hi is not None else False)
    _check(~(present & bad))


def _no_null_items(arr, present: np.ndarray) -> None:
    items = pc.list_flatten(arr.filter(pa.array(present)))
    _check(pc.sum(pc.is_null(items)).as_py() in (0, None))


def _json_objects(arr, present: np.ndarray) -> None:
    for text in _objects(arr)[present]:
        try:
            _check(isinstance(json.loads(text), dict))
        except ValueError as e:
            raise _Invalid from e


def _check_traces(t: pa.Table, bits: np.ndarray) -> np.ndarray:
    """The schema's constraints on the trace fields (one row per trace); returns "correct is an object"."""
    _check(_np(pc.equal(t["schema_version"], "1.0").fill_null(False)))
    for name in ("trace_id", "agent"):
        _check(_np(pc.greater_equal(pc.utf8_length(pc.cast(t[name], pa.string())), 1).fill_null(False)))
    _check(~_np(pc.is_null(t["question"])))
    _no_null_items(t["gold_answers"], _present(bits, TRACE_KEYS, "gold_answers", t["gold_answers"]))
    correct = _bit(bits, TRACE_KEYS, "correct")
    value, source, detail = (_bit(bits, TRACE_KEYS, f"correct.{k}") for k in ("value", "source", "detail"))
    is_object = correct & (value | source | detail)
    _check(~is_object | (value & source))  # value and source are required
    for key, allowed in _ENUMS.items():
        col = pc.cast(t[column(key)], pa.string())
        present = _present(bits, TRACE_KEYS, key, col) & (is_object if key.startswith("correct") else True)
        _check(~present | _np(pc.is_in(col, pa.array(allowed)).fill_null(False)))
    _json_objects(t["correct_detail"], _present(bits, TRACE_KEYS, "correct.detail", t["correct_detail"]) & is_object)
    _json_objects(t["metadata"], _present(bits, TRACE_KEYS, "metadata", t["metadata"]))
    _present(bits, TRACE_KEYS, "source.format", t["source_format"])
    _range(t["source_line"], _present(bits, TRACE_KEYS, "source.line", None, nullable=True), lo=1)
    for key in (
        "env.document_id",
        "env.n_goal_passages",
        "env.max_steps",
        "env.theta",
        "env.embedder",
        "env.final_completeness",
        "env.seed",
    ):
        _present(bits, TRACE_KEYS, key, t[column(key)])
    for key, lo, hi in (("env.n_goal_passages", 1, None), ("env.max_steps", 1, None), ("env.final_completeness", 0, 1)):
        _range(t[column(key)], _present(bits, TRACE_KEYS, key, None, nullable=True), lo, hi)
    labels = _bit(bits, TRACE_KEYS, "inline_labels")
    rater = _present(bits, TRACE_KEYS, "inline_labels.rater", t["inline_labels_rater"])
    _check(~labels | rater)  # rater is required
    _check(~rater | _np(pc.greater_equal(pc.utf8_length(t["inline_labels_rater"]), 1).fill_null(False)))
    return is_object


def _check_steps(s: pa.Table, bits: np.ndarray, index: np.ndarray, owner: np.ndarray) -> None:
    """The schema's constraints on the step fields, and indices increasing within each trace."""
    _check(~_np(pc.is_null(s["step"])) & (index >= 0))
    _check((owner[1:] != owner[:-1]) | (index[1:] > index[:-1]))
    _check(_np(pc.is_in(pc.cast(s["kind"], pa.string()), pa.array(STEP_KINDS)).fill_null(False)))
    for f in LABEL_FIELDS:
        present = _present(bits, STEP_KEYS, f"labels.{f}", None, nullable=True)
        col = pc.cast(s[f], pa.string())
        _check(~present | _np(pc.is_in(col, pa.array(LABEL_VALUES[f])).fill_null(False)) | _np(pc.is_null(col)))
    _present(bits, STEP_KEYS, "source_ref.format", pc.cast(s["source_ref_format"], pa.string()))
    _range(s["source_ref_line"], _present(bits, STEP_KEYS, "source_ref.line", None, nullable=True), lo=1)
    for key in ("completeness", "self_estimate"):
        _range(s[key], _bit(bits, STEP_KEYS, key), 0, 1)
    _no_null_items(s["passage_ids"], _present(bits, STEP_KEYS, "passage_ids", s["passage_ids"]))
    deps = _present(bits, STEP_KEYS, "depends_on", s["depends_on"])
    _no_null_items(s["depends_on"], deps)
    lists = s["depends_on"].filter(pa.array(deps))
    values = _np(pc.list_flatten(lists)).astype(np.int64)
    if len(values):  # each entry names an earlier step of the same trace
        rows = np.repeat(np.flatnonzero(deps), _np(pc.list_value_length(lists)).astype(np.int64))
        _check(values >= 0)
        target = pd.MultiIndex.from_arrays([owner, index]).get_indexer(pd.MultiIndex.from_arrays([owner[rows], values]))
        _check((target >= 0) & (target < rows))


def _documents(docs, bits: np.ndarray) -> np.ndarray:
    """Documents per step (0 when absent), checking each is an object with rank null or >= 1."""
    present = _present(bits, STEP_KEYS, "documents", docs)
    counts = np.where(present, _np(pc.list_value_length(docs).fill_null(0)), 0)
    items = pc.list_flatten(docs.filter(pa.array(present)))
    _check(pc.sum(pc.is_null(items)).as_py() in (0, None))
    if len(items):
        _range(pc.struct_field(items, [0]), np.ones(len(items), bool), lo=1)
    return counts.astype(np.int64)


class _Reader:
    """Turns the row groups of the files into the builder's columns."""

    def __init__(self) -> None:
        from .._tables import _Columns

        self.cols = _Columns(use_inline=True)
        self.seen: set[str] = set()
        #: Counts of the traces turned into columns, for the import summary line (None: not counted).
        self.summary: ImportSummary | None = None

    def file(self, path: str | os.PathLike, limits: ReadLimits | None = None) -> None:
        pf = open_file(path, limits)
        have = pf.schema_arrow
        if not all(f.name in have.names and have.field(f.name).type.equals(f.type) for f in SCHEMA):
            raise _Invalid
        rank = next(
            p
            for p in (pf.schema.column(i).path for i in range(len(pf.schema)))
            if p.startswith("documents.") and p.endswith(".rank")
        )
        names = [*_STEP_READ, *_TRACE_READ, rank]
        groups = RowGroups(path, pf.metadata, file=str(path), limits=limits, dictionary=_DICTIONARY)
        carry = None
        n_groups = groups.n
        for rg in range(n_groups):
            t = groups.read([rg], names)
            if carry is not None:
                t = pa.concat_tables([carry, t], promote_options="permissive")
            if rg < n_groups - 1 and t.num_rows:  # the last trace may go on in the next row group
                tid = _objects(t["trace_id"])
                cut = int(np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]])[-1])
                t, carry = t.slice(0, cut), t.slice(cut)
            else:
                carry = None
            if t.num_rows:
                self.chunk(t)

    def chunk(self, t: pa.Table) -> None:
        tid = _objects(t["trace_id"])
        n = len(tid)
        starts = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]])
        lengths = np.diff(np.r_[starts, n])
        owner = np.repeat(np.arange(len(starts)), lengths)
        ids = tid[starts]
        _check(pd.notna(ids))
        fresh = set(ids.tolist())
        _check(len(fresh) == len(ids) and not (fresh & self.seen))  # each trace once, in one run of rows
        self.seen |= fresh
        is_step = ~_np(pc.is_null(t["pos"]))
        _check(is_step | (lengths[owner] == 1))  # a step-less trace is one row of null step fields
        pos = _ints(t["pos"])
        _check((owner[1:] != owner[:-1]) | (pos[1:] > pos[:-1]))
        tr = t.select(_TRACE_READ).take(pa.array(starts))
        tr = tr.append_column("trace_id", pa.array(ids.astype(str) if len(ids) else [], pa.string()))
        tbits = _ints(tr["trace_keys_present"], 0)
        is_object = _check_traces(tr, tbits)
        s = t.filter(pa.array(is_step))
        s_owner = owner[is_step]
        sbits = _ints(s["step_keys_present"], 0)
        index = _ints(s["step"])
        _check_steps(s, sbits, index, s_owner)
        n_docs = _documents(s["documents"], sbits)

        def trace_col(key: str, present: np.ndarray | bool = True) -> np.ndarray:
            return _masked(
                _objects(tr[column(key)]),
                _present(bits=tbits, keys=TRACE_KEYS, key=key, arr=None, nullable=True) & present,
            )

        def step_col(key: str) -> np.ndarray:
            return _masked(_objects(s[column(key)]), _present(sbits, STEP_KEYS, key, None, nullable=True))

        tcols = {
            "trace_id": ids,
            "agent": _objects(tr["agent"]),
            "question": _objects(tr["question"]),
            **{k: trace_col(k) for k in ("dataset", "question_id", "gold_answers", "final_answer")},
            "correct_value": trace_col("correct.value", is_object),
            "correct_source": trace_col("correct.source", is_object),
        }
        scols = {
            "index": index.tolist(),
            "kind": _objects(s["kind"]),
            "n_documents": n_docs.tolist(),
            **{k: step_col(k) for k in ("query", "url", "tool")},
            **{f: step_col(f"labels.{f}") for f in LABEL_FIELDS},
        }
        counts = np.bincount(s_owner, minlength=len(starts)).astype(np.int64)
        self.cols.add_columns(tcols, scols, counts)
        if self.summary is not None:
            kinds = scols["kind"]
            self.summary.add_arrays(kinds, scols["tool"], n_docs, counts, tcols["question"])


def read_tables(
    paths: list, formats: dict[str, str], summary: ImportSummary | None = None, *, limits: ReadLimits | None = None
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """``(steps, traces)`` of seekbench Parquet files, or None to take the dict path.

    Parameters
    ----------
    paths : list of path
        Parquet files written by ``seekbench convert --to parquet`` (or the same layout).
    formats : dict
        Filled with ``file -> "parquet"`` (the ``ReadResult.formats`` of the caller).
    summary : ImportSummary, optional
        Counts the traces read (the import summary line), when the read succeeds.
    limits : ReadLimits, optional
        Row groups larger than ``limits.row_group_bytes`` are a user error (:mod:`seekbench._limits`).

    Returns
    -------
    (steps, traces) or None
        None when some trace would not validate, a trace id repeats, or a file's columns
        or row order differ from what seekbench writes.
    """
    reader = _Reader()
    reader.summary = ImportSummary()
    try:
        for path in paths:
            reader.file(path, limits)
            formats[str(path)] = "parquet"
    except (_Invalid, OSError, pa.ArrowException):  # the dict path words the error (or reads what it can)
        return None
    if summary is not None:
        summary.merge(reader.summary)
    return reader.cols.frames()
