"""What label exchange with span-based tools shares: which span each step came from, and annotator kinds.

Phoenix and Langfuse attach labels to spans (observations), seekbench to steps. Traces imported
from OpenTelemetry files keep the span of each step in ``source_ref.record_id`` (``format``
``otel``) and the OTel trace id in ``source.record_id``; traces imported from Langfuse keep the
observation id and the Langfuse trace id there the same way (``format`` ``langfuse``); this
module turns that into the two maps an exchange needs: step -> span, and span -> the steps a label field fits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .._errors import UserInputError
from ..traces import FIELDS_BY_KIND

#: Trace formats whose steps carry span ids (Langfuse: observation ids, its trace id in ``source.record_id``).
SPAN_FORMATS = ("otel", "langfuse")
#: seekbench provenance kind <-> Phoenix annotator kind.
ANNOTATOR_KIND = {"human": "HUMAN", "judge": "LLM", "rule": "CODE"}
PROVENANCE_KIND = {v: k for k, v in ANNOTATOR_KIND.items()}
TOOLS = ("phoenix", "langfuse")


@dataclass
class SpanIndex:
    """Steps and spans of some traces.

    Attributes
    ----------
    step_span : dict
        ``(trace_id, step) -> (otel_trace_id, span_id)`` for every step imported from a span.
    span_steps : dict
        ``span_id -> [(trace_id, step, kind)]`` in step order.
    formats : dict
        ``trace_id -> source format`` of every trace given (spans or not).
    """

    step_span: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)
    span_steps: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)

    def step_for(self, span_id: str, field_name: str) -> list[tuple[str, int]]:
        """The steps of ``span_id`` that ``field_name`` applies to (``correct``: the answer step)."""
        kinds = (
            ("answer",)
            if field_name == "correct"
            else tuple(k for k, fields in FIELDS_BY_KIND.items() if field_name in fields)
        )
        return [(t, s) for t, s, k in self.span_steps.get(span_id, []) if k in kinds]

    def answers_of(self, otel_trace_id: str) -> list[tuple[str, int]]:
        """The answer steps of the traces rebuilt from one OTel trace (for trace-level correctness)."""
        spans = {span for (otel, span) in self.step_span.values() if otel == otel_trace_id}
        return [(t, s) for span in sorted(spans) for t, s, k in self.span_steps[span] if k == "answer"]


def span_index(traces: Iterable[dict], *, file: str | None = None) -> SpanIndex:
    """Index the span of every step; a user error when no trace was imported from spans."""
    idx = SpanIndex()
    for tr in traces:
        src = tr.get("source") or {}
        idx.formats[tr["trace_id"]] = src.get("format") or "canonical"
        otel_trace = src.get("record_id") or tr["trace_id"]
        for st in tr["steps"]:
            ref = st.get("source_ref") or {}
            if ref.get("format") in SPAN_FORMATS and ref.get("record_id"):
                idx.step_span[(tr["trace_id"], st["index"])] = (otel_trace, ref["record_id"])
                idx.span_steps.setdefault(ref["record_id"], []).append((tr["trace_id"], st["index"], st["kind"]))
    if not idx.step_span:
        fmts = sorted(set(idx.formats.values()))
        raise UserInputError(
            f"the traces were not imported from spans (format {', '.join(fmts) or 'none'}); "
            "labels go to Phoenix or Langfuse only for traces read from OpenTelemetry files "
            "(OTLP JSON or span tables) or from Langfuse traces",
            file=file,
        )
    return idx


def check_tool(name: str) -> str:
    if name not in TOOLS:
        raise UserInputError(f"unknown tool {name!r}; choose one of: {', '.join(TOOLS)}")
    return name
