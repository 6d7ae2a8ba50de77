"""The report's completeness section: seeking-environment episodes beside the process metrics.

:func:`completeness_section` renders a :class:`~seekbench.analysis.CompletenessAnalysis` as
HTML and Markdown, its figures as PNG bytes and its tables as DataFrames, or None when no
trace is a seeking-environment episode (none has ``env``). For each agent the first table
puts final completeness (and, when given, conformal coverage and q_hat) beside RQI, ERF and
CE of the same episodes.
"""

from __future__ import annotations

import html

import pandas as pd

from .._figure_text import figure_text
from ..analysis import CompletenessAnalysis
from ._figures import figure_html
from ._figures import figure_png as _png
from ._markdown import _md_table
from ._markdown_text import md_text
from ._tables import fmt
from ._tables import html_table as _table

FIGURES = ("completeness_curves", "completeness_topics", "query_diversity")
_ALT = {
    "completeness_curves": "Completeness curves",
    "query_diversity": "Query diversity",
    "completeness_topics": "Completeness by topic and agent",
}
_LEFT = ("agent", "belief", "topic")


def _with_ci(value, lo, hi) -> str:
    """``value [lo, hi]``, or the value alone when the interval is undefined."""
    return f"{fmt(value)} {fmt([lo, hi])}" if fmt([lo, hi]) != "n/a" and fmt(value) != "n/a" else fmt(value)


def _ci(row) -> str:
    return _with_ci(row["completeness"], row.get("ci_low"), row.get("ci_high"))


def _by_agent(table: pd.DataFrame, conformal_columns: tuple[str, ...]) -> pd.DataFrame:
    """The per-agent table as shown: every value with its CI in one cell, the conformal columns readable."""
    rows = []
    for _, r in table.iterrows():
        row = {
            "agent": r["agent"],
            "episodes": int(r["episodes"]),
            "completeness [95% CI]": _ci(r),
            "self-estimate error": fmt(r["self_estimate_error"]),
        }
        for col in conformal_columns:
            if col == "self_estimates":
                row["self-estimates"] = fmt(r[col])
            elif col in ("estimator", "q_hat"):
                row[col] = fmt(r[col])
            elif col == "coverage":
                lo = r.get("coverage_ci_lower", r.get("ref_coverage_ci_lower"))
                hi = r.get("coverage_ci_upper", r.get("ref_coverage_ci_upper"))
                row["coverage [95% CI]"] = _with_ci(r[col], lo, hi)
            elif col == "width":
                row["interval width"] = fmt(r[col])
        for header, key in (("RQI", "rqi"), ("ERF(8)", "recovered_by_8"), ("CE", "ce")):
            row[header] = _with_ci(r[key], r.get(f"{key}_ci_lo"), r.get(f"{key}_ci_hi"))
        rows.append(row)
    return pd.DataFrame(rows)


def _conformal_notes(table: pd.DataFrame) -> str:
    """Why an agent's conformal numbers are n/a, one sentence per agent (empty when none is)."""
    if "conformal_note" not in table.columns:
        return ""
    notes = [f"{r['agent']}: {r['conformal_note']}." for _, r in table.iterrows() if r["conformal_note"]]
    return " ".join(notes)


