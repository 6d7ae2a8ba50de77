"""Agreement figures: confusion matrices per field, and kappa against cost with the Pareto front.

matplotlib is imported inside each function, only when plotting.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def _axes(ax, figsize=(4.2, 3.6)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


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
    ax = _axes(ax)
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
    ax.set_xticklabels([str(c) for c in confusion.columns], rotation=35, ha="right", fontsize=7)
    ax.set_yticks(range(q))
    ax.set_yticklabels([str(c) for c in confusion.index], fontsize=7)
    ax.set_ylabel(str(confusion.index.name or "reference"), fontsize=8)
    ax.set_xlabel(str(confusion.columns.name or "rater"), fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    return ax


def plot_kappa_cost(points: pd.DataFrame, *, field: str = "all (pooled)", score: str = "kappa", ax=None):
    """Each judge's agreement with the reference against its cost per trace, with the Pareto front.

    Judges whose cost is not recorded in label provenance are drawn hollow at cost 0 and
    are not on the front; error bars are the bootstrap CIs.

    Parameters
    ----------
    points : DataFrame
        :func:`seekbench.analysis.kappa_cost_table` (``AgreementAnalysis.kappa_cost``): columns
        ``rater, cost_per_trace, score, lower, upper, known, on_front``.
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
    rows = points
    cost = rows["cost_per_trace"].to_numpy(dtype=float)
    val = rows["score"].to_numpy(dtype=float)
    lo = rows["lower"].to_numpy(dtype=float)
    hi = rows["upper"].to_numpy(dtype=float)
    known = rows["known"].to_numpy(dtype=bool)
    x = np.where(known, cost, 0.0)
    front = rows["on_front"].to_numpy(dtype=bool)
    yerr = np.vstack([np.nan_to_num(val - lo), np.nan_to_num(hi - val)])
    for mask, style in (
        (known, {"fmt": "o", "color": "#2171b5"}),
        (~known, {"fmt": "o", "color": "#2171b5", "mfc": "white"}),
    ):
        if mask.any():
            ax.errorbar(x[mask], val[mask], yerr=yerr[:, mask], capsize=3, lw=1, **style)
    if front.any():
        order = np.argsort(cost[front])
        ax.step(
            cost[front][order],
            val[front][order],
            where="post",
            color="#cb181d",
            lw=1.2,
            label="Pareto front (cheaper and better)",
        )
        ax.legend(fontsize=7, loc="lower right")
    for xi, yi, name, k in zip(x, val, rows["rater"], known, strict=True):
        if math.isfinite(yi):
            ax.annotate(
                str(name) + ("" if k else " (cost not recorded)"),
                (xi, yi),
                fontsize=7,
                xytext=(4, 4),
                textcoords="offset points",
            )
    ax.set_xlabel("cost per trace (USD)")
    ax.set_ylabel({"kappa": "Cohen's kappa", "ac1": "Gwet's AC1"}.get(score, score) + f" ({field})")
    ax.set_title("Agreement with the reference vs. cost", fontsize=10)
    ax.grid(alpha=0.3)
    return ax
