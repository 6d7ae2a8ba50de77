"""The conformal completeness section: HTML and Markdown fragments, PNG figures and tables.

:func:`conformal_section` returns the pieces so the main report can embed them;
:func:`write_conformal_report` writes a standalone ``conformal.html`` (figures
as data URIs, no scripts), ``conformal.md``, ``figures/conformal_*.png`` and
``tables/*.csv``.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._csv import csv_text
from .._figure_text import figure_text
from .._io import write_bytes, write_text
from .._version import __version__
from ._figures import figure_png as _png
from ._html import _img
from ._markdown import _md_table
from ._markdown_text import md_text
from ._page import html_page, markdown_page
from ._tables import fmt
from ._tables import html_table as _table


@dataclass
class ConformalReportFiles:
    """What :func:`write_conformal_report` wrote."""

    directory: Path
    html: Path
    markdown: Path
    figures: list[Path]
    tables: list[Path]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("_") or "estimator"


def conformal_figures(result) -> dict[str, bytes]:
    """PNG bytes by name: ``conformal_coverage_bins``, and per estimator ``conformal_scatter_<name>`` and
    ``conformal_nonconformity_<name>`` (from split 0, seed 0)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from ._conformal_plots import plot_conformal_scatter, plot_coverage_by_bin, plot_nonconformity_hist

    alpha = result.options["alpha"]
    out = {"conformal_coverage_bins": _png(plot_coverage_by_bin(result.bins, 1 - alpha))}
    for name in result.estimators:
        ref = result.reference[result.reference["estimator"] == name]
        scores = result.reference_scores.get(name)
        if ref.empty or scores is None:
            continue
        q = float(ref["q_hat"].iloc[0])
        out[f"conformal_scatter_{_slug(name)}"] = _png(
            plot_conformal_scatter(ref, q, title=f"{figure_text(name)}: test half")
        )
        out[f"conformal_nonconformity_{_slug(name)}"] = _png(
            plot_nonconformity_hist(
                scores, q, alpha=alpha, title=f"{figure_text(name)}: calibration scores (n = {len(scores)})"
            )
        )
    return out


def conformal_tables(result) -> dict[str, pd.DataFrame]:
    """Every table of the result as a flat DataFrame, by CSV name."""
    tables = {
        "conformal_summary": result.summary,
        "conformal_splits": result.splits,
        "conformal_bins": result.bins,
        "conformal_unscored": result.unscored,
        "conformal_reference": result.reference,
    }
    optional = {
        "conformal_stopping": result.stopping,
        "conformal_stopping_summary": result.stopping_summary,
        "completeness_anova": result.anova,
    }
    tables.update({name: df for name, df in optional.items() if df is not None})
    return tables


def _pm(mean, std) -> str:
    return f"{fmt(mean)} ± {fmt(std)}" if fmt(std) != "n/a" else fmt(mean)


def display_summary(result) -> pd.DataFrame:
    """The per-estimator table as people read it: mean ± std over split means, the reference CI in one cell."""
    rows = []
    for r in result.summary.itertuples(index=False):
        rows.append(
            {
                "estimator": r.estimator,
                "states": r.n_states,
                "unscored": r.n_unscored,
                "cal / test": f"{r.n_cal:.0f} / {r.n_test:.0f}",
                "q_hat": _pm(r.q_hat, r.q_hat_std),
                "coverage": _pm(r.coverage, r.coverage_std),
                "split 0 coverage [95% CI]": f"{fmt(r.ref_coverage)} [{fmt(r.ref_coverage_ci_lower)}, "
                f"{fmt(r.ref_coverage_ci_upper)}]",
                "width": _pm(r.width, r.width_std),
                "raw R²": _pm(r.r2, r.r2_std),
                "q_hat (all states)": r.q_hat_full,
            }
        )
    return pd.DataFrame(rows)


def _intro(result) -> str:
    o = result.options
    how = (
        "by document (all states of a document on one side)"
        if o["split"] == "document"
        else "pooled over states (the paper's split)"
    )
    return (
        f"Split conformal calibration of completeness estimates (docs/conformal.md) at target coverage "
        f"1 - alpha = {1 - o['alpha']:g}. Calibration/test split 50/50 {how}; {o['n_splits']} splits x "
        f"{o['n_seeds']} seeds (seed {o['seed']}); values are the mean ± std (ddof = 1) of the split-level "
        f"means. Coverage CI: Clopper-Pearson {o['confidence']:g} on split 0, seed 0. q_hat is the "
        "ceil((n+1)(1-alpha))-th smallest calibration score |c - c_hat| (1 when that rank exceeds n); the "
        "interval is [c_hat - q_hat, c_hat + q_hat] clipped to [0, 1]. Raw R² compares c_hat with the test "
        "mean without refitting (negative = worse than the mean). n/a = undefined."
    )


