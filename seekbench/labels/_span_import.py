"""Step labels back from span-based tools: Phoenix span annotations and Langfuse scores.

Read shapes (JSONL, one JSON document -- a list, or ``{"data": [...]}`` as the APIs answer --, or
Parquet from a DataFrame):

- Phoenix span annotations: ``span_id`` (or ``context.span_id``), ``name`` (or
  ``annotation_name``), ``annotator_kind``, ``result: {label, score, explanation}`` (or
  ``result.label`` ... columns, or top-level ``label`` / ``score`` / ``explanation``),
  ``identifier``, ``user_id``, ``metadata``.
- Langfuse scores: ``observationId`` / ``observation_id``, ``traceId`` / ``trace_id``, ``name``,
  ``value`` / ``stringValue`` / ``string_value``, ``dataType`` / ``data_type``, ``source``
  (ANNOTATION, API, EVAL), ``authorUserId`` / ``author_user_id``, ``comment``, ``metadata``.

The annotation name is the label field (aliases allowed, e.g. ``groundedness``); annotations named
otherwise are ignored and counted. The span's step is the one of its steps the field applies to;
labels written by ``seekbench export-labels`` name their step in ``metadata.seekbench``; a
trace-level ``correct`` score (a trace id, no span) goes to the trace's answer step. The rater
is ``metadata.rater``, else the annotating user, else ``<tool>-<kind>``; the provenance kind is
human for HUMAN / ANNOTATION, judge for LLM / EVAL, rule for CODE.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import UserInputError
from ..traces import canonical_field, canonical_value, iter_jsonl
from ..traces.importers import json_value
from ._annotation_set import AnnotationSet, utc_now
from ._span_labels import PROVENANCE_KIND, SpanIndex, check_tool

_LANGFUSE_KIND = {"ANNOTATION": "human", "EVAL": "judge", "API": "human"}


@dataclass
class SpanImport:
    """The annotation set read, and what was left out and why."""

    labels: AnnotationSet
    ignored_names: Counter = field(default_factory=Counter)
    skipped: list[UserInputError] = field(default_factory=list)


def _rows(path: str | os.PathLike) -> list[tuple[int, object]]:
    file = str(path)
    if not Path(path).is_file():
        raise UserInputError("is a directory, expected a file" if Path(path).is_dir() else "file not found", file=file)
    data = Path(path).read_bytes()
    if data[:4] == b"PAR1":
        import pandas as pd

        try:
            df = pd.read_parquet(path)
        except Exception as e:  # pyarrow raises ArrowInvalid / OSError on a damaged file
            raise UserInputError(f"unreadable Parquet file ({str(e).splitlines()[0][:200]})", file=file) from e
        return [
            (i + 1, {k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()})
            for i, r in enumerate(df.to_dict("records"))
        ]
    try:
        text = data.decode("utf-8-sig").lstrip()
    except UnicodeDecodeError as e:
        raise UserInputError(f"invalid UTF-8 at byte {e.start}; re-encode the file as UTF-8", file=file) from e
    if text[:1] in ("[", "{"):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict):  # the APIs' answer {"data": [...]}, or one annotation
            doc = doc["data"] if isinstance(doc.get("data"), list) else [doc]
        if isinstance(doc, list):
            return [(i + 1, r) for i, r in enumerate(doc)]
    rows = list(iter_jsonl(path))
    if not rows:
        raise UserInputError("no annotations: the file is empty", file=file)
    return rows


def _get(row: dict, *keys: str) -> object:
    for key in keys:
        node: object = row
        for part in [key] if key in row else key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            return node
    return None


def _meta(row: dict) -> dict:
    meta = json_value(row.get("metadata"))  # span exports keep structures as JSON text
    return meta if isinstance(meta, dict) else {}


def read_span_labels(
    path: str | os.PathLike, index: SpanIndex, *, source: str, rater: str | None = None, skip_invalid: bool = False
) -> SpanImport:
    """Read Phoenix annotations or Langfuse scores into an annotation set for the indexed traces.

    Parameters
    ----------
    path : str or PathLike
    index : SpanIndex
        From :func:`span_index` over the traces the annotations are on.
    source : {"phoenix", "langfuse"}
    rater : str, optional
        The rater of every label (default: from each annotation, see the module docstring).
    skip_invalid : bool, default False
        Leave out annotations that fit no step or hold a value outside the ontology (counted in
        ``skipped``) instead of stopping at the first.

    Returns
    -------
    SpanImport
    """
    check_tool(source)
    file, now = str(path), utc_now()
    out = SpanImport(AnnotationSet.from_records([]))
    recs = []
    for line, row in _rows(path):
        try:
            if isinstance(row, UserInputError):
                raise row
            if not isinstance(row, dict):
                raise UserInputError("an annotation must be a JSON object", file=file, line=line)
            rec = _convert(row, index, source=source, rater=rater, file=file, line=line, now=now)
        except UserInputError as e:
            if not skip_invalid:
                raise
            out.skipped.append(e)
            continue
        if isinstance(rec, str):
            out.ignored_names[rec] += 1
        else:
            recs.append(rec)
    out.labels = AnnotationSet.from_records(recs, name=os.path.basename(file))
    return out


def _convert(
    row: dict, index: SpanIndex, *, source: str, rater: str | None, file: str, line: int, now: str
) -> dict | str:
    """One label record, or the annotation's name when it is no seekbench label field."""
    name = _get(row, "name", "annotation_name")
    if not isinstance(name, str):
        raise UserInputError("annotation without a name", file=file, line=line, path="$.name")
    fld = canonical_field(name) or ("correct" if name.strip().lower() == "correct" else None)
    if fld is None:
        return name
    meta = _meta(row)
    ours = meta.get("seekbench")
    ours = ours if isinstance(ours, dict) else {}
    if source == "phoenix":
        span = _get(row, "span_id", "context.span_id", "spanId")
        raw = _get(row, "result.label", "label")
        if raw is None and fld == "correct":
            raw = _get(row, "result.score", "score")
        kind = PROVENANCE_KIND.get(str(_get(row, "annotator_kind", "annotatorKind") or "HUMAN").upper(), "human")
        who = _get(row, "user_id", "identifier") or f"phoenix-{kind}"
        explanation = _get(row, "result.explanation", "explanation")
    else:
        span = _get(row, "observationId", "observation_id")
        raw = _get(row, "stringValue", "string_value")
        if raw is None:
            raw = _get(row, "value")
        kind = _LANGFUSE_KIND.get(str(_get(row, "source") or "ANNOTATION").upper(), "human")
        who = _get(row, "authorUserId", "author_user_id") or f"langfuse-{kind}"
        explanation = _get(row, "comment")
    tid_hint = ours.get("trace_id")
    otel_trace = _get(row, "traceId", "trace_id", "context.trace_id")
    if (not isinstance(span, str) or not span) and fld == "correct" and isinstance(otel_trace, str):
        # a trace-level score of the answer; ids are opaque, hex ids written in upper case match too
        known = {otel for otel, _ in index.step_span.values()}
        steps = index.answers_of(otel_trace if otel_trace in known else otel_trace.lower())
        span = "(trace)"
    elif not isinstance(span, str) or not span:
        raise UserInputError(
            "annotation without a span id",
            file=file,
            line=line,
            trace_id=tid_hint,
            path="$.span_id" if source == "phoenix" else "$.observationId",
        )
    else:
        span = span if span in index.span_steps else span.lower()
        steps = index.step_for(span, fld)
    if isinstance(ours.get("step"), int) and (ours.get("trace_id"), ours["step"]) in steps:
        steps = [(ours["trace_id"], ours["step"])]
    if len(steps) != 1:
        why = (
            f"trace {otel_trace} has {len(steps)} answer steps"
            if span == "(trace)"
            else "no step of the traces comes from this span"
            if span not in index.span_steps
            else f"span {span} has no step {fld} applies to"
            if not steps
            else f"span {span} has {len(steps)} steps {fld} applies to; cannot tell which"
        )
        raise UserInputError(f"annotation {name!r} fits no single step: {why}", file=file, line=line, trace_id=tid_hint)
    trace_id, step = steps[0]
    value = _value(fld, raw)
    if value is None:
        raise UserInputError(
            f"label {raw!r} is outside the ontology for {fld}",
            file=file,
            line=line,
            trace_id=trace_id,
            path="$.result.label" if source == "phoenix" else "$.value",
        )
    prov = ours.get("provenance")
    prov = (
        prov
        if isinstance(prov, dict)
        else {
            "kind": kind,
            "time": _get(row, "updated_at", "created_at", "timestamp", "createdAt") or now,
            **({"explanation": explanation} if isinstance(explanation, str) else {}),
        }
    )
    prov = {**prov, "source": os.path.basename(file)}
    if not isinstance(prov.get("time"), (str, type(None))):
        prov["time"] = str(prov["time"])
    return {
        "trace_id": trace_id,
        "step": step,
        "field": fld,
        "value": value,
        "unscored_reason": None,
        "rater": rater or ours.get("rater") or meta.get("rater") or str(who),
        "provenance": prov,
    }


def _value(fld: str, raw: object) -> object:
    if fld == "correct":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, (int, float)) and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false", "correct", "incorrect", "1", "0"):
            return raw.strip().lower() in ("true", "correct", "1")
        return None
    return canonical_value(fld, raw)
