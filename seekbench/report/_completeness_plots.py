"""Figures of the seeking environment: completeness curves with bands, topic x agent heatmap, query diversity.

matplotlib is imported lazily; every function takes ``ax=None`` and returns the Axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

from .._figure_text import figure_text
from ._figures import _axes, curves_axes, wrap_name

_CURVE_LABELS = {
    "x": "step",
    "y": "completeness (share of goal passages retrieved)",
    "title": "Completeness over steps (band: 95% CI of the mean)",
}
_DIVERSITY_LABELS = {
    "x": "step",
    "y": "query diversity (1 - max cosine to earlier queries)",
    "title": "Query diversity over steps",
}
_BELIEF_STYLE = {"trajectory": ":", "deduplicated": "-", "oracle": "--"}


def _colour_of():
    """A function giving each agent one colour of the default cycle, in order of first request."""
    import matplotlib

    colours: dict[str, str] = {}
    cycle = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    return lambda agent: colours.setdefault(str(agent), cycle[len(colours) % len(cycle)])


def _groups(table: pd.DataFrame) -> list[tuple[dict, pd.DataFrame]]:
    keys = [c for c in ("agent", "belief") if c in table.columns]
    if not keys:
        return [({}, table)]
    return [
        (dict(zip(keys, k if isinstance(k, tuple) else (k,), strict=True)), g)
        for k, g in table.groupby(keys, sort=True, dropna=False)
    ]


def plot_completeness_curves(
    curves: pd.DataFrame,
    ax: Axes | None = None,
    *,
    band: bool = True,
    band_alpha: float = 0.15,
    title: str | None = None,
) -> Axes:
    """Completeness ``c_t`` against step per (agent, belief), with the band of :class:`CompletenessCurves`.

    One colour per agent, one line style per belief (trajectory dotted, deduplicated solid,
    oracle dashed).

    Parameters
    ----------
    curves : DataFrame
        ``CompletenessCurves(...).fit(traces).curves_`` (columns ``agent, belief, step, mean, lower, upper``).
    ax : matplotlib Axes, optional
        Default: a new figure.
    band : bool, default True
        Shade between ``lower`` and ``upper``.

    Returns
    -------
    matplotlib.axes.Axes
        y in [0, 1]: share of goal passages retrieved.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> c = pd.DataFrame({"agent": "a", "belief": "oracle", "step": [0, 1], "mean": [0, .5], "lower": [0, .4],
    ...                   "upper": [0, .6]})
    >>> [float(y) for y in plot_completeness_curves(c).get_ylim()]
    [0.0, 1.0]
    """
    ax = _axes(ax)
    colour_of = _colour_of()
    for key, g in _groups(curves):
        colour = colour_of(key.get("agent", ""))
        style = _BELIEF_STYLE.get(str(key.get("belief")), "-")
        label = wrap_name(" / ".join(str(v) for v in key.values()) or "episodes", 26)
        g = g.sort_values("step")
        ax.plot(g["step"], g["mean"], linestyle=style, color=colour, marker="o", markersize=2.5, label=label)
        if band and {"lower", "upper"} <= set(g.columns):
            ok = g["lower"].notna() & g["upper"].notna()
            ax.fill_between(g["step"][ok], g["lower"][ok], g["upper"][ok], color=colour, alpha=band_alpha, linewidth=0)
    return curves_axes(ax, _CURVE_LABELS, title=title)


def plot_topic_agent_heatmap(table: pd.DataFrame, ax: Axes | None = None, *, title: str | None = None) -> Axes:
    """Heatmap of mean final completeness, topic (rows) x agent (columns); NaN cells marked n/a.

    Parameters
    ----------
    table : DataFrame
        :func:`seekbench.env.topic_agent_table`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax, figsize=(4.2 + 1.3 * max(len(table.columns), 1), 2.2 + 0.42 * max(len(table.index), 1)))
    values = table.to_numpy(dtype=float) if not table.empty else np.zeros((0, 0))
    if values.size:
        im = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=1, aspect="auto")
        ax.figure.colorbar(im, ax=ax, label="mean final completeness")
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                v = values[i, j]
                ax.text(
                    j,
                    i,
                    "n/a" if np.isnan(v) else f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if not np.isnan(v) and v < 0.6 else "black",
                )
    ax.set_xticks(range(len(table.columns)), [wrap_name(c, 14) for c in table.columns], fontsize=8)
    ax.set_yticks(range(len(table.index)), [figure_text(i) for i in table.index], fontsize=8)
    ax.set_title(title or "Final completeness by topic and agent", fontsize=10)
    return ax


def plot_query_diversity(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Mean query diversity per step and (agent, belief) (:func:`seekbench.env.query_diversity_table`)."""
    ax = _axes(ax)
    colour_of = _colour_of()
    for key, g in _groups(table):
        colour = colour_of(key.get("agent", ""))
        g = g.sort_values("step")
        ax.plot(
            g["step"],
            g["diversity"],
            linestyle=_BELIEF_STYLE.get(str(key.get("belief")), "-"),
            color=colour,
            marker="o",
            markersize=2.5,
            label=wrap_name(" / ".join(str(v) for v in key.values()), 26),
        )
    return curves_axes(ax, _DIVERSITY_LABELS, ylim=(0.0, None))
