"""What each judge cost: money, latency and tokens per trace, from label provenance; unscored counts."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ..labels import AnnotationSet
from ._panel import PANEL_RATER, PanelResult

Usage = Literal["per_call", "per_record"]
_USAGE = ("per_call", "per_record")
_METERS = ("cost_usd", "latency_s", "input_tokens", "output_tokens")
#: Provenance keys that identify one provider call, when the pipeline records one.
_CALL_KEYS = ("usage_key", "call_id", "request_id", "cache_key", "batch_custom_id")

COST_COLUMNS = [
    "rater",
    "kind",
    "n_traces",
    "n_records",
    "n_labeled",
    "n_unscored",
    "n_rule",
    "n_calls",
    "cost_usd",
    "cost_per_trace",
    "latency_s_per_trace",
    "input_tokens_per_trace",
    "output_tokens_per_trace",
    "tokens_per_trace",
    "top_unscored_reason",
]


def _num(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def _call_key(trace_id: str, prov: dict) -> str:
    """The call a label came from: an explicit id, else the trace plus the usage it reports."""
    for k in _CALL_KEYS:
        if prov.get(k):
            return f"{k}={prov[k]}"
    usage = {k: prov.get(k) for k in ("judge", "model", "time", *_METERS)}
    return f"trace={trace_id};" + json.dumps(usage, sort_keys=True, default=str)


def judge_costs(labels: AnnotationSet, *, usage: Usage = "per_call") -> pd.DataFrame:
    """Per rater: cost, latency and tokens per trace from label provenance, and unscored counts.

    A judge labels a trace in one provider call (plus repairs) and every label of that trace
    carries the usage of those calls (``provenance.cost_usd``, ``latency_s``,
    ``input_tokens``, ``output_tokens``, and ``requests``, the number of calls). With
    ``usage="per_call"`` (default) that usage is counted once: labels are grouped by
    ``provenance.usage_key`` (the judge job that paid it: one trace's calls, repairs and windows
    included), else ``call_id`` (or ``request_id``, ``cache_key``, ``batch_custom_id``) when
    present, else by trace and identical usage values; ``n_calls`` adds up ``requests``
    (1 when absent). With
    ``usage="per_record"`` every label's usage is added up (for pipelines that record each
    label's share). Per trace = total / traces the rater has a record for. Rule-derived labels
    (``provenance.kind == "rule"``) cost nothing and are counted in ``n_rule``.

    Parameters
    ----------
    labels : AnnotationSet
        One or more raters.
    usage : {"per_call", "per_record"}

    Returns
    -------
    DataFrame
        One row per rater, columns ``COST_COLUMNS``. Money, latency and token columns are NaN
        when no label of the rater records them (e.g. human or offline raters), never 0.

    Examples
    --------
    >>> prov = {"kind": "judge", "cost_usd": 0.01, "latency_s": 2.0, "input_tokens": 900, "output_tokens": 100}
    >>> recs = [{"trace_id": "t", "step": s, "field": "grounding", "value": "Grounded", "unscored_reason": None,
    ...          "rater": "j", "provenance": prov} for s in (0, 1)]
    >>> row = judge_costs(AnnotationSet.from_records(recs)).iloc[0]  # two labels, one call
    >>> int(row["n_calls"]), float(row["cost_per_trace"]), float(row["tokens_per_trace"])
    (1, 0.01, 1000.0)
    """
    if usage not in _USAGE:
        raise UserInputError(f"usage must be one of: {', '.join(_USAGE)}; got {usage!r}")
    rows = []
    recs = labels.records
    for rater in dict.fromkeys(recs["rater"]):
        r = recs[recs["rater"] == rater]
        provs = [p if isinstance(p, dict) else {} for p in r["provenance"]]
        kinds = [p.get("kind") for p in provs]
        totals = dict.fromkeys(_METERS, 0.0)
        seen_meter = dict.fromkeys(_METERS, False)
        calls: set[str] = set()
        n_calls = 0
        for tid, p, kind in zip(r["trace_id"], provs, kinds, strict=True):
            if kind == "rule" or not any(k in p for k in _METERS):
                continue
            key = _call_key(str(tid), p) if usage == "per_call" else f"record={len(calls)}"
            if key in calls:
                continue
            calls.add(key)
            req = p.get("requests")
            n_calls += int(req) if isinstance(req, int) and not isinstance(req, bool) and req >= 0 else 1
            for k in _METERS:
                v = _num(p.get(k))
                if not math.isnan(v):
                    totals[k] += v
                    seen_meter[k] = True
        n_traces = r["trace_id"].nunique()
        per = {k: (totals[k] / n_traces if seen_meter[k] and n_traces else np.nan) for k in _METERS}
        unscored = r[r["value"].isna()]
        reasons = unscored["unscored_reason"].fillna("unscored").value_counts()
        kind_counts = pd.Series(kinds, dtype=object).value_counts()
        rows.append(
            {
                "rater": rater,
                "kind": "+".join(str(k) for k in kind_counts.index),
                "n_traces": int(n_traces),
                "n_records": len(r),
                "n_labeled": int(r["value"].notna().sum()),
                "n_unscored": len(unscored),
                "n_rule": int(sum(k == "rule" for k in kinds)),
                "n_calls": n_calls,
                "cost_usd": totals["cost_usd"] if seen_meter["cost_usd"] else np.nan,
                "cost_per_trace": per["cost_usd"],
                "latency_s_per_trace": per["latency_s"],
                "input_tokens_per_trace": per["input_tokens"],
                "output_tokens_per_trace": per["output_tokens"],
                "tokens_per_trace": (
                    float(np.nansum([per["input_tokens"], per["output_tokens"]]))
                    if seen_meter["input_tokens"] or seen_meter["output_tokens"]
                    else np.nan
                ),
                "top_unscored_reason": reasons.index[0] if len(reasons) else None,
            }
        )
    return pd.DataFrame(rows, columns=COST_COLUMNS)


def pareto_front(cost: Sequence[float], score: Sequence[float]) -> np.ndarray:
    """Which judges no other judge beats on both cost (lower) and score (higher).

    A judge with known cost and score is on the front unless another has cost <= and
    score >= with one of them strict. Judges with an unknown (NaN) cost or score are never
    on it.

    >>> pareto_front([0.01, 0.02, 0.03, float("nan")], [0.6, 0.5, 0.8, 0.9]).tolist()
    [True, False, True, False]
    """
    c = np.asarray(cost, dtype=float)
    s = np.asarray(score, dtype=float)
    ok = np.isfinite(c) & np.isfinite(s)
    front = ok.copy()
    for i in np.flatnonzero(ok):
        others = ok & (c <= c[i]) & (s >= s[i]) & ((c < c[i]) | (s > s[i]))
        front[i] = not others.any()
    return front


def costs_with_panel(judges: dict[str, AnnotationSet], panel: PanelResult | None, usage: Usage) -> pd.DataFrame:
    """:func:`judge_costs` of the judges, and a row for their panel (its cost is its members' sum)."""
    recs = pd.concat([s.records for s in judges.values()], ignore_index=True) if judges else None
    costs = judge_costs(AnnotationSet(recs), usage=usage) if recs is not None and len(recs) else pd.DataFrame()
    if panel is not None and len(costs):
        members = costs[costs["rater"].isin(panel.members)]
        per = {c: members[c].sum(min_count=len(panel.members)) for c in costs.columns if c.endswith("_per_trace")}
        row = {
            "rater": PANEL_RATER,
            "kind": "panel",
            "n_traces": int(members["n_traces"].max()),
            "n_records": panel.n_items,
            "n_labeled": panel.n_labeled,
            "n_unscored": panel.n_items - panel.n_labeled,
            "n_rule": 0,
            "n_calls": int(members["n_calls"].sum()),
            "cost_usd": members["cost_usd"].sum(min_count=len(panel.members)),
            **per,
            "top_unscored_reason": "tie left open" if panel.n_ties > panel.n_ties_broken else None,
        }
        costs = pd.concat([costs, pd.DataFrame([row])], ignore_index=True)
    return costs
