"""The agreement report: agreement.html (self-contained), figures/agreement_*.png, tables/*.csv.

:func:`render_agreement_section` returns the HTML section alone, so the main report can
embed it; :func:`write_agreement_report` writes a standalone page around it.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._csv import csv_text
from .._figure_text import figure_text
from .._io import write_bytes, write_text
from .._version import __version__
from ..analysis import AgreementAnalysis
from ._agreement_plots import AXIS_LABELS, NO_COST_PLOT
from ._disagreement_examples import disagreement_examples_html, disagreement_examples_markdown
from ._figures import figure_html
from ._figures import figure_png as _png
from ._html import _img, _table
from ._page import html_page
from ._tables import fmt, fmt_value


@dataclass
class AgreementReportFiles:
    """What :func:`write_agreement_report` wrote."""

    directory: Path
    html: Path
    figures: list[Path]
    tables: list[Path]


def _stratum_name(field: str, kind: str) -> str:
    return f"{field} ({kind})"


def agreement_figures(agreement: AgreementAnalysis) -> dict[str, bytes]:
    """PNG bytes by name: ``agreement_confusion_<field>_<step kind>`` (one panel per rater) and
    ``agreement_kappa_cost``."""
    result = agreement.result
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from ._agreement_plots import plot_confusion_matrix, plot_kappa_cost

    out = {}
    s = result.summary
    for f, kind in result.strata:
        raters = [r for r in result.raters if (r, f, kind) in result.confusion]
        if not raters:
            continue
        fig, axes = plt.subplots(1, len(raters), figsize=(3.3 * len(raters), 3.9), squeeze=False)
        for ax, r in zip(axes[0], raters, strict=True):
            row = s[(s["rater"] == r) & (s["field"] == f) & (s["step_kind"] == kind)].iloc[0]
            plot_confusion_matrix(
                result.confusion[(r, f, kind)],
                ax=ax,
                title=f"{figure_text(r)}\nkappa {fmt(row['kappa'])}, AC1 {fmt(row['ac1'])}, n {row['n_compared']}",
            )
        fig.suptitle(f"{figure_text(_stratum_name(f, kind))}: reference (rows) vs rater (columns)", fontsize=10)
        out[f"agreement_confusion_{f}_{kind}"] = _png(fig)
    if len(result.costs) and agreement.cost_axis is not None:
        points, axis = agreement.kappa_cost, agreement.cost_axis
        out["agreement_kappa_cost"] = _png(plot_kappa_cost(points, axis=axis, score=agreement.score))
    return out


def agreement_tables(agreement: AgreementAnalysis) -> dict[str, pd.DataFrame]:
    """Every table of the result as a flat DataFrame, by CSV name."""
    result = agreement.result
    conf = [
        {
            "rater": r,
            "field": f,
            "step_kind": k,
            "reference_label": m.index[i],
            "rater_label": m.columns[j],
            "n": int(m.iat[i, j]),
        }
        for (r, f, k), m in result.confusion.items()
        for i in range(m.shape[0])
        for j in range(m.shape[1])
    ]
    pair = [
        {"field": f, "step_kind": k, "rater_a": a, "rater_b": b, "kappa": m.loc[a, b]}
        for (f, k), m in result.pairwise.items()
        for a in m.index
        for b in m.columns
    ]
    tables = {
        "agreement": result.summary,
        "agreement_confusion": pd.DataFrame(
            conf, columns=["rater", "field", "step_kind", "reference_label", "rater_label", "n"]
        ),
        "agreement_prevalence": result.prevalence,
        "agreement_exclusions": result.exclusions,
        "agreement_multi_rater": result.multi_rater,
        "agreement_pairwise": pd.DataFrame(pair, columns=["field", "step_kind", "rater_a", "rater_b", "kappa"]),
        "judge_costs": result.costs,
    }
    if result.panel is not None:
        tables["agreement_panel"] = result.panel.summary
    if agreement.examples is not None:
        tables["agreement_disagreements"] = agreement.examples
    sens: Any = result.sensitivity  # a SensitivityResult when the traces were given
    if sens is not None:
        tables["sensitivity"] = sens.table
        tables["sensitivity_rankings"] = sens.rankings
    return tables


def _ci(row, name: str) -> str:
    """A coefficient with its CI as everywhere in the report: "0.648 [0.55, 0.74]", n/a when undefined."""
    value = fmt_value(row[name])
    ci = fmt([row[name + "_lower"], row[name + "_upper"]])
    return value if value == "n/a" or ci == "n/a" else f"{value} {ci}"


def _summary_table(s: pd.DataFrame) -> pd.DataFrame:
    """The agreement summary as shown: one row per rater, field and step kind, coefficients with CIs."""
    return pd.DataFrame(
        {
            "rater": s["rater"],
            "field": s["field"],
            "steps": s["step_kind"],
            "n": s["n_compared"],
            "excluded": s["n_excluded"],
            "raw agreement": [fmt_value(v) for v in s["raw_agreement"]],
            "kappa [95% CI]": [_ci(r, "kappa") for _, r in s.iterrows()],
            "AC1 [95% CI]": [_ci(r, "ac1") for _, r in s.iterrows()],
            "traces": s["n_traces"],
            "note": s["note"],
        }
    )


def _same_ranking(rankings: pd.DataFrame) -> pd.DataFrame:
    """The rankings table as shown: yes / no, or n/a with the reason (never None)."""
    same = [
        ("yes" if v else "no") if isinstance(v, (bool, np.bool_)) else (note or "n/a")
        for v, note in zip(rankings["same_ranking"], rankings["note"], strict=True)
    ]
    return rankings.drop(columns="note").assign(same_ranking=same)


def _confusion_html(result, figures: dict[str, bytes]) -> list[str]:
    """The confusion-matrix figures, one per stratum ([] without them)."""
    conf_figs = [k for k in figures if k.startswith("agreement_confusion_")]
    if not conf_figs:
        return []
    names = {f"agreement_confusion_{f}_{k}": _stratum_name(f, k) for f, k in result.strata}
    return ["<h3>Confusion matrices</h3>"] + [
        f"<figure>{_img(figures[k], k)}<figcaption>{html.escape(names.get(k, k))}: "
        "counts; colour is the share of the reference's row.</figcaption></figure>"
        for k in conf_figs
    ]


def _multi_rater_html(result) -> list[str]:
    """Krippendorff's alpha and Fleiss' kappa of all raters, and each stratum's pairwise kappas ([] with two raters)."""
    if not len(result.multi_rater):
        return []
    parts = [
        (
            "<h3>All raters together</h3><p>Krippendorff's alpha (nominal) uses every step two or more "
            "raters labeled; Fleiss' kappa the steps every rater labeled (n/a: no such step).</p>"
        ),
        _table(result.multi_rater, left=("field", "step_kind")),
    ]
    for (f, k), m in result.pairwise.items():
        parts += [
            f"<details><summary>Pairwise Cohen's kappa: {html.escape(_stratum_name(f, k))}</summary>",
            _table(m.reset_index(), left=("rater",)),
            "</details>",
        ]
    return parts


