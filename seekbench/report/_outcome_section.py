"""The outcome section of the report: efficiency beside outcomes, answer-judge panels, evidence-set metrics.

:func:`outcome_section` returns HTML and Markdown fragments and the tables
(for CSV files), or None when there is nothing to show; the main report
places them.
"""

from __future__ import annotations

import html

import pandas as pd

from ..analysis import OutcomeAnalysis
from ._html import _table
from ._markdown import _md_table
from ._tables import fmt_value


def _display(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if c.startswith("n_pass@"):
            out = out.drop(columns=c)
        elif pd.api.types.is_float_dtype(out[c]):  # rates and means: 3 decimals, so 1 reads "1.000"
            out[c] = [fmt_value(v) for v in out[c]]
    return out


def outcome_section(outcome: OutcomeAnalysis | None) -> tuple[str, str, dict[str, pd.DataFrame]] | None:
    """Efficiency beside outcomes for the report.

    Parameters
    ----------
    outcome : OutcomeAnalysis or None
        ``Analysis.outcome``.

    Returns
    -------
    (html, markdown, tables) or None
        ``tables``: ``outcome_efficiency`` (per agent: accuracy, EM, F1, tool calls, searches before
        answer, duplicate-query and duplicate-visit rates, Pass@1 and Pass@k over repeated runs),
        ``correctness_sources``, and when present ``answer_panel`` and ``evidence_set``.
        None when there are no traces.
    """
    if outcome is None:
        return None
    eff = outcome.efficiency
    tables = {"outcome_efficiency": eff, "correctness_sources": outcome.correctness_sources}
    panel = outcome.panel
    if panel is not None:
        tables["answer_panel"] = panel
    ev = outcome.evidence_set
    if ev is not None:
        tables["evidence_set"] = ev
    runs = outcome.max_runs
    pass_note = (
        "Pass@1 = mean accuracy over runs; Pass@k = 1 - C(n-c, k)/C(n, k) over questions with at least "
        "k runs (unbiased)."
        if runs > 1
        else "Each question was run once per agent, so Pass@1 is the accuracy and Pass@k (k > 1) is undefined."
    )
    intro = (
        "Outcomes beside what they cost: accuracy (judged correctness where known, else exact match), EM and "
        "F1, tool calls per trace, searches before the answer, and the duplicate-query and duplicate-visit rates "
        f"within a trace. {pass_note} n/a = undefined."
    )
    h = [
        "<h2>Outcomes and efficiency</h2>",
        f"<p class='muted'>{html.escape(intro)}</p>",
        _table(_display(eff), left=("agent",)),
        "<h3>Who decided correctness</h3>",
        _table(tables["correctness_sources"], left=("agent",)),
    ]
    m = [
        "## Outcomes and efficiency\n",
        intro + "\n",
        _md_table(_display(eff)),
        "\n### Who decided correctness\n",
        _md_table(tables["correctness_sources"]),
    ]
    if panel is not None:
        note = (
            "Answer judges: disagreement rate = answers on which the primary judges gave different verdicts / "
            "answers on which all of them gave one; the tiebreaker is asked only then. Votes are in each "
            "trace's correct.detail."
        )
        h += [
            "<h3>Answer-judge panel</h3>",
            f"<p class='muted'>{html.escape(note)}</p>",
            _table(panel, left=("agent",)),
        ]
        m += ["\n### Answer-judge panel\n", note + "\n", _md_table(panel)]
    if ev is not None:
        note = (
            "InfoDeepSeek evidence-set metrics (docs/metrics/evidence-sets.md): ACC, IA@k (k beyond an "
            "evidence set reuses it), EEU = max IA@k / ACC (n/a when ACC = 0), IC (lower = more compact), "
            "interference rate; pending judgments are left out of the denominators and counted."
        )
        h += ["<h3>Evidence sets</h3>", f"<p class='muted'>{html.escape(note)}</p>", _table(ev, left=("agent",))]
        m += ["\n### Evidence sets\n", note + "\n", _md_table(ev)]
    return "\n".join(h), "\n".join(m) + "\n", tables