def completeness_section(analysis: CompletenessAnalysis | None, *, figure_dir: str = "figures"):
    """The completeness section of the main report, or None when no trace has ``env``.

    Parameters
    ----------
    analysis : CompletenessAnalysis or None
        ``Analysis.completeness``.
    figure_dir : str
        Where the Markdown links figures (``<figure_dir>/<name>.png``).

    Returns
    -------
    (str, str, dict of str to bytes, dict of str to DataFrame) or None
        HTML fragment (an ``<h2>`` section), Markdown fragment, figures by name
        (:data:`FIGURES`), tables by name.
    """
    from ._completeness_plots import plot_completeness_curves, plot_query_diversity, plot_topic_agent_heatmap

    if analysis is None:
        return None
    a = analysis
    ep, summary, curves, diversity, topics = a.episodes, a.summary, a.curves, a.diversity, a.topics
    band, topic_belief = a.band, a.topic_belief
    joint = _by_agent(a.by_agent, a.conformal_columns)

    import matplotlib

    matplotlib.use("Agg", force=True)
    figures = {}
    if not curves.empty:
        title = None if band == "ci" else "Completeness over steps (band: +- 1 std)"
        figures["completeness_curves"] = _png(plot_completeness_curves(curves, band=True, title=title))
    if not topics.empty:
        title = f"Final completeness by topic and agent ({figure_text(topic_belief)} belief)"
        figures["completeness_topics"] = _png(plot_topic_agent_heatmap(topics, title=title))
    if not diversity.empty and diversity["diversity"].notna().any():
        figures["query_diversity"] = _png(plot_query_diversity(diversity))
    shown = summary.assign(**{"completeness [95% CI]": summary.apply(_ci, axis=1)})[
        [
            "agent",
            "belief",
            "n_episodes",
            "n_documents",
            "completeness [95% CI]",
            "self_estimate_error",
            "mean_query_diversity",
            "empty_query_share",
        ]
    ]
    settings = sorted({f"{e} (theta {fmt(th)})" for e, th in a.settings})
    intro = (
        f"{len(ep)} episodes over {a.n_documents} documents and {a.n_topics} topics; "
        f"embedder {', '.join(settings)}; at most {fmt(a.max_steps)} steps. Completeness is the "
        "share of a document's goal passages retrieved (a query retrieves every passage with cosine above "
        "theta). Self-estimate error: mean |c - c_hat| over the steps where the agent estimated its "
        "completeness. q_hat, coverage and interval width calibrate the agent's own estimates by split "
        "conformal (halves split by document, 3 x 10 splits; coverage and its Clopper-Pearson CI on split 0). "
        "RQI, ERF and CE are n/a until the episodes' steps are labeled (seekbench annotate)."
    )
    notes = _conformal_notes(a.by_agent)
    tables = {
        "completeness_by_agent": joint,
        "completeness": summary,
        "completeness_curves": curves,
        "completeness_topics": topics.reset_index() if not topics.empty else topics,
        "query_diversity": diversity,
        "completeness_episodes": ep,
    }
    h = [
        "<h2 id='completeness'>Completeness (seeking environment)</h2>",
        f"<p class='muted'>{html.escape(intro)}</p>",
        "<h3>Per agent: completeness beside the process metrics</h3>",
        _table(joint, left=_LEFT),
        "<h3>Per agent and belief representation</h3>",
        _table(shown, left=_LEFT),
        *([f"<p class='note'>{html.escape(notes)}</p>"] if notes else []),
        "<div class='grid'>",
        figure_html(
            figures,
            "completeness_curves",
            "completeness curves",
            "c_t per agent (colour) and belief (line style), with the band.",
            note="No completeness curves: no episode recorded a step.",
        ),
        figure_html(
            figures,
            "query_diversity",
            "query diversity",
            "Mean query diversity per step (the first query of an episode has none).",
            note="No query diversity: no episode sent a second query.",
        ),
        "</div>",
        figure_html(
            figures,
            "completeness_topics",
            "topic by agent heatmap",
            f"Mean final completeness per topic and agent, {html.escape(topic_belief)} belief.",
            note="No topic figure: no episode names a topic.",
        ),
    ]
    md = [
        "## Completeness (seeking environment)\n",
        md_text(intro) + "\n",
        "### Per agent\n",
        _md_table(joint),
        "\n### Per agent and belief representation\n",
        _md_table(shown),
        "",
        *(f"![{alt}]({figure_dir}/{name}.png)\n" for name, alt in _ALT.items() if name in figures),
    ]
    return "\n".join(h), "\n".join(md) + "\n", figures, tables
