"""The Parquet layout of canonical traces: one flat table, and the exact dict <-> row mapping.

A seekbench Parquet file is seekbench's step table, one row per step in trace order,
with the trace's own fields beside it:

- the step-table columns (``STEP_COLUMNS``: ``trace_id, agent, dataset, question_id,
  step, pos, kind, turn, query, query_norm, visit_id, n_documents`` and the five label
  columns ``reasoning_type, grounding, search_type, clarity, sufficiency``);
- the rest of the step: ``text, tool, url, original_kind, depends_on``
  (``list<int64>``), ``documents`` (``list<struct<id, title, text, url, score, rank,
  keys_present>>``), ``source_ref_format, source_ref_file, source_ref_line,
  source_ref_record_id, source_ref_path, passage_ids, completeness, self_estimate``;
- the rest of the trace, repeated on each of its rows: ``schema_version, question,
  gold_answers`` (``list<string>``), ``final_answer, correct_value, correct_source,
  correct_detail, source_*, env_*, metadata, inline_labels_rater,
  inline_labels_kind, n_steps``. Nested objects are flattened with their name as a
  prefix; the free-form ``metadata`` and ``correct.detail`` are JSON text.

A trace without steps is one row whose step columns (``pos``, ``kind``, ...) are null.
Parquet's dictionary and run-length encodings store the repeated trace fields once
per run, so the file is about as small as a two-table layout, and DuckDB or Spark read
it as the step table unchanged (``SELECT agent, kind, count(*) FROM 'c.parquet' ...``).

JSON tells an absent key from a null one and Parquet does not, so ``trace_keys_present``
and ``step_keys_present`` (and each document's ``keys_present``) hold a bit per
optional key of :data:`TRACE_KEYS` / :data:`STEP_KEYS` / :data:`DOC_KEYS`, set when the
key was present. With them canonical -> Parquet -> canonical gives back equal dicts
(a JSON number of a ``number`` field comes back as a float: 5 as 5.0, which is equal).

``turn``, ``query_norm``, ``visit_id`` and ``n_documents`` are derived, for SQL users;
seekbench recomputes them when it reads a file, and takes a trace's fields from its
first row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from .._ontology import LABEL_FIELDS
from .._tables import STEP_COLUMNS

#: Optional keys of a trace, in bit order (``a.b`` is key ``b`` of object ``a``).
TRACE_KEYS = (
    "dataset",
    "question_id",
    "gold_answers",
    "final_answer",
    "correct",
    "correct.value",
    "correct.source",
    "correct.detail",
    "source",
    "source.format",
    "source.file",
    "source.line",
    "source.record_id",
    "source.path",
    "env",
    "env.document_id",
    "env.n_goal_passages",
    "env.belief",
    "env.max_steps",
    "env.theta",
    "env.embedder",
    "env.final_completeness",
    "env.seed",
    "metadata",
    "inline_labels",
    "inline_labels.rater",
    "inline_labels.kind",
)
#: Optional keys of a step, in bit order.
STEP_KEYS = (
    "text",
    "tool",
    "query",
    "url",
    "documents",
    "depends_on",
    "source_ref",
    "source_ref.format",
    "source_ref.file",
    "source_ref.line",
    "source_ref.record_id",
    "source_ref.path",
    "original_kind",
    "labels",
    *(f"labels.{f}" for f in LABEL_FIELDS),
    "passage_ids",
    "completeness",
    "self_estimate",
)
#: Keys of a document, in bit order (all optional).
DOC_KEYS = ("id", "title", "text", "url", "score", "rank")
#: Objects stored as JSON text.
JSON_KEYS = ("metadata", "correct.detail")

_TYPES = {
    "dataset": pa.string(),
    "question_id": pa.string(),
    "gold_answers": pa.list_(pa.string()),
    "final_answer": pa.string(),
    "correct.value": pa.bool_(),
    "correct.source": pa.string(),
    "correct.detail": pa.string(),
    "source.format": pa.string(),
    "source.file": pa.string(),
    "source.line": pa.int64(),
    "source.record_id": pa.string(),
    "source.path": pa.string(),
    "env.document_id": pa.string(),
    "env.n_goal_passages": pa.int64(),
    "env.belief": pa.string(),
    "env.max_steps": pa.int64(),
    "env.theta": pa.float64(),
    "env.embedder": pa.string(),
    "env.final_completeness": pa.float64(),
    "env.seed": pa.int64(),
    "metadata": pa.string(),
    "inline_labels.rater": pa.string(),
    "inline_labels.kind": pa.string(),
    "text": pa.string(),
    "tool": pa.string(),
    "query": pa.string(),
    "url": pa.string(),
    "depends_on": pa.list_(pa.int64()),
    "source_ref.format": pa.string(),
    "source_ref.file": pa.string(),
    "source_ref.line": pa.int64(),
    "source_ref.record_id": pa.string(),
    "source_ref.path": pa.string(),
    "original_kind": pa.string(),
    "passage_ids": pa.list_(pa.string()),
    "completeness": pa.float64(),
    "self_estimate": pa.float64(),
    **{f"labels.{f}": pa.string() for f in LABEL_FIELDS},
}
DOC_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
        ("url", pa.string()),
        ("score", pa.float64()),
        ("rank", pa.int64()),
        ("keys_present", pa.int64()),
    ]
)
_TYPES["documents"] = pa.list_(DOC_TYPE)


def column(key: str) -> str:
    """Column name of a key path: ``source.file`` -> ``source_file``; labels keep their own name."""
    return key.split(".", 1)[1] if key.startswith("labels.") else key.replace(".", "_")


def _key(col: str, keys: tuple[str, ...]) -> str:
    """The key path stored in column ``col``."""
    return next(k for k in keys if column(k) == col and k in _TYPES)


#: Value keys (not objects) of each table, with their columns.
_TRACE_VALUES = [k for k in TRACE_KEYS if k in _TYPES]
_STEP_VALUES = [k for k in STEP_KEYS if k in _TYPES and not k.startswith("labels.")]

_TABLE_TYPES = {
    "trace_id": pa.string(),
    "agent": pa.string(),
    "dataset": pa.string(),
    "question_id": pa.string(),
    "step": pa.int64(),
    "pos": pa.int64(),
    "kind": pa.string(),
    "turn": pa.int64(),
    "query": pa.string(),
    "query_norm": pa.string(),
    "visit_id": pa.string(),
    "n_documents": pa.int64(),
    **{f: pa.string() for f in LABEL_FIELDS},
}
#: Columns holding a trace's own fields (the same on every row of the trace).
TRACE_ONLY = (
    ["schema_version", "question"]
    + [column(k) for k in _TRACE_VALUES if column(k) not in STEP_COLUMNS]
    + ["n_steps", "trace_keys_present"]
)
#: Columns holding a step's fields beyond the step table.
STEP_ONLY = [column(k) for k in _STEP_VALUES if column(k) not in STEP_COLUMNS] + ["step_keys_present"]
SCHEMA = pa.schema(
    [(c, _TABLE_TYPES[c]) for c in STEP_COLUMNS]
    + [(c, pa.int64() if c == "step_keys_present" else _TYPES[_key(c, STEP_KEYS)]) for c in STEP_ONLY]
    + [
        (
            c,
            pa.int64()
            if c in ("n_steps", "trace_keys_present")
            else pa.string()
            if c in ("schema_version", "question")
            else _TYPES[_key(c, TRACE_KEYS)],
        )
        for c in TRACE_ONLY
    ],
    metadata={
        b"seekbench.layout": b"steps+traces/1",
        b"seekbench.trace_keys": json.dumps(TRACE_KEYS).encode(),
        b"seekbench.step_keys": json.dumps(STEP_KEYS).encode(),
        b"seekbench.document_keys": json.dumps(DOC_KEYS).encode(),
    },
)

_MISSING = object()


def _int(value: object) -> object:
    """A JSON integer for an int64 column (jsonschema's ``integer`` also admits 1.0)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


class _Plan:
    """How the optional keys of one object level become columns and presence bits (built once)."""

    def __init__(self, keys: tuple[str, ...], values: list[str], bits_column: str) -> None:
        self.bits_column = bits_column
        self.top: dict[str, int] = {}
        self.sub: dict[str, dict[str, int]] = {}
        for i, key in enumerate(keys):
            head, _, rest = key.partition(".")
            if rest:
                self.sub.setdefault(head, {})[rest] = 1 << i
            else:
                self.top[head] = 1 << i
        convert = {"documents": lambda v: [_encode_doc(d) for d in v], "depends_on": lambda v: [_int(x) for x in v]}
        self.values = []
        for key in values:
            head, _, rest = key.partition(".")
            conv: Callable[[Any], object] | None
            if key in JSON_KEYS:
                conv = _dumps
            elif _TYPES[key] == pa.int64():
                conv = _int
            else:
                conv = convert.get(key)
            self.values.append((column(key), head, rest, conv))

    def encode(self, obj: dict, row: dict) -> dict:
        """Fill ``row`` (column -> value) from ``obj`` and set its presence bits."""
        bits = 0
        top, sub = self.top, self.sub
        for k, v in obj.items():
            bits |= top.get(k, 0)
            nested = sub.get(k)
            if nested is not None and isinstance(v, dict):
                for sk in v:
                    bits |= nested.get(sk, 0)
        for col, head, rest, conv in self.values:
            value = obj.get(head, _MISSING)
            if rest and value is not _MISSING:
                value = value.get(rest, _MISSING) if isinstance(value, dict) else _MISSING
            if value is _MISSING:
                value = None
            elif conv is not None:
                value = conv(value)
            row[col] = value
        row[self.bits_column] = bits
        return row


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _encode_doc(doc: dict) -> dict:
    out = {k: doc.get(k) for k in DOC_KEYS}
    out["rank"] = _int(out["rank"])
    out["keys_present"] = sum(_DOC_BITS.get(k, 0) for k in doc)
    return out


_DOC_BITS = {k: 1 << i for i, k in enumerate(DOC_KEYS)}
_TRACE_PLAN = _Plan(TRACE_KEYS, [k for k in _TRACE_VALUES if column(k) not in STEP_COLUMNS], "trace_keys_present")
_STEP_PLAN = _Plan(STEP_KEYS, [k for k in _STEP_VALUES if column(k) not in STEP_COLUMNS], "step_keys_present")


def trace_row(trace: dict) -> dict:
    """The trace-only columns of a (valid) canonical trace."""
    row = {"schema_version": trace["schema_version"], "question": trace["question"], "n_steps": len(trace["steps"])}
    return _TRACE_PLAN.encode(trace, row)


def step_row(step: dict) -> dict:
    """The step-only columns of a step (the step-table columns come from ``build_tables``)."""
    return _STEP_PLAN.encode(step, {})


def _decode(
    row: dict, keys: tuple[str, ...], bits: int | None, out: dict, nullable_objects: tuple[str, ...] = ()
) -> dict:
    """Set the present keys of ``row`` in ``out`` (objects rebuilt from their present sub-keys)."""
    bits = bits or 0
    for i, key in enumerate(keys):
        if not bits >> i & 1:
            continue
        head, _, rest = key.partition(".")
        if not rest:
            if key in _TYPES:
                value = row[column(key)]
                if key in JSON_KEYS and value is not None:
                    value = json.loads(value)
                elif key == "documents" and value is not None:
                    value = [_decode_doc(d) for d in value]
                out[key] = value
            else:
                out[key] = {}
        elif isinstance(out.get(head), dict):
            value = row[column(key)]
            out[head][rest] = json.loads(value) if key in JSON_KEYS and value is not None else value
    for key in nullable_objects:  # ``correct: null`` is present with no key of its own
        if out.get(key) == {}:
            out[key] = None
    return out


def _decode_doc(doc: dict | None) -> dict | None:
    if doc is None:
        return None
    bits = doc["keys_present"] or 0
    return {k: doc[k] for i, k in enumerate(DOC_KEYS) if bits >> i & 1}


def decode_trace(rows: list[dict]) -> dict:
    """The canonical trace of its rows (in order; one row with null ``pos`` for no steps).

    The trace's fields are read from its first row.
    """
    first = rows[0]
    out = {
        "schema_version": first["schema_version"],
        "trace_id": first["trace_id"],
        "agent": first["agent"],
        "question": first["question"],
    }
    _decode(first, TRACE_KEYS, first["trace_keys_present"], out, nullable_objects=("correct",))
    out["steps"] = [decode_step(r) for r in rows if r["pos"] is not None]
    return out


def decode_step(row: dict) -> dict:
    """The canonical step of a row."""
    return _decode(row, STEP_KEYS, row["step_keys_present"], {"index": row["step"], "kind": row["kind"]})
