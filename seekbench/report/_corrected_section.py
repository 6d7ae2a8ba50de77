"""The report's judge-corrected metrics section (``seekbench report --correct``).

Per agent and metric, three columns: the judge's labels alone, the human labels alone (on the
human-labeled traces, with their n) and the PPI++ correction, each with its 95% interval; then
which traces were human-labeled, how they were chosen (as far as the files show) and the
estimates that are undefined, with why.
"""

from __future__ import annotations

import html

import pandas as pd

from ..analysis import CorrectedMetrics
from ._markdown import _md_table
from ._markdown_text import md_text
from ._tables import fmt
from ._tables import html_table as _table

TITLE = "Judge-corrected metrics (PPI++)"

#: The method note's words for each ``interval`` of :func:`~seekbench.metrics.corrected_metrics`.
_CORRECTED_INTERVAL = {
    "auto": "for rates the Wilson interval at the estimate's effective sample size (the number of traces "
    "whose plain rate would be as precise, reduced for the few labeled traces its variance is estimated "
    "from; with lambda 0, the human-only Wilson interval), for RQI and CE Student t; wherever the judge "
    "would widen the interval, lambda is 0 and the row shows the human-only value",
    "t": "Student t (Wilson for a rate without spread)",
    "clt": "the normal interval of ppi-python (Wilson for a rate without spread)",
}


def _cell(v, lo, hi) -> str:
    return f"{fmt(v)} {fmt([lo, hi])}" if fmt(v) != "n/a" and fmt([lo, hi]) != "n/a" else fmt(v)


def shown_table(result: CorrectedMetrics) -> pd.DataFrame:
    """The section's table: agent, metric, judge only, human only (n), corrected, lambda."""
    rows = []
    for _, r in result.summary.iterrows():
        rows.append(
            {
                "agent": r["agent"],
                "metric": r["metric"],
                "judge only [95% CI]": _cell(r["judge_only"], r["judge_only_ci_low"], r["judge_only_ci_high"]),
                "human only [95% CI]": _cell(r["human_only"], r["human_only_ci_low"], r["human_only_ci_high"]),
                "human n": int(r["human_only_n"]),
                "corrected [95% CI]": _cell(r["corrected"], r["corrected_ci_low"], r["corrected_ci_high"]),
                "lambda": fmt(r["lam"]),
            }
        )
    return pd.DataFrame(rows)


def _notes(result: CorrectedMetrics) -> list[str]:
    sel = result.options.get("labeled_selection") or {}
    per = ", ".join(f"{g} {k} of {n}" for g, (k, n) in (sel.get("per_group") or {}).items())
    notes = [
        f"Human-labeled traces: {sel.get('n_labeled')} of {sel.get('n_total')} ({per}), the traces the reference "
        f"labels ({result.options.get('reference')}) cover; the judge's labels: {result.options.get('judge_labels')}.",
        result.options.get("sampling_note", ""),
        "Corrected = the judge's mean on the other traces weighted by lambda plus the human-labeled traces' "
        "mean of (human - lambda x judge); lambda in [0, 1] is estimated from the data (0: the judge does not "
        f"help; human only). Intervals: corrected, {_CORRECTED_INTERVAL[result.options.get('interval', 'auto')]}; "
        "judge and human only, Wilson for rates and the percentile bootstrap for RQI and CE. Coverage measured "
        "on 190 traces: docs/metrics/ppi.md.",
        f"Accuracy: {result.options.get('accuracy')}.",
    ]
    undefined = result.summary[result.summary["reason"] != ""]
    notes += [f"{r['agent']} {r['metric']}: {r['reason']}." for _, r in undefined.iterrows()]
    return notes


def corrected_html(result: CorrectedMetrics) -> str:
    """The section as HTML."""
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in _notes(result))
    return (
        f'<section id="corrected"><h2>{TITLE}</h2>'
        f"{_table(shown_table(result), left=('agent', 'metric'))}<ul>{notes}</ul></section>"
    )


def corrected_markdown(result: CorrectedMetrics) -> str:
    """The section as Markdown."""
    notes = "\n".join(f"- {md_text(n)}" for n in _notes(result))
    return f"## {TITLE}\n\n{_md_table(shown_table(result))}\n\n{notes}\n"


def corrected_tables(result: CorrectedMetrics) -> dict[str, pd.DataFrame]:
    """``tables/corrected.csv`` (the summary) and ``tables/corrected_differences.csv``."""
    return {"corrected": result.summary, "corrected_differences": result.differences}