def _costs_html(agreement: AgreementAnalysis, figures: dict[str, bytes]) -> list[str]:
    """What each judge cost, and the kappa-against-cost figure ([] without costs)."""
    result = agreement.result
    if not len(result.costs):
        return []
    return [
        "<h3>What each judge cost</h3><p>From label provenance; n/a = not recorded.</p>",
        _table(result.costs, left=("rater", "kind", "top_unscored_reason")),
        figure_html(
            figures,
            "agreement_kappa_cost",
            "kappa vs cost",
            f"Pooled kappa against {AXIS_LABELS.get(str(agreement.cost_axis), 'cost')}; the red staircase "
            "is the Pareto front.",
            note=NO_COST_PLOT,
        ),
    ]


def _sensitivity_html(sens: Any) -> list[str]:
    """How far each judge's labels move RQI, CE and ERF(8) per agent, and whether the agents' order holds."""
    t = sens.table
    shown = t.assign(
        **{"difference [95% CI]": [f"{fmt(r.difference)} [{fmt(r.lower)}, {fmt(r.upper)}]" for r in t.itertuples()]}
    )
    shown = shown[["rater", "agent", "metric", "reference", "judged", "difference [95% CI]", "n_traces"]]
    return [
        "<h3>How far the judge's labels move the metrics</h3>",
        (
            "<p>RQI, CE and ERF at turn 8 per agent from the reference labels and from each rater's; "
            "difference = judged - reference with a paired bootstrap CI over the agent's traces. Kendall's "
            "tau compares the agent rankings (1 = same order). n/a: the label source lacks the labels the "
            "metric needs (see the notes below).</p>"
        ),
        _table(shown, left=("rater", "agent", "metric")),
        _table(_same_ranking(sens.rankings), left=("rater", "metric", "same_ranking")),
    ]


