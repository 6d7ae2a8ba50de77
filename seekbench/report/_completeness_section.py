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

from ..analysis import CompletenessAnalysis
from ._figures import figure_png as _png
from ._html import _img, _table
from ._markdown import _md_table
from ._tables import fmt

FIGURES = ("completeness_curves", "completeness_topics", "query_diversity")
_LEFT = ("agent", "belief", "topic")


def _ci(row) -> str:
    lo, hi = row.get("ci_low"), row.get("ci_high")
    return f"{fmt(row['completeness'])} {fmt([lo, hi])}" if fmt(lo) != "n/a" else fmt(row["completeness"])


def _by_agent(table: pd.DataFrame, conformal_columns: tuple[str, ...]) -> pd.DataFrame:
    """The per-agent table as shown: completeness with its CI in one cell, every number formatted."""
    rows = []
    for _, r in table.iterrows():
        row = {
            "agent": r["agent"],
            "episodes": int(r["episodes"]),
            "completeness [95% CI]": _ci(r),
            "self-estimate error": fmt(r["self_estimate_error"]),
        }
        row.update({col: fmt(r[col]) for col in conformal_columns})
        row.update({"RQI": fmt(r["rqi"]), "ERF(8)": fmt(r["recovered_by_8"]), "CE": fmt(r["ce"])})
        rows.append(row)
    return pd.DataFrame(rows)


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
    figures = {
        "completeness_curves": _png(
            plot_completeness_curves(
                curves, band=True, title=None if band == "ci" else "Completeness over steps (band: +- 1 std)"
            )
        ),
        "completeness_topics": _png(
            plot_topic_agent_heatmap(topics, title=f"Final completeness by topic and agent ({topic_belief} belief)")
        ),
        "query_diversity": _png(plot_query_diversity(diversity)),
    }
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
        "completeness. RQI, ERF and CE are n/a until the episodes' steps are labeled (seekbench annotate)."
    )
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
        "<div class='grid'>",
        (
            f"<figure>{_img(figures['completeness_curves'], 'completeness curves')}<figcaption>c_t per agent "
            "(colour) and belief (line style), with the band.</figcaption></figure>"
        ),
        (
            f"<figure>{_img(figures['query_diversity'], 'query diversity')}<figcaption>Mean query diversity per "
            "step (the first query of an episode has none).</figcaption></figure></div>"
        ),
        (
            f"<figure>{_img(figures['completeness_topics'], 'topic by agent heatmap')}<figcaption>Mean final "
            f"completeness per topic and agent, {html.escape(topic_belief)} belief.</figcaption></figure>"
        ),
    ]
    md = [
        "## Completeness (seeking environment)\n",
        intro + "\n",
        "### Per agent\n",
        _md_table(joint),
        "\n### Per agent and belief representation\n",
        _md_table(shown),
        "",
        f"![Completeness curves]({figure_dir}/completeness_curves.png)\n",
        f"![Query diversity]({figure_dir}/query_diversity.png)\n",
        f"![Completeness by topic and agent]({figure_dir}/completeness_topics.png)\n",
    ]
    return "\n".join(h), "\n".join(md) + "\n", figures, tables
