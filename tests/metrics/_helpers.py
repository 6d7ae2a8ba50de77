"""Build canonical traces for metric tests from a compact notation.

One tuple per step:

    ("r", grounding, reasoning_type)   reasoning; both optional (None = unlabeled)
    ("s", query, url)                  search / tool call; both optional
    ("o", clarity, sufficiency)        search_result; both optional
    ("a",)                             answer
    ("x",)                             a step of kind "other"

Labels may be abbreviated: G / N (Grounded / NotGrounded), IS / PF / SA (reasoning
types), C / U (Clear / Unclear), S / I (Sufficient / Insufficient).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from seekbench.traces._tables import build_tables

_ABBREV = {
    "G": "Grounded", "N": "NotGrounded",
    "IS": "InformationSynthesis", "PF": "PlanFormation", "SA": "StateAssessment",
    "C": "Clear", "U": "Unclear", "S": "Sufficient", "I": "Insufficient",
}
_KINDS = {"r": "reasoning", "s": "search", "o": "search_result", "a": "answer", "x": "other"}


def _label(value: str | None) -> str | None:
    return None if value is None else _ABBREV.get(value, value)


def make_trace(spec: Sequence[tuple], *, trace_id: str = "t1", agent: str = "x", question_id: str | None = None,
               correct: bool | None = None, final_answer: str | None = None,
               gold: Sequence[str] = (), dataset: str | None = None) -> dict:
    """A canonical trace dict (schemas/trace.schema.json) from the compact notation."""
    steps = []
    for i, item in enumerate(spec):
        code, *args = item
        args += [None] * (2 - len(args))
        step: dict = {"index": i, "kind": _KINDS[code]}
        if code == "r":
            step["labels"] = {"grounding": _label(args[0]), "reasoning_type": _label(args[1])}
        elif code == "s":
            step["tool"] = "visit" if args[1] else "search"
            step["query"] = args[0] if args[0] is not None else f"query {i}"
            if args[1]:
                step["url"] = args[1]
        elif code == "o":
            step["labels"] = {"clarity": _label(args[0]), "sufficiency": _label(args[1])}
        steps.append(step)
    return {
        "schema_version": "1.0", "trace_id": trace_id, "agent": agent, "dataset": dataset,
        "question_id": question_id if question_id is not None else f"q-{trace_id}", "question": "?",
        "gold_answers": list(gold), "final_answer": final_answer,
        "correct": None if correct is None else {"value": correct, "source": "human"},
        "steps": steps,
    }


def tables(traces: Iterable[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``build_tables`` of the given trace dicts."""
    return build_tables(list(traces))


def subset(steps: pd.DataFrame, traces: pd.DataFrame, **where) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The steps and traces of the traces whose columns equal ``where`` (e.g. ``agent="x"``)."""
    mask = pd.Series(True, index=traces.index)
    for col, val in where.items():
        mask &= traces[col] == val
    tr = traces[mask]
    return steps[steps["trace_id"].isin(tr["trace_id"])], tr