def render_agreement_section(agreement: AgreementAnalysis, figures: dict[str, bytes], *, explorer: bool = False) -> str:
    """The agreement section as an HTML fragment (``<section>``), figures embedded as data URIs.

    With ``explorer`` (explorer.html beside the page) each disagreement example links to its trace.
    """
    result = agreement.result
    shown = _summary_table(result.summary)
    parts = [
        "<section id='agreement'><h2>Judge agreement with the reference</h2>",
        (
            f"<p>Reference: <b>{html.escape(str(result.reference))}</b>; raters: "
            f"{html.escape(', '.join(map(str, result.raters)))}. Per label field and step kind, on the steps "
            "both labeled: grounding of reasoning steps and grounding of search steps are different questions "
            "and get separate rows. 95% percentile bootstrap CIs over whole traces (B = "
            f"{html.escape(str(result.options.get('n_boot')))}, seed {html.escape(str(result.options.get('seed')))})."
            " Each rater's last row, <i>all (pooled)</i>, pools its rows, each with its own chance agreement. "
            "A judge is scored on its own decisions: labels it derived by rule (InitialQuery, RepeatQuery) are "
            "excluded from its rows and scored apart as the rater <i>rule-derived</i>. A majority panel is scored "
            'on every step the reference labeled; a tie it left open counts as a miss, "(unresolved tie)". '
            "Kappa is low for a good judge when one label dominates a stratum (chance agreement is then high); "
            "Gwet's AC1 is robust to that. n/a = undefined, with the reason in the note column.</p>"
        ),
        _table(shown, left=("rater", "field", "steps", "note")),
    ]
    if agreement.examples is not None:
        parts.append(disagreement_examples_html(agreement.examples, explorer=explorer))
    if len(result.exclusions):
        parts += [
            "<h3>Steps not compared</h3>",
            _table(result.exclusions, left=("rater", "field", "step_kind", "reason")),
        ]
    parts += _confusion_html(result, figures)
    parts += [
        "<h3>Label prevalence on the compared steps</h3>",
        _table(result.prevalence, left=("rater", "field", "step_kind", "label")),
    ]
    parts += _multi_rater_html(result)
    if result.panel is not None:
        parts += [
            (
                "<h3>Majority panel</h3><p>Ties left open are scored as misses where the reference labeled "
                "the step (n_unresolved_ties in the table above).</p>"
            ),
            _table(result.panel.summary, left=("members", "tiebreaker")),
        ]
    parts += _costs_html(agreement, figures)
    sens: Any = result.sensitivity
    if sens is not None:
        parts += _sensitivity_html(sens)
    notes = [*result.warnings, *(sens.warnings if sens is not None else [])]
    if notes:
        parts.append("<div class='warn'>" + "<br>".join(html.escape(w) for w in dict.fromkeys(notes)) + "</div>")
    parts.append("</section>")
    return "\n".join(parts)


def write_agreement_report(
    agreement: AgreementAnalysis, out_dir: str | os.PathLike, *, judge_records: Sequence = ()
) -> AgreementReportFiles:
    """Write ``out_dir/agreement.html`` (self-contained), ``figures/agreement_*.png`` and ``tables/*.csv``.

    Parameters
    ----------
    agreement : AgreementAnalysis
        From :func:`seekbench.analysis.analyze_agreement` (or :func:`seekbench.analysis.agreement_analysis`
        of a :func:`seekbench.agreement.compare_annotations` result).
    out_dir : path
        Created if missing; files are replaced atomically.
    judge_records : list of JudgeRecord, optional
        The raters' judges with their validation records (:func:`seekbench.analysis.judge_records`),
        shown after the agreement section.

    Returns
    -------
    AgreementReportFiles
    """
    from ._judge_records_section import judge_records_html

    out = Path(out_dir)
    figures = agreement_figures(agreement)
    fig_paths = []
    for name, data in figures.items():
        p = out / "figures" / f"{name}.png"
        write_bytes(p, data)
        fig_paths.append(p)
    table_paths = []
    for name, df in agreement_tables(agreement).items():
        p = out / "tables" / f"{name}.csv"
        write_text(p, csv_text(df))
        table_paths.append(p)
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    meta = f"seekbench {html.escape(__version__)} &middot; generated {when}"
    page = html_page(
        "seekbench agreement",
        "seekbench judge agreement",
        meta,
        [render_agreement_section(agreement, figures), judge_records_html(judge_records)],
    )
    html_path = out / "agreement.html"
    write_text(html_path, page)
    return AgreementReportFiles(out, html_path, fig_paths, table_paths)


def agreement_markdown(agreement: AgreementAnalysis, *, explorer: bool = False) -> str:
    """The agreement section as Markdown: kappa and AC1 per rater, field and step kind, and the
    disagreement examples (the figures and detail tables are in the HTML page and tables/)."""
    from ._markdown import _md_table
    from ._markdown_text import md_text

    shown = _summary_table(agreement.result.summary)
    out = [
        "## Judge agreement with the reference\n",
        f"Reference: {md_text(agreement.result.reference)}; raters: "
        f"{', '.join(md_text(r) for r in agreement.result.raters)}.\n",
        _md_table(shown),
        "",
    ]
    if agreement.examples is not None:
        out.append(disagreement_examples_markdown(agreement.examples, explorer=explorer))
    return "\n".join(out) + "\n"
