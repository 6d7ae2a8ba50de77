"""The comparison at a glance: one dot-and-whisker (forest) panel per headline metric.

Each panel shows every agent's value with its own CI, the baseline's value as a dashed line, and
each agent's marker coloured by the verdict of its difference from the baseline (clear better,
clear worse, borderline, not clear; metrics.md section 3). The axis says which way is better.
Rendering only: every number comes from a :class:`~seekbench.analysis.Comparison`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._figure_text import figure_text
from ..analysis import HEADLINE_METRICS, Comparison

#: Marker colours of the verdicts against the baseline (colour-blind safe: blue / orange / grey).
VERDICT_STYLE = {
    "better": ("#1b7837", "clearly better than the baseline"),
    "worse": ("#c51b7d", "clearly worse than the baseline"),
    "borderline": ("#e08214", "borderline (a CI bound within Monte Carlo error of 0)"),
    "not clear": ("#8c8c8c", "not clearly different"),
}
_BASELINE_COLOUR = "#000000"
_COLUMNS = 4


def verdict_of(row: pd.Series) -> str:
    """``better``, ``worse``, ``borderline`` or ``not clear`` for a row of ``Comparison.against_baseline()``."""
    if row.get("verdict") == "borderline":
        return "borderline"
    if bool(row["clear"]):
        return "better" if bool(row["better"]) else "worse"
    return "not clear"


def plot_comparison(comparison: Comparison, *, columns: int = _COLUMNS, width: float = 12.8):
    """A grid of forest panels, one per headline metric, agents top to bottom in the report's order.

    Parameters
    ----------
    comparison : Comparison
        From :func:`seekbench.analysis.compare_agents` (its agents as the report shows them).
    columns : int, default 4
        Panels per row.
    width : float, default 12.8
        Figure width in inches (12.8 at 100 dpi: a 1280-pixel screen).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    agents = list(comparison.agents)
    rows = math.ceil(len(HEADLINE_METRICS) / columns)
    panel_height = 0.24 * len(agents) + 0.62
    fig, axes = plt.subplots(rows, columns, figsize=(width, panel_height * rows + 0.45), squeeze=False)
    values = comparison.values.set_index(["metric", "agent"])
    diffs = comparison.against_baseline().set_index(["metric", "agent"])
    y = np.arange(len(agents))[::-1]
    for k, (ax, m) in enumerate(zip(axes.flat, HEADLINE_METRICS, strict=False)):
        base = comparison.baseline_of(m.key)
        for yi, agent in zip(y, agents, strict=True):
            v = values.loc[(m.key, agent)]
            if not np.isfinite(v["value"]):
                ax.text(0.5, yi, "n/a", transform=ax.get_yaxis_transform(), ha="center", va="center", fontsize=7)
                continue
            if agent == base:
                colour, marker = _BASELINE_COLOUR, "D"
            else:
                colour, marker = VERDICT_STYLE[verdict_of(diffs.loc[(m.key, agent)])][0], "o"
            if np.isfinite(v["lower"]) and np.isfinite(v["upper"]):
                ax.plot([v["lower"], v["upper"]], [yi, yi], color=colour, linewidth=1.6, solid_capstyle="butt")
            ax.plot([v["value"]], [yi], marker=marker, color=colour, markersize=6 if marker == "o" else 5)
        base_value = values.loc[(m.key, base), "value"]
        if np.isfinite(base_value):
            ax.axvline(base_value, color=_BASELINE_COLOUR, linewidth=0.8, linestyle="--", alpha=0.6)
        ax.set_yticks(y)
        ax.set_yticklabels([figure_text(a) for a in agents] if k % columns == 0 else [""] * len(agents), fontsize=8)
        ax.set_ylim(-0.6, len(agents) - 0.4)
        ax.set_title(m.short, fontsize=9, fontweight="bold", loc="left")
        arrow = "higher is better \u2192" if m.better == "higher" else "\u2190 lower is better"
        ax.set_xlabel(arrow, fontsize=7.5, color="#444444", labelpad=1)
        ax.tick_params(axis="x", labelsize=7, pad=1)
        ax.grid(axis="x", color="#e6e6e6", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    for ax in list(axes.flat)[len(HEADLINE_METRICS) :]:
        ax.set_visible(False)
    baseline_handle = Line2D(
        [], [], marker="D", color=_BASELINE_COLOUR, linestyle="none", markersize=5, label=_baseline_legend(comparison)
    )
    handles = [baseline_handle] + [
        Line2D([], [], marker="o", color=c, linestyle="-", markersize=6, label=t) for c, t in VERDICT_STYLE.values()
    ]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7.5, frameon=False, borderaxespad=0.1)
    fig.tight_layout(rect=(0, 0.06, 1, 1), h_pad=0.6, w_pad=0.8)
    return fig


def _baseline_legend(c: Comparison) -> str:
    return "baseline: the best agent of each metric" if c.baseline == "best" else f"baseline: {figure_text(c.baseline)}"


def comparison_png(comparison: Comparison) -> bytes:
    """:func:`plot_comparison` as PNG bytes (100 dpi: 1280 pixels wide)."""
    import io

    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig = plot_comparison(comparison)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