def conformal_section(result) -> tuple[str, str, dict[str, bytes], dict[str, pd.DataFrame]]:
    """The conformal section for a report.

    Parameters
    ----------
    result : ConformalResult
        From :func:`seekbench.env.conformal.evaluate_conformal` (with
        ``stopping_summary`` and ``anova`` filled in when available).

    Returns
    -------
    html : str
        A ``<section id='conformal'>`` fragment, figures embedded as data URIs.
    markdown : str
        The same content, figures linked as ``figures/<name>.png``.
    figures : dict of str -> bytes
        PNG bytes by name.
    tables : dict of str -> DataFrame
        By CSV name.
    """
    figures = conformal_figures(result)
    tables = conformal_tables(result)
    shown = display_summary(result)
    bins = result.bins.assign(
        coverage=[_pm(m, s) for m, s in zip(result.bins["coverage"], result.bins["coverage_std"], strict=True)],
        n=result.bins["n"].round(1),
    )[["estimator", "bin", "n", "coverage"]]
    h = [
        "<section id='conformal'><h2>Completeness uncertainty (split conformal)</h2>",
        f"<p>{html.escape(_intro(result))}</p>",
        _table(shown, left=("estimator",)),
        "<h3>Coverage by true completeness</h3>",
        (
            f"<figure>{_img(figures['conformal_coverage_bins'], 'coverage by bin')}<figcaption>Test coverage per "
            "bin of true completeness (mean over split means; bars: std). Marginal coverage can hide bins far "
            "below the target.</figcaption></figure>"
        ),
        f"<details><summary>Coverage by bin (table)</summary>{_table(bins, left=('estimator', 'bin'))}</details>",
    ]
    m = [
        "## Completeness uncertainty (split conformal)\n",
        _intro(result) + "\n",
        _md_table(shown),
        "\n### Coverage by true completeness\n",
        "![coverage by bin](figures/conformal_coverage_bins.png)\n",
        _md_table(bins),
    ]
    h.append("<h3>Estimates against truth (split 0, seed 0)</h3>")
    m.append("\n### Estimates against truth (split 0, seed 0)\n")
    for name in result.estimators:
        sc, nc = f"conformal_scatter_{_slug(name)}", f"conformal_nonconformity_{_slug(name)}"
        if sc not in figures:
            continue
        h.append(
            f"<div class='grid'><figure>{_img(figures[sc], sc)}<figcaption>{html.escape(name)}: test half; "
            "the band holds the points the interval covers.</figcaption></figure><figure>"
            f"{_img(figures[nc], nc)}<figcaption>{html.escape(name)}: calibration scores and q_hat."
            "</figcaption></figure></div>"
        )
        m.append(f"![{md_text(name)}: scatter](figures/{sc}.png) ![{md_text(name)}: nonconformity](figures/{nc}.png)\n")
    if len(result.unscored):
        h += [
            "<h3>Unscored states</h3><p>Left out of both halves for that estimator.</p>",
            _table(result.unscored, left=("estimator", "reason")),
        ]
        m += ["\n### Unscored states\n", _md_table(result.unscored)]
    if result.stopping_summary is not None and len(result.stopping_summary):
        d = result.stopping["delta"].iloc[0] if result.stopping is not None and len(result.stopping) else None
        text = (
            f"Stopping rule c_hat - q_hat >= delta = {fmt(d)} applied to the agents' per-step self-estimates "
            "with q_hat calibrated on all scored states. Completeness at stop is the true completeness then; "
            "steps saved = steps left in the episode; stop valid = share of stops whose true completeness "
            "reached delta."
        )
        h += [
            "<h3>Stopping rule on episodes</h3>",
            f"<p>{html.escape(text)}</p>",
            _table(result.stopping_summary, left=("agent", "belief")),
        ]
        m += ["\n### Stopping rule on episodes\n", text + "\n", _md_table(result.stopping_summary)]
    if result.anova is not None and len(result.anova):
        text = (
            "Type III ANOVA of final completeness, c ~ belief * model + document, sum-to-zero contrasts; "
            "eta² = SS / SS_total, partial eta² = SS / (SS + SS_residual)."
        )
        h += ["<h3>Variance decomposition</h3>", f"<p>{html.escape(text)}</p>", _table(result.anova, left=("factor",))]
        m += ["\n### Variance decomposition\n", text + "\n", _md_table(result.anova)]
    if result.warnings:
        h.append("<div class='warn'>" + "<br>".join(html.escape(w) for w in result.warnings) + "</div>")
        m.append("\n" + "\n".join(f"> {md_text(w)}" for w in result.warnings))
    h.append("</section>")
    return "\n".join(h), "\n".join(m) + "\n", figures, tables


def write_conformal_report(result, out_dir: str | os.PathLike) -> ConformalReportFiles:
    """Write ``conformal.html`` (self-contained), ``conformal.md``, ``figures/*.png`` and ``tables/*.csv``.

    Files are replaced atomically; ``out_dir`` is created if missing.
    """
    out = Path(out_dir)
    body_html, body_md, figures, tables = conformal_section(result)
    fig_paths, table_paths = [], []
    for name, data in figures.items():
        p = out / "figures" / f"{name}.png"
        write_bytes(p, data)
        fig_paths.append(p)
    for name, df in tables.items():
        p = out / "tables" / f"{name}.csv"
        write_text(p, csv_text(df))
        table_paths.append(p)
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    meta = f"seekbench {html.escape(__version__)} &middot; generated {when}"
    page = html_page("seekbench conformal", "seekbench completeness uncertainty", meta, [body_html])
    html_path, md_path = out / "conformal.html", out / "conformal.md"
    write_text(html_path, page)
    write_text(
        md_path,
        markdown_page("seekbench completeness uncertainty", f"seekbench {__version__}, generated {when}.", body_md),
    )
    return ConformalReportFiles(out, html_path, md_path, fig_paths, table_paths)
