"""The outcome section of the report: efficiency beside outcomes, answer-judge panels, evidence-set metrics.

:func:`outcome_section` returns HTML and Markdown fragments and the tables
(for CSV files), or None when there is nothing to show; the main report
places them.
"""

from __future__ import annotations

import html
import math
import warnings
from collections.abc import Sequence

import pandas as pd

from .._errors import UndefinedMetricWarning
from ._html import _table
from ._markdown import _md_table


def correctness_sources(traces: pd.DataFrame) -> pd.DataFrame:
    """Per agent: how many traces' correctness each source decided (``unknown`` = nobody)."""
    src = traces["correct_source"].where(traces["correct"].notna(), "unknown").fillna("unknown")
    tab = pd.crosstab(traces["agent"], src).reset_index()
    tab.columns.name = None
    return tab


def panel_table(trace_dicts: Sequence[dict]) -> pd.DataFrame | None:
    """Per agent, over traces decided by an answer-judge panel or judge: decided, unscored, compared,
    disagreements, disagreement rate, tiebreaker asked, and each judge's share of "correct" votes."""
    rows = {}
    for t in trace_dicts:
        c = t.get("correct") or {}
        d = c.get("detail") or {}
        if c.get("source") not in ("panel", "judge", "em") or "votes" not in d:
            continue
        r = rows.setdefault(t.get("agent"), {"agent": t.get("agent"), "answers": 0, "decided": 0, "unscored": 0,
                                             "compared": 0, "disagreements": 0, "tiebreaks": 0, "_yes": {}})
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
    from ..answers import evidence_set_table
    from ..metrics._evidence_set import evidence_set_summary

    table = evidence_set_table(trace_dicts)
    if table.empty:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        s = evidence_set_summary(table, by=("agent",))
    cols = ["agent", "questions", "ACC", *(c for c in s.columns if c.startswith("IA@")), "EEU", "IC",
            "interference_rate", "pending_acc", "pending_ia", "pending_ic"]
    return s[cols]


def _display(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if c.startswith("n_pass@"):
            out = out.drop(columns=c)
    return out


def outcome_section(steps: pd.DataFrame, traces: pd.DataFrame,
                    trace_dicts: Sequence[dict]) -> tuple[str, str, dict[str, pd.DataFrame]] | None:
    """Efficiency beside outcomes for the report.

    Parameters
    ----------
    steps, traces : DataFrame
        ``build_tables`` output.
    trace_dicts : sequence of dict
        The canonical traces (for judge votes and evidence sets).

    Returns
    -------
    (html, markdown, tables) or None
        ``tables``: ``outcome_efficiency`` (per agent: accuracy, EM, F1, tool calls, searches before
        answer, duplicate-query and duplicate-visit rates, Pass@1 and Pass@k over repeated runs),
        ``correctness_sources``, and when present ``answer_panel`` and ``evidence_set``.
        None when there are no traces.
    """
    from ..metrics._efficiency import efficiency_table

    if traces is None or len(traces) == 0:
        return None
    eff = efficiency_table(steps, traces)
    tables = {"outcome_efficiency": eff, "correctness_sources": correctness_sources(traces)}
    panel = panel_table(trace_dicts)
    if panel is not None:
        tables["answer_panel"] = panel
    ev = _evidence_table(trace_dicts)
    if ev is not None:
        tables["evidence_set"] = ev
    runs = int(eff["runs_max"].max()) if "runs_max" in eff and eff["runs_max"].notna().any() else 1
    pass_note = ("Pass@1 = mean accuracy over runs; Pass@k = 1 - C(n-c, k)/C(n, k) over questions with at least "
                 "k runs (unbiased)." if runs > 1 else
                 "Each question was run once per agent, so Pass@1 is the accuracy and Pass@k (k > 1) is undefined.")
    intro = ("Outcomes beside what they cost: accuracy (judged correctness where known, else exact match), EM and "
             "F1, tool calls per trace, searches before the answer, and the share of repeated queries and visits "
             f"within a trace. {pass_note} n/a = undefined.")
    h = ["<h2>Outcomes and efficiency</h2>", f"<p class='muted'>{html.escape(intro)}</p>",
         _table(_display(eff), left=("agent",)), "<h3>Who decided correctness</h3>",
         _table(tables["correctness_sources"], left=("agent",))]
    m = ["## Outcomes and efficiency\n", intro + "\n", _md_table(_display(eff)), "\n### Who decided correctness\n",
         _md_table(tables["correctness_sources"])]
    if panel is not None:
        note = ("Answer judges: disagreement rate = answers on which the primary judges gave different verdicts / "
                "answers on which all of them gave one; the tiebreaker is asked only then. Votes are in each "
                "trace's correct.detail.")
        h += ["<h3>Answer-judge panel</h3>", f"<p class='muted'>{html.escape(note)}</p>",
              _table(panel, left=("agent",))]
        m += ["\n### Answer-judge panel\n", note + "\n", _md_table(panel)]
    if ev is not None:
        note = ("InfoDeepSeek evidence-set metrics (docs/metrics/evidence-sets.md): ACC, IA@k (k beyond an "
                "evidence set reuses it), EEU = max IA@k / ACC (n/a when ACC = 0), IC (lower = more compact), "
                "interference rate; pending judgments are left out of the denominators and counted.")
        h += ["<h3>Evidence sets</h3>", f"<p class='muted'>{html.escape(note)}</p>", _table(ev, left=("agent",))]
        m += ["\n### Evidence sets\n", note + "\n", _md_table(ev)]
    return "\n".join(h), "\n".join(m) + "\n", tables
