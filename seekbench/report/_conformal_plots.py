"""Conformal completeness figures.

matplotlib is imported lazily; every function takes ``ax=None`` and returns the Axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._figure_text import figure_text
from ._figures import _axes, legend_outside

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes


def plot_conformal_scatter(
    data: pd.DataFrame, q_hat: float, ax: Axes | None = None, *, title: str | None = None
) -> Axes:
    """Predicted against true completeness, with the conformal band.

    A state is covered when its true c lies in [c_hat - q_hat, c_hat + q_hat],
    i.e. when the point (c, c_hat) lies within q_hat of the diagonal: the band
    c - q_hat <= c_hat <= c + q_hat, clipped to [0, 1], is shaded. Covered
    points are blue, missed ones red.

    Parameters
    ----------
    data : DataFrame
        Columns ``true_completeness`` and ``c_hat`` (and ``covered``, else computed).
    q_hat : float
        Half-width of the conformal interval.
    ax : Axes, optional
    title : str, optional
    """
    ax = _axes(ax, figsize=(5.2, 5.2))
    x = data["true_completeness"].to_numpy(dtype=float)
    y = data["c_hat"].to_numpy(dtype=float)
    covered = data["covered"].to_numpy(dtype=bool) if "covered" in data else np.abs(x - y) <= q_hat + 1e-12
    grid = np.linspace(0, 1, 101)
    ax.fill_between(
        grid,
        np.clip(grid - q_hat, 0, 1),
        np.clip(grid + q_hat, 0, 1),
        color="#9ecae1",
        alpha=0.35,
        linewidth=0,
        label=f"band |c - c_hat| <= q_hat = {q_hat:.3f}",
    )
    ax.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=1, label="c_hat = c")
    ax.scatter(x[covered], y[covered], s=16, color="#2171b5", alpha=0.75, label=f"covered ({int(covered.sum())})")
    if (~covered).any():
        ax.scatter(
            x[~covered], y[~covered], s=18, color="#cb181d", marker="x", label=f"not covered ({int((~covered).sum())})"
        )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel("true completeness c")
    ax.set_ylabel("estimated completeness c_hat")
    ax.set_title(title or "Estimated vs true completeness (test half)", fontsize=10)
    legend_outside(ax, where="below", ncol=2)
    return ax


def plot_nonconformity_hist(
    scores,
    q_hat: float,
    ax: Axes | None = None,
    *,
    alpha: float | None = None,
    title: str | None = None,
    bins: int = 20,
) -> Axes:
    """Histogram of calibration nonconformity scores e = |c - c_hat| with a line at q_hat.

    Parameters
    ----------
    scores : array-like
        Calibration scores.
    q_hat : float
    alpha : float, optional
        Shown in the legend as the 1 - alpha quantile rank.
    """
    ax = _axes(ax, figsize=(5.6, 3.8))
    s = np.asarray(scores, dtype=float)
    ax.hist(s, bins=np.linspace(0, 1, bins + 1).tolist(), color="#6baed6", edgecolor="white")
    what = f"q_hat = {q_hat:.3f}" + (f" (1 - alpha = {1 - alpha:g})" if alpha is not None else "")
    ax.axvline(q_hat, color="#cb181d", linewidth=2, label=what)
    ax.set_xlim(0, 1)
    ax.set_xlabel("nonconformity e = |c - c_hat|")
    ax.set_ylabel("calibration states")
    ax.set_title(title or f"Nonconformity scores (n = {s.size})", fontsize=10)
    legend_outside(ax, where="below")
    return ax


def plot_coverage_by_bin(bins: pd.DataFrame, target: float, ax: Axes | None = None) -> Axes:
    """Coverage per bin of true completeness (conditional coverage), one bar group per bin, with the target.

    Parameters
    ----------
    bins : DataFrame
        Columns ``estimator``, ``bin``, ``coverage`` and optionally ``coverage_std`` (error bars).
    target : float
        1 - alpha, drawn as a dashed line.
    """
    ax = _axes(ax, figsize=(6.4, 3.8))
    labels = list(dict.fromkeys(bins["bin"]))
    names = list(dict.fromkeys(bins["estimator"]))
    width = 0.8 / max(len(names), 1)
    pos = np.arange(len(labels))
    for j, name in enumerate(names):
        sub = bins[bins["estimator"] == name].set_index("bin").reindex(labels)
        err = sub["coverage_std"].to_numpy(dtype=float) if "coverage_std" in sub else None
        ax.bar(
            pos - 0.4 + width * (j + 0.5),
            np.nan_to_num(sub["coverage"].to_numpy(dtype=float)),
            width=width,
            yerr=None if err is None else np.nan_to_num(err),
            capsize=2,
            label=figure_text(name),
            alpha=0.85,
        )
    ax.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {target:g}")
    ax.set_xticks(pos, [figure_text(b) for b in labels], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("true completeness bin")
    ax.set_ylabel("test coverage")
    ax.set_title("Coverage by completeness bin", fontsize=10)
    legend_outside(ax, where="below", ncol=min(len(names) + 1, 4))
    return ax
