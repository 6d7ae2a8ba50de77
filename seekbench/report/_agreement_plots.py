"""Agreement figures: confusion matrices per field, and kappa against cost with the Pareto front.

matplotlib is imported inside each function, only when plotting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._figure_text import figure_text
from ._figures import _axes, legend_outside, wrap_name


def plot_confusion_matrix(confusion: pd.DataFrame, *, ax=None, title: str | None = None, normalize: bool = True):
    """Heatmap of one confusion matrix (rows: reference labels, columns: the rater's).

    Parameters
    ----------
    confusion : DataFrame
        Counts, as in ``AgreementResult.confusion[(rater, field, step_kind)]``; the index and column
        names label the axes.
    ax : matplotlib Axes, optional
    title : str, optional
    normalize : bool, default True
        Colour by the share of each reference row (what the rater said when the reference
        said k); the cells show counts either way.

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax, figsize=(4.2, 3.6))
    counts = confusion.to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        shade = counts / counts.sum(axis=1, keepdims=True) if normalize else counts / max(counts.max(), 1.0)
    shade = np.nan_to_num(shade)
    ax.imshow(shade, cmap="Blues", vmin=0.0, vmax=1.0)
    q = len(confusion.index)
    for i in range(q):
        for j in range(len(confusion.columns)):
            ax.text(
                j,
                i,
                f"{int(counts[i, j])}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if shade[i, j] > 0.6 else "#1b1b1b",
            )
    ax.set_xticks(range(len(confusion.columns)))
    ax.set_xticklabels([figure_text(c) for c in confusion.columns], rotation=35, ha="right", fontsize=7)
    ax.set_yticks(range(q))
    ax.set_yticklabels([figure_text(c) for c in confusion.index], fontsize=7)
    ax.set_ylabel(figure_text(confusion.index.name or "reference"), fontsize=8)
    ax.set_xlabel(figure_text(confusion.columns.name or "rater"), fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    return ax


#: Said instead of the kappa-versus-cost plot when no judge recorded cost, time or tokens.
NO_COST_PLOT = (
    "No kappa-versus-cost plot: no judge recorded a cost, model time or token count (a rules judge or a "
    "person makes no model calls), so there is no axis to place them on; their agreement is in the table above."
)

#: Axis label of each column the kappa-versus-cost plot can use as x.
AXIS_LABELS = {
    "cost_per_trace": "cost per trace (USD)",
    "latency_s_per_trace": "model time per trace (s)",
    "tokens_per_trace": "tokens per trace",
}


def plot_kappa_cost(
    points: pd.DataFrame,
    *,
    axis: str = "cost_per_trace",
    field: str = "all (pooled)",
    score: str = "kappa",
    ax=None,
):
    """Each judge's agreement with the reference against its cost (or time, or tokens) per trace, with the Pareto front.

    Only judges with a value on ``axis`` are drawn (no judge is put at a made-up 0); the others
    are named under the axis. The front (no other judge cheaper and better) is the red staircase,
    drawn on to the right edge; error bars are the bootstrap CIs.

    Parameters
    ----------
    points : DataFrame
        :func:`seekbench.analysis.kappa_cost_table` (``AgreementAnalysis.kappa_cost``): columns
        ``rater, score, lower, upper, on_front`` and the ``axis`` column.
    axis : str, default "cost_per_trace"
        ``AgreementAnalysis.cost_axis``: ``cost_per_trace``, ``latency_s_per_trace`` or ``tokens_per_trace``.
    field : str, default "all (pooled)"
        The label field the points are for (named on the y axis).
    score : {"kappa", "ac1"}
        The score the points hold (named on the y axis).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax, figsize=(5.6, 3.8))
    x = points[axis].to_numpy(dtype=float)
    val = points["score"].to_numpy(dtype=float)
    drawn = np.isfinite(x) & np.isfinite(val)
    lo = points["lower"].to_numpy(dtype=float)
    hi = points["upper"].to_numpy(dtype=float)
    yerr = np.vstack([np.nan_to_num(val - lo), np.nan_to_num(hi - val)])
    ax.errorbar(x[drawn], val[drawn], yerr=yerr[:, drawn], fmt="o", color="#2171b5", capsize=3, lw=1, label="judge")
    front = points["on_front"].to_numpy(dtype=bool) & drawn
    if front.any():
        order = np.argsort(x[front])
        fx, fy = x[front][order], val[front][order]
        span = max(float(np.nanmax(x[drawn]) - np.nanmin(x[drawn])), float(np.nanmax(x[drawn])) * 0.1, 1e-9)
        right = float(np.nanmax(x[drawn])) + 0.15 * span
        ax.step(np.append(fx, right), np.append(fy, fy[-1]), where="post", color="#cb181d", lw=1.4, zorder=1)
        ax.plot(fx, fy, "o", mfc="none", mec="#cb181d", ms=11, label="Pareto front (no judge cheaper and better)")
        ax.set_xlim(left=min(0.0, float(np.nanmin(x[drawn]))), right=right)
    for xi, yi, name in zip(x[drawn], val[drawn], points["rater"][drawn], strict=True):
        ax.annotate(wrap_name(name, 18), (xi, yi), fontsize=7, xytext=(5, 4), textcoords="offset points")
    missing = [figure_text(r) for r, d in zip(points["rater"], drawn, strict=True) if not d]
    label = AXIS_LABELS.get(axis, axis)
    if missing:
        label += "\nnot drawn (no value recorded): " + ", ".join(missing)
    ax.set_xlabel(label)
    ax.set_ylabel({"kappa": "Cohen's kappa", "ac1": "Gwet's AC1"}.get(score, score) + f" ({figure_text(field)})")
    ax.set_title("Agreement with the reference vs. " + AXIS_LABELS.get(axis, axis).split(" (")[0], fontsize=10)
    ax.grid(alpha=0.3)
    legend_outside(ax, where="below", ncol=2)
    return ax
