"""Outcomes beside efficiency, who decided correctness, answer-judge panels and evidence-set metrics."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import pandas as pd

from .._errors import UndefinedMetricWarning
from ..answers import evidence_set_table
from ..metrics import efficiency_table, evidence_set_summary
from ._result import OutcomeAnalysis


def correctness_sources(traces: pd.DataFrame) -> pd.DataFrame:
    """Per agent: how many traces' correctness each source decided (``unknown`` = nobody)."""
    src = traces["correct_source"].where(traces["correct"].notna(), "unknown").fillna("unknown")
    tab = pd.crosstab(traces["agent"], src).reset_index()
    tab.columns.name = None
    return tab


def panel_table(trace_dicts: Sequence[dict]) -> pd.DataFrame | None:
    """Per agent, over traces decided by an answer-judge panel or judge: decided, unscored, compared,
    disagreements, disagreement rate, tiebreaker asked, and each judge's share of "correct" votes."""
    rows: dict = {}
    for t in trace_dicts:
        c = t.get("correct") or {}
        d = c.get("detail") or {}
        if c.get("source") not in ("panel", "judge", "em") or "votes" not in d:
            continue
        r = rows.setdefault(
            t.get("agent"),
            {
                "agent": t.get("agent"),
                "answers": 0,
                "decided": 0,
                "unscored": 0,
                "compared": 0,
                "disagreements": 0,
                "tiebreaks": 0,
                "_yes": {},
            },
        )
        r["answers"] += 1
        r["decided"] += c.get("value") is not None
        r["unscored"] += c.get("value") is None
        if "disagreement" in d:
            r["compared"] += 1
            r["disagreements"] += bool(d["disagreement"])
        r["tiebreaks"] += bool(d.get("tiebreak_asked"))
        for v in d["votes"]:
            if v.get("value") is not None:
                yes = r["_yes"].setdefault(v["judge"], [0, 0])
                yes[0] += bool(v["value"])
                yes[1] += 1
    if not rows:
        return None
    out = []
    for r in rows.values():
        yes = r.pop("_yes")
        r["disagreement_rate"] = r["disagreements"] / r["compared"] if r["compared"] else math.nan
        r.update({f"yes share {j}": a / n for j, (a, n) in sorted(yes.items())})
        out.append(r)
    return pd.DataFrame(out)


def _evidence_table(trace_dicts: Sequence[dict]) -> pd.DataFrame | None:
    table = evidence_set_table(trace_dicts)
    if table.empty:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        s = evidence_set_summary(table, by=("agent",))
    cols = [
        "agent",
        "questions",
        "ACC",
        *(c for c in s.columns if c.startswith("IA@")),
        "EEU",
        "IC",
        "interference_rate",
        "pending_acc",
        "pending_ia",
        "pending_ic",
    ]
    return s[cols]


def analyze_outcome(steps: pd.DataFrame, traces: pd.DataFrame, trace_dicts: Sequence[dict]) -> OutcomeAnalysis | None:
    """Efficiency beside outcomes per agent (accuracy, EM, F1, tool calls, searches before the answer,
    duplicate-query and duplicate-visit rates, Pass@1 and Pass@k); None when there are no traces."""
    if traces is None or len(traces) == 0:
        return None
    eff = efficiency_table(steps, traces)
    runs = int(eff["runs_max"].max()) if "runs_max" in eff and eff["runs_max"].notna().any() else 1
    return OutcomeAnalysis(
        efficiency=eff,
        correctness_sources=correctness_sources(traces),
        panel=panel_table(trace_dicts),
        evidence_set=_evidence_table(trace_dicts),
        max_runs=runs,
    )
