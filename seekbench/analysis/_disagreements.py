"""A few steps per field where a judge and the reference disagree, with the step's text and the judge's
explanation: what a reader checks before trusting (or not) a judge's kappa."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..labels import AnnotationSet
from ._explorer_data import _disagreements, _single_raters

#: Characters of a step's text kept in an example (the explorer shows the whole step).
EXCERPT_CHARS = 300
EXAMPLE_COLUMNS = [
    "rater",
    "field",
    "step_kind",
    "trace_id",
    "agent",
    "step",
    "reference",
    "judge",
    "explanation",
    "text",
]


def _step_text(step: dict) -> str:
    """What the label is about: the reasoning or answer text, the query, or the documents' titles and text."""
    parts = [str(step[k]) for k in ("text", "query") if step.get(k)]
    if not parts and step.get("documents"):
        parts = [" ".join(str(d.get(k) or "") for k in ("title", "text")).strip() for d in step["documents"]]
    text = " | ".join(p for p in parts if p).strip()
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "\u2026"


def disagreement_examples(
    reference: AnnotationSet, raters: Sequence[AnnotationSet], traces: Sequence[dict], *, per_field: int = 3
) -> pd.DataFrame:
    """Up to ``per_field`` steps per (judge, field, step kind) that the judge labels differently from the reference.

    Steps whose judge label carries an explanation come first, then one step per trace before
    a second from the same trace, in trace order (deterministic).

    Parameters
    ----------
    reference : AnnotationSet
        The reference labels (its first rater).
    raters : sequence of AnnotationSet
        Judged labels; a set with several raters counts as one judge each.
    traces : sequence of dict
        The canonical traces (step kind and text, agent).
    per_field : int, default 3

    Returns
    -------
    DataFrame
        ``EXAMPLE_COLUMNS``: ``reference`` and ``judge`` are the two labels, ``explanation`` the
        judge's (None when its label has none), ``text`` the step's text clipped to
        ``EXCERPT_CHARS`` characters.

    Examples
    --------
    >>> from seekbench.data import sample_traces_path
    >>> from seekbench.labels import load_annotations
    >>> from seekbench.traces import read_traces
    >>> traces = read_traces(sample_traces_path()).traces
    >>> ref = AnnotationSet.from_traces(traces)
    >>> judge = load_annotations(sample_traces_path().with_name("sample_second_annotator.jsonl"))
    >>> ex = disagreement_examples(ref, [judge], traces, per_field=2)
    >>> bool((ex["reference"] != ex["judge"]).all()), int(ex.groupby(["field", "step_kind"]).size().max())
    (True, 2)
    """
    judges = _single_raters(raters)
    if not judges:
        return pd.DataFrame(columns=EXAMPLE_COLUMNS)
    by_trace, _ = _disagreements(_single_raters([reference])[0], judges)
    order = {str(t["trace_id"]): i for i, t in enumerate(traces)}
    steps = {(str(t["trace_id"]), int(s["index"])): s for t in traces for s in t.get("steps") or []}
    agents = {str(t["trace_id"]): str(t.get("agent")) for t in traces}
    rows = []
    for tid, items in by_trace.items():
        for d in items:
            st = steps.get((tid, d["step"]), {})
            rows.append(
                {
                    "rater": d["rater"],
                    "field": d["field"],
                    "step_kind": st.get("kind", "unknown"),
                    "trace_id": tid,
                    "agent": agents.get(tid),
                    "step": d["step"],
                    "reference": d["reference"],
                    "judge": d["judge"],
                    "explanation": d["explanation"],
                    "text": _step_text(st),
                    "_order": order.get(tid, len(order)),
                }
            )
    if not rows:
        return pd.DataFrame(columns=EXAMPLE_COLUMNS)
    df = pd.DataFrame(rows)
    df["_plain"] = df["explanation"].isna()
    keys = ["rater", "field", "step_kind"]
    df = df.sort_values([*keys, "_plain", "_order", "step"], kind="stable")
    df["_nth_in_trace"] = df.groupby([*keys, "trace_id"]).cumcount()
    df = df.sort_values([*keys, "_plain", "_nth_in_trace", "_order", "step"], kind="stable")
    df = df.groupby(keys, sort=False).head(per_field)
    return df[EXAMPLE_COLUMNS].reset_index(drop=True)
