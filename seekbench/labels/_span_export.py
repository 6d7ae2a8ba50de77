"""Step labels out to span-based tools: Phoenix span annotations and Langfuse scores.

Phoenix (one JSON object per line, the body of its span-annotation API)::

    {"span_id", "name": <field>, "annotator_kind": "HUMAN" | "LLM" | "CODE",
     "result": {"label": <value>, "score": <1.0 / 0.0 for booleans, else null>, "explanation"},
     "identifier": <rater>, "metadata": {"rater", "judge", "model", "prompt_sha256", "seekbench": {...}}}

Langfuse (one JSON object per line, the body of its score API)::

    {"traceId": <OTel trace id>, "observationId": <span id>, "name": <field>,
     "value": <value>, "dataType": "CATEGORICAL" (or "BOOLEAN" with 1 / 0), "comment", "metadata"}

``metadata.seekbench`` holds the trace id, step, rater and full provenance, so importing the file
back (:mod:`._span_import`) gives the same labels. Unscored labels (value null) are not exported:
neither tool holds "no label"; they are counted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .._errors import UserInputError
from ..traces import write_jsonl
from ._annotation_set import AnnotationSet
from ._span_labels import ANNOTATOR_KIND, SPAN_FORMATS, SpanIndex, check_tool


@dataclass
class SpanExport:
    """Records written for a tool, and what could not be."""

    records: list[dict]
    unscored: int = 0
    skipped: list[UserInputError] | None = None


def _explanation(prov: dict) -> str | None:
    for key in ("explanation", "rationale", "reason", "comment"):
        if isinstance(prov.get(key), str):
            return prov[key]
    return None


def span_label_records(
    labels: AnnotationSet, index: SpanIndex, *, to: str, skip_invalid: bool = False, file: str | None = None
) -> SpanExport:
    """The Phoenix annotations or Langfuse scores of ``labels``, keyed by the span of each step.

    Parameters
    ----------
    labels : AnnotationSet
    index : SpanIndex
        From :func:`span_index` over the traces the labels are for.
    to : {"phoenix", "langfuse"}
    skip_invalid : bool, default False
        Leave out labels whose step has no span (counted in ``skipped``) instead of stopping.

    Returns
    -------
    SpanExport
    """
    check_tool(to)
    out, skipped, unscored = [], [], 0
    for rec in labels.to_records():
        if rec["value"] is None:
            unscored += 1
            continue
        key = (rec["trace_id"], rec["step"])
        if key not in index.step_span:
            fmt = index.formats.get(rec["trace_id"])
            why = (
                "its trace is not in the trace files"
                if fmt is None
                else f"its trace was imported from {fmt}, not from spans"
                if fmt not in SPAN_FORMATS
                else "the step has no span id"
            )
            err = UserInputError(
                f"label {rec['field']} of step {rec['step']} has no span: {why}", file=file, trace_id=rec["trace_id"]
            )
            if not skip_invalid:
                raise err
            skipped.append(err)
            continue
        otel_trace, span = index.step_span[key]
        prov = rec["provenance"] or {}
        meta = {
            "rater": rec["rater"],
            "judge": prov.get("judge"),
            "model": prov.get("model"),
            "prompt_sha256": prov.get("prompt_sha256"),
            "seekbench": {
                "trace_id": rec["trace_id"],
                "step": rec["step"],
                "field": rec["field"],
                "rater": rec["rater"],
                "provenance": prov,
            },
        }
        value = rec["value"]
        boolean = isinstance(value, bool)
        if to == "phoenix":
            out.append(
                {
                    "span_id": span,
                    "name": rec["field"],
                    "annotator_kind": ANNOTATOR_KIND.get(prov.get("kind") or "", "HUMAN"),
                    "result": {
                        "label": str(value).lower() if boolean else value,
                        "score": float(value) if boolean else None,
                        "explanation": _explanation(prov),
                    },
                    "identifier": rec["rater"],
                    "metadata": meta,
                }
            )
        else:
            out.append(
                {
                    "traceId": otel_trace,
                    "observationId": span,
                    "name": rec["field"],
                    "value": int(value) if boolean else value,
                    "dataType": "BOOLEAN" if boolean else "CATEGORICAL",
                    "comment": _explanation(prov),
                    "metadata": meta,
                }
            )
    return SpanExport(out, unscored=unscored, skipped=skipped)


def write_span_labels(path: str | os.PathLike, export: SpanExport) -> int:
    """Write the records as JSONL atomically; return how many."""
    return write_jsonl(path, export.records)
