"""Efficiency beside outcomes, per agent: tool use, duplicate rates, Pass@1 and Pass@k over repeated runs.

Repeated runs of a question are the traces that share ``agent`` and
``question_id`` (spec section 6). Pass@1 = mean over questions of the share of
correct runs; Pass@k = mean over questions of the unbiased estimator
1 - C(n - c, k) / C(n, k) (:func:`~seekbench.metrics.pass_at_k`), over the
questions with at least k runs of known correctness. Tool calls and the
duplicate-query and duplicate-visit rates are those of
:func:`~seekbench.metrics.outcome_metrics`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ._outcome import _correct, outcome_metrics, pass_at_k


def run_counts(traces: pd.DataFrame) -> pd.DataFrame:
    """Per (agent, question_id): ``runs`` with known correctness and ``correct`` among them.

    >>> t = pd.DataFrame({"agent": ["a"] * 3, "question_id": ["q", "q", "r"], "correct": [True, None, False]})
    >>> for row in run_counts(t).to_dict("records"): print(row)
    {'agent': 'a', 'question_id': 'q', 'runs': 1, 'correct': 1}
    {'agent': 'a', 'question_id': 'r', 'runs': 1, 'correct': 0}
    """
    c = _correct(traces)
    known = traces.assign(_c=c)[c.notna()]
    g = known.groupby(["agent", "question_id"], sort=True, dropna=False)["_c"]
    out = pd.DataFrame({"runs": g.size(), "correct": g.sum().astype(int)}).reset_index()
    return out


def pass_at_k_by_agent(traces: pd.DataFrame, *, ks: Sequence[int] = (1,)) -> pd.DataFrame:
    """Pass@k per agent over repeated runs.

    Parameters
    ----------
    traces : DataFrame
        The trace table (``agent``, ``question_id``, ``correct``).
    ks : sequence of int
        The k values (>= 1).

    Returns
    -------
    DataFrame
        One row per agent: ``questions``, ``runs_min``, ``runs_max``, and for each k ``pass@k``
        (NaN when no question has k runs) and ``n_pass@k`` (questions with at least k runs).

    Examples
    --------
    Agent a ran q twice (1 correct) and r twice (0 correct): Pass@1 = (1/2 + 0) / 2,
    Pass@2 = (1 - C(1,2)/C(2,2) + 0) / 2 = 1/2.

    >>> t = pd.DataFrame({"agent": "a", "question_id": ["q", "q", "r", "r"],
    ...                   "correct": [True, False, False, False]})
    >>> pass_at_k_by_agent(t, ks=(1, 2))[["pass@1", "pass@2"]].to_dict("records")
    [{'pass@1': 0.25, 'pass@2': 0.5}]
    """
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise UserInputError(f"k must be an integer >= 1, got {k!r}")
    rc = run_counts(traces)
    rows = []
    for agent, g in rc.groupby("agent", sort=True, dropna=False):
        row = {"agent": agent, "questions": len(g), "runs_min": int(g["runs"].min()), "runs_max": int(g["runs"].max())}
        for k in ks:
            ok = g[g["runs"] >= k]
            if ok.empty:
                row[f"pass@{k}"], row[f"n_pass@{k}"] = math.nan, 0
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMetricWarning)
                vals = pass_at_k(ok["runs"].to_numpy(), ok["correct"].to_numpy(), k)
            row[f"pass@{k}"] = float(pd.Series(vals).mean())
            row[f"n_pass@{k}"] = len(ok)
        rows.append(row)
    columns = ["agent", "questions", "runs_min", "runs_max", *[c for k in ks for c in (f"pass@{k}", f"n_pass@{k}")]]
    return pd.DataFrame(rows, columns=columns)


def efficiency_table(steps: pd.DataFrame, traces: pd.DataFrame, *, ks: Sequence[int] | None = None) -> pd.DataFrame:
    """Outcomes and efficiency per agent, side by side.

    Columns: ``agent, traces, accuracy, em, f1, tool_calls, searches_before_answer,
    duplicate_query_rate, duplicate_visit_rate, questions, runs_max`` and ``pass@k`` for each k
    (default: 1 and every k in 2..5 that some question of some agent has runs for).
    """
    if ks is None:
        most = run_counts(traces)["runs"].max() if len(traces) else 1
        most = int(most) if pd.notna(most) else 1  # no trace with known correctness: one run
        ks = tuple(range(1, min(5, max(most, 1)) + 1))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        for agent, g in traces.groupby("agent", sort=True, dropna=False):
            r = outcome_metrics(steps, g, n_boot=0)
            rows.append(
                {
                    "agent": agent,
                    "traces": r.n_traces,
                    "accuracy": r.accuracy,
                    "em": r.em,
                    "f1": r.f1,
                    "tool_calls": r.tool_calls,
                    "searches_before_answer": r.searches_before_answer,
                    "duplicate_query_rate": r.duplicate_query_rate,
                    "duplicate_visit_rate": r.duplicate_visit_rate,
                }
            )
    eff = pd.DataFrame(rows)
    if eff.empty:
        return eff
    pk = pass_at_k_by_agent(traces, ks=ks)
    keep = ["agent", "questions", "runs_max", *[c for k in ks for c in (f"pass@{k}", f"n_pass@{k}")]]
    return eff.merge(pk[keep], on="agent", how="left")
